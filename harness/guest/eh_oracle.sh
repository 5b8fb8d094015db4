#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# An independent oracle for the deferred stacks' exactness: every system
# call of a deterministic run of Debian's bash (ASLR off, builtins only, no
# child process) is recorded twice, once with perf's own DWARF unwinder
# (libdw, from a 64 KiB copy of the stack, the largest perf allows) and once
# with --call-graph fp,defer (the kernel's walk through the tables perf
# loads). The Nth system call of one run is the Nth of the other, at the
# same addresses. perf's DWARF frames below the first are the return
# address - 1 (the call, for its symbol lookup), the deferred ones the
# return address itself: the comparison adds the 1 back. perf's buffer
# holds 32 MiB, so that no DWARF sample (64 KiB each) is lost. Where the
# DWARF stack reaches __libc_start_main, the
# deferred one must be the same frames; nowhere may the two differ at a
# frame both have. The counts of exact, same-cut, longer and shorter
# stacks are printed. TAP, one line a check.
P=/tests/perf/perf
export HOME=/tmp PATH=/tests/perf:/tests/bin:$PATH
n=0
result() {	# result OK NAME
	n=$((n + 1))
	if [ "$1" = 1 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}
echo "1..3"

# A shell function 6 calls deep reading and writing /dev/null at the
# bottom, twice, then 12 deep: about 40 frames at the deepest, with the
# start-up's system calls (ld.so, libc, bash's init) before.
JOB='f() { if [ "$1" -gt 0 ]; then f $(($1 - 1)); else read -r x </dev/null; echo "$x" >/dev/null; fi; }; f 6; f 6; f 12'

aslr=$(cat /proc/sys/kernel/randomize_va_space)
echo 0 >/proc/sys/kernel/randomize_va_space
for mode in dwarf,65528 fp,defer; do
	tag=${mode%%,*}
	$P record -N -m 32M -e raw_syscalls:sys_enter --call-graph $mode \
		-o /tmp/oracle-$tag.data -- /bin/bash -c "$JOB" >/tmp/oracle-$tag.out 2>&1
	sed 's/^/# /' /tmp/oracle-$tag.out
	# One line per system call of bash: its user frames, innermost first,
	# each as ADDRESS/SYMBOL.
	$P script --no-inline -i /tmp/oracle-$tag.data -F comm,ip,sym 2>/dev/null |
	awk '
	function flush() { if (mine) print (u == "" ? "-" : u); mine = 0 }
	/^[^ \t]/ { flush(); mine = ($1 == "bash"); u = ""; next }
	/^$/ { flush(); next }
	mine && $1 !~ /^ffff/ { u = u " " $1 "/" $2 }
	END { flush() }' >/tmp/oracle-$tag.stacks
done
echo "$aslr" >/proc/sys/kernel/randomize_va_space

nd=$(wc -l </tmp/oracle-dwarf.stacks)
nf=$(wc -l </tmp/oracle-fp.stacks)
echo "# system calls of bash: $nd with dwarf, $nf with fp,defer"
result "$([ "$nd" -ge 50 ] && [ "$nd" = "$nf" ] && echo 1)" \
	"the two runs make the same system calls ($nd and $nf)"

# Compare system call by system call; print the counts, and the first
# stacks that differ or fall short of a complete DWARF stack.
paste -d '|' /tmp/oracle-dwarf.stacks /tmp/oracle-fp.stacks | awk -F'|' '
function hex(s,   i, v) {
	sub(/\/.*/, "", s)
	v = 0
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
{
	nd = ($1 == "-") ? 0 : split($1, d, " ")
	nf = ($2 == "-") ? 0 : split($2, f, " ")
	m = nd < nf ? nd : nf
	for (k = 1; k <= m; k++)
		if (hex(d[k]) + (k > 1) != hex(f[k]))
			break
	if (k <= m) {
		differ++
		if (shown++ < 3)
			printf "# call %d differs at frame %d: dwarf %s, fp,defer %s\n", NR, k, d[k], f[k]
		next
	}
	complete = $1 ~ /\/__libc_start_main/
	if (complete && nf != nd) {
		short++
		if (shown++ < 3)
			printf "# call %d: dwarf complete in %d frames, fp,defer %d\n", NR, nd, nf
	} else if (complete)
		exact++
	else if (nf == nd)
		samecut++
	else if (nf > nd)
		longer++
	else
		shorter++
}
END {
	printf "# exact %d (dwarf complete), same-cut %d, longer %d, shorter %d, differing %d, short of a complete dwarf stack %d\n",
		exact, samecut, longer, shorter, differ, short
	printf "%d %d %d %d\n", exact, differ, short, shorter
}' >/tmp/oracle.cmp
grep '^#' /tmp/oracle.cmp
set -- $(grep -v '^#' /tmp/oracle.cmp)
result "$([ "${2:-1}" = 0 ] && echo 1)" \
	"no system call's deferred stack differs from the DWARF one at a frame both have"
result "$([ "${1:-0}" -ge 10 ] && [ "${3:-1}" = 0 ] && echo 1)" \
	"every system call whose DWARF stack reaches __libc_start_main has exactly its frames ($1)"
# The tables perf loaded stay loaded: leave the store empty for what follows.
for f in $(awk '{ print $1 }' /dev/sframe_tables); do
	echo "remove $f" >/dev/sframe_tables
done
