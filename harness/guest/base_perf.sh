#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run on the unpatched base kernel: the patched perf's fp,defer shell test
# must take its fallback branch there (the kernel rejects defer_callchain
# like any reserved bit) and pass, and Debian's perf must work as before.
export HOME=/tmp UNWIND_DEMO=/tests/bin/unwind_demo PATH=/tests/perf:$PATH
echo "TAP version 13"
echo "1..2"
bash /tests/perf/tests/shell/record_defer.sh >/tmp/base-perf.out 2>&1
rc=$?
sed 's/^/# /' /tmp/base-perf.out
if [ $rc = 0 ] && grep -q "^Fallback test \[Success\]" /tmp/base-perf.out; then
	echo "ok 1 - fp,defer falls back to fp on a kernel without support"
else
	echo "not ok 1 - fp,defer falls back to fp on a kernel without support"
fi
sh /tests/debian_perf.sh >/tmp/base-debian.out 2>&1
sed 's/^/# /' /tmp/base-debian.out
if grep -q "^not ok" /tmp/base-debian.out || ! grep -q "^ok 4 " /tmp/base-debian.out; then
	echo "not ok 2 - Debian's perf on the base kernel (reference for debian_perf)"
else
	echo "ok 2 - Debian's perf on the base kernel (reference for debian_perf)"
fi
