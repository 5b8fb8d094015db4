#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Extract the pristine base into $SRC (a git tree, branch "base") and lay the
# series over it as one commit per step (branch "series"), then check the
# series out. Only files whose content changed are rewritten, so incremental
# kernel builds stay incremental.
. "$(dirname "$0")/lib.sh"

version=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null) ||
	die "linux-source-6.12 is not installed (run harness/deps.sh)"
tarball=/usr/src/linux-source-6.12.tar.xz
[ -f "$tarball" ] || die "$tarball missing"

if [ "$(cat "$SRC/.git/unwind-base-version" 2>/dev/null)" != "$version" ]; then
	log "extracting base $version into $SRC"
	rm -rf "$SRC" "$BUILD/extract"
	mkdir -p "$BUILD/extract"
	tar -C "$BUILD/extract" -xf "$tarball"
	mv "$BUILD/extract/linux-source-6.12" "$SRC"
	rmdir "$BUILD/extract"
	(
		cd "$SRC"
		git init -q -b base
		git config core.looseCompression 0
		git config gc.auto 0
		git add -f -A .
		git commit -q -m "Debian linux-source-6.12 $version"
		git tag -f pristine >/dev/null
	)
	echo "$version" > "$SRC/.git/unwind-base-version"
fi

cd "$SRC"
# Build the series commits in a private index: the work tree is untouched.
export GIT_INDEX_FILE=$SRC/.git/series-index
rm -f "$GIT_INDEX_FILE"
git read-tree pristine
parent=$(git rev-parse pristine)
upto=${1:-}		# optional: stop after this many steps (bisect builds)
n=0
listed=$(mktemp)
trap 'rm -f "$listed"' EXIT
for step in $(series_steps); do
	name=$(basename "$step")
	[ -f "$step/message" ] || die "$name: no message file"
	if [ -f "$step/files" ]; then
		while read -r f; do
			[ -n "$f" ] || continue
			src=$REPO/$f
			[ -f "$step/override/$f" ] && src=$step/override/$f
			[ -f "$src" ] || die "$name: listed file $f does not exist"
			echo "$f" >> "$listed"
			mode=100644
			[ -x "$src" ] && mode=100755
			blob=$(git hash-object -w "$src")
			git update-index --add --cacheinfo "$mode,$blob,$f"
		done < "$step/files"
	fi
	for p in "$step"/*.patch; do
		[ -e "$p" ] || continue
		git apply --cached --whitespace=nowarn "$p" 2>"$BUILD/apply.err" ||
			{ cat "$BUILD/apply.err" >&2;
			  die "patch does not apply: series/$name/$(basename "$p")"; }
	done
	tree=$(git write-tree)
	parent=$(git commit-tree "$tree" -p "$parent" -F "$step/message")
	n=$((n + 1))
	[ "$n" != "$upto" ] || break
done
unset GIT_INDEX_FILE

# Every kernel-path file in the repo must belong to some step.
if [ -z "$upto" ]; then
	for d in arch include kernel lib Documentation tools mm fs scripts; do
		[ -d "$REPO/$d" ] || continue
		(cd "$REPO" && find "$d" -type f)
	done | sort > "$listed.all"
	unlisted=$(sort -u "$listed" | comm -13 - "$listed.all")
	rm -f "$listed.all"
	[ -z "$unlisted" ] || die "files not in any series step: $unlisted"
fi

git checkout -q -f -B series "$parent"
log "series: $n step(s) applied on $version ($(git rev-parse --short HEAD))"
