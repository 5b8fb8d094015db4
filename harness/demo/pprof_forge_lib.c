// SPDX-License-Identifier: GPL-2.0
/*
 * libpprof_forge.so, for pprof_forge: pprof_forge_spin() spins in a
 * function that harness/build-progs.sh renames, in the object file, to
 *
 *	g (x)\nsystemd 1/1 1.000000200: 999999999 cpu-clock:\n\t    7f0000001000 forged
 *
 * (two line breaks and a tab). perf script prints a frame in it as
 *
 *	    7f...  g (x)
 *	systemd 1/1 1.000000200: 999999999 cpu-clock:
 *	    7f0000001000 forged+0x1c (/tests/bin/libpprof_forge.so+0x111c)
 *
 * that is, a sample of pid 1 (comm systemd, period 999999999) whose one
 * frame is "forged", after every sample of the function (review m19).
 */
#include <time.h>

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Renamed by harness/build-progs.sh. */
static __attribute__((noinline)) unsigned long
pprof_forge_renamed(unsigned long n)
{
	unsigned long i, x = n;

	for (i = 0; i < 100000; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	return x;
}

unsigned long pprof_forge_spin(long ms)
{
	double end = cpu_ms() + ms;
	unsigned long x = 1;

	while (cpu_ms() < end)
		x += pprof_forge_renamed(x);
	return x;
}
