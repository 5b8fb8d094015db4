#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Show, resolved to symbols, the user stacks that the walker test programs
printed in a console log (unwind_user_fp, unwind_user_fp_32,
unwind_user_sframe): what the main job shows a newcomer.

  walk_report.py CONSOLE_LOG PROGS_DIR

parse-console.py imports frames_by_prog() and resolve() for its symbol
check, so the test command checks the very code that the main job runs.
A program prints "# frame N: 0x..." (or "# pid P frame N: 0x..." when it
walks in several processes; the first process is shown).
"""
import re
import subprocess
import sys

FRAME = re.compile(r'^# (?:pid (\d+) )?frame (\d+): (0x[0-9a-f]+)')

# The walker programs whose frames report() shows, with the functions their
# stacks must resolve to, innermost first: parse-console.py checks them in
# every console log that has them. Every other program of the main job
# (harness/guest/main.list) has its own report in main.sh, listed in
# SHOWN_ELSEWHERE; parse-console.py checks that main.list names no program
# outside the two, so that the report never shows a program it cannot
# resolve ("no frames").
WALKERS = {
    'unwind_user_fp': ['c', 'b', 'a', 'main'],
    'unwind_user_fp_32': ['c', 'b', 'a', 'main'],
    'unwind_user_sframe': ['c', 'b', 'a', 'walk'],
    # glibc 2.36's sort frames, from libc.a.
    'unwind_qsort': ['cmp', 'msort_with_tmp.part.0', 'msort_with_tmp.part.0',
                     '__qsort_r', 'sorter', 'main'],
}
SHOWN_ELSEWHERE = ('perf_demo', 'flame_profiles', 'ftrace_demo', 'context_demo',
                   'bpf_profiler')


def frames_by_prog(lines):
    """The frames each program printed: {program: [address, ...]}."""
    cur, frames, first_pid = None, {}, {}
    for line in lines:
        line = re.sub(r'^\[\s*\d+\.\d+\]\s?', '', line.rstrip())
        if line.startswith('=== BEGIN '):
            cur = line.split()[2]
            frames[cur] = []
            continue
        if line.startswith('=== END '):
            cur = None
            continue
        m = FRAME.match(line)
        if not cur or not m:
            continue
        pid = m.group(1)
        if first_pid.setdefault(cur, pid) != pid:
            continue
        frames[cur].append(int(m.group(3), 16))
    return frames


def resolve(progs, prog, addrs):
    """(function, file:line) per address; return addresses look up the call."""
    out = subprocess.run(['addr2line', '-f', '-s', '-e', '%s/%s' % (progs, prog)] +
                         ['%#x' % (a - 1 if i else a) for i, a in enumerate(addrs)],
                         capture_output=True, text=True).stdout.split('\n')
    return [(out[2 * i], out[2 * i + 1]) for i in range(len(addrs))]


def report(logf, progs):
    with open(logf, errors='replace') as f:
        frames = frames_by_prog(f)
    for prog, addrs in frames.items():
        if prog not in WALKERS:
            continue
        print('\n%s: user stack walked by unwind_user() inside read()' % prog)
        if not addrs:
            print('  (no frames: see %s)' % logf)
            continue
        for i, (a, (fn, where)) in enumerate(zip(addrs, resolve(progs, prog, addrs))):
            print('  #%-2d %#014x  %-28s %s' % (i, a, fn, where))


if __name__ == '__main__':
    report(sys.argv[1], sys.argv[2])
