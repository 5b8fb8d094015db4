/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_DEFERRED_H
#define _LINUX_UNWIND_DEFERRED_H

#include <linux/bits.h>
#include <linux/jump_label.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/unwind_deferred_types.h>
#include <linux/unwind_user_types.h>
#include <linux/workqueue.h>

struct unwind_work;

/**
 * typedef unwind_callback_t - a tracer's deferred unwind callback
 * @work: the tracer's registered work
 * @trace: the user stack of the kernel entry, possibly empty
 * @cookie: the cookie unwind_deferred_request() returned during that entry
 *
 * Called in task context of the unwound task, before it returns to user
 * space (or while it exits or execs), under SRCU. It may fault and sleep,
 * but must not sleep on anything user space can hold for long (such as
 * mmap_lock: use mmap_read_trylock()), because unwind_deferred_cancel()
 * waits for running callbacks. It must not register or cancel a work.
 * @trace is valid only during the call.
 */
typedef void (*unwind_callback_t)(struct unwind_work *work,
				  struct unwind_stacktrace *trace, u64 cookie);

/**
 * struct unwind_work - a tracer's registration for deferred unwinding
 * @list: on the list of registered works
 * @func: the callback
 * @bit: the tracer's bit in the per-task mask, -1 when not registered
 * @cancel_bit: the bit being released by unwind_deferred_cancel_async()
 * @cancel_work: runs the release of unwind_deferred_cancel_async()
 * @release: called when that release is done
 */
struct unwind_work {
	struct list_head	list;
	unwind_callback_t	func;
	int			bit;
	unsigned long		cancel_bit;
	struct work_struct	cancel_work;
	void			(*release)(struct unwind_work *work);
};

/**
 * struct unwind_shared_work - one unwind work shared by a tracer's users
 * @work: the registered work
 * @func: its callback
 * @users: the tracer's users (perf events, BPF programs)
 * @lock: serialises registration with the delayed release
 * @registered: @work is registered
 * @release: unregisters @work a while after the last user went away
 *
 * A tracer whose users come and go (perf events, BPF programs) registers
 * one work for all of them, while it has any: a kernel entry is walked
 * once for all of them, and with none the exit path costs nothing. The
 * release is delayed, so that creating and freeing users in a loop does
 * not register and unregister (text patching on every CPU, two grace
 * periods, a visit of every thread) each time. Define one with
 * DEFINE_UNWIND_SHARED_WORK().
 */
struct unwind_shared_work {
	struct unwind_work	work;
	unwind_callback_t	func;
	atomic_t		users;
	struct mutex		lock;		/* registration vs release */
	bool			registered;
	struct delayed_work	release;
};

void unwind_shared_release(struct work_struct *release);

#define DEFINE_UNWIND_SHARED_WORK(name, callback)			\
	struct unwind_shared_work name = {				\
		.work		= { .bit = -1 },			\
		.func		= callback,				\
		.users		= ATOMIC_INIT(0),			\
		.lock		= __MUTEX_INITIALIZER(name.lock),	\
		.release	= __DELAYED_WORK_INITIALIZER(name.release, \
						unwind_shared_release, 0), \
	}

/* Bits of union unwind_task_state::mask. */
#define UNWIND_PENDING_BIT	0	/* the exit work must walk and call */
#define UNWIND_USED_BIT		1	/* state set during this entry */
#define UNWIND_REGS_BIT		2	/* unwind_task_info::regs holds the entry's start */
#define UNWIND_FIRST_WORK_BIT	3	/* tracers own bits 3 .. BITS_PER_LONG-1 */

#define UNWIND_PENDING		BIT(UNWIND_PENDING_BIT)
#define UNWIND_USED		BIT(UNWIND_USED_BIT)
#define UNWIND_REGS		BIT(UNWIND_REGS_BIT)
#define UNWIND_MAX_WORKS	(BITS_PER_LONG - UNWIND_FIRST_WORK_BIT)

#ifdef CONFIG_UNWIND_DEFERRED

void unwind_task_init(struct task_struct *task, u64 clone_flags);
void unwind_task_free(struct task_struct *task);

int unwind_user_faultable(struct unwind_stacktrace *trace);

int unwind_deferred_init(struct unwind_work *work, unwind_callback_t func);
int unwind_deferred_request(struct unwind_work *work, u64 *cookie);
void unwind_deferred_cancel(struct unwind_work *work);
bool unwind_deferred_cancel_async(struct unwind_work *work,
				  void (*release)(struct unwind_work *work));
void unwind_deferred_flush(void);

void unwind_shared_get(struct unwind_shared_work *sw);
void unwind_shared_put(struct unwind_shared_work *sw);

DECLARE_STATIC_KEY_FALSE(unwind_deferred_enabled);
void __unwind_reset_info(void);
void __unwind_deferred_resume(void);
void __unwind_deferred_signal(struct pt_regs *regs);

/**
 * unwind_deferred_signal - keep the entry's user state before signal work
 * @regs: the user registers of the current kernel entry
 *
 * Called by the exit to user space before it delivers a signal or restarts
 * a system call, both of which rewrite @regs (and a ptrace stop in between
 * may too). The deferred walk of this entry runs later in the same exit,
 * and must start from the state the task entered the kernel with, not from
 * the signal handler's. Behind the static key: with no tracer registered
 * there is nothing to keep.
 *
 * Context: task context of a user task returning to user space, interrupts
 * enabled.
 */
static __always_inline void unwind_deferred_signal(struct pt_regs *regs)
{
	if (static_branch_unlikely(&unwind_deferred_enabled))
		__unwind_deferred_signal(regs);
}

/**
 * unwind_deferred_resume - walk and call back before returning to user space
 *
 * Called from resume_user_mode_work(), that is when TIF_NOTIFY_RESUME was
 * set, after the flag was cleared. Runs the current task's deferred unwind
 * if a request marked it pending. Not behind the static key: a task marked
 * pending must never miss its run, and this path is not the common exit.
 *
 * Context: task context, interrupts enabled, may fault and sleep.
 */
static __always_inline void unwind_deferred_resume(void)
{
	if (unlikely(READ_ONCE(current->unwind_info.state.mask) & UNWIND_PENDING))
		__unwind_deferred_resume();
}

/**
 * unwind_reset_info - end the kernel entry for deferred unwinding
 *
 * Called on every return to user space, after the deferred run, with
 * interrupts disabled, after the last tracepoint that can fire on the way
 * out (irq_enable) but that of a nohz_full CPU's user_enter: a request still
 * pending here came after the exit loop, and the reset raises a
 * self-interrupt for it. While no tracer is registered this is a no-op in the
 * instruction stream (a static branch): nothing of the task's unwind state
 * is loaded or tested. Otherwise, when no tracer asked for anything during
 * the entry, it is one load and a well-predicted branch.
 */
static __always_inline void unwind_reset_info(void)
{
	if (static_branch_unlikely(&unwind_deferred_enabled) &&
	    unlikely(READ_ONCE(current->unwind_info.state.mask)))
		__unwind_reset_info();
}

#else /* !CONFIG_UNWIND_DEFERRED */

static inline void unwind_task_init(struct task_struct *task, u64 clone_flags) {}
static inline void unwind_task_free(struct task_struct *task) {}
static inline void unwind_deferred_flush(void) {}
static inline void unwind_reset_info(void) {}
static inline void unwind_deferred_resume(void) {}
static inline void unwind_deferred_signal(struct pt_regs *regs) {}

static inline int unwind_user_faultable(struct unwind_stacktrace *trace)
{
	trace->nr = 0;
	return -EOPNOTSUPP;
}

static inline int unwind_deferred_init(struct unwind_work *work,
				       unwind_callback_t func)
{
	work->bit = -1;
	return -EOPNOTSUPP;
}

static inline int unwind_deferred_request(struct unwind_work *work, u64 *cookie)
{
	*cookie = 0;
	return -EOPNOTSUPP;
}

static inline void unwind_deferred_cancel(struct unwind_work *work) {}

static inline bool
unwind_deferred_cancel_async(struct unwind_work *work,
			     void (*release)(struct unwind_work *work))
{
	return false;
}

static inline void unwind_shared_get(struct unwind_shared_work *sw) {}
static inline void unwind_shared_put(struct unwind_shared_work *sw) {}

#endif /* CONFIG_UNWIND_DEFERRED */

struct bpf_prog;
struct bpf_prog_aux;

#if defined(CONFIG_UNWIND_DEFERRED) && defined(CONFIG_BPF_EVENTS)
void bpf_unwind_user_prog_load(struct bpf_prog *prog);
void bpf_unwind_user_prog_free(struct bpf_prog_aux *aux);
#else
static inline void bpf_unwind_user_prog_load(struct bpf_prog *prog) {}
static inline void bpf_unwind_user_prog_free(struct bpf_prog_aux *aux) {}
#endif

#endif /* _LINUX_UNWIND_DEFERRED_H */
