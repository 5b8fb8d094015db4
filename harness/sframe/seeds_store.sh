#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Seed corpus for fuzz_sframe_store: each seed is what a loader writes to
# /dev/sframe_tables, a struct sframe_table_hdr (include/uapi/linux/
# sframe_table.h) and an SFrame section:
#  - the .sframe of each program check.sh built in BUILD_DIR (V1, and
#    re-encoded as V2 and V3 by convert.py, both encodings), under the
#    program's GNU build-id (readelf -n), at the section's address, for the
#    text of its executable segments (readelf -l);
#  - the sections of fixtures/ (V2 and V3 that other binutils wrote), at the
#    addresses their .info gives, under a made-up build-id;
#  - one of them followed by the sizes of the writes to split it into, a
#    few ways (the fuzz target's trailing bytes), and a remove command.
# Usage: seeds_store.sh BUILD_DIR CORPUS
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$1
CORPUS=$2
mkdir -p "$CORPUS"

# seed FILE SECTION SFRAME_VADDR TEXT_START TEXT_END BUILD_ID [CHUNKS]
seed() {
	python3 - "$@" <<'PY'
import struct, sys
out, sec, sframe, lo, hi, bid = sys.argv[1:7]
chunks = bytes(int(c) for c in sys.argv[7].split(",")) if len(sys.argv) > 7 else b""
data = open(sec, "rb").read()
bid = bytes.fromhex(bid)[:20]
hdr = struct.pack("<IHBB20sIQQQ", 0x42544653, 1, len(bid), 0, bid, len(data),
                  int(sframe, 16), int(lo, 16), int(hi, 16) - int(lo, 16))
assert len(hdr) == 56
open(out, "wb").write(hdr + data + chunks)
PY
}

first=
for f in prog lib.so prog-pie prog-nopie; do
	[ -e "$OUT/$f" ] || continue
	objcopy -O binary --only-section=.sframe "$OUT/$f" "$OUT/$f.sframe"
	sec=$(readelf -SW "$OUT/$f" | sed 's/\[ */[/' |
	      awk '$2 == ".sframe" { print "0x" $4 }')
	bid=$(readelf -n "$OUT/$f" | sed -n 's/.*Build ID: *//p')
	# The executable PT_LOADs: lowest start, highest end.
	read -r lo hi < <(readelf -lW "$OUT/$f" | python3 -c '
import sys
segs = [(int(w[2], 16), int(w[2], 16) + int(w[5], 16))
        for w in (l.split() for l in sys.stdin)
        if w and w[0] == "LOAD" and "E" in w[-2]]
print(hex(min(s for s, e in segs)), hex(max(e for s, e in segs)))')
	seed "$CORPUS/$f" "$OUT/$f.sframe" "$sec" "$lo" "$hi" "$bid"
	for v in 2 3; do
		for enc in "" pcrel; do
			"$HERE/convert.py" "$OUT/$f.sframe" "$OUT/$f.conv" "$sec" $v $enc
			seed "$CORPUS/$f-v$v$enc" "$OUT/$f.conv" "$sec" "$lo" "$hi" "$bid"
		done
	done
	[ -n "$first" ] || first="$OUT/$f.sframe $sec $lo $hi $bid"
done

n=0
for raw in "$HERE"/fixtures/*.sframe; do
	f=$(basename "$raw" .sframe)
	sec=$(awk '$1 == "sframe" { print $2 }' "$HERE/fixtures/$f.info")
	read -r lo hi < <(awk '$1 == "text" { print $2, $3 }' "$HERE/fixtures/$f.info")
	n=$((n + 1))
	seed "$CORPUS/fixture-$f" "$raw" "$sec" "$lo" "$hi" "$(printf '5eed%04x' $n)"
	[ -n "$first" ] || first="$raw $sec $lo $hi 5eed0001"
done

# Split into writes: 1 + 6 + 49 bytes of header, then the rest; the header
# alone; the header and one byte; 255-byte writes; one write too long.
for chunks in 1,6,49,0 56,0 57,0 255,255,255,255,255,255,255,255 250,250,250,250; do
	seed "$CORPUS/chunks-$chunks" $first "$chunks"
done
printf 'remove 0123456789abcdef\n' > "$CORPUS/remove"
ls "$CORPUS" | wc -l
