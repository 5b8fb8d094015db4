// SPDX-License-Identifier: GPL-2.0
/*
 * unwindprof's BPF side: ask the deferred unwinder for the user stack of
 * each on-CPU sample or off-CPU interval of the selected tasks, and hand
 * user space the samples and, later, the stacks, to be joined there by
 * thread and cookie.
 *
 * The kernel types are declared here with preserve_access_index instead of
 * coming from vmlinux.h: the object then builds before the kernel with the
 * series exists, and libbpf relocates the few fields read against the
 * running kernel's BTF.
 */
#include <stdbool.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "unwindprof.h"

#define PF_KTHREAD	0x00200000

struct task_struct {
	unsigned int flags;
	int pid;
	int tgid;
	char comm[UP_COMM_LEN];
} __attribute__((preserve_access_index));

struct unwind_stacktrace {
	unsigned int nr;
	bool truncated;
	unsigned long *entries;
} __attribute__((preserve_access_index));

struct unwind_context_record {
	__u8 trace_id[16];
	__u8 span_id[8];
} __attribute__((preserve_access_index));

extern __s64 __ksym bpf_unwind_user_request(void);

/*
 * What user space asks for, in a map rather than in .rodata: libbpf
 * probes for global data with a socket filter program, which a kernel
 * without CONFIG_NET (the test guest's) cannot load, and then leaves
 * .rodata out.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct up_config);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

struct blocked {
	__u64 start;
	__u64 cookie;
};

/*
 * Threads that blocked, by tid. LRU: a thread that blocks and then exits
 * without being switched in again would otherwise keep its slot for good.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct blocked);
} blocked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UP_CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* A stack record is too big for the BPF stack: it is built here. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct up_stack);
} scratch SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		__sync_fetch_and_add(c, 1);
}

/* Room for a record of @size in the ring, or NULL with the loss counted. */
static __always_inline void *reserve(__u64 size)
{
	void *e = bpf_ringbuf_reserve(&rb, size, 0);

	if (!e)
		count(UP_CNT_LOST);
	return e;
}

static __always_inline struct up_config *get_config(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&config, &zero);
}

static __always_inline bool selected(__u32 tgid)
{
	struct up_config *c = get_config();

	/*
	 * Not ourselves: with -a, every stack we symbolize would be sampled
	 * and symbolized in turn.
	 */
	if (!c || tgid == c->self_tgid)
		return false;
	if (c->filter_all)
		return true;
	return bpf_map_lookup_elem(&targets, &tgid);
}

/*
 * The header every record starts with, for the current task: what it is,
 * whose, and for which kernel entry (the cookie).
 */
static __always_inline void hdr_current(struct up_hdr *h, __u32 kind,
					__s64 cookie, __u64 weight, __u32 nr)
{
	__u64 id = bpf_get_current_pid_tgid();

	h->kind = kind;
	h->tid = id;
	h->pid = id >> 32;
	h->cookie = cookie;
	h->weight = weight;
	h->nr = nr;
	bpf_get_current_comm(h->comm, sizeof(h->comm));
}

SEC("perf_event")
int on_sample(void *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	struct up_config *cfg;
	struct up_sample *e;
	__s64 cookie;
	long n;

	/* The idle task and kernel threads have no user stack. */
	if (!(__u32)id || (task->flags & PF_KTHREAD) || !selected(id >> 32))
		return 0;
	cookie = bpf_unwind_user_request();
	if (cookie < 0) {
		count(UP_CNT_REQ_FAIL);
		return 0;
	}
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	hdr_current(&e->h, UP_SAMPLE, cookie, 1, 0);
	cfg = get_config();
	if (cfg && cfg->want_kernel) {
		n = bpf_get_stack(ctx, e->kframes, sizeof(e->kframes), 0);
		if (n > 0)
			e->h.nr = n / sizeof(e->kframes[0]);
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/*
 * Off-CPU time: a selected thread that blocks (not one that is only
 * preempted: a busy thread waits for no event, and its time is on-CPU
 * time) asks for its stack as it leaves the CPU, here in its own context;
 * the interval is closed when it is switched in again. The stack comes
 * when it returns to user space, after the interval's record.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	struct blocked *b, nb;
	struct up_hdr *e;
	__u32 tid;
	__s64 cookie;

	if (!preempt && prev_state && !(prev->flags & PF_KTHREAD) &&
	    selected(prev->tgid)) {
		cookie = bpf_unwind_user_request();
		if (cookie >= 0) {
			tid = prev->pid;
			nb.start = now;
			nb.cookie = cookie;
			bpf_map_update_elem(&blocked, &tid, &nb, BPF_ANY);
		} else {
			count(UP_CNT_REQ_FAIL);
		}
	}
	tid = next->pid;
	b = bpf_map_lookup_elem(&blocked, &tid);
	if (!b)
		return 0;
	e = reserve(sizeof(*e));
	if (e) {
		e->kind = UP_OFFCPU;
		e->tid = tid;
		e->pid = next->tgid;
		e->nr = 0;
		e->cookie = b->cookie;
		e->weight = now - b->start;
		bpf_probe_read_kernel(e->comm, sizeof(e->comm), next->comm);
		bpf_ringbuf_submit(e, 0);
	}
	bpf_map_delete_elem(&blocked, &tid);
	return 0;
}

/* Runs in the unwound task, once per kernel entry that asked. */
SEC("tp_btf/unwind_user_stack")
int BPF_PROG(on_stack, __u64 cookie, const struct unwind_stacktrace *trace)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct up_stack *e;
	__u32 zero = 0, nr;
	unsigned long *entries;

	if (!selected(id >> 32))
		return 0;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	nr = trace->nr;
	entries = trace->entries;
	/*
	 * weight: the walk's own count, before the cap, and its cut (a
	 * kernel older than the bound has no such field, and cuts at 510).
	 */
	hdr_current(&e->h, UP_STACK, cookie,
		    nr | (bpf_core_field_exists(trace->truncated) &&
			  trace->truncated ? UP_STACK_TRUNCATED : 0), 0);
	if (nr > UP_MAX_FRAMES)
		nr = UP_MAX_FRAMES;
	if (nr && bpf_probe_read_kernel(e->frames, nr * sizeof(e->frames[0]), entries))
		nr = 0;
	e->h.nr = nr;
	if (bpf_ringbuf_output(&rb, e, sizeof(e->h) + nr * sizeof(e->frames[0]), 0))
		count(UP_CNT_LOST);
	return 0;
}

/* The thread's span, read just before the stack of the same entry. */
SEC("tp_btf/unwind_user_context")
int BPF_PROG(on_ctx, __u64 cookie, int status,
	     const struct unwind_context_record *rec, unsigned int attrs_size)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct up_ctx *e;

	if (!selected(id >> 32))
		return 0;
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	hdr_current(&e->h, UP_CTX, cookie, status, 0);
	bpf_probe_read_kernel(e->trace_id, sizeof(e->trace_id), rec->trace_id);
	bpf_probe_read_kernel(e->span_id, sizeof(e->span_id), rec->span_id);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/*
 * A selected process replaced its image: user space drops what it knows
 * of the old mappings. (A COMMAND is selected from before its exec.)
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, int old_pid, void *bprm)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct up_hdr *e;

	if (!selected(id >> 32))
		return 0;
	e = reserve(sizeof(*e));
	if (!e)
		return 0;
	hdr_current(e, UP_EXEC, 0, 0, 0);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
