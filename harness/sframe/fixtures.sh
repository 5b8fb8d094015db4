#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's SFrame reader (user-space build) against sections that other
# binutils wrote, stored in fixtures/ with that binutils' readelf --sframe
# output (fixtures/README; fixtures/make.sh regenerates them): SFrame V3
# from sid's binutils, V2 from trixie's 2.44, and V2 with PC-relative
# starts that convert.py wrote and sid's readelf read. check.sh compares
# with Debian 12's readelf, which reads only V1: here the V2 and V3
# encodings are checked against binutils' own reading of them, not only
# against convert.py.
#
# Per fixture, three results:
#  - sframe_init() and sframe_validate() accept the section;
#  - the header, and every FDE and FRE as the reader decodes them
#    (sframe-lookup -d): the same version, flags and counts, the same
#    function starts, sizes, signal and flexible attributes, PCMASK blocks
#    (the PLT's entry size), and for every row the same start address, CFA
#    base and offset, RA and FP offsets as readelf printed;
#  - sframe_find() (the kernel's lookup) at the first and last byte of every
#    row, every repetition of a PCMASK block, and just outside each
#    function: the answer readelf's row gives.
#
# Output is TAP. Usage: fixtures.sh [BUILD_DIR]
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE/../../build/sframe}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

make -s -C "$HERE" OUT="$OUT" "$OUT/sframe-lookup" >&2

python3 - "$OUT/sframe-lookup" "$HERE" <<'PY'
import glob, os, re, subprocess, sys

tool, here = sys.argv[1], sys.argv[2]
sys.path.insert(0, here)
sys.dont_write_bytecode = True    # no __pycache__ in the repository
from readelf_sframe import parse, expect   # noqa: E402

ENOENT = -2
n = 0
fails = 0


def tap(ok, what, notes=()):
    global n, fails
    n += 1
    if not ok:
        fails += 1
    for line in list(notes)[:20]:
        print("#   " + line)
    print(("ok" if ok else "not ok") + " %d - %s" % (n, what))


def read_info(path):
    info = {"code": []}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        if ":" in line.split()[0]:
            key, val = line.split(":", 1)
            info[key] = val.strip()
            continue
        w = line.split()
        if w[0] == "sframe":
            info["sframe"] = int(w[1], 0)
        elif w[0] == "text":
            info["text"] = (int(w[1], 0), int(w[2], 0))
        elif w[0] == "code":
            info["code"].append((w[1], int(w[2], 0), int(w[3], 0), int(w[4], 0)))
    return info


def block_size(info, pc):
    """A PCMASK FDE's block: the entry size of the code section it is in."""
    for name, addr, size, entsize in info["code"]:
        if addr <= pc < addr + size:
            return entsize
    return 0


def lookup(raw, info, opts, addrs=()):
    """sframe-lookup OPTS on the raw section; its exit code and lines."""
    lo, hi = info["text"]
    res = subprocess.run([tool] + opts + ["-r", raw, hex(info["sframe"]), hex(lo), hex(hi)] +
                         [hex(a) for a in addrs], capture_output=True, text=True)
    return res.returncode, res.stdout.splitlines()


def compare_dump(want, lines, info):
    """Differences between readelf's dump and the reader's (-d)."""
    bad = []
    hdr = [l for l in lines if l.startswith("header ")]
    fdes = []
    for l in lines:
        w = l.split()
        if w[0] == "fde":
            if w[1] == "err":
                bad.append("reader: FDE %d: error %s" % (len(fdes), w[2]))
                break
            fdes.append({"pc": int(w[1], 0), "size": int(w[2]), "num": int(w[3]),
                         "mask": w[4] == "1", "rep": int(w[5]), "signal": w[6] == "1",
                         "flex": w[7] == "1", "fres": []})
        elif w[0] == "fre":
            if w[1] == "err":
                bad.append("reader: FDE %d: FRE %d: error %s" %
                           (len(fdes) - 1, len(fdes[-1]["fres"]), w[2]))
                continue
            fdes[-1]["fres"].append((int(w[1], 0), " ".join(w[2:])))
    if not hdr:
        return ["reader: no header"]
    _, ver, flags, nfde, nfre = hdr[0].split()
    got = ("SFRAME_VERSION_" + ver, int(flags, 0), int(nfde), int(nfre))
    exp = (want["version"], want["flags"], want["num_fdes"], want["num_fres"])
    if got != exp:
        bad.append("header: readelf %r, reader %r" % (exp, got))
    if len(fdes) != len(want["fdes"]):
        bad.append("%d FDEs in readelf, %d read" % (len(want["fdes"]), len(fdes)))
    for i, (w, g) in enumerate(zip(want["fdes"], fdes)):
        v3 = want["version"] == "SFRAME_VERSION_3"
        ew = (w["pc"], w["size"], len(w["fres"]), w["mask"],
              block_size(info, w["pc"]) if w["mask"] else 0,
              "S" in w["attrs"], "F" in w["attrs"])
        eg = (g["pc"], g["size"], g["num"], g["mask"], g["rep"],
              g["signal"] if v3 else False, g["flex"])
        if ew != eg:
            bad.append("FDE %d (pc, size, FREs, PCMASK, block, signal, flexible): "
                       "readelf %r, reader %r" % (i, ew, eg))
            continue
        for j, ((wstart, cols), (goff, gres)) in enumerate(zip(w["fres"], g["fres"])):
            gstart = goff if g["mask"] else g["pc"] + goff
            if (wstart, expect(cols)) != (gstart, gres):
                bad.append("FDE %d FRE %d: readelf %#x %s (%s), reader %#x %s" %
                           (i, j, wstart, " ".join(cols[1:]) if cols[1] else cols[0],
                            expect(cols), gstart, gres))
    return bad


def queries(want, info):
    """Address -> the answer sframe_find() must give, from readelf's rows."""
    q = {}
    fdes = want["fdes"]
    for f in fdes:
        end = f["pc"] + f["size"]
        fres = f["fres"]
        for i, (start, cols) in enumerate(fres):
            exp = "err -95" if "S" in f["attrs"] else expect(cols)
            if f["mask"]:
                blk = block_size(info, f["pc"])
                nxt = fres[i + 1][0] if i + 1 < len(fres) else blk
                base = f["pc"]
                while blk and base < end:
                    if base + start < end:
                        q[base + start] = exp
                        q[min(base + nxt, end) - 1] = exp
                    base += blk
            else:
                nxt = fres[i + 1][0] if i + 1 < len(fres) else end
                q[start] = exp
                q[nxt - 1] = exp
    covered = [(f["pc"], f["pc"] + f["size"]) for f in fdes]
    lo, hi = info["text"]
    for f in fdes:
        for a in (f["pc"] - 1, f["pc"] + f["size"]):
            if lo <= a < hi and not any(s <= a < e for s, e in covered):
                q[a] = "err %d" % ENOENT
    return q


names = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(here, "fixtures", "*.info")))
if not names:
    tap(False, "no fixtures in %s/fixtures" % here)
for name in names:
    base = os.path.join(here, "fixtures", name)
    info = read_info(base + ".info")
    want = parse(open(base + ".readelf").read())
    raw = base + ".sframe"
    m = re.search(r"(\d+\.\d+[.\d]*)$", info.get("readelf", ""))
    by = "readelf %s" % (m.group(1) if m else "?")
    ver = (want["version"] or "?").replace("SFRAME_VERSION_", "V")
    if want["flags"] & 0x4 and ver != "V3":
        ver += " PC-relative"
    writer = info.get("writer", "?")
    m = re.match(r"GNU assembler .* (\d+\.\d+[.\d]*);", writer)
    what = "%s: %s written by %s" % (name, ver, "binutils " + m.group(1) if m else
                                      writer.split()[0].split("/")[-1])

    rc, out = lookup(raw, info, ["-v"])
    tap(rc == 0 and out[:1] == ["validate 0"],
        "%s: sframe_init() and sframe_validate() accept it" % what,
        ["reader: " + " ".join(out[:2]) + " (exit %d)" % rc] if rc or out[:1] != ["validate 0"] else [])

    rc, out = lookup(raw, info, ["-d"])
    bad = compare_dump(want, out, info) if rc == 0 else ["reader: exit %d: %s" % (rc, out[:1])]
    nfre = sum(len(f["fres"]) for f in want["fdes"])
    tap(not bad and want["fdes"] and nfre == want["num_fres"],
        "%s: header, %d FDEs and %d FREs as the reader decodes them = %s" %
        (name, len(want["fdes"]), nfre, by), bad)

    q = queries(want, info)
    addrs = sorted(q)
    rc, out = lookup(raw, info, [], addrs)
    got = {}
    for line in out:
        a, rest = line.split(" ", 1)
        got[int(a, 16)] = rest
    bad = ["%#x: readelf says %r, sframe_find() says %r" % (a, q[a], got.get(a))
           for a in addrs if got.get(a) != q[a]]
    tap(rc == 0 and not bad and addrs,
        "%s: sframe_find() at %d addresses = %s" % (name, len(addrs), by), bad)

print("1..%d" % n)
sys.exit(1 if fails else 0)
PY
