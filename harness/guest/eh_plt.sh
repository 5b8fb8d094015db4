#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A walk that starts in a PLT stub of a static SFrame program (gas 2.40
# leaves the stubs out of .sframe, ld out of .eh_frame): without a table the
# walk stops at the stub (its frame pointer is 1: no guess gets further);
# with the table eh2sframe makes for the file, the stub's frame is right
# and the walk goes on through the caller into main(). unwind_plt checks
# the exact frames itself (exit 0: as asked). TAP.
#
# 4-6 (review m10): a walk from code whose CFI SFrame cannot express (its
# CFA in rbx, as ld.so's lazy-binding trampoline). Without a table, frame
# pointers lead to a decoy frame; with the table eh2sframe makes, whose
# rows there are a stop, the walk ends at the first frame. unwind_gap
# checks the frames itself.
E=/tests/bin/eh2sframe
P=/tests/bin/unwind_plt
# No table for it yet, whatever ran before.
$E --remove -q $P >/dev/null 2>&1
echo "1..6"
$P -n
rc=$?
if [ $rc = 0 ]; then echo "ok 1 no table: the walk does not get past the stub"
else echo "not ok 1 no table: status $rc"; fi
$E --load $P 2>&1 | sed 's/^/# /'
$P
rc=$?
if [ $rc = 0 ]; then echo "ok 2 with its table: stub, caller, main exact"
else echo "not ok 2 with its table: status $rc"; fi
$E --remove $P 2>&1 | sed 's/^/# /'
id=$($E $P | sed -n 's/.*: build-id \([0-9a-f]*\),.*/\1/p')
if [ -n "$id" ] && ! grep -q "^$id " /dev/sframe_tables; then
	echo "ok 3 its table removed"
else
	echo "not ok 3 its table removed ($id)"
fi

G=/tests/bin/unwind_gap
$E --remove -q $G >/dev/null 2>&1
$G -n
rc=$?
if [ $rc = 0 ]; then echo "ok 4 no table: frame pointers lead to the decoy"
else echo "not ok 4 no table: status $rc"; fi
$E --load $G 2>&1 | sed 's/^/# /'
$G
rc=$?
if [ $rc = 0 ]; then echo "ok 5 with its table: the walk ends where the CFA is in rbx"
else echo "not ok 5 with its table: status $rc"; fi
$E --remove $G 2>&1 | sed 's/^/# /'
id=$($E $G | sed -n 's/.*: build-id \([0-9a-f]*\),.*/\1/p')
if [ -n "$id" ] && ! grep -q "^$id " /dev/sframe_tables; then
	echo "ok 6 its table removed"
else
	echo "not ok 6 its table removed ($id)"
fi
