/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test client's user_stack file: reading it walks the reader's user
 * stack from inside read(). It holds "nr=N ws=W", then one hexadecimal
 * address per line, innermost first.
 */
#ifndef _SELFTESTS_UNWIND_USER_STACK_H
#define _SELFTESTS_UNWIND_USER_STACK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "../kselftest.h"

#define STACK_FILE	"/sys/kernel/debug/unwind_test/user_stack"

/* Keep @n bytes of stack in use, so that each frame has its own size. */
#define USE_STACK(n)							\
	do {								\
		char pad[n];						\
		pad[0] = 1;						\
		asm volatile("" : : "r" (pad) : "memory");		\
	} while (0)

#ifdef __x86_64__
/*
 * read() of @fd with a system call instruction right here in the caller,
 * and RBP set to 1 for that instruction only: no frame-pointer walk can get
 * past the caller, only SFrame can. @ip is set to the address after the
 * instruction, the walk's first frame; the value is what read() returned.
 * A macro, so that the instruction is in the caller whatever is inlined.
 */
#define read_without_fp(fd, buf, len, ip)				\
	({								\
		long __ret;						\
									\
		asm volatile("lea 1f(%%rip), %[addr]\n\t"			\
			     "mov %%rbp, %%r12\n\t"				\
			     "mov $1, %%ebp\n\t"				\
			     "syscall\n"					\
			     "1:\n\t"						\
			     "mov %%r12, %%rbp"					\
			     : [addr] "=&r" (ip), "=a" (__ret)			\
			     : "a" ((long)SYS_read), "D" ((long)(fd)),		\
			       "S" (buf), "d" (len)				\
			     : "rcx", "r11", "r12", "memory");			\
		__ret;							\
	})
#endif

/*
 * Parse what read() of STACK_FILE gave: @len bytes in @buf (which has room
 * for one more), or a negative errno. At most @max addresses go to @got;
 * *@ws is set to the word size. Returns how many frames the kernel walked.
 * Malformed output ends the test.
 */
static inline unsigned int user_stack_parse(char *buf, long len,
					    unsigned long *got,
					    unsigned int max, unsigned int *ws)
{
	char *line, *save;
	unsigned int nr, i;

	if (len <= 0)
		ksft_exit_fail_msg("read: %s\n", strerror(-len));
	buf[len] = '\0';
	line = strtok_r(buf, "\n", &save);
	if (!line || sscanf(line, "nr=%u ws=%u", &nr, ws) != 2)
		ksft_exit_fail_msg("bad header\n");
	for (i = 0; i < nr && i < max; i++) {
		line = strtok_r(NULL, "\n", &save);
		if (!line)
			ksft_exit_fail_msg("short output\n");
		got[i] = strtoul(line, NULL, 16);
	}
	return nr;
}

#ifdef __x86_64__
/*
 * System call @nr with up to three arguments, made by a system call
 * instruction right here in the caller; @ip is set to the address after
 * it, where a walk from inside the call starts. Its value is the call's.
 * A macro, so that the instruction is in the caller whatever is inlined.
 */
#define syscall3_here(nr, a0, a1, a2, ip)				\
	({								\
		long __ret;						\
									\
		asm volatile("lea 1f(%%rip), %[addr]\n\t"			\
			     "syscall\n"					\
			     "1:"						\
			     : [addr] "=&r" (ip), "=a" (__ret)			\
			     : "a" ((long)(nr)), "D" ((long)(a0)),		\
			       "S" ((long)(a1)), "d" ((long)(a2))		\
			     : "rcx", "r11", "memory");				\
		__ret;							\
	})
#endif

#endif /* _SELFTESTS_UNWIND_USER_STACK_H */
