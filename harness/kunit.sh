#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the series' KUnit suites the standard way, with kunit.py on the
# patched tree (x86_64 under QEMU). Prints PASS/FAIL lines per test case.
. "$(dirname "$0")/lib.sh"

kdir=$BUILD/kunit
mkdir -p "$kdir"
json=$kdir/results.json
rm -f "$json"
set +e
(cd "$SRC" && python3 tools/testing/kunit/kunit.py run --arch=x86_64 \
	--kunitconfig="$CONFIGS/kunitconfig" --build_dir="$kdir" \
	--jobs="$JOBS" --timeout=600 --make_options CC="$KCC" \
	--qemu_args="-smp 2" \
	--json="$json") >"$kdir/kunit.log" 2>&1
rc=$?
set -e
python3 - "$json" "$rc" "$kdir/kunit.log" <<'PY'
import json, sys
path, rc, logf = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    data = json.load(open(path))
except Exception:
    print('FAIL kunit.py: no results (exit %d, see %s)' % (rc, logf))
    sys.exit(0)
n = 0
for suite in data.get('sub_groups', []):
    for case in suite.get('test_cases', []):
        n += 1
        name = 'kunit.py.%s.%s' % (suite['name'], case['name'])
        if case['status'] == 'PASS':
            print('PASS ' + name)
        else:
            print('FAIL %s: %s' % (name, case['status']))
if not n:
    print('FAIL kunit.py: no test cases ran (see %s)' % logf)
if rc and n:
    print('FAIL kunit.py.exit: exit status %d (see %s)' % (rc, logf))
PY
