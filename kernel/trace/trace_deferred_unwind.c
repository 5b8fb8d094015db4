// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user stacks for trace instances: the userstacktrace_delay option.
 *
 * The userstacktrace option walks the user stack right where the event is
 * recorded. That context often cannot fault, so the walk stops at the first
 * user page that is not resident, and a long system call stores the same
 * stack again with every event. With userstacktrace_delay, an event of a
 * user task only asks the deferred unwinder for the task's user stack and
 * records the cookie of the current kernel entry (user_unwind_cookie) right
 * after the event. When the task is about to return to user space, the
 * unwinder walks the stack once, in task context, and calls back every
 * instance that asked during the entry; each writes the stack with the same
 * cookie (user_unwind_stack) to its own buffer. Every frame carries the file
 * offset and the file identity (device and inode) of its address, looked up
 * in the faultable callback, so the stack can be resolved after the process
 * is gone.
 *
 * Each instance that has the option set owns a client (struct
 * trace_unwind_client): its own unwind work, one tracer bit of the
 * unwinder, and an RCU pointer back to the instance. The client is created
 * when the option is set and retired when it is cleared; both happen only in
 * set_tracer_flag(), under event_mutex and trace_types_lock, so they never
 * wait for a callback: clearing unhooks the client from the instance under
 * RCU, waits for an RCU grace period (callbacks use the instance only in RCU
 * read-side sections, which never sleep), and leaves the unwinder's cancel,
 * which waits for SRCU, to a workqueue that frees the client. A callback
 * never sleeps on mmap_lock either: if it cannot take it at once, the stack
 * is recorded with addresses alone. So nothing a traced process does can
 * stall tracefs.
 */

#include <linux/fs.h>
#include <linux/init.h>
#include <linux/kdev_t.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/overflow.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/ring_buffer.h>
#include <linux/trace_events.h>
#include <linux/unwind_deferred.h>

#include "trace.h"
#include "trace_deferred_unwind.h"

/*
 * One frame in the frames[] array of user_unwind_stack (trace_entries.h),
 * which is declared as u64 so that the format file stays plain for user
 * space parsers.
 */
struct user_unwind_frame {
	u64	ip;		/* user address, innermost first */
	u64	offset;		/* offset of ip in the mapped file */
	u64	ino;		/* inode number of the file, 0 if none */
	u64	dev;		/* its device, encoded as stat's st_dev */
};

/*
 * An instance's registration with the unwinder, alive from setting the option
 * until the unwinder's release after clearing it.
 */
struct trace_unwind_client {
	struct unwind_work		work;
	struct trace_array __rcu	*tr;	/* NULL once the option is cleared */
};

#define USER_UNWIND_FRAME_WORDS	(sizeof(struct user_unwind_frame) / sizeof(u64))

/* The print format of user_unwind_stack shows nr * 4 u64 words. */
static_assert(USER_UNWIND_FRAME_WORDS == 4);

/**
 * __trace_deferred_unwind_request - ask for the user stack of an event's task
 * @tr: the instance the event was recorded in; its userstacktrace_delay
 *	option is set
 * @buffer: the ring buffer the event was committed to
 * @trace_ctx: the event's context flags
 *
 * Asks the deferred unwinder for the current task's user stack and, if it
 * took the request, records the cookie of the current kernel entry as
 * user_unwind_cookie right after the event. Every event of one kernel entry
 * gets the same cookie, and one user_unwind_stack answers them all. The
 * unwinder refuses kernel threads, user workers and exiting tasks, and a
 * work that is being cancelled: then nothing is recorded.
 *
 * Context: any context an event can be recorded in, NMI included. Does not
 * sleep or fault.
 */
void __trace_deferred_unwind_request(struct trace_array *tr,
				     struct trace_buffer *buffer,
				     unsigned int trace_ctx)
{
	struct user_unwind_cookie_entry *entry;
	struct trace_unwind_client *client;
	struct ring_buffer_event *event;
	u64 cookie;
	int ret;

	/* RCU keeps the client alive: it is freed after a grace period. */
	scoped_guard(rcu) {
		client = rcu_dereference(tr->unwind_client);
		if (!client)
			return;
		/* 1 (already asked in this entry) still gives the cookie. */
		ret = unwind_deferred_request(&client->work, &cookie);
	}
	if (ret < 0)
		return;

	/*
	 * If the cookie cannot be recorded, the stack still arrives; it then
	 * matches no event's cookie, which readers must expect anyway.
	 */
	event = trace_buffer_lock_reserve(buffer, TRACE_USER_UNWIND_COOKIE,
					  sizeof(*entry), trace_ctx);
	if (!event)
		return;
	entry = ring_buffer_event_data(event);
	entry->cookie = cookie;
	trace_buffer_unlock_commit_nostack(buffer, event);
}

/*
 * What the frames in one mapping share: the mapping's range, and for a
 * file the file offset of address 0 of the mapping (so that an address's
 * offset is one addition), the file's inode number and device; all three
 * 0 without a file, and @mask 0 to make the offset 0 too. A stack has runs
 * of frames in one mapping (a program's own functions, then a library's):
 * the mapping is looked up once per run.
 */
struct user_unwind_map {
	unsigned long	start;
	unsigned long	len;
	u64		base;
	u64		mask;
	u64		ino;
	u64		dev;
};

/*
 * Describe the mapping of @ip, as /proc/PID/maps shows it, in @map; a hole
 * is a mapping of that one address without a file.
 *
 * Context: mmap_lock of @mm held for read. Does not sleep.
 */
static void user_unwind_map_find(struct mm_struct *mm, unsigned long ip,
				 struct user_unwind_map *map)
{
	struct vm_area_struct *v = vma_lookup(mm, ip);
	struct inode *inode;

	*map = (struct user_unwind_map) { .start = ip, .len = 1 };
	if (!v)
		return;
	map->start = v->vm_start;
	map->len = v->vm_end - v->vm_start;
	if (!v->vm_file)
		return;
	inode = file_inode(v->vm_file);
	map->base = ((u64)v->vm_pgoff << PAGE_SHIFT) - v->vm_start;
	map->mask = ~0ULL;
	map->ino = inode->i_ino;
	map->dev = huge_encode_dev(inode->i_sb->s_dev);
}

/*
 * Fill @frames with the @nr addresses of @ips, each with its offset in the
 * file mapped there and that file's device and inode; with @mm NULL, with
 * the addresses alone.
 *
 * The addresses are data: the first one is whatever the task had in its
 * instruction pointer, which may be any value at all (a user can jump to
 * -1 and take the fault), so no address may decide whether a mapping is
 * looked up. Without @mm, nothing is looked up.
 *
 * Context: mmap_lock of @mm held for read, or @mm NULL. Does not sleep.
 */
static void user_unwind_frames_fill(struct mm_struct *mm,
				    const unsigned long *ips, unsigned int nr,
				    struct user_unwind_frame *frames)
{
	/* Empty: the first address is looked up. */
	struct user_unwind_map map = { };
	unsigned int i;

	if (!mm) {
		for (i = 0; i < nr; i++)
			frames[i] = (struct user_unwind_frame) { .ip = ips[i] };
		return;
	}
	for (i = 0; i < nr; i++) {
		unsigned long ip = ips[i];

		if (ip - map.start >= map.len)
			user_unwind_map_find(mm, ip, &map);
		frames[i].ip = ip;
		frames[i].offset = (ip + map.base) & map.mask;
		frames[i].ino = map.ino;
		frames[i].dev = map.dev;
	}
}

/*
 * The unwinder's callback: record the user stack of the kernel entry with
 * @cookie as user_unwind_stack, in the buffer of the instance that asked.
 * It is recorded even when the walk found nothing (nr is 0), so that readers
 * know the entry's stack will not come.
 *
 * Context: task context of the traced task (returning to user space, or in
 * exit or exec with its mm still there), under the unwinder's SRCU read
 * lock. Does not sleep: the instance is used under RCU, and mmap_lock is only
 * tried, because a traced process can hold it (or queue a writer behind a
 * reader) for as long as it likes. Without it, the frames carry their
 * addresses alone.
 */
static void trace_deferred_unwind_deliver(struct unwind_work *work,
					  struct unwind_stacktrace *trace,
					  u64 cookie)
{
	struct trace_unwind_client *client =
		container_of(work, struct trace_unwind_client, work);
	struct user_unwind_stack_entry *entry;
	struct mm_struct *mm = current->mm;
	struct user_unwind_frame *frames;
	struct ring_buffer_event *event;
	struct trace_buffer *buffer;
	unsigned int trace_ctx;
	struct trace_array *tr;
	unsigned long max;
	unsigned int nr;

	guard(rcu)();
	tr = rcu_dereference(client->tr);
	if (!tr)
		return;
	buffer = tr->array_buffer.buffer;
	trace_ctx = tracing_gen_ctx();

	/*
	 * An event must fit in one sub-buffer. Keep the innermost frames and
	 * count the others; a larger buffer_subbuf_size_kb keeps more.
	 */
	max = (ring_buffer_max_event_size(buffer) - sizeof(*entry)) /
	      sizeof(*frames);
	nr = min_t(unsigned long, trace->nr, max);

	if (mm && !mmap_read_trylock(mm))
		mm = NULL;

	event = trace_buffer_lock_reserve(buffer, TRACE_USER_UNWIND_STACK,
					  struct_size(entry, frames,
						      nr * USER_UNWIND_FRAME_WORDS),
					  trace_ctx);
	if (event) {
		entry = ring_buffer_event_data(event);
		entry->cookie = cookie;
		entry->nr = nr;
		/* A walk cut at its bound left at least one frame out. */
		entry->dropped = trace->nr - nr + trace->truncated;
		entry->truncated = trace->truncated;
		frames = (struct user_unwind_frame *)entry->frames;
		user_unwind_frames_fill(mm, trace->entries, nr, frames);
		trace_buffer_unlock_commit_nostack(buffer, event);
	}

	if (mm)
		mmap_read_unlock(mm);
}

static void trace_unwind_client_free(struct unwind_work *work)
{
	kfree(container_of(work, struct trace_unwind_client, work));
}

/**
 * trace_deferred_unwind_set - register or retire an instance's unwind client
 * @tr: the instance whose userstacktrace_delay option changes
 * @enable: true when the option is being set, false when it is cleared
 *
 * Called by set_tracer_flag() when the option changes, before it updates
 * tr->trace_flags. Setting registers a new client first, so that a request
 * made as soon as the flag is seen finds it. Clearing unhooks the client:
 * when this returns, no callback uses @tr any more, so @tr may be freed.
 * Removing an instance clears the option (it is in ZEROED_TRACE_FLAGS)
 * before the instance is freed. Requests that were pending get no stack.
 *
 * Context: task context, may sleep. event_mutex and trace_types_lock are
 * held. Clearing waits for an RCU grace period only, never for a callback
 * or for the unwinder's cancel, which finishes in a workqueue.
 * Return: 0; -ENOMEM; -EBUSY when the unwinder has no tracer bit left;
 * -EOPNOTSUPP when the CPU cannot do deferred unwinding.
 */
int trace_deferred_unwind_set(struct trace_array *tr, bool enable)
{
	struct trace_unwind_client *client;
	int ret;

	lockdep_assert_held(&trace_types_lock);

	client = rcu_dereference_protected(tr->unwind_client,
					   lockdep_is_held(&trace_types_lock));
	if (!enable) {
		if (!client)
			return 0;
		RCU_INIT_POINTER(tr->unwind_client, NULL);
		RCU_INIT_POINTER(client->tr, NULL);
		unwind_deferred_cancel_async(&client->work,
					     trace_unwind_client_free);
		/* Callbacks and requests that still saw @tr are done. */
		synchronize_rcu();
		return 0;
	}
	if (client)
		return 0;

	/* The unwinder refuses every request without cmpxchg16b. */
	if (!system_has_cmpxchg128())
		return -EOPNOTSUPP;

	client = kzalloc(sizeof(*client), GFP_KERNEL);
	if (!client)
		return -ENOMEM;
	ret = unwind_deferred_init(&client->work,
				   trace_deferred_unwind_deliver);
	if (ret) {
		kfree(client);
		return ret;
	}
	RCU_INIT_POINTER(client->tr, tr);
	rcu_assign_pointer(tr->unwind_client, client);
	return 0;
}

/* Output of user_unwind_cookie: "<user unwind request> cookie=0x..." */
static enum print_line_t
trace_user_unwind_cookie_print(struct trace_iterator *iter, int flags,
			       struct trace_event *event)
{
	struct user_unwind_cookie_entry *field;

	trace_assign_type(field, iter->ent);
	trace_seq_printf(&iter->seq, "<user unwind request> cookie=0x%llx\n",
			 field->cookie);
	return trace_handle_return(&iter->seq);
}

static enum print_line_t
trace_user_unwind_cookie_raw(struct trace_iterator *iter, int flags,
			     struct trace_event *event)
{
	struct user_unwind_cookie_entry *field;

	trace_assign_type(field, iter->ent);
	trace_seq_printf(&iter->seq, "%llx\n", field->cookie);
	return trace_handle_return(&iter->seq);
}

static struct trace_event_functions trace_user_unwind_cookie_funcs = {
	.trace		= trace_user_unwind_cookie_print,
	.raw		= trace_user_unwind_cookie_raw,
};

static struct trace_event trace_user_unwind_cookie_event = {
	.type		= TRACE_USER_UNWIND_COOKIE,
	.funcs		= &trace_user_unwind_cookie_funcs,
};

/* The frames the event really holds, whatever its nr field says. */
static unsigned int user_unwind_stack_nr(struct trace_iterator *iter,
					 struct user_unwind_stack_entry *field)
{
	unsigned int room = 0;

	if (iter->ent_size > sizeof(*field))
		room = (iter->ent_size - sizeof(*field)) /
		       sizeof(struct user_unwind_frame);
	return min(field->nr, room);
}

/*
 * Output of user_unwind_stack: the cookie, then one frame a line, innermost
 * first, the file offset and identity in the style of /proc/PID/maps:
 *
 *   <user unwind stack> cookie=0x...
 *    => 0x401b2d off=0x1b2d dev=00:02 ino=1234
 *    => 0x7ffc0e9f3000
 *
 * A frame outside any file mapping shows its address alone.
 */
static enum print_line_t
trace_user_unwind_stack_print(struct trace_iterator *iter, int flags,
			      struct trace_event *event)
{
	struct user_unwind_stack_entry *field;
	struct trace_seq *s = &iter->seq;
	struct user_unwind_frame *frame;
	unsigned int i, nr;

	trace_assign_type(field, iter->ent);
	nr = user_unwind_stack_nr(iter, field);
	frame = (struct user_unwind_frame *)field->frames;

	trace_seq_printf(s, "<user unwind stack> cookie=0x%llx\n",
			 field->cookie);

	for (i = 0; i < nr; i++, frame++) {
		dev_t dev = huge_decode_dev(frame->dev);

		if (trace_seq_has_overflowed(s))
			break;

		trace_seq_printf(s, " => 0x%llx", frame->ip);
		if (frame->ino || frame->dev)
			trace_seq_printf(s, " off=0x%llx dev=%02x:%02x ino=%llu",
					 frame->offset, MAJOR(dev), MINOR(dev),
					 frame->ino);
		trace_seq_putc(s, '\n');
	}
	if (field->truncated)
		trace_seq_printf(s,
				 " => ... at least %u more frames (cut at unwind_max_frames)\n",
				 field->dropped);
	else if (field->dropped)
		trace_seq_printf(s, " => ... %u more frames\n", field->dropped);

	return trace_handle_return(s);
}

static enum print_line_t
trace_user_unwind_stack_raw(struct trace_iterator *iter, int flags,
			    struct trace_event *event)
{
	struct user_unwind_stack_entry *field;
	struct trace_seq *s = &iter->seq;
	struct user_unwind_frame *frame;
	unsigned int i, nr;

	trace_assign_type(field, iter->ent);
	nr = user_unwind_stack_nr(iter, field);
	frame = (struct user_unwind_frame *)field->frames;

	trace_seq_printf(s, "%llx %u %u %u", field->cookie, nr, field->dropped,
			 field->truncated);
	for (i = 0; i < nr; i++, frame++)
		trace_seq_printf(s, " %llx %llx %llx %llu", frame->ip,
				 frame->offset, frame->dev, frame->ino);
	trace_seq_putc(s, '\n');

	return trace_handle_return(s);
}

static struct trace_event_functions trace_user_unwind_stack_funcs = {
	.trace		= trace_user_unwind_stack_print,
	.raw		= trace_user_unwind_stack_raw,
};

static struct trace_event trace_user_unwind_stack_event = {
	.type		= TRACE_USER_UNWIND_STACK,
	.funcs		= &trace_user_unwind_stack_funcs,
};

static __init int trace_deferred_unwind_init(void)
{
	WARN_ON(!register_trace_event(&trace_user_unwind_cookie_event));
	WARN_ON(!register_trace_event(&trace_user_unwind_stack_event));
	return 0;
}
core_initcall(trace_deferred_unwind_init);
