// SPDX-License-Identifier: GPL-2.0
/* A small shared library for check.sh: PLT entries and PIC code. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int lib_leaf(int x)
{
	return x ^ 0x55;
}

int lib_entry(int n)
{
	char buf[64];
	int i, r = 0;

	for (i = 0; i < n; i++) {
		snprintf(buf, sizeof(buf), "%d", lib_leaf(i));
		r += atoi(buf) + (int)strtol(buf, NULL, 10);
	}
	return r;
}
