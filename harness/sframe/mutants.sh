#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Mutants of the SFrame reader: each must make the user-space KUnit run
# (sframe-kunit), check.sh or fixtures.sh fail; a mutant given an expected
# check must make that one fail. Builds each mutant in a scratch copy.
# Usage: mutants.sh [SCRATCH_DIR]
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
MAIN=$(cd "$HERE/../.." && pwd)
SCRATCH=${1:-$MAIN/build/sframe-mutants}

# name, python replace old, new [, kunit|check|fixtures: must fail
# [, old, new in convert.py too: a misreading the reader and the converter
# share]
mutate() {
	local name=$1 old=$2 new=$3 expect=${4:-} dir=$SCRATCH/$1 caught=
	rm -rf "$dir"
	mkdir -p "$dir/kernel/unwind" "$dir/lib/tests" "$dir/harness" \
		"$dir/include/linux"
	cp "$MAIN/include/linux/unwind_user_types.h" "$dir/include/linux/"
	cp "$MAIN"/kernel/unwind/sframe.[ch] "$dir/kernel/unwind/"
	cp "$MAIN/lib/tests/sframe_kunit.c" "$dir/lib/tests/"
	cp -r "$HERE" "$dir/harness/sframe"
	rm -rf "$dir/harness/sframe/testprog/"*.o
	python3 - "$dir/kernel/unwind/sframe.c" "$old" "$new" \
		"$dir/harness/sframe/convert.py" "${5:-}" "${6:-}" <<'PY' || return 1
import sys
args = sys.argv[1:]
for p, old, new in (args[0:3], args[3:6]):
    if not old:
        continue
    s = open(p).read()
    if old not in s:
        sys.exit("mutation site not found: " + old)
    open(p, "w").write(s.replace(old, new, 1))
PY
	make -s -C "$dir/harness/sframe" MAIN="$dir" OUT="$dir/out" \
		"$dir/out/sframe-kunit" "$dir/out/sframe-lookup" 2>/dev/null || {
		echo "not ok - $name: does not build"; return 1; }
	"$dir/out/sframe-kunit" >"$dir/kunit.log" 2>&1 || caught+=" kunit"
	"$dir/harness/sframe/check.sh" "$dir/out" >"$dir/check.log" 2>&1 ||
		caught+=" check"
	"$dir/harness/sframe/fixtures.sh" "$dir/out" >"$dir/fixtures.log" 2>&1 ||
		caught+=" fixtures"
	if [ -z "$caught" ]; then
		echo "not ok - $name: survived"
		return 1
	fi
	if [ -n "$expect" ] && [[ "$caught " != *" $expect "* ]]; then
		echo "not ok - $name: not caught by $expect (only by$caught)"
		return 1
	fi
	echo "ok - $name: killed by$caught"
}

fail=0
mutate fde-search-off-by-one 'if (fde->func_start <= ip) {' \
	'if (fde->func_start < ip) {' || fail=1
mutate pcmask-ignored '		ip_off %= fde->rep_size;' '' || fail=1
mutate no-bounds-check '	return off <= limit && len <= limit - off;' \
	'	return (void)off, (void)limit, (void)len, true;' || fail=1
mutate text-range-unchecked '	return sframe_check_fde_range(sec, fde);' \
	'	return 0;' || fail=1
# The per-walk cache (step 35): answers must be those of the uncached lookup.
mutate cache-any-ip 'cache->have_ip && cache->ip == ip' 'cache->have_ip' || fail=1
mutate cache-fde-any-ip 'ip - cache->fde.func_start < cache->fde.func_size' '1' || fail=1
mutate frebuf-offset 'memcpy(buf, fb->data + (off - fb->pos), len);' \
	'memcpy(buf, fb->data, len);' || fail=1
# V2 PC-relative starts and V3: fixtures.sh must catch these by itself, from
# sections binutils wrote or read, not only check.sh from convert.py's.
mutate pcrel-ignored 'if (sec->flags & SFRAME_F_FDE_FUNC_START_PCREL)' 'if (0)' fixtures || fail=1
mutate v3-attrs-not-skipped '		fre_rel += SFRAME_V3_ATTR_SIZE;' '' fixtures || fail=1
# The same misreading in the reader and in convert.py: check.sh compares the
# two and passes; only sections that binutils wrote or read tell.
mutate shared-pcrel-base $'\t\tbase += off;\n' $'\t\tbase += off + sec->fde_size;\n' \
	fixtures 'field = dstaddr + HDR + fde_size * i' \
	'field = dstaddr + HDR + fde_size * (i + 1)' || fail=1
mutate shared-v3-attr-order $'\t\tinfo2 = a[3];\n\t\trep = a[4];\n' \
	$'\t\tinfo2 = a[4];\n\t\trep = a[3];\n' fixtures \
	'struct.pack("<HBBB", num, info, 0, rep)' \
	'struct.pack("<HBBB", num, info, rep, 0)' || fail=1
mutate fp-offset-dropped '		frame->fp_off = word[1];' '		frame->fp_off = 0;' || fail=1
mutate fre-scan-off-by-one '		if (fre.start > ip_off)' '		if (fre.start >= ip_off)' || fail=1
mutate outermost-ignored '		return SFRAME_OUTERMOST;' '		return -ENOENT;' || fail=1
mutate sign-of-1-byte-words '			word[i] = (s8)p[0];' '			word[i] = p[0];' || fail=1
exit $fail
