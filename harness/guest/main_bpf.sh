#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Main job: unwindprof, the BPF profiler built on bpf_unwind_user_request()
# and unwind:unwind_user_stack (tools/unwind/unwindprof). Its off-CPU view
# of a program that waits on a pipe, sleeps and waits on a futex (the time
# each complete user stack spent blocked), and its on-CPU view of the
# no-FP demo (samples per stack, kernel frames included). The top stacks
# of each, with their time.
U=/tests/bin/unwindprof
export HOME=/tmp PATH=/tests/perf:/tests/bin:$PATH
[ -x $U ] || { echo "no $U (not built: needs clang-14 and bpftool)"; exit 1; }

echo "######## unwindprof --off-cpu -- offcpu_demo -n 10 -m 10 -k 10"
echo "# 10 pipe reads a child answers 20 ms apart, 10 nanosleeps of 30 ms,"
echo "# 10 futex waits another thread wakes 10 ms apart, and a thread that"
echo "# only spins; microseconds blocked per stack, most first"
$U --off-cpu -o /tmp/main-off.txt -- offcpu_demo -n 10 -m 10 -k 10 \
	>/tmp/main-off.out 2>&1
grep -v '^offcpu_demo: ' /tmp/main-off.out | sed 's/^/# /'
grep '^offcpu_demo: ' /tmp/main-off.out
head -n 6 /tmp/main-off.txt | cut -c1-300
echo
echo "######## unwindprof -F 1000 -- unwind_demo_sframe -d 8 -n 1000 (no frame pointers, SFrame)"
echo "# samples per stack, most first; kernel frames end in _[k]"
$U -F 1000 --kernel -o /tmp/main-on.txt -- unwind_demo_sframe -d 8 -n 1000 -s 1048576 \
	>/tmp/main-on.out 2>&1
grep -v '^unwind_demo' /tmp/main-on.out | sed 's/^/# /'
head -n 4 /tmp/main-on.txt | cut -c1-400
