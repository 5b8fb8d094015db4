# SPDX-License-Identifier: GPL-2.0
# Sourced by the guest scripts that print their own TAP results.
# Results are numbered in tap_n, a name no script uses for anything else
# (a "while read ... n" elsewhere once renumbered them).

tap_n=0

# check NAME CONDITION...: "ok N - NAME" when CONDITION succeeds, else
# "not ok N - NAME".
check() {
	name=$1
	shift
	tap_n=$((tap_n + 1))
	if "$@"; then echo "ok $tap_n - $name"; else echo "not ok $tap_n - $name"; fi
}

# skip NAME WHY: a result that could not be tested here.
skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1 # SKIP $2"
}
