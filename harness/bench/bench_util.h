/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the benchmark drivers in harness/bench/.
 */
#ifndef UNWIND_BENCH_UTIL_H
#define UNWIND_BENCH_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v in place. */
static uint64_t median(uint64_t *v, long n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return n ? v[n / 2] : 0;
}

/*
 * write() with the program's own system call instruction: the walk then
 * starts in code built like the program (glibc's write() has neither frame
 * pointers nor SFrame). Always inlined, so that it adds no frame of its
 * own. Returns what the kernel returns, -errno on error.
 */
static inline __attribute__((always_inline)) long
bench_sys_write(int fd, const void *buf, size_t n)
{
	long ret;

	asm volatile ("syscall" : "=a" (ret)
		      : "0" ((long)SYS_write), "D" ((long)fd), "S" (buf), "d" (n)
		      : "rcx", "r11", "memory");
	return ret;
}

#endif
