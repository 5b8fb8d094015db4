/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_CONTEXT_H
#define _LINUX_UNWIND_CONTEXT_H

#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/stddef.h>
#include <linux/types.h>

struct unwind_task_info;

/*
 * A thread's context record as OpenTelemetry's OTEP 4947 ("Thread-Local
 * Context Record") lays it out, host endian: a 28-byte header, then
 * @attrs_size bytes of attributes, each { u8 key; u8 len; u8 value[len]; },
 * 640 bytes at most in all. The thread's TLS pointer otel_thread_ctx_v1
 * points to it, or is NULL.
 */
#define UNWIND_CONTEXT_TRACE_ID_SIZE	16
#define UNWIND_CONTEXT_SPAN_ID_SIZE	8
#define UNWIND_CONTEXT_MAX_SIZE		640
#define UNWIND_CONTEXT_HDR_SIZE		28
#define UNWIND_CONTEXT_MAX_ATTRS	(UNWIND_CONTEXT_MAX_SIZE - UNWIND_CONTEXT_HDR_SIZE)

struct unwind_context_record {
	u8	trace_id[UNWIND_CONTEXT_TRACE_ID_SIZE];
	u8	span_id[UNWIND_CONTEXT_SPAN_ID_SIZE];
	u8	valid;		/* 1 while the rest is consistent */
	u8	trace_flags;
	u16	attrs_size;
	u8	attrs[UNWIND_CONTEXT_MAX_ATTRS];
};

static_assert(offsetof(struct unwind_context_record, attrs) == UNWIND_CONTEXT_HDR_SIZE);
static_assert(sizeof(struct unwind_context_record) == UNWIND_CONTEXT_MAX_SIZE);

/**
 * enum unwind_context_status - what reading a thread's context found
 * @UNWIND_CONTEXT_OK:		a whole, valid record
 * @UNWIND_CONTEXT_NONE:	the thread's pointer is NULL: no context now
 * @UNWIND_CONTEXT_INVALID:	the record is marked not valid (being
 *				rewritten), misaligned, or malformed
 * @UNWIND_CONTEXT_FAULT:	the pointer or the record cannot be read
 */
enum unwind_context_status {
	UNWIND_CONTEXT_OK,
	UNWIND_CONTEXT_NONE,
	UNWIND_CONTEXT_INVALID,
	UNWIND_CONTEXT_FAULT,
};

#ifdef CONFIG_UNWIND_DEFERRED
int unwind_context_prctl(unsigned long op, unsigned long addr,
			 unsigned long arg4, unsigned long arg5);
void __unwind_context_emit(struct unwind_task_info *info, u64 cookie);
#else
static inline int unwind_context_prctl(unsigned long op, unsigned long addr,
				       unsigned long arg4, unsigned long arg5)
{
	return -EINVAL;
}
#endif

#endif /* _LINUX_UNWIND_CONTEXT_H */
