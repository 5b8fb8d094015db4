/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What unwind_hostile's BPF programs and its user side share: one array
 * element, mapped into the test (BPF_F_MMAPABLE), with a slot per worker
 * thread. A worker reads its slot right after each of its kernel entries:
 * the delivery happens before the entry returns to user space.
 */
#ifndef _SELFTESTS_UNWIND_HOSTILE_H
#define _SELFTESTS_UNWIND_HOSTILE_H

#include <linux/types.h>

#define HOSTILE_WORKERS	4	/* worker threads, at most */
#define HOSTILE_FRAMES	32	/* frames kept per delivery */

struct hostile_slot {
	/* Set by user space: the worker's thread ID, 0 for a free slot. */
	__s32	tid;
	/* Requests the kfunc took (a cookie), refused (an error). */
	__u32	nreq;
	__u32	nrefused;
	__s64	req_cookie;		/* the last one */
	/* unwind:unwind_user_stack for the worker. */
	__u32	ndeliv;
	__u32	nr;			/* of the last delivery */
	__u64	cookie;
	__u64	ips[HOSTILE_FRAMES];
};

struct hostile_bpf {
	struct hostile_slot	slot[HOSTILE_WORKERS];
};

#endif /* _SELFTESTS_UNWIND_HOSTILE_H */
