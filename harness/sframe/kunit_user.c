// SPDX-License-Identifier: GPL-2.0
/*
 * Run lib/tests/sframe_kunit.c in user space, against the same reader
 * source, through the KUnit stand-in in kinc/. Prints TAP; exits non-zero
 * when a case fails. The real KUnit run (kunit.py) stays the reference.
 */
#include <stdarg.h>
#include <kunit/test.h>

static u8 user_mem[64 * 4096] __attribute__((aligned(4096)));
static unsigned long user_used;

/* Freed after each case, as KUnit does with resources. */
static void *allocs[64];
static unsigned int nallocs;

void *kunit_kzalloc(struct kunit *test, size_t size, int gfp)
{
	(void)test;
	(void)gfp;
	if (nallocs == ARRAY_SIZE(allocs))
		return NULL;
	return allocs[nallocs++] = calloc(1, size);
}

unsigned long kunit_vm_mmap(struct kunit *test, void *file, unsigned long a,
			    unsigned long len, unsigned long prot,
			    unsigned long flags, unsigned long off)
{
	unsigned long addr = (unsigned long)user_mem + user_used;

	(void)test; (void)file; (void)a; (void)prot; (void)flags; (void)off;
	if (len > sizeof(user_mem) - user_used)
		return 0;
	user_used += len;
	/* Only this mapping counts as user memory. */
	sframe_shim_lo = addr;
	sframe_shim_hi = addr + len;
	memset((void *)addr, 0, len);
	return addr;
}

unsigned long copy_to_user(void *to, const void *from, unsigned long n)
{
	unsigned long addr = (unsigned long)to;

	if (addr < sframe_shim_lo || addr > sframe_shim_hi ||
	    n > sframe_shim_hi - addr)
		return n;
	memcpy(to, from, n);
	return 0;
}

void kunit_fail(struct kunit *test, const char *file, int line,
		const char *cond, const char *fmt, ...)
{
	va_list ap;

	printf("    # %s: %s:%d: expected %s: ", test->name, file, line, cond);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	test->failed++;
}

#include "../../lib/tests/sframe_kunit.c"

int main(void)
{
	struct kunit_case *c;
	int n = 0, failed = 0;

	for (c = kunit_user_suite->test_cases; c->run; c++) {
		struct kunit test = { .name = c->name };

		user_used = 0;
		if (!setjmp(test.abort))
			c->run(&test);
		while (nallocs)
			free(allocs[--nallocs]);
		n++;
		failed += !!test.failed;
		printf("%s %d - %s\n", test.failed ? "not ok" : "ok", n,
		       c->name);
	}
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
