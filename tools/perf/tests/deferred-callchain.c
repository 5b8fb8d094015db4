// SPDX-License-Identifier: GPL-2.0
/*
 * Merging of deferred user callchains into the samples that wait for them,
 * with hand-made samples: no kernel needed.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>

#include "debug.h"
#include "event.h"
#include "tests.h"
#include "util/deferred-callchain.h"

#define MAX_IPS		16
#define MAX_DELIVERED	16

/* Kernel and user addresses the test samples and records use. */
#define KADDR(t, i)	(0xffffffff81000000ULL + (t) * 0x100 + (i))
#define UADDR(c, i)	(0x0000555500000000ULL + (((c) >> 32) & 0xff) * 0x100 + (i))

/* Cookies: opaque, non-zero, large values are not context markers. */
#define COOKIE_A	0x0000000300000001ULL
#define COOKIE_B	0x0000000500000001ULL
#define COOKIE_C	0xfffffffffffffff1ULL

struct delivered {
	u32	tid;
	u64	time;
	u64	nr;
	u64	ips[MAX_IPS];
};

struct merge_test {
	struct deferred_callchains	dc;
	struct delivered		out[MAX_DELIVERED];
	int				nr_out;
};

static int merge_test__deliver(struct deferred_callchains *dc,
			       struct deferred_sample *ds)
{
	struct merge_test *mt = container_of(dc, struct merge_test, dc);
	struct ip_callchain *chain = ds->sample.callchain;
	struct delivered *d;

	if (mt->nr_out == MAX_DELIVERED || chain->nr > MAX_IPS)
		return -E2BIG;

	d = &mt->out[mt->nr_out++];
	d->tid = ds->sample.tid;
	d->time = ds->sample.time;
	d->nr = chain->nr;
	memcpy(d->ips, chain->ips, chain->nr * sizeof(u64));
	return 0;
}

static void merge_test__init(struct merge_test *mt)
{
	memset(mt, 0, sizeof(*mt));
	deferred_callchains__init(&mt->dc, merge_test__deliver);
}

/*
 * Hold a sample of @tid at @time with @nr_kernel kernel addresses and a
 * deferred user part with @cookie, as the kernel records it. The record is
 * overwritten afterwards: the held sample must use its own copy.
 */
static int add_sample(struct merge_test *mt, u32 tid, u64 time, u64 cookie,
		      int nr_kernel)
{
	u64 buf[2 + MAX_IPS];
	struct perf_event_header *header = (struct perf_event_header *)buf;
	struct ip_callchain *chain = (struct ip_callchain *)&buf[1];
	struct perf_sample sample;
	int i, ret;

	chain->nr = 0;
	chain->ips[chain->nr++] = PERF_CONTEXT_KERNEL;
	for (i = 0; i < nr_kernel; i++)
		chain->ips[chain->nr++] = KADDR(time, i);
	chain->ips[chain->nr++] = PERF_CONTEXT_USER_DEFERRED;
	chain->ips[chain->nr++] = cookie;

	header->type = PERF_RECORD_SAMPLE;
	header->misc = PERF_RECORD_MISC_KERNEL;
	header->size = sizeof(u64) * (2 + chain->nr);

	memset(&sample, 0, sizeof(sample));
	sample.pid = tid;
	sample.tid = tid;
	sample.time = time;
	sample.callchain = chain;

	ret = deferred_callchains__add(&mt->dc, (union perf_event *)buf, &sample,
				       NULL, NULL, NULL);
	memset(buf, 0xa5, sizeof(buf));
	return ret;
}

/* The user part for @cookie: @nr addresses. */
static int add_record(struct merge_test *mt, u32 tid, u64 cookie, int nr)
{
	__u64 ips[MAX_IPS];
	int i;

	for (i = 0; i < nr; i++)
		ips[i] = UADDR(cookie, i);
	return deferred_callchains__process(&mt->dc, tid, cookie, nr, ips);
}

/*
 * Check delivered sample @idx: @tid, @time, its kernel part, then, if
 * @merged, PERF_CONTEXT_USER and the @nr_user addresses of @cookie, else
 * the deferred marker and @cookie as recorded.
 */
static int check_delivered(struct merge_test *mt, int idx, u32 tid, u64 time,
			   int nr_kernel, bool merged, u64 cookie, int nr_user)
{
	struct delivered *d = &mt->out[idx];
	u64 expected[MAX_IPS];
	u64 nr = 0;
	int i;

	if (idx >= mt->nr_out) {
		pr_debug("sample %d was not delivered\n", idx);
		return TEST_FAIL;
	}

	expected[nr++] = PERF_CONTEXT_KERNEL;
	for (i = 0; i < nr_kernel; i++)
		expected[nr++] = KADDR(time, i);
	if (!merged) {
		expected[nr++] = PERF_CONTEXT_USER_DEFERRED;
		expected[nr++] = cookie;
	} else if (nr_user) {
		expected[nr++] = PERF_CONTEXT_USER;
		for (i = 0; i < nr_user; i++)
			expected[nr++] = UADDR(cookie, i);
	}

	if (d->tid != tid || d->time != time) {
		pr_debug("sample %d: tid %u time %llu, expected tid %u time %llu\n",
			 idx, d->tid, (unsigned long long)d->time, tid,
			 (unsigned long long)time);
		return TEST_FAIL;
	}
	if (d->nr != nr || memcmp(d->ips, expected, nr * sizeof(u64))) {
		pr_debug("sample %d (tid %u time %llu): unexpected callchain:\n",
			 idx, tid, (unsigned long long)time);
		for (i = 0; i < (int)max(d->nr, nr); i++) {
			pr_debug("  %2d: %016llx expected %016llx\n", i,
				 i < (int)d->nr ? (unsigned long long)d->ips[i] : 0,
				 i < (int)nr ? (unsigned long long)expected[i] : 0);
		}
		return TEST_FAIL;
	}
	return TEST_OK;
}

/* check_delivered() tells what differs */
#define CHECK_DELIVERED(...)						\
	TEST_ASSERT_VAL("delivered sample",				\
			check_delivered(mt, __VA_ARGS__) == TEST_OK)

#define CHECK_COUNTS(out, held)						\
	TEST_ASSERT_VAL("delivered and held samples",			\
			mt->nr_out == (out) && mt->dc.nr_samples == (held))

#define CHECK_STATS(merged, unmerged)					\
	TEST_ASSERT_VAL("merged and unmerged samples",			\
			mt->dc.nr_merged == (merged) &&			\
			mt->dc.nr_unmerged == (unmerged))

static int match(struct merge_test *mt)
{
	/* Two samples of one kernel entry get the same user part. */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 1, COOKIE_A, 3) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 2, COOKIE_A, 2) == 0);
	CHECK_COUNTS(0, 2);
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_A, 5) == 0);
	CHECK_COUNTS(2, 0);
	CHECK_DELIVERED(0, 100, 1, 3, true, COOKIE_A, 5);
	CHECK_DELIVERED(1, 100, 2, 2, true, COOKIE_A, 5);

	/* A cookie that looks like a context marker is still a cookie. */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 3, COOKIE_C, 1) == 0);
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_C, 7) == 0);
	CHECK_DELIVERED(2, 100, 3, 1, true, COOKIE_C, 7);

	/* An empty user stack leaves just the kernel part. */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 4, COOKIE_B, 2) == 0);
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_B, 0) == 0);
	CHECK_DELIVERED(3, 100, 4, 2, true, COOKIE_B, 0);

	/* A record whose samples were lost delivers nothing. */
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_A, 4) == 0);
	CHECK_COUNTS(4, 0);
	CHECK_STATS(4, 0);
	return TEST_OK;
}

static int mismatch(struct merge_test *mt)
{
	/* The same cookie for another thread is not ours. */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 1, COOKIE_A, 2) == 0);
	TEST_ASSERT_VAL("record", add_record(mt, 200, COOKIE_A, 3) == 0);
	CHECK_COUNTS(0, 1);

	/*
	 * Another cookie for this thread: the record of the held sample was
	 * lost, deliver it as recorded, never with the wrong user part.
	 */
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_B, 3) == 0);
	CHECK_COUNTS(1, 0);
	CHECK_DELIVERED(0, 100, 1, 2, false, COOKIE_A, 0);

	/* Lost record of an older entry, then a matching one: time order. */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 2, COOKIE_A, 1) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 3, COOKIE_B, 2) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 4, COOKIE_B, 3) == 0);
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_B, 4) == 0);
	CHECK_COUNTS(4, 0);
	CHECK_DELIVERED(1, 100, 2, 1, false, COOKIE_A, 0);
	CHECK_DELIVERED(2, 100, 3, 2, true, COOKIE_B, 4);
	CHECK_DELIVERED(3, 100, 4, 3, true, COOKIE_B, 4);
	CHECK_STATS(2, 2);
	return TEST_OK;
}

static int lost(struct merge_test *mt)
{
	union perf_event event = {
		.header = {
			.type = PERF_RECORD_SAMPLE,
			.size = sizeof(struct perf_event_header),
		},
	};
	struct perf_sample sample;

	/* A sample without a deferred user part is not held. */
	memset(&sample, 0, sizeof(sample));
	TEST_ASSERT_VAL("add without callchain",
			deferred_callchains__add(&mt->dc, &event, &sample,
						 NULL, NULL, NULL) == -EINVAL);
	CHECK_COUNTS(0, 0);

	/* Records that never arrive: flushing delivers what was recorded. */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 1, COOKIE_A, 2) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 101, 2, COOKIE_B, 1) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 3, COOKIE_A, 3) == 0);
	TEST_ASSERT_VAL("flush tid", deferred_callchains__flush_tid(&mt->dc, 100) == 0);
	CHECK_COUNTS(2, 1);
	CHECK_DELIVERED(0, 100, 1, 2, false, COOKIE_A, 0);
	CHECK_DELIVERED(1, 100, 3, 3, false, COOKIE_A, 0);

	/* Held since before a time (perf top): those, the others stay. */
	TEST_ASSERT_VAL("add", add_sample(mt, 102, 4, COOKIE_C, 0) == 0);
	TEST_ASSERT_VAL("flush before",
			deferred_callchains__flush_before(&mt->dc, 4) == 0);
	CHECK_COUNTS(3, 1);
	CHECK_DELIVERED(2, 101, 2, 1, false, COOKIE_B, 0);

	TEST_ASSERT_VAL("flush", deferred_callchains__flush(&mt->dc) == 0);
	CHECK_COUNTS(4, 0);
	CHECK_DELIVERED(3, 102, 4, 0, false, COOKIE_C, 0);

	/* Nothing left: a late record delivers nothing. */
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_A, 2) == 0);
	CHECK_COUNTS(4, 0);
	CHECK_STATS(0, 4);

	/* Held samples are freed without delivery on exit. */
	TEST_ASSERT_VAL("add", add_sample(mt, 103, 5, COOKIE_A, 1) == 0);
	deferred_callchains__exit(&mt->dc);
	CHECK_COUNTS(4, 0);
	return TEST_OK;
}

static int interleaved(struct merge_test *mt)
{
	/* Two threads in the kernel at once, records in reverse order. */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 1, COOKIE_A, 2) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 200, 2, COOKIE_B, 3) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 3, COOKIE_A, 1) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 200, 4, COOKIE_B, 2) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 300, 5, COOKIE_C, 2) == 0);

	TEST_ASSERT_VAL("record", add_record(mt, 200, COOKIE_B, 6) == 0);
	CHECK_COUNTS(2, 3);
	CHECK_DELIVERED(0, 200, 2, 3, true, COOKIE_B, 6);
	CHECK_DELIVERED(1, 200, 4, 2, true, COOKIE_B, 6);

	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_A, 2) == 0);
	CHECK_COUNTS(4, 1);
	CHECK_DELIVERED(2, 100, 1, 2, true, COOKIE_A, 2);
	CHECK_DELIVERED(3, 100, 3, 1, true, COOKIE_A, 2);

	/* The third thread's record never comes. */
	TEST_ASSERT_VAL("flush", deferred_callchains__flush(&mt->dc) == 0);
	CHECK_COUNTS(5, 0);
	CHECK_DELIVERED(4, 300, 5, 2, false, COOKIE_C, 0);
	CHECK_STATS(4, 1);
	return TEST_OK;
}

static int run_merge_test(int (*fn)(struct merge_test *mt))
{
	struct merge_test mt;
	int ret;

	merge_test__init(&mt);
	ret = fn(&mt);
	deferred_callchains__exit(&mt.dc);
	return ret;
}

#define DEFINE_MERGE_TEST(name)						\
static int test__deferred_callchain_##name(struct test_suite *test __maybe_unused, \
					   int subtest __maybe_unused)	\
{									\
	return run_merge_test(name);					\
}

DEFINE_MERGE_TEST(match)
DEFINE_MERGE_TEST(mismatch)
DEFINE_MERGE_TEST(lost)
DEFINE_MERGE_TEST(interleaved)

static struct test_case tests__deferred_callchain[] = {
	TEST_CASE("Deferred callchain: matching cookie", deferred_callchain_match),
	TEST_CASE("Deferred callchain: mismatched cookie", deferred_callchain_mismatch),
	TEST_CASE("Deferred callchain: record never arrives", deferred_callchain_lost),
	TEST_CASE("Deferred callchain: interleaved threads", deferred_callchain_interleaved),
	{	.name = NULL, }
};

struct test_suite suite__deferred_callchain = {
	.desc = "Deferred callchain merging",
	.test_cases = tests__deferred_callchain,
};
