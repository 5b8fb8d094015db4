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
[ -z "$(find "$SERIES_DIR" -path '*/override/*' -print -quit)" ] ||
	die "series/*/override/ is the old layout; run harness/convert-layout.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Which step adds each whole file (series/NNNN-*/files). A later change to it
# is an ordinary patch of the later step.
declare -A adder
for step in $(series_steps); do
	name=$(basename "$step")
	[ -f "$step/message" ] || die "$name: no message file"
	[ -f "$step/files" ] || continue
	while read -r f; do
		[ -n "$f" ] || continue
		[ -f "$REPO/$f" ] || die "$name: listed file $f does not exist"
		[ -z "${adder[$f]:-}" ] ||
			die "$f is added by both ${adder[$f]} and $name (list it where it is added; later changes are patches)"
		adder[$f]=$name
		echo "$f" >> "$tmp/added"
	done < "$step/files"
done
touch "$tmp/added"

# The series' MAINTAINERS entry is kept once, in its final form, in the one
# series/*/*-maintainers.patch. Each of its F: lines comes with the first
# step that adds a file it covers; the other lines come with the patch.
mpatch=$(find "$SERIES_DIR" -mindepth 2 -maxdepth 2 -name '*-maintainers.patch' | sort)
[ "$(echo "$mpatch" | grep -c .)" -le 1 ] ||
	die "more than one series/*/*-maintainers.patch: $(echo $mpatch)"
mlines=()
[ -z "$mpatch" ] || mapfile -t mlines < <(sed -n 's/^+F:[[:space:]]*//p' "$mpatch")
covers() {	# PATTERN FILE: does a MAINTAINERS F: pattern cover FILE?
	case $1 in
	*/) [[ $2 == "$1"* ]] ;;
	*) [[ $2 == $1 ]] ;;
	esac
}
entry_patch() {	# ACTIVE...: the entry patch with only these F: lines
	local keep=" $* " line
	while IFS= read -r line; do
		if [[ $line == +F:* ]]; then
			local pat=${line#+F:}; pat=${pat#"${pat%%[![:space:]]*}"}
			[[ $keep == *" $pat "* ]] || continue
		fi
		printf '%s\n' "$line"
	done < "$mpatch"
}

# Content of each whole file at the step that adds it: reverse-apply, onto the
# whole file, the later steps' patches that touch it, newest first.
export GIT_INDEX_FILE=$SRC/.git/added-index
rm -f "$GIT_INDEX_FILE"
while read -r f; do
	mode=100644
	[ -x "$REPO/$f" ] && mode=100755
	printf '%s %s\t%s\n' "$mode" "$(git hash-object -w "$REPO/$f")" "$f"
done < "$tmp/added" | git update-index --add --index-info
git ls-files -s > "$tmp/final"
include=()
while read -r f; do include+=(--include="$f"); done < "$tmp/added"
declare -A blob
for step in $(series_steps | sort -r); do
	name=$(basename "$step")
	for p in $(ls -r "$step"/*.patch 2>/dev/null); do
		[[ $p != "$mpatch" ]] || continue
		sed -n 's|^+++ b/||p; s|^--- a/||p' "$p" | grep -qxFf "$tmp/added" || continue
		git apply --cached -R "${include[@]}" "$p" 2>"$BUILD/apply.err" ||
			{ cat "$BUILD/apply.err" >&2;
			  die "patch does not reverse-apply onto the whole files: series/$name/$(basename "$p")"; }
	done
	[ -f "$step/files" ] || continue
	while read -r mode b _ f; do
		blob[$f]="$mode,$b"
	done < <(grep -v '^$' "$step/files" | tr '\n' '\0' | xargs -0 -r git ls-files -s --)
done

# Build the series commits in a private index: the work tree is untouched.
export GIT_INDEX_FILE=$SRC/.git/series-index
rm -f "$GIT_INDEX_FILE"
git read-tree pristine
parent=$(git rev-parse pristine)
upto=${1:-}		# optional: stop after this many steps (bisect builds)
n=0
added_so_far=()
active=()
for step in $(series_steps); do
	name=$(basename "$step")
	if [ -f "$step/files" ]; then
		while read -r f; do
			[ -n "$f" ] || continue
			git update-index --add --cacheinfo "${blob[$f]},$f"
			added_so_far+=("$f")
		done < "$step/files"
	fi
	for p in "$step"/*.patch; do
		[ -e "$p" ] || continue
		[[ $p != "$mpatch" ]] || continue
		git apply --cached --whitespace=nowarn "$p" 2>"$BUILD/apply.err" ||
			{ cat "$BUILD/apply.err" >&2;
			  die "patch does not apply: series/$name/$(basename "$p")"; }
	done
	# The MAINTAINERS entry, from its step on, with the F: lines due so far.
	if [ -n "$mpatch" ] && { [ ${#active[@]} -gt 0 ] || [[ $mpatch == "$step"/* ]]; }; then
		now=()
		for pat in "${mlines[@]}"; do
			for f in "${added_so_far[@]}"; do
				if covers "$pat" "$f"; then now+=("$pat"); break; fi
			done
		done
		[ ${#now[@]} -gt 0 ] ||
			die "series/$name/$(basename "$mpatch"): none of its F: lines covers a file added so far"
		if [ "${now[*]}" != "${active[*]}" ]; then
			if [ ${#active[@]} -gt 0 ]; then
				entry_patch "${active[@]}" | git apply --cached --recount -R
			fi
			entry_patch "${now[@]}" | git apply --cached --recount 2>"$BUILD/apply.err" ||
				{ cat "$BUILD/apply.err" >&2;
				  die "patch does not apply: ${mpatch#"$REPO"/}"; }
			active=("${now[@]}")
		fi
	fi
	tree=$(git write-tree)
	parent=$(git commit-tree "$tree" -p "$parent" -F "$step/message")
	n=$((n + 1))
	[ "$n" != "$upto" ] || break
done

if [ -z "$upto" ]; then
	# The patches must give the whole files back, ...
	git ls-files -s -- $(cat "$tmp/added") | cmp -s - "$tmp/final" ||
		die "the series' patches do not give back the whole files: $(git ls-files -s -- $(cat "$tmp/added") | diff - "$tmp/final" | grep '^>' | cut -f2 | tr '\n' ' ')"
	# ... every F: line of the MAINTAINERS entry must cover a file, ...
	[ "${#active[@]}" = "${#mlines[@]}" ] ||
		die "${mpatch#"$REPO"/}: F: lines that cover no file the series adds: $(printf '%s\n' "${mlines[@]}" | grep -vxFf <(printf '%s\n' "${active[@]}") | tr '\n' ' ')"
	# ... and every kernel-path file in the repo must belong to some step.
	for d in arch include kernel lib Documentation tools mm fs scripts; do
		[ -d "$REPO/$d" ] || continue
		(cd "$REPO" && find "$d" -type f)
	done | sort > "$tmp/all"
	unlisted=$(sort -u "$tmp/added" | comm -13 - "$tmp/all")
	[ -z "$unlisted" ] || die "files not in any series step: $unlisted"
fi
unset GIT_INDEX_FILE

git checkout -q -f -B series "$parent"
log "series: $n step(s) applied on $version ($(git rev-parse --short HEAD))"
