#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Main job: profile the demo (main -> run -> level x8 -> leaf -> read())
# with perf's three ways of getting user stacks, and show what each costs.
P=/tests/perf/perf
# perf may run addr2line, which the initramfs does not have.
trap "" PIPE
export HOME=/tmp PATH=/tests/perf:$PATH
DEMO="unwind_demo -d 8 -n 200 -s 1048576"

. /tests/perf_bytes.sh

for mode in fp dwarf fp,defer; do
	f=/tmp/perf-$(echo $mode | tr , -).data
	echo
	echo "######## perf record --call-graph $mode -e cpu-clock -c 100000 -- $DEMO"
	$P record -q -N --call-graph $mode -e cpu-clock -c 100000 -o $f -- $DEMO 2>&1
	set -- $(perf_bytes $P $f)
	b=$(($3 + $4))
	echo "$mode: $1 samples, $2 deferred callchain records," \
	     "$b bytes of them: $((b / ($1 ? $1 : 1))) bytes per sample;" \
	     "perf.data $(wc -c < $f) bytes"
	echo "$mode $1 $2 $b $(wc -c < $f)" >> /tmp/perf-summary
	echo "-- perf script: one sample taken inside read()"
	$P script --no-inline -i $f -F comm,tid,time,ip,sym 2>/dev/null |
		awk '/^unwind_demo/ { n = 0; s = $0 "\n"; next }
		     /^$/ { if (s ~ /read_zero|iov_iter_zero/ && s ~ /leaf/ && !done) { printf "%s", s; done = 1 }; s = ""; next }
		     { s = s $0 "\n" }'
done

echo
echo "######## perf report --stdio --no-children, --call-graph fp,defer (top)"
$P report --no-inline -i /tmp/perf-fp-defer.data --stdio --no-children --percent-limit 5 \
	-g caller 2>/dev/null | grep -v '^$' | head -45

echo
echo "######## summary: bytes written per sample (samples + deferred records)"
printf '%-10s %8s %9s %12s %10s %12s\n' mode samples deferred bytes bytes/smp perf.data
while read -r mode s d b size; do
	printf '%-10s %8d %9d %12d %10d %12d\n' $mode $s $d $b $((b / (s ? s : 1))) $size
done < /tmp/perf-summary
