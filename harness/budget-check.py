#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The test command's instruction budget check.

Usage: budget-check.py LOG PREFIX [--budget FILE]

LOG is the console of harness/budget-boot.sh: one -icount boot of the
bench job with its request and deliver parts, the deliver part at depths 8
and 32. Prints, with names prefixed with PREFIX, "PASS boot" or "FAIL boot:
reason" (the boot finished, both parts exited 0 and every callback came),
then for each figure that boot gives (request first and pending, delivery
at depth 8 and 32, and the frame-pointer step as the slope between the two
depths) "PASS NAME" or "FAIL NAME: measured X > budget Y (+Z%)" against
docs/bench/budget.txt (or FILE). A figure more than 1% above its budget
fails: an instruction count is the same in every boot of one build, so a
failure is a change in the code, never a slow host.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_budget  # noqa: E402  (shared with bench-report.py)

# The figures the short boot gives; the SFrame and table steps and ftrace's
# delayed stack are left to harness/bench.sh's REGRESSED lines, to keep
# the boot short.
CHECKED = ('request_first', 'request_pending', 'deliver_8', 'deliver_32',
           'fp_step')


def boot_ok(log):
    """'' if LOG's boot finished with both parts exiting 0 and all
    callbacks delivered, else what went wrong."""
    with open(log, errors='replace') as f:
        lines = [line.rstrip('\r\n') for line in f]
    if not any(line.startswith('=== ALL DONE') for line in lines):
        return 'the boot never finished (hang, panic or timeout)'
    for part in ('bench_request', 'bench_deliver'):
        end = [line for line in lines if line.startswith('=== END %s ' % part)]
        if not end:
            return '%s did not run' % part
        if not end[0].endswith(' rc=0'):
            return '%s: %s' % (part, end[0])
    for part, kv in bench_budget.parse_log(log):
        if part == 'deliver' and kv.get('callbacks') != kv.get('expected'):
            return 'deliver at depth %s: %s of %s callbacks' % (
                kv.get('depth'), kv.get('callbacks'), kv.get('expected'))
    return ''


def main():
    log, prefix = sys.argv[1], sys.argv[2]
    path = bench_budget.BUDGET
    if '--budget' in sys.argv:
        path = sys.argv[sys.argv.index('--budget') + 1]
    try:
        why = boot_ok(log)
        rows = bench_budget.parse_log(log)
    except OSError as e:
        why, rows = str(e), []
    print('PASS %sboot' % prefix if not why else 'FAIL %sboot: %s' % (prefix, why))

    figs = bench_budget.figures(bench_budget.short_rows(rows))
    budget = [(n, b) for n, b in bench_budget.read_budget(path) if n in CHECKED]
    missing = set(CHECKED) - {n for n, _ in budget}
    for name in sorted(missing):
        print('FAIL %s%s: no budget in %s' % (prefix, name, path))
    for name, m, b, excess in bench_budget.compare(figs, budget):
        if m is None:
            print('FAIL %s%s: not measured' % (prefix, name))
        elif bench_budget.regressed(excess):
            print('FAIL %s%s: measured %s > budget %s (%+.1f%%)' % (
                prefix, name, bench_budget.fmt(name, m), bench_budget.fmt(name, b),
                100 * excess))
        else:
            print('PASS %s%s' % (prefix, name))
            if excess < -bench_budget.TOLERANCE:
                # Not a failure; but a budget left above what the code
                # needs lets a later regression through unseen.
                print('budget-check: %s measured %s, %.1f%% under its budget %s: '
                      'lower it in docs/bench/budget.txt' % (
                          name, bench_budget.fmt(name, m), -100 * excess,
                          bench_budget.fmt(name, b)), file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
