// SPDX-License-Identifier: GPL-2.0
/*
 * A shared library of unwind_bench_dso, built as libunwind_bench_01.so ..
 * libunwind_bench_20.so, without frame pointers and with an SFrame section
 * (harness/build-progs.sh): one frame that a walk can only get through by
 * the library's own section, so that the walk must discover it.
 */

/* Call @fn(@arg, @i) with this library's frame on the stack. */
long bench_lib_call(long (*fn)(void *, int), void *arg, int i)
{
	long ret = fn(arg, i);

	asm volatile ("" ::: "memory");	/* no tail call */
	return ret;
}
