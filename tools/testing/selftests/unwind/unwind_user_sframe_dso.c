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

#define _GNU_SOURCE	/* dlsym(RTLD_DEFAULT), dl_iterate_phdr() */
#include <stdint.h>
#include <sys/syscall.h>

#include "user_stack.h"

#define DEPTH	3	/* lib_c, lib_b, main */

struct chain {
	unsigned long	expected[DEPTH];
	long		(*c)(struct chain *ch);
	int		fd;
	char		*buf;
	unsigned long	len;
	long		ret;
};

#if defined(SFRAME_LIB_C) || defined(SFRAME_LIB_D)
long lib_c(struct chain *ch)
{
	unsigned long ip;
	long ret;

	USE_STACK(72);
	ch->expected[1] = (unsigned long)__builtin_return_address(0);
#ifdef SFRAME_LIB_C
	/* Only SFrame can unwind from here: no frame pointer chain. */
	ret = read_without_fp(ch->fd, ch->buf, ch->len, ip);
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
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

static char buf[4096];
static long (*lib_b)(struct chain *ch);

/* What to do to the freshly opened library before the walk. */
enum prep { PREP_NONE, PREP_UNMAP, PREP_CORRUPT };

struct sframe_where {
	const char	*lib;
	unsigned long	start, end;
};

static int find_sframe(struct dl_phdr_info *info, size_t size, void *data)
{
	struct sframe_where *w = data;
	long page = sysconf(_SC_PAGESIZE);
	unsigned long at;
	int i;

	if (!strstr(info->dlpi_name, w->lib))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != 0x6474e554)	/* PT_GNU_SFRAME */
			continue;
		at = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
		w->start = at & ~(page - 1);
		w->end = (at + info->dlpi_phdr[i].p_memsz + page - 1) & ~(page - 1);
		return 1;
	}
	return 0;
}

/* The page range of the loaded @lib's SFrame section. */
static int sframe_pages(const char *lib, unsigned long *start, unsigned long *end)
{
	struct sframe_where w = { .lib = lib };

	if (!dl_iterate_phdr(find_sframe, &w))
		return -1;
	*start = w.start;
	*end = w.end;
	return 0;
}

/*
 * Walk from lib_c() of @lib, after @prep. Returns how many frames match the
 * chain, from the innermost, or -1 if the walk gave more frames than it
 * should have after @prep.
 */
static int walk(const char *dir, const char *lib, unsigned long *where, enum prep prep)
{
	char path[PATH_MAX];
	unsigned long got[DEPTH], start, end;
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
	if (prep != PREP_NONE && sframe_pages(lib, &start, &end))
		ksft_exit_fail_msg("no SFrame section found in %s\n", lib);
	if (prep == PREP_UNMAP && munmap((void *)start, end - start))
		ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
	if (prep == PREP_CORRUPT) {
		/* First a good walk, so that the section is known... */
		lib_b(&ch);
		close(ch.fd);
		ch.fd = open(STACK_FILE, O_RDONLY);
		/* ...then every FDE and FRE byte changes under the kernel. */
		if (mprotect((void *)start, end - start, PROT_READ | PROT_WRITE))
			ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
		memset((char *)start, 0xff, end - start);
	}
	lib_b(&ch);
	close(ch.fd);
	dlclose(h);
	nr = user_stack_parse(buf, ch.ret, got, DEPTH, &ws);
	for (i = 0; i < DEPTH; i++)
		ksft_print_msg("%s frame %u: %#lx, expected %#lx\n", lib, i,
			       i < nr ? got[i] : 0, ch.expected[i]);
	/*
	 * Without its section, lib_c() can only be walked by frame pointers,
	 * and RBP is 1 there: exactly one frame, the right one.
	 */
	if (prep != PREP_NONE && nr != 1)
		return -1;
	for (i = 0; i < nr && i < DEPTH; i++)
		if (got[i] != ch.expected[i])
			break;
	return i;
}

int main(void)
{
	unsigned long at_c, at_d;
	char dir[PATH_MAX];
	ssize_t n;

	ksft_print_header();
	ksft_set_plan(4);

	/* libsframe_b.so was mapped at startup (DT_NEEDED). */
	lib_b = (long (*)(struct chain *))dlsym(RTLD_DEFAULT, "lib_b");
	if (!lib_b)
		ksft_exit_fail_msg("dlsym lib_b: %s\n", dlerror());

	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0)
		ksft_exit_fail_msg("readlink /proc/self/exe\n");
	dir[n] = '\0';
	*strrchr(dir, '/') = '\0';

	ksft_test_result(walk(dir, "libsframe_c.so", &at_c, PREP_NONE) == DEPTH,
			 "SFrame of the program, a startup library and a dlopen()ed one\n");
	/*
	 * libsframe_c.so is closed now; a library without SFrame that takes
	 * its place must be walked by frame pointers, not by the stale
	 * section.
	 */
	ksft_test_result(walk(dir, "libsframe_d.so", &at_d, PREP_NONE) == DEPTH,
			 "after dlclose(), the next library is not walked with the old section (%s address)\n",
			 at_c == at_d ? "same" : "another");
	/* A section that cannot be read, or changes under the walk. */
	ksft_test_result(walk(dir, "libsframe_c.so", &at_c, PREP_UNMAP) == 1,
			 "section unmapped: the walk ends cleanly after the first frame\n");
	ksft_test_result(walk(dir, "libsframe_c.so", &at_c, PREP_CORRUPT) == 1,
			 "section overwritten after use: the walk ends cleanly after the first frame\n");
	ksft_finished();
}
#endif
