// SPDX-License-Identifier: GPL-2.0
/*
 * A program whose names perf script prints as they are (review m19): the
 * pprof_export job records it, and tools/unwind/perf2pprof must export the
 * recording with no sample or frame that its names make up.
 *
 *   - a thread named " x" (a leading space: its sample lines begin as the
 *     lines of a callchain do) and one named "a\nb" (its sample lines are
 *     cut in two);
 *   - the main thread spins in libpprof_forge.so, in a function whose
 *     symbol name has line breaks and makes each of its frames read as an
 *     extra sample of pid 1 with a frame "forged" (pprof_forge_lib.c).
 *
 *   pprof_forge MS	each of the three threads spins for MS milliseconds
 *			of CPU
 *
 * Frame pointers everywhere, so that the stacks are whole with fp and
 * fp,defer.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/prctl.h>

unsigned long pprof_forge_spin(long ms);	/* libpprof_forge.so */

static long ms;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static volatile unsigned long sink;

static __attribute__((noinline)) unsigned long named_spin(unsigned long n)
{
	unsigned long i, x = n;

	for (i = 0; i < 100000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

static void *worker(void *name)
{
	double end;

	prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
	end = cpu_ms() + ms;
	while (cpu_ms() < end)
		sink += named_spin(sink);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	ms = argc > 1 ? atol(argv[1]) : 200;
	if (pthread_create(&t[0], NULL, worker, " x") ||
	    pthread_create(&t[1], NULL, worker, "a\nb")) {
		perror("pthread_create");
		return 1;
	}
	sink += pprof_forge_spin(ms);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	return 0;
}
