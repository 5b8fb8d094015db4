#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A walk that starts in a PLT stub of a static SFrame program (gas 2.40
# leaves the stubs out of .sframe, ld out of .eh_frame): without a table the
# walk stops at the stub (its frame pointer is 1: no guess gets further);
# with the table eh2sframe makes for the file, the stub's frame is right
# and the walk goes on through the caller into main(). unwind_plt checks
# the exact frames itself (exit 0: as asked). TAP.
E=/tests/bin/eh2sframe
P=/tests/bin/unwind_plt
# No table for it yet, whatever ran before.
$E --remove -q $P >/dev/null 2>&1
echo "1..3"
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
