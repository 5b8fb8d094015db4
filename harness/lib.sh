# SPDX-License-Identifier: GPL-2.0
# Common settings for the harness. Sourced by every harness script.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${UNWIND_BUILD:-$REPO/build}
SRC=$BUILD/src			# git tree: branch "base" = pristine, "series" = patched
SERIES_DIR=$REPO/series
CONFIGS=$REPO/harness/configs
PIN_VERSION=6.12.117-1~deb12u1
JOBS=${JOBS:-$(nproc)}
# Directories holding the series' new code, rebuilt at W=1 after each build.
W1_DIRS="kernel/unwind/ lib/tests/"
# New files in directories of the base, built at W=1 once they exist.
W1_FILES="kernel/events/callchain_deferred.o kernel/trace/trace_deferred_unwind.o"

export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
export CCACHE_BASEDIR=$BUILD
export CCACHE_NOHASHDIR=1
export CCACHE_DEPEND=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-10G}
KCC=$REPO/harness/kcc	# ccache gcc, but not for .incbin (see there)

# Fixed identity and dates so that the exported series is reproducible.
export GIT_AUTHOR_NAME="Deferred Unwind Project"
export GIT_AUTHOR_EMAIL="unwind@example.org"
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME
export GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
export GIT_AUTHOR_DATE="2026-11-22T00:00:00Z"
export GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# The ordered list of series steps (directories under series/).
series_steps() {
	find "$SERIES_DIR" -mindepth 1 -maxdepth 1 -type d -name '[0-9][0-9][0-9][0-9]-*' | sort
}

# The pristine base checked out at $BUILD/src-base (a worktree of $SRC at
# its tag "pristine"), for the base kernel and for telling the base's own
# warnings from the series'. Checked out again only when it is not there.
BSRC=$BUILD/src-base
base_tree() {
	local want
	want=$(git -C "$SRC" rev-parse pristine)
	if [ "$(git -C "$BSRC" rev-parse HEAD 2>/dev/null)" != "$want" ]; then
		rm -rf "$BSRC"
		git -C "$SRC" worktree prune
		git -C "$SRC" worktree add -q -f --detach "$BSRC" "$want" ||
			die "cannot check out the base in $BSRC"
	fi
}
