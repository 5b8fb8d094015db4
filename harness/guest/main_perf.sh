#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Main job: profile the demo (main -> run -> level x8 -> leaf -> read())
# with perf's three ways of getting user stacks, and show what each costs;
# profiles.sh goes on with tables loaded.
P=/tests/perf/perf
# perf may run addr2line, which the initramfs does not have.
trap "" PIPE
export HOME=/tmp PATH=/tests/perf:$PATH
DEMO="unwind_demo -d 8 -n 200 -s 1048576"
# No SFrame tables until the part that loads them: perf record would load
# them itself with fp,defer, and they stay loaded.
REC_OPTS=--no-sframe-tables

. /tests/perf_modes.sh

record_modes "$DEMO" fp

echo
echo "######## perf report --stdio --no-children, --call-graph fp,defer (top)"
$P report --no-inline -i /tmp/perf-fp-defer-fp.data --stdio --no-children --percent-limit 5 \
	-g caller 2>/dev/null | grep -v '^$' | head -45

echo
echo "######## summary: bytes written per sample (samples + deferred records)"
summary fp

# Why this exists: the same demo as GCC builds it at -O2, without frame
# pointers, with an SFrame section. Only a walk that may fault can read it.
echo
echo "################ the same demo built without frame pointers, with SFrame"
echo "################ (gcc -O2 -fomit-frame-pointer -Wa,--gsframe)"
record_modes "unwind_demo_sframe -d 8 -n 200 -s 1048576" sframe
echo
echo "######## summary, no frame pointers: bytes per sample, and the samples"
echo "######## inside read() whose user stack reaches main()"
summary sframe

# The same program reading through glibc's read(), which has neither frame
# pointers nor SFrame in Debian 12 (libc.a's code, linked into the static
# program). Without a table, no frame-pointer or SFrame walk gets past it.
echo
echo "################ the same, with read() through glibc's wrapper (unwind_demo_sframe -l)"
echo "################ and no table loaded (perf record --no-sframe-tables)"
record_modes "unwind_demo_sframe -l -d 8 -n 200 -s 1048576" libc 2>&1 | grep "^=== SUMMARY"
echo "######## summary, no frame pointers, read() through glibc, no table"
summary libc
