/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What bpf_unwind's programs and its user side share: one array element,
 * mapped into the test (BPF_F_MMAPABLE), rather than global data, which
 * libbpf only creates after a socket-filter probe that a kernel without
 * networking refuses.
 */
#ifndef _SELFTESTS_UNWIND_BPF_UNWIND_H
#define _SELFTESTS_UNWIND_BPF_UNWIND_H

#include <linux/types.h>

#define NREC		16	/* requests and deliveries kept per check */
#define NIPS		8	/* frames kept per stack */
#define PF_EXITING	0x00000004
#define PF_KTHREAD	0x00200000

struct bpf_unwind_state {
	/* Set by user space. */
	__s32	target_tid;		/* the test's thread */
	__s32	exit_tid;		/* a child whose exit is probed */
	__s32	second_on;		/* the second requester of the entry */
	__s32	kthread_on;		/* the kernel-thread probe */
	__s32	read_on;		/* the second requester, on read() */

	/* sys_enter_getppid: the kfunc's answers, and bpf_get_stack()'s. */
	__u32	nreq;
	__u32	nreq2;			/* the second requester's */
	__s64	req_cookie[NREC];
	__s64	req2_cookie[NREC];
	__s64	anchor_len[NREC];	/* bytes, or a negative errno */
	__u64	anchor[NREC][NIPS];

	/* unwind:unwind_user_stack for the test's thread. */
	__u32	ndeliv;
	__u32	deliv_nr[NREC];
	__u32	deliv_truncated[NREC];
	__u64	deliv_cookie[NREC];
	__u64	deliv_ips[NREC][NIPS];

	/* User-stack walks made for the test's thread. */
	__u32	nwalks;

	/* The first request from a kernel thread, and from the exiting child. */
	__u32	kthread_seen;
	__s32	kthread_pid;
	__s32	kthread_done;		/* kthread_ret is set */
	__s64	kthread_ret;
	__u32	exit_seen;
	__u32	exit_flags;
	__s64	exit_ret;

	/* fexit of __unwind_reset_info(), if it attaches: its requests. */
	__u32	nreset;
	__s64	reset_cookie[NREC];
};

/*
 * The bench driver's programs (bpf_unwind --bench): what a profiler does,
 * for every thread of one process, counted here.
 */
#define BENCH_FRAMES	512	/* frames copied per stack, at most */

struct bpf_unwind_bench {
	/* Set by user space. */
	__s32	tgid;			/* the process measured */
	__s32	offcpu;			/* join deliveries to off-CPU times */

	__u64	events;			/* bench_event's calls */
	__u64	requests;		/* the kfunc returned a cookie */
	__u64	refused;		/* it returned an error */
	__u64	deliveries;
	__u64	frames;			/* copied, over all deliveries */
	__u64	last_nr;		/* frames of the last delivery */
	__u64	switch_ins;		/* off-CPU times measured */
	__u64	joined;			/* deliveries that found their time */
	__u64	offcpu_ns;		/* the times joined */
};

/* In bpf_unwind_nofp.c, built without frame pointers, with SFrame only. */
long nofp_f1(unsigned long *ips);

#endif /* _SELFTESTS_UNWIND_BPF_UNWIND_H */
