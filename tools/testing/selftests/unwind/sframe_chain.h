/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The call chain main -> a -> b -> c of the SFrame selftests, built without
 * frame pointers: c() reads the test client's user_stack file (fd) into buf
 * with RBP set to 1 for the system call, so only SFrame can walk past it.
 * Each function keeps some stack of its own and records its own return
 * address in expected[], innermost first, so the expected trace is exact.
 */
#ifndef _SELFTESTS_UNWIND_SFRAME_CHAIN_H
#define _SELFTESTS_UNWIND_SFRAME_CHAIN_H

#include "user_stack.h"

#define DEPTH		4	/* c, b, a, main */

static unsigned long expected[DEPTH];
static char buf[4096];
static long nread;
static int fd;

static void c(void)
{
	unsigned long ip;

	USE_STACK(40);
	expected[1] = (unsigned long)__builtin_return_address(0);
	nread = read_without_fp(fd, buf, sizeof(buf) - 1, ip);
	expected[0] = ip;
}

static void b(void)
{
	USE_STACK(200);
	expected[2] = (unsigned long)__builtin_return_address(0);
	c();
	asm volatile("" ::: "memory");	/* no tail call */
}

static void a(void)
{
	USE_STACK(1000);
	expected[3] = (unsigned long)__builtin_return_address(0);
	b();
	asm volatile("" ::: "memory");
}

#endif /* _SELFTESTS_UNWIND_SFRAME_CHAIN_H */
