#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The oracle for tools/unwind/eh2sframe: its SFrame table, read back by
the kernel's reader (sframe-lookup, kernel/unwind/sframe.c built in user
space), must give at every row of every FDE what binutils' readelf
--debug-dump=frames-interp says of the same file, an interpreter
independent of libdw.

  ehframe_oracle.py [--min-coverage PCT] EH2SFRAME SFRAME_LOOKUP WORKDIR
                    NAME FILE

What readelf shows is classified here by SFrame's rules, independently of
the converter: a row is expressible when its CFA is rsp+k or rbp+k, the
return address at c-8 (or undefined: the outermost frame), rbp at c+k with
k != 0 or not saved (u, s), rsp not given another rule; a CFA expression
is expressible when, evaluated here at every address of its row, it is rsp
plus something that depends only on rip (the PLT's). Then:
  - at the first and last address of every row (every address of a row
    with a CFA expression), the reader gives that row's CFA base and
    offset, RA offset -8 and FP offset, or "outermost"; for a row that is
    not expressible, "outermost" too (a stop: the walk ends there, review
    m10), but for a signal frame's and for a whole FDE left out, and just
    past each FDE, no frame at all (-ENOENT, as for code without a table);
  - sframe_validate() accepts the table;
  - the converter's counts (FDEs converted whole, in part, left out, and
    FDEs and bytes per reason) are the ones computed here from readelf;
  - with --min-coverage, at least PCT% of the FDEs are converted whole;
  - the copy that eh2sframe --elf writes carries a section that gives the
    same answers at the same addresses (read through its .sframe section
    header; the guest tests read it through PT_GNU_SFRAME, as the kernel
    does), and a new read-only PT_LOAD above every other segment maps it,
    its PT_GNU_SFRAME and the moved program headers (and PT_PHDR, if any);
    every other byte of the file is unchanged but the ELF header's table
    positions.
Prints one line: "PASS ehframe.oracle.NAME: ..." or "FAIL ...", with
details of a failure on stderr.
"""
import argparse
import os
import re
import struct
import subprocess
import sys

ENOENT = "err -2"
PT_GNU_SFRAME = 0x6474E554


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True,
                          **kw).stdout


def readelf(*args):
    """readelf's output: it exits with 1 on some files it dumps in full
    (Debian 12's libc, with no message), so only an empty output fails."""
    out = subprocess.run(["readelf"] + list(args), capture_output=True,
                         text=True).stdout
    if not out.strip():
        raise RuntimeError("readelf %s: no output" % " ".join(args))
    return out


def exec_segments(path):
    lo, hi = None, None
    for line in readelf("-lW", path).splitlines():
        m = re.match(r"\s*LOAD\s+0x\S+\s+(0x\S+)\s+0x\S+\s+0x\S+\s+(0x\S+)"
                     r"\s+(.*?)\s+0x\S+$", line)
        if not m or "E" not in m.group(3):
            continue
        a, size = int(m.group(1), 16), int(m.group(2), 16)
        lo = a if lo is None else min(lo, a)
        hi = a + size if hi is None else max(hi, a + size)
    return lo, hi


HDR = r"^([0-9a-f]+) ([0-9a-f]+) ([0-9a-f]+) "


def parse_interp(text):
    """CIEs and FDEs of frames-interp, with their rows as column dicts."""
    cies, fdes = {}, []
    sec, cur, cols = None, None, None
    for line in text.splitlines():
        m = re.match(r"Contents of the (\S+) section", line)
        if m:
            sec = m.group(1)
            cur = None
            continue
        m = re.match(HDR + r'CIE "([^"]*)" cf=\d+ df=-?\d+ ra=(\d+)', line)
        if m:
            cur = {"aug": m.group(4), "ra": int(m.group(5)), "rows": []}
            cies[(sec, int(m.group(1), 16))] = cur
            continue
        m = re.match(HDR + r"FDE cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.([0-9a-f]+)",
                     line)
        if m:
            cur = {"sec": sec, "off": int(m.group(1), 16),
                   "cie": (sec, int(m.group(4), 16)),
                   "start": int(m.group(5), 16), "end": int(m.group(6), 16),
                   "rows": []}
            fdes.append(cur)
            continue
        if re.match(r"^[0-9a-f]+ ZERO terminator", line):
            cur = None
            continue
        if re.match(r"^\s+LOC\s+CFA", line):
            cols = line.split()
            continue
        m = re.match(r"^([0-9a-f]{8,16}) (.*)$", line)
        if m and cur is not None and cols:
            vals = re.findall(r"r\d+ \([^)]*\)|\S+", m.group(2))
            if len(vals) != len(cols) - 1:
                raise ValueError("cannot parse row: " + line)
            cur["rows"].append((int(m.group(1), 16),
                                dict(zip(cols[1:], vals))))
            continue
        if line.strip():
            cur = None
    return cies, fdes


def parse_exprs(text):
    """The DW_CFA_def_cfa_expression texts of each FDE of a raw dump."""
    exprs, sec, key = {}, None, None
    for line in text.splitlines():
        m = re.match(r"Contents of the (\S+) section", line)
        if m:
            sec = m.group(1)
            continue
        m = re.match(HDR + "(FDE|CIE)", line)
        if m:
            key = (sec, int(m.group(1), 16))
            continue
        m = re.search(r"DW_CFA_def_cfa_expression \((.*)\)\s*$", line)
        if m and key:
            exprs.setdefault(key, set()).add(m.group(1))
    return exprs


def evaluate(expr, rsp, rip):
    """Evaluate a DWARF expression as readelf printed it; None if it uses
    anything but rsp, rip, constants and plain arithmetic."""
    regs = {7: rsp, 16: rip}
    st = []
    binops = {
        "DW_OP_and": lambda a, b: a & b,
        "DW_OP_or": lambda a, b: a | b,
        "DW_OP_plus": lambda a, b: a + b,
        "DW_OP_minus": lambda a, b: a - b,
        "DW_OP_mul": lambda a, b: a * b,
        "DW_OP_shl": lambda a, b: a << b,
        "DW_OP_shr": lambda a, b: a >> b,
        "DW_OP_ge": lambda a, b: int(a >= b),
        "DW_OP_gt": lambda a, b: int(a > b),
        "DW_OP_le": lambda a, b: int(a <= b),
        "DW_OP_lt": lambda a, b: int(a < b),
        "DW_OP_eq": lambda a, b: int(a == b),
        "DW_OP_ne": lambda a, b: int(a != b),
    }
    try:
        for op in (o.strip() for o in expr.split(";")):
            m = re.match(r"DW_OP_breg(\d+) \(\w+\): (-?\d+)$", op)
            if m:
                st.append(regs[int(m.group(1))] + int(m.group(2)))
                continue
            m = re.match(r"DW_OP_lit(\d+)$", op)
            if m:
                st.append(int(m.group(1)))
                continue
            m = re.match(r"DW_OP_const\d?[us]: (-?\d+)$", op)
            if m:
                st.append(int(m.group(1)))
                continue
            m = re.match(r"DW_OP_plus_uconst: (\d+)$", op)
            if m:
                st.append(st.pop() + int(m.group(1)))
                continue
            if op in binops:
                b, a = st.pop(), st.pop()
                st.append(binops[op](a, b))
                continue
            return None
    except (KeyError, IndexError):
        return None
    return st[-1] if len(st) == 1 else None


def cfa_by_expr(exprs, start, end):
    """{address: CFA offset from rsp} for a row whose CFA is the one
    expression of its FDE, if that is rsp + f(rip); else None."""
    if not exprs or len(exprs) != 1:
        return None
    expr = next(iter(exprs))
    out = {}
    for a in range(start, end):
        v0, v1 = evaluate(expr, 1 << 20, a), evaluate(expr, 2 << 20, a)
        if v0 is None or v1 is None or v0 - (1 << 20) != v1 - (2 << 20):
            return None
        out[a] = v0 - (1 << 20)
    return out


def classify(cie, cols, exprs, start, end):
    """("frame", base, off, fp) / ("outermost",) / ("plt", {a: off}, fp) /
    ("left", reason), in the converter's order of reasons."""
    if "S" in cie["aug"]:
        return ("left", "signal")
    if cie["ra"] != 16:
        return ("left", "ra-column")
    ra = cols.get("ra", "u")
    if ra == "u":
        return ("outermost",)
    if ra != "c-8":
        return ("left", "ra-rule")
    cfa = cols["CFA"]
    plt = None
    if cfa == "exp":
        plt = cfa_by_expr(exprs, start, end)
        if plt is None:
            return ("left", "cfa-expr")
    else:
        m = re.match(r"^(\w+)([+-]\d+)$", cfa)
        if not m:
            return ("left", "cfa-expr")
        if m.group(1) not in ("rsp", "rbp"):
            return ("left", "cfa-reg")
        base, off = ("fp" if m.group(1) == "rbp" else "sp"), int(m.group(2))
    fp = cols.get("rbp", "u")
    fp_off = 0
    if fp not in ("u", "s"):
        m = re.match(r"^c([+-]\d+)$", fp)
        if not m or int(m.group(1)) == 0:
            return ("left", "fp-rule")
        fp_off = int(m.group(1))
    if cols.get("rsp", "u") not in ("u", "v+0"):
        return ("left", "sp-rule")
    if plt is not None:
        return ("plt", plt, fp_off)
    return ("frame", base, off, fp_off)


def rows_of(fde, cie):
    """[(start, end, cols)] covering the FDE; no row printed means the
    CIE's initial row."""
    rows = [r for r in fde["rows"] if r[0] < fde["end"]]
    if not rows or rows[0][0] > fde["start"]:
        rows.insert(0, (fde["start"], cie["rows"][0][1]))
    out = []
    for i, (loc, cols) in enumerate(rows):
        nxt = rows[i + 1][0] if i + 1 < len(rows) else fde["end"]
        if nxt > loc:
            out.append((loc, nxt, cols))
    return out


def parse_report(text):
    rep = {"reasons": {}, "shadowed": 0}
    for line in text.splitlines():
        m = re.match(r"\s+cfi: (\d+) FDEs .*, (\d+) rows, (\d+) bytes", line)
        if m:
            rep["fdes"], rep["rows"] = int(m.group(1)), int(m.group(2))
            rep["bytes"] = int(m.group(3))
            m = re.search(r"; (\d+) \.debug_frame FDEs", line)
            rep["shadowed"] = int(m.group(1)) if m else 0
        m = re.match(r"\s+converted: (\d+) FDEs whole \(([\d.]+)%\), "
                     r"(\d+) in part; (\d+) rows .*; (\d+) bytes", line)
        if m:
            rep["whole"], rep["part"] = int(m.group(1)), int(m.group(3))
            rep["conv_bytes"] = int(m.group(5))
        m = re.match(r"\s+left out: (\d+) FDEs whole", line)
        if m:
            rep["none"] = int(m.group(1))
        m = re.match(r"\s{4}(\S+): (\d+) FDEs, (\d+) rows, (\d+) bytes", line)
        if m:
            rep["reasons"][m.group(1)] = (int(m.group(2)), int(m.group(4)))
        m = re.match(r"\s+table: (.*)", line)
        if m:
            rep["table"] = dict(kv.split("=") for kv in m.group(1).split())
    return rep


def lookup_answers(lookup, where, addrs):
    """sframe-lookup -v at @addrs, the section given by @where: its
    validation line, and its answer per address."""
    out = run([lookup, "-v"] + where + ["-"],
              input="".join("%#x\n" % x for x in addrs)).splitlines()
    got = {}
    for line in out[1:]:
        addr, rest = line.split(" ", 1)
        got[int(addr, 16)] = rest
    return (out[0] if out else "no output"), got


def check_elf_copy(a, addrs, queries):
    """eh2sframe --elf: the copy's own section, through its section
    header, against the same queries; its layout; the rest of the file."""
    copy = os.path.join(a.workdir, a.name + ".elf")
    try:
        run([a.converter, "-q", "--elf", copy, a.file])
    except subprocess.CalledProcessError as e:
        return ["eh2sframe --elf failed: " + e.stderr.strip()]
    bad = []
    with open(a.file, "rb") as f:
        old = f.read()
    with open(copy, "rb") as f:
        new = f.read()
    eh_old = struct.unpack_from("<16sHHIQQQIHHHHHH", old)
    eh_new = struct.unpack_from("<16sHHIQQQIHHHHHH", new)
    # e_phoff (5), e_shoff (6) and the counts e_phnum (10), e_shnum (12).
    for i in range(len(eh_old)):
        if i not in (5, 6, 10, 12) and eh_old[i] != eh_new[i]:
            bad.append("--elf: ELF header field %d changed" % i)
    if new[64:len(old)] != old[64:]:
        bad.append("--elf: bytes of the file changed")
    phoff, phnum = eh_new[5], eh_new[10]
    if phnum != eh_old[10] + 2:
        bad.append("--elf: %d program headers, not %d" % (phnum, eh_old[10] + 2))
    phs = [struct.unpack_from("<IIQQQQQQ", new, phoff + 56 * i)
           for i in range(phnum)]
    loads = [p for p in phs if p[0] == 1]
    sfr = [p for p in phs if p[0] == PT_GNU_SFRAME]
    top = max(p[3] + p[6] for p in loads[:-1]) if len(loads) > 1 else None
    last = loads[-1] if loads else None
    if (len(sfr) != 1 or top is None or last[1] != 4 or last[3] < top or
            last[3] % 4096 != last[2] % 4096 or
            [p[3] for p in loads] != sorted(p[3] for p in loads) or
            not (last[2] <= phoff and phoff + 56 * phnum <= last[2] + last[5])
            or not (last[3] <= sfr[0][3] and
                    sfr[0][3] + sfr[0][6] <= last[3] + last[6])
            or sfr[0][3] - last[3] != sfr[0][2] - last[2]):
        bad.append("--elf: bad layout: loads %s, sframe %s" % (loads, sfr))
        return bad
    for p in phs:
        if p[0] == 6 and (p[2] != phoff or p[3] != last[3] + phoff - last[2]):
            bad.append("--elf: PT_PHDR does not follow the program headers")
    valid, got = lookup_answers(a.lookup, [copy], addrs)
    if valid != "validate 0":
        return bad + ["--elf: the reader does not accept the copy's section"]
    bad += ["--elf: %#x: readelf says %s, the copy %s" %
            (x, queries[x], got.get(x)) for x in addrs
            if got.get(x) != queries[x]]
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-coverage", type=float, default=None)
    ap.add_argument("converter")
    ap.add_argument("lookup")
    ap.add_argument("workdir")
    ap.add_argument("name")
    ap.add_argument("file")
    a = ap.parse_args()
    tag = "ehframe.oracle." + a.name
    os.makedirs(a.workdir, exist_ok=True)
    table = os.path.join(a.workdir, a.name + ".sframe")

    def fail(msg, details=()):
        print("FAIL %s: %s" % (tag, msg))
        for d in details:
            print("  " + d, file=sys.stderr)
        sys.exit(0)

    try:
        report = run([a.converter, "-o", table, a.file])
    except subprocess.CalledProcessError as e:
        fail("eh2sframe failed: " + e.stderr.strip())
    rep = parse_report(report)
    with open(os.path.join(a.workdir, a.name + ".report"), "w") as f:
        f.write(report)
    if "table" not in rep or "whole" not in rep:
        fail("cannot parse the converter's report")

    lo, hi = exec_segments(a.file)
    cies, fdes = parse_interp(readelf("--debug-dump=frames-interp", a.file))
    exprs = parse_exprs(readelf("--debug-dump=frames", a.file))

    # Which FDEs count, as the converter decides it: .debug_frame only for
    # code .eh_frame does not cover; then by address, an FDE that starts
    # inside an earlier one is left out.
    eh = [(f["start"], f["end"]) for f in fdes if f["sec"] == ".eh_frame"]
    shadowed = 0
    kept = []
    for f in fdes:
        if f["sec"] != ".eh_frame" and any(s < f["end"] and f["start"] < e
                                           for s, e in eh):
            shadowed += 1
            continue
        kept.append(f)
    kept.sort(key=lambda f: (f["start"], f["sec"] != ".eh_frame", f["off"]))

    queries = {}
    counts = {"whole": 0, "part": 0, "none": 0}
    reasons = {}
    total_bytes = conv_bytes = nrows = 0
    max_end = 0

    def left(reason, fdes_seen, nbytes):
        r = reasons.setdefault(reason, [0, 0])
        if reason not in fdes_seen:
            r[0] += 1
            fdes_seen.add(reason)
        r[1] += nbytes

    for f in kept:
        size = f["end"] - f["start"]
        total_bytes += max(size, 0)
        whole = None
        if size <= 0:
            whole = "empty"
        elif f["start"] < lo or f["end"] > hi:
            whole = "range"
        elif f["start"] < max_end:
            whole = "overlap"
        if whole:
            counts["none"] += 1
            left(whole, set(), max(size, 0))
            continue
        max_end = f["end"]
        cie = cies[f["cie"]]
        good = 0
        seen = set()
        rows = rows_of(f, cie)
        for start, end, cols in rows:
            nrows += 1
            k = classify(cie, cols, exprs.get((f["sec"], f["off"])), start,
                         end)
            if k[0] == "left":
                left(k[1], seen, end - start)
                queries[start] = queries[end - 1] = \
                    ENOENT if k[1] == "signal" else "outermost"
                continue
            good += 1
            conv_bytes += end - start
            if k[0] == "outermost":
                queries[start] = queries[end - 1] = "outermost"
            elif k[0] == "frame":
                queries[start] = queries[end - 1] = \
                    "ok %s %d -8 %d" % (k[1], k[2], k[3])
            else:
                for addr, off in k[1].items():
                    queries[addr] = "ok sp %d -8 %d" % (off, k[2])
        counts["whole" if good == len(rows) else
               "part" if good else "none"] += 1
    # Just past each FDE, where no other one starts: nothing.
    for f in kept:
        e = f["end"]
        if lo <= e < hi and not any(g["start"] <= e < g["end"] for g in kept):
            queries[e] = ENOENT

    t = rep["table"]
    addrs = sorted(queries)
    text_vaddr = int(t["text_vaddr"], 16)
    valid, got = lookup_answers(
        a.lookup, ["-r", table, t["sframe_vaddr"], hex(text_vaddr),
                   hex(text_vaddr + int(t["text_size"], 16))], addrs)
    if valid != "validate 0":
        fail("the reader does not accept the table: " + valid)
    bad = ["%#x: readelf says %s, the table %s" % (x, queries[x], got.get(x))
           for x in addrs if got.get(x) != queries[x]]

    mine = {"fdes": len(kept), "whole": counts["whole"],
            "part": counts["part"], "none": counts["none"],
            "shadowed": shadowed, "bytes": total_bytes,
            "conv_bytes": conv_bytes}
    for k, v in mine.items():
        if rep.get(k) != v:
            bad.append("%s: converter %s, readelf %s" % (k, rep.get(k), v))
    theirs = {k: list(v) for k, v in rep["reasons"].items()}
    if theirs != reasons:
        bad.append("left out by reason (FDEs, bytes): converter %s, "
                   "readelf %s" % (theirs, reasons))
    cov = 100.0 * counts["whole"] / len(kept) if kept else 0
    if a.min_coverage is not None and cov < a.min_coverage:
        bad.append("coverage %.2f%% < %.2f%%" % (cov, a.min_coverage))
    if not addrs:
        bad.append("nothing checked")

    bad += check_elf_copy(a, addrs, queries)

    summary = ("%d FDEs (%d whole, %d in part, %d left out), %d rows, "
               "%d addresses checked, coverage %.2f%% of FDEs, %.2f%% of "
               "code; table %s bytes, the same in its --elf copy" %
               (len(kept), counts["whole"], counts["part"], counts["none"],
                nrows, len(addrs), cov,
                100.0 * conv_bytes / total_bytes if total_bytes else 0,
                t["size"]))
    if bad:
        fail("%d mismatches; %s" % (len(bad), summary), bad[:20])
    print("PASS %s: %s" % (tag, summary))


if __name__ == "__main__":
    main()
