#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The series' perf tool tests: the merge unit test (no kernel needed)
# through the patched tree's own "perf test", the fp,defer shell tests and
# perf top with fp,defer.
# Each result becomes a TAP line; a skip counts as a failure here, as
# everything the tests need is in the initramfs.
#
# The shell test runs directly, as perf test runs it (bash, perf in PATH):
# in this initramfs "perf test" lists it but runs no shell test, for a
# reason not found yet.
P=/tests/perf/perf
export HOME=/tmp UNWIND_DEMO=/tests/bin/unwind_demo PATH=/tests/perf:$PATH
# Six merge cases; -v shows why one failed, as comments on the console.
$P test -v "Deferred callchain:" >/tmp/perf-tests.out 2>&1
sed 's/^/# /' /tmp/perf-tests.out
bash /tests/perf/tests/shell/record_defer.sh >/tmp/perf-shell.out 2>&1
rc=$?
sed 's/^/# /' /tmp/perf-shell.out
case $rc in
0) r=Ok ;;
2) r=Skip ;;
*) r="FAILED!" ;;
esac
echo " 71: perf record --call-graph fp,defer tests : $r" >>/tmp/perf-tests.out
# The thread context's join, in perf script and perf report --span.
bash /tests/perf/tests/shell/record_defer_context.sh >/tmp/perf-shell-ctx.out 2>&1
rc=$?
sed 's/^/# /' /tmp/perf-shell-ctx.out
case $rc in
0) r=Ok ;;
2) r=Skip ;;
*) r="FAILED!" ;;
esac
echo " 73: perf script and report join a thread's context to its deferred callchains : $r" \
	>>/tmp/perf-tests.out

# perf top --call-graph fp,defer on the running demo: top holds each sample
# until the deferred record of its thread comes, so the chains it shows
# under read() must go on with the demo's user frames, innermost first:
# [full] leaf level x4 run main (a sample on the way back to user space,
# after the record was written, too: it has the record's cookie). Folded
# chains, one a line; the run is bounded by timeout (SIGINT ends perf top),
# and stdin is a FIFO that nobody writes, as perf top reads keys from it.
top_ok=Ok
$UNWIND_DEMO -d 4 -n 100000000 -s 1048576 >/dev/null &
dpid=$!
mkfifo /tmp/perf-top.in
exec 3<>/tmp/perf-top.in
COLUMNS=1000 LINES=1000 timeout -s INT 15 $P top -v -p $dpid --stdio -d 1 \
	-e cpu-clock -c 100000 --call-graph fp,defer,folded --no-children \
	<&3 >/tmp/perf-top.out 2>/tmp/perf-top.err
exec 3<&-
kill $dpid
wait $dpid
sed 's/^/# /' /tmp/perf-top.err
grep -q "^deferred callchains: [1-9][0-9]* samples merged" /tmp/perf-top.err ||
	top_ok="FAILED!"
grep -a -E "[ ;]ksys_read;.*;entry_SYSCALL_64_after_hwframe" /tmp/perf-top.out | awk '
	{
		user = $0
		sub(/.*;entry_SYSCALL_64_after_hwframe/, "", user)
		sub(/^;full;/, ";", user)
		if (user ~ /^;leaf;level;level;level;level;run;main(;|$)/)
			good++
		else {
			print "# unexpected chain: " $0
			bad++
		}
	}
	END {
		printf "# perf top: %d chains under read() with the demo frames, %d without\n", good, bad
		exit bad || !good
	}' || top_ok="FAILED!"
echo " 72: perf top --call-graph fp,defer shows the deferred user frames : $top_ok" \
	>>/tmp/perf-tests.out
# Final result lines look like " 63.1: Name    : Ok".
# A long name leaves no blank before the result's colon.
grep -E '^ *[0-9]+(\.[0-9]+)?: .* ?: (Ok|FAILED!|Skip.*)$' /tmp/perf-tests.out \
	> /tmp/perf-tests.res
echo "TAP version 13"
echo "1..9"
n=0
while IFS= read -r line; do
	n=$((n + 1))
	name=$(echo "$line" | sed -E 's/^ *[0-9.]+: (.*[^ ]) *: [^:]*$/\1/')
	case $line in
	*": Ok") echo "ok $n - $name" ;;
	*) echo "not ok $n - $name # ${line##*: }" ;;
	esac
done < /tmp/perf-tests.res
