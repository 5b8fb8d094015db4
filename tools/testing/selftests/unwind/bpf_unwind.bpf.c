// SPDX-License-Identifier: GPL-2.0
/*
 * BPF side of bpf_unwind: programs that ask for the deferred user stack of
 * the test's thread with bpf_unwind_user_request(), record what the kfunc
 * returned and what bpf_get_stack() walks in place, and record every
 * delivery of unwind:unwind_user_stack. The user side (bpf_unwind.c) says
 * which thread, arms the optional requesters, and reads it all back from
 * the shared state after each system call: the delivery happens before
 * the call returns to user space, so nothing needs waiting for.
 *
 * No vmlinux.h: the two kernel structures read here are declared below
 * with the fields used, and CO-RE finds them in the running kernel's BTF,
 * so that this object builds before the kernel does.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <asm/unistd.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpf_unwind.h"

struct unwind_stacktrace {
	unsigned int	nr;
	bool		truncated;
	unsigned long	*entries;
} __attribute__((preserve_access_index));

struct task_struct {
	unsigned int	flags;
	int		pid;
	int		tgid;
} __attribute__((preserve_access_index));

extern __s64 __ksym bpf_unwind_user_request(void);

/* One element, mapped by the test: see bpf_unwind.h. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct bpf_unwind_state);
} state SEC(".maps");

/* The state if the current thread is the test's, else NULL. */
static __always_inline struct bpf_unwind_state *target(void)
{
	struct bpf_unwind_state *st;
	__u32 key = 0;

	st = bpf_map_lookup_elem(&state, &key);
	if (!st || !st->target_tid ||
	    (__u32)bpf_get_current_pid_tgid() != st->target_tid)
		return NULL;
	return st;
}

static __always_inline struct bpf_unwind_state *get_state(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&state, &key);
}

/*
 * Returns 1: a tracepoint program's 0 keeps the event from the perf events
 * opened on it (result 9's).
 */
SEC("tracepoint/syscalls/sys_enter_getppid")
int request_getppid(void *ctx)
{
	struct bpf_unwind_state *st = target();
	__u32 i;

	if (!st)
		return 1;
	i = st->nreq;
	if (i >= NREC)
		return 1;
	st->nreq = i + 1;
	st->req_cookie[i] = bpf_unwind_user_request();
	/* What BPF has without the series: frame pointers, walked in place. */
	st->anchor_len[i] = bpf_get_stack(ctx, st->anchor[i], sizeof(st->anchor[i]),
					  BPF_F_USER_STACK);
	return 1;
}

/*
 * A second program, of another type (tracing, BTF-enabled raw tracepoint),
 * in the same entry. Not fentry on the system call: __x64_sys_getppid()
 * has no BTF.
 */
SEC("tp_btf/sys_enter")
int BPF_PROG(request_again, void *regs, long id)
{
	struct bpf_unwind_state *st = target();
	__u32 i;

	if (!st || !((st->second_on && id == __NR_getppid) ||
		     (st->read_on && id == __NR_read)))
		return 0;
	i = st->nreq2;
	if (i >= NREC)
		return 0;
	st->req2_cookie[i] = bpf_unwind_user_request();
	/*
	 * Counted after the cookie is stored: result 11's other thread
	 * reads the cookie as soon as it sees the count, while this thread
	 * is still in its read(). The x86 JIT keeps the order of stores, as
	 * on_work() relies on for kthread_done.
	 */
	asm volatile("" : : : "memory");
	st->nreq2 = i + 1;
	return 0;
}

SEC("tp_btf/unwind_user_stack")
int BPF_PROG(on_stack, __u64 cookie, const struct unwind_stacktrace *trace)
{
	struct bpf_unwind_state *st = target();
	__u32 i;

	if (!st)
		return 0;
	i = st->ndeliv;
	/* Counted past NREC too: a surplus delivery must show. */
	st->ndeliv = i + 1;
	if (i >= NREC)
		return 0;
	st->deliv_cookie[i] = cookie;
	st->deliv_nr[i] = trace->nr;
	/* A kernel without the bound (cut at its page) fails 10-12 only. */
	st->deliv_truncated[i] = bpf_core_field_exists(trace->truncated) &&
				 trace->truncated;
	/*
	 * The entries are the task's unwind cache, UNWIND_MAX_ENTRIES long,
	 * or its buffer for deeper stacks, longer: reading NIPS of them is in
	 * bounds whatever nr is.
	 */
	bpf_probe_read_kernel(st->deliv_ips[i], sizeof(st->deliv_ips[i]),
			      trace->entries);
	return 0;
}

/*
 * Every walk the deferred unwinder makes goes through one of these two
 * (unwind_walk_cached()): counting them proves one walk per entry however
 * many tracers asked.
 */
SEC("fentry/unwind_user")
int BPF_PROG(walk_user)
{
	struct bpf_unwind_state *st = target();

	if (st)
		__sync_fetch_and_add(&st->nwalks, 1);
	return 0;
}

SEC("fentry/unwind_user_from")
int BPF_PROG(walk_user_from)
{
	struct bpf_unwind_state *st = target();

	if (st)
		__sync_fetch_and_add(&st->nwalks, 1);
	return 0;
}

/* Work items run in kworkers: kernel threads. */
SEC("tp_btf/workqueue_execute_start")
int BPF_PROG(on_work, void *work)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct bpf_unwind_state *st = get_state();

	if (!st || !st->kthread_on || !(t->flags & PF_KTHREAD))
		return 0;
	if (__sync_fetch_and_add(&st->kthread_seen, 1))
		return 0;
	st->kthread_pid = t->pid;
	st->kthread_ret = bpf_unwind_user_request();
	/*
	 * Stored last (clang 14 has no BPF store-release): the x86 JIT keeps
	 * the order of stores, and x86 makes them visible in that order.
	 */
	asm volatile("" : : : "memory");
	st->kthread_done = 1;
	return 0;
}

/* Runs in the exiting task, after do_exit() set PF_EXITING. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct bpf_unwind_state *st = get_state();

	if (!st || !st->exit_tid ||
	    (__u32)bpf_get_current_pid_tgid() != st->exit_tid)
		return 0;
	if (__sync_fetch_and_add(&st->exit_seen, 1))
		return 0;
	st->exit_flags = t->flags;
	st->exit_ret = bpf_unwind_user_request();
	return 0;
}

/*
 * A return probe on the end of the entry (or, with another attach target
 * set by result 12, on what returns after it), which must not attach: if
 * it did, its request would come after the reset and raise no interrupt.
 * One request per getppid() entry, so that a kernel that kicked for it
 * would not request on every kick's return again. Loaded by result 12
 * alone (reset_*).
 */
SEC("fexit/__unwind_reset_info")
int BPF_PROG(reset_exit)
{
	struct bpf_unwind_state *st = target();
	__u32 i;

	if (!st)
		return 0;
	i = st->nreset;
	if (i >= NREC || i >= st->nreq)
		return 0;
	st->reset_cookie[i] = bpf_unwind_user_request();
	st->nreset = i + 1;
	return 0;
}

/*
 * The bench driver's programs (bpf_unwind --bench), named bench_*: the
 * tests load none of them, the driver only them. What a profiler does:
 * request at an event, copy the frames at the delivery; and off-CPU
 * profiling, which requests when a task blocks, measures how long it was
 * off the CPU when it comes back, and joins that time to the stack by
 * thread and cookie at the delivery.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct bpf_unwind_bench);
} bench SEC(".maps");

struct bench_frames {
	__u64	ips[BENCH_FRAMES];
};

/* Where each delivery's frames are copied to. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bench_frames);
} bench_copy SEC(".maps");

struct bench_start {
	__u64	ns;
	__s64	cookie;
};

/* Thread id -> when it went off the CPU, and the cookie of that entry. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct bench_start);
} bench_start SEC(".maps");

struct bench_key {
	__u32	tid;
	__u32	pad;
	__u64	cookie;
};

/* (thread, cookie) -> its time off the CPU, until the stack comes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct bench_key);
	__type(value, __u64);
} bench_offcpu SEC(".maps");

static __always_inline struct bpf_unwind_bench *bench_state(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&bench, &key);
}

static __always_inline void bench_count(struct bpf_unwind_bench *b, __s64 ret)
{
	if (ret > 0)
		__sync_fetch_and_add(&b->requests, 1);
	else
		__sync_fetch_and_add(&b->refused, 1);
}

SEC("tracepoint/syscalls/sys_enter_getppid")
int bench_request(void *ctx)
{
	struct bpf_unwind_bench *b = bench_state();

	if (!b || !b->tgid || (bpf_get_current_pid_tgid() >> 32) != b->tgid)
		return 0;
	bench_count(b, bpf_unwind_user_request());
	return 0;
}

/* The same event and filter without the request: what the event costs. */
SEC("tracepoint/syscalls/sys_enter_getppid")
int bench_event(void *ctx)
{
	struct bpf_unwind_bench *b = bench_state();

	if (!b || !b->tgid || (bpf_get_current_pid_tgid() >> 32) != b->tgid)
		return 0;
	__sync_fetch_and_add(&b->events, 1);
	return 0;
}

SEC("tp_btf/unwind_user_stack")
int BPF_PROG(bench_stack, __u64 cookie, const struct unwind_stacktrace *trace)
{
	struct bpf_unwind_bench *b = bench_state();
	__u64 id = bpf_get_current_pid_tgid();
	struct bench_frames *f;
	struct bench_key k = {};
	__u32 key = 0, nr;
	__u64 *ns;

	if (!b || !b->tgid || (id >> 32) != b->tgid)
		return 0;
	f = bpf_map_lookup_elem(&bench_copy, &key);
	if (!f)
		return 0;
	nr = trace->nr;
	if (nr > BENCH_FRAMES - 1)
		nr = BENCH_FRAMES - 1;
	bpf_probe_read_kernel(f->ips, nr * sizeof(__u64), trace->entries);
	__sync_fetch_and_add(&b->deliveries, 1);
	__sync_fetch_and_add(&b->frames, nr);
	b->last_nr = trace->nr;
	if (!b->offcpu)
		return 0;
	k.tid = (__u32)id;
	k.cookie = cookie;
	ns = bpf_map_lookup_elem(&bench_offcpu, &k);
	if (!ns)
		return 0;
	__sync_fetch_and_add(&b->offcpu_ns, *ns);
	__sync_fetch_and_add(&b->joined, 1);
	bpf_map_delete_elem(&bench_offcpu, &k);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(bench_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct bpf_unwind_bench *b = bench_state();
	struct bench_start s, *sp;
	struct bench_key k = {};
	__u32 tid;
	__u64 ns;

	if (!b || !b->tgid)
		return 0;
	if (prev->tgid == b->tgid) {
		/* prev is current: its stack is the one requested. */
		s.ns = bpf_ktime_get_ns();
		s.cookie = bpf_unwind_user_request();
		bench_count(b, s.cookie);
		tid = prev->pid;
		bpf_map_update_elem(&bench_start, &tid, &s, BPF_ANY);
	}
	if (next->tgid == b->tgid) {
		tid = next->pid;
		sp = bpf_map_lookup_elem(&bench_start, &tid);
		if (!sp)
			return 0;
		ns = bpf_ktime_get_ns() - sp->ns;
		__sync_fetch_and_add(&b->switch_ins, 1);
		if (sp->cookie > 0) {
			k.tid = tid;
			k.cookie = sp->cookie;
			bpf_map_update_elem(&bench_offcpu, &k, &ns, BPF_ANY);
		}
		bpf_map_delete_elem(&bench_start, &tid);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
