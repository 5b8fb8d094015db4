#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The pprof check must fail when perf2pprof misstates what perf recorded.
# For each mutant, change a copy of tools/unwind/perf2pprof in one place and
# run harness/pprof-check.sh with it on the same console log: some check
# must fail. Prints "PASS PREFIXmutant.NAME # caught by CHECKS" when one
# does, "FAIL PREFIXmutant.NAME: ..." when every check passed.
#   pprof-mutants.sh LOG [PREFIX]
. "$(dirname "$0")/lib.sh"

logf=${1:?console log}
prefix=${2-pprof.}
work=$(mktemp -d)
trap 'rm -rf "$work" "$BUILD"/logs/mutant.*' EXIT

# mutant NAME OLD NEW: OLD must occur once in perf2pprof.
mutant() {
	local name=$1 caught
	"$REPO/harness/copy_mutant.py" "$REPO/tools/unwind/perf2pprof" "$work/perf2pprof" "$2" "$3" ||
		{ echo "FAIL ${prefix}mutant.$name: pattern not found"; return; }
	caught=$(PERF2PPROF=$work/perf2pprof "$REPO/harness/pprof-check.sh" "$logf" mutant. |
		 sed -n 's/^FAIL mutant\.\([a-z_]*\):.*/\1/p' | tr '\n' ' ')
	if [ -n "$caught" ]; then
		echo "PASS ${prefix}mutant.$name # caught by $caught"
	else
		echo "FAIL ${prefix}mutant.$name: every check passed"
	fi
}

# No trace_id and span_id labels.
mutant no_labels "            if span is not None:
                out.label.add(key=s('trace_id')" "            if False:
                out.label.add(key=s('trace_id')"
# The trace ID where the span ID belongs.
mutant labels_swapped "out.label.add(key=s('span_id'), str=s(span))" \
	"out.label.add(key=s('span_id'), str=s(trace))"
# A context given to the sample before the one it belongs to.
mutant context_prev_sample "self.parse_context(cur, text" \
	"self.parse_context(self.samples[-2] if len(self.samples) > 1 else cur, text"
# Samples of one stack merged whatever their spans.
mutant merge_ignores_labels \
	"key = (locs, smp.trace_id, smp.span_id, smp.pid, smp.tid)" \
	"key = (locs, None, None, smp.pid, smp.tid)"
# The two values swapped, or the period left out.
mutant values_swapped "out.value.extend(values)" "out.value.extend(values[::-1])"
mutant period_as_count "v[1] += smp.period" "v[1] += 1"
# Frames outermost first.
mutant root_first "for f in smp.frames)" "for f in reversed(smp.frames))"
# No kernel frames, or no user frames.
mutant no_kernel "for f in smp.frames)" "for f in smp.frames if not f.kernel)"
mutant no_user "for f in smp.frames)" "for f in smp.frames if f.kernel)"
# Frames perf could not name left out.
mutant no_unknown_frames "for f in smp.frames)" "for f in smp.frames if f.sym)"
# Kernel frames taken for user frames, or their mapping misnamed.
mutant kernel_as_user "return Frame(ip, sym, dso, dsoff, kernel)" \
	"return Frame(ip, sym, dso, dsoff, False)"
mutant kernel_mapping_name "m.filename = self.str(key[1])" \
	"m.filename = self.str(key[1].strip('[]'))"
# No build-ids; file offsets of 0; ranges that ignore the mmap records.
mutant no_buildids "            if bid:
                m.build_id" "            if False:
                m.build_id"
mutant offset_zero "found.add((start, end, pgoff))" "found.add((start, end, 0))"
mutant no_mmap_ranges "for file, start, end, pgoff in self.rec.mmaps:" \
	"for file, start, end, pgoff in []:"
# Other perf script commands than the ones the guest runs.
mutant script_command "'--show-mmap-events', '-F', SCRIPT_FIELDS]" "'-F', SCRIPT_FIELDS]"
mutant chains_command "'-F', CHAIN_FIELDS]" "'--show-mmap-events', '-F', CHAIN_FIELDS]"
# Bad input: a traceback, exit status 0, a frame line not checked.
mutant traceback "if __name__ == '__main__':
    try:
        sys.exit(main(sys.argv[1:]))" "if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
    try:
        pass"
mutant exit_zero "        print('perf2pprof: error: %s' % e, file=sys.stderr)
        sys.exit(1)" "        print('perf2pprof: error: %s' % e, file=sys.stderr)
        sys.exit(0)"
mutant lenient_chains \
	"                raise Error('%s: not a line of perf script -F %s: %r'
                            % (where, CHAIN_FIELDS, line[:60]))" \
	"                continue"
# Review m19, pprof_forge's recording: a sample whose names do not line up
# with its chain ends the export; the text with names says which sample
# its lines are of.
mutant left_out_error "                    self.left_out.append((cur, str(e)))
                    clean = False
                cur = None" "                    raise Error(str(e))
                cur = None"
mutant names_numbers_unchecked \
	"if m and k < len(samples) and sample_key(m) == samples[k].key():" \
	"if m and k < len(samples):"
