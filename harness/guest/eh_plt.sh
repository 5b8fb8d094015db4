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
n=0
# check PROG NO_TABLE WITH_TABLE: PROG -n without its table, PROG with it
# (each checks its frames itself and exits 0 when they are as said), and
# its table removed afterwards: three results.
check() {
	prog=$1
	# No table for it yet, whatever ran before.
	$E --remove -q "$prog" >/dev/null 2>&1
	"$prog" -n
	rc=$?
	n=$((n + 1))
	if [ $rc = 0 ]; then echo "ok $n no table: $2"
	else echo "not ok $n no table: status $rc"; fi
	$E --load "$prog" 2>&1 | sed 's/^/# /'
	"$prog"
	rc=$?
	n=$((n + 1))
	if [ $rc = 0 ]; then echo "ok $n with its table: $3"
	else echo "not ok $n with its table: status $rc"; fi
	$E --remove "$prog" 2>&1 | sed 's/^/# /'
	id=$($E "$prog" | sed -n 's/.*: build-id \([0-9a-f]*\),.*/\1/p')
	n=$((n + 1))
	if [ -n "$id" ] && ! grep -q "^$id " /dev/sframe_tables; then
		echo "ok $n its table removed"
	else
		echo "not ok $n its table removed ($id)"
	fi
}
echo "1..6"
check /tests/bin/unwind_plt "the walk does not get past the stub" \
	"stub, caller, main exact"
check /tests/bin/unwind_gap "frame pointers lead to the decoy" \
	"the walk ends where the CFA is in rbx"
