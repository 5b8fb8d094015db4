#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Main job: an ftrace instance with deferred user stacks. Every getppid
# event of the demo is followed by its kernel entry's cookie; the user stack
# follows with the same cookie when the task returns to user space, each
# frame with its file offset, device and inode.
cd /sys/kernel/tracing || exit 1
mkdir instances/demo
echo 1 > instances/demo/events/syscalls/sys_enter_getppid/enable
echo 1 > instances/demo/options/userstacktrace_delay
unwind_demo --getppid 3
echo 0 > instances/demo/options/userstacktrace_delay
echo 0 > instances/demo/events/syscalls/sys_enter_getppid/enable
echo "######## cat /sys/kernel/tracing/instances/demo/trace (the demo's lines)"
grep -v '^#' instances/demo/trace | awk '/^ *unwind_demo-/ { p = 1 } /^ *[^ =]/ && !/^ *unwind_demo-/ { p = 0 } p'
rmdir instances/demo

# The demo built without frame pointers, with SFrame, reading through
# glibc's read() wrapper, whose code (linked from libc.a) has neither: its
# deferred stack ends in libc's code, until the table eh2sframe makes from
# the program's .eh_frame is loaded for its build-id.
show_read() {	# TITLE
	mkdir instances/libc
	echo 'comm == "unwind_demo_sfr"' > instances/libc/events/syscalls/sys_enter_read/filter
	echo 1 > instances/libc/events/syscalls/sys_enter_read/enable
	echo 1 > instances/libc/options/userstacktrace_delay
	unwind_demo_sframe -l -d 2 -n 1 -s 4096 >/dev/null
	echo 0 > instances/libc/options/userstacktrace_delay
	echo 0 > instances/libc/events/syscalls/sys_enter_read/enable
	echo
	echo "######## $1 (unwind_demo_sframe -l: read() through glibc's wrapper)"
	grep -v '^#' instances/libc/trace | awk '/^ *unwind_demo_sfr/ { p = 1 } /^ *[^ =]/ && !/^ *unwind_demo_sfr/ { p = 0 } p'
	rmdir instances/libc
}
show_read "no table"
echo
echo "######## eh2sframe --load /tests/bin/unwind_demo_sframe"
/tests/bin/eh2sframe --load /tests/bin/unwind_demo_sframe 2>&1
show_read "with the table loaded for its build-id"
/tests/bin/eh2sframe --remove -q /tests/bin/unwind_demo_sframe
