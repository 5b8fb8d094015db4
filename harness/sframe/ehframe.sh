#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/unwind/eh2sframe against an independent oracle: for every row of
# every FDE, its SFrame table read back by the kernel's reader (built in
# user space) must say what readelf --debug-dump=frames-interp says of the
# same file (ehframe_oracle.py has the rules). One PASS/FAIL line each:
#  - ehframe.oracle.NAME: Debian 12's libc (at least 99.5% of its FDEs
#    converted whole), ld.so, libstdc++ and libm, and the project's programs
#    built by gcc -O2 without frame pointers: the demo dynamic (PIE, with a
#    PLT), non-PIE, static (with libc's own code), and with its CFI in
#    .debug_frame; two selftests;
#    each also through the copy that eh2sframe --elf writes;
#  - ehframe.mutant.NAME: the converter broken in one place must make the
#    oracle fail (each mutant is built in a scratch copy).
# Usage: ehframe.sh OUT_DIR [SRC]   (SRC: the patched tree, for the
# selftests' kselftest.h; without it the selftests are skipped)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
MAIN=$(cd "$HERE/../.." && pwd)
OUT=$1
SRC=${2:-}
mkdir -p "$OUT/progs" "$OUT/oracle"

oracle() {	# CONVERTER WORKDIR NAME FILE [oracle options]
	local conv=$1 work=$2 name=$3 file=$4
	shift 4
	python3 "$HERE/ehframe_oracle.py" "$@" "$conv" "$OUT/sframe-lookup" \
		"$work" "$name" "$file"
}

if ! make -s -C "$MAIN/tools/unwind" OUTPUT="$OUT/" >"$OUT/build.log" 2>&1; then
	echo "FAIL ehframe.build: eh2sframe does not build (see $OUT/build.log)"
	exit 0
fi
if ! make -s -C "$HERE" OUT="$OUT" "$OUT/sframe-lookup" >>"$OUT/build.log" 2>&1; then
	echo "FAIL ehframe.build: sframe-lookup does not build (see $OUT/build.log)"
	exit 0
fi

# The project's programs, as GCC builds them by default at -O2.
demo=$MAIN/harness/demo/unwind_demo.c
progs=()
build() {	# NAME SOURCE FLAGS...
	local name=$1 src=$2
	shift 2
	if gcc -O2 -pthread "$@" -o "$OUT/progs/$name" "$src" \
		>>"$OUT/build.log" 2>&1; then
		progs+=("$name")
	else
		echo "FAIL ehframe.oracle.$name: does not build (see $OUT/build.log)"
	fi
}
build unwind_demo "$demo"
build unwind_demo_nopie "$demo" -fno-pie -no-pie
build unwind_demo_static "$demo" -static
build unwind_demo_debug_frame "$demo" -g -fno-asynchronous-unwind-tables
if [ -n "$SRC" ] && [ -f "$SRC/tools/testing/selftests/kselftest.h" ]; then
	for t in unwind_deferred unwind_user_sframe; do
		build "$t" "$SRC/tools/testing/selftests/unwind/$t.c"
	done
fi

lib=/lib/x86_64-linux-gnu
oracle "$OUT/eh2sframe" "$OUT/oracle" libc "$lib/libc.so.6" --min-coverage 99.5
oracle "$OUT/eh2sframe" "$OUT/oracle" ld.so /lib64/ld-linux-x86-64.so.2
oracle "$OUT/eh2sframe" "$OUT/oracle" libstdc++ /usr/lib/x86_64-linux-gnu/libstdc++.so.6
oracle "$OUT/eh2sframe" "$OUT/oracle" libm "$lib/libm.so.6"
for p in "${progs[@]}"; do
	oracle "$OUT/eh2sframe" "$OUT/oracle" "$p" "$OUT/progs/$p"
done

# Mutants: NAME FILE OLD NEW. Each must make the oracle fail on ld.so or on
# one of the demo programs.
mutant() {
	local name=$1 file=$2 dir=$OUT/mutants/$1 caught=
	rm -rf "$dir"
	# The tree's shape: load.c includes the UAPI header by its path.
	mkdir -p "$dir/src/tools/unwind" "$dir/src/include/uapi/linux"
	cp "$MAIN"/tools/unwind/* "$dir/src/tools/unwind/"
	cp "$MAIN/include/uapi/linux/sframe_table.h" "$dir/src/include/uapi/linux/"
	if ! python3 - "$dir/src/tools/unwind/$file" "$3" "$4" <<'PY'
import sys
p, old, new = sys.argv[1:]
s = open(p).read()
if s.count(old) != 1:
    sys.exit("mutation site not found once: " + old)
open(p, "w").write(s.replace(old, new))
PY
	then
		echo "FAIL ehframe.mutant.$name: mutation site not found"
		return
	fi
	if ! make -s -C "$dir/src/tools/unwind" OUTPUT="$dir/" >"$dir/build.log" 2>&1; then
		echo "FAIL ehframe.mutant.$name: does not build"
		return
	fi
	oracle "$dir/eh2sframe" "$dir" ld.so /lib64/ld-linux-x86-64.so.2 \
		>"$dir/oracle.log" 2>&1
	for p in unwind_demo unwind_demo_static unwind_demo_debug_frame; do
		[ -x "$OUT/progs/$p" ] || continue
		oracle "$dir/eh2sframe" "$dir" "$p" "$OUT/progs/$p" \
			>>"$dir/oracle.log" 2>&1
	done
	caught=$(sed -n 's/^FAIL ehframe\.oracle\.\([^:]*\):.*/\1/p' "$dir/oracle.log" |
		 tr '\n' ' ')
	if [ -n "$caught" ]; then
		echo "PASS ehframe.mutant.$name: caught by ${caught% }"
	else
		echo "FAIL ehframe.mutant.$name: survived (see $dir/oracle.log)"
	fi
}
mutant cfa-off-by-one eh2sframe.c '.cfa_off = r->cfa_off,' \
	'.cfa_off = r->cfa_off + 1,'
mutant fp-offset-sign cfi.c '		r->fp_off = off;' '		r->fp_off = -off;'
mutant plt-threshold eh2sframe.c '& r->plt_mask) >= r->plt_min;' \
	'& r->plt_mask) > r->plt_min;'
mutant partial-fde-whole eh2sframe.c \
	$'if (s->kind != ROW_FRAME && s->kind != ROW_OUTERMOST &&\n\t\t\t    !stop_row(s))\n\t\t\t\tbreak;' \
	$'if (s->kind == ROW_PLT)\n\t\t\t\tbreak;\n\t\t\tif (s->kind == ROW_LEFT_OUT)\n\t\t\t\tcontinue;'
# Rows SFrame cannot express written as nothing, not as stops (review m10).
mutant gaps-not-stops eh2sframe.c \
	'return r->kind == ROW_LEFT_OUT && r->reason != R_SIGNAL;' 'return false;'
mutant signal-converted cfi.c $'\tif (signal)\n\t\treturn R_SIGNAL;\n' ''
# --elf: the section's function starts relative to the wrong address; the
# program headers left where they were (the new segment not found).
mutant elf-base-off elf_out.c 'make_table_at(name, report, tab_vaddr, &t)' \
	'make_table_at(name, report, tab_vaddr + 8, &t)'
mutant elf-phdrs-not-moved elf_out.c '	eh.e_phoff = seg_off;' ''
mutant outermost-left-out cfi.c $'\t\tr->kind = ROW_OUTERMOST;\n\t\treturn R_NR;' \
	$'\t\treturn R_RA_RULE;'
mutant debug-frame-ignored cfi.c '		if (list_fdes(elf, name, dbg_data,' \
	'		if (0 && list_fdes(elf, name, dbg_data,'
