#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Stacks deeper than the cache page (508 entries), and the cut at
# kernel.unwind_max_frames (default 4095), as each client shows them. TAP, one line a
# check. The frame-pointer demo (unwind_demo: main -> run -> level x DEPTH
# -> leaf -> read) at depth 8 and 3000:
#
#  - ftrace (userstacktrace_delay on sys_enter_read): an event keeps the
#    innermost frames and counts the others in dropped; nr + dropped at
#    depth 3000 is exactly 2992 more than at depth 8, and not marked; with
#    the bound at 1000 the event says "at least ... more frames (cut at
#    unwind_max_frames)", nr + dropped is 1001 (the bound, and one
#    for the frames never walked), truncated=1 in its format;
#  - perf record --call-graph fp,defer: the samples in read() have exactly
#    3000 level frames and end in the same outermost frame as at depth 8;
#    with the bound at 1000 exactly 1000 user frames;
#  - unwindprof: its top stack has 3000 level frames and no [truncated]
#    frame; with the bound at 1000 it shows [truncated] as its outermost
#    frame, then the 999 levels below leaf.
. /tests/eh_lib.sh
U=/tests/bin/unwindprof
DEMO=/tests/bin/unwind_demo
MAXF=/proc/sys/kernel/unwind_max_frames
T=/sys/kernel/tracing
echo "1..7"
# Each walk of 3000 frames takes a millisecond or so under TCG, and runs
# on the task's CPU time, which draws the next sample: one sample per 4 ms
# (16 ms on the debug kernel's KASAN), 2000 reads of 1 MiB.
PERIOD=4000000 FREQ=250
if grep -q ' kasan_report$' /proc/kallsyms 2>/dev/null; then
	PERIOD=16000000 FREQ=62
fi
old_max=$(cat $MAXF)
trap 'echo "$old_max" >$MAXF' EXIT

# ftrace_run DEPTH: one read() of the demo at DEPTH levels, recorded in an
# instance with userstacktrace_delay; prints "NR DROPPED TRUNCATED-TEXT"
# of the first stack of the demo's read, from the instance's trace.
I=$T/instances/deep
mkdir $I 2>/dev/null
ftrace_run() {
	echo 0 >$I/tracing_on
	echo >$I/trace
	echo 1 >$I/options/userstacktrace_delay
	echo 1 >$I/events/syscalls/sys_enter_read/enable
	# Only the demo: the shell writes its own pid, then becomes the demo.
	sh -c "echo \$\$ >$I/set_event_pid; echo 1 >$I/tracing_on;
		exec $DEMO -d $1 -n 1 -s 4096 >/dev/null"
	echo 0 >$I/tracing_on
	echo 0 >$I/events/syscalls/sys_enter_read/enable
	echo >$I/set_event_pid
	awk '
	/<user unwind stack>/ { if (on) exit; on = 1; next }
	on && / => 0x/ { nr++; next }
	on && / => \.\.\. / {
		dropped = ($3 == "at") ? $5 : $3
		cut = ($3 == "at") ? "cut" : "-"
		next
	}
	on { exit }
	END { printf "%d %d %s\n", nr, dropped, cut ? cut : "-" }' $I/trace
}
set -- $(ftrace_run 8)
t8=$(($1 + $2)) c8=$3
set -- $(ftrace_run 3000)
t3000=$(($1 + $2)) c3000=$3
echo "# ftrace: depth 8, $t8 frames ($c8); depth 3000, $t3000 frames ($c3000), $1 in the event"
result "$([ "$t8" -gt 10 ] && [ $((t3000 - t8)) = 2992 ] &&
	 [ "$c8" = - ] && [ "$c3000" = - ] && echo 1)" \
	"ftrace: 3000 levels at the default bound ($old_max), whole: nr + dropped 2992 more than at 8 levels"
echo 1000 >$MAXF
set -- $(ftrace_run 3000)
echo "# ftrace, bound 1000: nr $1, dropped $2 ($3)"
grep -m1 ' => \.\.\. ' $I/trace | sed 's/^/# /'
result "$([ $(($1 + $2)) = 1001 ] && [ "$3" = cut ] && echo 1)" \
	"ftrace: cut at 1000 and said: nr + dropped = 1001, 'at least ... (cut at unwind_max_frames)'"
grep -q 'field:unsigned int truncated;' $T/events/ftrace/user_unwind_stack/format
result "$([ $? = 0 ] && echo 1)" "ftrace: the event's format has the truncated field"
rmdir $I
echo "$old_max" >$MAXF

# perf_run DEPTH TAG: the demo's read() samples, one line each: the number
# of level frames, the number of user frames, the outermost frame.
perf_run() {
	$P record -N --call-graph fp,defer -e cpu-clock -c $PERIOD \
		-o /tmp/deep-$2.data -- $DEMO -d $1 -n 2000 -s 1048576 \
		>/tmp/deep-$2.out 2>&1
	$P script --max-stack 8192 -i /tmp/deep-$2.data -F comm,ip,sym 2>/dev/null |
	awk '
	function flush() {
		if (mine && rd)
			print lv, u, last
		mine = 0
	}
	/^[^ \t]/ { flush(); mine = ($1 == "unwind_demo"); rd = 0; lv = 0; u = 0; next }
	/^$/ { flush(); next }
	mine && $1 ~ /^ffff/ { if ($2 ~ /read_zero|iov_iter_zero/) rd = 1; next }
	mine { u++; last = $2; if ($2 == "level") lv++ }
	END { flush() }' >/tmp/deep-$2.chains
}
perf_run 8 p8
out8=$(awk '{ print $3 }' /tmp/deep-p8.chains | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
perf_run 3000 p3000
set -- $(awk -v o="$out8" '{ t++ } $1 == 3000 && $3 == o { m++ } END { printf "%d %d", m, t }' /tmp/deep-p3000.chains)
echo "# perf: depth 3000, $1 of $2 read() samples with 3000 levels to $out8"
result "$([ "$2" -ge 10 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ] && echo 1)" \
	"perf fp,defer: 3000 levels, >= 95% of read() samples whole to the outermost frame"
echo 1000 >$MAXF
perf_run 3000 p1000
set -- $(awk '{ t++ } $2 == 1000 { m++ } END { printf "%d %d", m, t }' /tmp/deep-p1000.chains)
echo "# perf, bound 1000: $1 of $2 read() samples with exactly 1000 user frames"
result "$([ "$2" -ge 10 ] && [ "$1" = "$2" ] && echo 1)" \
	"perf fp,defer: bound 1000, every read() sample exactly 1000 user frames"
echo "$old_max" >$MAXF

# up_run TAG: unwindprof's folded stacks of the demo at depth 3000; prints
# the level count and the outermost user frame of its top stack.
up_run() {
	$U -F $FREQ -o /tmp/deep-$1.txt -- $DEMO -d 3000 -n 2000 -s 1048576 \
		>/tmp/deep-$1.out 2>&1
	sort -t ' ' -k 2 -rn /tmp/deep-$1.txt 2>/dev/null | awk '
	$1 ~ /^unwind_demo;/ {
		k = split($1, f, ";")
		for (i = 2; i <= k; i++)
			if (f[i] == "level")
				lv++
		print lv, f[2]
		exit
	}'
}
if [ -x $U ]; then
	set -- $(up_run u4096)
	echo "# unwindprof: top stack $1 levels, outermost $2"
	result "$([ "$1" = 3000 ] && [ "$2" != "[truncated]" ] && echo 1)" \
		"unwindprof: 3000 levels whole, no [truncated] frame"
	echo 1000 >$MAXF
	set -- $(up_run u1000)
	echo "# unwindprof, bound 1000: top stack $1 levels, outermost $2"
	result "$([ "$2" = "[truncated]" ] && [ "$1" = 999 ] && echo 1)" \
		"unwindprof: bound 1000, the cut shown as a [truncated] frame"
else
	echo "ok 6 # SKIP no $U"
	echo "ok 7 # SKIP no $U"
fi
echo "$old_max" >$MAXF
