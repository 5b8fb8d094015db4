#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmarks (not part of the test command, not run by CI):
#   bash harness/bench.sh [RESULTS_DIR]
# Builds the patched test kernel and the unpatched base kernel with the same
# config, then, under QEMU TCG with the same settings for every boot:
#  - idle cost of the exit-to-user hook: getppid() round trips, patched and
#    base kernels booted alternately (IDLE_PAIRS pairs), then the same with
#    -icount (ICOUNT_PAIRS pairs), where guest nanoseconds count
#    instructions;
#  - a boot of the patched kernel for request cost, delivery scaling,
#    walks per entry, profiling with fp, dwarf and fp,defer, and ftrace,
#    then, for programs built without frame pointers and with SFrame,
#    delivery by depth (an SFrame step against a frame-pointer step),
#    profiling, the one-time discovery of a dlopen()ed library's section
#    and the registry's memory with 20 libraries, and BPF against perf as
#    deferred-stack profilers (bpf_unwind --bench: per system call at
#    depths 8 and 32, and the off-CPU pattern per context switch), each
#    part repeated RUNS times; then the same boot with -icount,
#    ICOUNT_RUNS times, the profiled demo shortened to 5000 loops (its
#    figures are deterministic, and TCG is slower with -icount).
# Writes the console logs, data.csv, table.txt and plot.png to RESULTS_DIR
# (default: results/DATE-TIME in the repository) and prints the table. The
# table ends with the -icount boot's figures against docs/bench/budget.txt:
# "REGRESSED NAME: ..." for one more than 1% above its budget.
# PARTS=NAME,... limits the bench boots to those parts of
# harness/guest/bench.list (names without "bench_"), for a short look.
. "$(dirname "$0")/lib.sh"

out=${1:-$REPO/results/$(date +%Y%m%d-%H%M)}
runs=${RUNS:-5}
pairs=${IDLE_PAIRS:-10}
ipairs=${ICOUNT_PAIRS:-3}
iruns=${ICOUNT_RUNS:-3}
mkdir -p "$out"
out=$(cd "$out" && pwd)
start=$(date +%s)

EXTRA_PKGS=gnuplot-nox "$REPO/harness/deps.sh"
"$REPO/harness/prepare.sh"
"$REPO/harness/build-kernel.sh" test
"$REPO/harness/build-kernel.sh" base
"$REPO/harness/build-progs.sh"
"$REPO/harness/build-perf.sh"
"$REPO/harness/initramfs.sh"

test_k=$BUILD/obj-test/arch/x86/boot/bzImage
base_k=$BUILD/obj-base/arch/x86/boot/bzImage

boot() {	# boot KERNEL NAME JOB RUNS [icount [LOOPS]]
	# One host thread for both vCPUs, in every boot: starting and
	# stopping perf turns static keys on and off, and QEMU 7.2's
	# multi-threaded TCG can run the transient int3 of text_poke_bp()
	# (see qemu-run.sh).
	local acc=tcg,thread=single extra=
	if [ "${5:-}" = icount ]; then
		# Deterministic: one instruction per virtual nanosecond.
		extra="-icount shift=0,sleep=off"
	fi
	ACCEL=$acc QEMU_EXTRA=$extra \
	KAPPEND="unwind.runs=$4 unwind.loops=${6:-10000}${PARTS:+ unwind.parts=$PARTS}" \
		"$REPO/harness/qemu-run.sh" "$1" "$out/console-$2.log" "$3" 1800 ||
		die "boot $2 failed; see $out/console-$2.log"
	grep -q '^=== ALL DONE' "$out/console-$2.log" ||
		die "boot $2 did not finish; see $out/console-$2.log"
}

for i in $(seq "$pairs"); do
	boot "$test_k" "idle-patched-$i" idle 3
	boot "$base_k" "idle-base-$i" idle 3
done
for i in $(seq "$ipairs"); do
	boot "$test_k" "icount-patched-$i" idle 2 icount
	boot "$base_k" "icount-base-$i" idle 2 icount
done
boot "$test_k" bench bench "$runs"
boot "$test_k" bench-icount bench "$iruns" icount 5000

{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "series: $(git -C "$REPO" rev-parse --short HEAD) on Debian linux-source-6.12 $(cat "$SRC/.git/unwind-base-version")"
	echo "qemu: $(qemu-system-x86_64 --version | head -1), TCG, -cpu max -smp 2 -m 1G"
	echo "host: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cpus, $(uname -r)"
	echo "guest TSC: $(grep -ho 'tsc: Detected [0-9.]* MHz' "$out/console-bench.log" | head -1 | sed 's/tsc: Detected //')"
} > "$out/env.txt"
python3 "$REPO/harness/bench-report.py" "$out"
log "bench took $(( ($(date +%s) - start) / 60 )) min; results in $out"
