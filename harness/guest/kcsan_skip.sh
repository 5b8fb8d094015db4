#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The race job's first entry: tell KCSAN which base-kernel functions'
# reports to leave out (its debugfs report filter, in blacklist mode: a
# report is dropped when either access's top frame is listed). Only code
# the series does not change is listed, each with the reason; a report
# with the series' code on both sides, or with the series' code on one
# side and an unlisted function on the other, is still printed and fails
# the run. TAP, one line.
#
#  - mas_walk, mas_topiary_replace: 6.12's maple tree. lock_vma_under_rcu()
#    walks the VMA tree under RCU (mas_walk()), as every page fault with a
#    per-VMA lock does, while mprotect() or munmap() replaces nodes
#    (mas_topiary_replace()) with plain stores: the tree is built for RCU
#    readers. Seen once in the concurrency stress (a walk's VMA lookup
#    against another thread's mprotect()), not in the series' code.
#  - smp_call_function_many_cond: x86's TLB flush sends its IPIs to the
#    CPUs in mm_cpumask(mm), which it reads without a lock by design while
#    another CPU leaves the mm in switch_mm_irqs_off() (KCSAN saw the word
#    change from 3 to 2, "race at unknown origin": CPU 0 left). Seen once in
#    the stress, in a COW fault of the test client's copy_to_user() that
#    flushed the TLB; base-kernel code on both sides.
#  - ktime_get_{mono,raw,boot,tai,real}_fast_ns: the NMI-safe clocks read
#    the timekeeper's fast copy under a seqcount latch and retry when the
#    tick rewrote it (timekeeping_update()); 6.12's latch reader,
#    raw_read_seqcount_latch(), tells KCSAN nothing, unlike the ordinary
#    seqcount readers. Seen once, at boot, while the initramfs unpacked:
#    SRCU's grace-period work (process_srcu) read the clock against the
#    tick; base-kernel code on both sides.
# The host's parse-console.py reads this list too, and leaves out such a
# report wherever the console has it: KCSAN reports a race during boot,
# before this script sets the filter.
SKIP="mas_walk mas_topiary_replace smp_call_function_many_cond
	ktime_get_mono_fast_ns ktime_get_raw_fast_ns ktime_get_boot_fast_ns
	ktime_get_tai_fast_ns ktime_get_real_fast_ns"
F=/sys/kernel/debug/kcsan
echo "1..1"
ok=1
for fn in $SKIP; do
	echo "!$fn" >$F || ok=0
done
if [ "$ok" = 1 ] && grep -q blacklisted $F; then
	echo "ok 1 KCSAN leaves out the listed base-kernel functions"
else
	echo "not ok 1 KCSAN's report filter could not be set"
fi
