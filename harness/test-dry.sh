#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stand-ins for the scripts harness/test.sh runs, for TEST_DRY_RUN=1: each
# sleeps DRY_SCALE seconds (default 1) for every minute that its part of a
# cold run takes, and prints fake results, so that test.sh's schedule
# (which lane runs what, what is printed in what order, what a failure
# leaves) can be tried in a minute or two. Each stand-in appends
# "START|END NAME EPOCH" lines to DIR/timeline.
#   test-dry.sh DIR
# TEST_DRY_FAIL="progs build.VARIANT warn.VARIANT boot.VARIANT series
# sframe kunit": those fail (a build with an ERROR line or a warning, a
# boot with an empty console, a script of the check lane or kunit.sh with
# no output).
set -euo pipefail
dir=${1:?directory}
rm -rf "$dir"
mkdir -p "$dir"
: > "$dir/timeline"

cat > "$dir/.common" <<EOF
dir=$dir
EOF
cat >> "$dir/.common" <<'EOF'
fails() { case " ${TEST_DRY_FAIL:-} " in *" $1 "*) return 0 ;; esac; return 1; }
t() { echo "$1 $2 $(date +%s.%N)" >> "$dir/timeline"; }
nap() {	# MINUTES [NAME]: sleep, between START and END lines
	t START "${2:-$me}"
	sleep "$(echo "$1 * ${DRY_SCALE:-1}" | bc -l)"
	t END "${2:-$me}"
}
me=$(basename "$0")
EOF

stand() {	# NAME BODY
	printf '#!/bin/bash\n. %s/.common\n%s\n' "$dir" "$2" > "$dir/$1"
	chmod +x "$dir/$1"
}

stand deps.sh 'exit 0'
stand prepare.sh 'exit 0'
stand check-series.sh 'nap 5; fails series && exit 1
echo "PASS series.dry.1"; echo "PASS series.dry.2"'
stand sframe-tests.sh 'nap 4; fails sframe && exit 1; echo "PASS sframe.dry.1"'
stand build-progs.sh 'nap 2; fails progs && exit 1; exit 0'
stand build-perf.sh 'nap 2'
stand initramfs.sh 'exit 0'
# Minutes of a cold build with both cores.
stand debian-kernel.sh 'nap 0.2 build.base; fails build.base && { echo "ERROR: dry download failed" >&2; exit 1; }
echo "$dir/vmlinuz"'
stand build-kernel.sh 'case $1 in test) m=4.5 ;; debug) m=7 ;; race) m=4.5 ;; *) m=3.5 ;; esac
nap $m build.$1
fails build.$1 && { echo "ERROR: dry $1 build failed" >&2; exit 1; }
! fails warn.$1 || echo "x.c:1: warning: dry" >&2
exit 0'
stand qemu-run.sh 'v=$(basename "$2" .log)
v=${v#console-}
case $v in test) m=5 ;; debug) m=12 ;; race) m=5 ;; *) m=1.5 ;; esac
nap $m boot.$v
fails boot.$v && { : > "$2"; exit 1; }
echo "dry console of $v" > "$2"'
stand budget-boot.sh 'nap 0.5 boot.budget; echo "dry budget" > "$2"'
stand parse-console.py '[ -s "$1" ] || { echo "FAIL ${2}console.completed: no console"; exit 0; }
for i in 1 2 3; do echo "PASS ${2}dry.$i"; done'
stand budget-check.py 'echo "PASS ${2}dry.1"'
stand flamegraph.py 'nap 0.2'
stand flamegraph_check.py 'echo "PASS ${2}dry.1"'
stand flamegraph_mutants.sh 'nap 0.2; echo "PASS ${2}mutant.dry"'
stand pprof-check.sh 'echo "PASS ${2}dry.1"'
stand pprof-mutants.sh 'nap 0.5; echo "PASS ${2}mutant.dry"'
stand kunit.sh 'fails kunit && exit 1; [ -s "$2" ] && echo "PASS kunit.py.dry.1"; exit 0'
