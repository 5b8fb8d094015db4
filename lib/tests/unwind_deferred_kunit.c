// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the deferred user-stack unwinding core.
 *
 * A request can come from NMI at any point of a kernel entry, so the core
 * keeps its per-task state in one 128-bit word and changes it only through
 * a few small steps: hand out a cookie, record a request, take the pending
 * bit, end the entry. Races between those steps cannot be provoked on
 * demand, so the cases drive each step directly on a private state, in the
 * orders an interrupt or an NMI can produce, and assert the exact mask,
 * cookie and return value after every step. Registration, cancel and the
 * refusal of kernel threads are checked through the public API.
 */

#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/cpumask.h>
#include <linux/irqflags.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/unwind_deferred.h>
#include <linux/wordpart.h>

#include "../../kernel/unwind/deferred_test.h"

#define UD_NR_COOKIES	1000
#define UD_NR_PER_CPU	4

/* Tracer bits used on private states: the lowest two and the highest. */
#define UD_BIT_A	UNWIND_FIRST_WORK_BIT
#define UD_BIT_B	(UNWIND_FIRST_WORK_BIT + 1)
#define UD_BIT_TOP	(BITS_PER_LONG - 1)

/* The bits a first request sets besides the tracer's own. */
#define UD_NEW		(UNWIND_USED | UNWIND_PENDING)

static void ud_need_cmpxchg128(struct kunit *test)
{
	if (!system_has_cmpxchg128())
		kunit_skip(test, "the CPU lacks cmpxchg16b");
}

/* A request may hand out a cookie, which needs preemption disabled. */
static int ud_request(struct unwind_task_info *info, int bit, u64 *cookie)
{
	guard(preempt)();
	return unwind_state_request(info, bit, cookie);
}

/* End the entry the way the return to user space does: IRQs disabled. */
static bool ud_reset(struct unwind_task_info *info)
{
	guard(irqsave)();
	return unwind_state_reset(info);
}

static struct unwind_task_info *ud_info_alloc(struct kunit *test)
{
	struct unwind_task_info *info;

	ud_need_cmpxchg128(test);
	info = kunit_kzalloc(test, sizeof(*info), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, info);
	/* cmpxchg16b faults on a misaligned operand. */
	KUNIT_ASSERT_TRUE(test, IS_ALIGNED((unsigned long)&info->state, 16));
	return info;
}

static void ud_expect_state(struct kunit *test, struct unwind_task_info *info,
			    unsigned long mask, u64 cookie)
{
	KUNIT_EXPECT_EQ(test, info->state.mask, mask);
	KUNIT_EXPECT_EQ(test, info->state.cookie, cookie);
}

static void ud_nop_cb(struct unwind_work *work, struct unwind_stacktrace *trace,
		      u64 cookie)
{
}

/*
 * Works a case registers. The cleanup action cancels those still
 * registered, so that a failed assertion does not leave them behind.
 */
struct ud_works {
	struct unwind_work	w[UNWIND_MAX_WORKS + 1];
	bool			registered[UNWIND_MAX_WORKS + 1];
};

static int ud_register(struct ud_works *uw, unsigned int i)
{
	int ret = unwind_deferred_init(&uw->w[i], ud_nop_cb);

	uw->registered[i] = !ret;
	return ret;
}

static void ud_unregister(struct ud_works *uw, unsigned int i)
{
	unwind_deferred_cancel(&uw->w[i]);
	uw->registered[i] = false;
}

static void ud_cancel_all(void *data)
{
	struct ud_works *uw = data;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(uw->w); i++)
		if (uw->registered[i])
			ud_unregister(uw, i);
}

static struct ud_works *ud_works_alloc(struct kunit *test)
{
	struct ud_works *uw = kunit_kzalloc(test, sizeof(*uw), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, uw);
	for (i = 0; i < ARRAY_SIZE(uw->w); i++)
		uw->w[i].bit = -1;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, ud_cancel_all, uw),
			0);
	return uw;
}

static int ud_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static void ud_cookie_format(struct kunit *test)
{
	unsigned int cpu, i;
	unsigned long flags;
	u64 c1, c2, *c;

	/* IRQs off: no request on this CPU may take a cookie in between. */
	local_irq_save(flags);
	cpu = smp_processor_id();
	c1 = unwind_new_cookie();
	c2 = unwind_new_cookie();
	local_irq_restore(flags);

	KUNIT_EXPECT_NE(test, c1, 0);
	KUNIT_EXPECT_NE(test, c2, 0);
	KUNIT_EXPECT_EQ(test, lower_32_bits(c1), cpu + 1);
	KUNIT_EXPECT_EQ(test, lower_32_bits(c2), cpu + 1);
	KUNIT_EXPECT_TRUE(test, upper_32_bits(c1) & 1);
	/* The per-CPU counter goes up by 2, wrapping in 31 bits. */
	KUNIT_EXPECT_EQ(test, upper_32_bits(c2),
			(upper_32_bits(c1) + 2) & S32_MAX);

	c = kunit_kmalloc_array(test, UD_NR_COOKIES, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	for (i = 0; i < UD_NR_COOKIES; i++) {
		preempt_disable();
		cpu = smp_processor_id();
		c[i] = unwind_new_cookie();
		preempt_enable();

		KUNIT_ASSERT_NE_MSG(test, c[i], 0, "cookie %u", i);
		KUNIT_ASSERT_EQ_MSG(test, lower_32_bits(c[i]), cpu + 1,
				    "cookie %u", i);
		KUNIT_ASSERT_TRUE_MSG(test, upper_32_bits(c[i]) & 1,
				      "cookie %u", i);
		KUNIT_ASSERT_GT_MSG(test, (s64)c[i], 0, "cookie %u", i);
	}

	sort(c, UD_NR_COOKIES, sizeof(*c), ud_cmp_u64, NULL);
	for (i = 1; i < UD_NR_COOKIES; i++)
		KUNIT_ASSERT_NE_MSG(test, c[i], c[i - 1],
				    "cookie %#llx handed out twice", c[i]);
}

/*
 * Across the counter's wrap (in 31 bits, the counter going up by 2 with its
 * lowest bit set) the cookie stays positive as an s64, as
 * bpf_unwind_user_request() needs to return it or a negative errno, and is
 * never 0. The counter values are those this_cpu_add_return() gives on
 * either side of each wrap.
 */
static void ud_cookie_wrap(struct kunit *test)
{
	static const struct {
		u32 ctr;	/* what the per-CPU counter returned */
		u32 high;	/* the cookie's high 32 bits */
	} cases[] = {
		{ 0x00000002, 0x00000003 },
		{ 0x7ffffffd, 0x7ffffffd },
		{ 0x7fffffff, 0x7fffffff },
		{ 0x80000001, 0x00000001 },	/* past the 31-bit wrap */
		{ 0xfffffffd, 0x7ffffffd },
		{ 0xffffffff, 0x7fffffff },
		{ 0x00000001, 0x00000001 },	/* past the 32-bit wrap */
	};
	unsigned int i;
	u64 c;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		c = unwind_cookie_make(cases[i].ctr, 5);
		KUNIT_EXPECT_GT_MSG(test, (s64)c, 0, "counter %#x: %#llx",
				    cases[i].ctr, c);
		KUNIT_EXPECT_EQ_MSG(test, upper_32_bits(c), cases[i].high,
				    "counter %#x", cases[i].ctr);
		KUNIT_EXPECT_EQ(test, lower_32_bits(c), 6);
	}
}

/*
 * Two CPUs never hand out the same cookie. An aborted case leaves its thread
 * pinned, but the thread ends with the case.
 */
static void ud_cookie_cpus(struct kunit *test)
{
	unsigned int cpus[2], ran, i, j;
	u64 c[2 * UD_NR_PER_CPU];

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	cpus[0] = cpumask_first(cpu_online_mask);
	cpus[1] = cpumask_next(cpus[0], cpu_online_mask);
	KUNIT_ASSERT_LT(test, cpus[1], nr_cpu_ids);

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		unsigned int cpu = cpus[i / UD_NR_PER_CPU];

		if (i % UD_NR_PER_CPU == 0)
			KUNIT_ASSERT_EQ(test,
					set_cpus_allowed_ptr(current,
							     cpumask_of(cpu)),
					0);
		preempt_disable();
		ran = smp_processor_id();
		c[i] = unwind_new_cookie();
		preempt_enable();

		KUNIT_ASSERT_EQ(test, ran, cpu);
		KUNIT_EXPECT_NE(test, c[i], 0);
		KUNIT_EXPECT_EQ(test, lower_32_bits(c[i]), cpu + 1);
	}
	KUNIT_EXPECT_EQ(test, set_cpus_allowed_ptr(current, cpu_possible_mask),
			0);

	KUNIT_EXPECT_NE(test, lower_32_bits(c[0]),
			lower_32_bits(c[UD_NR_PER_CPU]));
	for (i = 0; i < ARRAY_SIZE(c); i++)
		for (j = i + 1; j < ARRAY_SIZE(c); j++)
			KUNIT_EXPECT_NE_MSG(test, c[i], c[j],
					    "cookies %u and %u", i, j);
}

/* One kernel entry from the first request to its end, and the next one. */
static void ud_state_transitions(struct kunit *test)
{
	struct unwind_task_info *info = ud_info_alloc(test);
	unsigned long all = BIT(UD_BIT_A) | BIT(UD_BIT_B) | BIT(UD_BIT_TOP);
	union unwind_task_state old;
	u64 c1, c2, c;

	KUNIT_EXPECT_EQ(test, ud_request(info, UD_BIT_A, &c1), 2);
	KUNIT_EXPECT_NE(test, c1, 0);
	ud_expect_state(test, info, BIT(UD_BIT_A) | UD_NEW, c1);

	c = 0;
	KUNIT_EXPECT_EQ(test, ud_request(info, UD_BIT_A, &c), 1);
	KUNIT_EXPECT_EQ(test, c, c1);
	ud_expect_state(test, info, BIT(UD_BIT_A) | UD_NEW, c1);

	/* The task is marked pending already: not marked again. */
	c = 0;
	KUNIT_EXPECT_EQ(test, ud_request(info, UD_BIT_B, &c), 0);
	KUNIT_EXPECT_EQ(test, c, c1);
	ud_expect_state(test, info, BIT(UD_BIT_A) | BIT(UD_BIT_B) | UD_NEW, c1);

	c = 0;
	KUNIT_EXPECT_EQ(test, ud_request(info, UD_BIT_TOP, &c), 0);
	KUNIT_EXPECT_EQ(test, c, c1);
	ud_expect_state(test, info, all | UD_NEW, c1);

	/* The deferred run takes it. */
	old = unwind_state_take_pending(info);
	KUNIT_EXPECT_EQ(test, old.mask, all | UD_NEW);
	KUNIT_EXPECT_EQ(test, old.cookie, c1);
	ud_expect_state(test, info, all | UNWIND_USED, c1);

	/* Taking it again finds nothing pending and changes nothing. */
	old = unwind_state_take_pending(info);
	KUNIT_EXPECT_EQ(test, old.mask, all | UNWIND_USED);
	KUNIT_EXPECT_EQ(test, old.cookie, c1);
	ud_expect_state(test, info, all | UNWIND_USED, c1);

	/* The task returns to user space. */
	atomic_long_set(&info->completed, all);
	KUNIT_EXPECT_TRUE(test, ud_reset(info));
	ud_expect_state(test, info, 0, 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&info->completed), 0);

	/* The next entry gets a new cookie. */
	KUNIT_EXPECT_EQ(test, ud_request(info, UD_BIT_A, &c2), 2);
	KUNIT_EXPECT_NE(test, c2, 0);
	KUNIT_EXPECT_NE(test, c2, c1);
	ud_expect_state(test, info, BIT(UD_BIT_A) | UD_NEW, c2);
}

/*
 * A request that an NMI made after the deferred run is still pending at
 * the return to user space: the entry must not end, or it would be lost.
 */
static void ud_reset_keeps_pending(struct kunit *test)
{
	struct unwind_task_info *info = ud_info_alloc(test);
	u64 c;

	KUNIT_EXPECT_EQ(test, ud_request(info, UD_BIT_A, &c), 2);
	atomic_long_set(&info->completed, BIT(UD_BIT_B));

	KUNIT_EXPECT_FALSE(test, ud_reset(info));
	ud_expect_state(test, info, BIT(UD_BIT_A) | UD_NEW, c);
	KUNIT_EXPECT_EQ(test, (unsigned long)atomic_long_read(&info->completed),
			BIT(UD_BIT_B));

	unwind_state_take_pending(info);
	KUNIT_EXPECT_TRUE(test, ud_reset(info));
	ud_expect_state(test, info, 0, 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&info->completed), 0);
}

/* An IRQ requests while the deferred run goes on: it must be marked again. */
static void ud_request_after_take(struct kunit *test)
{
	struct unwind_task_info *info = ud_info_alloc(test);
	unsigned long both = BIT(UD_BIT_A) | BIT(UD_BIT_B);
	u64 c1, c;

	KUNIT_EXPECT_EQ(test, ud_request(info, UD_BIT_A, &c1), 2);
	unwind_state_take_pending(info);

	c = 0;
	KUNIT_EXPECT_EQ(test, ud_request(info, UD_BIT_B, &c), 2);
	KUNIT_EXPECT_EQ(test, c, c1);
	ud_expect_state(test, info, both | UD_NEW, c1);

	c = 0;
	KUNIT_EXPECT_EQ(test, ud_request(info, UD_BIT_A, &c), 1);
	KUNIT_EXPECT_EQ(test, c, c1);
	c = 0;
	KUNIT_EXPECT_EQ(test, ud_request(info, UD_BIT_B, &c), 1);
	KUNIT_EXPECT_EQ(test, c, c1);
	ud_expect_state(test, info, both | UD_NEW, c1);

	/* A bit set during the entry stays set once nothing is pending. */
	unwind_state_take_pending(info);
	c = 0;
	KUNIT_EXPECT_EQ(test, ud_request(info, UD_BIT_A, &c), 1);
	KUNIT_EXPECT_EQ(test, c, c1);
	ud_expect_state(test, info, both | UNWIND_USED, c1);
}

/*
 * unwind_user_faultable() gives the entry a cookie without any request
 * (mask UNWIND_USED only): a later request must reuse that cookie.
 */
static void ud_request_keeps_cookie(struct kunit *test)
{
	struct unwind_task_info *info = ud_info_alloc(test);
	const u64 cookie = 0x1234500000003ULL;
	u64 c = 0;

	info->state.mask = UNWIND_USED;
	info->state.cookie = cookie;

	KUNIT_EXPECT_EQ(test, ud_request(info, UD_BIT_B, &c), 2);
	KUNIT_EXPECT_EQ(test, c, cookie);
	ud_expect_state(test, info, BIT(UD_BIT_B) | UD_NEW, cookie);
}

/*
 * Other tracers may hold bits already, so the number of free bits is not
 * known: register until the bits run out.
 */
static void ud_bits(struct kunit *test)
{
	struct ud_works *uw = ud_works_alloc(test);
	unsigned long seen = 0;
	unsigned int n, i;
	int bit, ret = 0;

	for (n = 0; n <= UNWIND_MAX_WORKS; n++) {
		uw->w[n].bit = INT_MAX;
		ret = ud_register(uw, n);
		if (ret)
			break;
		bit = uw->w[n].bit;
		KUNIT_ASSERT_GE(test, bit, UNWIND_FIRST_WORK_BIT);
		KUNIT_ASSERT_LT(test, bit, BITS_PER_LONG);
		KUNIT_ASSERT_FALSE_MSG(test, seen & BIT(bit),
				       "bit %d handed out twice", bit);
		seen |= BIT(bit);
	}
	KUNIT_ASSERT_EQ(test, ret, -EBUSY);
	KUNIT_EXPECT_EQ(test, uw->w[n].bit, -1);
	KUNIT_ASSERT_GE(test, n, 1);
	KUNIT_EXPECT_EQ(test, hweight_long(seen), n);

	/* Cancelling the failed registration frees no bit. */
	unwind_deferred_cancel(&uw->w[n]);
	KUNIT_EXPECT_EQ(test, uw->w[n].bit, -1);
	uw->w[n].bit = INT_MAX;
	KUNIT_EXPECT_EQ(test, ud_register(uw, n), -EBUSY);
	KUNIT_EXPECT_EQ(test, uw->w[n].bit, -1);

	/* A cancelled bit is the only free one: the next work gets it. */
	i = n / 2;
	bit = uw->w[i].bit;
	ud_unregister(uw, i);
	KUNIT_EXPECT_EQ(test, uw->w[i].bit, -1);
	KUNIT_ASSERT_EQ(test, ud_register(uw, n), 0);
	KUNIT_EXPECT_EQ(test, uw->w[n].bit, bit);
	KUNIT_EXPECT_EQ(test, ud_register(uw, i), -EBUSY);

	/* Cancel all: their bits are free again. */
	for (i = 0; i <= n; i++) {
		if (!uw->registered[i])
			continue;
		ud_unregister(uw, i);
		KUNIT_EXPECT_EQ(test, uw->w[i].bit, -1);
	}
	KUNIT_ASSERT_EQ(test, ud_register(uw, 0), 0);
	KUNIT_EXPECT_TRUE(test, seen & BIT(uw->w[0].bit));
	ud_unregister(uw, 0);
	KUNIT_EXPECT_EQ(test, uw->w[0].bit, -1);
}

/*
 * A statically allocated work that was never initialised is all zero. Its
 * bit, 0, is UNWIND_PENDING_BIT, not a tracer's: cancelling it must change
 * nothing (and must not unlink its empty list head).
 */
static void ud_zeroed_work(struct kunit *test)
{
	struct ud_works *uw = ud_works_alloc(test);

	memset(&uw->w[0], 0, sizeof(uw->w[0]));
	unwind_deferred_cancel(&uw->w[0]);
	KUNIT_EXPECT_EQ(test, uw->w[0].bit, 0);
	KUNIT_EXPECT_NULL(test, uw->w[0].list.next);
}

/*
 * Registering a work that is registered already must fail and change
 * nothing: a second list_add_rcu() would corrupt the list, and a second bit
 * would leak.
 */
static void ud_init_twice(struct kunit *test)
{
	struct ud_works *uw = ud_works_alloc(test);
	int bit;

	KUNIT_ASSERT_EQ(test, ud_register(uw, 0), 0);
	bit = uw->w[0].bit;
	KUNIT_EXPECT_EQ(test, unwind_deferred_init(&uw->w[0], ud_nop_cb),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, uw->w[0].bit, bit);
	/* The bit is still the work's: the next tracer gets another one. */
	KUNIT_ASSERT_EQ(test, ud_register(uw, 1), 0);
	KUNIT_EXPECT_NE(test, uw->w[1].bit, bit);
}

/*
 * Ending an entry drops the cached trace: after a counter wrap, a later
 * entry with the same cookie must be walked anew, not given a stale trace.
 */
static void ud_reset_drops_cache(struct kunit *test)
{
	struct unwind_task_info *info = ud_info_alloc(test);
	u64 cookie;

	info->cache = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, info->cache);
	KUNIT_ASSERT_EQ(test, ud_request(info, UD_BIT_A, &cookie), 2);
	unwind_state_take_pending(info);
	info->cache->cookie = cookie;
	info->cache->nr_entries = 3;
	KUNIT_EXPECT_TRUE(test, ud_reset(info));
	KUNIT_EXPECT_EQ(test, info->cache->cookie, 0);
	info->cache = NULL;
}

/* The KUnit thread is a kernel thread: it has no user stack to unwind. */
static void ud_kthread_refused(struct kunit *test)
{
	struct unwind_task_info *info = &current->unwind_info;
	struct ud_works *uw = ud_works_alloc(test);
	unsigned long entries[1] = { 0 };
	struct unwind_stacktrace trace = { .nr = 7, .entries = entries };
	u64 cookie = 123;

	KUNIT_ASSERT_TRUE(test, current->flags & PF_KTHREAD);
	KUNIT_ASSERT_EQ(test, ud_register(uw, 0), 0);

	KUNIT_EXPECT_EQ(test, unwind_deferred_request(&uw->w[0], &cookie),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, cookie, 0);
	ud_expect_state(test, info, 0, 0);

	KUNIT_EXPECT_EQ(test, unwind_user_faultable(&trace), -EINVAL);
	KUNIT_EXPECT_EQ(test, trace.nr, 0);
	KUNIT_EXPECT_NULL(test, trace.entries);
	KUNIT_EXPECT_NULL(test, info->cache);
#ifdef CONFIG_UNWIND_DEFERRED_WALK_COUNT
	KUNIT_EXPECT_EQ(test, info->nr_walks, 0);
#endif
	ud_expect_state(test, info, 0, 0);
}

/*
 * Cancel removes the tracer's bit from every task, and only that bit.
 * Other tasks' state cannot be set from here, so the KUnit thread's own
 * state stands in for them.
 */
static void ud_cancel_scrubs(struct kunit *test)
{
	struct unwind_task_info *info = &current->unwind_info;
	struct ud_works *uw;
	union unwind_task_state old;
	int a, b, ret;
	u64 ca, cb;

	ud_need_cmpxchg128(test);
	uw = ud_works_alloc(test);
	KUNIT_ASSERT_EQ(test, ud_register(uw, 0), 0);
	KUNIT_ASSERT_EQ(test, ud_register(uw, 1), 0);
	a = uw->w[0].bit;
	b = uw->w[1].bit;
	KUNIT_ASSERT_NE(test, a, b);
	KUNIT_ASSERT_EQ(test, info->state.mask, 0);
	KUNIT_ASSERT_EQ(test, info->state.cookie, 0);
	KUNIT_ASSERT_EQ(test, atomic_long_read(&info->completed), 0);

	/* No assertions from here on: the thread's state must be reset. */
	ret = ud_request(info, a, &ca);
	KUNIT_EXPECT_EQ(test, ret, 2);
	ret = ud_request(info, b, &cb);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, cb, ca);
	atomic_long_or(BIT(a) | BIT(b), &info->completed);

	ud_unregister(uw, 0);
	KUNIT_EXPECT_EQ(test, uw->w[0].bit, -1);
	ud_expect_state(test, info, BIT(b) | UD_NEW, ca);
	KUNIT_EXPECT_EQ(test, (unsigned long)atomic_long_read(&info->completed),
			BIT(b));

	/* Leave the thread as it was: end the entry. */
	old = unwind_state_take_pending(info);
	KUNIT_EXPECT_EQ(test, old.mask, BIT(b) | UD_NEW);
	KUNIT_EXPECT_TRUE(test, ud_reset(info));
	ud_expect_state(test, info, 0, 0);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&info->completed), 0);
}

/*
 * A context record's attributes must be whole entries { key, len, value }
 * that fill attrs_size exactly: half an entry is a record being rewritten.
 */
static void ud_context_attrs(struct kunit *test)
{
	static const u8 two[] = { 1, 2, 'a', 'b', 7, 0 };
	u8 *max;

	KUNIT_EXPECT_TRUE(test, unwind_context_attrs_ok(two, 0));
	KUNIT_EXPECT_TRUE(test, unwind_context_attrs_ok(two, sizeof(two)));
	/* The first entry alone, and a key whose length byte is missing. */
	KUNIT_EXPECT_TRUE(test, unwind_context_attrs_ok(two, 4));
	KUNIT_EXPECT_FALSE(test, unwind_context_attrs_ok(two, 5));
	/* A value that runs past the end, by one byte or by most of it. */
	KUNIT_EXPECT_FALSE(test, unwind_context_attrs_ok(two, 3));
	KUNIT_EXPECT_FALSE(test, unwind_context_attrs_ok(two, 1));

	/* 612 bytes: two entries with 255-byte values, then one with 96. */
	max = kunit_kzalloc(test, 612, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, max);
	max[1] = 255;
	max[258] = 255;
	max[515] = 96;
	KUNIT_EXPECT_TRUE(test, unwind_context_attrs_ok(max, 612));
	KUNIT_EXPECT_FALSE(test, unwind_context_attrs_ok(max, 611));
	max[515] = 97;
	KUNIT_EXPECT_FALSE(test, unwind_context_attrs_ok(max, 612));
}

static struct kunit_case unwind_deferred_cases[] = {
	KUNIT_CASE(ud_cookie_format),
	KUNIT_CASE(ud_cookie_wrap),
	KUNIT_CASE(ud_cookie_cpus),
	KUNIT_CASE(ud_state_transitions),
	KUNIT_CASE(ud_reset_keeps_pending),
	KUNIT_CASE(ud_request_after_take),
	KUNIT_CASE(ud_request_keeps_cookie),
	KUNIT_CASE(ud_bits),
	KUNIT_CASE(ud_zeroed_work),
	KUNIT_CASE(ud_kthread_refused),
	KUNIT_CASE(ud_init_twice),
	KUNIT_CASE(ud_reset_drops_cache),
	KUNIT_CASE(ud_cancel_scrubs),
	KUNIT_CASE(ud_context_attrs),
	{}
};

static struct kunit_suite unwind_deferred_suite = {
	.name = "unwind_deferred",
	.test_cases = unwind_deferred_cases,
};

kunit_test_suite(unwind_deferred_suite);

MODULE_DESCRIPTION("KUnit tests for deferred user-space stack unwinding");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
