// SPDX-License-Identifier: GPL-2.0
/*
 * Demo workload for profiling: a known, deep user call chain that spends
 * most of its time in system calls.
 *
 *   main -> run -> level (x DEPTH) -> leaf -> read(/dev/zero, SIZE bytes)
 *
 * Usage: unwind_demo [-d DEPTH] [-n LOOPS] [-s SIZE] [-t THREADS] [-l]
 *                    [-w BUILD-ID]
 * Defaults: depth 8, 2000 loops, 64 KiB per read, 1 thread; -l reads
 * through glibc's read() wrapper instead of leaf()'s own system call.
 * -w waits, before the reads, until /dev/sframe_tables lists a table for
 * BUILD-ID (at most 12000 polls 5 ms apart; then it says so and goes on).
 * It prints "unwind_demo: N reads" at the end.
 *
 * For the ftrace selftests (tools/testing/selftests/ftrace/test.d/userstack):
 *   unwind_demo --getppid N   main -> ppid_loop -> ppid_a -> ppid_b ->
 *                             ppid_c -> getppid, N times; prints nothing
 *   unwind_demo --signal N    the same chain, but ppid_c() sends this
 *                             thread SIGUSR1 with tgkill, N times: each
 *                             system call returns through the handler
 *   unwind_demo --context N   the --getppid chain N times, with an
 *                             OpenTelemetry thread context registered
 *                             (prctl(PR_UNWIND_CONTEXT)): before call I
 *                             (from 0) the record holds trace ID
 *                             4bf92f3577b34da6a3ce929d0e0e4736, span ID
 *                             I + 1 (16 hex digits), flags 0x01 and one
 *                             attribute (key 1, "abc"), except that every
 *                             fourth record (I % 4 == 3) is marked invalid
 *   unwind_demo --frames      makes that call once and prints the frames a
 *                             walk during the getppid call must find,
 *                             innermost first, as "0x<hex offset>" in this
 *                             program's file: the address after the syscall
 *                             instruction in ppid_c(), then the return
 *                             addresses in ppid_b(), ppid_a(), ppid_loop().
 *
 * Built with frame pointers, without inlining or sibling calls, so that
 * every function keeps its frame and the chain is exact. leaf() enters the
 * kernel with its own syscall instruction: through glibc's read(), which has
 * no frame, a frame-pointer walk would start in read() and skip leaf().
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

static int depth = 8, loops = 2000, nthreads = 1;
static size_t size = 64 << 10;
static int zero_fd;
static int use_libc;		/* -l: read() through glibc's wrapper */

static inline __attribute__((always_inline)) long sys_read(int fd, void *buf, size_t n)
{
	long ret;

	asm volatile ("syscall"
		      : "=a" (ret)
		      : "0" ((long)SYS_read), "D" ((long)fd), "S" (buf), "d" (n)
		      : "rcx", "r11", "memory");
	return ret;
}

/* A call, so that gcc gives leaf() a frame even at -O2. */
static long __attribute__((noinline)) full(long ret)
{
	return ret == (long)size;
}

static long __attribute__((noinline)) leaf(char *buf)
{
	long n = 0;
	int i;

	for (i = 0; i < loops; i++)
		n += full(use_libc ? read(zero_fd, buf, size) :
			  sys_read(zero_fd, buf, size));
	return n;
}

/* One frame per level; the volatile use keeps the call from becoming a jump. */
static long __attribute__((noinline)) level(int n, char *buf)
{
	volatile long ret;

	ret = n > 1 ? level(n - 1, buf) : leaf(buf);
	return ret;
}

/* Innermost first: after the syscall in ppid_c(), then return addresses. */
static unsigned long ppid_frames[4];
/* getppid(), or tgkill(pid, tid, SIGUSR1) for --signal. */
static long ppid_nr = SYS_getppid, ppid_args[3];
static volatile sig_atomic_t ppid_signals;

static void ppid_handler(int sig)
{
	ppid_signals++;
}

static long __attribute__((noinline)) ppid_c(void)
{
	unsigned long ip;
	long ret;

	asm volatile ("lea 1f(%%rip), %1\n\t"
		      "syscall\n"
		      "1:"
		      : "=a" (ret), "=&r" (ip)
		      : "0" (ppid_nr), "D" (ppid_args[0]), "S" (ppid_args[1]),
			"d" (ppid_args[2])
		      : "rcx", "r11", "memory");
	ppid_frames[0] = ip;
	ppid_frames[1] = (unsigned long)__builtin_return_address(0);
	return ret;
}

static long __attribute__((noinline)) ppid_b(void)
{
	volatile long ret = ppid_c();

	ppid_frames[2] = (unsigned long)__builtin_return_address(0);
	return ret;
}

static long __attribute__((noinline)) ppid_a(void)
{
	volatile long ret = ppid_b();

	ppid_frames[3] = (unsigned long)__builtin_return_address(0);
	return ret;
}

/*
 * One call site of ppid_a() for both modes, so the frames are the same; no
 * other getppid call, so that the tests can count them.
 */
static int __attribute__((noinline)) ppid_loop(long n)
{
	long i;

	for (i = 0; i < n; i++)
		if (ppid_a() < 0)
			return 1;
	return 0;
}

/* The offset of @addr in the file mapped there, from /proc/self/maps. */
static int file_offset(unsigned long addr, unsigned long *off)
{
	unsigned long start, end, pgoff;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &pgoff) != 3)
			continue;
		if (addr >= start && addr < end) {
			*off = addr - start + pgoff;
			found = 1;
		}
	}
	fclose(f);
	return found ? 0 : -1;
}

#ifndef PR_UNWIND_CONTEXT
#define PR_UNWIND_CONTEXT	0x55435458
#define PR_UNWIND_CONTEXT_SET	1
#endif

/* OTEP 4947's thread context record, with room for one attribute. */
struct ctx_record {
	unsigned char	trace_id[16];
	unsigned char	span_id[8];
	unsigned char	valid;
	unsigned char	trace_flags;
	unsigned short	attrs_size;
	unsigned char	attrs[8];
};

__thread void *otel_thread_ctx_v1;

static int ppid_context(long n)
{
	static const unsigned char trace_id[16] = {
		0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
		0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36,
	};
	static struct ctx_record rec;
	long i;
	int b;

	if (prctl(PR_UNWIND_CONTEXT, PR_UNWIND_CONTEXT_SET, &otel_thread_ctx_v1, 0, 0))
		return 1;
	otel_thread_ctx_v1 = &rec;
	for (i = 0; i < n; i++) {
		rec.valid = 0;
		memcpy(rec.trace_id, trace_id, sizeof(trace_id));
		for (b = 0; b < 8; b++)
			rec.span_id[b] = (unsigned long)(i + 1) >> (56 - 8 * b);
		rec.trace_flags = 1;
		memcpy(rec.attrs, "\x01\x03" "abc", 5);
		rec.attrs_size = 5;
		rec.valid = i % 4 != 3;
		if (ppid_a() < 0)
			return 1;
	}
	return 0;
}

static int ppid_main(int argc, char **argv)
{
	unsigned long off;
	int i;

	if (!strcmp(argv[1], "--getppid") && argc == 3)
		return ppid_loop(atol(argv[2]));
	if (!strcmp(argv[1], "--context") && argc == 3)
		return ppid_context(atol(argv[2]));
	if (!strcmp(argv[1], "--signal") && argc == 3) {
		struct sigaction sa = { .sa_handler = ppid_handler };

		if (sigaction(SIGUSR1, &sa, NULL))
			return 1;
		ppid_nr = SYS_tgkill;
		ppid_args[0] = getpid();
		ppid_args[1] = syscall(SYS_gettid);
		ppid_args[2] = SIGUSR1;
		return ppid_loop(atol(argv[2])) || ppid_signals != atol(argv[2]);
	}
	if (strcmp(argv[1], "--frames") || argc != 2) {
		fprintf(stderr, "usage: %s --getppid N | --signal N | --context N | --frames\n",
			argv[0]);
		return 2;
	}
	if (ppid_loop(1))
		return 1;
	for (i = 0; i < 4; i++) {
		if (file_offset(ppid_frames[i], &off))
			return 1;
		printf("0x%lx\n", off);
	}
	return 0;
}

/*
 * -w: eh_late.sh judges the stacks taken once a helper (perf's watch,
 * unwindprof --tables) loaded this program's table after it was started,
 * apart from how long the helper took to do so: under TCG that depends on
 * the host's load. A poll of the table store, not a guess of the delay.
 */
static void wait_table(const char *id)
{
	struct timespec gap = { 0, 5 * 1000 * 1000 };
	size_t len = strlen(id);
	char line[512];
	int i, found = 0;

	for (i = 0; i < 12000 && !found; i++) {
		FILE *f = fopen("/dev/sframe_tables", "r");

		while (f && !found && fgets(line, sizeof(line), f))
			found = !strncmp(line, id, len) && line[len] == ' ';
		if (f)
			fclose(f);
		if (!found)
			nanosleep(&gap, NULL);
	}
	if (!found)
		fprintf(stderr, "unwind_demo: no table for build-id %s in /dev/sframe_tables; reading anyway\n",
			id);
}

static void *run(void *arg)
{
	char *buf = malloc(size);

	if (!buf)
		return NULL;
	memset(buf, 1, size);
	*(long *)arg = level(depth, buf);
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tid[64];
	long done[64] = { 0 };
	long total = 0;
	const char *wait_id = NULL;
	int opt, i;

	if (argc > 1 && !strncmp(argv[1], "--", 2))
		return ppid_main(argc, argv);
	while ((opt = getopt(argc, argv, "d:n:s:t:lw:")) != -1) {
		switch (opt) {
		case 'l': use_libc = 1; break;
		case 'd': depth = atoi(optarg); break;
		case 'n': loops = atoi(optarg); break;
		case 's': size = strtoul(optarg, NULL, 0); break;
		case 't': nthreads = atoi(optarg); break;
		case 'w': wait_id = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-d DEPTH] [-n LOOPS] [-s SIZE] [-t THREADS] [-l] [-w BUILD-ID]\n",
				argv[0]);
			return 2;
		}
	}
	if (depth < 1 || loops < 1 || !size || nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "%s: bad argument\n", argv[0]);
		return 2;
	}
	zero_fd = open("/dev/zero", O_RDONLY);
	if (zero_fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	if (wait_id)
		wait_table(wait_id);
	if (nthreads == 1) {
		run(&done[0]);
	} else {
		for (i = 0; i < nthreads; i++)
			if (pthread_create(&tid[i], NULL, run, &done[i]))
				return 1;
		for (i = 0; i < nthreads; i++)
			pthread_join(tid[i], NULL);
	}
	for (i = 0; i < nthreads; i++)
		total += done[i];
	printf("unwind_demo: %ld reads\n", total);
	return total == (long)loops * nthreads ? 0 : 1;
}
