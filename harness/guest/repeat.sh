#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# repeat.sh RUNS LOAD CMD...: run a TAP program RUNS times, with LOAD busy
# loops competing for the CPUs (races show on a loaded host), and report
# per test number how many runs failed it. TAP: one line per test number
# that any run reported, "ok" when no run failed it; a failing run's lines
# are kept in /tmp/repeat-RUN.out and its "not ok" lines shown.
runs=$1 load=$2
shift 2
# unwind.repeat=N on the kernel command line overrides RUNS.
r=$(sed -n 's/.*unwind\.repeat=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -z "$r" ] || runs=$r
i=0
while [ $i -lt "$load" ]; do
	sh -c 'while :; do :; done' &
	i=$((i + 1))
done
: >/tmp/repeat-all
r=1
while [ $r -le "$runs" ]; do
	"$@" >/tmp/repeat-$r.out 2>&1
	grep -E '^(not )?ok [0-9]+' /tmp/repeat-$r.out |
		sed -E 's/^(not ok|ok) ([0-9]+) .*/\2 \1/' >>/tmp/repeat-all
	grep '^not ok' /tmp/repeat-$r.out | sed "s/^/# run $r: /"
	r=$((r + 1))
done
kill $(jobs -p) 2>/dev/null
wait 2>/dev/null
n=$(awk '{ print $1 }' /tmp/repeat-all | sort -n | tail -n 1)
echo "1..${n:-0}"
awk -v runs="$runs" '
	{ seen[$1]++; if ($2 == "not") bad[$1]++ }
	END {
		for (t = 1; t in seen; t++)
			printf "%s %d test %d: failed in %d of %d runs (%d reported)\n",
			       bad[t] ? "not ok" : "ok", t, t, bad[t] + 0, runs, seen[t]
	}' /tmp/repeat-all
