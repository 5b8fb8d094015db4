#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The browser check must fail when the report misstates what perf recorded.
# For each mutant, change a copy of flamegraph.py in one place, build the
# report from the same console log, and run flamegraph_check.py on it: some
# check must fail. Prints "PASS PREFIXmutant.NAME" when it does (the mutant
# is caught), "FAIL ..." when every check passed.
#   flamegraph_mutants.sh LOG PREFIX
. "$(dirname "$0")/lib.sh"

logf=${1:?console log}
prefix=${2:-flame.}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# mutant NAME OLD NEW: OLD must occur once in flamegraph.py.
mutant() {
	local name=$1 caught
	"$REPO/harness/copy_mutant.py" "$REPO/harness/flamegraph.py" "$work/fg.py" "$2" "$3" ||
		{ echo "FAIL ${prefix}mutant.$name: pattern not found"; return; }
	rm -rf "$work/out"
	if ! python3 "$work/fg.py" "$logf" "$work/out" "$BUILD/npm/node_modules" >/dev/null 2>&1; then
		echo "PASS ${prefix}mutant.$name # the report was not written"
		return
	fi
	caught=$("$REPO/harness/flamegraph_check.py" "$work/out" "" "$work/shot.png" |
		 grep '^FAIL' | grep -v '^FAIL screenshot' | cut -d' ' -f2 | tr -d : | tr '\n' ' ')
	if [ -n "$caught" ]; then
		echo "PASS ${prefix}mutant.$name # caught by $caught"
	else
		echo "FAIL ${prefix}mutant.$name: every check passed"
	fi
}

# The stacks folded outermost last, as perf script prints them.
mutant outer_last "for frame in stack.split(';'):" \
	"for frame in [stack.split(';')[0]] + stack.split(';')[:0:-1]:"
# Deep frames counted once whatever their samples.
mutant deep_counts "            child['value'] += n" \
	"            child['value'] += n if len(path) < 6 else 1"
# Every mode's graph captioned with fp's figures.
mutant wrong_summary "s = summary.get((tag, mode), [0] * 6)" \
	"s = summary.get((tag, 'fp'), [0] * 6)"
# Each stack counted twice.
mutant twice "root['value'] += n" "root['value'] += 2 * n"
# One mode's stacks drawn for all three.
mutant one_mode "stacks = folded.get((tag, mode), {})" \
	"stacks = folded.get((tag, 'fp,defer'), {})"
