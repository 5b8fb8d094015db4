#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Proof for the layout conversion: build the series from OLD (a commit of this
# repository in the old layout, with its own prepare.sh) and from the work tree
# (new layout), and compare them step by step: same number of steps, same
# messages, and the same tree at every step, except for MAINTAINERS, whose
# differences are printed. Exit status 1 on any other difference.
# Kernel-path files that no step lists (work in progress) are left out of
# both, with a note.
#   compare-layout.sh OLD
. "$(dirname "$0")/lib.sh"

rev=$(git -C "$REPO" rev-parse --verify "${1:?usage: compare-layout.sh OLD}^{commit}")
old=$(mktemp -d) new=$(mktemp -d)
trap 'git -C "$REPO" worktree remove --force "$old"; rm -rf "$old" "$new"' EXIT
git -C "$REPO" worktree add -q --detach "$old" "$rev"
# The new layout: a copy of the work tree (build/ left out).
(cd "$REPO" && git ls-files -co --exclude-standard -z | grep -zv '^build/' |
	tar --null -T - -cf -) | tar -C "$new" -xf -

# Work in progress may hold kernel-path files that no step lists yet; they
# are in no tree, so drop them from both copies (prepare.sh would refuse).
drop_unlisted() {
	local dir=$1 f
	cat "$dir"/series/*/files 2>/dev/null | sort -u > "$dir/.listed"
	for f in arch include kernel lib Documentation tools mm fs scripts; do
		[ ! -d "$dir/$f" ] || (cd "$dir" && find "$f" -type f)
	done | sort | comm -13 "$dir/.listed" - |
	while read -r f; do
		echo "NOTE: $f is in no step of ${2}; left out" >&2
		rm "$dir/$f"
	done
	rm "$dir/.listed"
}
drop_unlisted "$old" "$rev"
drop_unlisted "$new" "the work tree"

UNWIND_BUILD=$BUILD "$old/harness/prepare.sh" 2>/dev/null ||
	die "the old layout's prepare.sh failed"
git -C "$SRC" update-ref refs/layout/old series
UNWIND_BUILD=$BUILD "$new/harness/prepare.sh" ||
	die "the new layout's prepare.sh failed"
git -C "$SRC" update-ref refs/layout/new series

cd "$SRC"
mapfile -t o < <(git rev-list --reverse pristine..refs/layout/old)
mapfile -t n < <(git rev-list --reverse pristine..refs/layout/new)
[ ${#o[@]} = ${#n[@]} ] || die "old has ${#o[@]} steps, new has ${#n[@]}"
fail=0 same=0 maint=0
for i in "${!o[@]}"; do
	k=$((i + 1))
	subj=$(git log -1 --format=%s "${n[i]}")
	if [ "$(git log -1 --format=%B "${o[i]}")" != "$(git log -1 --format=%B "${n[i]}")" ]; then
		echo "DIFF step $k ($subj): commit message"; fail=1
	fi
	if [ "$(git rev-parse "${o[i]}^{tree}")" = "$(git rev-parse "${n[i]}^{tree}")" ]; then
		echo "SAME step $k ($subj): tree $(git rev-parse --short "${n[i]}^{tree}")"
		same=$((same + 1))
	elif git diff --quiet "${o[i]}" "${n[i]}" -- . ':!MAINTAINERS'; then
		# Compare what this step itself does to MAINTAINERS.
		ow=$(git diff "${o[i]}~" "${o[i]}" -- MAINTAINERS | grep '^[-+][^-+]' || true)
		nw=$(git diff "${n[i]}~" "${n[i]}" -- MAINTAINERS | grep '^[-+][^-+]' || true)
		if [ "$ow" = "$nw" ]; then
			echo "MAINTAINERS step $k ($subj): same change, on the earlier steps' entry"
		else
			echo "MAINTAINERS step $k ($subj): the step's own change differs:"
			diff <(echo "$ow") <(echo "$nw") | grep '^[<>]' |
				sed 's/^</    old/; s/^>/    new/'  || true
		fi
		maint=$((maint + 1))
	else
		echo "DIFF step $k ($subj): $(git diff --name-only "${o[i]}" "${n[i]}" | tr '\n' ' ')"
		fail=1
	fi
done
echo "$same of ${#n[@]} steps identical, $maint differ only in MAINTAINERS"
# $SRC is left at the new layout's series (run prepare.sh to restore it
# if the work tree held files that no step lists).
exit $fail
