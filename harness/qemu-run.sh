#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel under QEMU TCG with the test initramfs and keep the serial
# console log.
#   qemu-run.sh BZIMAGE LOG JOB [TIMEOUT_SECONDS]
# JOB names the job list /init runs (test, main, base, idle, bench). ACCEL
# (default tcg,thread=single) and QEMU_EXTRA (more options) come from the
# environment, for the -icount boots of harness/bench.sh. One host thread
# runs all vCPUs by default: QEMU 7.2's multi-threaded TCG once let a vCPU
# execute the transient int3 of a text_poke_bp() after the patch was done
# ("Oops: int3"), and static keys, tracepoints and ftrace patch kernel text
# whenever a tracer starts or stops. Exit status: QEMU's, or
# 124 on timeout. The log is kept either way.
. "$(dirname "$0")/lib.sh"

kernel=${1:?bzImage}
logf=${2:?log file}
job=${3:-test}
tmo=${4:-900}
smp=${SMP:-2}

[ -f "$kernel" ] || die "no kernel at $kernel"
# Under TCG (without -icount) the guest's TSC is the host's. Tell the guest
# its rate, which the host's kernel measured: calibrating it against the
# emulated PIT fails when the host is busy (then the guest keeps time with
# jiffies, and cpu-clock samples come 4 ms apart and in bursts). Without
# the host's figure the guest calibrates, and a failure boots once more
# (below).
tsc=
case "${QEMU_EXTRA:-}" in
*icount*) ;;
*)	tsc=$(dmesg 2>/dev/null | sed -n \
		-e 's/.*tsc: Refined TSC clocksource calibration: \([0-9]*\)\.\([0-9]\{3\}\) MHz.*/\1\2/p' \
		-e 's/.*tsc: Detected \([0-9]*\)\.\([0-9]\{3\}\) MHz \(TSC\|processor\).*/\1\2/p' |
		tail -n 1)
	[ -z "$tsc" ] || tsc="tsc_early_khz=$tsc" ;;
esac
mkdir -p "$(dirname "$logf")"
log "booting ${kernel#"$BUILD"/} with -smp $smp, job $job (log: $logf)"
set +e
for attempt in 1 2; do
	# QEMU_EXTRA is a list of options: split on purpose.
	# shellcheck disable=SC2086
	timeout --foreground -k 10 "$tmo" \
		qemu-system-x86_64 -M pc -accel "${ACCEL:-tcg,thread=single}" ${QEMU_EXTRA:-} -cpu max -smp "$smp" -m 1G \
		-bios /usr/share/qemu/qboot.rom -nographic -no-reboot \
		-kernel "$kernel" -initrd "${INITRD:-$BUILD/initramfs.cpio.gz}" \
		-append "console=ttyS0 panic=-1 unwind.job=$job $tsc ${KAPPEND:-}" \
		</dev/null >"$logf" 2>&1
	rc=$?
	# Under TCG the guest's TSC calibration against the PIT sometimes
	# fails (seen in about one boot in ten of the debug kernel, and on
	# a loaded host). The kernel then keeps time with jiffies, and
	# timer-driven samples (cpu-clock) come 4 ms apart and in bursts:
	# the perf tests' sample counts mean nothing. Boot once more; the
	# first log is kept beside the second.
	if [ "$attempt" = 1 ] &&
	   grep -q 'Marking TSC unstable due to could not calculate TSC khz' "$logf"; then
		log "the guest could not calibrate its TSC; booting again (first log: $logf.tsc-failed)"
		mv "$logf" "$logf.tsc-failed"
		continue
	fi
	break
done
set -e
[ "$rc" != 124 ] || log "QEMU timed out after ${tmo}s"
exit "$rc"
