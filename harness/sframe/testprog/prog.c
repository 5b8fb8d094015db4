// SPDX-License-Identifier: GPL-2.0
/*
 * Test program for check.sh: functions with varied frames (leaf, calls,
 * large locals, alloca, a frame pointer kept by -fno-omit-frame-pointer in
 * one function, PLT calls), built with -O2 -fomit-frame-pointer --gsframe.
 */
#include <alloca.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile int sink;

__attribute__((noinline)) int leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int big_locals(int n)
{
	char buf[5000];

	memset(buf, n, sizeof(buf));
	sink = buf[n & 1023];
	return buf[n % 5000] + leaf(n);
}

__attribute__((noinline)) int with_alloca(int n)
{
	char *p = alloca(n + 16);

	memset(p, 1, n + 16);
	return p[n] + big_locals(n);
}

__attribute__((noinline, optimize("no-omit-frame-pointer")))
int with_fp(int n)
{
	char *p = alloca(n + 32);

	snprintf(p, n + 32, "%d", n);
	return atoi(p) + with_alloca(n);
}

__attribute__((noinline)) int many_regs(int a, int b, int c, int d)
{
	int r = 0, i;

	for (i = 0; i < a; i++)
		r += leaf(i * b) ^ leaf(i + c) ^ leaf(d - i) ^ with_fp(i & 7);
	return r;
}

int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", many_regs(argc, 2, 3, 4));
	return 0;
}
