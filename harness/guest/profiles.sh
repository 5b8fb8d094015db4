#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The profiles behind the main job's flame graphs (harness/flamegraph.py):
# code built without frame pointers, with the SFrame tables eh2sframe makes
# from its .eh_frame, profiled with --call-graph fp, dwarf and fp,defer:
#  - the no-FP demo (main -> run -> level x8 -> leaf) reading through
#    glibc's read() (static, libc.a's code has no frame pointers);
#  - Debian 12's own /bin/bash running a shell function 10 calls deep.
# Each recording's stacks go to the console in collapsed form (FOLD=1). Run
# by the main job after main_perf.sh, and by the test job, where its TAP
# lines check what the host's report and browser check build on.
P=/tests/perf/perf
trap "" PIPE
export HOME=/tmp PATH=/tests/perf:$PATH
FOLD=1
REC_OPTS=--no-sframe-tables

. /tests/perf_modes.sh

. /tests/tap.sh

# shown FILE: what the host reads of a part run quietly: its summary lines
# and folded stacks.
shown() {
	sed -n -e '/^=== SUMMARY /p' -e '/^=== FOLDED [^E]/,/^=== FOLDED END/p' "$1"
}

# folded_total TAG MODE: the samples the folded stacks of one recording add
# up to; each must be counted once, or the flame graph misstates it.
folded_total() {
	awk -v want="=== FOLDED $1 $2" '
		$0 == want { on = 1; next }
		/^=== FOLDED END/ { on = 0 }
		on { s += $NF }
		END { print s + 0 }' /tmp/profiles.out
}

# summary_field TAG MODE N: field N of the recording's summary line (5:
# samples, 9: complete stacks, 10: the stacks that could be).
summary_field() {
	awk -v tag=$1 -v mode=$2 -v n=$3 \
		'$2 == "SUMMARY" && $3 == tag && $4 == mode { print $n }' /tmp/profiles.out
}

: > /tmp/profiles.out
echo "TAP version 13"
echo "1..5"
# With the table eh2sframe makes from the file's .eh_frame (perf record
# loads it itself; here it is loaded first, to show what it is).
echo "# eh2sframe --load --needed /tests/bin/unwind_demo_sframe /bin/bash"
/tests/bin/eh2sframe --load --needed /tests/bin/unwind_demo_sframe /bin/bash 2>&1 |
	sed 's/^/# /'
echo "# cat /dev/sframe_tables (build-id, bytes, mappings using it)"
sed 's/^/# /' /dev/sframe_tables
check "tables loaded for the demo and for bash, ld.so, libtinfo, libc" \
	[ "$(wc -l < /dev/sframe_tables)" -ge 5 ]

record_modes "unwind_demo_sframe -l -d 8 -n 200 -s 1048576" demo >/tmp/demo.out 2>&1
shown /tmp/demo.out | tee -a /tmp/profiles.out
echo "######## summary, no frame pointers, read() through glibc, with its table"
summary demo

# A stock Debian program: bash (no frame pointers, no SFrame, stripped: its
# main() has no symbol, so "complete" is a user stack that reaches libc's
# __libc_start_main), recursing 10 shell calls deep (about 90 frames
# with the arithmetic's recursion, within perf's 127 a stack), then counting.
BASH_JOB='f() { if [ "$1" -gt 0 ]; then f $(($1 - 1)); else i=0; while [ $i -lt 10000 ]; do i=$((i + 1)); done; fi; }; f 10'
# One sample per 1.6 ms of CPU; on a KASAN kernel (the debug kernel) one
# per 6.4 ms. The sample's deferred walk of bash's 90 frames runs on the
# way back to user space, on the clock that draws the next sample: where
# the walk takes a good part of the period, each walk brings the next
# sample sooner, and the count grows without bound as the host gets busier
# and the guest slower. At 400 us the test kernel took about 2000 fp,defer
# samples on a quiet host, 4991 beside another boot and 23068 in a CI run
# (12 of that boot's 19 minutes to record and fold); the debug kernel,
# whose walk took about 400 us, 44580.
BASH_PERIOD=1600000
! grep -q ' kasan_report$' /proc/kallsyms 2>/dev/null || BASH_PERIOD=6400000
for mode in fp dwarf fp,defer; do
	f=/tmp/perf-bash-$(echo $mode | tr , -).data
	$P record -q -N --call-graph $mode -e cpu-clock -c $BASH_PERIOD -o $f \
		-- /bin/bash -c "$BASH_JOB" >/dev/null 2>&1
	set -- $(perf_bytes $P $f)
	b=$(($3 + $4))
	$P script --no-inline -i $f -F comm,tid,time,ip,sym >$f.txt 2>/dev/null
	c=$(awk '/^[^ \t]/ { if (mine) { n++; if (s ~ / __libc_start_main/) ok++ }
			     mine = ($1 == "bash"); s = ""; next }
		     { s = s " " $2 }
		     END { if (mine) { n++; if (s ~ / __libc_start_main/) ok++ }
			   printf "%d %d", ok, n }' $f.txt)
	echo "$mode $1 $2 $b $(wc -c < $f) $c" >> /tmp/perf-summary-bash
	fold_out $f bash $mode "$1 $2 $b $(wc -c < $f) $c" | tee -a /tmp/profiles.out
done
echo
echo "######## Debian 12's /bin/bash -c 'f() { ... f \$((\$1 - 1)) ... }; f 10', with tables"
echo "######## (complete: the user stack reaches __libc_start_main)"
summary bash
for id in $(awk '{ print $1 }' /dev/sframe_tables); do
	echo "remove $id" > /dev/sframe_tables
done

bad=
for tag in demo bash; do
	for mode in fp dwarf fp,defer; do
		s=$(summary_field $tag $mode 5)
		t=$(folded_total $tag $mode)
		[ "$s" -gt 0 ] && [ "$s" = "$t" ] ||
			bad="$bad $tag/$mode: $s samples, folded $t;"
	done
done
check "every recording folded, each sample once${bad:+ #$bad}" [ -z "$bad" ]
# What the flame graphs show: fp,defer completes the stacks that fp cuts
# (at least 95% of the demo's samples in read() and 90% of bash's reach
# the bottom, as in eh_tables and the README's table), and fp completes
# none of the demo's. Not bash's: a sample taken in __libc_start_main
# itself "reaches" it with no walk at all (one of 1183 did, once).
# most() OK ALL PERCENT: true when OK is at least PERCENT% of ALL, ALL > 0.
most() {
	[ "${2:-0}" -gt 0 ] && [ $(($1 * 100)) -ge $(($2 * $3)) ]
}
ok=$(summary_field demo fp,defer 9)
all=$(summary_field demo fp,defer 10)
check "demo fp,defer: $ok of $all stacks in read() reach main()" most "$ok" "$all" 95
# bash's share is judged among the workload's own samples: bash's samples
# with a user part. A sample with none was taken where bash had no user
# stack to give (execve() before its first instruction, exit()): how many
# there are says nothing of the walk, and the summary above (and the
# flame graph) still counts them. Below BASH_FLOOR such samples the share
# means little (a guest whose clock fell back to jiffies samples every
# 4 ms, not every 400 us): the check says so, as a skip, and does not judge.
BASH_FLOOR=100
set -- $(awk '
	function flush() { if (mine && user) { n++; if (s ~ / __libc_start_main/) ok++ } }
	/^[^ \t]/ { flush(); mine = ($1 == "bash"); s = ""; user = 0; next }
	NF == 0 { next }
	{ s = s " " $2; if (length($1) != 16 || $1 !~ /^ffff/) user = 1 }
	END { flush(); printf "%d %d", ok, n }' /tmp/perf-bash-fp-defer.data.txt)
ok=${1:-0} own=${2:-0}
all=$(summary_field bash fp,defer 10)
if [ "$own" -lt "$BASH_FLOOR" ]; then
	skip "bash fp,defer: stacks reach __libc_start_main" \
		"too few samples to judge: $own of bash's $all with a user part, $BASH_FLOOR needed"
else
	check "bash fp,defer: $ok of $own stacks with a user part reach __libc_start_main ($((all - own)) of $all without one left out)" \
		most "$ok" "$own" 90
fi
cut=$(summary_field demo fp 9)
check "demo fp: no stack in read() reaches main() ($cut)" [ "$cut" = 0 ]
