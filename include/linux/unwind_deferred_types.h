/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_DEFERRED_TYPES_H
#define _LINUX_UNWIND_DEFERRED_TYPES_H

#include <linux/atomic.h>
#include <linux/types.h>
#include <linux/unwind_user_types.h>

/**
 * struct unwind_cache - the user stack walked during one kernel entry
 * @cookie:	the entry's cookie; the trace is valid while it matches
 * @nr_entries:	number of valid entries
 * @truncated:	the walk stopped at the bound with frames left
 * @in_deep:	the entries are in @deep, not in @entries
 * @deep_cap:	entries @deep has room for
 * @deep:	for a stack deeper than @entries holds: a buffer sized to
 *		kernel.unwind_max_frames (plus one), taken the first time the
 *		task's stack was that deep, kept until the task is freed
 * @entries:	user instruction addresses, innermost first
 */
struct unwind_cache {
	u64		cookie;
	unsigned int	nr_entries;
	bool		truncated;
	bool		in_deep;
	unsigned int	deep_cap;
	unsigned long	*deep;
	unsigned long	entries[];
};

/**
 * union unwind_task_state - per-task request state, updated as one unit
 * @mask:	UNWIND_PENDING, UNWIND_USED and one bit per tracer that
 *		requested during the current kernel entry
 * @cookie:	the current entry's cookie, 0 while none was handed out
 * @full:	both, for 128-bit compare-and-exchange
 *
 * Requests may come from NMI. Updating the mask and the cookie with one
 * atomic operation means that a request can never see a cookie of one entry
 * together with the mask of another, wherever an NMI lands.
 */
union unwind_task_state {
	struct {
		unsigned long	mask;
		u64		cookie;
	};
#ifdef __SIZEOF_INT128__	/* not in 32-bit vDSO builds */
	u128			full;
#endif
} __aligned(16);

/**
 * struct unwind_task_info - deferred unwinding state embedded in task_struct
 * @state:	mask and cookie of the current kernel entry
 * @completed:	tracers already called back during the current entry
 * @cache:	the walked trace, allocated on first use
 * @regs:	where the entry's walk starts when UNWIND_REGS is set in the
 *		mask: the user state at kernel entry, kept before a signal
 *		frame or a system call restart rewrote the registers
 * @ctx_slot:	user address of the thread's OpenTelemetry context pointer
 *		(otel_thread_ctx_v1), registered with prctl(PR_UNWIND_CONTEXT);
 *		bit 0 set for a 4-byte pointer of a compat task; 0 when none.
 *		Only the task itself and its fork read or change it.
 * @ctx_cookie:	cookie of the last entry whose context was emitted, so that
 *		it is read once per entry however many runs the entry has
 * @nr_walks:	number of user stack walks this task did, for the test and
 *		benchmark clients (CONFIG_UNWIND_DEFERRED_WALK_COUNT)
 */
struct unwind_task_info {
	union unwind_task_state	state;
	atomic_long_t		completed;
	struct unwind_cache	*cache;
	struct unwind_user_state regs;
	unsigned long		ctx_slot;
	u64			ctx_cookie;
#ifdef CONFIG_UNWIND_DEFERRED_WALK_COUNT
	unsigned int		nr_walks;
#endif
};

#endif /* _LINUX_UNWIND_DEFERRED_TYPES_H */
