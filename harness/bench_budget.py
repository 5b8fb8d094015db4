# SPDX-License-Identifier: GPL-2.0
"""The instruction budget of docs/bench/budget.txt, shared by
harness/bench-report.py (the REGRESSED lines of a bench run) and
harness/budget-check.py (the test command's short -icount boot), so that
both read the console and compute each figure the same way.

A figure is taken from the "@ PART key=value ..." lines that
harness/guest/bench.sh prints, run by run, and its median over the runs of
one boot is compared with its budget. Under -icount every figure is an
instruction count: it does not move between runs or boots of one build,
which is what makes a budget a test and not a timing assertion.
"""
import os
import re
import statistics

BUDGET = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'docs',
                      'bench', 'budget.txt')
# Above its budget by more than this fraction, a figure has regressed.
TOLERANCE = 0.01
# The deliver part's depths that the short check boots (unwind.depths=).
SHORT_DEPTHS = ('8', '32')
LINE = re.compile(r'@ (\w+) (.*)$')


def parse_log(path):
    """[(part, {key: value})] of the "@ PART key=value ..." lines of a
    console log, in order."""
    rows = []
    with open(path, errors='replace') as f:
        for line in f:
            m = LINE.search(line.rstrip())
            if m:
                rows.append((m.group(1), dict(
                    f.split('=', 1) for f in m.group(2).split() if '=' in f)))
    return rows


def slope(pts):
    """Least-squares slope of [(x, y)], or None with fewer than 2 x values."""
    if len({x for x, _ in pts}) < 2:
        return None
    mx = statistics.mean(x for x, _ in pts)
    my = statistics.mean(y for _, y in pts)
    return (sum((x - mx) * (y - my) for x, y in pts) /
            sum((x - mx) ** 2 for x, _ in pts))


def short_rows(rows):
    """ROWS cut to what the short check's boot gives: the request part, and
    the frame-pointer deliver part at SHORT_DEPTHS only."""
    out = []
    for part, kv in rows:
        if part == 'request' or (
                part == 'deliver' and kv.get('axis') == 'depth' and
                'build' not in kv and kv.get('depth') in SHORT_DEPTHS):
            out.append((part, kv))
    return out


def figures(rows):
    """{name: [value of each run]} of the budget's figures that ROWS (the
    [(part, kv)] of one boot) hold; a figure none of its runs gives is
    left out. The names are those of budget.txt."""
    runs = {}

    def add(name, run, value):
        runs.setdefault(name, {})[run] = value

    for part, kv in rows:
        if part == 'request' and kv.get('set') == '1':
            # Per operation, one tracer: its first request in an entry,
            # and a request that finds its bit already set.
            add('request_first', kv['run'], float(kv['first']))
            add('request_pending', kv['run'], float(kv['fast']))
        elif part == 'deliver' and kv.get('axis') == 'depth' and 'build' not in kv:
            # Request, walk and callback over the same write() without a
            # request, one tracer, the frame-pointer build.
            if kv['depth'] in ('8', '32'):
                add('deliver_' + kv['depth'], kv['run'], float(kv['cost']))

    # Per frame: the slope of the delivery's cost over the frames walked,
    # run by run, over whatever depths the boot walked (8 to 480 in the
    # bench, 8 and 32 in the short check).
    for name, build in (('fp_step', None), ('sframe_step', 'sframe'),
                        ('table_step', 'table')):
        pts = {}
        for part, kv in rows:
            if part == 'deliver' and kv.get('axis') == 'depth' and \
                    kv.get('build') == build:
                pts.setdefault(kv['run'], []).append(
                    (float(kv['nr']), float(kv['cost'])))
        for run, p in pts.items():
            s = slope(p)
            if s is not None:
                add(name, run, s)

    # ftrace: a sys_enter_getppid event with userstacktrace_delay at depth
    # 32, per event over the event alone (an average over the calls, so
    # timer interrupts in the loop count: not quite exact).
    per = {}
    for part, kv in rows:
        if part == 'ftrace' and kv.get('depth') == '32':
            per.setdefault(kv['run'], {})[kv['variant']] = \
                float(kv['ns']) / float(kv['calls'])
    for run, v in per.items():
        if 'userstacktrace_delay' in v and 'event' in v:
            add('ftrace_delay_32', run, v['userstacktrace_delay'] - v['event'])
    return {name: [v for _, v in sorted(r.items())] for name, r in runs.items()}


def read_budget(path=BUDGET):
    """[(name, budget)] of budget.txt, in its order: "NAME VALUE" lines,
    "#" starts a comment."""
    out = []
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].split()
            if line:
                out.append((line[0], float(line[1])))
    return out


def fmt(name, v):
    """A figure as budget.txt writes it: one decimal for a per-frame step,
    else a whole number unless it has a fraction."""
    if name.endswith('_step'):
        return '%.1f' % v
    return '%.0f' % v if v == int(v) else '%.2f' % v


def compare(figs, budget):
    """[(name, measured median or None, budget, excess)] for each budget
    line, excess being measured / budget - 1 (None when not measured)."""
    out = []
    for name, b in budget:
        vals = figs.get(name)
        if not vals:
            out.append((name, None, b, None))
            continue
        m = statistics.median(vals)
        out.append((name, m, b, m / b - 1))
    return out


def regressed(excess):
    """Whether a figure EXCESS over its budget has regressed."""
    return excess is not None and excess > TOLERANCE
