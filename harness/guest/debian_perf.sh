#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# No regression for existing tools: Debian's perf (linux-perf, the 6.1
# tool, which knows nothing of deferred callchains) records and reports
# ordinary -g callchains on this kernel, and shows a thread's context event
# (unwind:unwind_user_context) as an ordinary line with its cookie. TAP
# output for the harness.
P=/tests/debian/perf
D=/tmp/debian-perf.data
export HOME=/tmp
. /tests/tap.sh
echo "TAP version 13"
echo "1..5"
$P record -q -N -g -e cpu-clock -c 100000 -o $D -- \
	unwind_demo -d 4 -n 200 -s 1048576 >/tmp/dp-record.out 2>&1
check "record -g" [ $? = 0 ]
$P script -i $D -F comm,ip,sym >/tmp/dp-script.out 2>/tmp/dp-script.err
$P report -i $D --stdio --no-children -G >/tmp/dp-report.out 2>/tmp/dp-report.err
# One sample of the demo, kernel frames first, must show the exact user
# chain under the system call: leaf, level x4, run, main.
check "script shows kernel then user frames" awk '
	/^unwind_demo/ { k = 0; u = ""; next }
	/^$/ { if (k && u ~ /^ leaf level level level level run main/) found = 1; next }
	$1 ~ /^ffffffff/ { if ($2 ~ /^(read_zero|iov_iter_zero|vfs_read)$/) k = 1; next }
	{ u = u " " $2 }
	END { exit !found }' /tmp/dp-script.out
check "report resolves user symbols" grep -q "leaf" /tmp/dp-report.out
check "report resolves kernel symbols" grep -Eq "read_zero|iov_iter_zero|vfs_read" /tmp/dp-report.out
# The context event: ftrace's userstacktrace_delay on a getppid event asks
# for the deferred stacks, so that the kernel reads unwind_demo --context's
# record with each of its 4 calls; the old perf records the event by name
# and prints it from its format file.
T=/sys/kernel/tracing
if [ ! -d $T/events/unwind/unwind_user_context ]; then
	# The base kernel (base_perf.sh runs this file there too).
	skip "script prints the context event" "kernel without it"
else
	echo 1 > $T/options/userstacktrace_delay
	echo 1 > $T/events/syscalls/sys_enter_getppid/enable
	$P record -q -e unwind:unwind_user_context -o $D.ctx -- unwind_demo --context 4 \
		>>/tmp/dp-record.out 2>&1
	echo 0 > $T/events/syscalls/sys_enter_getppid/enable
	echo 0 > $T/options/userstacktrace_delay
	echo > $T/trace
	$P script -i $D.ctx >/tmp/dp-ctx.out 2>>/tmp/dp-script.err
	check "script prints the context event, 4 calls, cookies and IDs" awk '
		/unwind_user_context:/ {
			n++
			if (!match($0, /cookie=0x[0-9a-f]+/)) bad = 1
			c[substr($0, RSTART, RLENGTH)]++
			if (n < 4 && $0 !~ sprintf("status=ok trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=%016x flags=0x01 attrs=0103616263", n)) bad = 1
			if (n == 4 && $0 !~ /status=invalid/) bad = 1
		}
		END { for (k in c) m++; exit bad || n != 4 || m != 4 }' /tmp/dp-ctx.out
	sed -n '/unwind_user_context/s/^/# /p' /tmp/dp-ctx.out | head -4
fi
for f in /tmp/dp-record.out /tmp/dp-script.err /tmp/dp-report.err; do
	sed 's/^/# /' $f
done
# A sample in read(), to see what went wrong if anything did.
grep -m1 -B3 -A12 read_zero /tmp/dp-script.out | sed 's/^/# /'
