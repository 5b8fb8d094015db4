// SPDX-License-Identifier: GPL-2.0
/*
 * BPF as a client of the deferred unwinder.
 *
 * A BPF program calls bpf_unwind_user_request() to ask for the current
 * task's user stack and gets the cookie of the current kernel entry, the
 * same cookie perf's and ftrace's deferred stacks of that entry carry.
 * When the task returns to user space, the stack is walked once for every
 * tracer that asked, and BPF's share is emitted as the tracepoint
 * unwind:unwind_user_stack, with the cookie and the frames. Programs attach
 * to it as tp_btf and join it to what they recorded by thread and cookie.
 *
 * One unwind work serves all BPF programs. It is registered while any
 * loaded program calls the kfunc: the verifier's kfunc filter marks a
 * program that calls it, bpf_prog_load() takes a reference for a marked
 * program once it is verified, and the program's free drops it, with the
 * delayed release perf uses, so that loading and unloading in a loop does
 * not flip the exit path's static key each time.
 *
 * Permissions: the kfunc only asks for the stack of the task the program
 * runs in, and only program types that need CAP_BPF and CAP_PERFMON (in
 * the initial user namespace, or through a BPF token) can call it: those
 * of the tracing kfunc hook (tracing, that is fentry/fexit and tp_btf,
 * tracepoint, perf_event and LSM) and kprobe. The delivery is a
 * tracepoint, reached by whoever may attach to it.
 */

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/init.h>
#include <linux/unwind_deferred.h>
#include <trace/events/unwind.h>

/* Context: task context of the unwound task; see unwind_callback_t. */
static void bpf_unwind_user_deliver(struct unwind_work *work,
				    struct unwind_stacktrace *trace,
				    u64 cookie)
{
	trace_unwind_user_stack(cookie, trace);
}

static DEFINE_UNWIND_SHARED_WORK(bpf_unwind, bpf_unwind_user_deliver);

__bpf_kfunc_start_defs();

/**
 * bpf_unwind_user_request - request the current task's deferred user stack
 *
 * Asks the deferred unwinder for the user stack of the current task as it
 * was when it entered the kernel. The stack is walked when the task
 * returns to user space (or exits or execs), once for every tracer that
 * asked during the entry, and emitted as the tracepoint
 * unwind:unwind_user_stack with the cookie returned here. Every request of
 * one kernel entry, from any program, returns the same cookie, and the
 * stack is emitted once.
 *
 * Context: any, NMI included. Never sleeps or faults.
 * Return: the cookie of the current kernel entry, which is positive; or
 * -EINVAL for a kernel thread, an io_uring or user worker, or an exiting
 * task; -EBUSY when BPF's unwind work could not be registered because every
 * tracer bit is taken (loading another program tries again); -EOPNOTSUPP
 * on a CPU without cmpxchg16b.
 */
__bpf_kfunc s64 bpf_unwind_user_request(void)
{
	u64 cookie;
	int ret;

	ret = unwind_deferred_request(&bpf_unwind.work, &cookie);
	if (ret < 0) {
		/* Tell "no tracer bit left" from a refused task. */
		if (ret == -EINVAL && !READ_ONCE(bpf_unwind.registered))
			return -EBUSY;
		return ret;
	}
	return cookie;
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(bpf_unwind_kfunc_ids)
BTF_ID_FLAGS(func, bpf_unwind_user_request)
BTF_KFUNCS_END(bpf_unwind_kfunc_ids)

BTF_ID_LIST_SINGLE(bpf_unwind_request_btf_id, func, bpf_unwind_user_request)

/*
 * The verifier asks the filters of a hook about every kfunc a program of
 * that hook calls, and only while it checks the program. It only records
 * here that the program calls ours: bpf_prog_load() takes the reference on
 * BPF's unwind work once the program is verified
 * (bpf_unwind_user_prog_load()), where it may sleep.
 */
static int bpf_unwind_kfunc_filter(const struct bpf_prog *prog, u32 kfunc_id)
{
	if (kfunc_id == bpf_unwind_request_btf_id[0])
		prog->aux->unwind_user = true;
	return 0;
}

static const struct btf_kfunc_id_set bpf_unwind_kfunc_set = {
	.owner	= THIS_MODULE,
	.set	= &bpf_unwind_kfunc_ids,
	.filter	= bpf_unwind_kfunc_filter,
};

/**
 * bpf_unwind_user_prog_load - a program was verified
 * @prog: the program
 *
 * A program that calls bpf_unwind_user_request() takes a reference on BPF's
 * unwind work, which registers it with the first such program. The
 * program's free drops the reference (bpf_unwind_user_prog_free()),
 * whether the load goes on to succeed or fails later.
 *
 * Context: task context (bpf_prog_load()); may sleep.
 */
void bpf_unwind_user_prog_load(struct bpf_prog *prog)
{
	might_sleep();
	if (!prog->aux->unwind_user)
		return;
	unwind_shared_get(&bpf_unwind);
	prog->aux->unwind_user_ref = true;
}

/**
 * bpf_unwind_user_prog_free - a program is freed
 * @aux: the program's aux data
 *
 * Drops the program's reference on BPF's unwind work, if it took one; the
 * last one releases the work a second later. A request the program made
 * that is still pending then either runs, emitting the tracepoint (which
 * calls whatever is attached to it at that time, never the freed program),
 * or is dropped by the release.
 *
 * Context: from bpf_prog_free_deferred(), a workqueue; does not sleep.
 */
void bpf_unwind_user_prog_free(struct bpf_prog_aux *aux)
{
	if (aux->unwind_user_ref)
		unwind_shared_put(&bpf_unwind);
}

static int __init bpf_unwind_kfuncs_init(void)
{
	int ret;

	ret = register_btf_kfunc_id_set(BPF_PROG_TYPE_TRACING,
					&bpf_unwind_kfunc_set);
	return ret ?: register_btf_kfunc_id_set(BPF_PROG_TYPE_KPROBE,
						&bpf_unwind_kfunc_set);
}
late_initcall(bpf_unwind_kfuncs_init);
