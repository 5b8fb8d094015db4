#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# JIT code: Node.js runs JavaScript compiled by V8 into anonymous memory,
# which keeps frame pointers, and names it for perf in /tmp/perf-PID.map
# (--perf-basic-prof; --interpreted-frames-native-stack gives each
# interpreted function a named copy of the interpreter's entry, and
# --no-turbo-inlining keeps every function a frame of its own). jit_node.js
# is 13 JavaScript frames deep, j1 -> ... -> j12 -> leaf, and leaf reads
# /dev/zero through node's fs.readSync(): its JavaScript, its C++ binding
# and libuv, in node's own code, which has no frame pointers. TAP, one line
# a check, measured as eh_tables.sh measures bash: of node's samples in
# read() with leaf on the stack, the share that has all 13 JavaScript
# frames in order and reaches libc's __libc_start_main.
#  - fp,defer: perf loads node's table (made from its .eh_frame) at the
#    start, and the walk goes through C++ by the table and through V8's
#    code by frame pointers: at least 95%.
#  - fp, perf's walk in the sample: shown beside it.
# Node.js is big (about 100 MB): it is in the test boot's initramfs only
# (harness/initramfs.sh), and the debug boot skips this job (test.sh).
. /tests/eh_lib.sh
NODE=/usr/bin/node
JS=/tests/jit_node.js
ROUNDS=${JIT_NODE_ROUNDS:-50}
echo "1..3"
if [ ! -x $NODE ]; then
	result 0 "node in the initramfs (the test boot's; see harness/initramfs.sh)"
	result 0 "fp,defer: through JIT code"
	result 0 "fp,defer: the same JIT frames as perf's map names"
	exit 0
fi
PERIOD=1000000
# No table from an earlier job; and perf loads node's (3 MB and more) for
# this one, which must not stay for the next (eh_qsort.sh wants an empty
# store).
clear_tables
# V8 writes its code log (isolate-*-v8.log) where it runs.
cd /tmp || exit 1
FLAGS="--perf-basic-prof --interpreted-frames-native-stack --no-turbo-inlining"

# js_count FILE: "complete leafs wrong" over FILE's chains (eh_lib's
# chains(): R, then the user frames' symbols, innermost first): of the
# samples in read() with leaf's frame, those with j12 ... j1 after it in
# order (other frames may come between: V8's builtins, node's C++) that
# reach __libc_start_main, all of them, and those whose JavaScript frames
# are not leaf, j12, ... in order, cut or not: a frame out of place.
js_count() {
	awk '
	# "JS:~j5" (V8 11, Node.js 20) or "LazyCompile:*j5" (older V8, as in
	# the Node.js 18 of Debian 12) -> "j5"; "" for any other frame.
	function js(s) {
		if (s !~ /^[A-Za-z]+:[~^*+]?(j[0-9]+|leaf)$/)
			return ""
		sub(/^[A-Za-z]+:[~^*+]?/, "", s)
		return s
	}
	$1 == "R" {
		want = "leaf j12 j11 j10 j9 j8 j7 j6 j5 j4 j3 j2 j1"
		got = ""; start = 0
		for (i = 2; i <= NF; i++) {
			f = js($i)
			if (f != "")
				got = got (got == "" ? "" : " ") f
			if ($i == "__libc_start_main" || $i == "__libc_start_call_main")
				start = 1
		}
		if (got !~ /^leaf( |$)/)
			next
		leafs++
		if (got == want && start)
			whole++
		if (index(want " ", got " ") != 1)
			wrong++
	}
	END { printf "%d %d %d", whole, leafs, wrong }' "$1"
}

record fp,defer node-defer -- $NODE $FLAGS $JS $ROUNDS
chains /tmp/eh-node-defer.data node >/tmp/eh-node-defer.chains
ran=$(grep -c "^jit_node: [0-9]* bytes read" /tmp/eh-node-defer.out)
maps=$(ls /tmp/perf-*.map 2>/dev/null | wc -l)
result "$([ "$ran" = 1 ] && [ "$maps" -ge 1 ] && echo 1)" \
	"node ran under perf record (madvise() and the rest a runtime needs), its perf map written ($maps)"
set -- $(js_count /tmp/eh-node-defer.chains)
echo "# fp,defer: $1 of $2 samples in read() with leaf's frame have all 13 JavaScript frames and reach __libc_start_main"
awk '$1 == "R"' /tmp/eh-node-defer.chains | head -n 2 | cut -c 1-400 | sed 's/^/# /'
ok=$([ "$2" -ge 20 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ] && echo 1)
result "$ok" "fp,defer: >= 95% of node's read() stacks through all 13 JIT frames to __libc_start_main ($1 of $2$([ "$ok" ] || why /tmp/eh-node-defer.data))"
result "$([ "$2" -ge 20 ] && [ "$3" = 0 ] && echo 1)" \
	"fp,defer: no stack with a JavaScript frame out of place ($3 of $2)"

# perf's frame-pointer walk in the sample, no table: shown beside it.
rm -f /tmp/perf-*.map /tmp/isolate-*-v8.log
record fp node-fp -- $NODE $FLAGS $JS $ROUNDS
chains /tmp/eh-node-fp.data node >/tmp/eh-node-fp.chains
set -- $(js_count /tmp/eh-node-fp.chains)
echo "# fp: $1 of $2 samples in read() with leaf's frame complete, $3 with a frame out of place"
awk '$1 == "R"' /tmp/eh-node-fp.chains | head -n 2 | cut -c 1-400 | sed 's/^/# /'
rm -f /tmp/perf-*.map
rm -f /tmp/isolate-*-v8.log
clear_tables
