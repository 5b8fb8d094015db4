#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every test of the project, from a fresh Debian 12 machine:
#   - the exported series: git am onto the pristine base, checkpatch --strict;
#   - the SFrame reader built in user space: against readelf, KUnit cases
#     under ASan/UBSan, a bounded libFuzzer run;
#   - the test kernel under QEMU: KUnit at boot, the selftests in the initramfs,
#     the main job's flame graphs from its profiles, checked in chromium, and
#     the pprof export of its recording, read by go tool pprof;
#   - the debug kernel (lockdep, atomic-sleep checks, KASAN): the same tests;
#   - the race kernel (KCSAN): the concurrency tests (guest/race.list);
#   - the instruction budget: a short -icount boot of the test kernel;
#   - the unpatched base kernel: perf's fallback from fp,defer to fp;
#   - KUnit with kunit.py.
# Every result is a PASS or FAIL line; the last line is "N passed, N failed".
# Logs are kept in build/logs/.
. "$(dirname "$0")/lib.sh"

set +e
# One host thread for all vCPUs. With multi-threaded TCG, a boot died once
# with "Oops: int3" in __schedule while a test enabled sched_switch: the
# tracepoint's static call site is rewritten with text_poke_bp(), and QEMU
# 7.2 let the other vCPU run the transient int3 after the patch was done.
# Real CPUs (and single-threaded TCG) see the code change coherently.
export ACCEL=${ACCEL:-tcg,thread=single}
logs=$BUILD/logs
mkdir -p "$logs"
res=$logs/results.txt
: > "$res"
t0=$(date +%s)

record() { tee -a "$res"; }

"$REPO/harness/deps.sh" || die "installing dependencies failed"
"$REPO/harness/prepare.sh" || { echo "FAIL prepare: the series does not apply" | record; }

if git -C "$SRC" rev-parse -q --verify series >/dev/null; then
	"$REPO/harness/check-series.sh" 2>"$logs/check-series.err" | record
	# The SFrame reader in user space: toolchain check, KUnit, fuzzing.
	"$REPO/harness/sframe-tests.sh" 2>"$logs/sframe-tests.err" | record

	progs_ok=1
	{ "$REPO/harness/build-progs.sh" && "$REPO/harness/build-perf.sh" &&
	  "$REPO/harness/initramfs.sh"; } \
		>"$logs/progs.log" 2>&1 ||
		{ progs_ok=0; echo "FAIL build.progs: see $logs/progs.log" | record; }

	# The race kernel (KCSAN) boots only the concurrency tests (race.list).
	for variant in test debug race; do
		job=test
		[ "$variant" != race ] || job=race
		if ! "$REPO/harness/build-kernel.sh" "$variant" \
			2>"$logs/build-$variant.err"; then
			echo "FAIL build.$variant: $(grep -m1 ERROR "$logs/build-$variant.err")" | record
			continue
		fi
		if grep -q 'warning:' "$logs/build-$variant.err"; then
			echo "FAIL build.$variant.warnings: $(grep -m1 'warning:' "$logs/build-$variant.err")" | record
		else
			echo "PASS build.$variant.warnings" | record
		fi
		[ "$progs_ok" = 1 ] || continue
		"$REPO/harness/qemu-run.sh" "$BUILD/obj-$variant/arch/x86/boot/bzImage" \
			"$logs/console-$variant.log" "$job" 1800 || true
		"$REPO/harness/parse-console.py" "$logs/console-$variant.log" \
			"$variant." --progs "$BUILD/progs" | record
		# The main job's flame graphs, from this boot's profiles, as a
		# browser draws them.
		[ "$variant" = test ] || continue
		{ "$REPO/harness/flamegraph.py" "$logs/console-test.log" "$logs/report-test" \
			"$BUILD/npm/node_modules" >/dev/null &&
		  "$REPO/harness/flamegraph_check.py" "$logs/report-test" flame. &&
		  "$REPO/harness/flamegraph_mutants.sh" "$logs/console-test.log" flame.; } 2>&1 |
			sed '/^\(PASS\|FAIL\) /!s/^/FAIL flame.report: /' | record
		# The pprof export of this boot's recording, read by go tool pprof
		# against perf's own report; its mutants, each caught.
		"$REPO/harness/pprof-check.sh" "$logs/console-test.log" pprof. | record
		"$REPO/harness/pprof-mutants.sh" "$logs/console-test.log" pprof. | record
	done

	# The instruction budget (docs/bench/budget.txt): one short -icount
	# boot of the bench job's request and deliver parts on the test
	# kernel. An instruction count is the same in every boot of one
	# build, so a figure more than 1% above its budget is a failure, not
	# a flake.
	if [ "$progs_ok" = 1 ] && ! grep -q '^FAIL build\.test:' "$res"; then
		"$REPO/harness/budget-boot.sh" "$BUILD/obj-test/arch/x86/boot/bzImage" \
			"$logs/console-budget.log" || true
		"$REPO/harness/budget-check.py" "$logs/console-budget.log" budget. | record
	fi

	# The unpatched base kernel: perf fp,defer must fall back to fp there.
	if "$REPO/harness/build-kernel.sh" base 2>"$logs/build-base.err"; then
		if [ "$progs_ok" = 1 ]; then
			"$REPO/harness/qemu-run.sh" "$BUILD/obj-base/arch/x86/boot/bzImage" \
				"$logs/console-base.log" base 600 || true
			"$REPO/harness/parse-console.py" "$logs/console-base.log" base. | record
		fi
	else
		echo "FAIL build.base: $(grep -m1 ERROR "$logs/build-base.err")" | record
	fi

	"$REPO/harness/kunit.sh" | record
fi

log "test run took $(( $(date +%s) - t0 )) s; logs in $logs"
grep FAIL "$res" >&2 || true
echo "$(grep -c '^PASS' "$res") passed, $(grep -c '^FAIL' "$res") failed"
