#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Seed corpus for fuzz_sframe from real sections: each seed is the fuzz
# target's 16 parameter bytes (lookup address = a function start, relative
# to the section; whole address space as text) followed by the .sframe
# bytes of a program built by check.sh, and the same bytes re-encoded as V2
# and V3 by convert.py; and the sections of fixtures/ (V2 and V3 that other
# binutils wrote).  Usage: seeds.sh BUILD_DIR CORPUS
set -euo pipefail
OUT=$1
CORPUS=$2
mkdir -p "$CORPUS"
for f in prog lib.so prog-pie prog-nopie; do
	[ -e "$OUT/$f" ] || continue
	objcopy -O binary --only-section=.sframe "$OUT/$f" "$OUT/$f.sframe"
	sec=$(readelf -SW "$OUT/$f" | sed 's/\[ */[/' | awk '$2 == ".sframe" { print $4 }')
	for pc in $(readelf --sframe "$OUT/$f" |
		    sed -n 's/.*func idx \[[0-9]*\]: pc = \(0x[0-9a-f]*\).*/\1/p'); do
		python3 -c '
import struct, sys
off = (int(sys.argv[1], 16) - int(sys.argv[2], 16)) & (2**64 - 1)
sys.stdout.buffer.write(struct.pack("<QII", off, 0, 0))
' "$pc" "$sec" > "$OUT/params"
		cat "$OUT/params" "$OUT/$f.sframe" > "$CORPUS/$f-$pc"
		# The same section as V2 and V3 (convert.py), both encodings.
		for v in 2 3; do
			for enc in "" pcrel; do
				"$(dirname "$0")/convert.py" "$OUT/$f.sframe" \
					"$OUT/$f.conv" "0x$sec" $v $enc
				cat "$OUT/params" "$OUT/$f.conv" \
					> "$CORPUS/$f-$pc-v$v$enc"
			done
		done
	done
done
FIX=$(dirname "$0")/fixtures
for raw in "$FIX"/*.sframe; do
	f=$(basename "$raw" .sframe)
	sec=$(awk '$1 == "sframe" { print $2 }' "$FIX/$f.info")
	for pc in $(sed -n 's/.*func idx \[[0-9]*\]: pc = \(0x[0-9a-f]*\).*/\1/p' \
		    "$FIX/$f.readelf"); do
		python3 -c '
import struct, sys
off = (int(sys.argv[1], 16) - int(sys.argv[2], 16)) & (2**64 - 1)
sys.stdout.buffer.write(struct.pack("<QII", off, 0, 0))
' "$pc" "$sec" | cat - "$raw" > "$CORPUS/fixture-$f-$pc"
	done
done
ls "$CORPUS" | wc -l
