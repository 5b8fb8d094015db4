// SPDX-License-Identifier: GPL-2.0
/*
 * Demo workload for off-CPU profiling: a thread that blocks a known number
 * of times, for known durations, at known user stacks, beside a thread
 * that never blocks.
 *
 *   main -> pipe_phase -> pipe_wait     N reads of a pipe that a child
 *                                       process writes one byte into every
 *                                       20 ms (the child's nanosleep sets
 *                                       the time blocked, not ours)
 *   main -> sleep_phase -> sleep_wait   M nanosleeps of 30 ms
 *   main -> futex_phase -> futex_block  K futex waits, each woken by the
 *                                       thread futex_waker 10 ms after
 *                                       the previous one (the waker waits
 *                                       for the phase in a futex of its
 *                                       own, waker_hold, and sleeps in
 *                                       nanosleep)
 *   busy_thread -> busy_spin            spins, without a system call,
 *                                       until the three phases are done
 *
 * Usage: offcpu_demo [-n N] [-m M] [-k K] [-v] (defaults 10 each). It
 * prints "offcpu_demo: N pipe reads, M sleeps, K futex waits" at the end,
 * then "offcpu_demo: us in pipe_wait P sleep_wait S futex_block F": the
 * microseconds each kind of wait took as the demo measured them around the
 * call (CLOCK_MONOTONIC), and "offcpu_demo: us on-CPU in ..." the same for
 * the thread's CPU time in those calls (CLOCK_THREAD_CPUTIME_ID). The first
 * less the second is what a profiler of off-CPU time should find, however
 * late a busy host makes the timers: the CPU time is the system call's own
 * work and the return to user space (where a deferred unwind runs), which
 * on a debug kernel under TCG is milliseconds a call. -v prints each wait.
 *
 * Every blocking system call is made by its own syscall instruction inside
 * the innermost function: through glibc's wrappers, which keep no frame,
 * a frame-pointer walk would start in the wrapper and skip its caller.
 * Built with frame pointers, without inlining or sibling calls.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static int n_pipe = 10, n_sleep = 10, n_futex = 10;
static volatile int done;
static volatile unsigned long spins;
static int futex_word, go_word;

static inline __attribute__((always_inline))
long sys3(long nr, long a, long b, long c)
{
	long ret;

	asm volatile ("syscall"
		      : "=a" (ret)
		      : "0" (nr), "D" (a), "S" (b), "d" (c)
		      : "rcx", "r11", "memory");
	return ret;
}

static inline __attribute__((always_inline))
long sys4(long nr, long a, long b, long c, long d)
{
	register long r10 asm("r10") = d;
	long ret;

	asm volatile ("syscall"
		      : "=a" (ret)
		      : "0" (nr), "D" (a), "S" (b), "d" (c), "r" (r10)
		      : "rcx", "r11", "memory");
	return ret;
}

/*
 * Microseconds each kind of wait took around the call, and of those the
 * microseconds the thread ran (its CPU time: the system call's own work,
 * the deferred unwind at its return), as the demo itself measures them.
 */
struct waited {
	long long wall, cpu;
};
static struct waited us_pipe, us_sleep, us_futex;
static int verbose;

static long long clock_us(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/* The start of a wait: *@t is its wall and CPU clock. */
static void wait_start(struct waited *t)
{
	t->wall = clock_us(CLOCK_MONOTONIC);
	t->cpu = clock_us(CLOCK_THREAD_CPUTIME_ID);
}

/* The end of the wait started at @t, added to @sum. */
static void wait_end(struct waited *sum, const struct waited *t, const char *what)
{
	long long cpu = clock_us(CLOCK_THREAD_CPUTIME_ID) - t->cpu;
	long long wall = clock_us(CLOCK_MONOTONIC) - t->wall;

	sum->wall += wall;
	sum->cpu += cpu;
	if (verbose)
		fprintf(stderr, "offcpu_demo: %s %lld us, %lld on-CPU\n", what, wall, cpu);
}

static void ms_sleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static long __attribute__((noinline, noipa)) pipe_wait(int fd)
{
	char c;

	return sys3(SYS_read, fd, (long)&c, 1);
}

static int __attribute__((noinline, noipa)) pipe_phase(int n)
{
	int fds[2], i, status;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		/* The writer: its pacing is what the reader blocks for. */
		close(fds[0]);
		for (i = 0; i < n; i++) {
			ms_sleep(20);
			if (write(fds[1], "x", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(fds[1]);
	for (i = 0; i < n; i++) {
		struct waited t;

		wait_start(&t);
		if (pipe_wait(fds[0]) != 1)
			return -1;
		wait_end(&us_pipe, &t, "pipe_wait");
	}
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	return n;
}

static long __attribute__((noinline, noipa)) sleep_wait(void)
{
	struct timespec ts = { 0, 30 * 1000000L };

	return sys3(SYS_nanosleep, (long)&ts, 0, 0);
}

static int __attribute__((noinline, noipa)) sleep_phase(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct waited t;

		wait_start(&t);
		if (sleep_wait())
			return -1;
		wait_end(&us_sleep, &t, "sleep_wait");
	}
	return n;
}

/*
 * Waits while the word is @val; returns at once if it moved on already.
 * The volatile local gives it a frame: gcc sets none up in a leaf that
 * keeps nothing on the stack, frame pointers or not, and a walk would
 * then skip its caller.
 */
static long __attribute__((noinline, noipa)) futex_block(int val)
{
	volatile long ret;

	ret = sys4(SYS_futex, (long)&futex_word, FUTEX_WAIT_PRIVATE, val, 0);
	return ret;
}

/* The waker's wait for futex_phase(), its own syscall like the others. */
static long __attribute__((noinline, noipa)) waker_hold(void)
{
	volatile long ret;

	ret = sys4(SYS_futex, (long)&go_word, FUTEX_WAIT_PRIVATE, 0, 0);
	return ret;
}

/*
 * Started with the program and held until futex_phase() begins: a thread
 * created there would start its first 10 ms late by the creation (tens of
 * ms under TCG), and the first wait with it.
 */
static void *futex_waker(void *arg)
{
	int i, n = *(int *)arg;

	while (!__atomic_load_n(&go_word, __ATOMIC_SEQ_CST))
		waker_hold();
	for (i = 0; i < n; i++) {
		ms_sleep(10);
		__atomic_store_n(&futex_word, i + 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	return NULL;
}

static int __attribute__((noinline, noipa)) futex_phase(int n, pthread_t waker)
{
	int i;

	__atomic_store_n(&go_word, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &go_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	/* Wait until the waker has moved the word past each value. */
	for (i = 0; i < n; i++)
		while (__atomic_load_n(&futex_word, __ATOMIC_SEQ_CST) == i) {
			struct waited t;

			wait_start(&t);
			futex_block(i);
			wait_end(&us_futex, &t, "futex_block");
		}
	pthread_join(waker, NULL);
	return n;
}

/*
 * Counts in a register: a store would fault on the page fork()
 * write-protected for the pipe writer, and block on the fork's lock of
 * the address space, which is blocking.
 */
static unsigned long __attribute__((noinline, noipa)) busy_spin(void)
{
	unsigned long n = 0;

	while (!done)
		n++;
	return n;
}

static void *busy_thread(void *arg)
{
	spins = busy_spin();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t busy, waker;
	int opt, a, b, c;

	while ((opt = getopt(argc, argv, "n:m:k:v")) != -1) {
		switch (opt) {
		case 'n':
			n_pipe = atoi(optarg);
			break;
		case 'm':
			n_sleep = atoi(optarg);
			break;
		case 'k':
			n_futex = atoi(optarg);
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-n N] [-m M] [-k K] [-v]\n", argv[0]);
			return 2;
		}
	}
	if (n_pipe < 1 || n_sleep < 1 || n_futex < 1) {
		fprintf(stderr, "%s: bad argument\n", argv[0]);
		return 2;
	}
	if (pthread_create(&waker, NULL, futex_waker, &n_futex) ||
	    pthread_create(&busy, NULL, busy_thread, NULL))
		return 1;
	a = pipe_phase(n_pipe);
	b = sleep_phase(n_sleep);
	c = futex_phase(n_futex, waker);
	done = 1;
	pthread_join(busy, NULL);
	printf("offcpu_demo: %d pipe reads, %d sleeps, %d futex waits\n", a, b, c);
	printf("offcpu_demo: us in pipe_wait %lld sleep_wait %lld futex_block %lld\n",
	       us_pipe.wall, us_sleep.wall, us_futex.wall);
	printf("offcpu_demo: us on-CPU in pipe_wait %lld sleep_wait %lld futex_block %lld\n",
	       us_pipe.cpu, us_sleep.cpu, us_futex.cpu);
	return a == n_pipe && b == n_sleep && c == n_futex ? 0 : 1;
}
