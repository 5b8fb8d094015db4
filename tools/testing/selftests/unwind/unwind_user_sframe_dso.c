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
 *                   system call, with RBP set to 1 for that instruction,
 *                   from the second of the two pages it spans
 *   -DSFRAME_LIB_D  libsframe_d.so, dlopen()ed after libsframe_c.so is
 *                   dlclose()d, built with frame pointers and no SFrame:
 *                   lib_c() again, at the same address if the loader reuses
 *                   the hole, so a stale section would give wrong frames
 *   -DSFRAME_LIB_D  with -Wa,--gsframe too: libsframe_e.so, frame pointers
 *                   and an SFrame section
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
#ifdef SFRAME_LIB_BIG_RODATA
/*
 * Two pages of read-only data: lld's first segment then ends past the
 * file's first page, so the code's mapping does not start at offset 0.
 */
const char lib_rodata[8192] = { 1 };
#endif

/* libsframe_c.so is built with -falign-functions=4096: lib_c() starts a page. */
long lib_c(struct chain *ch)
{
	unsigned long ip;
	long ret;

	USE_STACK(72);
	ch->expected[1] = (unsigned long)__builtin_return_address(0);
#ifdef SFRAME_LIB_C
	/*
	 * The function starts a page and makes its system call from the
	 * next one, so that a VMA split between the two (PREP_SPLIT) cuts
	 * it in half.
	 */
	asm volatile("jmp 2f\n\t.skip 4096, 0xcc\n2:");
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
#include <pthread.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char buf[4096];
static long (*lib_b)(struct chain *ch);
/* One inotify event with its name. */
static union {
	struct inotify_event	ev;
	char			buf[sizeof(struct inotify_event) + NAME_MAX + 1];
} evbuf;

/*
 * What to do to the freshly opened library before the walk:
 *   PREP_UNMAP    unmap its SFrame section
 *   PREP_CORRUPT  overwrite its SFrame section after a first walk
 *   PREP_INOTIFY  watch the library's file: finding the section must not
 *                 read it (no access event)
 *   PREP_HIDE     make its ELF headers unreadable for a first walk, which
 *                 must stop after lib_c() rather than guess; then readable
 *                 again: that failure was not kept, the walk is complete
 *   PREP_FORK     after a first walk, a fork() child overwrites its copy of
 *                 the section and walks (one frame); the parent's section
 *                 is intact, and must still be used
 *   PREP_SPLIT    before the first walk, split the VMA of lib_c()'s code at
 *                 the page of its system call (mlock() of that page):
 *                 lib_c() straddles the split, and is found all the same
 *   PREP_MERGE    the same, then a walk, then munlock(): the pieces merge
 *                 again, and the merged VMA is still walked right
 *   PREP_BADROWS  after a first walk, every FDE's rows are placed past the
 *                 section: malformed; the walk must end at lib_c(), even
 *                 where frame pointers would go on (contract 14)
 *   PREP_TABLE    load the library's table (eh2sframe --load) before the
 *                 walk and remove it after: for the libraries linked by
 *                 lld, which has no PT_GNU_SFRAME, so that the table,
 *                 found by build-id, is all the walk has
 */
enum prep {
	PREP_NONE, PREP_UNMAP, PREP_CORRUPT, PREP_INOTIFY, PREP_HIDE, PREP_FORK,
	PREP_SPLIT, PREP_MERGE, PREP_BADROWS, PREP_TABLE, PREP_MREMAP,
	PREP_BADFIRST,
};

struct sframe_where {
	const char	*lib;
	unsigned long	start, end;
	unsigned long	base;		/* where its first PT_LOAD is mapped */
	unsigned long	sec;		/* the section itself */
};

static int find_sframe(struct dl_phdr_info *info, size_t size, void *data)
{
	struct sframe_where *w = data;
	long page = sysconf(_SC_PAGESIZE);
	unsigned long at;
	int i;

	if (!strstr(info->dlpi_name, w->lib))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			w->base = (info->dlpi_addr + info->dlpi_phdr[i].p_vaddr) &
				  ~(page - 1);
			break;
		}
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != 0x6474e554)	/* PT_GNU_SFRAME */
			continue;
		at = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
		w->sec = at;
		w->start = at & ~(page - 1);
		w->end = (at + info->dlpi_phdr[i].p_memsz + page - 1) & ~(page - 1);
		return 1;
	}
	return 0;
}

/*
 * The page range of the loaded @lib's SFrame section, and the page where its
 * ELF headers are mapped.
 */
static unsigned long sframe_at;	/* the section of the last sframe_pages() */

static int sframe_pages(const char *lib, unsigned long *start, unsigned long *end,
			unsigned long *base)
{
	struct sframe_where w = { .lib = lib };

	if (!dl_iterate_phdr(find_sframe, &w))
		return -1;
	*start = w.start;
	*end = w.end;
	*base = w.base;
	sframe_at = w.sec;
	return 0;
}

/* The mapping of /proc/self/maps that holds @addr: 0, or -1. */
static int mapping_of(unsigned long addr, unsigned long *start, unsigned long *end)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int ret = -1;

	if (!f)
		return -1;
	while (ret && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", start, end) == 2 &&
		    *start <= addr && addr < *end)
			ret = 0;
	fclose(f);
	return ret;
}

/* eh2sframe -q OP LIB, the test directory's; its output is dropped. */
static void stress_run(const char *eh, const char *op, const char *lib)
{
	pid_t pid = fork();
	int status;

	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl(eh, eh, "-q", op, lib, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
}

/*
 * Make the section in [@start, @end) malformed for every lookup: each V1
 * FDE (17 bytes) gets the offset of its rows (at +8) past the section.
 */
static void corrupt_rows(unsigned long start, unsigned long end)
{
	unsigned char *h = (unsigned char *)sframe_at, *f;
	uint32_t n, off, bad = 0xffff0, k;

	if (mprotect((void *)start, end - start, PROT_READ | PROT_WRITE))
		ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
	memcpy(&n, h + 8, 4);
	memcpy(&off, h + 20, 4);
	f = h + 28 + h[7] + off;
	for (k = 0; k < n && f + 17 * k + 12 <= (unsigned char *)end; k++)
		memcpy(f + 17 * k + 8, &bad, 4);
}

/*
 * Walk from lib_c() of @lib, after @prep. Returns how many frames match the
 * chain, from the innermost, or -1 if the walk gave more frames than it
 * should have after @prep.
 */
static int walk(const char *dir, const char *lib, unsigned long *where, enum prep prep)
{
	char path[PATH_MAX];
	unsigned long got[DEPTH], start, end, base;
	struct chain ch = { .buf = buf, .len = sizeof(buf) - 1 };
	unsigned int nr, ws, i;
	int in_fd = -1, hidden_nr = 0;
	unsigned long ts = 0, te = 0;
	char *moved = NULL;
	size_t moved_len = 0;
	void *h;

	snprintf(path, sizeof(path), "%s/%s", dir, lib);
	if (prep == PREP_TABLE) {
		char eh[PATH_MAX];

		snprintf(eh, sizeof(eh), "%s/eh2sframe", dir);
		stress_run(eh, "--load", path);
	}
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
	if (prep != PREP_NONE && prep != PREP_TABLE &&
	    sframe_pages(lib, &start, &end, &base))
		ksft_exit_fail_msg("no SFrame section found in %s\n", lib);
	if (prep == PREP_INOTIFY) {
		in_fd = inotify_init1(IN_NONBLOCK);
		if (in_fd < 0 || inotify_add_watch(in_fd, path, IN_ALL_EVENTS) < 0)
			ksft_exit_fail_msg("inotify: %s\n", strerror(errno));
	}
	if (prep == PREP_HIDE) {
		long page = sysconf(_SC_PAGESIZE);

		if (mprotect((void *)base, page, PROT_NONE))
			ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
		lib_b(&ch);
		close(ch.fd);
		ch.fd = open(STACK_FILE, O_RDONLY);
		hidden_nr = user_stack_parse(buf, ch.ret, got, DEPTH, &ws);
		if (mprotect((void *)base, page, PROT_READ))
			ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
		ksft_print_msg("%s headers unreadable: %d frames\n", lib, hidden_nr);
	}
	if (prep == PREP_UNMAP && munmap((void *)start, end - start))
		ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
	if (prep == PREP_SPLIT || prep == PREP_MERGE) {
		/* The page after lib_c()'s first one holds its system call. */
		void *second = (char *)ch.c + 4096;

		if (mlock(second, 4096))
			ksft_exit_fail_msg("mlock: %s\n", strerror(errno));
		if (prep == PREP_MERGE) {
			lib_b(&ch);
			close(ch.fd);
			ch.fd = open(STACK_FILE, O_RDONLY);
			if (munlock(second, 4096))
				ksft_exit_fail_msg("munlock: %s\n", strerror(errno));
		}
	}
	if (prep == PREP_FORK) {
		int status;
		pid_t pid;

		lib_b(&ch);
		close(ch.fd);
		pid = fork();
		if (pid < 0)
			ksft_exit_fail_msg("fork: %s\n", strerror(errno));
		if (!pid) {
			ch.fd = open(STACK_FILE, O_RDONLY);
			/*
			 * Every function's rows start past the section: a
			 * malformed section, which the kernel drops for the
			 * child's mapping only. (A function that claims more
			 * than the text is not malformed but not covered: it
			 * would not be dropped.)
			 */
			corrupt_rows(start, end);
			lib_b(&ch);
			_exit(user_stack_parse(buf, ch.ret, got, DEPTH, &ws) == 1 ? 0 : 3);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			ksft_print_msg("child with the overwritten section: status %#x\n",
				       status);
			return -1;
		}
		ch.fd = open(STACK_FILE, O_RDONLY);
	}
	if (prep == PREP_MREMAP) {
		/* First a walk, so that the section is known... */
		lib_b(&ch);
		close(ch.fd);
		ch.fd = open(STACK_FILE, O_RDONLY);
		if (mapping_of((unsigned long)ch.c, &ts, &te))
			ksft_exit_fail_msg("no mapping holds lib_c()\n");
		/*
		 * ...then its text alone moves, away from the segment that
		 * holds the section, between two inaccessible pages.
		 */
		moved_len = te - ts + 2 * 4096;
		moved = mmap(NULL, moved_len, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (moved == MAP_FAILED ||
		    mremap((void *)ts, te - ts, te - ts, MREMAP_MAYMOVE | MREMAP_FIXED,
			   moved + 4096) == MAP_FAILED)
			ksft_exit_fail_msg("mremap: %s\n", strerror(errno));
		ch.c = (long (*)(struct chain *))((unsigned long)ch.c - ts +
						   (unsigned long)moved + 4096);
		ksft_print_msg("%s text %#lx-%#lx moved to %p\n", lib, ts, te,
			       moved + 4096);
	}
	if (prep == PREP_BADROWS) {
		lib_b(&ch);
		close(ch.fd);
		ch.fd = open(STACK_FILE, O_RDONLY);
		corrupt_rows(start, end);
	}
	/* Malformed before the kernel ever looked: found so when it does. */
	if (prep == PREP_BADFIRST)
		corrupt_rows(start, end);
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
	if (in_fd >= 0) {
		ssize_t n = read(in_fd, &evbuf, sizeof(evbuf));

		close(in_fd);
		if (n >= 0) {
			ksft_print_msg("%s: inotify event %#x while unwinding\n", lib,
				       evbuf.ev.mask);
			dlclose(h);
			return -1;
		}
	}
	/* Back where it was: dlclose() runs the library's destructors. */
	if (moved && mremap(moved + 4096, te - ts, te - ts,
			    MREMAP_MAYMOVE | MREMAP_FIXED, (void *)ts) == MAP_FAILED)
		ksft_exit_fail_msg("mremap back: %s\n", strerror(errno));
	dlclose(h);
	if (moved)
		munmap(moved, moved_len);
	if (prep == PREP_TABLE) {
		char eh[PATH_MAX];

		snprintf(eh, sizeof(eh), "%s/eh2sframe", dir);
		stress_run(eh, "--remove", path);
	}
	nr = user_stack_parse(buf, ch.ret, got, DEPTH, &ws);
	for (i = 0; i < DEPTH; i++)
		ksft_print_msg("%s frame %u: %#lx, expected %#lx\n", lib, i,
			       i < nr ? got[i] : 0, ch.expected[i]);
	/*
	 * Without its section, lib_c() can only be walked by frame pointers,
	 * and RBP is 1 there: exactly one frame, the right one.
	 */
	if ((prep == PREP_UNMAP || prep == PREP_CORRUPT || prep == PREP_BADROWS ||
	     prep == PREP_BADFIRST) && nr != 1)
		return -1;
	/* Unknown whether lib_c() has a section: one frame, never a guess. */
	if (prep == PREP_HIDE && hidden_nr != 1)
		return -1;
	for (i = 0; i < nr && i < DEPTH; i++)
		if (got[i] != ch.expected[i])
			break;
	return i;
}

/*
 * Code copied into a private PROT_EXEC mapping of /dev/zero, a character
 * device: mov $SYS_read, %eax; syscall; ret. The walk meets its address
 * first, and must not read the device to look for ELF headers (reading a
 * device can have side effects; here it would raise an access event).
 */
static int walk_devzero(void)
{
	static const unsigned char stub[] = {
		0xb8, SYS_read, 0, 0, 0, 0x0f, 0x05, 0xc3,
	};
	long (*call)(long fd, char *b, unsigned long len);
	unsigned long got[DEPTH];
	unsigned int nr, ws;
	int zfd, in_fd, fd, ok;
	long ret;
	void *p;

	zfd = open("/dev/zero", O_RDONLY);
	if (zfd < 0)
		return ksft_print_msg("/dev/zero: %s\n", strerror(errno)), -1;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE, zfd, 0);
	if (p == MAP_FAILED)
		return ksft_print_msg("mmap /dev/zero: %s\n", strerror(errno)), -1;
	memcpy(p, stub, sizeof(stub));
	in_fd = inotify_init1(IN_NONBLOCK);
	if (in_fd < 0 || inotify_add_watch(in_fd, "/dev/zero", IN_ALL_EVENTS) < 0)
		return ksft_print_msg("inotify: %s\n", strerror(errno)), -1;
	fd = open(STACK_FILE, O_RDONLY);
	if (fd < 0)
		return -1;
	call = (long (*)(long, char *, unsigned long))p;
	ret = call(fd, buf, sizeof(buf) - 1);
	close(fd);
	ok = read(in_fd, &evbuf, sizeof(evbuf)) < 0 && errno == EAGAIN;
	close(in_fd);
	nr = user_stack_parse(buf, ret, got, DEPTH, &ws);
	ksft_print_msg("stub frame 0: %#lx, expected %p; inotify quiet: %d\n",
		       nr ? got[0] : 0, (char *)p + 7, ok);
	munmap(p, 4096);
	close(zfd);
	return ok && nr >= 1 && got[0] == (unsigned long)p + 7 ? 0 : -1;
}

#define PARK_FILE	"/sys/kernel/debug/unwind_test/sframe_park"

/* Thread A of walk_race(). */
struct racer {
	struct chain	ch;
	int		go[2];		/* main -> A: walk now */
	int		tid[2];		/* A -> main: its thread ID */
	unsigned int	nr;
	unsigned long	got[DEPTH];
};

static char race_buf[4096];

static void *race_walk(void *arg)
{
	struct racer *r = arg;
	unsigned int ws;
	pid_t tid = gettid();
	char c;

	if (write(r->tid[1], &tid, sizeof(tid)) != sizeof(tid) ||
	    read(r->go[0], &c, 1) != 1)
		return NULL;
	lib_b(&r->ch);
	r->nr = user_stack_parse(race_buf, r->ch.ret, r->got, DEPTH, &ws);
	return NULL;
}

/*
 * Two threads walk lib_c()'s mapping at once (contract 22). Its section is
 * made malformed (every FDE's rows placed past the section) after a first
 * walk found it. Thread A is parked by the test client between reading the
 * mapping's entry and taking its own reference to it; the main thread then
 * walks the same mapping, finds the section malformed, and drops it. A goes
 * on with the entry it read, which must still be alive (no KASAN report, no
 * refcount warning). Both walks end at lib_c(), never guessing past it.
 * Nothing between "park" and "release" may take mmap_lock for writing
 * (no printing, no allocation): A holds the VMA read-locked.
 */
static int walk_race(const char *dir)
{
	struct racer r = { .ch = { .buf = race_buf, .len = sizeof(race_buf) - 1 } };
	struct chain ch = { .buf = buf, .len = sizeof(buf) - 1 };
	unsigned long start, end, base, got[DEPTH];
	unsigned int nr, ws, k;
	char path[PATH_MAX], cmd[32], ack[32];
	pthread_t thr;
	pid_t tid;
	int park, ok;
	void *lib;

	snprintf(path, sizeof(path), "%s/libsframe_c.so", dir);
	lib = dlopen(path, RTLD_NOW);
	if (!lib)
		ksft_exit_fail_msg("dlopen %s: %s\n", path, dlerror());
	ch.c = (long (*)(struct chain *))dlsym(lib, "lib_c");
	r.ch.c = ch.c;
	park = open(PARK_FILE, O_RDWR);
	if (!ch.c || park < 0 || sframe_pages("libsframe_c.so", &start, &end, &base))
		return ksft_print_msg("%s: %s\n", PARK_FILE, strerror(errno)), -1;

	/* A first walk finds the section and keeps it with the VMA. */
	ch.fd = open(STACK_FILE, O_RDONLY);
	lib_b(&ch);
	close(ch.fd);
	nr = user_stack_parse(buf, ch.ret, got, DEPTH, &ws);
	for (k = 0; k < DEPTH; k++)
		if (nr < DEPTH || got[k] != ch.expected[k])
			return ksft_print_msg("first walk: frame %u of %u wrong\n", k, nr), -1;

	corrupt_rows(start, end);

	if (pipe(r.go) || pipe(r.tid) || pthread_create(&thr, NULL, race_walk, &r))
		ksft_exit_fail_msg("thread: %s\n", strerror(errno));
	if (read(r.tid[0], &tid, sizeof(tid)) != sizeof(tid))
		ksft_exit_fail_msg("thread ID\n");
	r.ch.fd = open(STACK_FILE, O_RDONLY);
	ch.fd = open(STACK_FILE, O_RDONLY);
	snprintf(cmd, sizeof(cmd), "park %d", tid);
	if (r.ch.fd < 0 || ch.fd < 0 || write(park, cmd, strlen(cmd)) < 0)
		ksft_exit_fail_msg("%s: %s\n", PARK_FILE, strerror(errno));
	/* Let A walk, and wait until it is parked with the entry it read. */
	if (write(r.go[1], "g", 1) != 1 || read(park, ack, sizeof(ack)) <= 0)
		ksft_exit_fail_msg("park: %s\n", strerror(errno));
	lib_b(&ch);
	if (write(park, "release", 7) != 7)
		ksft_exit_fail_msg("release: %s\n", strerror(errno));
	pthread_join(thr, NULL);
	close(ch.fd);
	close(r.ch.fd);
	close(park);
	dlclose(lib);

	nr = user_stack_parse(buf, ch.ret, got, DEPTH, &ws);
	ok = nr == 1 && got[0] == ch.expected[0] &&
	     r.nr == 1 && r.got[0] == r.ch.expected[0];
	ksft_print_msg("dropping walk: %u frames (%#lx, expected %#lx)\n",
		       nr, nr ? got[0] : 0, ch.expected[0]);
	ksft_print_msg("parked walk: %u frames (%#lx, expected %#lx)\n",
		       r.nr, r.nr ? r.got[0] : 0, r.ch.expected[0]);
	return ok ? 0 : -1;
}

/*
 * The stress mode (--stress SECONDS): walks of several threads at once while
 * other threads change what they walk (contract 22). Every stack a walker
 * gets must be right, or cut short: never a wrong frame.
 */
#define STRESS_WALKERS	3

struct walker {
	pthread_t	thr;
	long		(*c)(struct chain *ch);
	unsigned long	walks, exact, cut, wrong;
	char		buf[4096];
};

static int stress_stop;		/* __atomic: read by every thread */
static unsigned long stress_changes;
static char stress_dir[PATH_MAX - 64];	/* room for a file name after it */

/* One walk from lib_c() through @c: 1 exact, 0 cut short, -1 wrong. */
static int stress_walk(long (*c)(struct chain *ch), char *wbuf, size_t len)
{
	struct chain ch = { .buf = wbuf, .len = len - 1, .c = c };
	unsigned long got[DEPTH];
	unsigned int nr, ws, k;

	ch.fd = open(STACK_FILE, O_RDONLY);
	if (ch.fd < 0)
		return -1;
	lib_b(&ch);
	close(ch.fd);
	nr = user_stack_parse(wbuf, ch.ret, got, DEPTH, &ws);
	for (k = 0; k < nr && k < DEPTH; k++)
		if (got[k] != ch.expected[k])
			return -1;
	return k == DEPTH ? 1 : 0;
}

/* Count the result @r of one of @w's walks. */
static void stress_count(struct walker *w, int r)
{
	w->walks++;
	if (r > 0)
		w->exact++;
	else if (!r)
		w->cut++;
	else
		w->wrong++;
}

static void *stress_walker(void *arg)
{
	struct walker *w = arg;

	while (!__atomic_load_n(&stress_stop, __ATOMIC_RELAXED))
		stress_count(w, stress_walk(w->c, w->buf, sizeof(w->buf)));
	return NULL;
}

/* Split and merge lib_c()'s code (mlock, mprotect) under the walkers. */
static void *stress_vmas(void *arg)
{
	char *first = arg, *second = first + 4096;

	while (!__atomic_load_n(&stress_stop, __ATOMIC_RELAXED)) {
		if (mlock(second, 4096) || munlock(second, 4096) ||
		    mprotect(first, 4096, PROT_READ | PROT_WRITE | PROT_EXEC) ||
		    mprotect(first, 4096, PROT_READ | PROT_EXEC))
			ksft_exit_fail_msg("split/merge: %s\n", strerror(errno));
		__atomic_add_fetch(&stress_changes, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * dlopen() and dlclose() a library without SFrame, walking through it while
 * it is mapped: new code keeps coming and going at reused addresses.
 */
static void *stress_dlopen(void *arg)
{
	struct walker *w = arg;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/libsframe_d.so", stress_dir);
	while (!__atomic_load_n(&stress_stop, __ATOMIC_RELAXED)) {
		void *h = dlopen(path, RTLD_NOW);

		if (!h)
			ksft_exit_fail_msg("dlopen %s: %s\n", path, dlerror());
		stress_count(w, stress_walk((long (*)(struct chain *))dlsym(h, "lib_c"),
					    w->buf, sizeof(w->buf)));
		dlclose(h);
		__atomic_add_fetch(&stress_changes, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Write @val to the tracefs file @path: 0, or -1. */
static int write_file(const char *path, const char *val)
{
	int f = open(path, O_WRONLY), ok;

	if (f < 0)
		return -1;
	ok = write(f, val, strlen(val)) == (ssize_t)strlen(val);
	close(f);
	return ok ? 0 : -1;
}

/*
 * Load and remove a table for libsframe_c.so's build-id (made from its
 * .eh_frame by eh2sframe), and start and stop a tracer that asks for
 * deferred stacks of every read() (an ftrace instance), under the walkers.
 */
static void *stress_tables(void *arg)
{
	static const char inst[] = "/sys/kernel/tracing/instances/sframe_stress";
	char eh[PATH_MAX], lib[PATH_MAX], opt[PATH_MAX + 64], ev[PATH_MAX + 64];
	int tracer = !mkdir(inst, 0755) || errno == EEXIST;

	snprintf(eh, sizeof(eh), "%s/eh2sframe", stress_dir);
	snprintf(lib, sizeof(lib), "%s/libsframe_c.so", stress_dir);
	snprintf(opt, sizeof(opt), "%s/options/userstacktrace_delay", inst);
	snprintf(ev, sizeof(ev), "%s/events/syscalls/sys_enter_read/enable", inst);
	while (!__atomic_load_n(&stress_stop, __ATOMIC_RELAXED)) {
		stress_run(eh, "--load", lib);
		/* A tracer that cannot start (no ftrace) is left out. */
		if (tracer && (write_file(opt, "1") || write_file(ev, "1") ||
			       write_file(ev, "0")))
			tracer = 0;
		stress_run(eh, "--remove", lib);
		if (tracer && write_file(opt, "0"))
			tracer = 0;
		__atomic_add_fetch(&stress_changes, 1, __ATOMIC_RELAXED);
	}
	rmdir(inst);
	return NULL;
}

static int stress(unsigned int seconds)
{
	struct walker w[STRESS_WALKERS + 1] = {};
	pthread_t vmas, tables;
	unsigned long walks = 0, exact = 0, cut = 0, wrong = 0;
	char path[PATH_MAX];
	long (*c)(struct chain *ch);
	void *h;
	int i;

	snprintf(path, sizeof(path), "%s/libsframe_c.so", stress_dir);
	h = dlopen(path, RTLD_NOW);
	c = h ? (long (*)(struct chain *))dlsym(h, "lib_c") : NULL;
	if (!c)
		ksft_exit_fail_msg("dlopen %s: %s\n", path, dlerror());
	for (i = 0; i < STRESS_WALKERS; i++) {
		w[i].c = c;
		if (pthread_create(&w[i].thr, NULL, stress_walker, &w[i]))
			ksft_exit_fail_msg("pthread_create\n");
	}
	if (pthread_create(&w[i].thr, NULL, stress_dlopen, &w[i]) ||
	    pthread_create(&vmas, NULL, stress_vmas, (void *)c) ||
	    pthread_create(&tables, NULL, stress_tables, NULL))
		ksft_exit_fail_msg("pthread_create\n");
	/* The bound of the run; nothing waits on it for synchronisation. */
	sleep(seconds);
	__atomic_store_n(&stress_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i <= STRESS_WALKERS; i++)
		pthread_join(w[i].thr, NULL);
	pthread_join(vmas, NULL);
	pthread_join(tables, NULL);
	for (i = 0; i <= STRESS_WALKERS; i++) {
		ksft_print_msg("%s %d: %lu walks, %lu exact, %lu cut, %lu wrong\n",
			       i < STRESS_WALKERS ? "walker" : "dlopen walker", i,
			       w[i].walks, w[i].exact, w[i].cut, w[i].wrong);
		walks += w[i].walks;
		exact += w[i].exact;
		cut += w[i].cut;
		wrong += w[i].wrong;
	}
	ksft_print_msg("%lu changes to the mappings, tables and tracers\n",
		       stress_changes);
	ksft_test_result(walks && !wrong,
			 "%lu walks under changes: none wrong (%lu exact, %lu cut)\n",
			 walks, exact, cut);
	/*
	 * A walk may be cut where a mapping changed while it was examined
	 * (it stops rather than guess), which is rare: the pieces of a split
	 * or merged mapping keep their section.
	 */
	ksft_test_result(exact * 10 >= walks * 9,
			 "at least 90%% of the walks through the changes reach main()\n");
	dlclose(h);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long at_c, at_d;
	char dir[PATH_MAX];
	ssize_t n;

	ksft_print_header();
	/* libsframe_b.so was mapped at startup (DT_NEEDED). */
	lib_b = (long (*)(struct chain *))dlsym(RTLD_DEFAULT, "lib_b");
	if (!lib_b)
		ksft_exit_fail_msg("dlsym lib_b: %s\n", dlerror());
	if (argc == 3 && !strcmp(argv[1], "--stress")) {
		n = readlink("/proc/self/exe", stress_dir, sizeof(stress_dir) - 1);
		if (n <= 0)
			ksft_exit_fail_msg("readlink /proc/self/exe\n");
		stress_dir[n] = '\0';
		*strrchr(stress_dir, '/') = '\0';
		ksft_set_plan(2);
		stress(atoi(argv[2]));
		ksft_finished();
	}
	ksft_set_plan(16);

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
	/* Contract 17: the walk reads no file, and keeps no transient failure. */
	ksft_test_result(walk(dir, "libsframe_c.so", &at_c, PREP_INOTIFY) == DEPTH,
			 "finding a library's section raises no fsnotify event\n");
	ksft_test_result(walk(dir, "libsframe_c.so", &at_c, PREP_HIDE) == DEPTH,
			 "headers unreadable: the walk stops, and the next walk is complete\n");
	ksft_test_result(walk(dir, "libsframe_c.so", &at_c, PREP_FORK) == DEPTH,
			 "a fork() child that corrupts its copy of a section leaves the parent's in use\n");
	ksft_test_result(walk_devzero() == 0,
			 "code in a PROT_EXEC mapping of a device is walked, the device never read\n");
	/* Contract 22: the text VMA split and merged under the walks. */
	ksft_test_result(walk(dir, "libsframe_c.so", &at_c, PREP_SPLIT) == DEPTH,
			 "a function cut by a VMA split is walked by its section\n");
	ksft_test_result(walk(dir, "libsframe_c.so", &at_c, PREP_MERGE) == DEPTH,
			 "after the split pieces merge again, the section still serves the VMA\n");
	ksft_test_result(walk(dir, "libsframe_e.so", &at_d, PREP_BADROWS) == 1,
			 "a malformed section ends the walk where frame pointers would go on\n");
	/* Review m12: lld's layouts, with 4 KiB and 64 KiB pages. */
	ksft_test_result(walk(dir, "libsframe_lld.so", &at_d, PREP_TABLE) == DEPTH,
			 "a small lld-linked library, code in the file's first page: its table is found\n");
	ksft_test_result(walk(dir, "libsframe_lld64.so", &at_d, PREP_TABLE) == DEPTH,
			 "an lld-linked library with 64 KiB segment alignment: its table is found\n");
	ksft_test_result(walk_race(dir) == 0,
			 "a walk parked with the entry it read while another thread drops it: both end at lib_c\n");
	/* Review M4: the text alone moved; the section stays where it was. */
	ksft_test_result(walk(dir, "libsframe_c.so", &at_c, PREP_MREMAP) == DEPTH,
			 "after mremap() of a library's text alone, its section still serves it\n");
	/* Contract 14: the same when the section was malformed from the start. */
	ksft_test_result(walk(dir, "libsframe_e.so", &at_d, PREP_BADFIRST) == 1,
			 "a section malformed before its first walk ends the walk too\n");
	ksft_finished();
}
#endif
