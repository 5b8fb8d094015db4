#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a kernel from $SRC (the patched tree) out of tree.
#   build-kernel.sh test|debug|race|base [--no-check]
# Output: $BUILD/obj-VARIANT/arch/x86/boot/bzImage
# "base" builds the pristine base (no series) with the test config, from a
# git worktree of the base commit in $BUILD/src-base, so that $SRC keeps
# the series and nothing there needs rebuilding.
. "$(dirname "$0")/lib.sh"

variant=${1:?usage: build-kernel.sh test|debug}
check=1
[ "${2:-}" != --no-check ] || check=0
case $variant in
test)	frags="$CONFIGS/test.config $CONFIGS/bpf.config $CONFIGS/net.config" ;;
debug)	frags="$CONFIGS/test.config $CONFIGS/bpf.config $CONFIGS/debug.config" ;;
race)	frags="$CONFIGS/test.config $CONFIGS/race.config" ;;	# KCSAN
base)	frags="$CONFIGS/test.config"; check=0 ;;	# pristine base, for comparisons
*)	die "unknown variant $variant" ;;
esac
obj=${OBJ:-$BUILD/obj-$variant}
mkdir -p "$obj"
if [ "$variant" = base ]; then
	base_tree
	SRC=$BSRC
fi

make -s -C "$SRC" O="$obj" CC="$KCC" tinyconfig >/dev/null
# shellcheck disable=SC2086
(cd "$obj" && "$SRC/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" $frags >/dev/null)
make -s -C "$SRC" O="$obj" CC="$KCC" olddefconfig >/dev/null

if [ "$check" = 1 ]; then
	bad=
	for f in $frags; do
		while IFS= read -r line; do
			case $line in
			CONFIG_*=n) opt=${line%=n}
				grep -q "^$opt=" "$obj/.config" && bad="$bad $opt(=n)" ;;
			CONFIG_*=*)
				grep -qx "$line" "$obj/.config" || bad="$bad $line" ;;
			esac
		done < "$f"
	done
	[ -z "$bad" ] || die "config options did not stick in $variant:$bad"
fi

log "building $variant kernel in $obj"
if ! make -C "$SRC" O="$obj" CC="$KCC" -j"$JOBS" bzImage >"$obj/build.log" 2>&1; then
	grep -E 'error|Error' "$obj/build.log" | head -20 >&2
	die "$variant kernel build failed (see $obj/build.log)"
fi
# The kernel inside the bzImage must be the vmlinux just built: a piggy.o
# from ccache once put an older kernel in it (see harness/kcc).
"$SRC/scripts/extract-vmlinux" "$obj/arch/x86/boot/bzImage" >"$obj/bzImage.payload" 2>/dev/null &&
	cmp -s "$obj/bzImage.payload" "$obj/arch/x86/boot/compressed/vmlinux.bin" ||
	die "$variant: the kernel in the bzImage is not the vmlinux just built"
rm -f "$obj/bzImage.payload"
[ "$variant" != base ] || { log "built $obj/arch/x86/boot/bzImage"; exit 0; }
# The series' own directories and files must also be clean at W=1.
w1=$W1_DIRS
for f in $W1_FILES; do
	[ ! -f "$SRC/${f%.o}.c" ] || w1="$w1 $f"
done
# shellcheck disable=SC2086
make -C "$SRC" O="$obj" CC="$KCC" -j"$JOBS" W=1 $w1 >"$obj/build-w1.log" 2>&1 ||
	die "$variant W=1 build of $w1 failed (see $obj/build-w1.log)"
# New warnings are errors for this project: show them all.
grep -hE 'warning:' "$obj/build.log" "$obj/build-w1.log" >&2 || true
log "built $obj/arch/x86/boot/bzImage"
