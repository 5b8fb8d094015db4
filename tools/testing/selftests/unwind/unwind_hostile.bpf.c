// SPDX-License-Identifier: GPL-2.0
/*
 * BPF side of unwind_hostile: the fuzzer's workers ask for their deferred
 * user stack with bpf_unwind_user_request() at each getppid() and
 * sched_yield() and at each SIGSEGV their own faults generate, and every
 * delivery of unwind:unwind_user_stack to a worker is copied into its
 * slot. The user side compares the copy with the stack it built for that
 * entry.
 *
 * No vmlinux.h: the one kernel structure read here is declared below with
 * the fields used, and CO-RE finds it in the running kernel's BTF.
 */
#include <linux/bpf.h>
#include <asm/unistd.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "unwind_hostile.h"

struct unwind_stacktrace {
	unsigned int	nr;
	unsigned long	*entries;
} __attribute__((preserve_access_index));

extern __s64 __ksym bpf_unwind_user_request(void);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct hostile_bpf);
} hostile SEC(".maps");

/* The current thread's slot if it is one of the workers, else NULL. */
static __always_inline struct hostile_slot *worker_slot(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), key = 0;
	struct hostile_bpf *h = bpf_map_lookup_elem(&hostile, &key);
	int i;

	if (!h)
		return NULL;
	for (i = 0; i < HOSTILE_WORKERS; i++)
		if (h->slot[i].tid && h->slot[i].tid == tid)
			return &h->slot[i];
	return NULL;
}

static __always_inline void request(void)
{
	struct hostile_slot *s = worker_slot();
	__s64 cookie;

	if (!s)
		return;
	cookie = bpf_unwind_user_request();
	if (cookie < 0) {
		s->nrefused++;
		return;
	}
	s->req_cookie = cookie;
	s->nreq++;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(hostile_sys_enter, void *regs, long id)
{
	if (id == __NR_getppid || id == __NR_sched_yield)
		request();
	return 0;
}

/* A worker's own fault: SIGSEGV generated in the faulting thread. */
SEC("tp_btf/signal_generate")
int BPF_PROG(hostile_signal, int sig, void *info, void *task, int group,
	     int result)
{
	if (sig == 11)
		request();
	return 0;
}

SEC("tp_btf/unwind_user_stack")
int BPF_PROG(hostile_stack, __u64 cookie, const struct unwind_stacktrace *trace)
{
	struct hostile_slot *s = worker_slot();

	if (!s)
		return 0;
	s->cookie = cookie;
	s->nr = trace->nr;
	/*
	 * The entries are the task's unwind cache, far longer than
	 * HOSTILE_FRAMES: reading that many is in bounds whatever nr is.
	 */
	bpf_probe_read_kernel(s->ips, sizeof(s->ips), trace->entries);
	/* Counted last: the worker reads the copy once it sees the count. */
	asm volatile("" : : : "memory");
	s->ndeliv++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
