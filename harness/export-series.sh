#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Export the series as git format-patch files.
#   export-series.sh [OUTDIR]	(default: build/patches)
. "$(dirname "$0")/lib.sh"

out=${1:-$BUILD/patches}
"$REPO/harness/prepare.sh" >/dev/null
rm -rf "$out"
mkdir -p "$out"
git -C "$SRC" format-patch -q --no-signature -o "$out" pristine..series
log "$(ls "$out" | wc -l) patches in $out, against Debian linux-source-6.12 $(cat "$SRC/.git/unwind-base-version")"
ls "$out"
