#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Export the series as git format-patch files.
#   export-series.sh [OUTDIR]	(default: build/patches)
. "$(dirname "$0")/lib.sh"

out=${1:-$BUILD/patches}
# UNWIND_PREPARED=1: the caller has just run prepare.sh (test.sh, whose
# kernel builds read the tree meanwhile).
[ -n "${UNWIND_PREPARED:-}" ] || "$REPO/harness/prepare.sh" >/dev/null
rm -rf "$out"
mkdir -p "$out"
git -C "$SRC" format-patch -q --no-signature --cover-letter -o "$out" pristine..series

# The cover letter: the text of series/cover-letter (its first line is the
# subject), the measured figures as the latest bench run wrote them to
# docs/bench/table.txt, and the base; format-patch adds the shortlog and
# the diffstat.
cover=$out/0000-cover-letter.patch
body=$(mktemp)
trap 'rm -f "$body"' EXIT
{
	tail -n +3 "$SERIES_DIR/cover-letter"
	echo
	echo "Measured under QEMU (TCG), from docs/bench/table.txt of the repository"
	echo "that carries this series, as \`bash harness/bench.sh\` wrote it"
	echo "($(sed -n 's/^date: //p' "$REPO/docs/bench/table.txt" | head -1)):"
	echo
	# Part 1 (idle cost) and part 3 (profiling: slowdown, bytes, completeness).
	awk '/^1\. /,/^=+$/ { if (!/^=+$/) print "  " $0 }
	     /^3\. /,/^4\. / { if (!/^4\. /) print "  " $0 }' "$REPO/docs/bench/table.txt"
	echo
	echo "Base: Debian linux-source-6.12 $(cat "$SRC/.git/unwind-base-version")."
} > "$body"
python3 - "$cover" "$(head -1 "$SERIES_DIR/cover-letter")" "$body" <<'PY'
import sys
path, subject, body = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
s = open(path).read()
if '*** SUBJECT HERE ***' not in s or '*** BLURB HERE ***' not in s:
    sys.exit('format-patch wrote no cover letter template')
s = s.replace('*** SUBJECT HERE ***', subject).replace('*** BLURB HERE ***', body.rstrip('\n'))
open(path, 'w').write(s)
PY
log "$(ls "$out" | grep -vc '^0000-') patches and a cover letter in $out, against Debian linux-source-6.12 $(cat "$SRC/.git/unwind-base-version")"
ls "$out"
