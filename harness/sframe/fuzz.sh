#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bounded fuzz of the SFrame reader, or of the load path of SFrame tables:
#  - fuzz_sframe (default): the reader (kernel/unwind/sframe.c); seeded
#    from real sections (check.sh's programs, as V1 and re-encoded as V2
#    and V3, and fixtures/; seeds.sh);
#  - fuzz_sframe_store: what /dev/sframe_tables is written, through
#    kernel/unwind/sframe_store.c and the reader; seeded with tables of the
#    same sections under their build-ids (seeds_store.sh).
# Builds the target (clang-14, libFuzzer, ASan, UBSan), replays the corpus,
# then fuzzes for SECONDS.
# Exits non-zero on any crash; the reproducer is left in BUILD_DIR/fuzz
# (fuzz_sframe) or BUILD_DIR/fuzz_store (fuzz_sframe_store).
# Usage: fuzz.sh [SECONDS] [BUILD_DIR] [TARGET]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SECS=${1:-90}
OUT=${2:-$HERE/../../build/sframe}
TARGET=${3:-fuzz_sframe}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

case $TARGET in
fuzz_sframe)
	DIR=$OUT/fuzz
	SEEDS=$HERE/seeds.sh
	# check.sh builds the programs and the lookup tool.
	"$HERE/check.sh" "$OUT" >/dev/null
	;;
fuzz_sframe_store)
	DIR=$OUT/fuzz_store
	SEEDS=$HERE/seeds_store.sh
	# The programs of check.sh, unless it built them already.
	[ -e "$OUT/prog" ] || "$HERE/check.sh" "$OUT" >/dev/null
	;;
*)
	echo "fuzz.sh: unknown target $TARGET" >&2
	exit 2
	;;
esac
make -s -C "$HERE" OUT="$OUT" "$OUT/$TARGET"
"$SEEDS" "$OUT" "$DIR/seeds" >/dev/null
mkdir -p "$DIR/corpus"
cd "$DIR"
"$OUT/$TARGET" -max_total_time="$SECS" -max_len=4096 \
	-print_final_stats=1 corpus seeds 2>&1 | tail -15
