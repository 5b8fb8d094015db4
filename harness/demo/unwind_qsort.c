// SPDX-License-Identifier: GPL-2.0
/*
 * A stack through libc's own frames, for SFrame tables made from .eh_frame:
 *
 *   main -> sorter -> qsort (glibc) -> ... -> cmp -> read(user_stack)
 *
 * Built as GCC builds by default at -O2 (no frame pointers) and with no
 * SFrame section: only a table loaded for the file (eh2sframe --load) can
 * walk it. The comparator reads the test client's user_stack file with a
 * system call of its own, with RBP set to 1, so a frame-pointer guess ends
 * the walk at once. glibc's sort calls it through its own frames
 * (msort_with_tmp, __qsort_r), which the static program links from
 * Debian's libc.a and which have only .eh_frame.
 *
 *   unwind_qsort [-q]
 *
 * Prints "# frame N: ADDR" for every frame walked, innermost first (not
 * with -q), for the host to resolve to symbols, and exits with the number
 * of frames (at most 100), or 200 when the walk failed.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user_stack.h"

#define MAXFRAMES	64

static char buf[4096];
static long nread;
static int fd = -1;

static int __attribute__((noinline)) cmp(const void *a, const void *b)
{
	unsigned long ip;

	USE_STACK(64);
	/* The first comparison walks; the sort goes on as usual. */
	if (fd >= 0) {
		nread = read_without_fp(fd, buf, sizeof(buf) - 1, ip);
		close(fd);
		fd = -1;
	}
	(void)ip;
	return *(const int *)a - *(const int *)b;
}

static int __attribute__((noinline)) sorter(int *v, size_t n)
{
	USE_STACK(128);
	qsort(v, n, sizeof(*v), cmp);
	asm volatile("" ::: "memory");	/* no tail call */
	return v[0];
}

int main(int argc, char **argv)
{
	int v[] = { 3, 1, 2, 5, 4 };
	unsigned long got[MAXFRAMES];
	unsigned int nr, ws, i;
	int quiet = argc > 1 && !strcmp(argv[1], "-q");

	fd = open(STACK_FILE, O_RDONLY);
	if (fd < 0)
		return 200;
	if (sorter(v, sizeof(v) / sizeof(v[0])) != 1)
		return 200;
	nr = user_stack_parse(buf, nread, got, MAXFRAMES, &ws);
	for (i = 0; !quiet && i < nr && i < MAXFRAMES; i++)
		printf("# frame %u: %#lx\n", i, got[i]);
	return nr > 100 ? 100 : nr;
}
