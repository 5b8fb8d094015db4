#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Debian's trace-cmd reads what userstacktrace_delay records: the two new
# events parse (through their format files) and their fields print, with
# every getppid event's cookie answered by one stack with the same cookie.
T=/tests/debian/trace-cmd
export HOME=/tmp
N=5
echo "TAP version 13"
echo "1..3"
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
