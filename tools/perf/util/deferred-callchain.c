// SPDX-License-Identifier: GPL-2.0
/*
 * Merge deferred user callchains into the samples that wait for them.
 *
 * A sample of an event with attr.defer_callchain carries the kernel part of
 * its callchain, then PERF_CONTEXT_USER_DEFERRED and a cookie. The user part
 * comes later, when the thread returns to user space, in a
 * PERF_RECORD_CALLCHAIN_DEFERRED record with the same cookie. Hold such
 * samples until the record of their thread arrives, then deliver them with
 * the kernel part, PERF_CONTEXT_USER and the user addresses.
 *
 * A thread's samples and records come in the order of its kernel entries,
 * so a record with another cookie means that the held samples of that
 * thread lost their record: deliver them as recorded. This keeps at most
 * one kernel entry's worth of samples per thread.
 *
 * A sample can also come after the record of its entry: one taken while
 * the thread ran the deferred callbacks, or in an interrupt on its way out
 * after them. The kernel calls each tracer back once per entry, so no other
 * record comes for it: keep each thread's last user part until its next
 * record or its exit, and merge such a sample at once.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <linux/compiler.h>
#include <linux/perf_event.h>
#include <linux/string.h>
#include <linux/zalloc.h>

#include "deferred-callchain.h"
#include "event.h"
#include "evsel.h"
#include "unwind-context.h"

/* The user part of a thread's last record, kept by TID. */
struct deferred_record {
	u64	cookie;
	u64	nr;
	__u64	ips[];
};

static size_t tid_hash(long key, void *ctx __maybe_unused)
{
	return key;
}

static bool tid_equal(long key1, long key2, void *ctx __maybe_unused)
{
	return key1 == key2;
}

void deferred_callchains__init(struct deferred_callchains *dc,
			       deferred_callchains__deliver_t deliver)
{
	INIT_LIST_HEAD(&dc->samples);
	dc->nr_samples = 0;
	hashmap__init(&dc->records, tid_hash, tid_equal, NULL);
	dc->deliver = deliver;
	dc->nr_merged = 0;
	dc->nr_unmerged = 0;
}

static void deferred_sample__delete(struct deferred_callchains *dc,
				    struct deferred_sample *ds)
{
	list_del_init(&ds->list);
	dc->nr_samples--;
	free(ds->event);
	free(ds);
}

static void deferred_callchains__forget(struct deferred_callchains *dc, u32 tid)
{
	struct deferred_record *rec;

	if (hashmap__delete(&dc->records, tid, NULL, &rec))
		free(rec);
}

void deferred_callchains__exit(struct deferred_callchains *dc)
{
	struct hashmap *records = &dc->records;
	struct deferred_sample *ds, *tmp;
	struct hashmap_entry *cur;
	size_t bkt;

	list_for_each_entry_safe(ds, tmp, &dc->samples, list)
		deferred_sample__delete(dc, ds);
	hashmap__for_each_entry(records, cur, bkt)
		free(cur->pvalue);
	hashmap__clear(records);
}

bool perf_sample__deferred_cookie(const struct perf_sample *sample, u64 *cookie)
{
	if (!sample->callchain)
		return false;
	return ip_callchain__deferred_cookie(sample->callchain, cookie);
}

/* Make a pointer into the record @from point at the same place in @to. */
static void *relocate(void *ptr, const void *from, size_t size, void *to)
{
	if (ptr && ptr >= from && ptr < from + size)
		return to + (ptr - from);
	return ptr;
}

static void perf_sample__relocate(struct perf_sample *sample, struct evsel *evsel,
				  const union perf_event *from, union perf_event *to)
{
	size_t size = from->header.size;

	sample->callchain = relocate(sample->callchain, from, size, to);
	sample->raw_data = relocate(sample->raw_data, from, size, to);
	sample->branch_stack = relocate(sample->branch_stack, from, size, to);
	sample->branch_stack_cntr = relocate(sample->branch_stack_cntr, from, size, to);
	sample->user_regs.regs = relocate(sample->user_regs.regs, from, size, to);
	sample->intr_regs.regs = relocate(sample->intr_regs.regs, from, size, to);
	sample->user_stack.data = relocate(sample->user_stack.data, from, size, to);
	sample->aux_sample.data = relocate(sample->aux_sample.data, from, size, to);
	/* read.group shares its space with read.one */
	if (evsel && (evsel->core.attr.read_format & PERF_FORMAT_GROUP))
		sample->read.group.values = relocate(sample->read.group.values,
						     from, size, to);
}

/*
 * Deliver @ds with its kernel part, then PERF_CONTEXT_USER and @ips[@nr];
 * with just its kernel part if the user stack could not be walked.
 */
static int deferred_sample__deliver_merged(struct deferred_callchains *dc,
					   struct deferred_sample *ds,
					   u64 nr, const __u64 *ips)
{
	struct ip_callchain *recorded = ds->sample.callchain;
	u64 kernel_nr = ip_callchain__nr(recorded);
	struct ip_callchain *merged;
	int ret;

	merged = malloc(sizeof(*merged) + (kernel_nr + 1 + nr) * sizeof(u64));
	if (!merged)
		return -ENOMEM;

	memcpy(merged->ips, recorded->ips, kernel_nr * sizeof(u64));
	merged->nr = kernel_nr;
	if (nr) {
		merged->ips[merged->nr++] = PERF_CONTEXT_USER;
		memcpy(&merged->ips[merged->nr], ips, nr * sizeof(u64));
		merged->nr += nr;
	}

	ds->sample.callchain = merged;
	ds->sample.deferred_cookie = ds->cookie;
	ret = dc->deliver(dc, ds);
	ds->sample.callchain = recorded;
	free(merged);

	dc->nr_merged++;
	return ret;
}

static int deferred_sample__deliver_unmerged(struct deferred_callchains *dc,
					     struct deferred_sample *ds)
{
	dc->nr_unmerged++;
	return dc->deliver(dc, ds);
}

int deferred_callchains__add(struct deferred_callchains *dc,
			     union perf_event *event, struct perf_sample *sample,
			     struct evsel *evsel, struct machine *machine,
			     const struct perf_tool *tool)
{
	struct deferred_record *rec;
	struct deferred_sample *ds;
	u64 cookie;

	if (!perf_sample__deferred_cookie(sample, &cookie))
		return -EINVAL;

	if (hashmap__find(&dc->records, sample->tid, &rec) &&
	    rec->cookie == cookie) {
		struct deferred_sample now = {
			.event	= event,
			.sample	= *sample,
			.evsel	= evsel,
			.machine = machine,
			.tool	= tool,
			.cookie	= cookie,
		};

		return deferred_sample__deliver_merged(dc, &now, rec->nr,
						       rec->ips);
	}

	ds = zalloc(sizeof(*ds));
	if (!ds)
		return -ENOMEM;

	ds->event = memdup(event, event->header.size);
	if (!ds->event) {
		free(ds);
		return -ENOMEM;
	}
	ds->sample = *sample;
	perf_sample__relocate(&ds->sample, evsel, event, ds->event);
	ds->evsel = evsel;
	ds->machine = machine;
	ds->tool = tool;
	ds->cookie = cookie;

	list_add_tail(&ds->list, &dc->samples);
	dc->nr_samples++;
	return 0;
}

/*
 * Keep the user part of @tid's last record. A second record of the entry
 * (one for each event that takes them) finds it kept already.
 */
static int deferred_callchains__remember(struct deferred_callchains *dc,
					 u32 tid, u64 cookie, u64 nr,
					 const __u64 *ips)
{
	struct deferred_record *rec, *old = NULL;
	int err;

	if (hashmap__find(&dc->records, tid, &old) && old->cookie == cookie)
		return 0;

	rec = malloc(sizeof(*rec) + nr * sizeof(*ips));
	if (!rec)
		return -ENOMEM;
	rec->cookie = cookie;
	rec->nr = nr;
	memcpy(rec->ips, ips, nr * sizeof(*ips));

	err = hashmap__set(&dc->records, tid, rec, NULL, &old);
	if (err) {
		free(rec);
		return err;
	}
	free(old);
	return 0;
}

int deferred_callchains__process(struct deferred_callchains *dc, u32 tid,
				 u64 cookie, u64 nr, const __u64 *ips)
{
	struct deferred_sample *ds, *tmp;
	int ret;

	/*
	 * The entry's context event describes its samples: a tool must have
	 * it before them, although the kernel emits it last, on the way out.
	 */
	list_for_each_entry_safe(ds, tmp, &dc->samples, list) {
		if (ds->sample.tid != tid || ds->cookie != cookie ||
		    !ds->evsel || !evsel__is_unwind_context(ds->evsel))
			continue;
		ret = deferred_sample__deliver_merged(dc, ds, nr, ips);
		deferred_sample__delete(dc, ds);
		if (ret)
			return ret;
	}

	list_for_each_entry_safe(ds, tmp, &dc->samples, list) {
		if (ds->sample.tid != tid)
			continue;

		if (ds->cookie == cookie)
			ret = deferred_sample__deliver_merged(dc, ds, nr, ips);
		else
			ret = deferred_sample__deliver_unmerged(dc, ds);

		deferred_sample__delete(dc, ds);
		if (ret)
			return ret;
	}
	return deferred_callchains__remember(dc, tid, cookie, nr, ips);
}

static int __deferred_callchains__flush(struct deferred_callchains *dc,
					bool all, u32 tid, u64 before)
{
	struct deferred_sample *ds, *tmp;
	int ret;

	list_for_each_entry_safe(ds, tmp, &dc->samples, list) {
		if (!all && ds->sample.tid != tid)
			continue;
		if (ds->sample.time >= before)
			continue;

		ret = deferred_sample__deliver_unmerged(dc, ds);
		deferred_sample__delete(dc, ds);
		if (ret)
			return ret;
	}
	return 0;
}

int deferred_callchains__flush_tid(struct deferred_callchains *dc, u32 tid)
{
	deferred_callchains__forget(dc, tid);
	return __deferred_callchains__flush(dc, false, tid, ULLONG_MAX);
}

int deferred_callchains__flush_before(struct deferred_callchains *dc, u64 time)
{
	return __deferred_callchains__flush(dc, true, 0, time);
}

int deferred_callchains__flush(struct deferred_callchains *dc)
{
	return __deferred_callchains__flush(dc, true, 0, ULLONG_MAX);
}
