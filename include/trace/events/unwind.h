/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM unwind

#if !defined(_TRACE_UNWIND_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_UNWIND_H

#include <linux/tracepoint.h>
#include <linux/unwind_context.h>
#include <linux/unwind_user_types.h>

/* Numbers, not names, in the format file: tools parse the print format. */
TRACE_DEFINE_ENUM(UNWIND_CONTEXT_OK);
TRACE_DEFINE_ENUM(UNWIND_CONTEXT_NONE);
TRACE_DEFINE_ENUM(UNWIND_CONTEXT_INVALID);
TRACE_DEFINE_ENUM(UNWIND_CONTEXT_FAULT);

/*
 * The record of a thread's OpenTelemetry context (trace and span IDs,
 * flags and attributes), read from the thread's own memory once per kernel
 * entry in which a tracer asked for the deferred user stack, just before
 * that stack is handed out. @cookie is the entry's cookie, the one the
 * stack comes with: tools join the two by thread and cookie. @status says
 * why the IDs are zero when they are (enum unwind_context_status). No
 * address is recorded.
 */
TRACE_EVENT(unwind_user_context,

	TP_PROTO(u64 cookie, enum unwind_context_status status,
		 const struct unwind_context_record *rec,
		 unsigned int attrs_size),

	TP_ARGS(cookie, status, rec, attrs_size),

	TP_STRUCT__entry(
		__field(u64,	cookie)
		__field(u8,	status)
		__field(u8,	trace_flags)
		__array(u8,	trace_id, UNWIND_CONTEXT_TRACE_ID_SIZE)
		__array(u8,	span_id, UNWIND_CONTEXT_SPAN_ID_SIZE)
		/*
		 * Fills the hole before the 4-byte __data_loc word: the
		 * ring buffer is not cleared, and a hole would hand
		 * unprivileged readers (the event is CAP_ANY) two bytes of
		 * whatever the previous event on this CPU wrote there.
		 */
		__field(u16,	reserved)
		__dynamic_array(u8, attrs, attrs_size)
	),

	TP_fast_assign(
		__entry->cookie = cookie;
		__entry->status = status;
		__entry->trace_flags = rec->trace_flags;
		memcpy(__entry->trace_id, rec->trace_id, sizeof(__entry->trace_id));
		memcpy(__entry->span_id, rec->span_id, sizeof(__entry->span_id));
		__entry->reserved = 0;
		memcpy(__get_dynamic_array(attrs), rec->attrs, attrs_size);
	),

	TP_printk("cookie=0x%llx status=%s trace_id=%s span_id=%s flags=0x%02x attrs=%s",
		  __entry->cookie,
		  __print_symbolic(__entry->status,
				   { UNWIND_CONTEXT_OK,		"ok" },
				   { UNWIND_CONTEXT_NONE,	"none" },
				   { UNWIND_CONTEXT_INVALID,	"invalid" },
				   { UNWIND_CONTEXT_FAULT,	"fault" }),
		  __print_hex_str(__entry->trace_id, UNWIND_CONTEXT_TRACE_ID_SIZE),
		  __print_hex_str(__entry->span_id, UNWIND_CONTEXT_SPAN_ID_SIZE),
		  __entry->trace_flags,
		  __print_hex_str(__get_dynamic_array(attrs),
				  __get_dynamic_array_len(attrs)))
);

/*
 * Like a system call's own events: a perf event attached to the task may
 * record it with PERF_SAMPLE_RAW without CAP_PERFMON (the task's own
 * memory, seen by whoever may trace the task); a CPU-wide one needs it.
 */
TRACE_EVENT_FLAGS(unwind_user_context, TRACE_EVENT_FL_CAP_ANY)

/*
 * The most frames one event records: an event must fit in one page of the
 * ring buffer. A BPF program attached as tp_btf reads the trace itself and
 * gets every frame; the recorded event keeps the first ones, and @nr says
 * how many there were.
 */
#define UNWIND_USER_STACK_EVENT_MAX	500

/*
 * The deferred user stack of a kernel entry in which a BPF program called
 * bpf_unwind_user_request() (kernel/unwind/bpf.c), emitted once for the
 * entry, in the task's context, before it returns to user space or while
 * it exits or execs. @cookie is the value the kfunc returned during that
 * entry, and the one perf's and ftrace's deferred stacks of the same entry
 * carry; @nr is the number of frames, innermost first, 0 when the walk
 * found none; @truncated is 1 when the walk stopped at
 * kernel.unwind_max_frames with frames left. Nothing is emitted for
 * entries in which no BPF program asked.
 */
TRACE_EVENT(unwind_user_stack,

	TP_PROTO(u64 cookie, const struct unwind_stacktrace *trace),

	TP_ARGS(cookie, trace),

	TP_STRUCT__entry(
		__field(u64,		cookie)
		__field(unsigned int,	nr)
		__dynamic_array(unsigned long, ips,
				min_t(unsigned int, trace->nr,
				      UNWIND_USER_STACK_EVENT_MAX))
		/* After ips: programs that read ips at its old offset still do. */
		__field(u8,		truncated)
	),

	TP_fast_assign(
		__entry->cookie = cookie;
		__entry->truncated = trace->truncated;
		__entry->nr = trace->nr;
		if (trace->nr)
			memcpy(__get_dynamic_array(ips), trace->entries,
			       __get_dynamic_array_len(ips));
	),

	TP_printk("cookie=0x%llx nr=%u ips=%s truncated=%u",
		  __entry->cookie, __entry->nr,
		  __print_array(__get_dynamic_array(ips),
				__get_dynamic_array_len(ips) / sizeof(unsigned long),
				sizeof(unsigned long)),
		  __entry->truncated)
);

/* The task's own addresses, as for unwind_user_context above. */
TRACE_EVENT_FLAGS(unwind_user_stack, TRACE_EVENT_FL_CAP_ANY)

#endif /* _TRACE_UNWIND_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
