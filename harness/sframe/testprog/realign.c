// SPDX-License-Identifier: GPL-2.0
/*
 * For the SFrame fixtures (harness/sframe/fixtures/): a stack realigned
 * for an over-aligned local, with alloca. GCC keeps the CFA in %r10 and
 * then at *(%rbp - 8) (DRAP): SFrame V1 and V2 cannot say so and gas
 * leaves the function out; V3 describes it with a flexible FDE, in rules
 * the kernel's walker does not follow. Never run.
 */
#include <string.h>

typedef int v8si __attribute__((vector_size(32)));

__attribute__((noinline)) void sf_use(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) int sf_realign(int n)
{
	v8si x __attribute__((aligned(64))) = { n, n, n, n };
	char *p = __builtin_alloca(n);

	memset(p, 0, n);
	sf_use(&x);
	sf_use(p);
	return x[0] + p[1];
}
