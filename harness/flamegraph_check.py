#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the main job's flame graphs as a browser renders them.

Usage: flamegraph_check.py REPORT_DIR PREFIX [SCREENSHOT]

Loads REPORT_DIR/index.html (written by flamegraph.py) in Debian's chromium,
headless, reads the DOM that d3-flame-graph rendered, and rebuilds each
graph's tree from what is drawn: a frame's parent is the frame one row
nearer the root whose span covers it. Prints one "PASS PREFIXname" or
"FAIL PREFIXname: why" line per check:
  render.TAG.MODE    the graph was drawn, every frame under one covering
                     it, and its root counts the samples
                     that the text summary gives for that recording;
  demo.defer_nested  fp,defer: main, run, level (8 deep), leaf are nested
                     in that order, and the stacks in read() that reach
                     main() are as many as the summary says;
  demo.fp_cut        fp: no main() above any leaf(), and none of the
                     stacks in read() reaches main() (the summary's 0);
  demo.dwarf         dwarf: the stacks in read() that reach main() are as
                     many as the summary says;
  bash.MODE          the stacks of bash that reach __libc_start_main are as
                     many as the summary says;
  screenshot         a PNG of the page (SCREENSHOT, default
                     REPORT_DIR/flamegraph.png).
"""
import os
import re
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

CHROMIUM = os.environ.get('CHROMIUM', 'chromium')
FLAGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--hide-scrollbars',
         '--virtual-time-budget=10000']
READ = re.compile(r'read_zero|iov_iter_zero')
SAMPLES = re.compile(r'\(([\d.]+)%, (\d+) samples\)$')
TRANSLATE = re.compile(r'translate\(([-\d.e]+),\s*([-\d.e]+)\)')


class Frame:
    def __init__(self, name, x, y, w):
        self.name, self.x, self.y, self.w = name, x, y, w
        self.samples = None
        self.parent = None
        self.children = []

    def ancestors(self):
        p = self.parent
        while p is not None:
            yield p
            p = p.parent


class Dom(HTMLParser):
    """Collects the frames drawn in each div.fg and the summary figures
    that each p.counts carries."""

    def __init__(self):
        super().__init__()
        self.graphs, self.counts, self.inverted = {}, {}, {}
        self.cur_graph, self.cur_frame, self.in_title = None, None, False
        self.depth = 0
        self.graph_depth = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.depth += 1
        if tag == 'div' and 'fg' in (a.get('class') or '').split():
            self.cur_graph = self.graphs.setdefault(a['id'], [])
            self.inverted[a['id']] = a.get('data-inverted') == '1'
            self.graph_depth = self.depth
        elif tag == 'p' and 'counts' in (a.get('class') or '').split():
            self.counts['fg-%s-%s' % (a['data-tag'], a['data-mode'].replace(',', '-'))] = \
                {k: int(a['data-' + k]) for k in ('samples', 'complete', 'of')}
        elif tag == 'g' and self.cur_graph is not None and 'frame' in \
                (a.get('class') or '').split():
            m = TRANSLATE.search(a.get('transform', ''))
            if m:
                self.cur_frame = Frame(a.get('name'), float(m.group(1)),
                                       float(m.group(2)), float(a.get('width', 0)))
                self.cur_graph.append(self.cur_frame)
        elif tag == 'title' and self.cur_frame is not None:
            self.in_title = True

    def handle_endtag(self, tag):
        if tag == 'title':
            self.in_title = False
        elif tag == 'g':
            self.cur_frame = None
        if self.graph_depth is not None and self.depth == self.graph_depth and tag == 'div':
            self.cur_graph, self.graph_depth = None, None
        self.depth -= 1

    def handle_data(self, data):
        if self.in_title and self.cur_frame is not None:
            m = SAMPLES.search(data.strip())
            if m:
                self.cur_frame.samples = int(m.group(2))


def link(frames, inverted):
    """Give each frame its parent: the frame one row nearer the root (at the
    bottom, or at the top when the graph is drawn inverted) whose span covers
    it. Returns the root."""
    if not frames:
        return None
    rows = sorted({f.y for f in frames}, reverse=not inverted)
    height = rows[0] - rows[1] if len(rows) > 1 else 0
    by_row = {}
    for f in frames:
        by_row.setdefault(f.y, []).append(f)
    for f in frames:
        below = by_row.get(f.y + height, []) if height else []
        for p in below:
            if p.x - 0.01 <= f.x and f.x + f.w <= p.x + p.w + 0.01:
                f.parent = p
                p.children.append(f)
                break
    roots = by_row[rows[0]]
    return roots[0] if len(roots) == 1 else None


def reaching(frames, inner, outer):
    """(reaching, all): samples in the outermost frames whose name matches
    inner, and those of them with a frame matching outer below them."""
    ok = n = 0
    for f in frames:
        if not inner(f.name) or any(inner(a.name) for a in f.ancestors()):
            continue
        n += f.samples
        if any(outer(a.name) for a in f.ancestors()):
            ok += f.samples
    return ok, n


def chain_ok(frames, names):
    """True when some frame named names[-1] has, as parent, grandparent and
    so on, frames named names[-2], names[-3], ... in that order."""
    for f in frames:
        if f.name != names[-1]:
            continue
        p, good = f.parent, True
        for want in reversed(names[:-1]):
            if p is None or p.name != want:
                good = False
                break
            p = p.parent
        if good:
            return True
    return False


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rep, prefix = sys.argv[1], sys.argv[2]
    shot = sys.argv[3] if len(sys.argv) > 3 else os.path.join(rep, 'flamegraph.png')
    url = 'file://' + os.path.abspath(os.path.join(rep, 'index.html'))
    results = []

    def add(name, ok, why=''):
        results.append('PASS %s%s' % (prefix, name) if ok else
                       'FAIL %s%s: %s' % (prefix, name, why))

    with tempfile.TemporaryDirectory() as prof:
        user = ['--user-data-dir=' + prof]
        try:
            dom = subprocess.run([CHROMIUM] + FLAGS + user + ['--window-size=1600,1000',
                                                              '--dump-dom', url],
                                 capture_output=True, text=True, timeout=120).stdout
        except (OSError, subprocess.TimeoutExpired) as e:
            dom = ''
            add('render', False, 'chromium: %s' % e)
        parser = Dom()
        parser.feed(dom)
        if os.path.exists(shot):
            os.unlink(shot)
        subprocess.run([CHROMIUM] + FLAGS + user + ['--window-size=1600,1100',
                                                    '--screenshot=' + os.path.abspath(shot), url],
                       capture_output=True, timeout=120)
    size = os.path.getsize(shot) if os.path.exists(shot) else 0
    add('screenshot', size > 10000, 'no screenshot (%d bytes)' % size)

    graphs = {}
    for tag in ('demo', 'bash'):
        for mode in ('fp', 'dwarf', 'fp,defer'):
            gid = 'fg-%s-%s' % (tag, mode.replace(',', '-'))
            frames = parser.graphs.get(gid, [])
            counts = parser.counts.get(gid)
            root = link(frames, parser.inverted.get(gid, False))
            name = 'render.%s.%s' % (tag, mode)
            if counts is None or root is None or any(f.samples is None for f in frames):
                add(name, False, 'no graph drawn (%d frames)' % len(frames))
                continue
            add(name, root.samples == counts['samples'] and
                all(f.parent is not None for f in frames if f is not root),
                'root counts %d samples, the summary %d' % (root.samples, counts['samples']))
            graphs[(tag, mode)] = (frames, counts)

    def is_read(n):
        return bool(READ.search(n))

    def is_main(n):
        return n == 'main'

    g = graphs.get(('demo', 'fp,defer'))
    if g:
        frames, counts = g
        nested = chain_ok(frames, ['main', 'run'] + ['level'] * 8 + ['leaf'])
        ok, n = reaching(frames, is_read, is_main)
        found = 'found' if nested else 'not found'
        add('demo.defer_nested', nested and (ok, n) == (counts['complete'], counts['of']),
            'main > run > level x8 > leaf %s; %d of %d stacks in read() reach main(), '
            'the summary says %d of %d' % (found, ok, n, counts['complete'], counts['of']))
    g = graphs.get(('demo', 'fp'))
    if g:
        frames, counts = g
        above = [f for f in frames if f.name == 'leaf' and
                 any(a.name == 'main' for a in f.ancestors())]
        ok, n = reaching(frames, is_read, is_main)
        add('demo.fp_cut', not above and ok == counts['complete'] == 0 and n == counts['of'],
            '%d leaf() frames above main(); %d of %d stacks in read() reach main(), '
            'the summary says %d of %d' % (len(above), ok, n, counts['complete'], counts['of']))
    g = graphs.get(('demo', 'dwarf'))
    if g:
        frames, counts = g
        ok, n = reaching(frames, is_read, is_main)
        add('demo.dwarf', (ok, n) == (counts['complete'], counts['of']),
            '%d of %d stacks in read() reach main(), the summary says %d of %d'
            % (ok, n, counts['complete'], counts['of']))
    for mode in ('fp', 'dwarf', 'fp,defer'):
        g = graphs.get(('bash', mode))
        if not g:
            continue
        frames, counts = g
        comm = [f for f in frames if f.name == 'bash' and f.parent is not None and
                f.parent.parent is None]
        n = sum(f.samples for f in comm)
        ok = sum(f.samples for f in frames if f.name.startswith('__libc_start_main') and
                 not any(a.name.startswith('__libc_start_main') for a in f.ancestors()) and
                 any(a in comm for a in f.ancestors()))
        add('bash.' + mode, (ok, n) == (counts['complete'], counts['of']),
            '%d of %d stacks of bash reach __libc_start_main, the summary says %d of %d'
            % (ok, n, counts['complete'], counts['of']))
    print('\n'.join(results))


if __name__ == '__main__':
    main()
