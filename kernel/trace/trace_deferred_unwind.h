/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deferred user stacks for trace instances: the userstacktrace_delay option.
 * See kernel/trace/trace_deferred_unwind.c.
 */
#ifndef _TRACE_DEFERRED_UNWIND_H
#define _TRACE_DEFERRED_UNWIND_H

#include "trace.h"

#ifdef CONFIG_UNWIND_DEFERRED

int trace_deferred_unwind_set(struct trace_array *tr, bool enable);
void __trace_deferred_unwind_request(struct trace_array *tr,
				     struct trace_buffer *buffer,
				     unsigned int trace_ctx);

/*
 * Called right after an event of @tr was committed to @buffer. One load and
 * a branch when the option is off.
 */
static __always_inline void
trace_deferred_unwind_request(struct trace_array *tr,
			      struct trace_buffer *buffer,
			      unsigned int trace_ctx)
{
	if (unlikely(tr->trace_flags & TRACE_ITER_USERSTACKTRACE_DELAY))
		__trace_deferred_unwind_request(tr, buffer, trace_ctx);
}

#else /* !CONFIG_UNWIND_DEFERRED */

static inline int trace_deferred_unwind_set(struct trace_array *tr,
					    bool enable)
{
	return 0;
}

static inline void trace_deferred_unwind_request(struct trace_array *tr,
						 struct trace_buffer *buffer,
						 unsigned int trace_ctx)
{
}

#endif /* CONFIG_UNWIND_DEFERRED */

#endif /* _TRACE_DEFERRED_UNWIND_H */
