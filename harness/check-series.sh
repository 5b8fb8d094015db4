#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check the exported series: it must "git am" onto the pristine base and give
# exactly the tree the harness builds, and every patch must be clean under
# "checkpatch.pl --strict". Prints PASS/FAIL lines.
. "$(dirname "$0")/lib.sh"

out=$BUILD/patches
"$REPO/harness/export-series.sh" "$out" >/dev/null

am=$BUILD/am-check
if [ ! -e "$am/.git" ]; then
	rm -rf "$am"
	git -C "$SRC" worktree prune
	git -C "$SRC" worktree add -q --detach "$am" pristine
fi
git -C "$am" am --abort >/dev/null 2>&1 || true
git -C "$am" checkout -q -f --detach pristine
git -C "$am" clean -q -fdx
cover=$out/0000-cover-letter.patch
if [ -s "$cover" ] && ! grep -q '\*\*\* .* HERE \*\*\*' "$cover" &&
   grep -q '^Subject: \[PATCH 00/' "$cover" && grep -q 'files changed' "$cover"; then
	echo "PASS series.cover-letter"
else
	echo "FAIL series.cover-letter: missing, or a template placeholder left in $cover"
fi
if git -C "$am" am -q $(ls "$out"/*.patch | grep -v '/0000-cover-letter.patch$') \
	>"$BUILD/am.log" 2>&1; then
	if [ "$(git -C "$am" rev-parse 'HEAD^{tree}')" = \
	     "$(git -C "$SRC" rev-parse 'series^{tree}')" ]; then
		echo "PASS series.git-am"
	else
		echo "FAIL series.git-am: applied, but the tree differs from the harness's"
	fi
else
	echo "FAIL series.git-am: $(grep -m1 -E 'error|Patch failed' "$BUILD/am.log")"
	git -C "$am" am --abort >/dev/null 2>&1 || true
fi

mapfile -t steps < <(series_steps)
k=0
for p in "$out"/*.patch; do
	[ "$p" != "$cover" ] || continue
	name=$(basename "$p" .patch)
	# A step may name checkpatch types it must ignore, with the reason, in
	# series/NNNN-*/checkpatch-ignore ('#' lines are comments). The k-th
	# exported patch is the k-th step.
	f=${steps[k]}/checkpatch-ignore
	k=$((k + 1))
	ignore=()
	[ ! -f "$f" ] || ignore=(--ignore "$(grep -v '^#' "$f" | paste -sd, -)")
	if (cd "$SRC" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl --strict -q --color=never \
		"${ignore[@]}" "$p") \
		>"$BUILD/checkpatch-$name.log" 2>&1; then
		echo "PASS checkpatch.$name"
	else
		echo "FAIL checkpatch.$name: $(grep -m1 -E '^(ERROR|WARNING|CHECK)' "$BUILD/checkpatch-$name.log")"
		sed 's/^/    /' "$BUILD/checkpatch-$name.log" >&2
	fi
done

# kernel-doc comments of the series' C files and headers must be clean.
files=$(git -C "$SRC" diff --name-only --diff-filter=A pristine series -- '*.c' '*.h' |
	grep -v '^tools/')
if out=$(cd "$SRC" && scripts/kernel-doc -Wall -none $files 2>&1) && [ -z "$out" ]; then
	echo "PASS series.kernel-doc"
else
	echo "FAIL series.kernel-doc: $(echo "$out" | head -n 1)"
fi
