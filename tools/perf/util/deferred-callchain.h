/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_DEFERRED_CALLCHAIN_H
#define __PERF_DEFERRED_CALLCHAIN_H

#include <stdbool.h>
#include <linux/list.h>
#include <linux/types.h>
#include "hashmap.h"
#include "sample.h"

struct evsel;
struct machine;
struct perf_tool;
union perf_event;
struct deferred_callchains;

/*
 * A sample whose callchain ends with PERF_CONTEXT_USER_DEFERRED and a
 * cookie, held until the PERF_RECORD_CALLCHAIN_DEFERRED record with the user
 * part arrives. It owns a copy of the sample record; @sample points into it.
 */
struct deferred_sample {
	struct list_head	list;
	union perf_event	*event;
	struct perf_sample	sample;
	struct evsel		*evsel;
	struct machine		*machine;
	const struct perf_tool	*tool;
	u64			cookie;
};

/*
 * Deliver a held sample. @ds->sample.callchain is the merged callchain
 * while this runs, or the one recorded when the user part never came.
 */
typedef int (*deferred_callchains__deliver_t)(struct deferred_callchains *dc,
					      struct deferred_sample *ds);

/*
 * The samples waiting for their user part, in the order they were added,
 * which is the order of time when the caller delivers ordered events, and
 * by TID the user part of each thread's last record (struct
 * deferred_record), for the samples of its entry that come after it.
 */
struct deferred_callchains {
	struct list_head		samples;
	unsigned int			nr_samples;
	struct hashmap			records;
	deferred_callchains__deliver_t	deliver;
	/* Statistics */
	u64				nr_merged;
	u64				nr_unmerged;
};

void deferred_callchains__init(struct deferred_callchains *dc,
			       deferred_callchains__deliver_t deliver);
/* Drop the held samples without delivering them. */
void deferred_callchains__exit(struct deferred_callchains *dc);

/* Does @sample wait for a deferred user part? Get its cookie if so. */
bool perf_sample__deferred_cookie(const struct perf_sample *sample, u64 *cookie);

/*
 * Hold a copy of a sample that waits for its user part, or deliver it at
 * once with the user part of the last record of its thread if that has
 * its cookie. -EINVAL if it does not wait for one.
 */
int deferred_callchains__add(struct deferred_callchains *dc,
			     union perf_event *event, struct perf_sample *sample,
			     struct evsel *evsel, struct machine *machine,
			     const struct perf_tool *tool);

/*
 * The user part @ips[@nr] of the samples of @tid with @cookie arrived:
 * deliver them with the merged callchain. The held samples of @tid with
 * other cookies will never get theirs: deliver them as recorded. All in
 * the order they were added, except that a context event of the entry
 * (unwind:unwind_user_context) comes first: it describes the others.
 * Keep a copy of the user part for the samples of the entry yet to come.
 */
int deferred_callchains__process(struct deferred_callchains *dc, u32 tid,
				 u64 cookie, u64 nr, const __u64 *ips);

/*
 * Deliver as recorded the held samples of @tid, those taken before @time,
 * or all of them. The thread @tid exited: forget its last record too.
 */
int deferred_callchains__flush_tid(struct deferred_callchains *dc, u32 tid);
int deferred_callchains__flush_before(struct deferred_callchains *dc, u64 time);
int deferred_callchains__flush(struct deferred_callchains *dc);

#endif /* __PERF_DEFERRED_CALLCHAIN_H */
