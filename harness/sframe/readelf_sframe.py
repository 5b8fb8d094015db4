# SPDX-License-Identifier: GPL-2.0
"""The text of readelf --sframe (binutils 2.40 to 2.47), and what the
kernel's reader must answer for each of its rows on AMD64.

Used by check.sh (V1 from Debian 12's binutils) and fixtures.sh (V2 and V3
that other binutils wrote, with that binutils' readelf).
"""
import re

RA_FIXED = -8           # AMD64: the header's fixed RA offset
EOPNOTSUPP = -95
FLAG_BITS = {"SFRAME_F_FDE_SORTED": 0x1, "SFRAME_F_FRAME_POINTER": 0x2,
             "SFRAME_F_FDE_FUNC_START_PCREL": 0x4}

_FDE = re.compile(r"\s+func idx \[(\d+)\]: pc = (0x[0-9a-f]+), size = (\d+) bytes"
                  r'(?:, attr = "([A-Z]*)")?')
_FRE = re.compile(r"\s+([0-9a-f]{16})\s+(RA undefined|(\S+)\s+(\S+)\s+(\S+))")


def parse(text):
    """The header and the functions of one readelf --sframe dump.

    Returns a dict: version ("SFRAME_VERSION_N"), flags (bits), num_fdes,
    num_fres (None when readelf printed none) and fdes, a list of dicts
    with pc, size, attrs ("S" signal, "F" flexible), mask (PCMASK) and
    fres, a list of (start, cols); start is an address, or the offset in
    the repeated block for PCMASK; cols is (whole column text, CFA, FP, RA),
    or ("RA undefined", None, None, None).
    """
    out = {"version": None, "flags": 0, "num_fdes": None, "num_fres": None, "fdes": []}
    in_flags = False
    for line in text.splitlines():
        m = re.match(r"\s+Version: (\S+)", line)
        if m:
            out["version"] = m.group(1)
            continue
        m = re.match(r"\s+Flags: (.*)", line)
        if m or (in_flags and re.match(r"\s+SFRAME_F_", line)):
            in_flags = True
            for name in re.findall(r"SFRAME_F_\w+", line):
                out["flags"] |= FLAG_BITS.get(name, 0x100)
            continue
        in_flags = False
        m = re.match(r"\s+Num (FDEs|FREs): (\d+)", line)
        if m:
            out["num_fdes" if m.group(1) == "FDEs" else "num_fres"] = int(m.group(2))
            continue
        m = _FDE.match(line)
        if m:
            out["fdes"].append({"pc": int(m.group(2), 16), "size": int(m.group(3)),
                                "attrs": m.group(4) or "", "mask": False, "fres": []})
            continue
        if re.match(r"\s+STARTPC\[m\]", line):
            out["fdes"][-1]["mask"] = True
            continue
        m = _FRE.match(line)
        if m and out["fdes"]:
            out["fdes"][-1]["fres"].append((int(m.group(1), 16), m.groups()[1:]))
    return out


def _cfa_slot(col):
    """Offset of "saved at CFA + k" as readelf prints it (c+k or c-k)."""
    m = re.match(r"c([+-]\d+)$", col)
    return int(m.group(1)) if m else None


def expect(cols):
    """What the reader must say for a row with these readelf columns, in
    sframe-lookup's words: "ok BASE CFA_OFF RA_OFF FP_OFF", "outermost" or
    "err ERRNO". The walker follows CFA = SP or FP + k, with the RA and FP
    saved at CFA + k (or not saved); V3 flexible rows that say anything
    else (another register, a dereferenced CFA, a value kept in a register)
    are -EOPNOTSUPP.
    """
    if cols[0] == "RA undefined":
        return "outermost"
    cfa, fp, ra = cols[1], cols[2], cols[3].replace("[s]", "")
    m = re.match(r"(sp|fp)([+-]\d+)$", cfa)
    if not m:
        return "err %d" % EOPNOTSUPP
    # u: not saved. V1's readelf prints u for the fixed RA too; U is the
    # padding of a flexible row whose RA is in its fixed slot.
    fpo = 0 if fp == "u" else _cfa_slot(fp)
    rao = RA_FIXED if ra in ("u", "f", "U") else _cfa_slot(ra)
    if fpo is None or rao is None:
        return "err %d" % EOPNOTSUPP
    return "ok %s %d %d %d" % (m.group(1), int(m.group(2)), rao, fpo)
