// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark driver, run inside the guest by harness/guest/bench.sh.
 *
 *   unwind_bench syscall [-d DEPTH] [-n N]
 *	N getppid() calls from DEPTH frames below main(); prints
 *	"syscall depth=D calls=N ns=T" (T: CLOCK_MONOTONIC, whole loop).
 *   unwind_bench request [-n M] [-i ITERS] [-k K]
 *	M times, in a fresh system call each, the bench client's "time ITERS
 *	K"; prints the medians of its per-call figures in TSC ticks:
 *	"request tracers=K first=F others=O fast=S atomic=A" (others, fast
 *	and atomic per operation; the empty timed region subtracted).
 *   unwind_bench deliver [-d DEPTH] [-k K] [-n M] [-t THREADS]
 *	each thread, DEPTH frames below its start, M times: "fire K" then
 *	"fire 0", each write() timed with rdtsc; prints the medians and the
 *	callbacks and frames the client counted:
 *	"deliver depth=D tracers=K threads=T base=B fire=F cost=F-B
 *	 callbacks=C expected=E nr=N"
 *	With -c, each thread first registers an OpenTelemetry thread context
 *	(prctl(PR_UNWIND_CONTEXT)) whose record holds IDs and a 32-byte
 *	attribute: while unwind:unwind_user_context is enabled, every delivery
 *	also reads and emits it.
 *   unwind_bench time CMD [ARGS...]
 *	runs CMD and prints "time ns=T rc=R" on stderr.
 *
 * The bench client is lib/tests/unwind_deferred_bench.c.
 *
 * Built twice (harness/build-progs.sh): unwind_bench with frame pointers,
 * and unwind_bench_sframe without them, with an SFrame section and
 * UNWIND_BENCH_SFRAME defined, which makes the ctl writes with its own
 * system call instruction: glibc's write() has neither frame pointers nor
 * SFrame, and no walk would get through it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <x86intrin.h>

#include "bench_util.h"

#define BENCH_DIR "/sys/kernel/debug/unwind_deferred_bench/"

static int depth = 8, tracers = 1, nthreads = 1, with_context;
static long count = 1000, iters = 1000;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

#ifdef UNWIND_BENCH_SFRAME
static ssize_t bench_write(int fd, const void *buf, size_t n)
{
	long ret = bench_sys_write(fd, buf, n);

	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}
#else
#define bench_write write
#endif

static void ctl(int fd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ctl(int fd, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (bench_write(fd, buf, n) != n) {
		fprintf(stderr, "unwind_bench: \"%s\": %s\n", buf, strerror(errno));
		exit(1);
	}
}

static int open_ctl(void)
{
	int fd = open(BENCH_DIR "ctl", O_WRONLY);

	if (fd < 0)
		die(BENCH_DIR "ctl");
	return fd;
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

/* Recursion that keeps its frames: DEPTH calls of this, then @fn. */
static long __attribute__((noinline)) nest(int d, long (*fn)(void *), void *arg)
{
	long ret;

	if (d <= 1)
		ret = fn(arg);
	else
		ret = nest(d - 1, fn, arg);
	asm volatile ("" ::: "memory");	/* no tail call */
	return ret;
}

/* ---- syscall ---- */

static long syscall_loop(void *arg)
{
	long i, ret = 0;

	for (i = 0; i < count; i++) {
		asm volatile ("syscall" : "=a" (ret) : "0" ((long)SYS_getppid)
			      : "rcx", "r11", "memory");
	}
	return ret;
}

static int do_syscall(void)
{
	uint64_t t = now_ns();

	nest(depth, syscall_loop, NULL);
	t = now_ns() - t;
	printf("syscall depth=%d calls=%ld ns=%llu\n", depth, count,
	       (unsigned long long)t);
	return 0;
}

/* ---- request ---- */

static int do_request(void)
{
	uint64_t *first = calloc(count, 8), *others = calloc(count, 8);
	uint64_t *fast = calloc(count, 8), *atomic = calloc(count, 8);
	static char buf[1 << 20];
	int fd = open_ctl();
	char *line, *save;
	long n = 0;

	if (!first || !others || !fast || !atomic)
		die("calloc");
	ctl(fd, "reset");
	for (long i = 0; i < count; i++)
		ctl(fd, "time %ld %d", iters, tracers);
	read_file(BENCH_DIR "results", buf, sizeof(buf));
	for (line = strtok_r(buf, "\n", &save); line && n < count;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long it, k, e, f, o, s, a;

		if (sscanf(line, "iters=%llu tracers=%llu empty=%llu first=%llu others=%llu fast=%llu atomic=%llu",
			   &it, &k, &e, &f, &o, &s, &a) != 7)
			break;
		/* Per operation, in hundredths of a tick to keep the fraction. */
		first[n] = 100 * (f > e ? f - e : 0);
		others[n] = k > 1 ? 100 * o / (k - 1) : 0;
		fast[n] = 100 * s / it;
		atomic[n] = 100 * a / it;
		n++;
	}
	if (n != count) {
		fprintf(stderr, "unwind_bench: %ld results, wanted %ld\n", n, count);
		return 1;
	}
	printf("request tracers=%d first=%.2f others=%.2f fast=%.2f atomic=%.2f\n",
	       tracers, median(first, n) / 100.0, median(others, n) / 100.0,
	       median(fast, n) / 100.0, median(atomic, n) / 100.0);
	return 0;
}

/* ---- deliver ---- */

struct deliver {
	pthread_t	tid;
	uint64_t	*base, *fire;
};

static long deliver_loop(void *arg)
{
	struct deliver *d = arg;
	int fd = open_ctl();
	uint64_t t;

	for (long i = 0; i < count; i++) {
		t = __rdtsc();
		ctl(fd, "fire %d", tracers);
		d->fire[i] = __rdtsc() - t;
		t = __rdtsc();
		ctl(fd, "fire 0");
		d->base[i] = __rdtsc() - t;
	}
	close(fd);
	return 0;
}

#ifndef PR_UNWIND_CONTEXT
#define PR_UNWIND_CONTEXT	0x55435458
#define PR_UNWIND_CONTEXT_SET	1
#endif

/* OTEP 4947's thread context record, with one 32-byte attribute. */
struct ctx_record {
	uint8_t		trace_id[16];
	uint8_t		span_id[8];
	uint8_t		valid;
	uint8_t		trace_flags;
	uint16_t	attrs_size;
	uint8_t		attrs[34];
};

static __thread void *otel_thread_ctx_v1;

static void *deliver_thread(void *arg)
{
	struct ctx_record rec = {
		.trace_id = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 },
		.span_id = { 1, 2, 3, 4, 5, 6, 7, 8 },
		.valid = 1, .trace_flags = 1,
		.attrs_size = 34, .attrs = { 1, 32 },
	};

	if (with_context) {
		otel_thread_ctx_v1 = &rec;
		if (syscall(SYS_prctl, PR_UNWIND_CONTEXT, PR_UNWIND_CONTEXT_SET,
			    &otel_thread_ctx_v1, 0, 0))
			die("prctl(PR_UNWIND_CONTEXT)");
	}
	nest(depth, deliver_loop, arg);
	return NULL;
}

static int do_deliver(void)
{
	uint64_t *base = calloc(count * nthreads, 8), *fire = calloc(count * nthreads, 8);
	struct deliver *d = calloc(nthreads, sizeof(*d));
	unsigned long long cbs, frames, ntr;
	int fd = open_ctl(), i, max_nr;
	char buf[256];

	if (!base || !fire || !d)
		die("calloc");
	ctl(fd, "reset");
	for (i = 0; i < nthreads; i++) {
		d[i].base = base + i * count;
		d[i].fire = fire + i * count;
		if (pthread_create(&d[i].tid, NULL, deliver_thread, &d[i]))
			die("pthread_create");
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(d[i].tid, NULL);
	read_file(BENCH_DIR "stats", buf, sizeof(buf));
	if (sscanf(buf, "tracers=%llu callbacks=%llu frames=%llu max_nr=%d",
		   &ntr, &cbs, &frames, &max_nr) != 4) {
		fprintf(stderr, "unwind_bench: bad stats: %s\n", buf);
		return 1;
	}
	uint64_t b = median(base, count * nthreads), f = median(fire, count * nthreads);

	printf("deliver depth=%d tracers=%d threads=%d base=%llu fire=%llu cost=%lld callbacks=%llu expected=%ld nr=%d\n",
	       depth, tracers, nthreads, (unsigned long long)b,
	       (unsigned long long)f, (long long)(f - b), cbs,
	       count * nthreads * tracers, max_nr);
	return cbs != (unsigned long long)count * nthreads * tracers;
}

/* ---- time ---- */

static int do_time(char **argv)
{
	uint64_t t = now_ns();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (!pid) {
		execvp(argv[0], argv);
		die(argv[0]);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	t = now_ns() - t;
	fprintf(stderr, "time ns=%llu rc=%d\n", (unsigned long long)t,
		WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	int opt;

	if (!strcmp(cmd, "time") && argc > 2)
		return do_time(argv + 2);
	optind = 2;
	while ((opt = getopt(argc, argv, "cd:i:k:n:t:")) != -1) {
		switch (opt) {
		case 'd': depth = atoi(optarg); break;
		case 'i': iters = atol(optarg); break;
		case 'c': with_context = 1; break;
		case 'k': tracers = atoi(optarg); break;
		case 'n': count = atol(optarg); break;
		case 't': nthreads = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (depth < 1 || iters < 1 || tracers < 0 || count < 1 || nthreads < 1)
		goto usage;
	if (!strcmp(cmd, "syscall"))
		return do_syscall();
	if (!strcmp(cmd, "request"))
		return do_request();
	if (!strcmp(cmd, "deliver"))
		return do_deliver();
usage:
	fprintf(stderr, "usage: unwind_bench syscall|request|deliver [-c] [-d DEPTH] [-i ITERS] [-k TRACERS] [-n COUNT] [-t THREADS]\n"
			"       unwind_bench time CMD [ARGS...]\n");
	return 2;
}
