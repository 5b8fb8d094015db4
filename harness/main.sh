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
#  - the same demo without frame pointers (SFrame), reading through glibc's
#    read() wrapper, and Debian's own bash: without and with the SFrame
#    tables eh2sframe makes from their .eh_frame, loaded by build-id; a
#    summary table first, and flame graphs of each mode side by side in
#    build/main/index.html (d3-flame-graph, opens offline);
#  - an ftrace instance with userstacktrace_delay: events, their cookies and
#    the deferred user stacks, frames resolved to symbols here; then the
#    no-FP demo's read() through glibc, without and with its table;
#  - a two-worker service whose threads keep their OpenTelemetry context:
#    each sample's stack with the trace and span IDs of its kernel entry,
#    per request kind, and the stacks whose span is not their handler's (0).
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

# First what it comes to: one line per recording, and the flame graphs of
# the recordings of code without frame pointers, in one HTML page.
echo "######## summary: perf's three call-graph modes (complete stacks: see the page)"
"$REPO/harness/flamegraph.py" "$logs/console-main.log" "$BUILD/main" "$BUILD/npm/node_modules"
echo "Flame graphs: $BUILD/main/index.html"
echo
"$REPO/harness/walk_report.py" "$logs/console-main.log" "$BUILD/progs"
# perf's part, as the guest printed it; the profiles' stacks are in the page.
sed -n -e '/^=== BEGIN perf_demo/,/^=== END perf_demo/p' \
	-e '/^=== BEGIN flame_profiles/,/^=== END flame_profiles/p' "$logs/console-main.log" |
	sed -e 's/^\[ *[0-9.]*\] \{0,1\}//' -e '/^=== FOLDED [^E]/,/^=== FOLDED END/d' \
	    -e '/^=== /d' -e '/^\(TAP version\|1\.\.[0-9]\)/d'
# ftrace's part: the frames of the static demo resolve by address.
sed -n '/^=== BEGIN ftrace_demo/,/^=== END ftrace_demo/p' "$logs/console-main.log" |
	sed -e 's/^\[ *[0-9.]*\] \{0,1\}//' -e '/^=== /d' |
	{ prog=unwind_demo
	while IFS= read -r line; do
		case $line in
		' => 0x'*)
			ip=${line# => }
			ip=${ip%% *}
			printf '%s  %s\n' "$line" \
				"$(addr2line -f -s -e "$BUILD/progs/$prog" "$ip" | head -1)" ;;
		'######## '*'(unwind_demo_sframe'*)
			prog=unwind_demo_sframe
			printf '%s\n' "$line" ;;
		*)	printf '%s\n' "$line" ;;
		esac
	done; }
# Which request each sample belongs to: the thread context demo.
sed -n '/^=== BEGIN context_demo/,/^=== END context_demo/p' "$logs/console-main.log" |
	sed -e 's/^\[ *[0-9.]*\] \{0,1\}//' -e '/^=== /d'
sed -n '/^=== BEGIN bpf_profiler/,/^=== END bpf_profiler/p' "$logs/console-main.log" |
	sed -e 's/^\[ *[0-9.]*\] \{0,1\}//' -e '/^=== /d'
echo
echo "Console log: $logs/console-main.log"
