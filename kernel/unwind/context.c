// SPDX-License-Identifier: GPL-2.0
/*
 * A thread's OpenTelemetry context, delivered with its deferred user stack.
 *
 * Profilers want to know which request a sample belongs to: the trace and
 * span the thread was working on. OpenTelemetry keeps them per thread in a
 * record in user memory (OTEP 4947, struct unwind_context_record), reached
 * through the TLS pointer otel_thread_ctx_v1, and readers may read it only
 * while the thread is stopped or interrupted. The deferred unwind runs just
 * before the thread returns to user space, where it may fault: the place to
 * read it, once per kernel entry in which a tracer asked for the stack.
 *
 * The kernel does not resolve TLS (glibc places a library's TLS at offsets
 * chosen at run time, or lazily for dlopen()ed code). Each thread tells it
 * the address of its own pointer instead, with prctl(PR_UNWIND_CONTEXT),
 * and the record goes out as the self-describing tracepoint
 * unwind:unwind_user_context, with the cookie of the entry, so that no perf
 * or ftrace ABI number is taken and every tracer can join it to the stack by
 * thread and cookie.
 */

#include <linux/compat.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/unwind_context.h>
#include <linux/unwind_deferred.h>
#include <uapi/linux/prctl.h>
#include <kunit/visibility.h>

#define CREATE_TRACE_POINTS
#include <trace/events/unwind.h>

#include "deferred_test.h"

/* In unwind_task_info::ctx_slot: the registered pointer has 4 bytes. */
#define UNWIND_CONTEXT_SLOT_COMPAT	1UL

/**
 * unwind_context_attrs_ok - check the attributes of a context record
 * @attrs: the attribute bytes, as read
 * @size: their number, at most UNWIND_CONTEXT_MAX_ATTRS
 *
 * The attributes are entries { u8 key; u8 len; u8 value[len]; } that must
 * fill @size exactly: a record whose last entry runs past its end is being
 * rewritten or is corrupt, and a tool must not be handed half an entry.
 *
 * Return: true if the entries fill @size exactly.
 */
VISIBLE_IF_KUNIT bool unwind_context_attrs_ok(const u8 *attrs, unsigned int size)
{
	unsigned int off = 0;

	while (off < size) {
		if (size - off < 2 || size - off - 2 < attrs[off + 1])
			return false;
		off += 2 + attrs[off + 1];
	}
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(unwind_context_attrs_ok);

/*
 * Read the current thread's record through the pointer at @slot into @rec.
 * The thread is in the kernel, so a writer that follows the record's
 * protocol (valid = 0, update, valid = 1) is either done or left it marked
 * invalid; only the thread itself writes its record.
 *
 * Context: the current task, before it returns to user space; may fault.
 */
static enum unwind_context_status
unwind_context_read(unsigned long slot, struct unwind_context_record *rec)
{
	void __user *urec;

	if (slot & UNWIND_CONTEXT_SLOT_COMPAT) {
		u32 ptr;

		if (get_user(ptr, (u32 __user *)(slot & ~UNWIND_CONTEXT_SLOT_COMPAT)))
			return UNWIND_CONTEXT_FAULT;
		urec = compat_ptr(ptr);
	} else {
		u64 ptr;

		if (get_user(ptr, (u64 __user *)slot))
			return UNWIND_CONTEXT_FAULT;
		urec = u64_to_user_ptr(ptr);
	}

	if (!urec)
		return UNWIND_CONTEXT_NONE;
	/* The record is 2-byte aligned (its attrs_size is a u16). */
	if ((unsigned long)urec & 1)
		return UNWIND_CONTEXT_INVALID;
	if (copy_from_user(rec, urec, UNWIND_CONTEXT_HDR_SIZE))
		return UNWIND_CONTEXT_FAULT;
	if (rec->valid != 1 || rec->attrs_size > UNWIND_CONTEXT_MAX_ATTRS)
		return UNWIND_CONTEXT_INVALID;
	if (copy_from_user(rec->attrs, urec + UNWIND_CONTEXT_HDR_SIZE,
			   rec->attrs_size))
		return UNWIND_CONTEXT_FAULT;
	if (!unwind_context_attrs_ok(rec->attrs, rec->attrs_size))
		return UNWIND_CONTEXT_INVALID;
	return UNWIND_CONTEXT_OK;
}

/**
 * __unwind_context_emit - emit the current thread's context for an entry
 * @info: the current task's deferred unwind state
 * @cookie: the cookie of the entry whose stack is about to be delivered
 *
 * Called by the deferred run after the walk, outside SRCU, while the
 * unwind:unwind_user_context tracepoint is enabled. Emits the event once
 * per entry, for a thread that registered its context pointer. Whatever the
 * record holds, the result is a status; nothing here signals the task or
 * warns.
 *
 * Context: task context of the current task before it returns to user
 * space (or execs or exits), page faults allowed.
 */
void __unwind_context_emit(struct unwind_task_info *info, u64 cookie)
{
	struct unwind_context_record rec;
	enum unwind_context_status status;
	unsigned long slot = info->ctx_slot;

	if (!slot || info->ctx_cookie == cookie)
		return;
	info->ctx_cookie = cookie;

	status = unwind_context_read(slot, &rec);
	if (status != UNWIND_CONTEXT_OK) {
		/* A status carries no half-read IDs. */
		memset(&rec, 0, UNWIND_CONTEXT_HDR_SIZE);
	}
	trace_unwind_user_context(cookie, status, &rec, rec.attrs_size);
}

/**
 * unwind_context_prctl - prctl(PR_UNWIND_CONTEXT, op, addr, 0, 0)
 * @op: PR_UNWIND_CONTEXT_SET, PR_UNWIND_CONTEXT_GET or
 *	PR_UNWIND_CONTEXT_CLEAR
 * @addr: SET: the address of the calling thread's otel_thread_ctx_v1
 *	  pointer; GET: where to store the registered address as a u64 (0 if
 *	  none); CLEAR: 0
 * @arg4: must be 0
 * @arg5: must be 0
 *
 * The registration belongs to the calling thread. A forked process (and a
 * vfork() child) keeps it; a new thread, or a child that shares the memory
 * and runs beside its parent, starts without one; execve() ends it.
 *
 * Context: process context of the calling thread.
 * Return: 0; -EINVAL for an unknown @op, a non-zero unused argument, or a
 * zero or misaligned address; -EFAULT if the pointer at @addr cannot be
 * read (SET) or the result cannot be stored (GET); -EBUSY if another
 * address is registered already (registering the same one again is fine).
 */
int unwind_context_prctl(unsigned long op, unsigned long addr,
			 unsigned long arg4, unsigned long arg5)
{
	struct unwind_task_info *info = &current->unwind_info;
	unsigned long slot;

	if (arg4 || arg5)
		return -EINVAL;

	switch (op) {
	case PR_UNWIND_CONTEXT_SET: {
		/* A compat task's pointer has 4 bytes. */
		size_t size = in_compat_syscall() ? sizeof(u32) : sizeof(u64);
		u64 ptr;

		if (!addr || !IS_ALIGNED(addr, size))
			return -EINVAL;
		if (copy_from_user(&ptr, (void __user *)addr, size))
			return -EFAULT;
		slot = size == sizeof(u32) ? addr | UNWIND_CONTEXT_SLOT_COMPAT : addr;
		if (info->ctx_slot && info->ctx_slot != slot)
			return -EBUSY;
		info->ctx_slot = slot;
		return 0;
	}

	case PR_UNWIND_CONTEXT_GET:
		slot = info->ctx_slot & ~UNWIND_CONTEXT_SLOT_COMPAT;
		if (put_user((u64)slot, (u64 __user *)addr))
			return -EFAULT;
		return 0;

	case PR_UNWIND_CONTEXT_CLEAR:
		if (addr)
			return -EINVAL;
		info->ctx_slot = 0;
		return 0;
	}
	return -EINVAL;
}
