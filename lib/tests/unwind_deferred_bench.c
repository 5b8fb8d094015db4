// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark client for deferred user-space unwinding, for test kernels only.
 *
 * It owns up to UNWIND_MAX_WORKS benchmark tracers whose callbacks only
 * count, so that what a user-space driver times is the core's own cost.
 * Everything is under /sys/kernel/debug/unwind_deferred_bench/:
 *
 * ctl (write one command per write()):
 *   tracers N       cancel the bench tracers, then register N of them, or
 *                   as many as the core has bits left for with N = "all"
 *   fire K          tracers 0 .. K-1 each request once for the writing task;
 *                   "fire 0" takes the same path and requests nothing, as
 *                   the baseline for the cost of requests and delivery
 *   time ITERS K    time with get_cycles(), in this one system call: an
 *                   empty timed region, the first request of the entry
 *                   (tracer 0), the first request of each of tracers
 *                   1 .. K-1 (the walk is already pending), ITERS requests
 *                   of tracer 0 that find its bit set (the fast path), and
 *                   ITERS plain atomic increments; appends one result
 *   watch           log, for every task that exits from now on, its count
 *                   of user stack walks
 *   sframe          take the SFrame registry's figures for the writing
 *                   task's mm (kernels with CONFIG_UNWIND_USER_SFRAME)
 *   reset           empty the results, the exit log and the counters
 *
 * results (read): one line per "time" command, raw cycle totals:
 *   iters=N tracers=K empty=E first=F others=O fast=S atomic=A
 * stats (read): "tracers=N callbacks=C frames=F max_nr=M", the callbacks
 * since the last reset and the frames they were given.
 * exits (read): "pid=P comm=C walks=W" per task that exited while watched.
 * sframe (read): the figures of the last "sframe" command: "vmas=V exec=X
 *   examined=E sections=S bytes=B", the mappings, the file-backed
 *   executable ones, those a walk examined, those with an SFrame section,
 *   and the bytes of kernel memory their entries take.
 *
 * The commands serialize on bench_mutex ("fire" included, so that "tracers"
 * cannot cancel a work it is requesting with).
 */

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timex.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>
#include <linux/unwind_user.h>
#include <trace/events/sched.h>

#define BENCH_MAX_RESULTS	4096
#define BENCH_MAX_EXITS		256

struct bench_result {
	u64	iters;
	u64	tracers;
	u64	empty;
	u64	first;
	u64	others;
	u64	fast;
	u64	atomic;
};

struct bench_exit {
	pid_t	pid;
	char	comm[TASK_COMM_LEN];
	u32	walks;
};

static struct unwind_work bench_works[UNWIND_MAX_WORKS];
static int bench_nr_tracers;
static DEFINE_MUTEX(bench_mutex);	/* tracers, results, watch */

static struct bench_result bench_results[BENCH_MAX_RESULTS];
static unsigned int bench_nr_results;

static struct bench_exit bench_exits[BENCH_MAX_EXITS];
static unsigned int bench_nr_exits;
static DEFINE_SPINLOCK(bench_exit_lock);
static bool bench_watching;

static atomic64_t bench_callbacks;
static atomic64_t bench_frames;
static atomic_t bench_max_nr;

#ifdef CONFIG_UNWIND_USER_SFRAME
static struct sframe_mm_usage bench_sframe;	/* under bench_mutex */
#endif

/* The operation requests are compared with. */
static atomic_long_t bench_counter;

/* As cheap as a callback gets: what is timed is the core's delivery. */
static void bench_callback(struct unwind_work *work,
			   struct unwind_stacktrace *trace, u64 cookie)
{
	int nr = trace->nr, old = atomic_read(&bench_max_nr);

	atomic64_inc(&bench_callbacks);
	atomic64_add(nr, &bench_frames);
	while (nr > old && !atomic_try_cmpxchg(&bench_max_nr, &old, nr))
		;
}

static void bench_cancel_all(void)
{
	lockdep_assert_held(&bench_mutex);
	while (bench_nr_tracers)
		unwind_deferred_cancel(&bench_works[--bench_nr_tracers]);
}

static int bench_set_tracers(int nr)
{
	int ret = 0;

	guard(mutex)(&bench_mutex);
	bench_cancel_all();
	while (nr < 0 || bench_nr_tracers < nr) {
		if (bench_nr_tracers == UNWIND_MAX_WORKS)
			break;
		ret = unwind_deferred_init(&bench_works[bench_nr_tracers],
					   bench_callback);
		if (ret)
			break;
		bench_nr_tracers++;
	}
	/* "all" stops at the first refusal, which is its answer. */
	if (nr < 0 && ret == -EBUSY)
		ret = 0;
	if (ret)
		bench_cancel_all();
	return ret;
}

static int bench_fire(int k)
{
	u64 cookie;
	int i, ret;

	/* "tracers" must not cancel or register works under our requests. */
	guard(mutex)(&bench_mutex);
	if (k < 0 || k > bench_nr_tracers)
		return -EINVAL;
	for (i = 0; i < k; i++) {
		ret = unwind_deferred_request(&bench_works[i], &cookie);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * Task context, in one kernel entry: the first request of tracer 0 must be
 * the first of the entry, so nothing else may have requested for this task
 * since it entered. Interrupts stay on; the driver takes medians.
 */
static int bench_time(unsigned int iters, int k)
{
	struct bench_result r = { .iters = iters, .tracers = k };
	cycles_t t0, t1, t2, t3, t4, t5;
	unsigned int i;
	u64 cookie, c;
	int ret;

	if (!iters || iters > 1000000 || k < 1)
		return -EINVAL;
	guard(mutex)(&bench_mutex);
	if (k > bench_nr_tracers)
		return -EINVAL;
	if (bench_nr_results == BENCH_MAX_RESULTS)
		return -ENOSPC;

	t0 = get_cycles();
	t1 = get_cycles();
	ret = unwind_deferred_request(&bench_works[0], &cookie);
	t2 = get_cycles();
	if (ret)	/* not 0: refused, or not the first request */
		return ret < 0 ? ret : -EBUSY;
	for (i = 1; i < k; i++)
		unwind_deferred_request(&bench_works[i], &c);
	t3 = get_cycles();
	for (i = 0; i < iters; i++) {
		if (unwind_deferred_request(&bench_works[0], &c) != 1 ||
		    c != cookie)
			return -EPROTO;
	}
	t4 = get_cycles();
	for (i = 0; i < iters; i++)
		atomic_long_inc(&bench_counter);
	t5 = get_cycles();

	r.empty = t1 - t0;
	r.first = t2 - t1;
	r.others = t3 - t2;
	r.fast = t4 - t3;
	r.atomic = t5 - t4;
	bench_results[bench_nr_results++] = r;
	return 0;
}

static void bench_sched_exit(void *data, struct task_struct *p)
{
	unsigned long flags;
	struct bench_exit *e;

	if (!p->unwind_info.nr_walks)
		return;
	spin_lock_irqsave(&bench_exit_lock, flags);
	if (bench_nr_exits < BENCH_MAX_EXITS) {
		e = &bench_exits[bench_nr_exits++];
		e->pid = p->pid;
		e->walks = p->unwind_info.nr_walks;
		strscpy(e->comm, p->comm);
	}
	spin_unlock_irqrestore(&bench_exit_lock, flags);
}

static int bench_watch(void)
{
	int ret;

	guard(mutex)(&bench_mutex);
	if (bench_watching)
		return 0;
	ret = register_trace_sched_process_exit(bench_sched_exit, NULL);
	if (!ret)
		bench_watching = true;
	return ret;
}

static int bench_sframe_usage(void)
{
#ifdef CONFIG_UNWIND_USER_SFRAME
	struct sframe_mm_usage u;
	int ret;

	if (!current->mm)
		return -EINVAL;
	ret = sframe_mm_usage(current->mm, &u);
	if (ret)
		return ret;
	guard(mutex)(&bench_mutex);
	bench_sframe = u;
	return 0;
#else
	return -EOPNOTSUPP;
#endif
}

static int bench_reset(void)
{
	guard(mutex)(&bench_mutex);
	bench_nr_results = 0;
	spin_lock_irq(&bench_exit_lock);
	bench_nr_exits = 0;
	spin_unlock_irq(&bench_exit_lock);
	atomic64_set(&bench_callbacks, 0);
	atomic64_set(&bench_frames, 0);
	atomic_set(&bench_max_nr, 0);
	return 0;
}

static ssize_t bench_ctl_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	unsigned int iters;
	char buf[32];
	int n, ret = -EINVAL;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	strim(buf);

	if (sscanf(buf, "fire %d", &n) == 1)
		ret = bench_fire(n);
	else if (!strcmp(buf, "tracers all"))
		ret = bench_set_tracers(-1);
	else if (sscanf(buf, "tracers %d", &n) == 1 && n >= 0)
		ret = bench_set_tracers(n);
	else if (sscanf(buf, "time %u %d", &iters, &n) == 2)
		ret = bench_time(iters, n);
	else if (!strcmp(buf, "watch"))
		ret = bench_watch();
	else if (!strcmp(buf, "reset"))
		ret = bench_reset();
	else if (!strcmp(buf, "sframe"))
		ret = bench_sframe_usage();
	return ret ? ret : count;
}

static const struct file_operations bench_ctl_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= bench_ctl_write,
};

static int bench_results_show(struct seq_file *m, void *v)
{
	unsigned int i;

	guard(mutex)(&bench_mutex);
	for (i = 0; i < bench_nr_results; i++) {
		const struct bench_result *r = &bench_results[i];

		seq_printf(m, "iters=%llu tracers=%llu empty=%llu first=%llu others=%llu fast=%llu atomic=%llu\n",
			   r->iters, r->tracers, r->empty, r->first, r->others,
			   r->fast, r->atomic);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(bench_results);

static int bench_stats_show(struct seq_file *m, void *v)
{
	seq_printf(m, "tracers=%d callbacks=%lld frames=%lld max_nr=%d\n",
		   READ_ONCE(bench_nr_tracers), atomic64_read(&bench_callbacks),
		   atomic64_read(&bench_frames), atomic_read(&bench_max_nr));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(bench_stats);

static int bench_exits_show(struct seq_file *m, void *v)
{
	unsigned int i;

	spin_lock_irq(&bench_exit_lock);
	for (i = 0; i < bench_nr_exits; i++)
		seq_printf(m, "pid=%d comm=%s walks=%u\n", bench_exits[i].pid,
			   bench_exits[i].comm, bench_exits[i].walks);
	spin_unlock_irq(&bench_exit_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(bench_exits);

#ifdef CONFIG_UNWIND_USER_SFRAME
static int bench_sframe_show(struct seq_file *m, void *v)
{
	guard(mutex)(&bench_mutex);
	seq_printf(m, "vmas=%lu exec=%lu examined=%lu sections=%lu bytes=%zu\n",
		   bench_sframe.vmas, bench_sframe.exec, bench_sframe.examined,
		   bench_sframe.sections, bench_sframe.bytes);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(bench_sframe);
#endif

static int __init unwind_deferred_bench_init(void)
{
	struct dentry *dir = debugfs_create_dir("unwind_deferred_bench", NULL);

	debugfs_create_file("ctl", 0200, dir, NULL, &bench_ctl_fops);
	debugfs_create_file("results", 0400, dir, NULL, &bench_results_fops);
	debugfs_create_file("stats", 0400, dir, NULL, &bench_stats_fops);
	debugfs_create_file("exits", 0400, dir, NULL, &bench_exits_fops);
#ifdef CONFIG_UNWIND_USER_SFRAME
	debugfs_create_file("sframe", 0400, dir, NULL, &bench_sframe_fops);
#endif
	return 0;
}
late_initcall(unwind_deferred_bench_init);
