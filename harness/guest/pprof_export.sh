#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# pprof export, the guest's part: record otel_service (two workers whose
# requests are OpenTelemetry spans) with --call-graph fp,defer and the
# unwind:unwind_user_context event, and hand the host what it needs to run
# tools/unwind/perf2pprof and compare go tool pprof with perf (the guest has
# no python): harness/pprof-check.sh reads these blocks from the console.
#
#   === PPROF command   the two perf script commands run here (one line
#                       each), for the host to compare with perf2pprof
#                       --print-script-command
#   === PPROF NAME MD5 LINES, then the file gzipped and in base64, then
#   === PPROF end
#
# for NAME in script and chains (those commands' output), buildids (perf
# buildid-list), report (perf report by symbol, with sample counts) and
# span (the same with --span of the busiest checkout request); and for
# hostile-script, hostile-chains and hostile-buildids, the same of a
# recording of pprof_forge, whose thread and symbol names make perf
# script's text read as samples it does not have (review m19). The serial
# console is the only way out of the guest: gzip keeps it short, and the
# MD5 catches a kernel message written into the middle of a block.
P=/tests/perf/perf
trap "" PIPE
export HOME=/tmp PATH=/tests/perf:$PATH
SVC=/tests/bin/otel_service
MS=${MS:-400}
f=/tmp/pprof.data

t0=$(date +%s)
echo "1..2"
$P record -q -N --call-graph fp,defer -e cpu-clock -c 200000 \
	-e unwind:unwind_user_context --no-sframe-tables -o $f -- $SVC $MS 2>&1

# The same commands as tools/unwind/perf2pprof --print-script-command.
cmd="$P script -i $f --header --ns --no-inline --show-mmap-events -F comm,pid,tid,time,period,event,ip,sym,symoff,dso,dsoff"
chains="$P script -i $f --header --ns --no-inline -F pid,tid,time,period,event,ip"
$cmd > /tmp/pprof.script 2>/tmp/pprof.err || cat /tmp/pprof.err
$chains > /tmp/pprof.chains 2>/tmp/pprof.err || cat /tmp/pprof.err
$P buildid-list -i $f > /tmp/pprof.buildids 2>/tmp/pprof.err || cat /tmp/pprof.err
$P report -i $f --stdio --no-children -n --sort sym -g none \
	> /tmp/pprof.report 2>/dev/null

# Samples of the profiling event, with a span, and the busiest checkout span.
set -- $(awk '
/^[^\t #]/ { ev = ($0 ~ / cpu-clock: *$/) ; n += ev; next }
ev && /^\tcontext: trace_id=/ {
	ctx++
	split($3, kv, "=")
	if (substr(kv[2], 1, 2) == "c0")
		span[kv[2]]++
}
END {	# ties: the lowest ID, whichever awk this is
	for (s in span)
		if (span[s] > best || (span[s] == best && s < b)) { best = span[s]; b = s }
	print n + 0, ctx + 0, (b == "" ? "none" : b), best + 0
}' /tmp/pprof.script)
n=$1 nctx=$2 span=$3 nspan=$4
$P report -i $f --stdio --no-children -n --sort sym -g none --span $span \
	> /tmp/pprof.span 2>/dev/null

# pprof_forge: threads named " x" and "a\nb", and a symbol whose name
# reads as a sample of pid 1 with a frame "forged".
h=/tmp/pprof.hostile.data
$P record -q -N --call-graph fp,defer -e cpu-clock -c 200000 \
	-e unwind:unwind_user_context --no-sframe-tables -o $h -- \
	/tests/bin/pprof_forge 150 2>&1
hcmd=$(echo "$cmd" | sed "s|-i $f |-i $h |")
hchains=$(echo "$chains" | sed "s|-i $f |-i $h |")
$hcmd > /tmp/pprof.hostile-script 2>/tmp/pprof.err || cat /tmp/pprof.err
$hchains > /tmp/pprof.hostile-chains 2>/tmp/pprof.err || cat /tmp/pprof.err
$P buildid-list -i $h > /tmp/pprof.hostile-buildids 2>/tmp/pprof.err ||
	cat /tmp/pprof.err

if [ "$n" -ge 100 ] && [ "$nctx" -ge 10 ]; then
	echo "ok 1 - recorded $n cpu-clock samples, $nctx with a span"
else
	echo "not ok 1 - recorded $n cpu-clock samples, $nctx with a span (want 100 and 10)"
fi
if [ "$span" != none ] && [ -s /tmp/pprof.span ]; then
	echo "ok 2 - perf report --span $span ($nspan samples in perf script)"
else
	echo "not ok 2 - no checkout span to show with perf report --span"
fi

echo "=== PPROF command $cmd"
echo "=== PPROF command $chains"
echo "=== PPROF span-id $span"
for name in script chains buildids report span hostile-script hostile-chains \
	    hostile-buildids; do
	file=/tmp/pprof.$name
	echo "=== PPROF $name $(md5sum < $file | cut -d' ' -f1) $(wc -l < $file)"
	gzip -c $file | base64
	echo "=== PPROF end"
done
rm -f $f $h /tmp/pprof.*
echo "# pprof_export took $(($(date +%s) - t0)) s"
