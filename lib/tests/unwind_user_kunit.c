// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the frame-pointer user-stack walker.
 *
 * Each case maps anonymous user memory into the test thread's own mm, lays a
 * crafted frame chain into it and walks it with unwind_user_walk(), starting
 * from registers the case chooses. Every case asserts the exact entries the
 * walker returns, so a walker that reads one frame too many, or one too few,
 * fails.
 */

#include <kunit/test.h>
#include <linux/mman.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>

#define UW_PAGES	4
#define UW_MAX		64

/*
 * Code addresses of a case's test @t: recorded by the walker, never
 * dereferenced. Where nothing is mapped by default, so that every step
 * looks its code up and takes the walker's general path; in the test's own
 * mapping, which has no SFrame section, for the second run of the cases
 * that take a parameter, so that the steps after the first take the run of
 * plain frame-pointer steps.
 */
#define UW_TEXT		0x401000UL
#define IP0		(t->text + 0x800)
#define RA(n)		(t->text + 0x10 * (n))

struct uw_test {
	unsigned long	base;		/* start of the test's user mapping */
	unsigned long	text;		/* where its code addresses lie */
	unsigned long	entries[UW_MAX];
	struct unwind_stacktrace trace;
};

static struct uw_test *uw_setup(struct kunit *test, unsigned long flags)
{
	struct uw_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->base = kunit_vm_mmap(test, NULL, 0, UW_PAGES * PAGE_SIZE,
				PROT_READ | PROT_WRITE,
				MAP_ANONYMOUS | MAP_PRIVATE | flags, 0);
	KUNIT_ASSERT_NE_MSG(test, t->base, 0, "could not map user memory");
	KUNIT_ASSERT_TRUE(test, t->base < TASK_SIZE_MAX);
	t->trace.entries = t->entries;
	t->text = UW_TEXT;
	if (test->param_value && *(const bool *)test->param_value)
		t->text = t->base + 2 * PAGE_SIZE;
	return t;
}

/* The two places of a case's code (see RA()). */
static const bool uw_in_mapping[] = { false, true };

static void uw_in_mapping_desc(const bool *in, char *desc)
{
	strscpy(desc, *in ? "code in a mapping without a section" :
		"code unmapped", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(uw_text, uw_in_mapping, uw_in_mapping_desc);

/* Address @off bytes into the test's mapping. */
static unsigned long uw_addr(struct uw_test *t, unsigned long off)
{
	return t->base + off;
}

static void uw_put(struct kunit *test, unsigned long addr, unsigned long val,
		   unsigned int ws)
{
	u32 val32 = val;
	void *src = ws == 4 ? (void *)&val32 : (void *)&val;

	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)addr, src, ws), 0);
}

static void uw_put_bytes(struct kunit *test, unsigned long addr,
			 const u8 *bytes, size_t len)
{
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)addr, bytes, len), 0);
}

/* A standard frame at @fp: saved frame pointer @next, return address @ra. */
static void uw_frame(struct kunit *test, unsigned long fp, unsigned long next,
		     unsigned long ra, unsigned int ws)
{
	uw_put(test, fp, next, ws);
	uw_put(test, fp + ws, ra, ws);
}

static void uw_walk(struct kunit *test, struct uw_test *t, unsigned long ip,
		    unsigned long sp, unsigned long fp, unsigned int ws,
		    unsigned int max)
{
	struct unwind_user_state state = {
		.ip = ip, .sp = sp, .fp = fp, .ws = ws, .topmost = true,
	};

	memset(t->entries, 0, sizeof(t->entries));
	KUNIT_ASSERT_EQ(test, unwind_user_walk(&state, &t->trace, max), 0);
}

static void uw_expect(struct kunit *test, struct uw_test *t,
		      const unsigned long *want, unsigned int nr)
{
	unsigned int i;

	KUNIT_ASSERT_EQ(test, t->trace.nr, nr);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ_MSG(test, t->entries[i], want[i], "entry %u", i);
}

#define UW_EXPECT(test, t, ...)						\
	do {								\
		const unsigned long __want[] = { __VA_ARGS__ };		\
		uw_expect(test, t, __want, ARRAY_SIZE(__want));		\
	} while (0)

static void uw_normal_chain(struct kunit *test)
{
	struct uw_test *t = uw_setup(test, 0);
	unsigned long f0 = uw_addr(t, 0x100), f1 = uw_addr(t, 0x200);
	unsigned long f2 = uw_addr(t, 0x300);

	uw_frame(test, f0, f1, RA(1), 8);
	uw_frame(test, f1, f2, RA(2), 8);
	uw_frame(test, f2, 0, RA(3), 8);	/* outermost: FP = 0 */
	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 8, UW_MAX);
	UW_EXPECT(test, t, IP0, RA(1), RA(2), RA(3));
}

/*
 * A caller whose code lies elsewhere, then callers back in the first
 * place: the run of plain steps ends and starts again, losing nothing.
 */
static void uw_elsewhere_and_back(struct kunit *test)
{
	struct uw_test *t = uw_setup(test, 0);
	unsigned long f0 = uw_addr(t, 0x100), f1 = uw_addr(t, 0x200);
	unsigned long f2 = uw_addr(t, 0x300), f3 = uw_addr(t, 0x400);
	unsigned long away = UW_TEXT + 2 * PAGE_SIZE;

	uw_frame(test, f0, f1, RA(1), 8);
	uw_frame(test, f1, f2, away, 8);
	uw_frame(test, f2, f3, RA(3), 8);
	uw_frame(test, f3, 0, RA(4), 8);
	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 8, UW_MAX);
	UW_EXPECT(test, t, IP0, RA(1), away, RA(3), RA(4));
}

static void uw_zero_return_address(struct kunit *test)
{
	struct uw_test *t = uw_setup(test, 0);
	unsigned long f0 = uw_addr(t, 0x100), f1 = uw_addr(t, 0x200);
	unsigned long f2 = uw_addr(t, 0x300);

	uw_frame(test, f0, f1, RA(1), 8);
	uw_frame(test, f1, f2, 0, 8);
	uw_frame(test, f2, 0, RA(3), 8);
	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 8, UW_MAX);
	UW_EXPECT(test, t, IP0, RA(1));
}

static void uw_fp_zero_at_entry(struct kunit *test)
{
	struct uw_test *t = uw_setup(test, 0);

	uw_walk(test, t, IP0, uw_addr(t, 0), 0, 8, UW_MAX);
	UW_EXPECT(test, t, IP0);
}

/* A chain longer than the cap is cut at exactly the cap. */
static void uw_depth_cap(struct kunit *test)
{
	struct uw_test *t = uw_setup(test, 0);
	unsigned long want[16];
	int i;

	for (i = 1; i <= 40; i++)
		uw_frame(test, uw_addr(t, 0x40 * i),
			 i < 40 ? uw_addr(t, 0x40 * (i + 1)) : 0, RA(i), 8);

	uw_walk(test, t, IP0, uw_addr(t, 0), uw_addr(t, 0x40), 8, 16);
	want[0] = IP0;
	for (i = 1; i < 16; i++)
		want[i] = RA(i);
	uw_expect(test, t, want, 16);

	/* Uncapped, the whole chain comes back. */
	uw_walk(test, t, IP0, uw_addr(t, 0), uw_addr(t, 0x40), 8, UW_MAX);
	KUNIT_EXPECT_EQ(test, t->trace.nr, 41);
	KUNIT_EXPECT_EQ(test, t->entries[40], RA(40));
}

static void uw_max_entries_small(struct kunit *test)
{
	struct uw_test *t = uw_setup(test, 0);
	unsigned long f0 = uw_addr(t, 0x100);

	uw_frame(test, f0, 0, RA(1), 8);
	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 8, 1);
	UW_EXPECT(test, t, IP0);

	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 8, 0);
	KUNIT_EXPECT_EQ(test, t->trace.nr, 0);
	KUNIT_EXPECT_EQ(test, t->entries[0], 0);
}

static void uw_cyclic(struct kunit *test)
{
	struct uw_test *t = uw_setup(test, 0);
	unsigned long f0 = uw_addr(t, 0x100), f1 = uw_addr(t, 0x200);

	/* f0 -> f1 -> f0: the step back down ends the walk. */
	uw_frame(test, f0, f1, RA(1), 8);
	uw_frame(test, f1, f0, RA(2), 8);
	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 8, UW_MAX);
	UW_EXPECT(test, t, IP0, RA(1), RA(2));

	/* A frame pointing at itself. */
	uw_frame(test, f0, f0, RA(1), 8);
	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 8, UW_MAX);
	UW_EXPECT(test, t, IP0, RA(1));
}

static void uw_non_growing(struct kunit *test)
{
	struct uw_test *t = uw_setup(test, 0);
	unsigned long f0 = uw_addr(t, 0x100);

	/* The first frame lies below the stack pointer. */
	uw_frame(test, f0, 0, RA(1), 8);
	uw_walk(test, t, IP0, uw_addr(t, 0x800), f0, 8, UW_MAX);
	UW_EXPECT(test, t, IP0);

	/* The CFA equals the stack pointer: no progress. */
	uw_walk(test, t, IP0, f0 + 16, f0, 8, UW_MAX);
	UW_EXPECT(test, t, IP0);
}

static void uw_misaligned(struct kunit *test)
{
	struct uw_test *t = uw_setup(test, 0);
	unsigned long f0 = uw_addr(t, 0x100), bad = uw_addr(t, 0x203);
	unsigned long f1 = uw_addr(t, 0x180);

	/* A well-formed frame sits at the misaligned address. */
	uw_frame(test, f0, bad, RA(1), 8);
	uw_frame(test, bad, 0, RA(2), 8);
	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 8, UW_MAX);
	UW_EXPECT(test, t, IP0, RA(1));

	/* Misaligned from the start. */
	uw_walk(test, t, IP0, uw_addr(t, 0), bad, 8, UW_MAX);
	UW_EXPECT(test, t, IP0);

	/*
	 * Misaligned two frames up: with the code in a mapping, read by a
	 * run of plain steps that began with the frame below.
	 */
	uw_frame(test, f0, f1, RA(1), 8);
	uw_frame(test, f1, bad, RA(2), 8);
	uw_frame(test, bad, 0, RA(3), 8);
	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 8, UW_MAX);
	UW_EXPECT(test, t, IP0, RA(1), RA(2));
}

static unsigned long uw_kernel_frame[2];

static void uw_kernel_pointer(struct kunit *test)
{
	struct uw_test *t = uw_setup(test, 0);
	unsigned long f0 = uw_addr(t, 0x100);

	/* A valid-looking frame in kernel memory must never be read. */
	uw_kernel_frame[0] = 0;
	uw_kernel_frame[1] = RA(9);
	uw_frame(test, f0, (unsigned long)uw_kernel_frame, RA(1), 8);
	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 8, UW_MAX);
	UW_EXPECT(test, t, IP0, RA(1));

	/* A return address outside user space ends the chain, unrecorded. */
	uw_frame(test, f0, 0, (unsigned long)uw_kernel_frame, 8);
	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 8, UW_MAX);
	UW_EXPECT(test, t, IP0);
}

static void uw_unmapped(struct kunit *test)
{
	struct uw_test *t = uw_setup(test, 0);
	unsigned long f0 = uw_addr(t, 0x100), f1 = uw_addr(t, 0x200);
	unsigned long hole = uw_addr(t, 3 * PAGE_SIZE);

	uw_frame(test, f0, f1, RA(1), 8);
	uw_frame(test, f1, hole + 0x10, RA(2), 8);
	KUNIT_ASSERT_EQ(test, vm_munmap(hole, PAGE_SIZE), 0);
	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 8, UW_MAX);
	UW_EXPECT(test, t, IP0, RA(1), RA(2));
}

static struct uw_test *uw_setup_compat(struct kunit *test)
{
	struct uw_test *t = uw_setup(test, MAP_32BIT);

	KUNIT_ASSERT_LT(test, t->base + UW_PAGES * PAGE_SIZE, (1UL << 32));
	return t;
}

static void uw_compat_chain(struct kunit *test)
{
	struct uw_test *t = uw_setup_compat(test);
	unsigned long f0 = uw_addr(t, 0x100), f1 = uw_addr(t, 0x108);
	unsigned long f2 = uw_addr(t, 0x200);

	/* 4-byte words: f1 sits right above f0's 8-byte frame record. */
	uw_frame(test, f0, f1, RA(1), 4);
	uw_frame(test, f1, f2, RA(2), 4);
	uw_frame(test, f2, 0, RA(3), 4);
	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 4, UW_MAX);
	UW_EXPECT(test, t, IP0, RA(1), RA(2), RA(3));
}

static void uw_compat_bad(struct kunit *test)
{
	struct uw_test *t = uw_setup_compat(test);
	unsigned long f0 = uw_addr(t, 0x100), bad = uw_addr(t, 0x202);

	/* Aligned for 4-byte words is enough; 0x202 is not. */
	uw_frame(test, f0, bad, RA(1), 4);
	uw_frame(test, bad, 0, RA(2), 4);
	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 4, UW_MAX);
	UW_EXPECT(test, t, IP0, RA(1));

	/* A compat CFA past 4 GiB is outside the task's address space. */
	uw_frame(test, f0, 0xfffffff8UL, RA(1), 4);
	uw_walk(test, t, IP0, uw_addr(t, 0), f0, 4, UW_MAX);
	UW_EXPECT(test, t, IP0, RA(1));
}

/*
 * Topmost frame stopped at a function's entry: [sp] holds the return address
 * into the caller, and FP still is the caller's frame pointer.
 */
static void uw_entry_case(struct kunit *test, struct uw_test *t,
			  const u8 *code, size_t len, size_t ip_off,
			  unsigned int ws, bool pushed)
{
	unsigned long text = uw_addr(t, 2 * PAGE_SIZE);
	unsigned long sp = uw_addr(t, 0x100), f1 = uw_addr(t, 0x200);

	uw_put_bytes(test, text, code, len);
	uw_frame(test, f1, 0, RA(1), ws);
	if (pushed) {
		uw_put(test, sp, f1, ws);		/* push %rbp done */
		uw_put(test, sp + ws, RA(0), ws);
	} else {
		uw_put(test, sp, RA(0), ws);
	}
	uw_walk(test, t, text + ip_off, sp, f1, ws, UW_MAX);
	UW_EXPECT(test, t, text + ip_off, RA(0), RA(1));
}

static void uw_function_entry(struct kunit *test)
{
	static const u8 push[] = { 0x55, 0x48, 0x89, 0xe5 };
	static const u8 endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55 };
	static const u8 mov_alt[] = { 0x55, 0x48, 0x8b, 0xec };
	struct uw_test *t = uw_setup(test, 0);

	uw_entry_case(test, t, push, sizeof(push), 0, 8, false);
	uw_entry_case(test, t, endbr64, sizeof(endbr64), 0, 8, false);
	/* Between "push %rbp" and "mov %rsp,%rbp". */
	uw_entry_case(test, t, push, sizeof(push), 1, 8, true);
	uw_entry_case(test, t, mov_alt, sizeof(mov_alt), 1, 8, true);
}

static void uw_function_entry_compat(struct kunit *test)
{
	static const u8 push[] = { 0x55, 0x89, 0xe5 };
	static const u8 endbr32[] = { 0xf3, 0x0f, 0x1e, 0xfb, 0x55 };
	struct uw_test *t = uw_setup_compat(test);

	uw_entry_case(test, t, push, sizeof(push), 0, 4, false);
	uw_entry_case(test, t, endbr32, sizeof(endbr32), 0, 4, false);
	uw_entry_case(test, t, push, sizeof(push), 1, 4, true);
}

static void uw_not_function_entry(struct kunit *test)
{
	static const u8 body[] = { 0x90, 0x90, 0x90, 0x90 };
	static const u8 mov_no_push[] = { 0x90, 0x48, 0x89, 0xe5 };
	static const u8 endbr32[] = { 0xf3, 0x0f, 0x1e, 0xfb };
	struct uw_test *t = uw_setup(test, 0);
	unsigned long text = uw_addr(t, 2 * PAGE_SIZE);
	unsigned long sp = uw_addr(t, 0x100), f1 = uw_addr(t, 0x200);
	unsigned long f0 = uw_addr(t, 0x180);

	/* Mid-function: a plain frame-pointer step, [sp] is not looked at. */
	uw_put(test, sp, RA(0), 8);
	uw_frame(test, f1, 0, RA(1), 8);
	uw_put_bytes(test, text, body, sizeof(body));
	uw_walk(test, t, text, sp, f1, 8, UW_MAX);
	UW_EXPECT(test, t, text, RA(1));

	/* "mov %rsp,%rbp" without the push before it. */
	uw_put_bytes(test, text, mov_no_push, sizeof(mov_no_push));
	uw_walk(test, t, text + 1, sp, f1, 8, UW_MAX);
	UW_EXPECT(test, t, text + 1, RA(1));

	/* endbr32 in a 64-bit task. */
	uw_put_bytes(test, text, endbr32, sizeof(endbr32));
	uw_walk(test, t, text, sp, f1, 8, UW_MAX);
	UW_EXPECT(test, t, text, RA(1));

	/* Only the topmost frame may be at an entry: a caller never is. */
	uw_put_bytes(test, text, (const u8[]){ 0x55 }, 1);
	uw_frame(test, f0, f1, text, 8);
	uw_walk(test, t, IP0, sp, f0, 8, UW_MAX);
	UW_EXPECT(test, t, IP0, text, RA(1));
}

/*
 * Entered by a system call at a function's first instruction: only after
 * execve(), at the new program's entry point. The word at the stack
 * pointer is argc, not a return address, and the frame pointer is 0.
 */
static void uw_syscall_at_entry(struct kunit *test)
{
	static const u8 start[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x31, 0xed };
	struct uw_test *t = uw_setup(test, 0);
	unsigned long text = uw_addr(t, 2 * PAGE_SIZE);
	unsigned long sp = uw_addr(t, 0x100);
	struct unwind_user_state state = {
		.ip = text, .sp = sp, .fp = 0, .ws = 8, .topmost = true,
		.syscall = true,
	};

	uw_put_bytes(test, text, start, sizeof(start));
	uw_put(test, sp, 3, 8);				/* argc */
	KUNIT_ASSERT_EQ(test, unwind_user_walk(&state, &t->trace, UW_MAX), 0);
	UW_EXPECT(test, t, text);

	/* The same code stopped by an interrupt is a function's entry. */
	uw_put(test, sp, RA(0), 8);
	uw_walk(test, t, text, sp, 0, 8, UW_MAX);
	UW_EXPECT(test, t, text, RA(0));
}

/* The KUnit thread is a kernel thread: it has no user stack to walk. */
static void uw_kthread_refused(struct kunit *test)
{
	unsigned long entries[4] = { 0 };
	struct unwind_stacktrace trace = { .nr = 7, .entries = entries };

	KUNIT_EXPECT_EQ(test, unwind_user(&trace, ARRAY_SIZE(entries)), -EINVAL);
	KUNIT_EXPECT_EQ(test, trace.nr, 0);
	KUNIT_EXPECT_EQ(test, entries[0], 0);
}

static struct kunit_case unwind_user_cases[] = {
	KUNIT_CASE_PARAM(uw_normal_chain, uw_text_gen_params),
	KUNIT_CASE_PARAM(uw_elsewhere_and_back, uw_text_gen_params),
	KUNIT_CASE_PARAM(uw_zero_return_address, uw_text_gen_params),
	KUNIT_CASE(uw_fp_zero_at_entry),
	KUNIT_CASE_PARAM(uw_depth_cap, uw_text_gen_params),
	KUNIT_CASE_PARAM(uw_max_entries_small, uw_text_gen_params),
	KUNIT_CASE_PARAM(uw_cyclic, uw_text_gen_params),
	KUNIT_CASE_PARAM(uw_non_growing, uw_text_gen_params),
	KUNIT_CASE_PARAM(uw_misaligned, uw_text_gen_params),
	KUNIT_CASE_PARAM(uw_kernel_pointer, uw_text_gen_params),
	KUNIT_CASE_PARAM(uw_unmapped, uw_text_gen_params),
	KUNIT_CASE(uw_compat_chain),
	KUNIT_CASE(uw_compat_bad),
	KUNIT_CASE(uw_function_entry),
	KUNIT_CASE(uw_function_entry_compat),
	KUNIT_CASE(uw_not_function_entry),
	KUNIT_CASE(uw_syscall_at_entry),
	KUNIT_CASE(uw_kthread_refused),
	{}
};

static struct kunit_suite unwind_user_suite = {
	.name = "unwind_user",
	.test_cases = unwind_user_cases,
};

kunit_test_suite(unwind_user_suite);

MODULE_DESCRIPTION("KUnit tests for the user-space stack walker");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
