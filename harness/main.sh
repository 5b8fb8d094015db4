#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job, from a fresh Debian 12 machine: install dependencies, lay the
# series over the base, build the test kernel, boot it under QEMU and show
# what the series does:
#  - the user-stack walker's result on a real program (main -> a -> b -> c,
#    walked from inside a system call), 64-bit and 32-bit, resolved to
#    symbols;
#  - perf profiling a demo program that spends its time in read(), with
#    --call-graph fp, dwarf and fp,defer: merged kernel+user stacks and the
#    bytes written per sample of each;
#  - an ftrace instance with userstacktrace_delay: events, their cookies and
#    the deferred user stacks, frames resolved to symbols here.
. "$(dirname "$0")/lib.sh"

logs=$BUILD/logs
mkdir -p "$logs"
"$REPO/harness/deps.sh"
"$REPO/harness/prepare.sh"
"$REPO/harness/build-kernel.sh" test
"$REPO/harness/build-progs.sh"
"$REPO/harness/build-perf.sh"
"$REPO/harness/initramfs.sh"
"$REPO/harness/qemu-run.sh" "$BUILD/obj-test/arch/x86/boot/bzImage" \
	"$logs/console-main.log" main 600 ||
	die "the boot failed; see $logs/console-main.log"

python3 - "$logs/console-main.log" "$BUILD/progs" <<'PY'
import re, subprocess, sys
logf, progs = sys.argv[1], sys.argv[2]
cur, frames = None, {}
for line in open(logf, errors='replace'):
    line = re.sub(r'^\[\s*\d+\.\d+\]\s?', '', line.rstrip())
    if line.startswith('=== BEGIN '):
        cur = line.split()[2]
        frames[cur] = []
    m = re.match(r'^# frame (\d+): (0x[0-9a-f]+)', line)
    if cur and m:
        frames[cur].append(int(m.group(2), 16))
for prog, addrs in frames.items():
    if prog in ('perf_demo', 'ftrace_demo'):
        continue
    print('\n%s: user stack walked by unwind_user() inside read()' % prog)
    if not addrs:
        print('  (no frames: see %s)' % logf)
        continue
    # Return addresses point after the call: resolve the call itself.
    out = subprocess.run(['addr2line', '-f', '-s', '-e', '%s/%s' % (progs, prog)] +
                         ['%#x' % (a - 1 if i else a) for i, a in enumerate(addrs)],
                         capture_output=True, text=True).stdout.split('\n')
    for i, a in enumerate(addrs):
        print('  #%-2d %#014x  %-28s %s' % (i, a, out[2 * i], out[2 * i + 1]))
PY
# perf's part, as the guest printed it.
sed -n '/^=== BEGIN perf_demo/,/^=== END perf_demo/p' "$logs/console-main.log" |
	sed -e 's/^\[ *[0-9.]*\] \{0,1\}//' -e '/^=== /d'
# ftrace's part: the frames of the static demo resolve by address.
sed -n '/^=== BEGIN ftrace_demo/,/^=== END ftrace_demo/p' "$logs/console-main.log" |
	sed -e 's/^\[ *[0-9.]*\] \{0,1\}//' -e '/^=== /d' |
	while IFS= read -r line; do
		case $line in
		' => 0x'*)
			ip=${line# => }
			ip=${ip%% *}
			printf '%s  %s\n' "$line" \
				"$(addr2line -f -s -e "$BUILD/progs/unwind_demo" "$ip" | head -1)" ;;
		*)	printf '%s\n' "$line" ;;
		esac
	done
echo
echo "Console log: $logs/console-main.log"
