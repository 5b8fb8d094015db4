#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the console logs of harness/bench.sh into data.csv, table.txt and
plot.png in the results directory, and print the table.

Every figure is a median over runs with its spread as [min, max]. Ratios are
taken run by run (the same run or the same pair of boots) before the median.
The -icount boot's figures are then compared with docs/bench/budget.txt:
"REGRESSED NAME: ..." for one more than 1% above its budget.
"""
import csv
import glob
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_budget  # noqa: E402  (the console parsing and the budget, shared with budget-check.py)
from bench_budget import slope  # noqa: E402

out = sys.argv[1]
rows = []			# (log, part, {key: value})
for path in sorted(glob.glob(os.path.join(out, 'console-*.log'))):
    log = os.path.basename(path)[len('console-'):-len('.log')]
    rows.extend((log, part, kv) for part, kv in bench_budget.parse_log(path))

with open(os.path.join(out, 'data.csv'), 'w', newline='') as f:
    keys = sorted({k for _, _, kv in rows for k in kv})
    w = csv.writer(f)
    w.writerow(['log', 'part'] + keys)
    for log, part, kv in rows:
        w.writerow([log, part] + [kv.get(k, '') for k in keys])


def sel(part, log=None, **match):
    return [kv for lg, p, kv in rows
            if p == part and (log is None or re.fullmatch(log, lg))
            and all(kv.get(k) == str(v) for k, v in match.items())]


def build(rows, b):
    """The rows of build B: 'fp' (no build= key) or 'sframe'."""
    return [kv for kv in rows if kv.get('build', 'fp') == b]


def num(kv, k):
    return float(kv[k])


def stat(vals):
    """(median, min, max), or None for no values."""
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return statistics.median(vals), min(vals), max(vals)


def fmt(s, spec='%.0f', pct=False):
    if s is None:
        return 'n/a'
    if pct:
        return '%+.2f%% [%+.2f, %+.2f]' % tuple(100 * (v - 1) for v in s)
    return (spec + ' [' + spec + ', ' + spec + ']') % s


lines = []
targets = []


def p(s=''):
    lines.append(s)


def target(name, ok, detail):
    targets.append('%-6s %s: %s' % ('MET' if ok else 'MISSED', name, detail))


env = open(os.path.join(out, 'env.txt')).read().strip() if os.path.exists(
    os.path.join(out, 'env.txt')) else ''
p(env)
p()
p('Figures: median [min, max] over runs. Ratios are taken per run (or per pair')
p('of boots) first. "ticks" are guest TSC ticks (get_cycles()/rdtsc).')

# 1. Idle cost of the hook.
p()
p('1. Idle cost of the exit-to-user hook: getppid() loop, depth 8, no tracer')


def idle(prefix):
    per_boot = {}
    for lg, part, kv in rows:
        m = re.fullmatch(prefix + r'-(patched|base)-(\d+)', lg)
        if part == 'idle' and m:
            per_boot.setdefault((m.group(1), int(m.group(2))), []).append(
                num(kv, 'ns') / num(kv, 'calls'))
    pairs = sorted({i for _, i in per_boot})
    ratios = [statistics.median(per_boot[('patched', i)]) /
              statistics.median(per_boot[('base', i)])
              for i in pairs if ('patched', i) in per_boot and ('base', i) in per_boot]
    pat = stat([v for (k, _), vs in per_boot.items() if k == 'patched' for v in vs])
    base = stat([v for (k, _), vs in per_boot.items() if k == 'base' for v in vs])
    return pat, base, stat(ratios), len(pairs)


pat, base, ratio, npairs = idle('idle')
if pat:
    p('   wall time (%d boot pairs, alternating, 3 runs each):' % npairs)
    p('     patched  %s ns/call  = %.0f calls/s' % (fmt(pat, '%.1f'), 1e9 / pat[0]))
    p('     base     %s ns/call  = %.0f calls/s' % (fmt(base, '%.1f'), 1e9 / base[0]))
    p('     patched/base time per call: %s' % fmt(ratio, pct=True))
    target('idle hook within 0.5% of base (wall)', abs(ratio[0] - 1) <= 0.005,
           'patched/base %+.2f%% (spread %+.2f..%+.2f%%)' %
           tuple(100 * (v - 1) for v in ratio))
ipat, ibase, iratio, inpairs = idle('icount')
if ipat:
    p('   instructions (-icount shift=0: 1 virtual ns = 1 instruction, %d boot pairs):' % inpairs)
    p('     patched  %s instructions/call' % fmt(ipat, '%.1f'))
    p('     base     %s instructions/call' % fmt(ibase, '%.1f'))
    p('     patched/base: %s' % fmt(iratio, pct=True))
    target('idle hook within 0.5% of base (instructions)', abs(iratio[0] - 1) <= 0.005,
           'patched/base %+.2f%%' % (100 * (iratio[0] - 1)))

def bench(log, unit, tag):
    """Sections 2 to 6 for the bench boot LOG, whose time unit is UNIT."""
    prof, scal, ft = {}, {}, {}
    p()
    p('=' * 78)
    p('Bench boot "%s": times are %s' % (log, unit))
    # 2. Request cost.
    p()
    p('2. Request cost in the kernel (ticks per operation), against atomic_long_inc()')
    p('   %-9s %-22s %-22s %-22s %-18s %s' % ('tracers', 'first of entry', 'first, other tracer',
                                              'already pending', 'atomic inc', 'first/atomic  pending/atomic'))
    for s in ('1', '8', 'all'):
        r = sel('request', log, set=s)
        if not r:
            continue
        n = r[0]['tracers']
        f = stat([num(kv, 'first') for kv in r])
        o = stat([num(kv, 'others') for kv in r]) if n != '1' else None
        fa = stat([num(kv, 'fast') for kv in r])
        a = stat([num(kv, 'atomic') for kv in r])
        rf = stat([num(kv, 'first') / num(kv, 'atomic') for kv in r])
        rp = stat([num(kv, 'fast') / num(kv, 'atomic') for kv in r])
        p('   %-9s %-22s %-22s %-22s %-18s %.1fx         %.2fx' % (
            '%s (%s)' % (s, n), fmt(f), fmt(o) if o else '-', fmt(fa, '%.1f'), fmt(a, '%.1f'),
            rf[0], rp[0]))

    # 3. Profiling.
    p()
    p('3. Profiling unwind_demo -n %s (64 KiB read()s) with perf record -e cpu-clock -c 100000'
      % (sel('profile', log) or [{}])[0].get('loops', '?'))
    p('   %-5s %-9s %-24s %-10s %-12s %-22s %-10s' % ('depth', 'mode', 'slowdown vs no perf',
                                                      'B/sample', 'perf.data', 'report time vs fp',
                                                      'complete'))
    def profile_rows(b, prof):
        for d in ('8', '32', '128'):
            none = {kv['run']: num(kv, 'ns')
                    for kv in build(sel('profile', log, depth=d, mode='none'), b)}
            fpr = {kv['run']: num(kv, 'report_ns')
                   for kv in build(sel('profile', log, depth=d, mode='fp'), b)}
            for mode in ('fp', 'dwarf', 'fp,defer'):
                r = build(sel('profile', log, depth=d, mode=mode), b)
                if not r:
                    continue
                slow = stat([num(kv, 'ns') / none[kv['run']] for kv in r if kv['run'] in none])
                bps = stat([(num(kv, 'sample_bytes') + num(kv, 'record_bytes')) /
                            num(kv, 'samples') for kv in r])
                size = stat([num(kv, 'size') / 1024 for kv in r])
                rep = stat([num(kv, 'report_ns') / fpr[kv['run']] for kv in r if kv['run'] in fpr])
                comp = stat([100 * num(kv, 'complete') / max(1, num(kv, 'own_samples'))
                             for kv in r])
                prof[(d, mode)] = dict(slow=slow, bps=bps, size=size, rep=rep, comp=comp)
                p('   %-5s %-9s %-24s %-10s %-12s %-22s %s' % (
                    d, mode, fmt(slow, '%.3f'), '%.0f' % bps[0], '%.0f KiB' % size[0],
                    fmt(rep, '%.2f'), '%.1f%%' % comp[0]))

    profile_rows('fp', prof)
    sprof = {}
    if build(sel('profile', log), 'sframe'):
        p('   no-FP+SFrame build (unwind_demo_sframe: -O2 -fomit-frame-pointer -Wa,--gsframe;')
        p('   slowdown and report time against the same build):')
        profile_rows('sframe', sprof)
    for d in ('8', '32', '128'):
        if (d, 'fp,defer') not in prof:
            continue
        df, fp, dw = prof[(d, 'fp,defer')], prof[(d, 'fp')], prof[(d, 'dwarf')]
        target(tag + 'depth %s: fp,defer B/sample <= 1/20 of dwarf' % d,
               df['bps'][0] <= dw['bps'][0] / 20,
               '%.0f vs %.0f (1/%.0f)' % (df['bps'][0], dw['bps'][0], dw['bps'][0] / df['bps'][0]))
        target(tag + 'depth %s: fp,defer B/sample <= fp' % d, df['bps'][0] <= fp['bps'][0],
               '%.0f vs %.0f' % (df['bps'][0], fp['bps'][0]))
        target(tag + 'depth %s: fp,defer slowdown <= fp + 5%%' % d,
               df['slow'][0] <= fp['slow'][0] * 1.05,
               '%.3f vs %.3f' % (df['slow'][0], fp['slow'][0]))
        target(tag + 'depth %s: fp,defer stacks as complete as dwarf' % d,
               df['comp'][0] >= dw['comp'][0],
               '%.1f%% vs %.1f%% (fp %.1f%%)' % (df['comp'][0], dw['comp'][0], fp['comp'][0]))
    for d in ('8', '32', '128'):
        if (d, 'fp,defer') not in sprof or (d, 'dwarf') not in sprof:
            continue
        df, fp, dw = sprof[(d, 'fp,defer')], sprof[(d, 'fp')], sprof[(d, 'dwarf')]
        target(tag + 'no-FP+SFrame depth %s: fp,defer stacks as complete as dwarf' % d,
               df['comp'][0] >= dw['comp'][0],
               '%.1f%% vs %.1f%% (fp %.1f%%)' % (df['comp'][0], dw['comp'][0], fp['comp'][0]))

    # 4. Dedup.
    p()
    p('4. Walks per kernel entry: unwind_demo -d 8 -n 200 -s 1048576 (long read()s),')
    p('   perf record --call-graph fp,defer; walks counted by the kernel at exit')
    r = sel('dedup', log)
    if r:
        spe = stat([num(kv, 'samples') / num(kv, 'entries') for kv in r])
        wpe = stat([num(kv, 'walks') / num(kv, 'entries') for kv in r])
        rpe = stat([num(kv, 'one_record') / num(kv, 'entries') for kv in r])
        fpb = stat([num(kv, 'fp_bytes') / num(kv, 'fp_samples') for kv in r])
        dfb = stat([(num(kv, 'sample_bytes') + num(kv, 'record_bytes')) / num(kv, 'samples')
                    for kv in r])
        p('   samples per entry with a request: %s' % fmt(spe, '%.2f'))
        p('   user walks per such entry:        %s' % fmt(wpe, '%.3f'))
        p('   entries with exactly one record:  %s' % fmt(tuple(100 * v for v in rpe), '%.1f%%'))
        p('   B/sample here: fp %s, fp,defer %s' % (fmt(fpb), fmt(dfb)))
        exact = all(kv['walks'] == kv['entries'] for kv in r)
        target(tag + 'exactly one walk per entry with a request', exact,
               'walks == entries in %d of %d runs' %
               (sum(kv['walks'] == kv['entries'] for kv in r), len(r)))
        target(tag + 'long entries: fp,defer B/sample <= fp', dfb[0] <= fpb[0],
               '%.0f vs %.0f' % (dfb[0], fpb[0]))

    # 5. Scaling.
    p()
    p('5. Scaling: request + delivery (walk, callbacks) per system call, ticks,')
    p('   over the same system call without a request ("fire K" - "fire 0")')
    for axis, key in (('depth', 'depth'), ('tracers', 'set'), ('threads', 'threads')):
        r = build(sel('deliver', log, axis=axis), 'fp')
        vals = sorted({kv[key] for kv in r}, key=lambda v: (v == 'all', int(v) if v.isdigit() else 0))
        for v in vals:
            rr = [kv for kv in r if kv[key] == v]
            cost = stat([num(kv, 'cost') for kv in rr])
            base = stat([num(kv, 'base') for kv in rr])
            ok = all(kv['callbacks'] == kv['expected'] for kv in rr)
            scal[(axis, v)] = cost
            extra = ''
            if axis == 'depth':
                extra = ', %s frames' % rr[0]['nr']
            if axis == 'tracers':
                extra = ' (%s tracers)' % rr[0]['tracers']
            p('   %-8s %-5s cost %-24s base syscall %-6.0f callbacks %s%s' % (
                axis, v, fmt(cost), base[0], 'all delivered' if ok else 'MISSING', extra))

    # 5, no-FP builds: the same by depth, walked through the program's own
    # SFrame section, and through a table loaded for its build-id; per frame.
    def slopes(rows):
        runs = {}
        for kv in rows:
            runs.setdefault(kv['run'], []).append((num(kv, 'nr'), num(kv, 'cost')))
        return {run: slope(pts) for run, pts in runs.items()}
    for b, title, name, label, limit in (
            ('sframe', 'no-FP+SFrame build (unwind_bench_sframe: -O2 -fomit-frame-pointer '
             '-Wa,--gsframe):', 'SFrame step <= 2x frame-pointer step', 'SFrame', 2),
            ('table', 'the same without PT_GNU_SFRAME (unwind_bench_table), through the '
             'table eh2sframe loaded:', 'loaded-table step <= 1.5x frame-pointer step',
             'table', 1.5)):
        sr = build(sel('deliver', log, axis='depth'), b)
        if not sr:
            continue
        p('   ' + title)
        for v in sorted({kv['depth'] for kv in sr}, key=int):
            rr = [kv for kv in sr if kv['depth'] == v]
            cost = stat([num(kv, 'cost') for kv in rr])
            base = stat([num(kv, 'base') for kv in rr])
            ok = all(kv['callbacks'] == kv['expected'] for kv in rr)
            p('   %-8s %-5s cost %-24s base syscall %-6.0f callbacks %s, %s frames' % (
                'depth', v, fmt(cost), base[0], 'all delivered' if ok else 'MISSING',
                rr[0]['nr']))
        fs = slopes(build(sel('deliver', log, axis='depth'), 'fp'))
        ss = slopes(sr)
        fps, sfs = stat(fs.values()), stat(ss.values())
        ratio = stat([ss[r] / fs[r] for r in ss if fs.get(r) and ss[r] is not None])
        if fps and sfs:
            p('   per frame (least-squares slope of cost over frames walked, depths 8 to 480):')
            p('     frame-pointer step %s, %s step %s, %s/fp %s' % (
                fmt(fps, '%.1f'), label, fmt(sfs, '%.1f'), label, fmt(ratio, '%.2f')))
            target(tag + name, ratio[0] <= limit,
                   '%.1f vs %.1f ticks per frame (%.2fx)' % (sfs[0], fps[0], ratio[0]))

    # 5, context: the delivery at depth 32 with a thread context
    # registered, the event off and on, over the same delivery alone.
    cr = build(sel('deliver', log, axis='context'), 'fp')
    if cr:
        p('   thread context (unwind_bench -c: OTEP 4947 record, 32-byte attribute), depth 32:')
        runs = {}
        for kv in cr:
            runs.setdefault(kv['run'], {})[kv['set']] = num(kv, 'cost')
        for st in ('alone', 'off', 'on'):
            cost = stat([num(kv, 'cost') for kv in cr if kv['set'] == st])
            ok = all(kv['callbacks'] == kv['expected'] for kv in cr if kv['set'] == st)
            p('   %-8s %-5s cost %-24s callbacks %s' % (
                'context', st, fmt(cost), 'all delivered' if ok else 'MISSING'))
        for st in ('off', 'on'):
            d = stat([v[st] - v['alone'] for v in runs.values() if st in v and 'alone' in v])
            p('     %-3s - alone, per delivery: %s' % (st, fmt(d)))

    # 6. ftrace.
    p()
    p('6. ftrace: sys_enter_getppid event, cost per event over the event alone (ns)')
    p('   %-5s %-28s %-28s %s' % ('depth', 'userstacktrace (in place)', 'userstacktrace_delay',
                                  'delay/in-place'))
    for d in ('8', '32', '128'):
        per = {}
        for kv in sel('ftrace', log, depth=d):
            per.setdefault(kv['run'], {})[kv['variant']] = num(kv, 'ns') / num(kv, 'calls')
        ip = stat([v['userstacktrace'] - v['event'] for v in per.values() if len(v) == 4])
        dl = stat([v['userstacktrace_delay'] - v['event'] for v in per.values() if len(v) == 4])
        rt = stat([(v['userstacktrace_delay'] - v['event']) / (v['userstacktrace'] - v['event'])
                   for v in per.values() if len(v) == 4])
        if ip:
            ft[d] = (ip, dl)
            p('   %-5s %-28s %-28s %.2fx' % (d, fmt(ip), fmt(dl), rt[0]))
    p('   (in place records at most 8 frames; delayed records the whole stack)')

    # 7. SFrame discovery.
    r = sel('discover', log)
    if r:
        p()
        p('7. SFrame discovery: unwind_bench_dso (no FP, SFrame) dlopen()s libunwind_bench_01.so')
        p('   (one frame, SFrame), times "fire 1" from under its frame twice, then "fire 0",')
        p('   and dlclose()s it; %s times per run. Ticks per write(), medians per run:' % r[0]['n'])
        first = stat([num(kv, 'first') for kv in r])
        exam = stat([num(kv, 'examined') for kv in r])
        base = stat([num(kv, 'base') for kv in r])
        disc = stat([num(kv, 'discovery') for kv in r])
        walk = stat([num(kv, 'walk') for kv in r])
        p('   first walk to meet the fresh mapping  %s' % fmt(first))
        p('   the same walk, mapping examined       %s' % fmt(exam))
        p('   no request ("fire 0")                 %s' % fmt(base))
        p('   discovery (first - examined)          %s, %.1fx the walk' % (
            fmt(disc), disc[0] / max(1, walk[0])))
        p('   the walk itself (examined - fire 0)   %s, %s frames' % (fmt(walk), r[0]['nr']))

    # 8. SFrame registry memory.
    r = sel('registry', log)
    if r:
        p()
        p('8. SFrame registry memory per mm: unwind_bench_dso (no FP, SFrame) with %s'
          % r[0]['libs'])
        p('   dlopen()ed libraries (SFrame), after one walk through all of them')
        by = stat([num(kv, 'bytes') for kv in r])
        kv = r[0]
        p('   mappings %s, file-backed executable %s, examined %s, with a section %s' % (
            kv['vmas'], kv['exec'], kv['examined'], kv['sections']))
        p('   bytes of entries (ksize): %s = %.0f per section; before the walk: %s' % (
            fmt(by), by[0] / max(1, num(kv, 'sections')), kv['before_bytes']))
        p('   frames walked %s; mappings without a section hold a sentinel (0 bytes);'
          % kv['nr'])
        p('   every VMA also carries the 8-byte vma->sframe_info pointer (%d bytes here)'
          % (8 * int(kv['vmas'])))

    return prof, scal, ft


plots = {}
for log, unit, tag in (('bench', 'wall time under TCG (ns, TSC ticks)', '[wall] '),
                       ('bench-icount', 'instruction counts (-icount shift=0: '
                        'guest ns and TSC ticks count instructions)', '[icount] ')):
    if sel('request', log) or sel('profile', log) or sel('deliver', log):
        plots[log] = bench(log, unit, tag)


def bpf_part(log, unit):
    """Section 9 for boot LOG: BPF's deferred stacks against perf's, from
    the bpf part (bpf_unwind --bench); only for a boot that ran it."""
    r = sel('bpf', log)
    if not r:
        return
    p()
    p('9. BPF as a profiler against perf (bpf_unwind --bench), boot "%s", %s' % (log, unit))
    p('   request + delivery per getppid() at the bottom of DEPTH frame-pointer frames,')
    p('   over the same call with nothing attached (X - none) and over the event alone')
    p('   (X - event: a BPF program that only counts, a perf sample without a callchain)')
    p('   %-5s %-6s %-20s %-20s %-20s %-8s %-20s %s' % (
        'depth', 'frames', 'none', 'bpf - none', 'perf - none', 'bpf/perf', 'bpf - event',
        'perf - event'))

    def per_run(d, mode):
        return {kv['run']: kv for kv in sel('bpf', log, depth=d, mode=mode)}

    def diff(a, b):
        return stat([num(a[k], 'per_call') - num(b[k], 'per_call') for k in a if k in b])

    def counted(rows, keys):
        return all(kv[k] == kv['expected'] for kv in rows for k in keys)

    depths = sorted({kv['depth'] for kv in r}, key=int)
    for d in depths:
        none, bpf, perf = per_run(d, 'none'), per_run(d, 'bpf'), per_run(d, 'perf')
        bev, pev = per_run(d, 'bpf_event'), per_run(d, 'perf_event')
        if not (none and bpf and perf):
            continue
        ratio = stat([(num(bpf[k], 'per_call') - num(none[k], 'per_call')) /
                      (num(perf[k], 'per_call') - num(none[k], 'per_call'))
                      for k in bpf if k in perf and k in none])
        ok = (counted(bpf.values(), ('requests', 'deliveries')) and
              counted(perf.values(), ('samples', 'records')) and
              all(kv['lost'] == '0' for kv in perf.values()))
        p('   %-5s %-6s %-20s %-20s %-20s %-8s %-20s %s%s' % (
            d, '%s/%s' % (next(iter(bpf.values()))['nr'], next(iter(perf.values()))['nr']),
            fmt(stat([num(kv, 'per_call') for kv in none.values()])),
            fmt(diff(bpf, none)), fmt(diff(perf, none)), '%.2fx' % ratio[0],
            fmt(diff(bpf, bev)), fmt(diff(perf, pev)),
            '' if ok else '  (MISSING deliveries or records)'))
    p('   (frames: the last delivery\'s, BPF\'s / perf\'s record\'s)')
    # The anchor of a frame's cost: perf's own frame-pointer walk, in place
    # (the walk it runs in an NMI), over the sample without a callchain; its
    # slope between the two depths is its cost per frame, beside the
    # deferred walk's own slope (bpf over its event alone).
    fp = {d: per_run(d, 'perf_fp') for d in depths}
    if len(depths) >= 2 and all(fp[d] for d in depths):
        lo, hi = depths[0], depths[-1]

        def slope(mode, base):
            a, b = per_run(lo, mode), per_run(hi, mode)
            ba, bb = per_run(lo, base), per_run(hi, base)
            out = []
            for k in a:
                if k in b and k in ba and k in bb:
                    frames = int(b[k]['nr']) - int(a[k]['nr'])
                    if frames > 0:
                        out.append(((num(b[k], 'per_call') - num(bb[k], 'per_call')) -
                                    (num(a[k], 'per_call') - num(ba[k], 'per_call'))) / frames)
            return stat(out)
        p('   per frame, between depths %s and %s: perf\'s frame-pointer walk in place '
          '(perf_fp - perf_event) %s; the deferred walk with BPF\'s delivery '
          '(bpf - bpf_event) %s' % (
              lo, hi, fmt(slope('perf_fp', 'perf_event')), fmt(slope('bpf', 'bpf_event'))))
    p('   off-CPU pattern (tp_btf/sched_switch: request and time on switch-out, the time')
    p('   joined to the stack at the delivery), two threads on one CPU passing a byte over')
    p('   pipes, per context switch (half a round trip):')
    p('   %-5s %-6s %-20s %-24s %s' % ('depth', 'frames', 'switch alone', 'programs\' cost',
                                       'requests / deliveries / joined per switch'))
    for d in depths:
        sn, so = per_run(d, 'switch_none'), per_run(d, 'switch_offcpu')
        if not (sn and so):
            continue
        kv = next(iter(so.values()))
        sw = 2 * (int(kv['calls']) + 16)
        p('   %-5s %-6s %-20s %-24s %.3f / %.3f / %.3f' % (
            d, kv['nr'], fmt(stat([num(v, 'per_call') / 2 for v in sn.values()])),
            fmt(stat([(num(so[k], 'per_call') - num(sn[k], 'per_call')) / 2
                      for k in so if k in sn])),
            num(kv, 'requests') / sw, num(kv, 'deliveries') / sw, num(kv, 'joined') / sw))


for log, unit in (('bench', 'wall time under TCG (ns)'),
                  ('bench-icount', 'instructions (-icount shift=0)')):
    bpf_part(log, unit)

p()
p('Targets:')
lines.extend('   ' + t for t in targets)


def budget():
    """The -icount boot's figures against docs/bench/budget.txt. Only
    instruction counts: wall time under TCG moves by far more than the
    1% a budget allows."""
    irows = [(part, kv) for lg, part, kv in rows if lg == 'bench-icount']
    if not irows:
        return
    figs = bench_budget.figures(irows)
    fmt = bench_budget.fmt
    p()
    p('Budget (docs/bench/budget.txt; instructions, the -icount boot, median '
      'of its runs; REGRESSED: more than 1% above):')
    for name, m, b, excess in bench_budget.compare(figs, bench_budget.read_budget()):
        if m is None:
            p('not measured %s (budget %s)' % (name, fmt(name, b)))
        elif bench_budget.regressed(excess):
            p('REGRESSED %s: measured %s > budget %s (%+.1f%%)' % (
                name, fmt(name, m), fmt(name, b), 100 * excess))
        else:
            p('within budget %s: measured %s, budget %s (%+.1f%%)' % (
                name, fmt(name, m), fmt(name, b), 100 * excess))
    # The test command's check takes the frame-pointer step from depths 8
    # and 32 alone, against the same budget line: say so if that stops
    # being the slope over all depths, and the check needs its own line.
    two = bench_budget.figures(bench_budget.short_rows(irows)).get('fp_step')
    full = figs.get('fp_step')
    if two and full and abs(statistics.median(two) / statistics.median(full) - 1) > \
            bench_budget.TOLERANCE:
        p('NOTE fp_step: %s between depths 8 and 32 (the test command\'s check) '
          'against %s over all depths: give the check its own budget line' % (
              fmt('fp_step', statistics.median(two)),
              fmt('fp_step', statistics.median(full))))


budget()

table = '\n'.join(lines) + '\n'
open(os.path.join(out, 'table.txt'), 'w').write(table)
print(table)

# The plot: four panels, from the deterministic icount boot when there is one.
plog = 'bench-icount' if 'bench-icount' in plots else 'bench'
prof, scal, ft = plots.get(plog, ({}, {}, {}))
unit = 'instructions' if plog == 'bench-icount' else 'TSC ticks'
tunit = 'instructions' if plog == 'bench-icount' else 'ns'
dat = os.path.join(out, 'plot.dat')
with open(dat, 'w') as f:
    f.write('# depth fp_bps dwarf_bps defer_bps fp_slow dwarf_slow defer_slow\n')
    for d in ('8', '32', '128'):
        if (d, 'fp,defer') in prof:
            f.write('%s %s\n' % (d, ' '.join(
                '%.3f' % prof[(d, m)][k][0] for k in ('bps', 'slow')
                for m in ('fp', 'dwarf', 'fp,defer')).replace('\n', '')))
    f.write('\n\n# depth deliver_cost\n')
    for d in ('8', '32', '128', '480'):
        if ('depth', d) in scal and scal[('depth', d)]:
            f.write('%s %.0f\n' % (d, scal[('depth', d)][0]))
    f.write('\n\n# depth inplace delay\n')
    for d in ('8', '32', '128'):
        if d in ft:
            f.write('%s %.0f %.0f\n' % (d, ft[d][0][0], ft[d][1][0]))
# Columns of block 0: depth, then bps for fp, dwarf, fp,defer, then slowdowns.
gp = '''set terminal pngcairo size 1200,900 font ",10" noenhanced
set output "%(png)s"
set multiplot layout 2,2 title "Deferred user-space unwinding under QEMU TCG, %(plog)s boot (%(date)s)"
set key top left
set logscale x 2
set xtics (8, 32, 128, 480)
set xrange [6:170]
set xlabel "user stack depth (frames)"
set grid
set logscale y
set ylabel "bytes per sample"
set title "perf.data bytes per sample (samples + deferred records)"
plot "%(dat)s" index 0 using 1:2 with linespoints title "fp", \\
     "" index 0 using 1:3 with linespoints title "dwarf (8 KiB)", \\
     "" index 0 using 1:4 with linespoints title "fp,defer"
unset logscale y
set ylabel "workload time / time without perf"
set title "slowdown of the profiled demo"
plot "%(dat)s" index 0 using 1:5 with linespoints title "fp", \\
     "" index 0 using 1:6 with linespoints title "dwarf (8 KiB)", \\
     "" index 0 using 1:7 with linespoints title "fp,defer"
set xrange [6:640]
set ylabel "%(unit)s per system call"
set title "deferred request + walk + callback, one tracer"
plot "%(dat)s" index 1 using 1:2 with linespoints title "fire 1 - fire 0"
set xrange [6:170]
set ylabel "%(tunit)s per event over the event alone"
set title "ftrace: user stack per sys_enter_getppid event"
plot "%(dat)s" index 2 using 1:2 with linespoints title "userstacktrace (max 8 frames)", \\
     "" index 2 using 1:3 with linespoints title "userstacktrace_delay"
unset multiplot
''' % dict(plog=plog, unit=unit, tunit=tunit, png=os.path.join(out, 'plot.png'), dat=dat,
           date=env.split('\n')[0].replace('date: ', '') if env else '')
open(os.path.join(out, 'plot.gp'), 'w').write(gp)
try:
    subprocess.run(['gnuplot', os.path.join(out, 'plot.gp')], check=True)
except (OSError, subprocess.CalledProcessError) as e:
    print('plot: gnuplot failed: %s' % e, file=sys.stderr)
