# SPDX-License-Identifier: GPL-2.0
# Sourced by main_perf.sh and profiles.sh: record a program with perf's
# three ways of getting user stacks, and show what each costs.
#
# The caller sets P (perf) and REC_OPTS (more record options). Each
# recording prints one "=== SUMMARY TAG MODE ..." line for the host's report
# (harness/flamegraph.py); with FOLD=1 also its stacks, in the collapsed
# form that flame graph tools read, between "=== FOLDED TAG MODE" and
# "=== FOLDED END".

. /tests/perf_bytes.sh

# fold_stacks [FILE]: reads "perf script -F comm,tid,time,ip,sym" output
# and prints one line per distinct stack, "comm;outermost;...;innermost
# COUNT", kernel frames marked "_[k]" as flame graph tools expect. perf
# script prints a sample's frames innermost first, kernel before user (for
# fp,defer the merged stack), so each is put in front of the last.
fold_stacks() {
	awk '
		function flush() {
			if (comm != "")
				count[comm (st == "" ? "" : ";" st)]++
			comm = ""
		}
		/^[^ \t]/ { flush(); comm = $1; st = ""; next }
		/^$/ { flush(); next }
		comm != "" {
			ip = $1
			sub(/^[ \t]*[0-9a-f]+ ?/, "")
			name = $0 == "" ? "[unknown]" : $0
			gsub(/;/, ":", name)
			if (length(ip) == 16 && ip ~ /^ffff/)
				name = name "_[k]"
			st = st == "" ? name : name ";" st
		}
		END { flush(); for (k in count) print k, count[k] }' "$@" | sort
}

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
	$P script --no-inline -i $f -F comm,tid,time,ip,sym >$f.txt 2>/dev/null
	# Complete: a sample inside read() whose user part reaches main().
	c=$(awk -v comm=$comm '$1 == comm { s = ""; mine = 1; next }
		     /^[^\t ]/ { mine = 0 }
		     /^$/ { if (mine && s ~ /read_zero|iov_iter_zero/) { n++; if (s ~ / main\n/) ok++ }; s = ""; mine = 0; next }
		     { s = s $0 "\n" }
		     END { printf "%d %d", ok, n }' $f.txt)
	echo "$mode $1 $2 $b $(wc -c < $f) $c" >> /tmp/perf-summary-$tag
	fold_out $f $tag $mode "$1 $2 $b $(wc -c < $f) $c"
	echo "-- perf script: one sample taken inside read()"
	awk -v comm=$comm '$1 == comm { n = 0; s = $0 "\n"; next }
		     /^$/ { if (s ~ /read_zero|iov_iter_zero/ && s ~ /leaf/ && !done) { printf "%s", s; done = 1 }; s = ""; next }
		     { s = s $0 "\n" }' $f.txt
	done
}

# fold_out FILE TAG MODE "SAMPLES DEFERRED BYTES SIZE COMPLETE OF": the
# recording's summary line for the host's table and, with FOLD=1, its stacks
# (from FILE.txt, its perf script) for the host's flame graphs.
fold_out() {
	echo "=== SUMMARY $2 $3 $4"
	[ "${FOLD:-0}" = 1 ] || return 0
	echo "=== FOLDED $2 $3"
	fold_stacks $1.txt
	echo "=== FOLDED END"
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
