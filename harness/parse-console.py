#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a QEMU console log into test results.

Usage: parse-console.py LOG PREFIX [--progs DIR]

Prints one line per result, "PASS name" or "FAIL name: reason", where names
are prefixed with PREFIX; a failed program result is followed by the TAP
comments ("# ...") its program printed since its previous result, the last
CONTEXT of them, each as "  | # ...", so that a failure seen only in CI's
output says what the check saw. Counted:
  - every KUnit test case the kernel ran at boot (KTAP), and a missing
    result against a suite's plan;
  - every TAP result of every program /init ran, a plan mismatch, results
    not numbered 1..N in order, a non-zero exit status and a program that
    never finished;
  - a symbol check of the unwind_user_fp frames, when --progs is given;
  - any panic, oops, BUG, WARNING, lockdep or KASAN report in the log, and a
    boot that never reached "=== ALL DONE" (hang or crash). A KCSAN report
    of a base-kernel function that guest/kcsan_skip.sh lists is left out,
    as KCSAN's own filter leaves it out once that script has run.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import walk_report  # noqa: E402  (the main job's own report code)

TS = re.compile(r'^\[\s*\d+\.\d+\]\s?')
RESULT = re.compile(r'^(\s*)(not ok|ok) (\d+) (?:- )?([^#]*?)\s*(#.*)?$')
PLAN = re.compile(r'^(\s*)1\.\.(\d+)')
SPLATS = [
    (re.compile(r'Kernel panic'), 'kernel panic'),
    (re.compile(r'\bOops\b|general protection fault'), 'oops'),
    (re.compile(r'\bBUG:'), 'BUG report'),
    (re.compile(r'WARNING:'), 'WARNING report'),
    (re.compile(r'possible circular locking|inconsistent lock state|'
                r'possible recursive locking|suspicious RCU usage|'
                r'INFO: lockdep|DEBUG_LOCKS_WARN_ON'), 'lockdep report'),
    (re.compile(r'KASAN:'), 'KASAN report'),
    (re.compile(r'sleeping function called from invalid context'),
     'atomic-sleep report'),
    (re.compile(r'Call Trace:'), 'kernel stack dump'),
]
KCSAN_SKIP = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          'guest', 'kcsan_skip.sh')
KCSAN_ACCESS = re.compile(r'^(read|write|read-write)( \(marked\))? to ')
FRAME = re.compile(r'^\s*([A-Za-z0-9_.]+)\+0x')
CONTEXT = 15


def kcsan_skipped():
    """The base-kernel functions whose KCSAN reports the race job's first
    entry (guest/kcsan_skip.sh) tells KCSAN to leave out: its one list."""
    with open(KCSAN_SKIP) as f:
        m = re.search(r'^SKIP="([^"]*)"', f.read(), re.M)
    if not m:
        sys.exit('%s: no SKIP="..." list' % KCSAN_SKIP)
    return set(m.group(1).split())


def drop_skipped_kcsan(lines):
    """Leave out the KCSAN reports that KCSAN's own filter would have
    dropped (the top frame of either access is listed), wherever they are
    printed: the filter is set from user space, and a base-kernel race
    during boot is reported before it."""
    skip, out, i = kcsan_skipped(), [], 0
    while i < len(lines):
        if 'BUG: KCSAN:' not in lines[i]:
            out.append(lines[i])
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith('====='):
            j += 1
        # Each access's top frame (the title names the same two) follows
        # its line ("read to ..."), or the title for a race at unknown
        # origin.
        tops = set()
        for k in range(i, j):
            if (k == i or KCSAN_ACCESS.match(lines[k])) and k + 1 < j:
                m = FRAME.match(lines[k + 1])
                if m:
                    tops.add(m.group(1))
        if tops & skip:
            i = j + 1
        else:
            out.append(lines[i])
            i += 1
    return out


def main():
    log, prefix = sys.argv[1], sys.argv[2]
    progs = None
    if '--progs' in sys.argv:
        progs = sys.argv[sys.argv.index('--progs') + 1]
    with open(log, errors='replace') as f:
        lines = [TS.sub('', line.rstrip('\r\n')) for line in f]

    results = []

    def add(name, ok, why='', context=()):
        results.append((prefix + name, ok, why, list(context)))

    # Kernel-side KUnit, before user space starts.
    try:
        us = next(i for i, l in enumerate(lines) if l.startswith('=== USERSPACE'))
    except StopIteration:
        us = len(lines)
    suite_plan, suite_cases = None, []
    for line in lines[:us]:
        m = PLAN.match(line)
        if m and len(m.group(1)) == 4:
            suite_plan, suite_cases = int(m.group(2)), []
            continue
        m = RESULT.match(line)
        if not m:
            continue
        indent, ok, name = len(m.group(1)), m.group(2) == 'ok', m.group(4)
        if indent == 4:
            suite_cases.append(name)
            skip = (m.group(5) or '').startswith('# SKIP')
            add('kunit.' + name, ok and not skip, 'skipped' if skip else 'failed')
        elif indent == 0 and suite_plan is not None:
            if len(suite_cases) != suite_plan:
                add('kunit.%s.plan' % name, False, '%d of %d cases reported'
                    % (len(suite_cases), suite_plan))
            suite_plan = None

    # Programs run by /init.
    cur, plan, count, notes = None, None, 0, []
    for line in lines[us:]:
        if line.startswith('=== DMESG'):
            break
        if line.startswith('=== BEGIN '):
            cur, plan, count, order = line.split()[2], None, 0, True
            notes = []
            continue
        if cur is None:
            continue
        if line.startswith('=== END '):
            rc = int(line.rsplit('rc=', 1)[1])
            if plan is not None and plan != count:
                add(cur + '.plan', False, '%d of %d results' % (count, plan))
            if not order:
                add(cur + '.numbering', False, 'results not numbered 1, 2, ... in order')
            if plan is None and count == 0:
                add(cur, False, 'no TAP results')
            elif rc != 0:
                add(cur + '.exit', False, 'exit status %d' % rc)
            cur = None
            continue
        m = PLAN.match(line)
        if m and not m.group(1):
            plan = int(m.group(2))
            continue
        if line.startswith('#'):
            notes = (notes + [line])[-CONTEXT:]
            continue
        m = RESULT.match(line)
        if m and not m.group(1):
            count += 1
            # Two results under one number hide one of them.
            order = order and int(m.group(3)) == count
            skip = (m.group(5) or '').upper().startswith('# SKIP')
            add('%s.%s' % (cur, m.group(3)), m.group(2) == 'ok' and not skip,
                'skipped: ' + m.group(4) if skip else m.group(4), notes)
            notes = []
    if cur is not None:
        add(cur, False, 'never finished')

    if progs:
        # The frames as the main job's report resolves and shows them.
        frames = walk_report.frames_by_prog(lines[us:])
        for prog, want in walk_report.WALKERS.items():
            if prog not in frames:
                continue
            addrs = frames[prog]
            names = [fn for fn, _ in walk_report.resolve(progs, prog, addrs)][:len(want)] \
                if addrs else []
            add(prog + '.symbols', names == want,
                'resolved to %s' % ' '.join(names))
        # Every program the main job runs is either a walker the report
        # resolves (checked above, in this log) or one main.sh shows
        # itself: none is reported as "no frames".
        main_list = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 'guest', 'main.list')
        with open(main_list) as f:
            progs_main = [l.split()[0] for l in f
                          if l.strip() and not l.startswith('#')]
        odd = [p for p in progs_main if p not in walk_report.WALKERS and
               p not in walk_report.SHOWN_ELSEWHERE]
        add('main_report.programs', not odd,
            'main.list runs programs the report cannot show: %s' % ' '.join(odd))

    kept = drop_skipped_kcsan(lines)
    for pat, what in SPLATS:
        hits = [l for l in kept if pat.search(l)]
        if hits:
            add('console.' + what.replace(' ', '_'), False,
                '%s: %s' % (what, hits[0].strip()))
    cpus = [int(m.group(1)) for m in
            (re.search(r'smp: Brought up \d+ nodes?, (\d+) CPUs', l) for l in lines) if m]
    add('console.smp', bool(cpus) and cpus[0] >= 2,
        'fewer than 2 CPUs came up: %s' % (cpus or 'none'))
    if not any(l.startswith('=== ALL DONE') for l in lines):
        add('console.completed', False, 'the boot never finished (hang, '
            'panic or timeout)')
    else:
        add('console.completed', True)

    for name, ok, why, context in results:
        print('PASS %s' % name if ok else 'FAIL %s: %s' % (name, why))
        if not ok:
            for line in context:
                print('  | %s' % line[:300])
    return 0


if __name__ == '__main__':
    sys.exit(main())
