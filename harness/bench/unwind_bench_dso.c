// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark driver for the SFrame registry, run inside the guest by
 * harness/guest/bench.sh. Dynamically linked, built without frame pointers
 * and with an SFrame section, like its libraries libunwind_bench_NN.so
 * (harness/bench/unwind_bench_lib.c), which it dlopen()s from its own
 * directory. Its system calls are its own "syscall" instructions: glibc's
 * write() has neither frame pointers nor SFrame, so no walk would get
 * through it.
 *
 *   unwind_bench_dso discover [-n N]
 *	N times: dlopen() libunwind_bench_01.so, and from under its frame
 *	time (rdtsc) three writes to the bench client's ctl: "fire 1", whose
 *	walk is the first to meet the fresh mapping and discovers its
 *	section, "fire 1" again, the same walk with the mapping examined, and
 *	"fire 0", no walk; then dlclose() it, which unmaps it. Prints the
 *	medians: "discover first=F examined=E base=B discovery=D walk=W
 *	nr=N", D the median of F - E, W of E - B, N the frames walked.
 *   unwind_bench_dso registry [-l LIBS]
 *	dlopen()s LIBS libraries (default 20), calls through all of them
 *	nested and makes one "fire 1" under the innermost, so that the walk
 *	passes through every library, then asks the client for the SFrame
 *	registry's figures of its mm, before and after the walk: "registry
 *	libs=L nr=N before_bytes=B0 vmas=V exec=X examined=E sections=S
 *	bytes=B".
 *
 * The bench client is lib/tests/unwind_deferred_bench.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <x86intrin.h>

#include "bench_util.h"

#define BENCH_DIR "/sys/kernel/debug/unwind_deferred_bench/"
#define MAX_LIBS 20

typedef long (*lib_call_t)(long (*fn)(void *, int), void *arg, int i);

static int ctl_fd;
static long count = 100;
static int nlibs = MAX_LIBS;
static lib_call_t calls[MAX_LIBS];

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void ctl(const char *cmd)
{
	long n = strlen(cmd);

	if (bench_sys_write(ctl_fd, cmd, n) != n) {
		fprintf(stderr, "unwind_bench_dso: \"%s\" failed\n", cmd);
		exit(1);
	}
}

/* One timed ctl write. */
static uint64_t timed(const char *cmd)
{
	uint64_t t = __rdtsc();

	ctl(cmd);
	return __rdtsc() - t;
}

static void read_file(const char *name, char *buf, size_t size)
{
	int fd = open(name, O_RDONLY);
	ssize_t n, len = 0;

	if (fd < 0)
		die(name);
	while (len < (ssize_t)size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	close(fd);
}

/* The deepest frame count the client's callbacks were given since reset. */
static int max_nr(void)
{
	char buf[256];
	int nr = -1;
	char *p;

	read_file(BENCH_DIR "stats", buf, sizeof(buf));
	p = strstr(buf, "max_nr=");
	if (p)
		nr = atoi(p + 7);
	return nr;
}

static void *open_lib(int i, lib_call_t *call)
{
	char name[64];
	void *h;

	snprintf(name, sizeof(name), "libunwind_bench_%02d.so", i);
	h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "unwind_bench_dso: %s\n", dlerror());
		exit(1);
	}
	*call = (lib_call_t)dlsym(h, "bench_lib_call");
	if (!*call) {
		fprintf(stderr, "unwind_bench_dso: %s\n", dlerror());
		exit(1);
	}
	return h;
}

/* ---- discover ---- */

struct times {
	uint64_t first, examined, base;
};

static long __attribute__((noinline)) discover_fires(void *arg, int i)
{
	struct times *t = arg;

	t->first = timed("fire 1");
	t->examined = timed("fire 1");
	t->base = timed("fire 0");
	asm volatile ("" ::: "memory");
	return 0;
}

static int do_discover(void)
{
	uint64_t *first = calloc(count, 8), *examined = calloc(count, 8);
	uint64_t *base = calloc(count, 8), *disc = calloc(count, 8);
	uint64_t *walk = calloc(count, 8);
	struct times t;
	lib_call_t call;
	void *h;

	if (!first || !examined || !base || !disc || !walk)
		die("calloc");
	ctl("reset");
	/* The program's own mappings (and libc's) examined before timing. */
	ctl("fire 1");
	ctl("fire 1");
	for (long i = 0; i < count; i++) {
		h = open_lib(1, &call);
		call(discover_fires, &t, 0);
		dlclose(h);
		first[i] = t.first;
		examined[i] = t.examined;
		base[i] = t.base;
		disc[i] = t.first > t.examined ? t.first - t.examined : 0;
		walk[i] = t.examined > t.base ? t.examined - t.base : 0;
	}
	printf("discover n=%ld first=%llu examined=%llu base=%llu discovery=%llu walk=%llu nr=%d\n",
	       count, (unsigned long long)median(first, count),
	       (unsigned long long)median(examined, count),
	       (unsigned long long)median(base, count),
	       (unsigned long long)median(disc, count),
	       (unsigned long long)median(walk, count), max_nr());
	return 0;
}

/* ---- registry ---- */

/* Call through library @i, then @i + 1, ...; fire under the innermost. */
static long __attribute__((noinline)) registry_step(void *arg, int i)
{
	long ret;

	if (i == nlibs) {
		ctl("fire 1");
		ret = 0;
	} else {
		ret = calls[i](registry_step, arg, i + 1);
	}
	asm volatile ("" ::: "memory");
	return ret;
}

static void usage(char *buf, size_t size)
{
	ctl("sframe");
	read_file(BENCH_DIR "sframe", buf, size);
	buf[strcspn(buf, "\n")] = '\0';
}

static int do_registry(void)
{
	char before[256], after[256];
	unsigned long long b0 = 0;
	char *p;

	for (int i = 0; i < nlibs; i++)
		open_lib(i + 1, &calls[i]);
	usage(before, sizeof(before));
	p = strstr(before, "bytes=");
	if (p)
		b0 = strtoull(p + 6, NULL, 10);
	ctl("reset");
	registry_step(NULL, 0);
	usage(after, sizeof(after));
	printf("registry libs=%d nr=%d before_bytes=%llu %s\n", nlibs, max_nr(), b0, after);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	int opt;

	optind = 2;
	while ((opt = getopt(argc, argv, "l:n:")) != -1) {
		switch (opt) {
		case 'l': nlibs = atoi(optarg); break;
		case 'n': count = atol(optarg); break;
		default: goto usage;
		}
	}
	if (count < 1 || nlibs < 1 || nlibs > MAX_LIBS)
		goto usage;
	ctl_fd = open(BENCH_DIR "ctl", O_WRONLY);
	if (ctl_fd < 0)
		die(BENCH_DIR "ctl");
	if (!strcmp(cmd, "discover"))
		return do_discover();
	if (!strcmp(cmd, "registry"))
		return do_registry();
usage:
	fprintf(stderr, "usage: unwind_bench_dso discover [-n COUNT]\n"
			"       unwind_bench_dso registry [-l LIBS]\n");
	return 2;
}
