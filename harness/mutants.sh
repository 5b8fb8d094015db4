#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prove that the tests guard the contracts: for each mutant, break the
# patched tree in one place, rebuild the test kernel, boot it, and list the
# results that fail (there must be some); then restore the tree. Slow (a few
# minutes per mutant) and not part of CI.
#   mutants.sh [NAME...]	(default: all)
# Each mutant's boot runs only the test named to catch it (unwind.only=,
# see guest/init) and the KUnit suites; MUTANT_ALL_TESTS=1 runs the whole
# job and lists every failure. MUTANT_JOB=JOB boots another job list.
# MUTANT_SIZES=1 boots nothing: it builds each kernel mutant and prints the
# sizes its piggy.S holds, marking those equal to the unmodified kernel's
# (before harness/kcc, such a pair shared one cached piggy.o:
# docs/testing.md, "Mutants"). MUTANT_PLANT=1 shows what such a pair did: see plant_piggy().
. "$(dirname "$0")/lib.sh"
set +e
# One host thread for all vCPUs. With multi-threaded TCG, a boot died once
# with "Oops: int3" in __schedule while a test enabled sched_switch: the
# tracepoint's static call site is rewritten with text_poke_bp(), and QEMU
# 7.2 let the other vCPU run the transient int3 after the patch was done.
# Real CPUs (and single-threaded TCG) see the code change coherently.
export ACCEL=${ACCEL:-tcg,thread=single}

# No compiler cache: make rebuilds only the mutated file, which costs
# seconds. Mutants' boots once ran kernels without their mutation: ccache
# handed back an old piggy.o, the compressed kernel inside the bzImage (see
# harness/kcc, which now compiles it for real). This keeps the cache out of
# mutant builds altogether.
export CCACHE_DISABLE=1

out=$BUILD/mutants
mkdir -p "$out"

# kernel=debug before mutate builds and boots the debug kernel instead.
# check=budget before mutate boots the test command's instruction budget
# check instead of the test job (harness/budget-boot.sh: -icount, the bench
# job's request and deliver parts), and EXPECT names the figures of
# docs/bench/budget.txt of which one must be measured above its budget
# (harness/budget-check.py).
mutate() {	# NAME FILE OLD NEW EXPECT: EXPECT is the result (or prefix) meant to catch it
	local name=$1 file=$SRC/$2 expect=$5 caught sizes kern=${kernel:-test}
	[ -z "$only" ] || [[ " $only " == *" $name "* ]] || return 0
	cp "$file" "$out/orig"
	python3 - "$file" "$3" "$4" <<'PY' || { echo "MUTANT $name: pattern not found"; return; }
import sys
p, old, new = sys.argv[1:]
s = open(p).read()
if s.count(old) != 1:
    sys.exit(1)
open(p, 'w').write(s.replace(old, new))
PY
	# A mutant of a tool the guest runs (eh2sframe, perf) rebuilds it.
	case $2 in
	tools/unwind/* | tools/perf/*) user=1 ;;
	*) user= ;;
	esac
	[ -z "$user" ] || build_user >"$out/$name.build-user" 2>&1 ||
		echo "MUTANT $name: user-space build failed (see $out/$name.build-user)"
	if [ -n "${MUTANT_SIZES:-}" ] && [ -z "$user" ]; then
		if "$REPO/harness/build-kernel.sh" test >"$out/$name.build" 2>&1; then
			sizes=$(piggy_sizes)
			if [ "$sizes" = "$base_sizes" ]; then
				echo "MUTANT $name: sizes $sizes, the SAME as the unmodified kernel's"
			else
				echo "MUTANT $name: sizes $sizes"
			fi
		else
			echo "MUTANT $name: does not build (see $out/$name.build)"
		fi
	elif [ -n "${MUTANT_SIZES:-}" ]; then
		:
	elif [ -n "${MUTANT_PLANT:-}" ]; then
		[ -n "$user" ] || [ -n "${check:-}" ] || plant_piggy "$name" "$expect" "$file"
	elif "$REPO/harness/build-kernel.sh" "$kern" >"$out/$name.build" 2>&1; then
		if [ "${check:-}" = budget ]; then
			# Only a figure measured above its budget counts: a
			# boot that gives none fails as "not measured".
			"$REPO/harness/budget-boot.sh" "$BUILD/obj-$kern/arch/x86/boot/bzImage" \
				"$out/$name.log" >/dev/null 2>&1
			caught=$("$REPO/harness/budget-check.py" "$out/$name.log" "" |
				 grep '^FAIL [^ ]*: measured' | cut -d' ' -f2 | tr -d : |
				 tr '\n' ' ')
		else
			# Only the test meant to catch it (and KUnit, which
			# runs at boot), unless MUTANT_ALL_TESTS is set: about
			# a minute a boot instead of several.
			local only="unwind.only=${expect%%[.:]*}"
			[ -z "${MUTANT_ALL_TESTS:-}" ] || only=
			KAPPEND=$only "$REPO/harness/qemu-run.sh" \
				"$BUILD/obj-$kern/arch/x86/boot/bzImage" \
				"$out/$name.log" "${MUTANT_JOB:-test}" 600 >/dev/null 2>&1
			caught=$("$REPO/harness/parse-console.py" "$out/$name.log" "" \
				 --progs "$BUILD/progs" | grep '^FAIL' | cut -d' ' -f2 |
				 tr -d : | tr '\n' ' ')
		fi
		# EXPECT may name alternatives, TEST:OTHER (such as a console
		# splat the test provokes); the boot runs TEST's program.
		local e hit=
		for e in ${expect//:/ }; do
			[[ " $caught" != *" $e"* ]] || hit=$e
		done
		if [ -n "$hit" ]; then
			echo "MUTANT $name: caught by $hit (all failures: $caught)"
		else
			echo "MUTANT $name: NOT CAUGHT by $expect (failures: ${caught:-none})"
		fi
	else
		echo "MUTANT $name: does not build (see $out/$name.build)"
	fi
	cp "$out/orig" "$file"
	[ -z "$user" ] || build_user >/dev/null 2>&1
}

# The compressed kernel's size and the kernel's size, which are all that
# arch/x86/boot/compressed/piggy.S holds besides the .incbin of the image.
piggy_sizes() {
	awk '/^z_input_len|^z_output_len/ { printf "%s%s", sep, $3; sep = "/" }' \
		"$BUILD/obj-test/arch/x86/boot/compressed/piggy.S"
}

# What a stale piggy.o from ccache did before harness/kcc: the unmodified
# series is built with a gcc that, like a cache hit on the same piggy.S,
# hands back the mutant's piggy.o (it compiles piggy.S, so that kbuild gets
# its dependency file, then puts the mutant's object in its place), as if
# the two images' sizes had come out the same. build-kernel.sh must refuse
# that bzImage; booting it shows what a test run on it saw.
plant_piggy() {	# NAME EXPECT FILE (FILE holds the mutation)
	local name=$1 expect=$2 file=$3 caught only gcc
	local obj=$BUILD/obj-test/arch/x86/boot/compressed/piggy.o
	local log=$out/$name.planted.log bin=$out/plant-bin

	if ! "$REPO/harness/build-kernel.sh" test >"$out/$name.build" 2>&1; then
		echo "MUTANT $name: does not build (see $out/$name.build)"
		return
	fi
	cp "$obj" "$out/$name.piggy.o"
	cp "$out/orig" "$file"
	gcc=$(command -v gcc)
	mkdir -p "$bin"
	printf '%s\n' '#!/bin/sh' \
		'case " $* " in' \
		'*" arch/x86/boot/compressed/piggy.S "*)' \
		"	$gcc \"\$@\" || exit" \
		"	cp '$out/$name.piggy.o' '$obj' ;;" \
		"*)	exec $gcc \"\$@\" ;;" \
		'esac' >"$bin/gcc"
	chmod +x "$bin/gcc"
	if PATH=$bin:$PATH "$REPO/harness/build-kernel.sh" test \
		>"$out/$name.build-planted" 2>&1; then
		echo "MUTANT $name: PLANTED image NOT REFUSED by build-kernel.sh"
	else
		echo "MUTANT $name: build-kernel.sh: $(grep -o 'ERROR: .*' \
			"$out/$name.build-planted")"
	fi
	only="unwind.only=${expect%%.*}"
	[ -z "${MUTANT_ALL_TESTS:-}" ] || only=
	KAPPEND=$only "$REPO/harness/qemu-run.sh" \
		"$BUILD/obj-test/arch/x86/boot/bzImage" "$log" test 600 >/dev/null 2>&1
	caught=$("$REPO/harness/parse-console.py" "$log" "" --progs "$BUILD/progs" |
		 grep '^FAIL' | cut -d' ' -f2 | tr -d : | tr '\n' ' ')
	echo "MUTANT $name: that bzImage booted \"$(grep -a -o -m1 '#[0-9][0-9]* SMP [^\r]*' "$log")\"," \
	     "the vmlinux built is \"$(strings "$BUILD/obj-test/vmlinux" |
		grep -o -m1 '#[0-9][0-9]* SMP .*')\"; failed: ${caught:-nothing}"
	grep -a -E '^# line [0-9]+:' "$log" | sed "s/^/MUTANT $name:   /"
	# The next build must compile piggy.o again.
	rm -f "$obj"
}

build_user() {
	"$REPO/harness/build-progs.sh" && "$REPO/harness/build-perf.sh" &&
		"$REPO/harness/initramfs.sh"
}

only="$*"
"$REPO/harness/prepare.sh" >/dev/null
if [ -n "${MUTANT_SIZES:-}" ]; then
	"$REPO/harness/build-kernel.sh" test >/dev/null 2>&1 ||
		die "the unmodified test kernel does not build"
	base_sizes=$(piggy_sizes)
	echo "unmodified test kernel: sizes $base_sizes (compressed/uncompressed)"
fi
# perf too: without it every perf test fails, and would "catch" any mutant.
[ -n "${MUTANT_SIZES:-}" ] || build_user >/dev/null

mutate no_align kernel/unwind/user.c \
	$'\tif (cfa & (ws - 1))\n\t\treturn -EINVAL;\n' '' \
	kunit.uw_misaligned
# uprobes: the uretprobe trampoline is replaced by the real return address,
# and a uprobe'd "push %rbp" (an int3 in the text) is still recognised.
mutate uretprobe_no_fixup kernel/unwind/user.c \
	'state->ip = (*ri)->orig_ret_vaddr;' 'state->ip = state->ip;' \
	unwind_deferred.17
mutate uprobe_xol_slot kernel/unwind/user.c \
	'state->ip = current->utask->vaddr;' 'state->ip = state->ip;' \
	unwind_deferred.17
mutate uprobe_push_int3 arch/x86/include/asm/unwind_user.h \
	'if (IS_ENABLED(CONFIG_UPROBES) && prev == 0xcc) {' 'if (0) {' \
	unwind_deferred.17
mutate only_requesters kernel/unwind/deferred.c \
	$'\t\tif (!(todo & bit))\n\t\t\tcontinue;\n' '' \
	unwind_deferred.6
mutate fixed_cookie kernel/unwind/deferred.c \
	'new.cookie = old.cookie ?: unwind_new_cookie();' \
	'new.cookie = old.cookie ?: 0x100000001ULL;' \
	unwind_deferred.2
# Issue 32: the cookie stays positive as an s64 across the counter's wrap.
mutate cookie_bit63 kernel/unwind/deferred.c \
	'u32 high = (ctr & S32_MAX) | 1;' \
	'u32 high = ctr | 1;' \
	kunit.ud_cookie_wrap
mutate walk_every_time kernel/unwind/deferred.c \
	'if (!cookie || cache->cookie != cookie) {' 'if (cache) {' \
	unwind_deferred.7
mutate no_completed kernel/unwind/deferred.c \
	$'\t\tif (atomic_long_fetch_or(bit, &info->completed) & bit)\n\t\t\tcontinue;\n' '' \
	unwind_deferred.7
mutate fork_inherits kernel/unwind/deferred.c \
	$'\tmemset(info, 0, sizeof(*info));\n' \
	$'\tmemset(info, 0, sizeof(*info));\n\tinfo->state = current->unwind_info.state;\n' \
	unwind_deferred.11
mutate no_exit_flush kernel/exit.c \
	$'\tunwind_deferred_flush();\n\n\t/*\n\t * Since sampling' $'\n\t/*\n\t * Since sampling' \
	unwind_deferred.10
mutate no_exec_flush fs/exec.c \
	$'\n\t/* Deliver deferred user stacks of the old program while it exists. */\n\tunwind_deferred_flush();\n' '' \
	unwind_deferred.14
# Contract 13: whom to call comes from the live mask, not the pre-walk one.
mutate stale_todo kernel/unwind/deferred.c \
	'todo = live.cookie == state.cookie ? live.mask & UNWIND_WORK_MASK : 0;' \
	'todo = live.cookie == state.cookie ? state.mask & UNWIND_WORK_MASK : 0;' \
	unwind_deferred.15
# Contract 3: a run whose entry was ended during its walk calls nobody with
# the dead entry's cookie.
mutate dead_entry_cookie kernel/unwind/deferred.c \
	'todo = live.cookie == state.cookie ? live.mask & UNWIND_WORK_MASK : 0;' \
	'todo = live.mask & UNWIND_WORK_MASK;' \
	unwind_deferred.20
# Contract 11: execve() ends the entry after delivering.
mutate exec_keeps_entry kernel/unwind/deferred.c \
	'done = unwind_state_reset(info);' 'done = true;' \
	unwind_deferred.14
mutate no_scrub kernel/unwind/deferred.c \
	$'\tfor_each_process_thread(g, t)\n\t\tunwind_task_scrub(t, bit);' \
	$'\tfor_each_process_thread(g, t)\n\t\tcontinue;' \
	unwind_deferred.9

# Contract 16: the walk starts from the user state at entry, not from the
# registers a signal frame or a restart left.
mutate signal_regs_ignored kernel/unwind/deferred.c \
	$'\t\tif (READ_ONCE(info->state.mask) & UNWIND_REGS)\n\t\t\tunwind_user_from' \
	$'\t\tif (0)\n\t\t\tunwind_user_from' \
	unwind_deferred.18
mutate no_signal_hook kernel/entry/common.c \
	$'\t\t\tunwind_deferred_signal(regs);\n' '' \
	unwind_deferred.18
# Review M4: text moved alone by mremap() is looked up where the section
# has it.
mutate vma_moved_text_unshifted kernel/unwind/sframe_vma.c \
	'unsigned long at = ip - w->bias + text_bias;' 'unsigned long at = ip;' \
	unwind_user_sframe_dso.15
# Contract 14: a section found malformed when first examined (debug
# kernels validate then) ends the walk: the debug kernel's case.
kernel=debug mutate vma_bad_at_discovery_guesses kernel/unwind/sframe_vma.c \
	$'\t\t\tinfo->bad = true;\n' '' \
	unwind_user_sframe_dso.16
# Contract 2: a request after the exit loop gets the self-interrupt, from
# the reset that finds it pending.
mutate late_no_kick kernel/unwind/deferred.c \
	$'if (!unwind_state_reset(&current->unwind_info))\n\t\tirq_work_queue(this_cpu_ptr(&unwind_nmi_work));' \
	'unwind_state_reset(&current->unwind_info);' \
	unwind_deferred.19
# Issue 31, m14: a request before the exit loop (sched_switch) raises none.
mutate switch_kicks kernel/unwind/deferred.c \
	'(context_tracking_enabled_this_cpu() && in_task() &&' \
	'(true && in_task() &&' \
	deferred_callchain.12
# Contract 20: a walk continues through a signal frame with the registers
# saved in it.
mutate no_sigreturn kernel/unwind/user.c \
	'nr_restorers = arch_unwind_user_restorers(restorers, ARRAY_SIZE(restorers));' \
	'nr_restorers = 0;' \
	unwind_user_fp.4
# Contract 19: a table loaded for a build-id serves the file's mappings.
mutate table_not_used kernel/unwind/sframe_vma.c \
	'	t = sframe_table_get(info->build_id, info->build_id_len);' '	t = NULL;' \
	sframe_tables.7
# Contract 19: what the file's own section leaves out (libc's code in a
# static program built with SFrame) is looked up in the loaded table.
mutate table_no_fallback kernel/unwind/sframe_vma.c \
	'		if (ret != -ENOENT || !table)' '		if (true)' \
	eh_tables.3
# Contract 17: a failure to read the headers is not kept as "no section".
mutate discover_keeps_fault kernel/unwind/sframe_vma.c \
	$'sizeof(ehdr)))\n\t\treturn ERR_PTR(-EFAULT);' \
	$'sizeof(ehdr)))\n\t\treturn sframe_vma_none(gen);' \
	unwind_user_sframe_dso.6
# A malformed section is dropped for the process that found it, not for
# the fork()-shared entry.
mutate sframe_drop_shared kernel/unwind/sframe_vma.c \
	$'\tif (ret == -EINVAL) {\n\t\tsframe_drop(ip, w->info);' \
	$'\tif (ret == -EINVAL) {\n\t\tWRITE_ONCE(w->info->bad, true);\n\t\tsframe_drop(ip, w->info);' \
	unwind_user_sframe_dso.7
# A file whose program headers a tool moved to a segment of their own
# (eh2sframe --elf) is examined through them.
mutate phdrs_moved_ignored kernel/unwind/sframe_vma.c \
	$'\t\tfound = sframe_find_phdrs(where, ehdr.e_phoff, size);' \
	$'\t\tfound = 0;' \
	unwind_qsort.4

# SFrame (contracts 14, 15): frames of code without frame pointers come
# from the section of the mapped file.
mutate sframe_no_fp_fallback kernel/unwind/user.c \
	$'\t\tif (ret != -ENOENT)\n\t\t\treturn ret;\n' \
	$'\t\treturn ret;\n' \
	unwind_user_sframe_dso.2
mutate sframe_fde_off_by_one kernel/unwind/sframe.c \
	'if (fde->func_start <= ip) {' 'if (fde->func_start < ip) {' \
	kunit.sf_
mutate sframe_pcmask_ignored kernel/unwind/sframe.c \
	$'\t\tip_off %= fde->rep_size;' '' \
	kunit.sf_v1_pcmask
# Contract 14: a walk's budget of section reads, rows read in 256-byte
# chunks, at most 16,384 rows scanned for one function.
mutate sframe_budget_unwired kernel/unwind/sframe_vma.c \
	$'\tsec.reads_left = &w->reads_left;\n' '' \
	sframe_tables.11
mutate sframe_budget_ignored kernel/unwind/sframe.c \
	$'\t\tif (!*sec->reads_left)\n\t\t\treturn -EAGAIN;\n' '' \
	kunit.sf_budget
mutate sframe_rows_uncapped kernel/unwind/sframe.c \
	$'#define SFRAME_MAX_FDE_FRES\t\t16384' $'#define SFRAME_MAX_FDE_FRES\t\t0xffff' \
	sframe_tables.12
mutate sframe_rows_no_refill kernel/unwind/sframe.c \
	$'\t\tret = sframe_frebuf_fill(sec, fb, off, limit);\n\t\tif (ret)\n\t\t\treturn ret;\n' \
	$'\t\tfb->len = 0;\n' \
	kunit.sf_rows_cap
# V2 with PC-relative starts and V3 (re-encoded by harness/sframe/convert.py).
mutate sframe_pcrel_ignored kernel/unwind/sframe.c \
	'if (sec->flags & SFRAME_F_FDE_FUNC_START_PCREL)' 'if (0)' \
	unwind_user_sframe_v2_pcrel.1
mutate sframe_v3_attrs_kept kernel/unwind/sframe.c \
	$'\t\tfre_rel += SFRAME_V3_ATTR_SIZE;\n' '' \
	unwind_user_sframe_v3.1
# The recursion step reuses a kept rule only for the address it was found
# for.
mutate sframe_again_any_ip kernel/unwind/sframe.h \
	'return m->ip == ip ? &m->frame : NULL;' \
	'return m->ip ? &m->frame : NULL;' \
	unwind_user_sframe.1
# The frame-pointer fast path is only for code known to have no section.
mutate fp_fast_path_any_frame kernel/unwind/user.c \
	'return unwind_user_sframe_none(sw, state->ip - 1);' 'return true;' \
	unwind_user_sframe.1
mutate sframe_not_used kernel/unwind/user.c \
	'if (sw && state->ws == sizeof(u64)) {' 'if (0) {' \
	unwind_user_sframe.2
# Issue 34: the instruction budget (docs/bench/budget.txt). Four NOPs a
# step in the loop of frame-pointer runs (step 71): fp_step 36.0 against
# 32.0, and every delivery 4 instructions a frame dearer.
check=budget mutate fp_step_slowed kernel/unwind/user.c \
	$'\t\t*entry++ = ra;\n' \
	$'\t\tasm volatile("nop; nop; nop; nop");\n\t\t*entry++ = ra;\n' \
	fp_step
# The run's checks (step 71): KUnit's chain cases with their code in a
# mapping without a section walk every frame after the first in the run.
mutate fp_run_no_align kernel/unwind/user.c \
	$'\t\tif (unlikely(next & (sizeof(long) - 1)))\n\t\t\tbreak;\n' '' \
	kunit.uw_misaligned
mutate fp_run_not_upward kernel/unwind/user.c \
	$'\t\tif (unlikely(next <= fp))\n' $'\t\tif (unlikely(!next))\n' \
	kunit.uw_cyclic
mutate fp_run_unmasked kernel/unwind/user.c \
	$'\t\tfp = (unsigned long)mask_user_address((const void __user *)fp);\n' '' \
	kunit.uw_kernel_pointer
# Step 88: code in anonymous memory (a JIT's) has no section: frame
# pointers there, never a stop as for code that may have one.
mutate anon_exec_stops kernel/unwind/sframe_vma.c \
	$'\t/* Only a regular file is ever read: nothing else holds ELF code. */\n' \
	$'\tif (!vma->vm_file) {\n\t\tsframe_vma_unlock(mm, vma, locked);\n\t\treturn -EAGAIN;\n\t}\n' \
	unwind_user_jit.1
# A signal restorer in the run's mapping ends the run (contract 20): the
# handler of unwind_user_fp 4 calls the function that makes the read(), so
# that the step to the trampoline is in a run.
mutate fp_run_no_stop kernel/unwind/user.c \
	$'\t\tif (unlikely(ra == stop))\n\t\t\tgoto stop;\n' '' \
	unwind_user_fp.4
# Step 73: the frame-pointer rule kept for code a section leaves out is
# only a caller's; the topmost frame's own rule is never kept.
mutate sframe_keep_topmost kernel/unwind/user.c \
	$'\t\tif (!topmost) {\n\t\t\t*frame = arch_unwind_user_fp_frame(sizeof(u64));' \
	$'\t\tif (1) {\n\t\t\t*frame = arch_unwind_user_fp_frame(sizeof(u64));' \
	kunit.uw_function_entry
# Step 73: the gap a missed SFrame search found is answered without a
# read, and ends where the next function starts.
mutate sframe_gap_too_wide kernel/unwind/sframe.c \
	$'\tcache->gap_len = end - start;\n' $'\tcache->gap_len = end - start + 1;\n' \
	kunit.sf_gap_cached
mutate sframe_gap_unused kernel/unwind/sframe.c \
	$'\tif (cache && ip - cache->gap_start < cache->gap_len)\n\t\treturn -ENOENT;\n' '' \
	kunit.sf_gap_cached
# Step 72: the restorers of handlers in every group of eight signals (the
# test's SIGUSR1 is in the second).
mutate restorer_groups_skipped arch/x86/include/asm/unwind_user.h \
	'for (group = sh->action; group < end; group += 8) {' \
	'for (group = sh->action; group < end; group += _NSIG) {' \
	unwind_user_fp.4

# BPF's client (issue 32, kernel/unwind/bpf.c): bpf_unwind 1-10.
mutate bpf_no_delivery kernel/unwind/bpf.c \
	$'\ttrace_unwind_user_stack(cookie, trace);\n' '' \
	bpf_unwind.1
mutate bpf_wrong_cookie kernel/unwind/bpf.c \
	$'\t}\n\treturn cookie;' $'\t}\n\treturn cookie + 2;' \
	bpf_unwind.1
# The recorded event's nr says one frame more than its ips hold.
mutate bpf_event_nr_off include/trace/events/unwind.h \
	$'\t\t__entry->nr = trace->nr;\n\t\tif (trace->nr)' $'\t\t__entry->nr = trace->nr + 1;\n\t\tif (trace->nr)' \
	bpf_prof.5
mutate bpf_never_released kernel/unwind/bpf.c \
	$'\tif (aux->unwind_user_ref)\n\t\tunwind_shared_put(&bpf_unwind);\n' '' \
	bpf_unwind.13
mutate bpf_release_at_once kernel/unwind/shared.c \
	$'#define UNWIND_SHARED_RELEASE_DELAY\tHZ' $'#define UNWIND_SHARED_RELEASE_DELAY\t0' \
	bpf_unwind.13
# unwindprof --off-cpu counts a quarter of each block too little: the
# blocked time of each of offcpu_demo's three waits against the demo's own
# measure (bpf_prof 8-10).
mutate offcpu_short tools/unwind/unwindprof/unwindprof.bpf.c \
	'e->weight = now - b->start;' 'e->weight = (now - b->start) * 3 / 4;' \
	bpf_prof.8
# m17: unwindprof opens a mapped file by the path maps shows (libdwfl's own
# find_elf): a user's program is read, and root blocks on the FIFO beside
# it where libdwfl looks for its debuginfo (eh_trust 20).
mutate unwindprof_opens_by_path tools/unwind/unwindprof/unwindprof.c \
	'	.find_elf = proc_find_elf,' '	.find_elf = dwfl_linux_proc_find_elf,' \
	eh_trust.20
# m18: every context makes an entry record, which only a stack of ours
# frees: perf's entries beside --span stay held (bpf_prof 15).
mutate unwindprof_ctx_kept tools/unwind/unwindprof/unwindprof.c \
	'		p = *pend_slot(h->tid, h->cookie);' '		p = pend_get(h->tid, h->cookie);' \
	bpf_prof.15
# Step 83: dwfl_report_end()'s callback frees what it is handed, the
# address of the module's userdata (bpf_prof 17 aborts); the maps of a
# process whose leader has gone are not read through a thread (17: the
# second library "[unknown]"); the vDSO read from the process's memory
# (18: frames named after the strings it rewrote).
mutate unwindprof_free_userdata_address tools/unwind/unwindprof/unwindprof.c \
	'	return forget_module(mod, userdata, name, base, arg);' \
	'	free(userdata);
	return DWARF_CB_OK;' \
	bpf_prof.17
mutate unwindprof_leader_maps_only tools/unwind/unwindprof/unwindprof.c \
	'	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);' \
	'	return NULL;' \
	bpf_prof.17
mutate unwindprof_vdso_from_process tools/unwind/unwindprof/unwindprof.c \
	'		*elfp = vdso_elf(mod, pid, why, sizeof(why));' \
	'		return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);' \
	bpf_prof.18

# perf's client (kernel/events/).
mutate perf_output_all kernel/events/callchain_deferred.c \
	$'\tif (!event->attr.defer_output)\n\t\treturn;\n' '' \
	deferred_callchain.
# Issue 20: the last event's release waits a second (deferred_callchain 11);
# the delay is the shared work's since issue 32.
mutate perf_release_at_once kernel/unwind/shared.c \
	$'#define UNWIND_SHARED_RELEASE_DELAY\tHZ' $'#define UNWIND_SHARED_RELEASE_DELAY\t0' \
	deferred_callchain.11
mutate perf_not_sb kernel/events/core.c \
	'attr->bpf_event || attr->defer_output)' 'attr->bpf_event)' \
	deferred_callchain.
mutate perf_wrong_cookie kernel/events/callchain.c \
	'perf_callchain_store_context(&ctx, defer_cookie);' \
	'perf_callchain_store_context(&ctx, defer_cookie + 2);' \
	deferred_callchain.
# defer_callchain without a user callchain is a no-op, as in mainline.
mutate perf_attr_einval kernel/events/internal.h \
	$'perf_callchain_defer_attr_valid(const struct perf_event_attr *attr)\n{\n\treturn true;' \
	$'perf_callchain_defer_attr_valid(const struct perf_event_attr *attr)\n{\n\treturn !attr->defer_callchain ||\n\t       !attr->exclude_callchain_user;' \
	deferred_callchain.1
mutate perf_walk_in_place kernel/events/core.c \
	'defer_cookie = perf_callchain_defer_request();' \
	'defer_cookie = perf_callchain_defer_request() * 0;' \
	deferred_callchain.

# The exit-to-user static key: off with no tracer, and turning it off ends
# every entry; the already-asked fast path of a request tests its own bit.
mutate key_stays_on kernel/unwind/deferred.c \
	$'\tstatic_branch_disable(&unwind_deferred_enabled);\n' '' \
	unwind_deferred_key.1
mutate key_off_keeps_entries kernel/unwind/deferred.c \
	$'\tfor_each_process_thread(g, t)\n\t\tunwind_task_end_entry(t);' \
	$'\tfor_each_process_thread(g, t)\n\t\t;' \
	unwind_deferred_key.1
mutate fast_path_any_bit kernel/unwind/deferred.c \
	'(READ_ONCE(info->state.mask) & BIT(bit)))) {' \
	'(READ_ONCE(info->state.mask) & UNWIND_WORK_MASK))) {' \
	unwind_deferred.1

# ftrace's client (kernel/trace/).
mutate ftrace_wrong_cookie kernel/trace/trace_deferred_unwind.c \
	$'\tentry->cookie = cookie;\n\ttrace_buffer_unlock_commit_nostack(buffer, event);\n}' \
	$'\tentry->cookie = cookie + 2;\n\ttrace_buffer_unlock_commit_nostack(buffer, event);\n}' \
	ftrace_userstack.
mutate ftrace_no_pgoff kernel/trace/trace_deferred_unwind.c \
	'map->base = ((u64)v->vm_pgoff << PAGE_SHIFT) - v->vm_start;' \
	'map->base = -(u64)v->vm_start;' \
	ftrace_userstack.

# Contract 12: the callback never sleeps on mmap_lock, and clearing the
# option never waits for a callback under the tracing mutexes.
mutate ftrace_mmap_sleeps kernel/trace/trace_deferred_unwind.c \
	'if (mm && !mmap_read_trylock(mm))' 'if (mm && mmap_read_lock_killable(mm))' \
	unwind_deferred.16
mutate ftrace_cancel_waits kernel/trace/trace_deferred_unwind.c \
	$'\t\tunwind_deferred_cancel_async(&client->work,\n\t\t\t\t\t     trace_unwind_client_free);' \
	$'\t\tunwind_deferred_cancel(&client->work);\n\t\tkfree(client);' \
	unwind_deferred.16

# The bench client (lib/tests/): what harness/bench.sh measures must be real.
mutate bench_lost_callback lib/tests/unwind_deferred_bench.c \
	'	atomic64_inc(&bench_callbacks);' '	atomic64_add(nr != 36, &bench_callbacks);' \
	bench_smoke.
mutate bench_walk_count lib/tests/unwind_deferred_bench.c \
	'		e->walks = p->unwind_info.nr_walks;' '		e->walks = p->unwind_info.nr_walks + 1;' \
	bench_smoke.

# After execve(), the entry point is not a function's entry with a return
# address at the stack pointer (step 42).
mutate syscall_at_entry kernel/unwind/user.c \
	'entry = topmost && !state->syscall;' 'entry = topmost;' \
	kunit.uw_syscall_at_entry

# Contract 20, in user space: the PLT stubs of a static program get their
# rule; perf loads tables, follows DT_NEEDED, and survives its helper.
mutate plt_not_described tools/unwind/plt.c \
	'	while (n < max && (scn = elf_nextscn(elf, scn))) {' \
	'	while (0 && n < max && (scn = elf_nextscn(elf, scn))) {' \
	eh_plt.2
mutate needed_not_followed tools/unwind/load.c \
	$'\tif (o->needed)\n\t\tadd_needed(files, missing);\n' '' \
	eh_tables.7
mutate perf_no_load tools/perf/util/sframe-tables.c \
	'	err = run_command(&cmd);' '	err = 0;' \
	eh_tables.2
# Without the privilege perf says, in one line, how to load the tables.
mutate perf_unpriv_silent tools/perf/util/sframe-tables.c \
	$'not loaded (needs CAP_PERFMON): as root, run \'eh2sframe --load --needed %s\' first\\n",' \
	$'not loaded for %s\\n",' \
	eh_tables.9
mutate perf_helper_ends_record tools/perf/util/sframe-tables.c \
	'	old_chld = signal(SIGCHLD, SIG_DFL);' '	old_chld = signal(SIGCHLD, SIG_IGN); signal(SIGCHLD, old_chld);' \
	eh_tables.3
# Deep stacks (step 85): a stack deeper than the cache page is cut at the
# page, and a cut is never marked.
mutate deep_never_grows kernel/unwind/deferred.c \
	'			if (walk.nr == UNWIND_MAX_ENTRIES && bound + 1 > max) {' \
	'			if (0) {' \
	bpf_unwind.10
mutate deep_cut_unmarked kernel/unwind/deferred.c \
	'		cache->truncated = cut;' '		cache->truncated = false;' \
	bpf_unwind.11
# Code mapped while recording (step 84): no helper run for it, and a
# helper whose parent's exit sends SIGCHLD (which ends the recording).
mutate perf_late_not_loaded tools/perf/util/sframe-tables.c \
	'	run_helper(st, m->pid);' '	if (0) run_helper(st, m->pid);' \
	eh_late.3
mutate perf_late_helper_ends_record tools/perf/util/sframe-tables.c \
	'		      CLONE_VM | CLONE_VFORK, &hc);' \
	'		      CLONE_VM | CLONE_VFORK | SIGCHLD, &hc);' \
	eh_late.6
# Step 86: unwindprof's runs for files mapped while it profiles (eh_late
# 8-10).
mutate unwindprof_late_not_loaded tools/unwind/unwindprof/unwindprof.c \
	'	late.helper = helper;' '	late.helper = NULL;' \
	eh_late.8

# Contract 21: a thread's context, its event and its join (steps 43-45).
# MUTANT_JOB=context runs just these against the context job.
mutate ctx_cap_any include/trace/events/unwind.h \
	'TRACE_EVENT_FLAGS(unwind_user_context, TRACE_EVENT_FL_CAP_ANY)' \
	'TRACE_EVENT_FLAGS(unwind_user_context, 0)' \
	unwind_context.20
mutate ctx_thread_keeps kernel/unwind/deferred.c \
	$'\tif (!(clone_flags & (CLONE_THREAD | CLONE_SETTLS)) &&\n\t    (!(clone_flags & CLONE_VM) || (clone_flags & CLONE_VFORK)))' \
	$'\tif (1)' \
	unwind_context.18
mutate ctx_exec_keeps kernel/unwind/deferred.c \
	$'program registers its own.\n\t */\n\tinfo->ctx_slot = 0;' \
	$'program registers its own.\n\t */' \
	unwind_context.19
mutate ctx_clone_vm_keeps kernel/unwind/deferred.c \
	$'&&\n\t    (!(clone_flags & CLONE_VM) || (clone_flags & CLONE_VFORK)))' ')' \
	unwind_context.22
mutate ctx_exec_cleared_first kernel/unwind/deferred.c \
	$'\tif (READ_ONCE(info->state.mask)) {\n\t\tdo {' \
	$'\tinfo->ctx_slot = 0;\n\tif (READ_ONCE(info->state.mask)) {\n\t\tdo {' \
	unwind_context.21
mutate ctx_attrs_unchecked kernel/unwind/context.c \
	$'\tif (!unwind_context_attrs_ok(rec->attrs, rec->attrs_size))\n\t\treturn UNWIND_CONTEXT_INVALID;\n' '' \
	unwind_context.9
mutate ctx_attrs_off_by_one kernel/unwind/context.c \
	'size - off - 2 < attrs[off + 1]' 'size - off - 1 < attrs[off + 1]' \
	kunit.ud_context_attrs
mutate ctx_ids_on_error kernel/unwind/context.c \
	'		memset(&rec, 0, UNWIND_CONTEXT_HDR_SIZE);' '		rec.attrs_size = 0;' \
	unwind_context.4
mutate perf_context_late tools/perf/util/deferred-callchain.c \
	'!ds->evsel || !evsel__is_unwind_context(ds->evsel))' 'true)' \
	perf_context.3

# Safety, round three (steps 49-51).
# B2: a drop releases the VMA's reference under the shared lock again.
mutate vma_drop_puts kernel/unwind/sframe_vma.c \
	$'\tcmpxchg(&vma->sframe_info, info, dropped);' \
	$'\tif (cmpxchg(&vma->sframe_info, info, dropped) == info)\n\t\tsframe_info_put(info);' \
	unwind_user_sframe_dso.14:console.
# m10: a malformed section falls back to frame pointers again.
mutate sframe_einval_guesses kernel/unwind/user.c \
	$'\t\tif (ret != -ENOENT)\n\t\t\treturn ret;' \
	$'\t\tif (ret >= 0 || ret == -EAGAIN || ret == -EOPNOTSUPP)\n\t\t\treturn ret;' \
	unwind_user_sframe_dso.11
# The hostile-user matrix (eh_trust 15-18): the same m10 mutant, seen by a
# user profiling its own program; and the device opened by anyone.
mutate hostile_einval_guesses kernel/unwind/user.c \
	$'\t\tif (ret != -ENOENT)\n\t\t\treturn ret;' \
	$'\t\tif (ret >= 0 || ret == -EAGAIN || ret == -EOPNOTSUPP)\n\t\t\treturn ret;' \
	eh_trust.18
mutate hostile_dev_open_anyone kernel/unwind/sframe_store.c \
	$'\tif (!perfmon_capable())\n\t\treturn -EPERM;\n' '' \
	eh_trust.15
# m10, the table's half: rows eh2sframe cannot express are stops, never
# gaps where the walk guesses with frame pointers.
mutate eh2sframe_gaps_guess tools/unwind/eh2sframe.c \
	'return r->kind == ROW_LEFT_OUT && r->reason != R_SIGNAL;' 'return false;' \
	eh_plt.5
# The review's perf nit: perf with a file capability runs the helper,
# which cannot load, and reports its failure instead of the hint.
mutate perf_filecaps_runs_helper tools/perf/util/sframe-tables.c \
	'	if (!helper_may_load()) {' '	if (!helper_may_load() && 0) {' \
	eh_trust.19
# m12: lld's layouts, each half of the fix.
mutate vma_lld_first_page kernel/unwind/sframe_vma.c \
	$'\tif (where->hdr != where->start &&\n\t    where->hdr' $'\tif (where->hdr' \
	unwind_user_sframe_dso.12
mutate vma_lld_gaps kernel/unwind/sframe_vma.c \
	$'\t\tif (prev->vm_pgoff &&\n\t\t    !(prev->vm_flags' $'\t\tif (0 && prev->vm_pgoff &&\n\t\t    !(prev->vm_flags' \
	unwind_user_sframe_dso.13
# M4: the own section's text clamped to the VMA the lookup is in.
mutate vma_text_clamped kernel/unwind/sframe_vma.c \
	$'\tsec.text_start += text_bias;\n\tsec.text_end += text_bias;' \
	$'\tsec.text_start = max(sec.text_start + text_bias, w->start);\n\tsec.text_end = min(sec.text_end + text_bias, w->end);' \
	unwind_user_sframe_dso.9
# M3: an entry found without a table never looks for one again.
mutate vma_table_never_again kernel/unwind/sframe_vma.c \
	'if (!READ_ONCE(info->table) && READ_ONCE(info->gen) != gen)' 'if (0)' \
	eh_tables.12
# M5, kernel side: a table of another layout used for the build-id.
mutate vma_table_any_layout kernel/unwind/sframe_vma.c \
	'if (t && (t->text_vaddr != info->text_start ||' \
	'if (t && 0 && (t->text_vaddr != info->text_start ||' \
	sframe_tables.14
# B3: writes to one /dev/sframe_tables file run at once again.
mutate store_writer_unlocked kernel/unwind/sframe_store.c \
	$'\tif (mutex_lock_interruptible(&w->lock))\n\t\treturn -ERESTARTSYS;\n\tret = sframe_tables_write_locked(w, ubuf, count);\n\tmutex_unlock(&w->lock);' \
	$'\tret = sframe_tables_write_locked(w, ubuf, count);' \
	sframe_tables_race
# m13: a buffered section counts in the cap only once it is loaded.
mutate store_header_uncharged kernel/unwind/sframe_store.c \
	$'\tif ((unsigned long)atomic_long_add_return(bytes, &sframe_tables_bytes) >\n\t    READ_ONCE(sframe_tables_max_bytes)) {' \
	$'\tif (atomic_long_add_return(bytes, &sframe_tables_bytes) < 0) {' \
	sframe_tables.13
# musl's rt_sigreturn trampoline not recognised.
mutate x86_no_musl_restorer arch/x86/include/asm/unwind_user.h \
	$'\tif (memcmp(insn, musl, sizeof(musl)) &&' $'\tif (1 &&' \
	unwind_user_fp.5
# The context event's hole: one byte of it left unwritten.
mutate ctx_event_hole include/trace/events/unwind.h \
	$'\t\t__field(u16,\treserved)' $'\t\t__field(u8,\treserved)' \
	ftrace_userstack
# Step 76: a sample after its entry's record waits for another record.
mutate perf_late_held tools/perf/util/deferred-callchain.c \
	$'\t    rec->cookie == cookie) {' $'\t    rec->cookie == ~cookie) {' \
	perf_tests.5
# Step 76: an exited thread's last record still merges a sample of its TID.
mutate perf_exit_remembers tools/perf/util/deferred-callchain.c \
	'if (hashmap__delete(&dc->records, tid, NULL, &rec))' \
	'if (0 && hashmap__delete(&dc->records, tid, NULL, &rec))' \
	perf_tests.5
# Step 87: a deferred off-CPU stack not joined to its time (written
# without frames); perf script forgets the exited threads again.
mutate perf_offcpu_stack_dropped tools/perf/util/bpf_skel/off_cpu.bpf.c \
	$'\tkey.defer_stack = hash;' $'\tkey.defer_stack = 0;' \
	bpf_prof.19
mutate perf_script_exited_forgotten tools/perf/builtin-script.c \
	$'\t\tsymbol_conf.keep_exited_threads = true;' $'\t\tsymbol_conf.keep_exited_threads = false;' \
	bpf_prof.19

# Safety, round four (steps 77, 78, 82).
# B4: without the mm, one pseudo-mapping holds every address but
# ULONG_MAX, which is looked up in a NULL mm (the oops of step 75).
mutate delay_fill_null_mm kernel/trace/trace_deferred_unwind.c \
	$'\tif (!mm) {\n\t\tfor (i = 0; i < nr; i++)\n\t\t\tframes[i] = (struct user_unwind_frame) { .ip = ips[i] };\n\t\treturn;\n\t}\n' \
	$'\tif (!mm)\n\t\tmap.len = ULONG_MAX;\n' \
	unwind_deferred.16:console.
# m16: the reset traceable again, so that a BPF fexit program requests
# after it.
mutate reset_traceable kernel/unwind/deferred.c \
	'notrace void __unwind_reset_info(void)' 'void __unwind_reset_info(void)' \
	bpf_unwind.15
# The note search stops at the first note again, readable or not.
mutate note_first_only kernel/unwind/sframe_vma.c \
	$'\tfor (i = 0; i < phnum && len <= 0; i++) {' $'\tfor (i = 0; i < phnum && !len; i++) {' \
	sframe_tables.16

# The hostile-state fuzzer (step 79, contract 25), one mutant per client
# and one of the walker: each gets a stack of an entry the fuzzer made
# wrong, and no other test enters the kernel with such a state.
# The walker's frame-pointer run records a return address outside user
# space when it leaves the run (a chain whose last return address is in
# the kernel, built in the program's own text).
mutate hostile_run_ra_kernel kernel/unwind/user.c \
	$'\tif (!ra || ra >= TASK_SIZE_MAX)\n\t\tgoto fault;' \
	$'\tif (!ra)\n\t\tgoto fault;' \
	unwind_hostile.2
# ftrace: without the mm (its trylock failed), the first frame is left as
# the ring buffer had it.
mutate hostile_fill_mm_less_first kernel/trace/trace_deferred_unwind.c \
	$'\tif (!mm) {\n\t\tfor (i = 0; i < nr; i++)' \
	$'\tif (!mm) {\n\t\tfor (i = 1; i < nr; i++)' \
	unwind_hostile.4
# perf: the record of a stack whose topmost IP is not a user address
# (a jump to -1) carries no frames, where BPF and ftrace carry them all.
mutate hostile_perf_drops_kernel_ip kernel/events/callchain_deferred.c \
	$'\t\t\t.nr\t= min_t(u64, trace->nr, PERF_DEFERRED_MAX_IPS),' \
	$'\t\t\t.nr\t= trace->nr && trace->entries[0] >= TASK_SIZE_MAX ? 0 :\n\t\t\t\t  min_t(u64, trace->nr, PERF_DEFERRED_MAX_IPS),' \
	unwind_hostile.3
# BPF: no unwind:unwind_user_stack for such a stack.
mutate hostile_bpf_skips_kernel_ip kernel/unwind/bpf.c \
	$'\ttrace_unwind_user_stack(cookie, trace);' \
	$'\tif (!trace->nr || trace->entries[0] < TASK_SIZE_MAX)\n\t\ttrace_unwind_user_stack(cookie, trace);' \
	unwind_hostile.2

# Back to the unmodified series.
"$REPO/harness/build-kernel.sh" test >/dev/null 2>&1
