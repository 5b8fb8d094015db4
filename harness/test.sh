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
#   - the debug kernel (lockdep, atomic-sleep checks, KASAN): the same tests
#     but flame_profiles, whose recordings only feed the host's checks of
#     the test kernel's log;
#   - the race kernel (KCSAN): the concurrency tests (guest/race.list);
#   - the instruction budget: a short -icount boot of the test kernel;
#   - the unpatched base, as Debian builds and ships it (its
#     linux-image package of the same version, harness/debian-kernel.sh):
#     perf's fallback from fp,defer to fp;
#   - KUnit as kunit.py reads it: "kunit.py parse" on the test kernel's
#     boot, which runs the suites of configs/kunitconfig.
# Every result is a PASS or FAIL line; the last line is "N passed, N failed".
# Logs are kept in build/logs/.
#
# How the work is laid out. A QEMU boot (TCG, thread=single) is one host
# thread; a kernel build uses every core it gets. After deps.sh and
# prepare.sh, three things run at once:
#   - the build lane, at nice 19 with -j$JOBS: the programs, perf and the
#     initramfs, Debian's base kernel (a download), then the debug, test
#     and race kernels, one after the other (the debug kernel first: its
#     boot is the longest, and everything else fits beside it);
#   - the check lane, at normal priority: check-series.sh, then
#     sframe-tests.sh (its fuzzers run for a fixed time);
#   - the boots, at normal priority, each as soon as its kernel is built,
#     at most MAX_BOOTS (default: the number of cores) at once, the check
#     lane counted as one while it runs, preferring test (then the flame
#     graph, pprof and kunit.py checks on its log), budget, debug, race,
#     base.
# A boot thus takes its core from the build, which gets whatever the boots
# leave. (On a host shared with other work at normal priority, the builds
# get only what that leaves too; BUILD_NICE=0 gives them an equal share,
# and the boots less.) Each stage writes its results to its own file in
# build/logs/results.d/; they are printed, and put in results.txt, in one
# fixed order (STAGES below), each stage once it and every stage before it
# are done: the output is the same whichever finished first, and a stage
# that fails or dies loses no other stage's results.
#
# TEST_DRY_RUN=1 runs the same schedule with stand-ins for every build,
# boot and check (harness/test-dry.sh: a few seconds each, fake results),
# in build/dry-run/, to try the schedule itself; TEST_DRY_FAIL="STAGE..."
# makes stand-ins fail (progs, build.VARIANT, boot.VARIANT, series, sframe,
# kunit).
. "$(dirname "$0")/lib.sh"

set +e
# One host thread for all vCPUs. With multi-threaded TCG, a boot died once
# with "Oops: int3" in __schedule while a test enabled sched_switch: the
# tracepoint's static call site is rewritten with text_poke_bp(), and QEMU
# 7.2 let the other vCPU run the transient int3 after the patch was done.
# Real CPUs (and single-threaded TCG) see the code change coherently.
export ACCEL=${ACCEL:-tcg,thread=single}
MAX_BOOTS=${MAX_BOOTS:-$(nproc)}
logs=$BUILD/logs
H=$REPO/harness
if [ -n "${TEST_DRY_RUN:-}" ]; then
	# Stand-ins, and logs of their own: build/ is left alone.
	H=$BUILD/dry-run/harness
	logs=$BUILD/dry-run/logs
	"$REPO/harness/test-dry.sh" "$H" || die "cannot write the dry-run stand-ins"
fi
mkdir -p "$logs"
res=$logs/results.txt
: > "$res"
parts=$logs/results.d	# STAGE.txt: its results; STAGE.done: it is complete
state=$parts/state	# what each lane has built, and which boots ended
rm -rf "$parts"
mkdir -p "$parts" "$state"
t0=$(date +%s)

# The stages, in the order their results are printed and counted.
STAGES="prepare series sframe progs build.test test build.debug debug
	build.race race budget build.base base kunit"

out() { echo "$parts/$1.txt"; }
finish() { touch "$parts/$1.done"; }
elapsed() { echo "$(( $(date +%s) - t0 ))"; }
printed=" "
emit() {	# print the stages done, in order, up to the first one not done
	local s
	for s in $STAGES; do
		case $printed in *" $s "*) continue ;; esac
		[ -e "$parts/$s.done" ] || return 0
		if [ -f "$parts/$s.txt" ]; then
			cat "$parts/$s.txt"
			cat "$parts/$s.txt" >> "$res"
		fi
		printed="$printed$s "
	done
}
# The end: the failures again, each with what its check printed before it
# ("  | " lines: CI shows only the end of the output), and the count.
summary() {
	log "test run took $(elapsed) s; logs in $logs"
	awk '/^FAIL / { show = 1; print; next } show && /^  \| / { print; next }
	     { show = 0 }' "$res" >&2
	echo "$(grep -c '^PASS' "$res") passed, $(grep -c '^FAIL' "$res") failed"
}
# A stage that should give results and gave none (its script died early).
nonempty() {	# STAGE WHAT [NAME]
	grep -q . "$(out "$1")" 2>/dev/null ||
		echo "FAIL ${3:-$1}: no results (see $2)" >> "$(out "$1")"
}

"$H/deps.sh" || die "installing dependencies failed"
"$H/prepare.sh" ||
	echo "FAIL prepare: the series does not apply" > "$(out prepare)"
finish prepare

if [ -z "${TEST_DRY_RUN:-}" ] && ! git -C "$SRC" rev-parse -q --verify series >/dev/null; then
	for s in $STAGES; do finish "$s"; done
	emit
	summary
	exit 0
fi

# The check lane: the series' own checks and the SFrame reader in user
# space, beside the builds. prepare.sh has just run: export-series.sh
# need not run it again (and check out the tree the builds read).
(
	trap 'touch "$state/checks.end"' EXIT
	UNWIND_PREPARED=1 "$H/check-series.sh" 2>"$logs/check-series.err" > "$(out series)"
	nonempty series "$logs/check-series.err"
	finish series
	# The SFrame reader in user space: toolchain check, KUnit, fuzzing.
	"$H/sframe-tests.sh" 2>"$logs/sframe-tests.err" > "$(out sframe)"
	nonempty sframe "$logs/sframe-tests.err"
	finish sframe
	log "the check lane ended after $(elapsed) s"
) &
checks=$!

# The build lane, at the lowest priority: a boot running beside it keeps
# its core. Each kernel's state (ok or failed) goes to $state/kernel-VARIANT.
(
	trap 'touch "$state/builds.end"' EXIT
	renice -n "${BUILD_NICE:-19}" -p "$BASHPID" >/dev/null
	if { "$H/build-progs.sh" && "$H/build-perf.sh" && "$H/initramfs.sh"; } \
		>"$logs/progs.log" 2>&1; then
		echo ok > "$state/progs"
	else
		echo failed > "$state/progs"
		echo "FAIL build.progs: see $logs/progs.log" > "$(out progs)"
	fi
	finish progs
	log "built the programs, perf and the initramfs after $(elapsed) s"
	# The base boot's kernel is Debian's own build of the base (a
	# download, no build): it boots beside the kernel builds.
	if k=$("$H/debian-kernel.sh" 2>"$logs/build-base.err"); then
		echo "$k" > "$state/base-bzimage"
		echo ok > "$state/kernel-base"
	else
		echo "FAIL build.base: $(grep -m1 ERROR "$logs/build-base.err")" > "$(out build.base)"
		echo failed > "$state/kernel-base"
	fi
	finish build.base
	for variant in debug test race; do
		o=$(out "build.$variant")
		if ! "$H/build-kernel.sh" "$variant" 2>"$logs/build-$variant.err"; then
			echo "FAIL build.$variant: $(grep -m1 ERROR "$logs/build-$variant.err")" > "$o"
			echo failed > "$state/kernel-$variant"
		else
			if grep -q 'warning:' "$logs/build-$variant.err"; then
				echo "FAIL build.$variant.warnings: $(grep -m1 'warning:' "$logs/build-$variant.err")" > "$o"
			else
				echo "PASS build.$variant.warnings" > "$o"
			fi
			echo ok > "$state/kernel-$variant"
		fi
		finish "build.$variant"
		log "built $variant after $(elapsed) s"
	done
) &
builds=$!

# Each boot and the checks on its log. The race kernel (KCSAN) boots only
# the concurrency tests (race.list), the base kernel perf's fallback.
boot() {	# VARIANT
	local v=$1 o job tmo skip initrd
	o=$(out "$v")
	case $v in
	test|debug|race)
		job="test"
		[ "$v" != race ] || job=race
		# The debug kernel (KASAN, lockdep) runs the test job about
		# five times slower, beside another boot: 25 min seen before
		# the fuzzer came, more on a busy host.
		tmo=1800
		skip=
		if [ "$v" = debug ]; then
			tmo=3000
			# flame_profiles records the main job's profiles for
			# the flame graph and pprof checks, which read the test
			# kernel's log alone. Its kernel side, perf's fp,defer
			# on bash with loaded tables and on the no-FP demo,
			# runs here in eh_tables and perf_tests too; its own
			# recordings took 17 of the debug boot's 35 minutes.
			# eh_late tests perf's watch of new mappings (user
			# space) against the helper's latency, which KASAN
			# makes a large part of a short run (36 of 64 samples
			# complete in one CI run); the kernel side, a table
			# loaded after its mapping was walked, runs here in
			# eh_tables 12.
			# perf_tests runs perf's own tests (the merge, its shell
			# tests of fp,defer and the context, perf top): tool
			# code, over the kernel paths deferred_callchain,
			# debian_perf and eh_tables run here; it took 247 s of
			# a cold CI run's debug boot, which such a run waits
			# for last. bpf_prof keeps its kernel part here (see
			# guest/bpf_prof.sh).
			# jit_node profiles Node.js, which only the test
			# boot's initramfs has (harness/initramfs.sh); the kernel
			# side, a walk through code in anonymous memory, runs
			# here in unwind_user_jit.
			skip=unwind.skip=flame_profiles,eh_late,perf_tests,jit_node
			# no5lvl: 4-level paging. With QEMU's LA57, an interrupt
			# during the boot CPU's identify_cpu(), which clears its
			# capability bits before alternatives are patched, sees
			# pgtable_l5_enabled() false, and KASAN reported the
			# irq_desc lock's 5-level direct-map address as a
			# wild access (one cold CI run, 2026-11-29, in the base
			# kernel's code before any of the series runs).
			skip="$skip no5lvl"
		fi
		# The test boot's initramfs has Node.js too.
		initrd=$BUILD/initramfs.cpio.gz
		[ "$v" != test ] || initrd=$BUILD/initramfs-test.cpio.gz
		INITRD=$initrd KAPPEND="$skip ${KAPPEND:-}" \
			"$H/qemu-run.sh" "$BUILD/obj-$v/arch/x86/boot/bzImage" \
			"$logs/console-$v.log" "$job" "$tmo"
		"$H/parse-console.py" "$logs/console-$v.log" \
			"$v." --progs "$BUILD/progs" > "$o"
		nonempty "$v" "$logs/console-$v.log"
		;;
	base)
		# tsc=reliable: the unpatched 6.12 WARNs in
		# static_key_disable_cpuslocked() from __sched_clock_work when
		# the clocksource watchdog marks the TSC unstable while late
		# init still enables __sched_clock_stable (seen once, the boot
		# beside another on a loaded host). The one check here, perf's
		# fallback, does not depend on the clocksource.
		KAPPEND="tsc=reliable ${KAPPEND:-}" \
			"$H/qemu-run.sh" "$(cat "$state/base-bzimage")" \
			"$logs/console-base.log" base 600
		"$H/parse-console.py" "$logs/console-base.log" base. > "$o"
		nonempty base "$logs/console-base.log"
		;;
	budget)
		# The instruction budget (docs/bench/budget.txt): one short
		# -icount boot of the bench job's request and deliver parts on
		# the test kernel. An instruction count is the same in every
		# boot of one build, whatever else the host runs, so a figure
		# more than 1% above its budget is a failure, not a flake.
		"$H/budget-boot.sh" "$BUILD/obj-test/arch/x86/boot/bzImage" \
			"$logs/console-budget.log"
		"$H/budget-check.py" "$logs/console-budget.log" budget. > "$o"
		nonempty budget "$logs/console-budget.log"
		;;
	esac
	if [ "$v" = test ]; then
		# The main job's flame graphs, from this boot's profiles, as a
		# browser draws them.
		{ "$H/flamegraph.py" "$logs/console-test.log" "$logs/report-test" \
			"$BUILD/npm/node_modules" >/dev/null &&
		  "$H/flamegraph_check.py" "$logs/report-test" flame. &&
		  "$H/flamegraph_mutants.sh" "$logs/console-test.log" flame.; } 2>&1 |
			sed '/^\(PASS\|FAIL\) /!s/^/FAIL flame.report: /' >> "$o"
		# The pprof export of this boot's recording, read by go tool
		# pprof against perf's own report; its mutants, each caught.
		"$H/pprof-check.sh" "$logs/console-test.log" pprof. >> "$o"
		"$H/pprof-mutants.sh" "$logs/console-test.log" pprof. >> "$o"
	fi
	finish "$v"
	if [ "$v" = test ]; then
		# KUnit as kunit.py parses it, from the KTAP this boot printed
		# (the test kernel has every option of configs/kunitconfig).
		"$H/kunit.sh" --parse "$logs/console-test.log" "$BUILD/obj-test/.config" \
			> "$(out kunit)"
		nonempty kunit "$BUILD/kunit/kunit.log" kunit.py
		finish kunit
	fi
}

# What a boot needs: $state/kernel-KERNEL and $state/progs "ok". Prints
# ok, failed (it will never boot) or nothing (not yet).
ready() {	# KERNEL
	local k p
	k=$(cat "$state/kernel-$1" 2>/dev/null)
	p=$(cat "$state/progs" 2>/dev/null)
	if [ "$k" = failed ] || [ "$p" = failed ]; then
		echo failed
	elif [ "$k" = ok ] && [ "$p" = ok ]; then
		echo ok
	elif [ -e "$state/builds.end" ]; then
		echo failed	# the build lane ended without building it
	fi
}

pending="test budget debug race base"
while :; do
	# The check lane holds a core while it runs, as a boot does.
	running=0
	[ -e "$state/checks.end" ] || running=1
	for v in test budget debug race base; do
		[ -e "$state/boot-$v.start" ] && [ ! -e "$state/boot-$v.end" ] &&
			running=$((running + 1))
	done
	left=
	for v in $pending; do
		k=$v
		[ "$v" != budget ] || k="test"
		case $(ready "$k") in
		ok)
			if [ "$running" -lt "$MAX_BOOTS" ]; then
				touch "$state/boot-$v.start"
				log "boot $v starts after $(elapsed) s"
				( trap 'touch "$state/boot-$v.end"; log "boot $v and its checks ended after $(elapsed) s"' EXIT
				  boot "$v" ) &
				running=$((running + 1))
			else
				left="$left $v"
			fi ;;
		failed)
			# No boot: its results are missing (the build's FAIL
			# line says why); kunit.py has nothing to parse.
			finish "$v"
			if [ "$v" = test ]; then
				echo "FAIL kunit.py: no boot of the test kernel to parse (see build.test, build.progs)" > "$(out kunit)"
				finish kunit
			fi ;;
		*)	left="$left $v" ;;
		esac
	done
	pending=$left
	emit
	if [ -z "$pending" ] && [ "$running" = 0 ] && [ -e "$state/builds.end" ]; then
		break
	fi
	sleep "${TEST_POLL:-5}"
done
wait "$builds"
wait "$checks"
wait
# Anything still not marked done (a lane that died) is printed as it is.
for s in $STAGES; do finish "$s"; done
emit

summary
