#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The boot of the test command's instruction budget check:
#   budget-boot.sh BZIMAGE LOG
# One -icount boot of the bench job with only its request and deliver parts,
# the deliver part's depth axis at 8 and 32 frames, 3 runs each (about 35 s
# on this 2-core machine); harness/budget-check.py then compares its
# figures with docs/bench/budget.txt. The QEMU settings are those of
# harness/bench.sh's -icount boot, whose figures the budget holds, whatever
# ACCEL says: -icount needs single-threaded TCG. Exit status: qemu-run.sh's.
. "$(dirname "$0")/lib.sh"

kernel=${1:?bzImage}
logf=${2:?log file}
# Deterministic: one instruction per virtual nanosecond, and a TSC tick per
# instruction, so every figure is an instruction count.
ACCEL=tcg,thread=single QEMU_EXTRA="-icount shift=0,sleep=off" \
KAPPEND="unwind.runs=3 unwind.parts=request,deliver unwind.depths=8,32" \
	exec "$REPO/harness/qemu-run.sh" "$kernel" "$logf" bench 600
