#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The series' KUnit suites the standard way, through kunit.py on the patched
# tree. Prints PASS/FAIL lines per test case, "kunit.py.SUITE.CASE".
#   kunit.sh
#       kunit.py run: its own kernel (x86_64 under QEMU) with
#       configs/kunitconfig, built into build/kunit/.
#   kunit.sh --parse CONSOLE_LOG DOTCONFIG
#       kunit.py parse on the KTAP that a boot already printed (test.sh: the
#       test kernel's boot, whose .config is DOTCONFIG): the same suites
#       as the run, without a kernel of their own. Every option of
#       configs/kunitconfig must be set as it says in DOTCONFIG, or
#       "kunit.py.config" fails.
. "$(dirname "$0")/lib.sh"

kdir=$BUILD/kunit
mkdir -p "$kdir"
json=$kdir/results.json
rm -f "$json"
set +e
if [ "${1:-}" = --parse ]; then
	console=${2:?console log}
	dotconfig=${3:?.config of the kernel that printed it}
	missing=
	while IFS= read -r line; do
		case $line in
		CONFIG_*=n)
			! grep -q "^${line%=n}=" "$dotconfig" 2>/dev/null ||
				missing="$missing $line" ;;
		CONFIG_*=*)
			grep -qxF "$line" "$dotconfig" 2>/dev/null ||
				missing="$missing $line" ;;
		esac
	done < "$CONFIGS/kunitconfig"
	[ -z "$missing" ] ||
		echo "FAIL kunit.py.config: $dotconfig lacks what configs/kunitconfig asks for:$missing"
	# The kernel's KTAP comes before user space starts; the programs'
	# own TAP after it is not KUnit's.
	sed '/^=== USERSPACE/,$d' "$console" > "$kdir/console.ktap" 2>/dev/null
	(cd "$SRC" && python3 tools/testing/kunit/kunit.py parse --json="$json" \
		"$kdir/console.ktap") >"$kdir/kunit.log" 2>&1
	rc=$?
else
	(cd "$SRC" && python3 tools/testing/kunit/kunit.py run --arch=x86_64 \
		--kunitconfig="$CONFIGS/kunitconfig" --build_dir="$kdir" \
		--jobs="$JOBS" --timeout=600 --make_options CC="$KCC" \
		--qemu_args="-smp 2" \
		--json="$json") >"$kdir/kunit.log" 2>&1
	rc=$?
fi
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
