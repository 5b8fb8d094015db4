/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of KUnit to run lib/tests/sframe_kunit.c in user space
 * (kunit_user.c). Expectations print and count failures; assertions also
 * leave the case. "User memory" is a malloc'd area that the shim's
 * sframe_access() treats as the only mapped memory.
 */
#ifndef SFRAME_KUNIT_SHIM_H
#define SFRAME_KUNIT_SHIM_H

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../shim.h"

#define PAGE_SIZE	4096UL
#define GFP_KERNEL	0
#define __user
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MODULE_DESCRIPTION(s)
#define MODULE_LICENSE(s)
#define MODULE_IMPORT_NS(ns)

struct kunit {
	const char	*name;
	int		failed;
	jmp_buf		abort;
};

struct kunit_case {
	void		(*run)(struct kunit *test);
	const char	*name;
};

struct kunit_suite {
	const char		*name;
	struct kunit_case	*test_cases;
};

#define KUNIT_CASE(f)	{ .run = f, .name = #f }

extern struct kunit_suite *kunit_user_suite;
#define kunit_test_suite(s)	struct kunit_suite *kunit_user_suite = &(s)

void *kunit_kzalloc(struct kunit *test, size_t size, int gfp);
unsigned long kunit_vm_mmap(struct kunit *test, void *file, unsigned long a,
			    unsigned long len, unsigned long prot,
			    unsigned long flags, unsigned long off);
unsigned long copy_to_user(void *to, const void *from, unsigned long n);

void kunit_fail(struct kunit *test, const char *file, int line,
		const char *cond, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#define KUNIT_CHECK(test, assert, cond, fmt, ...)			\
	do {								\
		if (!(cond)) {						\
			kunit_fail(test, __FILE__, __LINE__, #cond,	\
				   fmt, ##__VA_ARGS__);			\
			if (assert)					\
				longjmp((test)->abort, 1);		\
		}							\
	} while (0)

#define KUNIT_CMP(test, assert, a, op, b, fmt, ...)			\
	do {								\
		long long __a = (long long)(a), __b = (long long)(b);	\
		KUNIT_CHECK(test, assert, __a op __b,			\
			    "%lld vs %lld " fmt, __a, __b, ##__VA_ARGS__); \
	} while (0)

#define KUNIT_EXPECT_EQ(t, a, b)		KUNIT_CMP(t, 0, a, ==, b, "")
#define KUNIT_EXPECT_EQ_MSG(t, a, b, ...)	KUNIT_CMP(t, 0, a, ==, b, __VA_ARGS__)
#define KUNIT_EXPECT_NE_MSG(t, a, b, ...)	KUNIT_CMP(t, 0, a, !=, b, __VA_ARGS__)
#define KUNIT_EXPECT_TRUE(t, c)			KUNIT_CHECK(t, 0, c, "")
#define KUNIT_EXPECT_TRUE_MSG(t, c, ...)	KUNIT_CHECK(t, 0, c, __VA_ARGS__)
#define KUNIT_ASSERT_EQ(t, a, b)		KUNIT_CMP(t, 1, a, ==, b, "")
#define KUNIT_ASSERT_LE(t, a, b)		KUNIT_CMP(t, 1, a, <=, b, "")
#define KUNIT_ASSERT_NE_MSG(t, a, b, ...)	KUNIT_CMP(t, 1, a, !=, b, __VA_ARGS__)
#define KUNIT_ASSERT_NOT_NULL(t, p)		KUNIT_CHECK(t, 1, (p) != NULL, "")

#endif
