#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Exact test of the kernel's SFrame reader (user-space build) against the
# real toolchain: build test programs with -O2 -fomit-frame-pointer
# -Wa,--gsframe, dump their .sframe with readelf --sframe, and for every FRE
# (its first and last byte, and every repetition of a PCMASK block) check
# that sframe_find() gives the same CFA base and offset, FP offset and RA
# offset. Also checks that sframe_validate() accepts each section, and that
# addresses outside every function are reported as not covered.
#
# Output is TAP. Usage: check.sh [BUILD_DIR]
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HERE/../../build/sframe}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

make -s -C "$HERE" OUT="$OUT" "$OUT/sframe-lookup" >&2

CFLAGS="-O2 -fomit-frame-pointer -Wa,--gsframe"
gcc $CFLAGS -o "$OUT/prog" "$HERE/testprog/prog.c"
gcc $CFLAGS -fPIC -shared -o "$OUT/lib.so" "$HERE/testprog/lib.c"
gcc $CFLAGS -fPIE -pie -o "$OUT/prog-pie" "$HERE/testprog/prog.c"
gcc $CFLAGS -fno-pie -no-pie -o "$OUT/prog-nopie" "$HERE/testprog/prog.c"

python3 - "$OUT/sframe-lookup" "$HERE/convert.py" "$OUT/prog" "$OUT/lib.so" "$OUT/prog-pie" \
	"$OUT/prog-nopie" <<'PY'
import os, re, subprocess, sys

tool, CONVERT, files = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, os.path.dirname(CONVERT))
sys.dont_write_bytecode = True    # no __pycache__ in the repository
from readelf_sframe import parse as parse_text, expect   # noqa: E402

PLT_BLOCK = 16         # V1 PCMASK block on AMD64 (V2/V3 carry it)
n = 0
fails = 0

def tap(ok, what):
    global n, fails
    n += 1
    if not ok:
        fails += 1
    print(("ok" if ok else "not ok") + " %d - %s" % (n, what))

def parse(path):
    out = subprocess.run(["readelf", "--sframe", path], check=True,
                         capture_output=True, text=True).stdout
    return out, parse_text(out)["fdes"]

for path in files:
    dump, fdes = parse(path)
    ver = re.search(r"Version: (\S+)", dump).group(1)
    queries = {}
    for f in fdes:
        fres = f["fres"]
        for i, (start, cols) in enumerate(fres):
            exp = expect(cols)
            if f["mask"]:
                nxt = fres[i + 1][0] if i + 1 < len(fres) else PLT_BLOCK
                for k in range(f["size"] // PLT_BLOCK):
                    base = f["pc"] + k * PLT_BLOCK
                    queries[base + start] = exp
                    queries[base + nxt - 1] = exp
            else:
                nxt = fres[i + 1][0] if i + 1 < len(fres) else f["pc"] + f["size"]
                queries[start] = exp
                queries[nxt - 1] = exp
    # Just past each function, unless another one starts there.
    starts = {f["pc"] for f in fdes}
    ends = {f["pc"] + f["size"] for f in fdes} - starts
    covered = [(f["pc"], f["pc"] + f["size"]) for f in fdes]
    for e in ends:
        if not any(a <= e < b for a, b in covered):
            queries[e] = "err -2"
    addrs = sorted(queries)
    res = subprocess.run([tool, "-v", path] + [hex(a) for a in addrs],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    tap(res[0] == "validate 0", "%s (%s): sframe_validate() accepts the section" % (path, ver))
    got = {}
    for line in res[1:]:
        a, rest = line.split(" ", 1)
        got[int(a, 16)] = rest
    bad = [(a, queries[a], got.get(a)) for a in addrs if got.get(a) != queries[a]]
    for a, want, have in bad[:20]:
        print("#   %#x: readelf says %r, sframe_find() says %r" % (a, want, have))
    tap(not bad and len(fdes) > 0,
        "%s (%s): %d FDEs, %d addresses match readelf --sframe" % (path, ver, len(fdes), len(addrs)))

    # The same functions re-encoded as V2 (both start encodings) and V3
    # (both) by convert.py must give exactly the same answers.
    raw = path + ".sframe"
    subprocess.run(["objcopy", "-O", "binary", "--only-section=.sframe", path, raw], check=True)
    secaddr = None
    for line in subprocess.run(["readelf", "-SW", path], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+\.sframe\s+\S+\s+([0-9a-f]+)", line)
        if m:
            secaddr = int(m.group(1), 16)
    lo = min(f["pc"] for f in fdes)
    hi = max(f["pc"] + f["size"] for f in fdes)
    for v, enc in ((2, ""), (2, "pcrel"), (3, ""), (3, "pcrel")):
        conv = "%s.v%d%s" % (raw, v, enc)
        subprocess.run([CONVERT, raw, conv,
                        hex(secaddr), str(v)] + ([enc] if enc else []), check=True)
        res = subprocess.run([tool, "-v", "-r", conv, hex(secaddr), hex(lo), hex(hi)] +
                             [hex(a) for a in addrs], check=True, capture_output=True,
                             text=True).stdout.splitlines()
        got = {int(l.split(" ", 1)[0], 16): l.split(" ", 1)[1] for l in res[1:]}
        bad = [(a, queries[a], got.get(a)) for a in addrs if got.get(a) != queries[a]]
        for a, want, have in bad[:10]:
            print("#   %#x: V1 says %r, V%d%s says %r" % (a, want, v, enc, have))
        tap(res[0] == "validate 0" and not bad,
            "%s as V%d%s: validates, same %d answers as V1" % (path, v,
            " (PC-relative)" if enc else " (section-relative)", len(addrs)))

print("1..%d" % n)
sys.exit(1 if fails else 0)
PY
