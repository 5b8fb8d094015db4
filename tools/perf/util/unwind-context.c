// SPDX-License-Identifier: GPL-2.0
/*
 * Join a thread's OpenTelemetry context to its deferred user callchains.
 *
 * The kernel emits the tracepoint unwind:unwind_user_context once per kernel
 * entry in which a deferred user stack was asked for, with that entry's
 * cookie, before the PERF_RECORD_CALLCHAIN_DEFERRED record of the same
 * entry. Samples that wait for their user part are delivered when that
 * record arrives, so the thread's last context event is the one of their
 * entry exactly when its cookie is theirs. The join is by thread and
 * cookie: a context of another entry is never attached.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>

#include "deferred-callchain.h"
#include "evsel.h"
#include "intlist.h"
#include "sample.h"
#include "strlist.h"
#include "unwind-context.h"

bool evsel__is_unwind_context(struct evsel *evsel)
{
	return evsel->core.attr.type == PERF_TYPE_TRACEPOINT &&
	       !strcmp(evsel__name(evsel), UNWIND_CONTEXT_EVENT);
}

void unwind_contexts__init(struct unwind_contexts *uc)
{
	uc->tids = NULL;
}

void unwind_contexts__exit(struct unwind_contexts *uc)
{
	struct int_node *node;

	if (!uc->tids)
		return;
	intlist__for_each_entry(node, uc->tids)
		zfree(&node->priv);
	intlist__delete(uc->tids);
	uc->tids = NULL;
}

#ifdef HAVE_LIBTRACEEVENT
int unwind_contexts__add(struct unwind_contexts *uc, struct evsel *evsel,
			 struct perf_sample *sample)
{
	struct unwind_context *ctx;
	struct int_node *node;
	const void *trace_id, *span_id;

	trace_id = evsel__rawptr(evsel, sample, "trace_id");
	span_id = evsel__rawptr(evsel, sample, "span_id");
	if (!trace_id || !span_id || !evsel__field(evsel, "cookie") ||
	    !evsel__field(evsel, "status") || !evsel__field(evsel, "trace_flags"))
		return -EINVAL;

	if (!uc->tids) {
		uc->tids = intlist__new(NULL);
		if (!uc->tids)
			return -ENOMEM;
	}
	node = intlist__findnew(uc->tids, sample->tid);
	if (!node)
		return -ENOMEM;
	if (!node->priv) {
		node->priv = zalloc(sizeof(*ctx));
		if (!node->priv)
			return -ENOMEM;
	}
	ctx = node->priv;
	ctx->cookie = evsel__intval(evsel, sample, "cookie");
	ctx->status = evsel__intval(evsel, sample, "status");
	ctx->trace_flags = evsel__intval(evsel, sample, "trace_flags");
	memcpy(ctx->trace_id, trace_id, sizeof(ctx->trace_id));
	memcpy(ctx->span_id, span_id, sizeof(ctx->span_id));
	return 0;
}
#else
int unwind_contexts__add(struct unwind_contexts *uc __maybe_unused,
			 struct evsel *evsel __maybe_unused,
			 struct perf_sample *sample __maybe_unused)
{
	return -EINVAL;
}
#endif

const struct unwind_context *unwind_contexts__find(struct unwind_contexts *uc,
						   u32 tid, u64 cookie)
{
	struct int_node *node;
	const struct unwind_context *ctx;

	if (!uc->tids || !cookie)
		return NULL;
	node = intlist__find(uc->tids, tid);
	if (!node)
		return NULL;
	ctx = node->priv;
	return ctx && ctx->cookie == cookie ? ctx : NULL;
}

const char *unwind_context__status_name(u8 status)
{
	switch (status) {
	case UNWIND_CONTEXT_OK:		return "ok";
	case UNWIND_CONTEXT_NONE:	return "none";
	case UNWIND_CONTEXT_INVALID:	return "invalid";
	case UNWIND_CONTEXT_FAULT:	return "fault";
	default:			return "unknown";
	}
}

static int fprintf_hex(FILE *fp, const u8 *bytes, size_t len)
{
	int ret = 0;

	for (size_t i = 0; i < len; i++)
		ret += fprintf(fp, "%02x", bytes[i]);
	return ret;
}

int unwind_context__fprintf(const struct unwind_context *ctx, FILE *fp)
{
	int ret;

	if (ctx->status != UNWIND_CONTEXT_OK)
		return fprintf(fp, "status=%s", unwind_context__status_name(ctx->status));

	ret = fprintf(fp, "trace_id=");
	ret += fprintf_hex(fp, ctx->trace_id, sizeof(ctx->trace_id));
	ret += fprintf(fp, " span_id=");
	ret += fprintf_hex(fp, ctx->span_id, sizeof(ctx->span_id));
	ret += fprintf(fp, " flags=0x%02x", ctx->trace_flags);
	return ret;
}

void unwind_context__span_hex(const struct unwind_context *ctx, char buf[17])
{
	for (size_t i = 0; i < sizeof(ctx->span_id); i++)
		snprintf(buf + 2 * i, 3, "%02x", ctx->span_id[i]);
}

const struct unwind_context *unwind_contexts__sample(struct unwind_contexts *uc,
						     struct perf_sample *sample)
{
	u64 cookie = sample->deferred_cookie;

	if (!cookie && !perf_sample__deferred_cookie(sample, &cookie))
		return NULL;
	return unwind_contexts__find(uc, sample->tid, cookie);
}

bool unwind_contexts__span_match(struct unwind_contexts *uc,
				 struct perf_sample *sample, struct strlist *spans)
{
	const struct unwind_context *ctx = unwind_contexts__sample(uc, sample);
	char span[17];

	if (!ctx || ctx->status != UNWIND_CONTEXT_OK)
		return strlist__has_entry(spans, "none");
	unwind_context__span_hex(ctx, span);
	return strlist__has_entry(spans, span);
}
