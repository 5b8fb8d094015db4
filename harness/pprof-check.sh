#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The pprof export, checked by an independent reader:
#   pprof-check.sh CONSOLE_LOG [PREFIX]
# takes what harness/guest/pprof_export.sh printed in a boot's console (the
# two perf script texts of an otel_service recording, perf buildid-list,
# and perf report by symbol, whole and with --span of one request), converts
# it with tools/unwind/perf2pprof --script into
# $BUILD/logs/PREFIXprofile.pb.gz (the guest's files beside it, as
# PREFIXscript.txt and so on), and reads that with Go's pprof (go tool
# pprof, Debian's golang-go):
#   PREFIXcommand    the guest ran the perf script commands perf2pprof prints
#   PREFIXconvert    perf2pprof converts its output
#   PREFIXparse      pprof reads the file: its sample types, and as many
#                    samples and as much CPU time as perf script shows
#   PREFIXtop        pprof -top: the 15 busiest functions, with the same
#                    sample counts as perf report --sort sym, and the total
#   PREFIXspan       -tagfocus on one request's span_id: exactly the
#                    functions and counts of perf report --span
#   PREFIXmappings   every mapping perf buildid-list names has its build-id,
#                    the program's and the kernel's the range of their mmap
#                    records, and every address of the program the file
#                    offset perf printed for it
#   PREFIXframes     kernel and user frames: as many of each, and as many
#                    samples with both, as perf script shows
#   PREFIXbad_input  malformed input: an error message, exit status != 0,
#                    no traceback, no output file
#   PREFIXhostile_export  a recording of pprof_forge (threads named " x"
#                    and "a\nb", a symbol whose name has line breaks and
#                    reads as a sample of pid 1, review m19): perf2pprof
#                    exports it, says on standard error how many samples it
#                    left out, and has every other sample of the chains,
#                    all those of the two named threads among them
#   PREFIXhostile_forged  that profile has no sample of pid 1, none of the
#                    made-up period, and no frame "forged" or at its address
# One "PASS PREFIXname" or "FAIL PREFIXname: why" line each; PREFIX is
# "pprof." unless given. PERF2PPROF names another perf2pprof (mutants).
. "$(dirname "$0")/lib.sh"
set +e

console=${1:?console log}
prefix=${2-pprof.}
tool=${PERF2PPROF:-$REPO/tools/unwind/perf2pprof}
# Debian's python3, for which python3-protobuf installs the module.
py=${PERF2PPROF_PYTHON:-/usr/bin/python3}
logs=$BUILD/logs
mkdir -p "$logs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
profile=$logs/${prefix}profile.pb.gz
demo=/tests/bin/otel_service

pass() { echo "PASS $prefix$1"; }
fail() { echo "FAIL $prefix$1: $2"; }
fail_all() {	# WHY: the guest's output is not there; every check fails
	for c in command convert parse top span mappings frames bad_input \
		 hostile_export hostile_forged; do
		fail "$c" "$1"
	done
	exit 0
}

# Go's pprof on a local file: no network, no symbolization, nothing
# written outside $work.
gopprof() {
	HOME=$work GOCACHE=$work/gocache GOPATH=$work/go GOPROXY=off \
	PPROF_TMPDIR=$work/pprof PPROF_BINARY_PATH=$work/none \
		go tool pprof -symbolize=none "$@"
}

# The guest's blocks: the file gzipped in base64, checked by MD5 and lines.
[ -f "$console" ] || fail_all "no console log $console"
tr -d '\r' < "$console" > "$work/console"
for name in script chains buildids report span hostile-script \
	    hostile-chains hostile-buildids; do
	out=$logs/$prefix$name.txt
	awk -v name="$name" '
		$1 == "===" && $2 == "PPROF" && $3 == name { on = 1; next }
		on && /^=== PPROF end/ { exit }
		on && /^[A-Za-z0-9+\/=]+$/ { print }' "$work/console" |
		base64 -d 2>/dev/null | gunzip -c > "$out" 2>/dev/null
	want=$(awk -v name="$name" '$1 == "===" && $2 == "PPROF" && $3 == name {
		print $4, $5; exit }' "$work/console")
	got="$(md5sum < "$out" | cut -d' ' -f1) $(wc -l < "$out")"
	[ -n "$want" ] || fail_all "the console has no \"=== PPROF $name\" block"
	[ "$want" = "$got" ] ||
		fail_all "the $name block is damaged (MD5 and lines: $got; the guest's: $want)"
done
S=$logs/${prefix}script.txt
C=$logs/${prefix}chains.txt
B=$logs/${prefix}buildids.txt
R=$logs/${prefix}report.txt
SP=$logs/${prefix}span.txt
span=$(awk '$1 == "===" && $2 == "PPROF" && $3 == "span-id" { print $4; exit }' "$work/console")

# What perf script shows, read here without perf2pprof: per cpu-clock
# sample its period and its kernel and user frames; the demo's frames'
# addresses and file offsets.
awk -v demo="$demo" -v offs="$work/script.off" -v mmaps="$work/script.mmap" '
function flush() {
	if (!insample)
		return
	n++; period += p; kf += k; uf += u
	if (k && u)
		both++
	insample = 0
}
/ PERF_RECORD_MMAP2? / && match($0, /\[0x[0-9a-f]+\(0x[0-9a-f]+\) @ [0-9a-fx]+/) {
	# "[START(LEN) @ PGOFF ...]: PROT FILE"
	split(substr($0, RSTART + 1, RLENGTH - 1), a, /[()@ ]+/)
	file = $NF
	sub(/^\[kernel\.kallsyms\].*/, "[kernel.kallsyms]", file)
	print file, a[1], a[2], a[3] > mmaps
}
/^[^\t #]/ {
	flush()
	if ($NF == "cpu-clock:") {
		insample = 1; k = u = 0; p = $(NF - 1)
	}
	next
}
insample && /^\t *[0-9a-f]+ / {
	if ($NF == "([kernel.kallsyms])")
		k++
	else
		u++
	if (index($NF, "(" demo "+0x") == 1) {
		off = substr($NF, length(demo) + 3)
		sub(/\)$/, "", off)
		print $1, off > offs
	}
}
END {
	flush()
	print "samples", n + 0
	print "period", period + 0
	print "kframes", kf + 0
	print "uframes", uf + 0
	print "both", both + 0
}' "$S" > "$work/script.sum"
touch "$work/script.off" "$work/script.mmap"
sum() { awk -v k="$1" '$1 == k { print $2 }' "$work/script.sum"; }

# perf report's cpu-clock section as "count name" lines, busiest first,
# without unresolved addresses (pprof shows those by their mapping).
perf_counts() {
	awk -v want="'cpu-clock'" '
		/^# Samples: .* of event / { ev = $NF; next }
		/^#/ { next }
		ev == want && $1 ~ /%$/ && $2 ~ /^[0-9]+$/ && $3 ~ /^\[.\]$/ {
			name = $0
			sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ /, "", name)
			sub(/ +$/, "", name)
			if (name !~ /^0x[0-9a-f]+$/)
				print $2, name
		}' "$1" | sort -k1,1nr -k2
}
perf_total() {
	awk -v want="'cpu-clock'" '
		/^# Samples: .* of event / { ev = $NF; next }
		/^#/ { next }
		ev == want && $1 ~ /%$/ && $2 ~ /^[0-9]+$/ { n += $2 }
		END { print n + 0 }' "$1"
}
# pprof -top's flat sample counts the same way, locations without a
# function ("[FILE]") left out, and in $work/total what the nodes shown
# account for: with these options, every node, so every sample.
pprof_counts() {
	rm -f "$work/total"
	gopprof -top -sample_index=samples -nodecount=1000000 -nodefraction=0 \
		-edgefraction=0 "$@" 2>"$work/top.err" |
	awk -v total="$work/total" '
		/^Showing nodes accounting for / {
			v = $5; sub(/,$/, "", v); print v > total
		}
		on && $1 ~ /^[0-9]+$/ && $1 > 0 {
			name = $0
			sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", name)
			if (name !~ /^\[.*\]$/ && name != "<unknown>")
				print $1, name
		}
		$1 == "flat" { on = 1 }' | sort -k1,1nr -k2
}
pprof_total() { cat "$work/total" 2>/dev/null; }

check_command() {	# the two perf script commands, in their order
	local guest tool_cmd data
	guest=$(sed -n 's/^=== PPROF command //p' "$work/console" | head -2)
	data=$(echo "$guest" | head -1 | awk '{ for (i = 1; i < NF; i++) if ($i == "-i") print $(i + 1) }')
	tool_cmd=$("$py" "$tool" --print-script-command --perf /tests/perf/perf \
		-i "$data" 2>&1 | head -2)
	if [ -n "$guest" ] && [ "$guest" = "$tool_cmd" ]; then
		pass command
	else
		fail command "the guest ran \"$(echo "$guest" | tr '\n' '|')\", perf2pprof asks for \"$(echo "$tool_cmd" | tr '\n' '|')\""
	fi
}

check_convert() {
	rm -f "$profile"
	if "$py" "$tool" --script "$S" --chains "$C" --buildids "$B" -o "$profile" \
		2>"$work/convert.err" && [ -s "$profile" ] &&
	   gopprof -raw "$profile" >"$work/raw" 2>"$work/raw.err"; then
		pass convert
		return 0
	fi
	fail convert "$(cat "$work/convert.err" "$work/raw.err" 2>/dev/null | tr '\n' ' ')"
	return 1
}

check_parse() {
	local got want
	got=$(awk '
		/^PeriodType:/ { pt = $2 " " $3 }
		/^Samples:/ { on = 1; getline; types = $0; next }
		/^Locations/ { on = 0 }
		on && /^ *[0-9]+ +[0-9]+: / { n += $1; p += $2 }
		END { print types "|" pt "|" n + 0 "|" p + 0 }' "$work/raw")
	want="samples/count cpu/nanoseconds|cpu nanoseconds|$(sum samples)|$(sum period)"
	if [ "$got" = "$want" ] && [ "$(sum samples)" -gt 0 ]; then
		pass parse
	else
		fail parse "pprof reads (types|period type|samples|period) \"$got\", perf script has \"$want\""
	fi
}

check_top() {
	local pt gt
	perf_counts "$R" | head -15 > "$work/top.perf"
	pprof_counts "$profile" | head -15 > "$work/top.pprof"
	pt=$(perf_total "$R") gt=$(pprof_total)
	if [ -s "$work/top.perf" ] && cmp -s "$work/top.perf" "$work/top.pprof" &&
	   [ "$pt" = "$gt" ]; then
		pass top
	else
		fail top "samples: perf report $pt, pprof -top ${gt:-none}; first differences (< perf, > pprof): $(diff "$work/top.perf" "$work/top.pprof" | grep '^[<>]' | head -4 | tr '\n' ' ')"
	fi
}

check_span() {
	local pt gt n
	perf_counts "$SP" > "$work/span.perf"
	pprof_counts -tagfocus="span_id=^$span\$" "$profile" > "$work/span.pprof"
	pt=$(perf_total "$SP") gt=$(pprof_total)
	n=$(awk -v s="span_id=$span" '
		/^[^\t #]/ { ev = ($NF == "cpu-clock:"); next }
		ev && $1 == "context:" && $3 == s { n++ }
		END { print n + 0 }' "$S")
	if [ -n "$span" ] && [ "$span" != none ] && [ "$pt" -gt 0 ] &&
	   [ "$pt" = "$gt" ] && [ "$pt" = "$n" ] &&
	   cmp -s "$work/span.perf" "$work/span.pprof"; then
		pass span
	else
		fail span "span $span: perf report --span $pt samples, pprof -tagfocus ${gt:-none}, perf script $n; first differences (< perf, > pprof): $(diff "$work/span.perf" "$work/span.pprof" | grep '^[<>]' | head -4 | tr '\n' ' ')"
	fi
}

check_mappings() {
	local bad
	bad=$(awk -v bids="$B" -v offs="$work/script.off" -v mmaps="$work/script.mmap" \
		-v demo="$demo" '
	# 64-bit addresses as strings of hex digits: awk has doubles only.
	function norm(s) {
		s = tolower(s)
		sub(/^0x/, "", s)
		sub(/^0+/, "", s)
		return s == "" ? "0" : s
	}
	function hexadd(a, b,   r, c, d, i, j) {
		a = norm(a); b = norm(b); r = ""; c = 0
		for (i = length(a); i > 0 || b != "" || c; i--) {
			d = c
			if (i > 0)
				d += index("0123456789abcdef", substr(a, i, 1)) - 1
			if (b != "") {
				d += index("0123456789abcdef", substr(b, length(b), 1)) - 1
				b = substr(b, 1, length(b) - 1)
			}
			r = substr("0123456789abcdef", d % 16 + 1, 1) r
			c = int(d / 16)
		}
		return norm(r)
	}
	function hex(s,   i, v) {
		v = 0
		sub(/^0x/, "", s)
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	BEGIN {
		while ((getline l < bids) > 0) {
			split(l, f, " ")
			want[f[2]] = f[1]
		}
		while ((getline l < offs) > 0) {
			split(l, f, " ")
			off[f[1]] = f[2]
		}
		# The first mmap record of the program and of the kernel.
		while ((getline l < mmaps) > 0) {
			split(l, f, " ")
			if ((f[1] == demo || f[1] == "[kernel.kallsyms]") && !(f[1] in mm))
				mm[f[1]] = "0x" norm(f[2]) "/0x" hexadd(f[2], f[3]) "/0x" \
					(f[1] == demo ? norm(f[4]) : "0")
		}
	}
	/^Locations/ { s = "loc"; next }
	/^Mappings/ { s = "map"; next }
	s == "loc" && /^ *[0-9]+: 0x/ { addr[$1 + 0] = substr($2, 3); mid[$1 + 0] = substr($3, 3) }
	s == "map" && /^[0-9]+: 0x/ {
		split($2, r, "/")
		id = $1 + 0; file[id] = $3; start[id] = r[1]; moff[id] = r[3]
		bid = ($4 ~ /^[0-9a-f]+$/) ? $4 : ""
		if (($3 in want) && want[$3] != bid) {
			printf "mapping %s has build-id \"%s\", perf buildid-list \"%s\"; ", $3, bid, want[$3]
			nbad++
		}
		if ($3 in mm) {
			seenmap[$3] = 1
			if ($2 != mm[$3]) {
				printf "mapping %s is %s, its mmap record %s; ", $3, $2, mm[$3]
				nbad++
			}
		}
	}
	END {
		if (!(demo in want)) {
			printf "perf buildid-list has no %s; ", demo
			nbad++
		}
		for (l in addr) {
			m = mid[l]
			if (file[m] != demo)
				continue
			a = addr[l]
			seen[a] = 1; nloc++
			got = hex(a) - hex(start[m]) + hex(moff[m])
			if (!(a in off)) {
				if (nbad++ < 3) printf "location 0x%s is no frame of perf script; ", a
			} else if (got != hex(off[a])) {
				if (nbad++ < 3) printf "0x%s: file offset 0x%x, perf says %s; ", a, got, off[a]
			}
		}
		for (a in off)
			if (!(a in seen) && nbad++ < 3)
				printf "perf frame 0x%s has no location; ", a
		for (name in mm)
			if (!(name in seenmap)) {
				printf "no mapping %s; ", name
				nbad++
			}
		if (!nloc) {
			printf "no location in %s; ", demo
			nbad++
		}
		if (nbad)
			print nbad " problem(s)"
	}' "$work/raw" 2>&1) || bad="awk failed: $bad"
	if [ -z "$bad" ]; then
		pass mappings
	else
		fail mappings "$bad"
	fi
}

check_frames() {
	local got want
	got=$(awk '
		/^Samples:/ { s = 1; getline; next }
		/^Locations/ { s = 2; next }
		/^Mappings/ { s = 3; next }
		s == 1 && /^ *[0-9]+ +[0-9]+: / {
			ns++; cnt[ns] = $1
			sub(/^[^:]*: */, ""); locs[ns] = $0
		}
		s == 2 && /^ *[0-9]+: 0x/ { lm[$1 + 0] = substr($3, 3) }
		s == 3 && /^[0-9]+: 0x/ { kern[$1 + 0] = ($3 == "[kernel.kallsyms]") }
		END {
			for (i = 1; i <= ns; i++) {
				k = u = 0
				n = split(locs[i], l, " ")
				for (j = 1; j <= n; j++)
					if (kern[lm[l[j]]]) k++; else u++
				kf += cnt[i] * k; uf += cnt[i] * u
				if (k && u)
					both += cnt[i]
			}
			print kf + 0, uf + 0, both + 0
		}' "$work/raw")
	want="$(sum kframes) $(sum uframes) $(sum both)"
	set -- $want
	if [ "$got" = "$want" ] && [ "$1" -gt 0 ] && [ "$2" -gt 0 ] && [ "$3" -gt 0 ]; then
		pass frames
	else
		fail frames "kernel frames, user frames, samples with both: pprof \"$got\", perf script \"$want\""
	fi
}

# The text with names cut short in a frame line; the chains cut short in a
# sample's line; a binary file (the profile) for either; a context line of
# another form in the chains; a buildid-list that is none.
check_bad_input() {
	local c args rc why=
	head -n 2000 "$S" > "$work/cut.txt"
	grep -m1 "^$(printf '\t') *[0-9a-f]* " "$S" | cut -c1-20 >> "$work/cut.txt"
	head -n 2000 "$C" > "$work/chains_cut.txt"
	grep -m1 ' cpu-clock: *$' "$C" | cut -c1-12 >> "$work/chains_cut.txt"
	sed '0,/^\tcontext: trace_id=/s//\tcontext: trace=/' "$C" > "$work/context.txt"
	for c in cut chains_cut binary chains_binary context buildids; do
		case $c in
		binary) args=(--script "$logs/${prefix}profile.pb.gz" --chains "$C") ;;
		chains_binary) args=(--script "$S" --chains "$logs/${prefix}profile.pb.gz") ;;
		buildids) args=(--script "$S" --chains "$C" --buildids "$R") ;;
		cut) args=(--script "$work/cut.txt" --chains "$C") ;;
		*) args=(--script "$S" --chains "$work/$c.txt") ;;
		esac
		rm -f "$work/bad.pb.gz"
		"$py" "$tool" "${args[@]}" -o "$work/bad.pb.gz" >/dev/null 2>"$work/bad.err"
		rc=$?
		if [ $rc = 0 ] || grep -q Traceback "$work/bad.err" ||
		   ! grep -q '^perf2pprof: error: ' "$work/bad.err" ||
		   [ -e "$work/bad.pb.gz" ]; then
			why="$why$c: exit status $rc, $(head -c 200 "$work/bad.err" | tr '\n' ' '); "
		fi
	done
	if [ -z "$why" ]; then
		pass bad_input
	else
		fail bad_input "$why"
	fi
}

# pprof_forge's recording (review m19): perf script's text with names has
# a sample of pid 1, period 999999999 and frame "forged" after every
# sample in the library function so named, and lines that begin as a
# frame's or are cut in two for the threads " x" and "a\nb". The chains
# (numbers only) are what the program did: one process, its main thread
# in the library, the two named threads in named_spin().
check_hostile() {
	local hs=$logs/${prefix}hostile-script.txt hc=$logs/${prefix}hostile-chains.txt
	local hb=$logs/${prefix}hostile-buildids.txt hp=$logs/${prefix}hostile.pb.gz
	local rc left want got why=
	rm -f "$hp"
	"$py" "$tool" --script "$hs" --chains "$hc" --buildids "$hb" -o "$hp" \
		2>"$work/hostile.err"
	rc=$?
	if [ $rc != 0 ] || [ ! -s "$hp" ] ||
	   ! gopprof -raw "$hp" >"$work/hostile.raw" 2>"$work/hostile.rawerr"; then
		for c in hostile_export hostile_forged; do
			fail $c "perf2pprof exit status $rc: $(cat "$work/hostile.err" "$work/hostile.rawerr" 2>/dev/null | head -c 300 | tr '\n' ' ')"
		done
		return
	fi
	left=$(sed -n 's/^perf2pprof: \([0-9]*\) of [0-9]* samples left out.*/\1/p' "$work/hostile.err")
	# Per thread of the program, its cpu-clock samples in the chains and
	# in the profile ("tid N P"), and the program's pid.
	awk '/^ *-?[0-9]+\/-?[0-9]+ .* cpu-clock:/ {
		split($1, a, "/"); n[a[1]]++; t[a[1] "/" a[2]]++
	}
	END {
		for (p in n) if (n[p] > best) { best = n[p]; pid = p }
		print "pid", pid, best
		for (k in t) { split(k, a, "/"); if (a[1] == pid && a[2] != pid) print "tid", a[2], t[k] }
	}' "$hc" | sort > "$work/hostile.chains"
	awk '/^Samples:/ { s = 1; getline; next }
	/^Locations/ { s = 0 }
	s && /^ *[0-9]+ +[0-9]+: / { c = $1; v = $2; n += c; per += v; next }
	s && /pid:\[/ {
		match($0, /pid:\[[0-9-]+/); pid = substr($0, RSTART + 5, RLENGTH - 5)
		match($0, /tid:\[[0-9-]+/); tid = substr($0, RSTART + 5, RLENGTH - 5)
		np[pid] += c; nt[tid] += c
	}
	END {
		print "samples", n + 0, per + 0
		for (p in np) print "pidn", p, np[p]
		for (t in nt) print "tidn", t, nt[t]
	}' "$work/hostile.raw" > "$work/hostile.pprof"
	pid=$(awk '$1 == "pid" { print $2 }' "$work/hostile.chains")
	nc=$(awk '$1 == "pid" { print $3 }' "$work/hostile.chains")
	np=$(awk '$1 == "samples" { print $2 }' "$work/hostile.pprof")
	per=$(awk '$1 == "samples" { print $3 }' "$work/hostile.pprof")
	# hostile_export: the samples left out are said, no more are missing,
	# and the two named threads have all theirs.
	[ -n "$left" ] && [ "$left" -gt 0 ] ||
		why="${why}no \"N of M samples left out\" on standard error; "
	[ -n "$np" ] && [ "$np" -lt "$nc" ] && [ $((nc - np)) -le "${left:-0}" ] ||
		why="${why}the chains have $nc cpu-clock samples of pid $pid, the profile ${np:-none}, left out ${left:-none}; "
	[ "$(grep -c '^tid ' "$work/hostile.chains")" = 2 ] ||
		why="${why}the chains have not two threads besides $pid: $(grep '^tid ' "$work/hostile.chains" | tr '\n' ' '); "
	while read -r _ tid want; do
		got=$(awk -v t="$tid" '$1 == "tidn" && $2 == t { print $3 }' "$work/hostile.pprof")
		[ "${got:-0}" = "$want" ] ||
			why="${why}thread $tid: $want samples in the chains, ${got:-0} in the profile; "
	done < <(grep '^tid ' "$work/hostile.chains")
	if [ -z "$why" ]; then
		pass hostile_export
	else
		fail hostile_export "$why"
	fi
	# hostile_forged: nothing of the made-up sample.
	why=
	if awk '$1 == "pidn" && $2 == 1' "$work/hostile.pprof" | grep -q .; then
		why="${why}samples of pid 1; "
	fi
	awk '$1 == "pidn" && $2 != pid' pid="$pid" "$work/hostile.pprof" | grep -q . &&
		why="${why}samples of another pid than $pid: $(awk '$1 == "pidn"' "$work/hostile.pprof" | tr '\n' ' '); "
	[ "$per" = $((np * 200000)) ] ||
		why="${why}CPU time $per ns for $np samples of 200000 ns; "
	grep -q -i -e 'forged' -e '0x7f0000001000 ' "$work/hostile.raw" &&
		why="${why}a location of the forged frame: $(grep -i -e forged -e '0x7f0000001000 ' "$work/hostile.raw" | head -2 | tr '\n' ' '); "
	if [ -z "$why" ]; then
		pass hostile_forged
	else
		fail hostile_forged "$why"
	fi
}

check_command
if check_convert; then
	check_parse
	check_top
	check_span
	check_mappings
	check_frames
else
	for c in parse top span mappings frames; do fail "$c" "no profile to read"; done
fi
check_bad_input
check_hostile
