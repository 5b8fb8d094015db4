#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The main job's report: a summary table, and flame graphs in one HTML page.

Usage: flamegraph.py LOG OUTDIR NODE_MODULES

Reads what the guest printed to the console log LOG:
  "=== SUMMARY TAG MODE SAMPLES DEFERRED BYTES SIZE COMPLETE OF"
      one line per recording (harness/guest/perf_modes.sh);
  "=== FOLDED TAG MODE" ... "=== FOLDED END"
      a recording's stacks in collapsed form, "comm;outer;...;inner COUNT".
Prints the summary table (program, mode, samples, complete stacks, bytes
per sample) and writes OUTDIR/index.html, with one flame graph per mode
(fp, dwarf, fp,defer) side by side for each program that has folded
stacks, and OUTDIR/TAG-MODE.folded, the stacks as flame graph tools read
them. The page is rendered by d3-flame-graph, the library perf's own
flamegraph report uses, inlined with d3 from NODE_MODULES so that it opens
offline from a file.
"""
import html
import json
import os
import re
import sys

TS = re.compile(r'^\[\s*\d+\.\d+\]\s?')
MODES = ('fp', 'dwarf', 'fp,defer')
# What each recording's tag stands for, in the order the table shows them.
PROGRAMS = (
    ('fp', 'demo, frame pointers'),
    ('sframe', 'demo, no FP, its SFrame section'),
    ('libc', "demo, no FP, through glibc's read(), no table"),
    ('demo', "demo, no FP, through glibc's read(), with its table"),
    ('bash', "Debian's bash, 10 calls deep, with tables"),
)
# What "complete" means for each program's stacks.
COMPLETE = {'bash': 'reach __libc_start_main'}
COMPLETE_DEFAULT = 'in read(), reach main()'


def read_log(path):
    """Return ({(tag, mode): summary fields}, {(tag, mode): {stack: n}})."""
    summary, folded = {}, {}
    cur = None
    with open(path, errors='replace') as f:
        for line in f:
            line = TS.sub('', line.rstrip('\r\n'))
            if line.startswith('=== SUMMARY '):
                w = line.split()
                summary[(w[2], w[3])] = [int(x) for x in w[4:10]]
            elif line.startswith('=== FOLDED END'):
                cur = None
            elif line.startswith('=== FOLDED '):
                w = line.split()
                cur = folded.setdefault((w[2], w[3]), {})
            elif cur is not None:
                stack, _, count = line.rpartition(' ')
                if stack and count.isdigit():
                    cur[stack] = cur.get(stack, 0) + int(count)
    return summary, folded


def tree(stacks, title):
    """d3-flame-graph's input: nested {name, value, children}, values
    inclusive, children in order of first appearance."""
    root = {'name': title, 'value': 0, 'children': []}
    index = {}
    for stack, n in sorted(stacks.items()):
        root['value'] += n
        node, path = root, ()
        for frame in stack.split(';'):
            path += (frame,)
            child = index.get(path)
            if child is None:
                child = {'name': frame, 'value': 0, 'children': []}
                if frame.endswith('_[k]'):
                    child['libtype'] = 'kernel'
                index[path] = child
                node['children'].append(child)
            child['value'] += n
            node = child
    return root


def summary_table(summary):
    rows = ['%-52s %-9s %8s %20s %10s' % ('program', 'mode', 'samples',
                                          'complete stacks', 'bytes/smp')]
    for tag, what in PROGRAMS:
        for mode in MODES:
            s = summary.get((tag, mode))
            if s is None:
                continue
            samples, _, nbytes, _, ok, of = s
            rows.append('%-52s %-9s %8d %20s %10d' % (
                what, mode, samples, '%d of %d' % (ok, of),
                nbytes // samples if samples else 0))
    return '\n'.join(rows)


def page(summary, folded, libs):
    graphs, sections = [], []
    for tag, what in PROGRAMS:
        if not any((tag, m) in folded for m in MODES):
            continue
        cols = []
        for mode in MODES:
            stacks = folded.get((tag, mode), {})
            s = summary.get((tag, mode), [0] * 6)
            gid = 'fg-%s-%s' % (tag, mode.replace(',', '-'))
            graphs.append({'id': gid, 'data': tree(stacks, 'all')})
            cols.append(
                '<div class="col"><h3><code>--call-graph %s</code></h3>'
                '<p class="counts" data-tag="%s" data-mode="%s" '
                'data-samples="%d" data-complete="%d" data-of="%d">'
                '%d samples; %d of %d stacks %s; %d bytes a sample</p>'
                '<div class="fg" id="%s" data-inverted="1"></div></div>' % (
                    mode, tag, mode, s[0], s[4], s[5], s[0], s[4], s[5],
                    html.escape(COMPLETE.get(tag, COMPLETE_DEFAULT)),
                    s[2] // s[0] if s[0] else 0, gid))
        sections.append('<section id="prog-%s"><h2>%s</h2><div class="row">%s'
                        '</div></section>' % (tag, html.escape(what),
                                              ''.join(cols)))
    data = json.dumps(graphs, separators=(',', ':')).replace('</', '<\\/')
    return TEMPLATE % {
        'css': libs['css'], 'd3': libs['d3'], 'fg': libs['fg'],
        'table': html.escape(summary_table(summary)),
        'sections': '\n'.join(sections), 'data': data}


TEMPLATE = '''<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Deferred user stacks: the main job</title>
<style>%(css)s</style>
<style>
body { font-family: sans-serif; margin: 12px; }
.row { display: flex; gap: 12px; }
.col { flex: 1 1 0; min-width: 0; }
h3 { margin: 4px 0; } p.counts { margin: 2px 0 6px; font-size: 13px; }
pre { font-size: 12px; }
</style></head><body>
<h1>Deferred user stacks, three ways of getting them</h1>
<p>Each program profiled with perf's <code>--call-graph fp</code>,
<code>dwarf</code> and <code>fp,defer</code>, on code built without frame
pointers. Each graph has the root on top and callees below their callers
(icicle layout, as pprof draws them); a frame's width is its share of the
samples. Frames marked <code>_[k]</code> are the kernel's. Hover a frame for
its count; click to zoom.</p>
<pre id="summary">%(table)s</pre>
%(sections)s
<script>%(d3)s</script>
<script>%(fg)s</script>
<script>
(function () {
  var graphs = %(data)s;
  graphs.forEach(function (g) {
    var el = document.getElementById(g.id);
    var chart = flamegraph.default()
      .width(Math.max(200, el.clientWidth))
      .cellHeight(14)
      .transitionDuration(0)
      .minFrameSize(0)
      .inverted(true)
      .sort(true);
    d3.select(el).datum(g.data).call(chart);
  });
  document.body.setAttribute('data-rendered', graphs.length);
})();
</script>
</body></html>
'''


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    log, outdir, modules = sys.argv[1:]
    summary, folded = read_log(log)
    if not summary:
        sys.exit('flamegraph.py: no "=== SUMMARY" lines in %s' % log)
    libs = {}
    for key, rel in (('d3', 'd3/dist/d3.min.js'),
                     ('fg', 'd3-flame-graph/dist/d3-flamegraph.umd.min.js'),
                     ('css', 'd3-flame-graph/dist/d3-flamegraph.css')):
        with open(os.path.join(modules, rel)) as f:
            libs[key] = f.read().replace('</script', '<\\/script')
    os.makedirs(outdir, exist_ok=True)
    for (tag, mode), stacks in folded.items():
        name = '%s-%s.folded' % (tag, mode.replace(',', '-'))
        with open(os.path.join(outdir, name), 'w') as f:
            for stack, n in sorted(stacks.items()):
                f.write('%s %d\n' % (stack, n))
    with open(os.path.join(outdir, 'index.html'), 'w') as f:
        f.write(page(summary, folded, libs))
    print(summary_table(summary))


if __name__ == '__main__':
    main()
