#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bisectability: build the test kernel at every prefix of the series (each
# step applied on top of the previous ones), with W=1 on the directories the
# series adds, and the perf tool at every step that changes it. Too slow for CI; run it before submitting a change to the
# series. Leaves $SRC at the full series again.
#   bisect.sh [FIRST]	(start at prefix FIRST, default 1)
. "$(dirname "$0")/lib.sh"

n=$(series_steps | wc -l)
fail=0
trap '"$REPO/harness/prepare.sh" >/dev/null 2>&1' EXIT
for k in $(seq "${1:-1}" "$n"); do
	"$REPO/harness/prepare.sh" "$k" 2>/dev/null
	subj=$(git -C "$SRC" log -1 --format=%s)
	if OBJ=$BUILD/obj-bisect "$REPO/harness/build-kernel.sh" test --no-check \
		2>"$BUILD/bisect-$k.err"; then
		if grep -q 'warning:' "$BUILD/bisect-$k.err"; then
			echo "FAIL step $k ($subj): warnings"; fail=1
		else
			echo "PASS step $k ($subj)"
		fi
	else
		echo "FAIL step $k ($subj): build failed, see $BUILD/obj-bisect/build.log"
		fail=1
	fi
	# Steps that change the perf tool must also build it (warnings are errors).
	if git -C "$SRC" diff --quiet HEAD~1 HEAD -- tools/perf tools/lib/perf; then
		continue
	fi
	if "$REPO/harness/build-perf.sh" 2>"$BUILD/bisect-$k-perf.err"; then
		echo "PASS step $k ($subj): perf"
	else
		echo "FAIL step $k ($subj): perf build failed, see $BUILD/perf/build.log"
		fail=1
	fi
done
exit $fail
