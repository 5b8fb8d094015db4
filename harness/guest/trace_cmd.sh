#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Debian's trace-cmd reads what userstacktrace_delay records: the two new
# events parse (through their format files) and their fields print, with
# every getppid event's cookie answered by one stack with the same cookie;
# and a thread's context event (unwind:unwind_user_context), an ordinary
# line to a tool that does not know it, with the same cookie.
T=/tests/debian/trace-cmd
export HOME=/tmp
N=5
echo "TAP version 13"
echo "1..4"
cd /tmp
# start, run, stop, extract: the buffers are read after the demo is done,
# by one process. "trace-cmd record" copies them with a recorder process
# per CPU while the command runs, and 3.1.6 can lose a CPU's data when a
# short command ends before that recorder has read it: a run once had no
# event at all, not even sys_enter_getppid.
$T start -O userstacktrace_delay -e syscalls:sys_enter_getppid >/tmp/tc-record.out 2>&1 &&
	unwind_demo --getppid $N >/dev/null &&
	$T stop >>/tmp/tc-record.out 2>&1 &&
	$T extract -o /tmp/tc.dat >>/tmp/tc-record.out 2>&1
rc=$?
sed 's/^/# /' /tmp/tc-record.out
$T reset >/dev/null 2>&1
echo 0 > /sys/kernel/tracing/options/userstacktrace_delay
[ $rc = 0 ] && echo "ok 1 - trace-cmd start -O userstacktrace_delay, stop, extract" ||
	echo "not ok 1 - trace-cmd start -O userstacktrace_delay, stop, extract"
$T report -i /tmp/tc.dat >/tmp/tc-report.out 2>&1
grep -E 'user_unwind_cookie|user_unwind_stack|sys_enter_getppid' /tmp/tc-report.out |
	head -12 | sed 's/^/# /'
# Parse errors show as "[FAILED TO PARSE]" or an unknown event.
if grep -q 'user_unwind_cookie:.*cookie=0x[0-9a-f]' /tmp/tc-report.out &&
   grep -q 'user_unwind_stack:.*cookie=0x[0-9a-f].*nr=[1-9].*frames=' /tmp/tc-report.out &&
   ! grep -qi 'failed to parse\|unknown event' /tmp/tc-report.out; then
	echo "ok 2 - trace-cmd report parses and prints both events"
else
	echo "not ok 2 - trace-cmd report parses and prints both events"
fi
# The demo's N getppid events: N cookies, each with exactly one stack.
awk -v N=$N '
	/unwind_demo/ && /sys_enter_getppid/ { ev++ }
	/unwind_demo/ && /user_unwind_cookie:/ { match($0, /cookie=0x[0-9a-f]+/); req[substr($0, RSTART, RLENGTH)]++ }
	/unwind_demo/ && /user_unwind_stack:/ { match($0, /cookie=0x[0-9a-f]+/); stk[substr($0, RSTART, RLENGTH)]++ }
	END {
		for (c in req) { n++; if (req[c] != 1 || stk[c] != 1) bad = 1 }
		for (c in stk) if (!(c in req)) bad = 1
		printf "# %d events, %d cookies\n", ev, n
		exit bad || ev != N || n != N
	}' /tmp/tc-report.out &&
	echo "ok 3 - every event's cookie has one stack with the same cookie" ||
	echo "not ok 3 - every event's cookie has one stack with the same cookie"

# The context: unwind_demo --context 4 makes 4 calls, the fourth with its
# record marked invalid; each context line has its call's cookie and IDs.
$T start -O userstacktrace_delay -e syscalls:sys_enter_getppid \
	-e unwind:unwind_user_context >/tmp/tc-ctx.out 2>&1 &&
	unwind_demo --context 4 >/dev/null &&
	$T stop >>/tmp/tc-ctx.out 2>&1 &&
	$T extract -o /tmp/tc-ctx.dat >>/tmp/tc-ctx.out 2>&1 &&
	$T report -i /tmp/tc-ctx.dat >/tmp/tc-ctx-report.out 2>&1
rc=$?
$T reset >/dev/null 2>&1
echo 0 > /sys/kernel/tracing/options/userstacktrace_delay
grep unwind_user_context /tmp/tc-ctx-report.out | head -4 | sed 's/^/# /'
[ $rc = 0 ] && awk '
	/unwind_demo/ && /sys_enter_getppid/ { take = 1; next }
	/unwind_demo/ && /user_unwind_cookie:/ && take { match($0, /cookie=0x[0-9a-f]+/); want = substr($0, RSTART, RLENGTH); take = 0; next }
	/unwind_demo/ && /unwind_user_context:/ {
		n++
		match($0, /cookie=0x[0-9a-f]+/)
		if (substr($0, RSTART, RLENGTH) != want) bad = 1
		want_ctx = n == 4 ? "status=invalid trace_id=0{32} span_id=0{16}" : \
			sprintf("status=ok trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=%016x flags=0x01 attrs=0103616263", n)
		if ($0 !~ want_ctx) bad = 1
	}
	END { exit bad || n != 4 }' /tmp/tc-ctx-report.out &&
	! grep -qi 'failed to parse' /tmp/tc-ctx-report.out &&
	echo "ok 4 - the context event: 4 lines, each with its call's cookie and record" ||
	echo "not ok 4 - the context event: 4 lines, each with its call's cookie and record"
