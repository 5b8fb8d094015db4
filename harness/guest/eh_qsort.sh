#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A program without frame pointers or SFrame, walked from inside its qsort()
# comparator through glibc's sort frames: cut without a table, complete
# with the table eh2sframe makes from its .eh_frame. The frames it prints
# with the table are resolved on the host (parse-console.py checks them as
# unwind_qsort.symbols). TAP.
E=/tests/bin/eh2sframe
Q=/tests/bin/unwind_qsort
# No table for it yet, whatever ran before.
$E --remove -q $Q >/dev/null 2>&1
echo "1..3"
$Q -q
nr=$?
echo "# without a table: $nr frames"
# The comparator's own frame; a frame-pointer guess gets no further.
if [ $nr -le 1 ]; then echo "ok 1 no table: the walk ends in the comparator"
else echo "not ok 1 no table: $nr frames"; fi
$E --load $Q 2>&1 | sed 's/^/# /'
$Q
nr=$?
echo "# with its table: $nr frames"
# cmp, msort_with_tmp x2, __qsort_r, sorter, main, __libc_start_call_main,
# __libc_start_main_impl, _start: the outermost frame ends the walk.
if [ $nr -eq 9 ]; then echo "ok 2 with its table: 9 frames, to _start"
else echo "not ok 2 with its table: $nr frames, want 9"; fi
$E --remove $Q 2>&1 | sed 's/^/# /'
id=$($E $Q | sed -n 's/.*: build-id \([0-9a-f]*\),.*/\1/p')
if [ -n "$id" ] && ! grep -q "^$id " /dev/sframe_tables; then
	echo "ok 3 its table removed"
else
	echo "not ok 3 its table removed ($id)"
fi
