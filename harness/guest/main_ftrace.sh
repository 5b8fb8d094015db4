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
