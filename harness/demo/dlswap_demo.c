// SPDX-License-Identifier: GPL-2.0
/*
 * A profiled process whose libraries change under the profiler: code in
 * one library, then that library unloaded while code in another runs.
 *
 * One source, built three ways, with frame pointers:
 *   -DDLSWAP_LIB=1  libdlswap_a.so: work_a()
 *   -DDLSWAP_LIB=2  libdlswap_b.so: work_b()
 *   (none)          dlswap_demo: main() -> phase() -> work_a() reading
 *                   /dev/zero N times; then libdlswap_b.so is opened
 *                   (while libdlswap_a.so is still mapped, so at another
 *                   address), libdlswap_a.so closed, and main() ->
 *                   phase() -> work_b() reads N times more.
 *
 * Usage: dlswap_demo [-t] [-n N] [-s SIZE] (defaults 500 reads of 1 MiB).
 * It prints "dlswap_demo: N reads in work_a, N in work_b". With -t,
 * main() closes libdlswap_a.so, starts a thread and ends with
 * pthread_exit(); the thread waits until /proc/self/maps reads as empty
 * (the leader is gone, the process runs on in its memory), then opens
 * libdlswap_b.so and reads in thread_main() -> phase() -> work_b(): no
 * code of libdlswap_b.so runs while the leader's maps could show it.
 *
 * A profiler that names frames from /proc/PID/maps reads the maps again
 * when it meets work_b()'s addresses, and finds libdlswap_a.so gone.
 * Each read() is made by a syscall instruction in work_a() or work_b()
 * themselves: glibc's wrapper keeps no frame.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

typedef long (*work_fn)(int fd, char *buf, long size, int n);

#ifdef DLSWAP_LIB
static inline __attribute__((always_inline))
long sys_read(int fd, char *buf, long size)
{
	long ret;

	asm volatile ("syscall"
		      : "=a" (ret)
		      : "0" ((long)SYS_read), "D" ((long)fd), "S" (buf), "d" (size)
		      : "rcx", "r11", "memory");
	return ret;
}

#if DLSWAP_LIB == 1
#define WORK	work_a
#else
#define WORK	work_b
#endif

/* The reads, each from here: the innermost user frame of each sample. */
long WORK(int fd, char *buf, long size, int n)
{
	long done = 0;
	int i;

	for (i = 0; i < n; i++)
		if (sys_read(fd, buf, size) == size)
			done++;
	return done;
}
#else

static char path[4096];

static void *open_lib(const char *dir, const char *name)
{
	void *h;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlswap_demo: %s\n", dlerror());
		exit(1);
	}
	return h;
}

static long phase(work_fn fn, int fd, char *buf, long size, int n)
{
	return fn(fd, buf, size, n);
}

static struct {
	const char *dir;
	int fd, n;
	char *buf;
	long size, a;
} second;

static void report(long a, long b)
{
	printf("dlswap_demo: %ld reads in work_a, %ld in work_b\n", a, b);
	fflush(stdout);
}

/* Has the leader gone? Its maps, which /proc/self names, read as empty. */
static int leader_gone(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");
	int empty;

	if (!f)
		return 1;
	empty = !fgets(line, sizeof(line), f);
	fclose(f);
	return empty;
}

/* -t: the second phase, in a thread that outlives main(). */
static void *thread_main(void *arg)
{
	work_fn fb;
	void *hb;
	long b;

	while (!leader_gone())
		sched_yield();
	hb = open_lib(second.dir, "libdlswap_b.so");
	fb = (work_fn)dlsym(hb, "work_b");
	b = fb ? phase(fb, second.fd, second.buf, second.size, second.n) : -1;
	report(second.a, b);
	dlclose(hb);
	exit(second.a == second.n && b == second.n ? 0 : 1);
}

int main(int argc, char **argv)
{
	long size = 1 << 20, a, b;
	int n = 500, fd, opt, threaded = 0;
	pthread_t t;
	static char dir[4096];
	char *slash;
	void *ha, *hb;
	work_fn fa, fb;
	char *buf;
	ssize_t len;

	while ((opt = getopt(argc, argv, "tn:s:")) != -1) {
		switch (opt) {
		case 't':
			threaded = 1;
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 's':
			size = atol(optarg);
			break;
		default:
			fprintf(stderr, "usage: dlswap_demo [-t] [-n N] [-s SIZE]\n");
			return 2;
		}
	}
	/* The libraries are beside the program. */
	len = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (len <= 0)
		return 1;
	dir[len] = '\0';
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	buf = malloc(size);
	fd = open("/dev/zero", O_RDONLY);
	if (!buf || fd < 0)
		return 1;

	ha = open_lib(dir, "libdlswap_a.so");
	fa = (work_fn)dlsym(ha, "work_a");
	a = fa ? phase(fa, fd, buf, size, n) : -1;
	if (threaded) {
		dlclose(ha);
		second.dir = dir;
		second.fd = fd;
		second.n = n;
		second.buf = buf;
		second.size = size;
		second.a = a;
		if (pthread_create(&t, NULL, thread_main, NULL))
			return 1;
		pthread_exit(NULL);
	}
	hb = open_lib(dir, "libdlswap_b.so");
	dlclose(ha);
	fb = (work_fn)dlsym(hb, "work_b");
	b = fb ? phase(fb, fd, buf, size, n) : -1;
	report(a, b);
	dlclose(hb);
	return a == n && b == n ? 0 : 1;
}
#endif
