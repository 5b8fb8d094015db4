// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame coverage of shared libraries, with no help from glibc or ld.so:
 * the kernel must find the section of every ELF file mapped in the process
 * by itself.
 *
 * One source, built four ways (all -O2 -fomit-frame-pointer -Wa,--gsframe
 * unless said otherwise):
 *   -DSFRAME_LIB_B  libsframe_b.so, linked at startup: lib_b()
 *   -DSFRAME_LIB_C  libsframe_c.so, dlopen()ed later: lib_c() makes the
 *                   system call, with RBP set to 1 for that instruction
 *   -DSFRAME_LIB_D  libsframe_d.so, dlopen()ed after libsframe_c.so is
 *                   dlclose()d, built with frame pointers and no SFrame:
 *                   lib_c() again, at the same address if the loader reuses
 *                   the hole, so a stale section would give wrong frames
 *   (none)          the program: main() -> lib_b() -> lib_c(), through a
 *                   function pointer taken from dlsym()
 * Each function records its return address, so the expected trace is exact.
 */

#include <stdint.h>
#include <sys/syscall.h>

#define DEPTH	3	/* lib_c, lib_b, main */

struct chain {
	unsigned long	expected[DEPTH];
	long		(*c)(struct chain *ch);
	int		fd;
	char		*buf;
	unsigned long	len;
	long		ret;
};

#define USE_STACK(n)							\
	do {								\
		char pad[n];						\
		pad[0] = 1;						\
		asm volatile("" : : "r" (pad) : "memory");		\
	} while (0)

#if defined(SFRAME_LIB_C) || defined(SFRAME_LIB_D)
long lib_c(struct chain *ch)
{
	unsigned long ip;
	long ret;

	USE_STACK(72);
	ch->expected[1] = (unsigned long)__builtin_return_address(0);
#ifdef SFRAME_LIB_C
	/* Only SFrame can unwind from here: no frame pointer chain. */
	asm volatile("lea 1f(%%rip), %[ip]\n\t"
		     "mov %%rbp, %%r12\n\t"
		     "mov $1, %%ebp\n\t"
		     "syscall\n"
		     "1:\n\t"
		     "mov %%r12, %%rbp"
		     : [ip] "=&r" (ip), "=a" (ret)
		     : "a" ((long)SYS_read), "D" ((long)ch->fd), "S" (ch->buf),
		       "d" (ch->len)
		     : "rcx", "r11", "r12", "memory");
#else
	asm volatile("lea 1f(%%rip), %[ip]\n\t"
		     "syscall\n"
		     "1:"
		     : [ip] "=&r" (ip), "=a" (ret)
		     : "a" ((long)SYS_read), "D" ((long)ch->fd), "S" (ch->buf),
		       "d" (ch->len)
		     : "rcx", "r11", "memory");
#endif
	ch->expected[0] = ip;
	ch->ret = ret;
	return ret;
}
#elif defined(SFRAME_LIB_B)
long lib_b(struct chain *ch)
{
	long ret;

	USE_STACK(136);
	ch->expected[2] = (unsigned long)__builtin_return_address(0);
	ret = ch->c(ch);
	asm volatile("" ::: "memory");	/* no tail call */
	return ret;
}
#else
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kselftest.h"

#define STACK_FILE	"/sys/kernel/debug/unwind_test/user_stack"

static char buf[4096];
static long (*lib_b)(struct chain *ch);

/* Walk from lib_c() of @lib; 1 if the walk matches the chain exactly. */
static int walk(const char *dir, const char *lib, unsigned long *where)
{
	char path[PATH_MAX], *line, *save;
	unsigned long got[DEPTH];
	struct chain ch = { .buf = buf, .len = sizeof(buf) - 1 };
	unsigned int nr, ws, i;
	void *h;

	snprintf(path, sizeof(path), "%s/%s", dir, lib);
	h = dlopen(path, RTLD_NOW);
	if (!h)
		ksft_exit_fail_msg("dlopen %s: %s\n", path, dlerror());
	ch.c = (long (*)(struct chain *))dlsym(h, "lib_c");
	if (!ch.c)
		ksft_exit_fail_msg("dlsym lib_c: %s\n", dlerror());
	*where = (unsigned long)ch.c;
	ch.fd = open(STACK_FILE, O_RDONLY);
	if (ch.fd < 0)
		ksft_exit_skip("%s: %s (needs CONFIG_UNWIND_TEST_CLIENT)\n",
			       STACK_FILE, strerror(errno));
	lib_b(&ch);
	close(ch.fd);
	dlclose(h);
	if (ch.ret <= 0)
		ksft_exit_fail_msg("read: %s\n", strerror(-ch.ret));
	buf[ch.ret] = '\0';

	line = strtok_r(buf, "\n", &save);
	if (!line || sscanf(line, "nr=%u ws=%u", &nr, &ws) != 2)
		ksft_exit_fail_msg("bad header\n");
	for (i = 0; i < nr && i < DEPTH; i++) {
		line = strtok_r(NULL, "\n", &save);
		if (!line)
			ksft_exit_fail_msg("short output\n");
		got[i] = strtoul(line, NULL, 16);
	}
	for (i = 0; i < DEPTH; i++)
		ksft_print_msg("%s frame %u: %#lx, expected %#lx\n", lib, i,
			       i < nr ? got[i] : 0, ch.expected[i]);
	if (nr < DEPTH)
		return 0;
	for (i = 0; i < DEPTH; i++)
		if (got[i] != ch.expected[i])
			return 0;
	return 1;
}

int main(void)
{
	unsigned long at_c, at_d;
	char dir[PATH_MAX];
	ssize_t n;

	ksft_print_header();
	ksft_set_plan(2);

	/* libsframe_b.so was mapped at startup (DT_NEEDED). */
	lib_b = (long (*)(struct chain *))dlsym(RTLD_DEFAULT, "lib_b");
	if (!lib_b)
		ksft_exit_fail_msg("dlsym lib_b: %s\n", dlerror());

	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0)
		ksft_exit_fail_msg("readlink /proc/self/exe\n");
	dir[n] = '\0';
	*strrchr(dir, '/') = '\0';

	ksft_test_result(walk(dir, "libsframe_c.so", &at_c),
			 "SFrame of the program, a startup library and a dlopen()ed one\n");
	/*
	 * libsframe_c.so is closed now; a library without SFrame that takes
	 * its place must be walked by frame pointers, not by the stale
	 * section.
	 */
	ksft_test_result(walk(dir, "libsframe_d.so", &at_d),
			 "after dlclose(), the next library is not walked with the old section (%s address)\n",
			 at_c == at_d ? "same" : "another");
	ksft_finished();
}
#endif
