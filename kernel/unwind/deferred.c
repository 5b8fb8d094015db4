// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user-space stack unwinding.
 *
 * A tracer that wants the user stack of the current task, from any context
 * (NMI included), calls unwind_deferred_request(). That only records the
 * tracer's bit in the task's mask and, for the first request of the entry,
 * marks the task pending and sets TIF_NOTIFY_RESUME; it returns the cookie
 * of the current kernel entry at once. When the task is about to return to
 * user space, resume_user_mode_work() runs unwind_deferred_resume(), which
 * walks the user stack once, in task context where it may fault, and calls
 * back every tracer that asked during the entry, with the trace and the
 * same cookie. unwind_reset_info() ends the entry on the way out.
 *
 * A task has at most one deferred unwind pending, which the PENDING bit of
 * its mask says completely, so this needs no task_work: a request costs one
 * cmpxchg128 and one bit set, not a list insertion and a kick.
 *
 * Per-task state (struct unwind_task_info) is only ever changed by the task
 * itself (task context, its IRQs and NMIs, always on the task's CPU), and by
 * unwind_deferred_cancel() scrubbing a tracer's bit from every task. The mask
 * and the cookie form one 128-bit word updated with cmpxchg128, so they can
 * never be seen out of step, wherever an NMI lands.
 *
 * Registered works are on an RCU list. Callbacks run under SRCU so that they
 * may fault; requests run with preemption disabled so that synchronize_rcu()
 * waits for requests in flight. The walk itself runs outside SRCU, so that
 * unwind_deferred_cancel() never waits for a walk that user space can make
 * as slow as it likes.
 */

#include <linux/context_tracking_state.h>
#include <linux/irq_work.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/sysctl.h>
#include <linux/unwind_context.h>
#include <linux/unwind_deferred.h>
#include <linux/unwind_user.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <kunit/visibility.h>
#include <trace/events/unwind.h>

#include "deferred_test.h"

/* One page of cache per task that ever had its stack unwound. */
#define UNWIND_CACHE_SIZE	PAGE_SIZE
#define UNWIND_MAX_ENTRIES						\
	((UNWIND_CACHE_SIZE - sizeof(struct unwind_cache)) / sizeof(long))

/*
 * kernel.unwind_max_frames: how deep a deferred walk goes. A stack that
 * fits the cache page costs nothing more; a deeper one is walked into a
 * buffer of the bound's size plus one entry (to tell a stack of exactly
 * the bound from a deeper one), taken then and kept until the task exits
 * or execs. The limits are one less than powers of two, so that the buffer
 * is one: 32 KiB at the default, 256 KiB at the upper limit.
 */
#define UNWIND_MIN_FRAMES	16U
#define UNWIND_MAX_FRAMES	32767U
static unsigned int unwind_max_frames = 4095;
static unsigned int unwind_min_frames_limit = UNWIND_MIN_FRAMES;
static unsigned int unwind_max_frames_limit = UNWIND_MAX_FRAMES;

#define UNWIND_WORK_MASK	GENMASK(BITS_PER_LONG - 1, UNWIND_FIRST_WORK_BIT)

/* Protects unwind_works updates, unwind_bits_used and unwind_nr_works. */
static DEFINE_MUTEX(unwind_mutex);
static LIST_HEAD(unwind_works);
static unsigned long unwind_bits_used = UNWIND_PENDING | UNWIND_USED;
static unsigned int unwind_nr_works;
DEFINE_STATIC_SRCU(unwind_srcu);

/*
 * On while at least one work is registered: only then can a task have state
 * for unwind_reset_info() to end, so that while no tracer uses deferral the
 * exit to user space does not even look at it. Turned on before a work's bit
 * is published and off only after the last bit was released (see
 * unwind_deferred_retire()).
 */
DEFINE_STATIC_KEY_FALSE(unwind_deferred_enabled);

static DEFINE_PER_CPU(u32, unwind_cookie_ctr);

/*
 * A cookie from a per-CPU counter value @ctr and a CPU number: the CPU
 * number + 1 in the low 32 bits, the counter with its lowest bit set in
 * bits 32-62. It is never 0, and no two cookies are the same until one
 * CPU wraps its counter (2^30 kernel entries that asked for an unwind).
 * Bit 63 stays clear, so that the cookie is positive as an s64:
 * bpf_unwind_user_request() returns it or a negative errno in one value,
 * and a program that tests for "< 0" never takes a cookie for an error.
 */
VISIBLE_IF_KUNIT u64 unwind_cookie_make(u32 ctr, unsigned int cpu)
{
	u32 high = (ctr & S32_MAX) | 1;

	return ((u64)high << 32) | (u32)(cpu + 1);
}
EXPORT_SYMBOL_IF_KUNIT(unwind_cookie_make);

/*
 * A fresh cookie. this_cpu_add_return() is a single instruction on x86,
 * safe against NMIs on the same CPU.
 *
 * Context: preemption disabled.
 */
VISIBLE_IF_KUNIT u64 unwind_new_cookie(void)
{
	return unwind_cookie_make(this_cpu_add_return(unwind_cookie_ctr, 2),
				  smp_processor_id());
}
EXPORT_SYMBOL_IF_KUNIT(unwind_new_cookie);

/* Load the mask and cookie as one: a failed cmpxchg128 is an atomic load. */
static union unwind_task_state unwind_state_read(struct unwind_task_info *info)
{
	union unwind_task_state s = { .full = 0 };

	try_cmpxchg128(&info->state.full, &s.full, s.full);
	return s;
}

/*
 * Record a request of the tracer owning @bit and hand out the entry's cookie.
 * Returns 1 if the tracer already asked during this entry, 0 if its bit was
 * newly set, and 2 if the caller must also mark the task for the exit work
 * (it was not
 * pending).
 *
 * Context: any, including NMI, on the task owning @info; preemption disabled.
 */
static __always_inline int __unwind_state_request(struct unwind_task_info *info,
						  int bit, u64 *cookie)
{
	union unwind_task_state old, new;

	/*
	 * A torn guess is harmless: the cmpxchg128 below validates it, and the
	 * early return needs only a mask that has our bit, whose cookie cannot
	 * change until the task returns to user space.
	 */
	old.mask = READ_ONCE(info->state.mask);
	old.cookie = READ_ONCE(info->state.cookie);
	do {
		if (old.mask & BIT(bit)) {
			*cookie = old.cookie;
			return 1;
		}
		new.mask = old.mask | BIT(bit) | UNWIND_USED | UNWIND_PENDING;
		new.cookie = old.cookie ?: unwind_new_cookie();
	} while (!try_cmpxchg128(&info->state.full, &old.full, new.full));

	*cookie = new.cookie;
	return old.mask & UNWIND_PENDING ? 0 : 2;
}

VISIBLE_IF_KUNIT int unwind_state_request(struct unwind_task_info *info,
					  int bit, u64 *cookie)
{
	return __unwind_state_request(info, bit, cookie);
}
EXPORT_SYMBOL_IF_KUNIT(unwind_state_request);

/*
 * Clear the pending bit and return the state as it was. A request made after
 * this marks the task pending again.
 *
 * Context: task context of the task owning @info.
 */
VISIBLE_IF_KUNIT union unwind_task_state
unwind_state_take_pending(struct unwind_task_info *info)
{
	union unwind_task_state old = unwind_state_read(info), new;

	do {
		new = old;
		new.mask &= ~UNWIND_PENDING;
	} while (!try_cmpxchg128(&info->state.full, &old.full, new.full));
	return old;
}
EXPORT_SYMBOL_IF_KUNIT(unwind_state_take_pending);

/*
 * End the entry: clear mask, cookie and completed bits. If a request (from an
 * NMI that hit after the deferred run) is still pending, keep everything:
 * the run happens on the next return to user space, with the same cookie
 * and the trace cached for it (or, if no walk happened yet, the stack as it
 * is then). Returns true if reset; the cached trace is then dropped too.
 *
 * Context: the task owning @info, interrupts disabled. Neither traced nor
 * probed: see __unwind_reset_info().
 */
VISIBLE_IF_KUNIT notrace bool unwind_state_reset(struct unwind_task_info *info)
{
	union unwind_task_state old = unwind_state_read(info), new = { .full = 0 };

	do {
		if (old.mask & UNWIND_PENDING)
			return false;
	} while (!try_cmpxchg128(&info->state.full, &old.full, new.full));
	atomic_long_set(&info->completed, 0);
	/* A later entry whose cookie repeats (a wrapped counter) walks anew. */
	if (info->cache)
		info->cache->cookie = 0;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(unwind_state_reset);
NOKPROBE_SYMBOL(unwind_state_reset);

/* Task context: the entry's cookie, handing one out if there is none yet. */
static u64 unwind_get_cookie(struct unwind_task_info *info)
{
	union unwind_task_state old = unwind_state_read(info), new;

	guard(preempt)();
	do {
		if (old.cookie)
			return old.cookie;
		new.mask = old.mask | UNWIND_USED;
		new.cookie = unwind_new_cookie();
	} while (!try_cmpxchg128(&info->state.full, &old.full, new.full));
	return new.cookie;
}

static bool unwind_task_refused(struct task_struct *task)
{
	return (task->flags & (PF_KTHREAD | PF_USER_WORKER)) || !task->mm;
}

/*
 * Walk into @walk, at most @max entries, from the user state the task
 * entered the kernel with: with @from_regs the one kept before a signal
 * frame or a restart changed the registers (see unwind_deferred_signal()),
 * else the registers, which nothing changed yet.
 */
static void unwind_walk_entry(struct unwind_task_info *info, bool from_regs,
			      struct unwind_stacktrace *walk, unsigned int max)
{
	walk->nr = 0;
	walk->truncated = false;
	if (from_regs)
		unwind_user_from(&info->regs, walk, max);
	else
		unwind_user(walk, max);
}

/* Free @cache's buffer for deep stacks; in any context. */
static void unwind_free_deep(struct unwind_cache *cache)
{
	void *deep = cache->deep;

	cache->deep = NULL;
	cache->deep_cap = 0;
	cache->in_deep = false;
	/* free_task() may run where vfree() may not sleep. */
	if (is_vmalloc_addr(deep))
		vfree_atomic(deep);
	else
		kfree(deep);
}

/*
 * The stack filled the cache page, the bound is larger, and the task has
 * no buffer of @max entries (one that has walks into it at once, see
 * unwind_walk_cached()): take one now, freeing a smaller one, and walk
 * the stack again, whole, into it. The walker keeps no state to go on from
 * where the page ended. Returns false if the buffer could not be had: the
 * page's walk then stands, cut. __GFP_RETRY_MAYFAIL: a profiler's wish for
 * depth is no reason to call the OOM killer.
 */
static bool unwind_walk_deep(struct unwind_task_info *info, bool from_regs,
			     struct unwind_cache *cache,
			     struct unwind_stacktrace *walk, unsigned int max)
{
	unsigned long *deep;

	unwind_free_deep(cache);
	deep = kvmalloc_array(max, sizeof(*deep),
			      GFP_KERNEL_ACCOUNT | __GFP_NOWARN |
			      __GFP_RETRY_MAYFAIL);
	if (!deep)
		return false;
	cache->deep = deep;
	cache->deep_cap = max;
	walk->entries = deep;
	unwind_walk_entry(info, from_regs, walk, max);
	return true;
}

/*
 * Walk the current task's user stack into its cache for the entry with
 * @cookie, unless the cache already holds that entry's trace. At most
 * kernel.unwind_max_frames entries; the walk goes one further to know
 * whether it stopped at the bound with frames left (@truncated).
 */
static int unwind_walk_cached(struct unwind_task_info *info, u64 cookie,
			      struct unwind_stacktrace *trace)
{
	struct unwind_cache *cache = info->cache;

	if (!cache) {
		cache = kzalloc(UNWIND_CACHE_SIZE, GFP_KERNEL_ACCOUNT);
		if (!cache)
			return -ENOMEM;
		info->cache = cache;
	}

	/* 0 is never an entry's cookie: walk rather than trust the cache. */
	if (!cookie || cache->cookie != cookie) {
		bool from_regs = READ_ONCE(info->state.mask) & UNWIND_REGS;
		unsigned int bound = READ_ONCE(unwind_max_frames);
		unsigned int max = min_t(unsigned int, bound + 1,
					 UNWIND_MAX_ENTRIES);
		struct unwind_stacktrace walk = { .entries = cache->entries };
		bool cut = false;

		cache->in_deep = bound + 1 > max && cache->deep_cap >= bound + 1;
		if (cache->in_deep) {
			/* Deep before: into the buffer at once. */
			walk.entries = cache->deep;
			unwind_walk_entry(info, from_regs, &walk, bound + 1);
		} else {
			unwind_walk_entry(info, from_regs, &walk, max);
			if (walk.nr == UNWIND_MAX_ENTRIES && bound + 1 > max) {
				cache->in_deep = unwind_walk_deep(info, from_regs,
								  cache, &walk,
								  bound + 1);
				cut = !cache->in_deep;
			}
		}
		/* Also cut by the walker's own budget of section reads. */
		cut |= walk.truncated;
		if (walk.nr > bound) {
			walk.nr = bound;
			cut = true;
		}
		cache->nr_entries = walk.nr;
		cache->truncated = cut;
		cache->cookie = cookie;
#ifdef CONFIG_UNWIND_DEFERRED_WALK_COUNT
		info->nr_walks++;
#endif
	}

	trace->nr = cache->nr_entries;
	trace->truncated = cache->truncated;
	trace->entries = cache->in_deep ? cache->deep : cache->entries;
	return 0;
}

/**
 * unwind_user_faultable - walk the current task's user stack, once per entry
 * @trace: set to the trace; its entries belong to the task's cache and are
 *	   valid until the task returns to user space
 *
 * The first call during a kernel entry walks the user stack into the task's
 * cache (allocated on first use); later calls during the same entry return
 * the cached trace without walking again.
 *
 * Context: task context, page faults allowed; may sleep. The caller must
 * hold a registered unwind_work until the task returned to user space: the
 * entry this gives a cookie to is ended there only while one is registered.
 * Return: 0, even if the walk found no frame; -EINVAL for kernel threads,
 * user workers and tasks without an mm; -ENOMEM if the cache could not be
 * allocated; -EOPNOTSUPP if the CPU lacks cmpxchg16b.
 */
int unwind_user_faultable(struct unwind_stacktrace *trace)
{
	struct unwind_task_info *info = &current->unwind_info;

	might_fault();

	trace->nr = 0;
	trace->truncated = false;
	trace->entries = NULL;
	if (unwind_task_refused(current))
		return -EINVAL;
	if (!system_has_cmpxchg128())
		return -EOPNOTSUPP;

	return unwind_walk_cached(info, unwind_get_cookie(info), trace);
}
EXPORT_SYMBOL_IF_KUNIT(unwind_user_faultable);

#ifdef CONFIG_UNWIND_TEST_CLIENT
/*
 * Set by the test client (lib/tests/unwind_deferred_test.c) to stop a task
 * between its walk and its callbacks, so that a test can cancel a tracer and
 * hand its bit to another one in that window. Test kernels only.
 */
void (*unwind_deferred_test_hook)(void);

static void unwind_deferred_test_point(void)
{
	typeof(unwind_deferred_test_hook) hook = READ_ONCE(unwind_deferred_test_hook);

	if (hook)
		hook();
}
#else
static inline void unwind_deferred_test_point(void) { }
#endif

/*
 * The deferred work of the current task: walk once, then call back each
 * tracer that asked during this entry and was not called back yet.
 */
static void unwind_deferred_run(struct unwind_task_info *info)
{
	union unwind_task_state state, live;
	struct unwind_stacktrace trace;
	struct unwind_work *work;
	unsigned long todo;
	int idx;

	state = unwind_state_take_pending(info);
	if (!(state.mask & UNWIND_PENDING))
		return;
	/* Only to skip a useless walk: what to call is decided below. */
	if (!(state.mask & UNWIND_WORK_MASK & ~atomic_long_read(&info->completed)))
		return;

	/*
	 * The walk may fault and sleep for as long as user space likes (a
	 * userfaultfd or FUSE page), so it runs outside the SRCU section:
	 * unwind_deferred_cancel() never waits for it. A failed walk still
	 * calls back, with an empty trace. It uses the cookie of the state
	 * taken, not unwind_get_cookie(): once the last tracer is gone,
	 * unwind_deferred_disable() ends every entry, and a walk that began
	 * before must not start a new one behind it.
	 */
	trace.nr = 0;
	trace.truncated = false;
	trace.entries = NULL;
	if (!unwind_task_refused(current)) {
		unwind_walk_cached(info, state.cookie, &trace);
		/*
		 * The thread's context record, for the same entry and before
		 * the stack goes out, so that a tool has it when the stack
		 * arrives. Nothing but the static key while nobody traces it.
		 */
		if (trace_unwind_user_context_enabled())
			__unwind_context_emit(info, state.cookie);
	}
	unwind_deferred_test_point();

	idx = srcu_read_lock(&unwind_srcu);
	/*
	 * Whom to call comes from the live state, read inside the SRCU
	 * section, not from the state taken before the walk: a tracer may
	 * have been cancelled meanwhile and its bit handed to a new tracer,
	 * which must not get a callback for an entry in which it never asked.
	 * Cancel scrubs the bit before it waits for SRCU, and releases it only
	 * after, so a bit seen here belongs to the work found on the list. If
	 * the last tracer went away during the walk, unwind_deferred_disable()
	 * ended the entry, and a request made since (from an interrupt) began
	 * a new one with a new cookie: call nobody with the dead entry's
	 * cookie; that request's own run follows, as it set PENDING.
	 */
	live = unwind_state_read(info);
	todo = live.cookie == state.cookie ? live.mask & UNWIND_WORK_MASK : 0;
	list_for_each_entry_srcu(work, &unwind_works, list,
				 srcu_read_lock_held(&unwind_srcu)) {
		int nr = READ_ONCE(work->bit);
		unsigned long bit;

		if (nr < UNWIND_FIRST_WORK_BIT)
			continue;
		bit = BIT(nr);
		if (!(todo & bit))
			continue;
		/* Exactly one callback per tracer per entry. */
		if (atomic_long_fetch_or(bit, &info->completed) & bit)
			continue;
		work->func(work, &trace, state.cookie);
	}
	srcu_read_unlock(&unwind_srcu, idx);
}

/**
 * __unwind_deferred_resume - run the current task's pending deferred unwind
 *
 * Called through unwind_deferred_resume() from resume_user_mode_work(),
 * which the exit to user space runs when TIF_NOTIFY_RESUME is set, after
 * clearing the flag and a full barrier: a request that sets PENDING after
 * the check sets the flag again, and the exit loop comes back.
 *
 * Context: task context of a user task returning to user space, interrupts
 * enabled; may fault and sleep.
 */
void __unwind_deferred_resume(void)
{
	unwind_deferred_run(&current->unwind_info);
}

/**
 * __unwind_deferred_signal - keep the entry's user state before signal work
 * @regs: the current task's user registers
 *
 * See unwind_deferred_signal(). Only the first call of an entry keeps
 * anything: the exit loop may deliver several signals, and each one moves
 * @regs further from the state at entry. The state stays kept until the
 * entry ends, so that requests made later in the same exit (from signal
 * delivery, a ptrace stop, or the last steps before user space) get the
 * interrupted stack too. A request from an NMI that lands in the middle
 * keeps the same values from the same registers.
 *
 * Context: task context of the task owning @regs, interrupts enabled.
 */
void __unwind_deferred_signal(struct pt_regs *regs)
{
	struct unwind_task_info *info = &current->unwind_info;
	union unwind_task_state old, new;

	if (READ_ONCE(info->state.mask) & UNWIND_REGS)
		return;
	/* unwind_user_start() refuses the tasks unwind_task_refused() does. */
	if (!system_has_cmpxchg128() || unwind_user_start(&info->regs, regs))
		return;

	/*
	 * Publish the kept state with the entry's mask: every end of the
	 * entry clears the bit with the rest, so a later entry never starts
	 * from this one's registers.
	 */
	old = unwind_state_read(info);
	do {
		new = old;
		new.mask |= UNWIND_REGS | UNWIND_USED;
	} while (!try_cmpxchg128(&info->state.full, &old.full, new.full));
}

/*
 * A request from an NMI that hit user mode, or from the kernel with
 * interrupts off on the way out (a tracepoint or kprobe after the exit loop
 * looked at the flags for the last time, such as
 * x86_fpu:x86_fpu_regs_activated), would leave TIF_NOTIFY_RESUME unseen
 * until some later exit: the entry would not end, and the next entry would
 * reuse its cookie and give it the next entry's stack. A self-interrupt
 * makes the task go through the exit-to-user work right after the NMI, or
 * as soon as it enables interrupts, which on the way out is on its return
 * to user space, before it runs user code: the flag is already set, so the
 * interrupt itself has nothing to do. Such a task-context request is
 * found still pending by the reset, which raises the interrupt then, so
 * that requests made with interrupts off before the exit loop (from
 * sched_switch, for every context switch) raise none.
 */
static void unwind_nmi_kick(struct irq_work *work)
{
}

static DEFINE_PER_CPU(struct irq_work, unwind_nmi_work) =
	IRQ_WORK_INIT_HARD(unwind_nmi_kick);

/* unwind_deferred_request() when @work did not ask during this entry yet. */
static noinline int unwind_deferred_request_slow(struct unwind_work *work,
						 u64 *cookie)
{
	struct unwind_task_info *info = &current->unwind_info;
	int bit, ret;

	*cookie = 0;
	/* unwind_task_refused(), with PF_EXITING in the same test. */
	if ((current->flags & (PF_KTHREAD | PF_USER_WORKER | PF_EXITING)) ||
	    !current->mm)
		return -EINVAL;
	if (!system_has_cmpxchg128())
		return -EOPNOTSUPP;

	/* Also an RCU read-side section, for unwind_deferred_cancel(). */
	preempt_disable_notrace();

	/*
	 * Also refuses a work that was never initialised (all zero). Pairs
	 * with unwind_deferred_init(): a bit seen here is on the list already.
	 */
	bit = smp_load_acquire(&work->bit);
	if (bit < UNWIND_FIRST_WORK_BIT) {
		ret = -EINVAL;
		goto out;
	}

	ret = __unwind_state_request(info, bit, cookie);
	if (ret == 2) {
		/* The first request of the entry: have the exit run the walk. */
		set_thread_flag(TIF_NOTIFY_RESUME);
		/*
		 * An NMI may have hit user mode, or the exit after the reset.
		 * Hard and soft IRQs return through an exit that sees the
		 * flag. In task context, a request before the exit loop's
		 * last look at the flags (sched_switch, sched_waking) is seen
		 * by it, and one after it by __unwind_reset_info(), which
		 * kicks: no interrupt per context switch. Only the user_enter
		 * tracepoint of a nohz_full CPU comes after the reset.
		 */
		if (in_nmi() ||
		    (context_tracking_enabled_this_cpu() && in_task() &&
		     irqs_disabled()))
			irq_work_queue(this_cpu_ptr(&unwind_nmi_work));
		ret = 0;
	}
out:
	preempt_enable_notrace();
	return ret;
}

/**
 * unwind_deferred_request - ask for the current task's user stack
 * @work: the tracer's work, registered with unwind_deferred_init()
 * @cookie: set to the current kernel entry's cookie on success, else 0
 *
 * Record that @work wants the user stack of the current kernel entry. The
 * walk happens later, when the task returns to user space, and @work's
 * callback then gets the trace with the same cookie. Every request during one
 * entry gets the same cookie, and @work is called back exactly once for the
 * entry however often it asked.
 *
 * Context: any (task, softirq, hard IRQ, NMI), for the current task while it
 * runs in the kernel on behalf of user space. Never sleeps or faults.
 * Return: 0 when the request was queued; 1 when @work already asked during
 * this entry (its callback is pending or was made); -EINVAL for kernel
 * threads, user workers, exiting tasks, tasks without an mm, and a @work that
 * is not registered; -EOPNOTSUPP if the CPU lacks cmpxchg16b.
 */
int unwind_deferred_request(struct unwind_work *work, u64 *cookie)
{
	struct unwind_task_info *info = &current->unwind_info;
	int bit;
	u64 c;

	/*
	 * Already asked during this entry: two loads and a test, with no
	 * atomic operation. The cookie is read first. While the entry lasts
	 * only the task itself changes it, and an interrupt that does so (a
	 * first request from an IRQ or NMI between the two loads) finds it 0
	 * here, which takes the slow path. If the mask read next still has the
	 * bit, no cancel has scrubbed it yet, so no end of all entries by
	 * unwind_deferred_retire() (which scrubs every bit first, pairing with
	 * the smp_rmb()) has cleared the cookie read either. The checks of the
	 * slow path passed when the bit was set in this entry.
	 */
	bit = READ_ONCE(work->bit);
	c = READ_ONCE(info->state.cookie);
	/* Cookie before mask; pairs with the cmpxchg128s of cancel. */
	smp_rmb();
	if (likely(bit >= UNWIND_FIRST_WORK_BIT && c &&
		   (READ_ONCE(info->state.mask) & BIT(bit)))) {
		*cookie = c;
		return 1;
	}

	return unwind_deferred_request_slow(work, cookie);
}
EXPORT_SYMBOL_GPL(unwind_deferred_request);

/**
 * unwind_deferred_flush - deliver the pending callbacks and end the entry
 *
 * Called from do_exit() and from execve() before its point of no return,
 * while the task's mm still exists, so that a request made during the entry
 * is not lost with the task or the old program: the callbacks run here, with
 * the stack of the user program that made the request. Then the entry ends
 * as on a return to user space (mask, cookie, completed tracers and cached
 * trace), so that execve() is a hard boundary: a request made later in
 * execve() gets a new cookie and, on the return to user space, the new
 * program's stack. The thread's context registration ends here too.
 *
 * Context: task context, may sleep.
 */
void unwind_deferred_flush(void)
{
	struct unwind_task_info *info = &current->unwind_info;
	bool done;

	/*
	 * An IRQ or NMI may request again while the callbacks run; each such
	 * round calls at least one more tracer, so this ends. The run takes
	 * PENDING itself, so a TIF_NOTIFY_RESUME left set finds nothing to do.
	 */
	if (READ_ONCE(info->state.mask)) {
		do {
			if (READ_ONCE(info->state.mask) & UNWIND_PENDING)
				unwind_deferred_run(info);
			scoped_guard(irqsave)
				done = unwind_state_reset(info);
		} while (!done);
	}

	/*
	 * The registered context pointer is an address in the old program:
	 * it has been read for the old program's last entry, and the new
	 * program registers its own.
	 */
	info->ctx_slot = 0;

	/* The entry is over: a deep stack's buffer goes with the program. */
	if (info->cache && info->cache->deep)
		unwind_free_deep(info->cache);
}

/*
 * See unwind_reset_info(). Still pending here means that a tracer asked
 * after the exit loop read the work flags for the last time (from
 * x86_fpu_regs_activated or irq_enable, say): kick, as for an NMI.
 *
 * Not traceable and not probeable, and neither is unwind_state_reset():
 * a request only task context reaches after the reset (a kretprobe, a BPF
 * fexit program calling the kfunc, perf probe's %return) would get a new
 * cookie and raise no interrupt, so that the task returned to user space
 * with its entry open: its next entry would reuse that cookie and the
 * request would get that entry's stack. The reset is the last code of the
 * exit that may request; only a nohz_full CPU's user_enter comes after it,
 * and unwind_deferred_request() kicks for that.
 */
notrace void __unwind_reset_info(void)
{
	if (!unwind_state_reset(&current->unwind_info))
		irq_work_queue(this_cpu_ptr(&unwind_nmi_work));
}

NOKPROBE_SYMBOL(__unwind_reset_info);

/**
 * unwind_deferred_init - register a tracer for deferred unwinding
 * @work: the tracer's work, zero-initialised or cancelled, owned by the
 *	  caller until it is cancelled
 * @func: the callback, see unwind_callback_t
 *
 * Context: task context, may sleep.
 * Return: 0; -EBUSY when all UNWIND_MAX_WORKS bits are taken; -EINVAL when
 * @work is registered already.
 */
int unwind_deferred_init(struct unwind_work *work, unwind_callback_t func)
{
	struct unwind_work *w;
	int bit;

	guard(mutex)(&unwind_mutex);

	list_for_each_entry(w, &unwind_works, list)
		if (w == work)
			return -EINVAL;
	bit = find_next_zero_bit(&unwind_bits_used, BITS_PER_LONG,
				 UNWIND_FIRST_WORK_BIT);
	if (bit >= BITS_PER_LONG) {
		work->bit = -1;
		return -EBUSY;
	}
	__set_bit(bit, &unwind_bits_used);
	/* Before any request can set state that the exit must end. */
	if (!unwind_nr_works++)
		static_branch_enable(&unwind_deferred_enabled);
	work->func = func;
	list_add_rcu(&work->list, &unwind_works);
	/*
	 * Publish the bit last: a request that sees it may set it in a task's
	 * mask, and the deferred run must then find @work on the list.
	 */
	smp_store_release(&work->bit, bit);
	return 0;
}
EXPORT_SYMBOL_GPL(unwind_deferred_init);

/* Remove @bit from @task's mask and completed bits. */
static void unwind_task_scrub(struct task_struct *task, unsigned long bit)
{
	struct unwind_task_info *info = &task->unwind_info;
	union unwind_task_state old, new;

	/*
	 * Most tasks never had the bit: a plain load spares them a locked
	 * cmpxchg16b. No request can set the bit any more (see
	 * unwind_deferred_retire()), so a clear bit stays clear.
	 */
	if (atomic_long_read(&info->completed) & bit)
		atomic_long_andnot(bit, &info->completed);
	if (!(READ_ONCE(info->state.mask) & bit))
		return;
	old = unwind_state_read(info);
	do {
		if (!(old.mask & bit))
			break;
		new = old;
		new.mask &= ~bit;
	} while (!try_cmpxchg128(&info->state.full, &old.full, new.full));
}

/*
 * Take @work off the list and stop its requests. Returns its bit, or 0 if it
 * was not registered (never initialised, registration failed, or cancelled).
 */
static unsigned long unwind_deferred_unlink(struct unwind_work *work)
{
	unsigned long bit;

	guard(mutex)(&unwind_mutex);

	if (work->bit < UNWIND_FIRST_WORK_BIT)
		return 0;
	bit = BIT(work->bit);
	WRITE_ONCE(work->bit, -1);
	list_del_rcu(&work->list);
	return bit;
}

/* End @task's entry, pending or not: no tracer is left to call. */
static void unwind_task_end_entry(struct task_struct *task)
{
	struct unwind_task_info *info = &task->unwind_info;
	union unwind_task_state old, new = { .full = 0 };

	if (!READ_ONCE(info->state.mask) && !READ_ONCE(info->state.cookie))
		return;
	old = unwind_state_read(info);
	while (!try_cmpxchg128(&info->state.full, &old.full, new.full))
		;
}

/*
 * The last work is gone: turn unwind_reset_info() off. Tasks that requested
 * during an entry that has not ended yet would keep their mask and cookie
 * past their return to user space, and hand the old cookie (and cached
 * trace) to a request of a later entry once a tracer registers again. So
 * end every entry here, after the key is off (static_branch_disable()
 * returns once no CPU runs the old code, and exits run with interrupts
 * off). Nothing can set state again before the next registration: there is
 * no work to request with, deferred runs use the cookie they took, and
 * unwind_user_faultable() needs a registered work. A TIF_NOTIFY_RESUME
 * left set then finds nothing pending. A cached trace keeps its cookie: a
 * later entry of the task draws the same cookie only if a CPU's counter
 * wrapped (2^30 entries) onto it, and would then take this trace for its
 * own. Clearing it here would race with the task's own deferred run, which
 * writes it, for odds that small; the task's next reset clears it.
 *
 * Context: unwind_mutex held, so no registration runs concurrently.
 */
static void unwind_deferred_disable(void)
{
	struct task_struct *g, *t;

	lockdep_assert_held(&unwind_mutex);
	static_branch_disable(&unwind_deferred_enabled);

	rcu_read_lock();
	for_each_process_thread(g, t)
		unwind_task_end_entry(t);
	rcu_read_unlock();
}

/*
 * Make @bit of an unlinked work free for another tracer. The order matters
 * (contract: a new tracer never gets a callback for an entry in which it did
 * not ask):
 *  1. wait for RCU: requests that read the old bit have finished, and no
 *     request can set it in any task again;
 *  2. scrub it from every task's mask and completed bits;
 *  3. wait for SRCU: a deferred run that read a mask with the bit before the
 *     scrub has finished its callbacks; one that starts later cannot see it;
 *  4. clear the bit from every task's completed bits again: such a run may
 *     have set it after the scrub, and a stale completed bit would make the
 *     next owner of the bit miss its callback in that entry;
 *  5. only then release the bit, and if it was the last one, end every
 *     entry (see unwind_deferred_disable()).
 * Nothing here waits for a user stack walk: walks run outside SRCU.
 */
static void unwind_deferred_retire(unsigned long bit)
{
	struct task_struct *g, *t;

	synchronize_rcu();

	rcu_read_lock();
	for_each_process_thread(g, t)
		unwind_task_scrub(t, bit);
	rcu_read_unlock();

	synchronize_srcu(&unwind_srcu);

	rcu_read_lock();
	for_each_process_thread(g, t)
		if (atomic_long_read(&t->unwind_info.completed) & bit)
			atomic_long_andnot(bit, &t->unwind_info.completed);
	rcu_read_unlock();

	guard(mutex)(&unwind_mutex);
	unwind_bits_used &= ~bit;
	if (!--unwind_nr_works)
		unwind_deferred_disable();
}

/**
 * unwind_deferred_cancel - unregister a tracer
 * @work: a work registered with unwind_deferred_init(), or one whose
 *	  registration failed (then this does nothing)
 *
 * When this returns, no callback of @work runs or will run, further
 * requests with @work fail with -EINVAL, and its bit has been removed from
 * every task, so that the next tracer to get the bit cannot receive a
 * callback meant for @work. Callers serialise their own register and cancel
 * calls for one @work. A callback must not call it.
 *
 * Context: task context, may sleep: waits for RCU and SRCU grace periods,
 * that is for callbacks that are running, never for a stack walk. Do not
 * call it with a lock held that a callback may take.
 */
void unwind_deferred_cancel(struct unwind_work *work)
{
	unsigned long bit = unwind_deferred_unlink(work);

	if (bit)
		unwind_deferred_retire(bit);
}
EXPORT_SYMBOL_GPL(unwind_deferred_cancel);

static void unwind_deferred_cancel_fn(struct work_struct *w)
{
	struct unwind_work *work = container_of(w, struct unwind_work,
						cancel_work);

	unwind_deferred_retire(work->cancel_bit);
	work->release(work);
}

/**
 * unwind_deferred_cancel_async - unregister a tracer without waiting
 * @work: a work registered with unwind_deferred_init()
 * @release: called from a workqueue once no callback of @work runs or will
 *	     run; it may free @work
 *
 * Like unwind_deferred_cancel(), but returns at once: further requests with
 * @work fail with -EINVAL from now on, while callbacks already running may
 * still complete until @release is called. For callers that hold locks
 * which must never wait for a callback (tracing mutexes). @work must not be
 * registered again before @release ran.
 *
 * Context: task context; does not sleep except on the registration mutex.
 * Return: true if @release will be called, false if @work was not
 * registered (then @release is not called).
 */
bool unwind_deferred_cancel_async(struct unwind_work *work,
				  void (*release)(struct unwind_work *work))
{
	unsigned long bit = unwind_deferred_unlink(work);

	if (!bit)
		return false;
	work->cancel_bit = bit;
	work->release = release;
	INIT_WORK(&work->cancel_work, unwind_deferred_cancel_fn);
	queue_work(system_unbound_wq, &work->cancel_work);
	return true;
}
EXPORT_SYMBOL_GPL(unwind_deferred_cancel_async);

/**
 * unwind_task_init - reset the deferred unwind state of a new task
 * @task: the new task; its task_struct was copied from the parent's
 * @clone_flags: the flags it is created with
 *
 * A child inherits no request, cookie or cache from its parent. A forked
 * process keeps the parent thread's context registration: the address is
 * the same in its copy of the memory. A new thread, or a child with TLS of
 * its own, starts without one: the address is another thread's variable.
 * So does a child that shares the memory (CLONE_VM) and runs beside its
 * parent: both would read one record, which only its owner may rewrite. A
 * vfork() child keeps it: its parent waits until it execs or exits.
 */
void unwind_task_init(struct task_struct *task, u64 clone_flags)
{
	struct unwind_task_info *info = &task->unwind_info;
	unsigned long ctx_slot = info->ctx_slot;

	memset(info, 0, sizeof(*info));
	if (!(clone_flags & (CLONE_THREAD | CLONE_SETTLS)) &&
	    (!(clone_flags & CLONE_VM) || (clone_flags & CLONE_VFORK)))
		info->ctx_slot = ctx_slot;
}

/**
 * unwind_task_free - free the deferred unwind state of a dead task
 * @task: the task being freed
 */
void unwind_task_free(struct task_struct *task)
{
	struct unwind_cache *cache = task->unwind_info.cache;

	if (cache)
		unwind_free_deep(cache);
	kfree(cache);
	task->unwind_info.cache = NULL;
}

static struct ctl_table unwind_sysctl[] = {
	{
		.procname	= "unwind_max_frames",
		.data		= &unwind_max_frames,
		.maxlen		= sizeof(unwind_max_frames),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= &unwind_min_frames_limit,
		.extra2		= &unwind_max_frames_limit,
	},
};

static int __init unwind_sysctl_init(void)
{
	register_sysctl_init("kernel", unwind_sysctl);
	return 0;
}
late_initcall(unwind_sysctl_init);
