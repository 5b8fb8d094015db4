// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_unwind's chain without frame pointers, built apart from the rest
 * with -fomit-frame-pointer -momit-leaf-frame-pointer -Wa,--gsframe: only
 * this file's SFrame section describes its frames. RBP is never touched
 * here, so at the system call it still holds the frame of the caller in
 * bpf_unwind.c, and a frame-pointer walk skips all three functions.
 */
#include <sys/syscall.h>

#define NFRAMES	5

/* Each records where it returns to: ips[1..3], innermost first. */
long nofp_f3(unsigned long *ips)
{
	long ret;

	ips[1] = (unsigned long)__builtin_return_address(0);
	/* ips[0]: the address after the system call instruction. */
	asm volatile("lea 1f(%%rip), %[addr]\n\t"
		     "syscall\n"
		     "1:"
		     : [addr] "=&r" (ips[0]), "=a" (ret)
		     : "a" ((long)SYS_getppid)
		     : "rcx", "r11", "memory");
	return ret;
}

long nofp_f2(unsigned long *ips)
{
	long ret;

	ips[2] = (unsigned long)__builtin_return_address(0);
	ret = nofp_f3(ips);
	asm volatile("" : : : "memory");	/* no tail call */
	return ret;
}

long nofp_f1(unsigned long *ips)
{
	long ret;

	ips[3] = (unsigned long)__builtin_return_address(0);
	ret = nofp_f2(ips);
	asm volatile("" : : : "memory");
	return ret;
}
