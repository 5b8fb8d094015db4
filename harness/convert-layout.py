#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Convert series/ from the old layout to the new one, in place.

Old layout (up to main bfc1329):
  - series/NNNN-*/files lists every whole file the step adds *or updates*;
  - series/NNNN-*/override/PATH holds the content of PATH at that step when a
    later step changes it again (the file at PATH in the repo is the last one);
  - every step that adds files carries its own MAINTAINERS hunk,
    series/NNNN-*/*-maintainers.patch.

New layout:
  - series/NNNN-*/files lists only the whole files the step *adds*; a later
    step's change to such a file is an ordinary patch in that step's
    directory (prepare.sh derives the content at the adding step by
    reverse-applying those patches onto the whole file, newest first);
  - no override/ directories;
  - the series' MAINTAINERS entry is kept once, in its final form, in the one
    *-maintainers.patch of the step that adds it; prepare.sh adds each F: line
    with the first step that adds a file it covers.

Deterministic: the output depends only on series/ and the whole files.
  python3 harness/convert-layout.py [REPO]
      the conversion; every step keeps exactly its tree;
  python3 harness/convert-layout.py --patterns [REPO]
      afterwards, the intentional MAINTAINERS change: one F: pattern for
      each family of files in FAMILIES instead of one line per file.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ARGS = [a for a in sys.argv[1:] if not a.startswith('--')]
REPO = os.path.abspath(ARGS[0] if ARGS else
                       os.path.join(os.path.dirname(__file__), '..'))
SERIES = os.path.join(REPO, 'series')


def die(msg):
    sys.exit('convert-layout: ' + msg)


def read(p):
    with open(p, 'rb') as f:
        return f.read()


def steps():
    return sorted(d for d in os.listdir(SERIES)
                  if re.match(r'^\d{4}-', d) and
                  os.path.isdir(os.path.join(SERIES, d)))


def listed(step):
    p = os.path.join(SERIES, step, 'files')
    if not os.path.exists(p):
        return []
    return [line.strip() for line in open(p) if line.strip()]


def patches(step):
    return sorted(f for f in os.listdir(os.path.join(SERIES, step))
                  if f.endswith('.patch'))


def patch_paths(text):
    return sorted(set(re.findall(r'^\+\+\+ b/(\S+)', text, re.M) +
                      re.findall(r'^--- a/(\S+)', text, re.M)))


def diff(path, old, new):
    """An ordinary patch (no index line) from OLD to NEW content of PATH."""
    with tempfile.TemporaryDirectory() as tmp:
        for side, data in (('a', old), ('b', new)):
            p = os.path.join(tmp, side, path)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, 'wb') as f:
                f.write(data)
        r = subprocess.run(
            ['git', '-c', 'core.quotepath=false', '-c', 'diff.noprefix=false',
             '-c', 'diff.mnemonicprefix=false', '-c', 'diff.relative=false',
             'diff', '--no-index', '--no-color', '--no-ext-diff',
             '--no-prefix', '--diff-algorithm=myers', '-U3',
             'a/' + path, 'b/' + path],
            cwd=tmp, stdout=subprocess.PIPE)
        if r.returncode not in (0, 1):
            die('git diff failed for ' + path)
    out = r.stdout.decode()
    return ''.join(l for l in out.splitlines(True)
                   if not l.startswith(('index ', 'old mode ', 'new mode ')))


def slug(path):
    d = os.path.dirname(path)
    d = re.sub(r'^tools/testing/', '', d)
    return d.replace('/', '-').lower()


def next_number(step, taken):
    nums = [int(m.group(1)) for f in patches(step) + taken
            for m in [re.match(r'^(\d{4})-', f)] if m]
    return max(nums, default=0) + 1


# --- MAINTAINERS ---------------------------------------------------------

def parse_hunks(text):
    """[(header, [lines])] of a one-file patch; lines keep their prefix."""
    hunks = []
    for line in text.splitlines():
        if line.startswith('@@'):
            hunks.append((line, []))
        elif hunks:
            hunks[-1][1].append(line)
    return hunks


def convert_maintainers(order):
    mpatches = [(s, f) for s in order for f in patches(s)
                if f.endswith('maintainers.patch')]
    if not mpatches:
        return None
    first_step, first = mpatches[0]
    text = read(os.path.join(SERIES, first_step, first)).decode()
    if patch_paths(text) != ['MAINTAINERS']:
        die(f'{first_step}/{first} touches more than MAINTAINERS')
    hunks = parse_hunks(text)
    if len(hunks) != 1 or any(l.startswith('-') for l in hunks[0][1]):
        die(f'{first_step}/{first}: expected one hunk that only adds')
    entry = [l[1:] for l in hunks[0][1] if l.startswith('+')]
    introduced = {}		# F: line -> step that added it
    for l in entry:
        if l.startswith('F:'):
            introduced[l] = first_step
    for s, f in mpatches[1:]:
        t = read(os.path.join(SERIES, s, f)).decode()
        if patch_paths(t) != ['MAINTAINERS']:
            die(f'{s}/{f} touches more than MAINTAINERS')
        for _, lines in parse_hunks(t):
            pos = None
            for l in lines:
                if l.startswith('-'):
                    die(f'{s}/{f} removes lines; convert it by hand')
                if l.startswith(' ') or l == '':
                    c = l[1:]
                    if c in entry:
                        pos = entry.index(c) + 1
                    elif pos is not None and c == '':
                        pos = len(entry)	# the blank line after the entry
                elif l.startswith('+'):
                    if pos is None:
                        die(f'{s}/{f}: cannot place {l[1:]!r} in the entry')
                    if not l[1:].startswith('F:'):
                        die(f'{s}/{f} adds a line that is not F:')
                    entry.insert(pos, l[1:])
                    introduced[l[1:]] = s
                    pos += 1
    # The new patch: the first hunk's context, with the final entry.
    head = text[:text.index('@@')]
    head = ''.join(l for l in head.splitlines(True)
                   if not l.startswith('index '))
    h, lines = hunks[0]
    m = re.match(r'^@@ -(\d+),(\d+) \+(\d+),(\d+) @@(.*)$', h)
    if not m:
        die(f'{first_step}/{first}: unexpected hunk header {h!r}')
    before, after, seen = [], [], False
    for l in lines:
        if l.startswith('+'):
            seen = True
        elif seen:
            after.append(l)
        else:
            before.append(l)
    ctx = len(before) + len(after)
    body = before + ['+' + l for l in entry] + after
    new = (head + f'@@ -{m.group(1)},{ctx} +{m.group(3)},{ctx + len(entry)} @@'
           f'{m.group(5)}\n' + '\n'.join(body) + '\n')
    with open(os.path.join(SERIES, first_step, first), 'w') as f:
        f.write(new)
    for s, f in mpatches[1:]:
        os.remove(os.path.join(SERIES, s, f))
    return introduced


def fmatch(pattern, path):
    """Does a MAINTAINERS F: pattern cover PATH (as prepare.sh reads it)?"""
    import fnmatch
    if pattern.endswith('/'):
        return path.startswith(pattern)
    return fnmatch.fnmatchcase(path, pattern)


# The intentional MAINTAINERS change (--patterns, run after the conversion):
# one pattern for a family of files that one step adds together.
FAMILIES = [
    (['include/linux/unwind_deferred.h', 'include/linux/unwind_deferred_types.h'],
     'include/linux/unwind_deferred*.h'),
    (['include/linux/unwind_user.h', 'include/linux/unwind_user_types.h'],
     'include/linux/unwind_user*.h'),
    (['tools/perf/util/deferred-callchain.c', 'tools/perf/util/deferred-callchain.h'],
     'tools/perf/util/deferred-callchain.*'),
]


def patterns(order):
    found = [(s, f) for s in order for f in patches(s)
             if f.endswith('-maintainers.patch')]
    if len(found) != 1:
        die('--patterns needs exactly one series/*/*-maintainers.patch '
            '(run the conversion first)')
    p = os.path.join(SERIES, *found[0])
    lines = open(p).read().split('\n')
    for olds, new in FAMILIES:
        olds = ['+F:\t' + o for o in olds]
        if not all(o in lines for o in olds):
            continue
        i = lines.index(olds[0])
        lines = [l for l in lines if l not in olds]
        lines.insert(i, '+F:\t' + new)
    # Recount the hunk (prepare.sh applies with --recount; keep it right).
    for i, l in enumerate(lines):
        m = re.match(r'^@@ -(\d+),(\d+) \+(\d+),(\d+) @@(.*)$', l)
        if m:
            body = lines[i + 1:]
            while body and body[-1] == '':
                body.pop()
            ctx = sum(1 for b in body if b.startswith(' ') or b == '')
            add = sum(1 for b in body if b.startswith('+'))
            lines[i] = (f'@@ -{m.group(1)},{ctx} +{m.group(3)},{ctx + add} @@'
                        + m.group(5))
    with open(p, 'w') as f:
        f.write('\n'.join(lines))


# --- whole files ---------------------------------------------------------

def main():
    order = steps()
    if not order:
        die('no series steps in ' + SERIES)
    if '--patterns' in sys.argv[1:]:
        patterns(order)
        return

    # Content of each listed file at each step, as the old layout gives it.
    adder = {}			# path -> step that adds it
    last = {}			# path -> content at the last step listing it
    new_patches = {}		# step -> {slug: [diff text]}
    for s in order:
        for path in listed(s):
            ov = os.path.join(SERIES, s, 'override', path)
            whole = os.path.join(REPO, path)
            src = ov if os.path.exists(ov) else whole
            if not os.path.exists(src):
                die(f'{s}: listed file {path} does not exist')
            data = read(src)
            if path not in adder:
                adder[path] = s
            elif data != last[path]:
                new_patches.setdefault(s, {}).setdefault(
                    slug(path), []).append(diff(path, last[path], data))
            last[path] = data
    for path, data in last.items():
        if data != read(os.path.join(REPO, path)):
            die(f'{path}: the last step listing it has an override')

    # In the old layout no patch touches a file the series adds (whole).
    for s in order:
        for p in patches(s):
            t = read(os.path.join(SERIES, s, p)).decode()
            for path in patch_paths(t):
                if path in adder:
                    die(f'{s}/{p} patches {path}, which the series adds: '
                        'is series/ already in the new layout?')
    introduced = convert_maintainers(order)

    for s in order:
        taken = []
        for sl in sorted(new_patches.get(s, {})):
            name = f'{next_number(s, taken):04d}-{sl}.patch'
            taken.append(name)
            with open(os.path.join(SERIES, s, name), 'w') as f:
                f.write(''.join(new_patches[s][sl]))
        adds = sorted(p for p, a in adder.items() if a == s)
        fp = os.path.join(SERIES, s, 'files')
        if adds:
            # keep the old order of the lines that stay
            kept = [p for p in dict.fromkeys(listed(s)) if p in adds]
            with open(fp, 'w') as f:
                f.write(''.join(p + '\n' for p in kept))
        elif os.path.exists(fp):
            os.remove(fp)
        shutil.rmtree(os.path.join(SERIES, s, 'override'), ignore_errors=True)

    # Would prepare.sh add each F: line at the step the old hunks did?
    if introduced:
        for line, s in sorted(introduced.items()):
            pat = line[2:].strip()
            first = min((a for p, a in adder.items() if fmatch(pat, p)),
                        default=None)
            if first != s:
                print(f'convert-layout: note: {line!r} was added by {s}, '
                      f'the new layout adds it with {first}', file=sys.stderr)


if __name__ == '__main__':
    main()
