#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Main job: profile the demo (main -> run -> level x8 -> leaf -> read())
# with perf's three ways of getting user stacks, and show what each costs.
P=/tests/perf/perf
# perf may run addr2line, which the initramfs does not have.
trap "" PIPE
export HOME=/tmp PATH=/tests/perf:$PATH
DEMO="unwind_demo -d 8 -n 200 -s 1048576"
# No SFrame tables until the part that loads them: perf record would load
# them itself with fp,defer, and they stay loaded.
REC_OPTS=--no-sframe-tables

. /tests/perf_bytes.sh

# record_modes DEMO TAG: the three modes on DEMO; the files are
# /tmp/perf-MODE-TAG.data, the summary lines go to /tmp/perf-summary-TAG.
record_modes() {
	demo=$1
	tag=$2
	comm=$(echo "${demo%% *}" | cut -c1-15)
	for mode in fp dwarf fp,defer; do
	f=/tmp/perf-$(echo $mode | tr , -)-$tag.data
	echo
	echo "######## perf record --call-graph $mode -e cpu-clock -c 100000 -- $demo"
	$P record -q -N --call-graph $mode -e cpu-clock -c 100000 $REC_OPTS -o $f -- $demo 2>&1
	set -- $(perf_bytes $P $f)
	b=$(($3 + $4))
	echo "$mode: $1 samples, $2 deferred callchain records," \
	     "$b bytes of them: $((b / ($1 ? $1 : 1))) bytes per sample;" \
	     "perf.data $(wc -c < $f) bytes"
	# Complete: a sample inside read() whose user part reaches main().
	c=$($P script --no-inline -i $f -F comm,tid,time,ip,sym 2>/dev/null |
		awk -v comm=$comm '$1 == comm { s = ""; mine = 1; next }
		     /^[^\t ]/ { mine = 0 }
		     /^$/ { if (mine && s ~ /read_zero|iov_iter_zero/) { n++; if (s ~ / main\n/) ok++ }; s = ""; mine = 0; next }
		     { s = s $0 "\n" }
		     END { printf "%d %d", ok, n }')
	echo "$mode $1 $2 $b $(wc -c < $f) $c" >> /tmp/perf-summary-$tag
	echo "-- perf script: one sample taken inside read()"
	$P script --no-inline -i $f -F comm,tid,time,ip,sym 2>/dev/null |
		awk -v comm=$comm '$1 == comm { n = 0; s = $0 "\n"; next }
		     /^$/ { if (s ~ /read_zero|iov_iter_zero/ && s ~ /leaf/ && !done) { printf "%s", s; done = 1 }; s = ""; next }
		     { s = s $0 "\n" }'
	done
}

# summary TAG: one line per mode.
summary() {
	printf '%-10s %8s %9s %12s %10s %12s %16s\n' mode samples deferred bytes \
		bytes/smp perf.data "complete stacks"
	while read -r mode s d b size ok n; do
		printf '%-10s %8d %9d %12d %10d %12d %9d of %-4d\n' $mode $s $d $b \
			$((b / (s ? s : 1))) $size $ok $n
	done < /tmp/perf-summary-$1
}

record_modes "$DEMO" fp

echo
echo "######## perf report --stdio --no-children, --call-graph fp,defer (top)"
$P report --no-inline -i /tmp/perf-fp-defer-fp.data --stdio --no-children --percent-limit 5 \
	-g caller 2>/dev/null | grep -v '^$' | head -45

echo
echo "######## summary: bytes written per sample (samples + deferred records)"
summary fp

# Why this exists: the same demo as GCC builds it at -O2, without frame
# pointers, with an SFrame section. Only a walk that may fault can read it.
echo
echo "################ the same demo built without frame pointers, with SFrame"
echo "################ (gcc -O2 -fomit-frame-pointer -Wa,--gsframe)"
record_modes "unwind_demo_sframe -d 8 -n 200 -s 1048576" sframe
echo
echo "######## summary, no frame pointers: bytes per sample, and the samples"
echo "######## inside read() whose user stack reaches main()"
summary sframe

# The same program reading through glibc's read(), which has neither frame
# pointers nor SFrame in Debian 12 (libc.a's code, linked into the static
# program). Without a table, no frame-pointer or SFrame walk gets past it.
echo
echo "################ the same, with read() through glibc's wrapper (unwind_demo_sframe -l)"
echo "################ and no table loaded (perf record --no-sframe-tables)"
record_modes "unwind_demo_sframe -l -d 8 -n 200 -s 1048576" libc >/dev/null 2>&1
echo "######## summary, no frame pointers, read() through glibc, no table"
summary libc

# With the table eh2sframe makes from the file's .eh_frame (perf record
# loads it itself; here it is loaded first, to show what it is).
echo
echo "################ eh2sframe --load --needed /tests/bin/unwind_demo_sframe /bin/bash"
/tests/bin/eh2sframe --load --needed /tests/bin/unwind_demo_sframe /bin/bash 2>&1
echo "######## cat /dev/sframe_tables (build-id, bytes, mappings using it)"
cat /dev/sframe_tables
echo
echo "################ read() through glibc's wrapper, with the program's table"
record_modes "unwind_demo_sframe -l -d 8 -n 200 -s 1048576" libctable >/dev/null 2>&1
echo "######## summary, no frame pointers, read() through glibc, with its table"
summary libctable

# A stock Debian program: bash (no frame pointers, no SFrame, stripped: its
# main() has no symbol, so "complete" is a user stack that reaches libc's
# __libc_start_main), recursing 10 shell calls deep (about 90 frames
# with the arithmetic's recursion, within perf's 127 a stack), then counting.
BASH_JOB='f() { if [ "$1" -gt 0 ]; then f $(($1 - 1)); else i=0; while [ $i -lt 10000 ]; do i=$((i + 1)); done; fi; }; f 10'
echo
echo "################ Debian 12's /bin/bash -c 'f() { ... f \$((\$1 - 1)) ... }; f 10'"
printf '%-10s %8s %9s %12s %10s %12s %16s\n' mode samples deferred bytes \
	bytes/smp perf.data "complete stacks"
for mode in fp dwarf fp,defer; do
	f=/tmp/perf-bash-$(echo $mode | tr , -).data
	$P record -q -N --call-graph $mode -e cpu-clock -c 400000 -o $f \
		-- /bin/bash -c "$BASH_JOB" >/dev/null 2>&1
	set -- $(perf_bytes $P $f)
	b=$(($3 + $4))
	c=$($P script --no-inline -i $f -F comm,ip,sym 2>/dev/null |
		awk '/^[^ \t]/ { if (mine) { n++; if (s ~ / __libc_start_main/) ok++ }
			     mine = ($1 == "bash"); s = ""; next }
		     { s = s " " $2 }
		     END { if (mine) { n++; if (s ~ / __libc_start_main/) ok++ }
			   printf "%d %d", ok, n }')
	printf '%-10s %8d %9d %12d %10d %12d %9d of %-4d\n' $mode $1 $2 $b \
		$((b / ($1 ? $1 : 1))) $(wc -c < $f) $c
done
for id in $(awk '{ print $1 }' /dev/sframe_tables); do
	echo "remove $id" > /dev/sframe_tables
done
