#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A program without frame pointers or SFrame, walked from inside its qsort()
# comparator through glibc's sort frames: cut without a table, complete
# with the table eh2sframe makes from its .eh_frame. The frames it prints
# with the table are resolved on the host (parse-console.py checks them as
# unwind_qsort.symbols). Then the copy that eh2sframe --elf writes, with
# the table as its own section and its program headers moved to a new
# segment: the same walk, with nothing loaded. TAP.
E=/tests/bin/eh2sframe
Q=/tests/bin/unwind_qsort
# No table for it yet, whatever ran before.
$E --remove -q $Q >/dev/null 2>&1
echo "1..4"
$Q -q
nr=$?
echo "# without a table: $nr frames"
# The comparator's own frame; a frame-pointer guess gets no further.
if [ $nr -le 1 ]; then echo "ok 1 no table: the walk ends in the comparator"
else echo "not ok 1 no table: $nr frames"; fi
$E --load $Q 2>&1 | sed 's/^/# /'
$Q >/tmp/qsort-table.out
nr=$?
cat /tmp/qsort-table.out
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

# The copy with its own section: no table loaded, the same frames (the
# program is static and not PIE: the same addresses).
$E --elf /tmp/unwind_qsort.elf $Q 2>&1 | tail -n 1 | sed 's/^/# /'
/tmp/unwind_qsort.elf >/tmp/qsort-elf.out
nr=$?
echo "# its --elf copy, no table: $nr frames"
if [ $nr -eq 9 ] && ! grep -q . /dev/sframe_tables &&
   [ "$(grep '^# frame' /tmp/qsort-elf.out)" = "$(grep '^# frame' /tmp/qsort-table.out)" ]; then
	echo "ok 4 its --elf copy, no table loaded: the same 9 frames"
else
	sed 's/^/# /' /tmp/qsort-elf.out | head -n 12
	echo "not ok 4 its --elf copy, no table loaded: $nr frames, want the same 9"
fi
