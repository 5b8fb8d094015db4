#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's SFrame reader (kernel/unwind/sframe.c) built in user space
# through harness/sframe/: one PASS/FAIL line per result.
#  - sframe.check.N: against the real toolchain (readelf --sframe) on
#    programs and a library built with -Wa,--gsframe, as V1 and re-encoded
#    as V2 and V3;
#  - sframe.fixture.N: against sections other binutils wrote (V3 from
#    sid's, V2 from trixie's 2.44) or read (V2 with PC-relative starts from
#    convert.py), stored in harness/sframe/fixtures/ with their readelf
#    --sframe output: three results per fixture;
#  - sframe.kunit.NAME: the KUnit cases of lib/tests/sframe_kunit.c, under
#    ASan and UBSan;
#  - sframe.store_race.CASE: two threads writing one open
#    /dev/sframe_tables at once (kernel/unwind/sframe_store.c through the
#    shim, ASan, UBSan): one stopped inside its copy of the section while
#    the other writes, then the exact results of the two writes one after
#    the other (harness/sframe/store_race.c);
#  - sframe.fuzz: libFuzzer (ASan, UBSan) for SFRAME_FUZZ_SECONDS (default
#    60), seeded with real sections; any crash is a failure;
#  - sframe.fuzz_store: libFuzzer on the load path of tables
#    (kernel/unwind/sframe_store.c: what /dev/sframe_tables is written),
#    for SFRAME_FUZZ_STORE_SECONDS, by default SFRAME_FUZZ_SECONDS up to
#    30; any crash or failed check is a failure;
#  - ehframe.oracle.NAME, ehframe.mutant.NAME: the .eh_frame converter
#    (tools/unwind/eh2sframe) against readelf's CFI interpreter, on Debian
#    12's libc, ld.so, libstdc++ and libm and the project's programs, and
#    its mutants (harness/sframe/ehframe.sh).
. "$(dirname "$0")/lib.sh"
set +e

out=$BUILD/sframe
mkdir -p "$out"
tap() {	# PREFIX: TAP on stdin to PASS/FAIL lines
	awk -v p="$1" '
		/^ok / { sub(/^ok [0-9]+ - /, ""); n++; print "PASS " p "." n ": " $0; next }
		/^not ok / { sub(/^not ok [0-9]+ - /, ""); n++; print "FAIL " p "." n ": " $0; next }'
}

tap_cases() {	# PREFIX: TAP of named cases ("ok N - NAME[: why]") to PASS/FAIL lines
	awk -v p="$1" '
		/^ok / { sub(/^ok [0-9]+ - /, ""); print "PASS " p "." $0; next }
		/^not ok / { sub(/^not ok [0-9]+ - /, ""); print "FAIL " p "." $0; next }'
}

if bash "$REPO/harness/sframe/check.sh" "$out" 2>"$out/check.err" | tap sframe.check |
   grep . ; then :; else
	echo "FAIL sframe.check: no results (see $out/check.err)"
fi
if bash "$REPO/harness/sframe/fixtures.sh" "$out" 2>"$out/fixtures.err" |
   tap sframe.fixture | grep . ; then :; else
	echo "FAIL sframe.fixture: no results (see $out/fixtures.err)"
fi
if bash "$REPO/harness/sframe/ehframe.sh" "$out/ehframe" "$SRC" 2>"$out/ehframe.err" |
   grep . ; then :; else
	echo "FAIL ehframe: no results (see $out/ehframe.err)"
fi
if make -s -C "$REPO/harness/sframe" OUT="$out" "$out/sframe-kunit" >"$out/kunit.log" 2>&1; then
	"$out/sframe-kunit" 2>>"$out/kunit.log" | awk '
		/^ok / { sub(/^ok [0-9]+ - /, ""); print "PASS sframe.kunit." $0; next }
		/^not ok / { sub(/^not ok [0-9]+ - /, ""); print "FAIL sframe.kunit." $0; next }'
else
	echo "FAIL sframe.kunit: build failed (see $out/kunit.log)"
fi
if make -s -C "$REPO/harness/sframe" OUT="$out" "$out/sframe-store-race" \
	>"$out/store_race.log" 2>&1; then
	# Captured, not "| grep . ||": with pipefail, a failed case would
	# fail the pipeline too.
	res=$("$out/sframe-store-race" 2>>"$out/store_race.log" | tap_cases sframe.store_race)
	if [ -n "$res" ]; then
		echo "$res" | sed "/^FAIL/s|\$| (see $out/store_race.log)|"
	else
		echo "FAIL sframe.store_race: no results (see $out/store_race.log)"
	fi
else
	echo "FAIL sframe.store_race: build failed (see $out/store_race.log)"
fi
if bash "$REPO/harness/sframe/fuzz.sh" "${SFRAME_FUZZ_SECONDS:-60}" "$out" \
	>"$out/fuzz.log" 2>&1; then
	echo "PASS sframe.fuzz: $(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' "$out/fuzz.log" |
		sed 's/.*: //') runs, no crash"
else
	echo "FAIL sframe.fuzz: see $out/fuzz.log"
fi
store_secs=${SFRAME_FUZZ_SECONDS:-60}
[ "$store_secs" -le 30 ] || store_secs=30
if bash "$REPO/harness/sframe/fuzz.sh" "${SFRAME_FUZZ_STORE_SECONDS:-$store_secs}" \
	"$out" fuzz_sframe_store >"$out/fuzz_store.log" 2>&1; then
	echo "PASS sframe.fuzz_store: $(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' "$out/fuzz_store.log" |
		sed 's/.*: //') runs, no crash"
else
	echo "FAIL sframe.fuzz_store: see $out/fuzz_store.log"
fi
