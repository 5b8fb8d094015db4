#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A thread's OpenTelemetry context with its stack: profile otel_service (two
# worker threads, "checkout" and "search", each request a span of its own)
# with fp,defer and the unwind:unwind_user_context event, and show per
# request kind its samples, its top stacks and how many of its stacks came
# with a span of the other kind, which must be none.
#
#   main_context.sh [--check]   with --check, print TAP and fail unless the
#                               join is exact (the test job)
P=/tests/perf/perf
trap "" PIPE
export HOME=/tmp PATH=/tests/perf:$PATH
SVC=/tests/bin/otel_service
MS=${MS:-1500}
f=/tmp/perf-context.data
check=0
[ "${1:-}" = --check ] && check=1

[ $check = 1 ] || echo "######## perf record --call-graph fp,defer -e cpu-clock -c 100000 -e unwind:unwind_user_context -- otel_service $MS"
$P record -q -N --call-graph fp,defer -e cpu-clock -c 100000 \
	-e unwind:unwind_user_context --no-sframe-tables -o $f -- $SVC $MS 2>&1
$P script -i $f -F comm,tid,event,ip,sym,dso 2>/dev/null > /tmp/context.script
if [ $check = 0 ]; then
	echo "-- perf script: a checkout sample with the context of its kernel entry"
	awk '/^otel_service/ && /cpu-clock/ { s = $0 "\n"; keep = 1; next }
	     /^[^\t ]/ { keep = 0; s = ""; next }
	     keep && /\tcontext: trace_id=c0/ && s ~ /checkout_handle/ { printf "%s%s\n", s, $0; exit }
	     keep { s = s $0 "\n" }' /tmp/context.script
	echo "-- the context event itself, as perf script prints it (tools that"
	echo "   do not join it show this line, with the same cookie)"
	$P script -i $f -F comm,tid,event,trace 2>/dev/null | grep -m1 'status=ok'
fi

# One line per cpu-clock sample of a worker: kind of handler on its stack,
# context status, span kind, user stack (innermost 4 symbols).
awk '
function flush() {
	if (!insample)
		return
	kind = "other"
	if (stack ~ /(^| )checkout_handle( |$)/) kind = "checkout"
	else if (stack ~ /(^| )search_handle( |$)/) kind = "search"
	print kind, (ctx == "" ? "missing" : ctx), span, (top == "" ? "-" : top)
	insample = 0
}
/^[^\t ]/ {
	flush()
	if ($0 ~ /cpu-clock/ && $1 == "otel_service") {
		insample = 1; stack = ""; top = ""; n = 0; ctx = ""; span = "-"
	}
	next
}
insample && /^\tcontext: / {
	if ($2 ~ /^trace_id=/) {
		ctx = "ok"
		split($3, kv, "=")
		span = kv[2]
	} else {
		split($2, kv, "=")
		ctx = kv[2]
	}
	next
}
insample && NF >= 2 && $0 !~ /kernel.kallsyms/ && $0 !~ /^\tcontext/ {
	stack = stack " " $2
	if (n < 4 && $2 != "[unknown]") {
		top = (top == "" ? $2 : top "<-" $2)
		n++
	}
}
END { flush() }' /tmp/context.script > /tmp/context.samples

awk -v check=$check '
{
	samples[$1]++
	if ($2 == "ok") {
		ok[$1]++
		want = ($1 == "checkout" ? "c0" : $1 == "search" ? "5e" : "")
		if (want != "" && substr($3, 1, 2) != want) bad[$1]++
	} else {
		st[$1 " " $2]++
	}
	if ($1 != "other") stk[$1 " " $4]++
	if ($2 == "missing" && $1 != "other") missing++
}
END {
	if (!check) {
		printf "%-9s %8s %12s %10s %s\n", "kind", "samples", "with span", "wrong span", "other statuses"
		for (k in samples) {
			o = ""
			for (s in st) { split(s, a, " "); if (a[1] == k) o = o a[2] "=" st[s] " " }
			printf "%-9s %8d %12d %10d %s\n", k, samples[k], ok[k], bad[k], o
		}
		for (k in samples) {
			if (k == "other") continue
			print "top stacks of " k " (user frames, innermost first):"
			cmd = "sort -rn | head -3"
			for (s in stk) { split(s, a, " "); if (a[1] == k) printf "  %6d  %s\n", stk[s], a[2] | cmd }
			close(cmd)
		}
		printf "stacks whose span does not match their handler: %d\n", bad["checkout"] + bad["search"]
		exit 0
	}
	printf "# checkout stacks with a checkout span: %d of %d\n", ok["checkout"], samples["checkout"]
	printf "# search stacks with a search span: %d of %d\n", ok["search"], samples["search"]
	print "1..4"
	fail = 0
	if (ok["checkout"] < 10 || ok["search"] < 10) { print "not ok 1 too few samples with a span"; fail = 1 }
	else print "ok 1 at least 10 samples with a span per request kind"
	if (bad["checkout"] + bad["search"]) { print "not ok 2 stacks with a span of the other kind: " bad["checkout"] + bad["search"]; fail = 1 }
	else print "ok 2 no stack with a span of the other kind"
	if (missing) { print "not ok 3 handler samples without the context of their entry: " missing; fail = 1 }
	else print "ok 3 every handler sample has the context of its entry"
	exit fail
}' /tmp/context.samples
rc=$?

# perf report --span: the samples of one checkout request only. The busiest
# checkout span, and how many samples of any kind came with it.
set -- $(awk '$2 == "ok" && substr($3, 1, 2) == "c0" { n[$3]++ }
	     END { for (s in n) if (n[s] > best) { best = n[s]; b = s }; print b, best + 0 }' \
	     /tmp/context.samples)
span=$1 nspan=$2
$P report -i $f --stdio --no-children -n -q --span $span --sort sym -g none 2>/dev/null |
	grep -v '^#' > /tmp/context.report
got=$(awk '$2 ~ /^[0-9]+$/ { n += $2 } END { print n + 0 }' /tmp/context.report)
other=$(grep -c -e search_handle -e scan_index /tmp/context.report)
if [ $check = 0 ]; then
	echo "-- perf report --span $span (one checkout request, $nspan samples):"
	head -8 /tmp/context.report
	exit 0
fi
if [ -n "$span" ] && [ "$got" = "$nspan" ] && [ "$other" = 0 ]; then
	echo "ok 4 perf report --span shows exactly the $nspan samples of one request"
else
	echo "not ok 4 perf report --span $span: $got samples ($other search lines), want $nspan"
	rc=1
fi
exit $rc
