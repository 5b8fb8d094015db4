#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write a mutant of a host-side file for the harness's report checks.

Usage: copy_mutant.py SRC DST OLD NEW

Copies SRC to DST with OLD, which must occur exactly once, replaced by NEW.
Exits 1 when OLD is not found once (the mutant went stale), so that the
caller reports it instead of running an unmutated copy.
"""
import sys

src, dst, old, new = sys.argv[1:]
with open(src) as f:
    text = f.read()
if text.count(old) != 1:
    sys.exit(1)
with open(dst, 'w') as f:
    f.write(text.replace(old, new))
