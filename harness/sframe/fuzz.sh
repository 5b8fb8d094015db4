#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bounded fuzz of the SFrame reader: build fuzz_sframe (clang-14, libFuzzer,
# ASan, UBSan), seed the corpus from real sections (check.sh's programs, as
# V1 and re-encoded as V2 and V3, and fixtures/), replay the corpus, then
# fuzz for SECONDS.
# Exits non-zero on any crash; the reproducer is left in BUILD_DIR/fuzz.
# Usage: fuzz.sh [SECONDS] [BUILD_DIR]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SECS=${1:-90}
OUT=${2:-$HERE/../../build/sframe}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# check.sh builds the programs and the lookup tool.
"$HERE/check.sh" "$OUT" >/dev/null
make -s -C "$HERE" OUT="$OUT" "$OUT/fuzz_sframe"
"$HERE/seeds.sh" "$OUT" "$OUT/fuzz/seeds" >/dev/null
mkdir -p "$OUT/fuzz/corpus"
cd "$OUT/fuzz"
"$OUT/fuzz_sframe" -max_total_time="$SECS" -max_len=4096 \
	-print_final_stats=1 corpus seeds 2>&1 | tail -15
