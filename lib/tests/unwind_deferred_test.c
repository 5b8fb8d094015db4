// SPDX-License-Identifier: GPL-2.0
/*
 * Test client for deferred user-space unwinding, for test kernels only.
 *
 * It owns up to UNWIND_MAX_WORKS test tracers and logs every request it makes
 * and every callback it gets, so that user-space tests can check the core's
 * contracts against a real task. Everything is under
 * /sys/kernel/debug/unwind_deferred_test/:
 *
 * ctl (write one command per write()):
 *   register MASK         register the tracers in MASK (hex bit mask of ids)
 *   cancel MASK           cancel them
 *   request MASK CTX N    each tracer in MASK requests N times for the
 *                         writing task, from CTX: task, irq (a hard IRQ,
 *                         raised as a self irq_work IPI), nmi (a self-NMI),
 *                         or kthread (from a kernel thread, which must be
 *                         refused), or mixed (task, then irq, then nmi,
 *                         all in this one system call)
 *   reqcancel MASK CMASK  request MASK from task context, then cancel the
 *                         tracers in CMASK, in this one system call
 *   arm NR MASK           once, when the writing task next enters system call
 *                         NR, the tracers in MASK request from there (used to
 *                         leave a request pending across exit, execve, fork)
 *   late NR MASK          once, when the writing task returns to user space
 *                         from system call NR and reloads its FPU registers
 *                         (x86_fpu_regs_activated: after the exit loop,
 *                         with interrupts off), the tracers in MASK request
 *                         from there
 *   armexec MASK          once, when the writing task next passes execve()'s
 *                         point of no return (sched_process_exec), the
 *                         tracers in MASK request from there
 *   rerequest MASK        once, when a callback next runs in the writing
 *                         task, the tracers in MASK request from within it
 *                         (a second deferred run in the same entry)
 *   park                  once, when the writing task's deferred run walked
 *                         its stack, stop it there (before any callback)
 *                         until "unpark"
 *   park cb               the same, but inside the first callback, that is
 *                         inside the core's SRCU read-side section
 *   waitpark              wait until a task is parked
 *   unpark MASK           let the parked task go on; parked after its walk,
 *                         the tracers in MASK (optional) first request
 *                         from there, as an IRQ could during the walk
 *   mmlock                take the writing task's mmap_lock for writing and
 *                         hold it, inside this write(), until "mmunlock"
 *   waitmm                wait until the lock is held
 *   mmunlock              let the holder release it
 *   gate MASK             stop inside this write() until "opengate", then
 *                         the tracers in MASK request, in the same entry
 *   waitgate              wait until a task is stopped at the gate
 *   opengate              let it go on
 *   key 0|1               succeed once the exit-to-user static key is off
 *                         (0) or on (1); fail with -EBUSY if it is not
 *                         within about 10 s
 *   clear                 empty the log
 *
 * log (read): one line per event, oldest first:
 *   req tid=T tracer=I gen=G ctx=C ret=R again=A cookie=X bit=B
 *   cb tid=T tracer=I gen=G cookie=X exiting=E walks=W nr=N ips=A,B,...
 * "ret" is what the first request returned, "again" how many of the N-1
 * later ones returned 1 with the same cookie, "gen" counts registrations of a
 * tracer id (the one the request was made in), "bit" is the core's bit of the
 * tracer when the record is written (-1 when not registered). A later request
 * that returned 0 (its tracer was registered again after the first one was
 * refused) is a request of its own, and gets a record of its own.
 * "walks" is the task's count of
 * user stack walks so far, "ips" are the first entries of the trace.
 */

#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/init.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/mmap_lock.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>
#include <linux/vmalloc.h>
#include <asm/nmi.h>
#include <asm/apic.h>
#include <asm/syscall.h>
#include <asm/trace/fpu.h>
#include <trace/events/sched.h>
#include <trace/events/syscalls.h>

#include "../../kernel/unwind/deferred_test.h"

#define UT_LOG_SIZE	65536
#define UT_LOG_IPS	8
#define UT_MAX_TRACERS	UNWIND_MAX_WORKS

enum ut_ctx {
	UT_TASK, UT_IRQ, UT_NMI, UT_KTHREAD, UT_PROBE, UT_CALLBACK, UT_EXEC,
	UT_LATE, UT_PARKED,
};

static const char * const ut_ctx_names[] = {
	[UT_TASK] = "task", [UT_IRQ] = "irq", [UT_NMI] = "nmi",
	[UT_KTHREAD] = "kthread", [UT_PROBE] = "probe",
	[UT_CALLBACK] = "callback", [UT_EXEC] = "exec", [UT_LATE] = "late",
	[UT_PARKED] = "parked",
};

struct ut_rec {
	bool		cb;
	u8		ctx;
	u8		exiting;
	s8		ret;
	u16		again;
	u16		tracer;
	s8		bit;
	u32		gen;
	pid_t		tid;
	u64		cookie;
	u32		walks;
	u32		nr;
	unsigned long	ips[UT_LOG_IPS];
};

struct ut_tracer {
	struct unwind_work	work;
	u32			gen;
	bool			registered;
};

static struct ut_tracer ut_tracers[UT_MAX_TRACERS];
static DEFINE_MUTEX(ut_mutex);		/* registration, arming */
static DEFINE_MUTEX(ut_irq_mutex);	/* one IRQ or NMI batch at a time */

static struct ut_rec *ut_log;
static unsigned int ut_log_len;
static DEFINE_SPINLOCK(ut_log_lock);

/* Results of requests made from IRQ or NMI, logged afterwards. */
struct ut_batch {
	u64		mask;
	int		count;
	enum ut_ctx	ctx;
	s8		ret[UT_MAX_TRACERS];		/* first request */
	u16		again[UT_MAX_TRACERS];		/* later ones that returned 1 */
	u64		cookie[UT_MAX_TRACERS];
	u32		gen[UT_MAX_TRACERS];
	/* The last later request that returned 0, when one did. */
	bool		renew[UT_MAX_TRACERS];
	u64		recookie[UT_MAX_TRACERS];
	u32		regen[UT_MAX_TRACERS];
	atomic_t	done;
	struct completion kdone;		/* the kernel thread is done */
};

static void ut_log_add(const struct ut_rec *rec)
{
	unsigned long flags;

	spin_lock_irqsave(&ut_log_lock, flags);
	if (ut_log_len < UT_LOG_SIZE) {
		ut_log[ut_log_len] = *rec;
		/* After the record: ut_log_start() reads without the lock. */
		smp_store_release(&ut_log_len, ut_log_len + 1);
	}
	spin_unlock_irqrestore(&ut_log_lock, flags);
}

static void ut_log_req(int id, enum ut_ctx ctx, int ret, int again, u64 cookie,
		       u32 gen, pid_t tid)
{
	struct ut_rec rec = {
		.ctx = ctx, .ret = ret, .again = again, .tracer = id,
		.cookie = cookie, .gen = gen, .tid = tid,
		.bit = READ_ONCE(ut_tracers[id].work.bit),
	};

	ut_log_add(&rec);
}

/*
 * One request of tracer @id, and the registration (generation) it was made
 * in, read when it was made: the batch is logged later, when a churning
 * tracer may have been cancelled and registered again. Preemption is off
 * across both, so a request that found the tracer's bit holds off the
 * synchronize_rcu() of its cancel, and with it the next registration's
 * generation bump. ut_register() bumps the generation before
 * unwind_deferred_init() publishes the bit.
 */
static int ut_request_one(int id, u64 *cookie, u32 *gen)
{
	int ret;

	preempt_disable();
	ret = unwind_deferred_request(&ut_tracers[id].work, cookie);
	/* Pairs with the release of the bit in unwind_deferred_init(). */
	smp_rmb();
	*gen = READ_ONCE(ut_tracers[id].gen);
	preempt_enable();
	return ret;
}

/* Each tracer in @mask requests once for the current task; log the results. */
static void ut_request_each(u64 mask, enum ut_ctx ctx)
{
	u64 cookie;
	int id, ret;
	u32 gen;

	for (id = 0; id < UT_MAX_TRACERS; id++) {
		if (!(mask & BIT_ULL(id)))
			continue;
		ret = ut_request_one(id, &cookie, &gen);
		ut_log_req(id, ctx, ret, 0, cookie, gen, current->pid);
	}
}

/* "park": stop one task after its walk, or inside a callback. */
static pid_t ut_park_tid;
static bool ut_park_in_cb;
static u64 ut_unpark_mask;
static DECLARE_COMPLETION(ut_parked);
static DECLARE_COMPLETION(ut_unpark);

static void ut_park(bool in_cb)
{
	if (READ_ONCE(ut_park_tid) != current->pid ||
	    READ_ONCE(ut_park_in_cb) != in_cb)
		return;
	WRITE_ONCE(ut_park_tid, 0);
	complete(&ut_parked);
	/* Killable, so that a failing test cannot leave the task stuck. */
	if (wait_for_completion_killable(&ut_unpark)) {
		pr_info("unwind_deferred_test: parked task %d killed\n",
			current->pid);
		return;
	}
	if (!in_cb)
		ut_request_each(xchg(&ut_unpark_mask, 0), UT_PARKED);
}

/* Called by the core after a deferred run's walk; see unwind_deferred_test_hook. */
static void ut_park_hook(void)
{
	ut_park(false);
}

/* One-shot requests from within a callback, see "rerequest". */
static pid_t ut_rereq_tid;
static u64 ut_rereq_mask;

static void ut_callback(struct unwind_work *work, struct unwind_stacktrace *trace,
			u64 cookie)
{
	struct ut_tracer *t = container_of(work, struct ut_tracer, work);
	struct ut_rec rec = {
		.cb = true, .tracer = t - ut_tracers, .gen = READ_ONCE(t->gen),
		.tid = current->pid, .cookie = cookie, .nr = trace->nr,
		.exiting = !!(current->flags & PF_EXITING),
		.walks = current->unwind_info.nr_walks,
	};

	memcpy(rec.ips, trace->entries,
	       min_t(unsigned int, trace->nr, UT_LOG_IPS) * sizeof(long));
	ut_log_add(&rec);
	ut_park(true);

	/* A tracer asking while another one's callback runs, same entry. */
	if (READ_ONCE(ut_rereq_tid) != current->pid)
		return;
	WRITE_ONCE(ut_rereq_tid, 0);
	ut_request_each(xchg(&ut_rereq_mask, 0), UT_CALLBACK);
}

/* Make the requests of @b; any context. */
static void ut_batch_run(struct ut_batch *b)
{
	int id, i;

	for (id = 0; id < UT_MAX_TRACERS; id++) {
		if (!(b->mask & BIT_ULL(id)))
			continue;
		b->ret[id] = ut_request_one(id, &b->cookie[id], &b->gen[id]);
		for (i = 1; i < b->count; i++) {
			u64 cookie;
			u32 gen;
			int ret = ut_request_one(id, &cookie, &gen);

			if (ret == 1 && cookie == b->cookie[id]) {
				b->again[id]++;
			} else if (!ret) {
				/*
				 * The tracer was registered again since the
				 * first request: the entry's callback is owed
				 * to this one. An earlier generation's bit was
				 * scrubbed before this one got its bit, so the
				 * last such request is the one that counts.
				 */
				b->renew[id] = true;
				b->recookie[id] = cookie;
				b->regen[id] = gen;
			}
		}
	}
	atomic_set_release(&b->done, 1);
}

static void ut_batch_log(struct ut_batch *b, pid_t tid)
{
	int id;

	for (id = 0; id < UT_MAX_TRACERS; id++) {
		if (!(b->mask & BIT_ULL(id)))
			continue;
		ut_log_req(id, b->ctx, b->ret[id], b->again[id],
			   b->cookie[id], b->gen[id], tid);
		if (b->renew[id])
			ut_log_req(id, b->ctx, 0, 0, b->recookie[id],
				   b->regen[id], tid);
	}
}

/* Spin until @b ran in interrupt context; false on timeout. */
static bool ut_batch_wait(struct ut_batch *b)
{
	int i;

	for (i = 0; i < 1000000; i++) {
		if (atomic_read_acquire(&b->done))
			return true;
		udelay(1);
	}
	return false;
}

static struct ut_batch *ut_irq_batch;

static void ut_irq_work_fn(struct irq_work *work)
{
	ut_batch_run(ut_irq_batch);
}

static struct irq_work ut_irq_work = IRQ_WORK_INIT_HARD(ut_irq_work_fn);

static struct ut_batch *ut_nmi_batch;
static int ut_nmi_cpu = -1;

static int ut_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	struct ut_batch *b = READ_ONCE(ut_nmi_batch);

	if (!b || READ_ONCE(ut_nmi_cpu) != smp_processor_id())
		return NMI_DONE;
	/* A late NMI of a batch that timed out finds it done: still ours. */
	if (!atomic_read(&b->done))
		ut_batch_run(b);
	return NMI_HANDLED;
}

static int ut_kthread_fn(void *data)
{
	struct ut_batch *b = data;

	ut_batch_run(b);
	/* The last use of @b: the waiter frees it. */
	complete(&b->kdone);
	return 0;
}

static int ut_request(u64 mask, enum ut_ctx ctx, int count)
{
	struct ut_batch *b = kzalloc(sizeof(*b), GFP_KERNEL);
	struct task_struct *k;
	int ret = 0;

	if (!b)
		return -ENOMEM;
	b->mask = mask;
	b->count = count;
	b->ctx = ctx;

	switch (ctx) {
	case UT_TASK:
		ut_batch_run(b);
		break;
	case UT_IRQ:
		/* Preemption off: the IRQ must interrupt this very task. */
		mutex_lock(&ut_irq_mutex);
		preempt_disable();
		WRITE_ONCE(ut_irq_batch, b);
		irq_work_queue(&ut_irq_work);
		if (!ut_batch_wait(b))
			ret = -ETIMEDOUT;
		preempt_enable();
		irq_work_sync(&ut_irq_work);
		mutex_unlock(&ut_irq_mutex);
		break;
	case UT_NMI:
		mutex_lock(&ut_irq_mutex);
		preempt_disable();
		WRITE_ONCE(ut_nmi_cpu, smp_processor_id());
		WRITE_ONCE(ut_nmi_batch, b);
		__apic_send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
		if (!ut_batch_wait(b)) {
			/*
			 * The NMI may still come and use @b: leave it to
			 * that NMI (leaked; a test kernel that gets here
			 * fails anyway).
			 */
			preempt_enable();
			mutex_unlock(&ut_irq_mutex);
			return -ETIMEDOUT;
		}
		WRITE_ONCE(ut_nmi_batch, NULL);
		preempt_enable();
		mutex_unlock(&ut_irq_mutex);
		break;
	case UT_KTHREAD:
		/* No timeout: @b must outlive the thread's use of it. */
		init_completion(&b->kdone);
		k = kthread_run(ut_kthread_fn, b, "unwind_test");
		if (IS_ERR(k)) {
			ret = PTR_ERR(k);
			break;
		}
		wait_for_completion(&b->kdone);
		break;
	default:
		ret = -EINVAL;
	}
	if (!ret)
		ut_batch_log(b, ctx == UT_KTHREAD ? 0 : current->pid);
	kfree(b);
	return ret;
}

/* One-shot requests from a system call entry, see "arm". */
static pid_t ut_armed_tid;
static long ut_armed_nr;
static u64 ut_armed_mask;
static bool ut_probe_registered;

static void ut_sys_enter(void *data, struct pt_regs *regs, long id)
{
	u64 mask;

	if (READ_ONCE(ut_armed_tid) != current->pid || id != READ_ONCE(ut_armed_nr))
		return;
	mask = xchg(&ut_armed_mask, 0);
	WRITE_ONCE(ut_armed_tid, 0);
	ut_request_each(mask, UT_PROBE);
}

static int ut_arm(long nr, u64 mask)
{
	int ret;

	guard(mutex)(&ut_mutex);
	if (!ut_probe_registered) {
		ret = register_trace_sys_enter(ut_sys_enter, NULL);
		if (ret)
			return ret;
		ut_probe_registered = true;
	}
	WRITE_ONCE(ut_armed_tid, 0);
	WRITE_ONCE(ut_armed_nr, nr);
	WRITE_ONCE(ut_armed_mask, mask);
	WRITE_ONCE(ut_armed_tid, current->pid);
	return 0;
}

/* One-shot requests after the exit loop, see "late". */
static pid_t ut_late_tid;
static long ut_late_nr;
static u64 ut_late_mask;
static bool ut_late_probe_registered;

static void ut_fpu_activated(void *data, struct fpu *fpu)
{
	if (READ_ONCE(ut_late_tid) != current->pid || !irqs_disabled() ||
	    syscall_get_nr(current, task_pt_regs(current)) != READ_ONCE(ut_late_nr))
		return;
	WRITE_ONCE(ut_late_tid, 0);
	ut_request_each(xchg(&ut_late_mask, 0), UT_LATE);
}

static int ut_arm_late(long nr, u64 mask)
{
	int ret;

	guard(mutex)(&ut_mutex);
	if (!ut_late_probe_registered) {
		ret = register_trace_x86_fpu_regs_activated(ut_fpu_activated, NULL);
		if (ret)
			return ret;
		ut_late_probe_registered = true;
	}
	WRITE_ONCE(ut_late_tid, 0);
	WRITE_ONCE(ut_late_nr, nr);
	WRITE_ONCE(ut_late_mask, mask);
	WRITE_ONCE(ut_late_tid, current->pid);
	return 0;
}

/* One-shot requests after execve()'s point of no return, see "armexec". */
static pid_t ut_exec_tid;
static u64 ut_exec_mask;
static bool ut_exec_probe_registered;

static void ut_sched_exec(void *data, struct task_struct *p, pid_t old_pid,
			  struct linux_binprm *bprm)
{
	if (READ_ONCE(ut_exec_tid) != current->pid)
		return;
	WRITE_ONCE(ut_exec_tid, 0);
	ut_request_each(xchg(&ut_exec_mask, 0), UT_EXEC);
}

static int ut_arm_exec(u64 mask)
{
	int ret;

	guard(mutex)(&ut_mutex);
	if (!ut_exec_probe_registered) {
		ret = register_trace_sched_process_exec(ut_sched_exec, NULL);
		if (ret)
			return ret;
		ut_exec_probe_registered = true;
	}
	WRITE_ONCE(ut_exec_tid, 0);
	WRITE_ONCE(ut_exec_mask, mask);
	WRITE_ONCE(ut_exec_tid, current->pid);
	return 0;
}

/*
 * Wait for the exit-to-user static key to be @on. A tracer cancelled with
 * unwind_deferred_cancel_async() (an ftrace instance whose
 * userstacktrace_delay a test has just cleared) gives its bit back, and
 * the last one the key, from a workqueue after grace periods: the key can
 * stay on for a while after the test's own last tracer was cancelled. A
 * key that never changes is the failure looked for; it shows after 10 s.
 */
static int ut_wait_key(bool on)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (static_key_enabled(&unwind_deferred_enabled) == on)
			return 0;
		if (msleep_interruptible(10))
			return -EINTR;
	}
	return -EBUSY;
}

static int ut_register(u64 mask)
{
	int id, ret;

	guard(mutex)(&ut_mutex);
	for (id = 0; id < UT_MAX_TRACERS; id++) {
		struct ut_tracer *t = &ut_tracers[id];

		if (!(mask & BIT_ULL(id)) || t->registered)
			continue;
		WRITE_ONCE(t->gen, t->gen + 1);
		ret = unwind_deferred_init(&t->work, ut_callback);
		if (ret)
			return ret;
		t->registered = true;
	}
	return 0;
}

static void ut_cancel(u64 mask)
{
	int id;

	guard(mutex)(&ut_mutex);
	for (id = 0; id < UT_MAX_TRACERS; id++) {
		struct ut_tracer *t = &ut_tracers[id];

		if (!(mask & BIT_ULL(id)) || !t->registered)
			continue;
		unwind_deferred_cancel(&t->work);
		t->registered = false;
	}
}

/* "gate": stop the writer inside its write() until "opengate". */
static DECLARE_COMPLETION(ut_gate_entered);
static DECLARE_COMPLETION(ut_gate_open);

/* "mmlock": hold the writer's mmap_lock for writing inside its write(). */
static DECLARE_COMPLETION(ut_mm_locked);
static DECLARE_COMPLETION(ut_mm_unlock);

static int ut_mmlock(void)
{
	struct mm_struct *mm = current->mm;
	int ret;

	if (!mm)
		return -EINVAL;
	reinit_completion(&ut_mm_unlock);
	if (mmap_write_lock_killable(mm))
		return -EINTR;
	complete(&ut_mm_locked);
	ret = wait_for_completion_killable(&ut_mm_unlock);
	mmap_write_unlock(mm);
	return ret;
}

static ssize_t ut_ctl_write(struct file *file, const char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char buf[64], what[16];
	unsigned long long mask, cmask;
	int n, ret = -EINVAL;
	long nr;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';

	if (sscanf(buf, "register %llx", &mask) == 1) {
		ret = ut_register(mask);
	} else if (sscanf(buf, "cancel %llx", &mask) == 1) {
		ut_cancel(mask);
		ret = 0;
	} else if (sscanf(buf, "request %llx %15s %d", &mask, what, &n) == 3) {
		int ctx;

		for (ctx = UT_TASK; ctx <= UT_KTHREAD; ctx++)
			if (!strcmp(what, ut_ctx_names[ctx]))
				break;
		if (n <= 0 || n > 1000)
			ret = -EINVAL;
		else if (ctx <= UT_KTHREAD)
			ret = ut_request(mask, ctx, n);
		else if (!strcmp(what, "mixed"))
			ret = ut_request(mask, UT_TASK, n) ?:
			      ut_request(mask, UT_IRQ, n) ?:
			      ut_request(mask, UT_NMI, n);
	} else if (sscanf(buf, "reqcancel %llx %llx", &mask, &cmask) == 2) {
		ret = ut_request(mask, UT_TASK, 1);
		ut_cancel(cmask);
	} else if (sscanf(buf, "rerequest %llx", &mask) == 1) {
		WRITE_ONCE(ut_rereq_tid, 0);
		WRITE_ONCE(ut_rereq_mask, mask);
		WRITE_ONCE(ut_rereq_tid, current->pid);
		ret = 0;
	} else if (sscanf(buf, "late %ld %llx", &nr, &mask) == 2) {
		ret = ut_arm_late(nr, mask);
	} else if (sscanf(buf, "armexec %llx", &mask) == 1) {
		ret = ut_arm_exec(mask);
	} else if (sscanf(buf, "arm %ld %llx", &nr, &mask) == 2) {
		ret = ut_arm(nr, mask);
	} else if (!strncmp(buf, "park", 4)) {
		/* Each waitpark consumes one park, so no reinit of ut_parked. */
		reinit_completion(&ut_unpark);
		WRITE_ONCE(ut_unpark_mask, 0);
		WRITE_ONCE(ut_park_in_cb, !strncmp(buf, "park cb", 7));
		WRITE_ONCE(ut_park_tid, current->pid);
		ret = 0;
	} else if (!strncmp(buf, "waitpark", 8)) {
		ret = wait_for_completion_killable(&ut_parked);
	} else if (!strncmp(buf, "unpark", 6)) {
		if (sscanf(buf, "unpark %llx", &mask) == 1)
			WRITE_ONCE(ut_unpark_mask, mask);
		complete(&ut_unpark);
		ret = 0;
	} else if (!strncmp(buf, "mmlock", 6)) {
		ret = ut_mmlock();
	} else if (!strncmp(buf, "waitmm", 6)) {
		ret = wait_for_completion_killable(&ut_mm_locked);
	} else if (!strncmp(buf, "mmunlock", 8)) {
		complete(&ut_mm_unlock);
		ret = 0;
	} else if (sscanf(buf, "gate %llx", &mask) == 1) {
		reinit_completion(&ut_gate_open);
		complete(&ut_gate_entered);
		ret = wait_for_completion_killable(&ut_gate_open) ?:
		      ut_request(mask, UT_TASK, 1);
	} else if (!strncmp(buf, "waitgate", 8)) {
		ret = wait_for_completion_killable(&ut_gate_entered);
	} else if (!strncmp(buf, "opengate", 8)) {
		complete(&ut_gate_open);
		ret = 0;
	} else if (sscanf(buf, "key %d", &n) == 1) {
		ret = ut_wait_key(n);
	} else if (!strncmp(buf, "clear", 5)) {
		spin_lock_irq(&ut_log_lock);
		WRITE_ONCE(ut_log_len, 0);
		spin_unlock_irq(&ut_log_lock);
		ret = 0;
	}
	return ret ? ret : count;
}

/*
 * Some commands block inside write() (waitpark, mmlock): a stream has no
 * file position lock, so that other threads can write to the same file
 * meanwhile.
 */
static int ut_ctl_open(struct inode *inode, struct file *file)
{
	return stream_open(inode, file);
}

static const struct file_operations ut_ctl_fops = {
	.owner	= THIS_MODULE,
	.open	= ut_ctl_open,
	.write	= ut_ctl_write,
};

static void *ut_log_start(struct seq_file *m, loff_t *pos)
{
	/* Pairs with the release in ut_log_add(): the record is whole. */
	return *pos < smp_load_acquire(&ut_log_len) ? &ut_log[*pos] : NULL;
}

static void *ut_log_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return ut_log_start(m, pos);
}

static void ut_log_stop(struct seq_file *m, void *v)
{
}

static int ut_log_show(struct seq_file *m, void *v)
{
	const struct ut_rec *r = v;
	unsigned int i;

	if (!r->cb) {
		seq_printf(m, "req tid=%d tracer=%u gen=%u ctx=%s ret=%d again=%u cookie=%llx bit=%d\n",
			   r->tid, r->tracer, r->gen, ut_ctx_names[r->ctx],
			   r->ret, r->again, r->cookie, r->bit);
		return 0;
	}
	seq_printf(m, "cb tid=%d tracer=%u gen=%u cookie=%llx exiting=%u walks=%u nr=%u ips=",
		   r->tid, r->tracer, r->gen, r->cookie, r->exiting, r->walks,
		   r->nr);
	for (i = 0; i < min_t(unsigned int, r->nr, UT_LOG_IPS); i++)
		seq_printf(m, "%s%lx", i ? "," : "", r->ips[i]);
	seq_putc(m, '\n');
	return 0;
}

static const struct seq_operations ut_log_sops = {
	.start	= ut_log_start,
	.next	= ut_log_next,
	.stop	= ut_log_stop,
	.show	= ut_log_show,
};
DEFINE_SEQ_ATTRIBUTE(ut_log);

static int __init unwind_deferred_test_init(void)
{
	struct dentry *dir;
	int ret;

	ut_log = vmalloc_array(UT_LOG_SIZE, sizeof(*ut_log));
	if (!ut_log)
		return -ENOMEM;
	ret = register_nmi_handler(NMI_LOCAL, ut_nmi_handler, 0, "unwind_test");
	if (ret)
		return ret;

	WRITE_ONCE(unwind_deferred_test_hook, ut_park_hook);

	dir = debugfs_create_dir("unwind_deferred_test", NULL);
	debugfs_create_file("ctl", 0200, dir, NULL, &ut_ctl_fops);
	debugfs_create_file("log", 0400, dir, NULL, &ut_log_fops);
	return 0;
}
late_initcall(unwind_deferred_test_init);
