// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user callchains for perf: attr.defer_callchain, attr.defer_output
 * and PERF_RECORD_CALLCHAIN_DEFERRED.
 *
 * A sample of an event with defer_callchain does not walk the user stack in
 * the sampling context, which is often an NMI and cannot fault. It asks the
 * deferred unwinder for the current task's user stack instead and ends its
 * callchain with PERF_CONTEXT_USER_DEFERRED and the cookie of the current
 * kernel entry. When the task returns to user space, the unwinder walks the
 * stack once, in task context, and calls perf_callchain_deferred(). The trace
 * goes out as one PERF_RECORD_CALLCHAIN_DEFERRED, carrying the same cookie,
 * to every defer_output event that the task's side-band records reach:
 * per-CPU events on the current CPU and the task's own events. Tools attach
 * it to the samples with the same TID and cookie.
 *
 * Permissions need nothing new. A sample only defers the callchain of the
 * task it samples and never a cross-task one, and the record reaches exactly
 * the events that would have seen that task's ordinary side-band records and
 * user callchains.
 */

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/unwind_deferred.h>
#include <linux/workqueue.h>

#include "internal.h"

/*
 * A record's size is 16 bits wide. Leave room for the fixed fields and the
 * largest sample_id: 8159 entries. kernel.unwind_max_frames may be set
 * higher; such chains are cut here, unmarked, as the record has no room
 * for a mark (Documentation/trace/unwind_deferred.rst).
 */
#define PERF_DEFERRED_MAX_IPS	((U16_MAX - 256U) / sizeof(u64))

static void perf_callchain_deferred(struct unwind_work *work,
				    struct unwind_stacktrace *trace, u64 cookie);

/*
 * One unwind work for all of perf: each kernel entry is walked only once.
 * It is registered while at least one event with defer_callchain exists
 * (an inherited event counts through its parent), so that with none the
 * deferred unwinder costs nothing on return to user space.
 */
static DEFINE_UNWIND_SHARED_WORK(perf_unwind, perf_callchain_deferred);

struct perf_callchain_deferred_event {
	struct unwind_stacktrace	*trace;
	struct {
		struct perf_event_header	header;
		u64				cookie;
		u64				nr;
	} event_id;
};

static void perf_callchain_deferred_output(struct perf_event *event,
					   void *data)
{
	struct perf_callchain_deferred_event *deferred = data;
	struct unwind_stacktrace *trace = deferred->trace;
	struct perf_output_handle handle;
	struct perf_sample_data sample;
	unsigned int i;

	if (!event->attr.defer_output)
		return;

	perf_event_header__init(&deferred->event_id.header, &sample,
				PERF_RECORD_CALLCHAIN_DEFERRED,
				PERF_RECORD_MISC_USER,
				sizeof(deferred->event_id) +
				deferred->event_id.nr * sizeof(u64), event);

	/* A full buffer counts the record as lost, as for any other record. */
	if (perf_output_begin(&handle, &sample, event,
			      deferred->event_id.header.size))
		return;

	perf_output_put(&handle, deferred->event_id);
	if (sizeof(unsigned long) == sizeof(u64)) {
		/* The trace is already an array of u64: copy it at once. */
		perf_output_copy(&handle, trace->entries,
				 deferred->event_id.nr * sizeof(u64));
	} else {
		for (i = 0; i < deferred->event_id.nr; i++) {
			u64 ip = trace->entries[i];

			perf_output_put(&handle, ip);
		}
	}
	perf_event__output_id_sample(event, &handle, &sample);
	perf_output_end(&handle);
}

/*
 * Called by the deferred unwinder in the context of the task that was
 * sampled, before it returns to user space (or while it exits or execs, with
 * its mm still there). The record goes out even when the walk failed (nr is
 * 0 then), so that tools know the entry is over and stop waiting for it.
 */
static void perf_callchain_deferred(struct unwind_work *work,
				    struct unwind_stacktrace *trace, u64 cookie)
{
	struct perf_callchain_deferred_event deferred = {
		.trace		= trace,
		.event_id	= {
			.cookie	= cookie,
			.nr	= min_t(u64, trace->nr, PERF_DEFERRED_MAX_IPS),
		},
	};

	perf_iterate_sb(perf_callchain_deferred_output, &deferred, NULL);
}

/**
 * perf_callchain_defer_request - ask for the current task's user callchain
 *
 * Asks the deferred unwinder to walk the current task's user stack when it
 * next returns to user space, and to emit it as
 * PERF_RECORD_CALLCHAIN_DEFERRED.
 *
 * Context: any, including NMI. Never sleeps or faults.
 * Return: the cookie of the current kernel entry, or 0 if the request was
 * refused (kernel thread, exiting task, no support, perf's work not
 * registered). The caller then walks
 * the user stack in place, as without defer_callchain.
 */
u64 perf_callchain_defer_request(void)
{
	u64 cookie;

	if (unwind_deferred_request(&perf_unwind.work, &cookie) < 0)
		return 0;
	return cookie;
}

/**
 * perf_callchain_defer_get - an event with defer_callchain was created
 *
 * Registers perf's unwind work with the first such event. If that fails
 * (every tracer bit taken), requests are refused and samples walk the user
 * stack in place, as without defer_callchain; the next event tries again.
 *
 * Context: task context (from perf_event_alloc()); may sleep, see
 * unwind_shared_get().
 */
void perf_callchain_defer_get(void)
{
	unwind_shared_get(&perf_unwind);
}

/**
 * perf_callchain_defer_put - an event with defer_callchain was freed
 *
 * The last one schedules the release of perf's unwind work, a second later.
 *
 * Context: from _free_event(); does not sleep.
 */
void perf_callchain_defer_put(void)
{
	unwind_shared_put(&perf_unwind);
}
