/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_UNWIND_CONTEXT_H
#define __PERF_UNWIND_CONTEXT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct evsel;
struct intlist;
struct perf_sample;
struct strlist;

/* The tracepoint that carries a thread's OpenTelemetry context. */
#define UNWIND_CONTEXT_EVENT	"unwind:unwind_user_context"

/* Its status field: what the kernel found in the thread's record. */
enum unwind_context_status {
	UNWIND_CONTEXT_OK,
	UNWIND_CONTEXT_NONE,
	UNWIND_CONTEXT_INVALID,
	UNWIND_CONTEXT_FAULT,
};

/* A thread's context as of one kernel entry, the one with @cookie. */
struct unwind_context {
	u64	cookie;
	u8	status;
	u8	trace_flags;
	u8	trace_id[16];
	u8	span_id[8];
};

/* The last context event seen of each thread. */
struct unwind_contexts {
	struct intlist	*tids;
};

bool evsel__is_unwind_context(struct evsel *evsel);

void unwind_contexts__init(struct unwind_contexts *uc);
void unwind_contexts__exit(struct unwind_contexts *uc);

/*
 * Remember the context event @sample of @evsel as its thread's latest.
 * -EINVAL if the event lacks a field this code reads.
 */
int unwind_contexts__add(struct unwind_contexts *uc, struct evsel *evsel,
			 struct perf_sample *sample);

/*
 * The context of @tid's kernel entry with @cookie, if its event came: it
 * comes before the entry's deferred callchain, so before the samples that
 * wait for it are delivered.
 */
const struct unwind_context *unwind_contexts__find(struct unwind_contexts *uc,
						   u32 tid, u64 cookie);

const char *unwind_context__status_name(u8 status);

/* "trace_id=... span_id=... flags=0x.." or "status=..." when not ok. */
int unwind_context__fprintf(const struct unwind_context *ctx, FILE *fp);

/* The span ID as 16 hex digits and a NUL, into @buf. */
void unwind_context__span_hex(const struct unwind_context *ctx, char buf[17]);

/*
 * The context of the kernel entry of @sample, whose user part was deferred:
 * NULL if it has none, or its context event was not seen (yet).
 */
const struct unwind_context *unwind_contexts__sample(struct unwind_contexts *uc,
						     struct perf_sample *sample);

/*
 * Does the context of @sample's entry have one of the span IDs in @spans
 * (16 hex digits each)? "none" in @spans also matches samples without a
 * valid context.
 */
bool unwind_contexts__span_match(struct unwind_contexts *uc,
				 struct perf_sample *sample, struct strlist *spans);

#endif /* __PERF_UNWIND_CONTEXT_H */
