// SPDX-License-Identifier: GPL-2.0
/*
 * Frame-pointer walker for user-space stacks.
 *
 * The walker runs in the context of the task whose stack it walks, with the
 * task stopped in the kernel, so no user code changes the stack under it. It
 * reads user memory only through the uaccess primitives, which may fault
 * pages in and sleep: callers must be in task context with page faults
 * enabled. Callers that sample from NMI or IRQ context defer the walk to
 * task context (see kernel/unwind/deferred.c) instead of calling it
 * directly.
 *
 * The chain of saved frame pointers comes from user memory and must not be
 * trusted. Every step has to move strictly up the stack, stay aligned to the
 * user word size and stay inside user space, so a corrupt or cyclic chain ends
 * the walk instead of looping; the caller's array bounds the depth. What was
 * walked before the bad frame is kept.
 */

#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <linux/unwind_user.h>
#include <kunit/visibility.h>
#include <asm/syscall.h>

#include "sframe.h"

struct unwind_user_sframe;

/*
 * Read the return address, and the saved frame pointer if @frame has one,
 * of the frame whose CFA is @cfa, in one user access window: one access
 * check and one STAC/CLAC pair for both words, which are mostly adjacent.
 * A fault in the window may sleep to bring the page in, as get_user() may.
 */
static __always_inline int
unwind_user_read_frame(unsigned int ws, unsigned long cfa,
		       const struct unwind_user_frame *frame,
		       unsigned long *ra, unsigned long *fp)
{
	unsigned long ra_addr = cfa + frame->ra_off;
	unsigned long fp_addr = cfa + frame->fp_off;
	long lo = frame->ra_off, hi = frame->ra_off;

	/*
	 * The span from the offsets, which are constants for a frame-pointer
	 * frame. A span that wraps below 0 starts above TASK_SIZE_MAX, which
	 * the access check refuses.
	 */
	if (frame->fp_off) {
		lo = min(frame->ra_off, frame->fp_off);
		hi = max(frame->ra_off, frame->fp_off);
	}
	if (!user_read_access_begin((const void __user *)(cfa + lo),
				    hi - lo + ws))
		return -EFAULT;
	if (ws == sizeof(u32)) {
		u32 word;

		unsafe_get_user(word, (const u32 __user *)ra_addr, fault);
		*ra = word;
		if (frame->fp_off) {
			unsafe_get_user(word, (const u32 __user *)fp_addr, fault);
			*fp = word;
		}
	} else {
		unsafe_get_user(*ra, (const unsigned long __user *)ra_addr,
				fault);
		if (frame->fp_off)
			unsafe_get_user(*fp, (const unsigned long __user *)fp_addr,
					fault);
	}
	user_read_access_end();
	return 0;
fault:
	user_read_access_end();
	return -EFAULT;
}

/*
 * The frame rule for the frame in @state: from its SFrame section if its
 * code has one, else the frame-pointer layout (adjusted for a topmost frame
 * stopped before its frame was set up). Returns %SFRAME_OUTERMOST when the
 * section marks the outermost frame.
 */
static int unwind_user_frame_rule(struct unwind_user_state *state,
				  struct unwind_user_sframe *sw,
				  struct unwind_user_frame *frame)
{
	bool topmost = state->topmost, entry = topmost && !state->syscall;

	state->topmost = false;
	state->syscall = false;
#ifdef CONFIG_UNWIND_USER_SFRAME
	/*
	 * A return address may be the first byte after the function (a call
	 * to a noreturn function): look up the call instruction instead.
	 * SFrame describes 64-bit code only. A frame in a mapping known to
	 * have no section never gets here (see unwind_user_plain_fp()); the
	 * topmost one comes first in its walk, before anything is known.
	 */
	if (sw && state->ws == sizeof(u64)) {
		unsigned long ip = topmost ? state->ip : state->ip - 1;
		int ret = unwind_user_sframe_find(sw, ip, frame);

		/*
		 * Frame pointers only for code SFrame does not cover
		 * (-ENOENT). Never guess in code that may have a section
		 * (-EAGAIN), whose section is malformed or unreadable
		 * (-EINVAL, -EFAULT), or that has one with a rule the frame
		 * cannot express (-EOPNOTSUPP: a signal frame, a flexible
		 * rule): stop the walk there (contract 14).
		 */
		if (ret != -ENOENT)
			return ret;
		/*
		 * The frame-pointer rule is the return address's for the
		 * rest of the walk: a recursion through frame-pointer code
		 * in a file whose section leaves that code out then costs
		 * no search of the section at each frame.
		 */
		if (!topmost) {
			*frame = arch_unwind_user_fp_frame(sizeof(u64));
			unwind_user_sframe_keep(sw, ip, frame);
			return 0;
		}
	}
#endif
	*frame = arch_unwind_user_fp_frame(state->ws);
	if (entry)
		arch_unwind_user_topmost_frame(state, frame);
	return 0;
}

/*
 * Step from the frame in @state, whose rule is @frame, to its caller, with
 * @ws the task's word size. Inlined twice: for any rule, and for the 64-bit
 * frame-pointer rule, where @frame and @ws are constants and the checks and
 * the access window fold to a few instructions. Returns 0 on success.
 */
static __always_inline int unwind_user_step(struct unwind_user_state *state,
					    const struct unwind_user_frame *frame,
					    unsigned int ws)
{
	unsigned long base, cfa, ra, fp;

	if (frame->use_fp) {
		/* A zero frame pointer marks the outermost frame. */
		if (!state->fp)
			return -ENOENT;
		base = state->fp;
	} else {
		base = state->sp;
	}

	cfa = base + frame->cfa_off;
	/*
	 * Callers live higher up the stack. A CFA that does not move up (which
	 * also catches wrap-around and any cycle in the chain) means the chain
	 * is corrupt.
	 */
	if (cfa <= state->sp)
		return -EINVAL;
	if (cfa & (ws - 1))
		return -EINVAL;
	if (ws == sizeof(u32) && cfa > U32_MAX)
		return -EINVAL;

	fp = state->fp;
	if (unwind_user_read_frame(ws, cfa, frame, &ra, &fp))
		return -EFAULT;

	/* A zero or non-user return address ends the chain as well. */
	if (!ra || ra >= TASK_SIZE_MAX)
		return -ENOENT;

	state->ip = ra;
	state->sp = cfa;
	state->fp = fp;
	return 0;
}

/*
 * Most steps: a 64-bit frame, not the topmost one, in code known to have no
 * SFrame section (the mapping of the last lookup had none). Its rule is the
 * frame-pointer one with no lookup at all.
 */
static __always_inline bool
unwind_user_plain_fp(const struct unwind_user_state *state,
		     const struct unwind_user_sframe *sw)
{
	if (state->topmost || state->ws != sizeof(u64))
		return false;
#ifdef CONFIG_UNWIND_USER_SFRAME
	return unwind_user_sframe_none(sw, state->ip - 1);
#else
	return true;
#endif
}

/*
 * Step from the frame in @state, not a plain frame-pointer one (see
 * unwind_user_plain_fp()), to its caller. Returns 0 on success.
 */
static int unwind_user_next(struct unwind_user_state *state,
			    struct unwind_user_sframe *sw)
{
	struct unwind_user_frame frame;

#ifdef CONFIG_UNWIND_USER_SFRAME
	/*
	 * A return address met before in this walk (a recursion): its rule
	 * is kept, and its step needs no lookup.
	 */
	if (!state->topmost && state->ws == sizeof(u64)) {
		const struct unwind_user_frame *again =
			unwind_user_sframe_again(sw, state->ip - 1);

		if (again)
			return unwind_user_step(state, again, sizeof(u64));
	}
#endif

	if (unwind_user_frame_rule(state, sw, &frame))
		return -ENOENT;
	return unwind_user_step(state, &frame, state->ws);
}

/* A plain frame-pointer step (see unwind_user_plain_fp()). */
static int unwind_user_next_fp(struct unwind_user_state *state)
{
	/* Its own object: never seen by the lookup, so kept constant. */
	const struct unwind_user_frame fp_frame =
		arch_unwind_user_fp_frame(sizeof(u64));

	return unwind_user_step(state, &fp_frame, sizeof(u64));
}

#ifdef CONFIG_UPROBES
/*
 * A pending uretprobe replaces its function's return address on the stack
 * with the address of the uprobes trampoline. Put the original back, as
 * perf's in-place callchains do: the task's return instances, innermost
 * first, answer the trampoline addresses met going up the stack, in order.
 * Only for the current task, whose utask cannot change during the walk.
 * The original is what the task had on its stack, like any return address:
 * returns false, to end the walk, where a return address would end it.
 */
static bool unwind_user_uretprobe_fixup(struct unwind_user_state *state,
					struct return_instance **ri)
{
	unsigned long ra;

	if (!*ri || state->ip != uprobe_get_trampoline_vaddr())
		return true;
	ra = (*ri)->orig_ret_vaddr;
	*ri = (*ri)->next;
	state->ip = ra;
	return ra && ra < TASK_SIZE_MAX;
}

static struct return_instance *unwind_user_return_instances(void)
{
	struct uprobe_task *utask = current->utask;

	return utask ? utask->return_instances : NULL;
}

static unsigned long unwind_user_uretprobe_trampoline(void)
{
	return uprobe_get_trampoline_vaddr();
}
#else
struct return_instance;

static inline bool
unwind_user_uretprobe_fixup(struct unwind_user_state *state,
			    struct return_instance **ri)
{
	return true;
}

static inline struct return_instance *unwind_user_return_instances(void)
{
	return NULL;
}

static inline unsigned long unwind_user_uretprobe_trampoline(void)
{
	return 0;
}
#endif

/*
 * A run of plain frame-pointer steps (see unwind_user_plain_fp()): record
 * the frame in @state and step to its caller, again and again, for as long
 * as each caller's code lies in the mapping the walk knows to have no
 * SFrame section and is not @stop: a return address in [@first, @first +
 * @len), @first being the mapping's start + 1 (a call may be the last
 * instruction of its code). Most frames of most walks are such steps, and
 * this is their loop: the position in registers, the entries stored
 * directly, one user access window for the run, and each frame's address
 * masked into user space (an address beyond it then faults) rather than
 * checked and fenced.
 *
 * The checks are those of unwind_user_step() for the 64-bit frame-pointer
 * rule, folded: the CFA, fp + 16, must be above the last one, so a caller's
 * frame pointer must be above the frame pointer it was read from, which
 * also ends the walk at a zero frame pointer (the outermost frame); the
 * return address must be in the range, which lies in user space, and is
 * checked in full only when it is not.
 *
 * Not inlined: the loop wants the registers that the general walk holds.
 *
 * Returns true with @state at the caller that ended the run (outside the
 * range, or @stop: the general loop takes it), false when the walk ends:
 * @max_entries entries recorded, the chain ended or broken, or a dying task.
 */
static noinline bool unwind_user_fp_run(struct unwind_user_state *state,
					unsigned long first, unsigned long len,
					unsigned long stop,
					struct unwind_stacktrace *trace,
					unsigned int max_entries)
{
	unsigned long *entry = trace->entries + trace->nr;
	unsigned long *end = trace->entries + max_entries;
	unsigned long fp = state->fp, ra, next;
	bool more = false;

	*entry++ = state->ip;
	if (entry == end)
		goto out;
	/* The first frame's CFA, fp + 16, must be above the stack pointer. */
	if (fp + 2 * sizeof(long) <= state->sp || (fp & (sizeof(long) - 1)))
		goto out;
	/*
	 * Open the window. The address it masks is not used: each frame
	 * masks its own below, before it reads anything.
	 */
	(void)masked_user_access_begin((const unsigned long __user *)fp);
	for (;;) {
		/* The walk may be long and fault a lot: a dying task ends it. */
		if (fatal_signal_pending(current))
			break;
		/*
		 * Masked in place: a user address stays what it was, and any
		 * other faults, so that from here on fp is the address read.
		 */
		fp = (unsigned long)mask_user_address((const void __user *)fp);
		unsafe_get_user(ra, (const unsigned long __user *)fp + 1, fault);
		unsafe_get_user(next, (const unsigned long __user *)fp, fault);
		if (unlikely(ra - first >= len))
			goto leave;
		if (unlikely(ra == stop))
			goto stop;
		*entry++ = ra;
		/*
		 * The caller's frame must be higher up the stack, which also
		 * catches wrap-around, a cycle and the zero frame pointer of
		 * the outermost frame, and aligned.
		 */
		if (unlikely(next <= fp))
			break;
		if (unlikely(next & (sizeof(long) - 1)))
			break;
		if (unlikely(entry == end))
			break;
		fp = next;
	}
fault:
	user_read_access_end();
	goto out;
leave:
	/* A zero or non-user return address ends the chain. */
	if (!ra || ra >= TASK_SIZE_MAX)
		goto fault;
stop:
	user_read_access_end();
	more = true;
	state->ip = ra;
	state->sp = fp + 2 * sizeof(long);
	state->fp = next;
out:
	trace->nr = entry - trace->entries;
	return more;
}

/*
 * Where the walk must look at a frame: at the task's signal trampolines and,
 * while a uretprobe is pending, at the uprobes trampoline.
 */
struct unwind_user_stops {
	unsigned long	addr[3];
	unsigned int	nr;
};

/*
 * The range and the stop address of a run of unwind_user_fp_run() from the
 * frame in @state, a plain frame-pointer one: false if more than one of
 * @stops lies in the mapping, which one compare a frame could not find.
 */
static bool unwind_user_fp_run_range(const struct unwind_user_sframe *sw,
				     const struct unwind_user_stops *stops,
				     unsigned long *first, unsigned long *len,
				     unsigned long *stop)
{
	unsigned int i;

#ifdef CONFIG_UNWIND_USER_SFRAME
	*first = sw->start + 1;
	*len = sw->end - sw->start;
#else
	*first = 1;
	*len = TASK_SIZE_MAX;
#endif
	/* Every return address in the range is a user address. */
	*len = min(*len, TASK_SIZE_MAX - *first);
	*stop = 0;
	for (i = 0; i < stops->nr; i++) {
		if (stops->addr[i] - *first >= *len)
			continue;
		if (*stop)
			return false;
		*stop = stops->addr[i];
	}
	return true;
}

/*
 * Returning to a signal trampoline: go on in the interrupted code, whose IP
 * is not a return address and whose frame may not be set up yet, like the
 * first frame of a walk. Out of line: it is the rare frame, and the loop
 * only compares the return address with the restorers. Returns as
 * arch_unwind_user_sigreturn().
 */
static noinline int unwind_user_sigreturn(struct unwind_user_state *state,
					  const unsigned long *restorers,
					  unsigned int nr)
{
	int ret = arch_unwind_user_sigreturn(state, restorers, nr);

	if (ret > 0)
		state->topmost = true;
	return ret;
}

/* Frames walked between two chances for other tasks to run. */
#define UNWIND_USER_RESCHED	1024

/*
 * Walk from @state, recording the current frame and then each caller, until
 * the chain ends or @max_entries entries were recorded. Sets
 * @trace->truncated when the walk's budget of SFrame reads ran out: a stop
 * by a bound, not at the stack's end.
 */
VISIBLE_IF_KUNIT int unwind_user_walk(struct unwind_user_state *state,
				      struct unwind_stacktrace *trace,
				      unsigned int max_entries)
{
	struct return_instance *ri = unwind_user_return_instances();
	struct unwind_user_sframe *sw = NULL;
	struct unwind_user_stops stops;
	/* The first two distinct ones; tasks rarely have more than one. */
	unsigned long restorers[2] = { 0, 0 };
	unsigned int nr_restorers, resched_at = UNWIND_USER_RESCHED;
#ifdef CONFIG_UNWIND_USER_SFRAME
	struct unwind_user_sframe sframe = {
		.reads_left = max(UNWIND_USER_SFRAME_READS,
				  UNWIND_USER_SFRAME_READS_FRAME * max_entries),
	};

	sw = &sframe;
#endif

	might_fault();

	/* Where the task's signal handlers return to: signal trampolines. */
	nr_restorers = arch_unwind_user_restorers(restorers, ARRAY_SIZE(restorers));
	for (stops.nr = 0; stops.nr < nr_restorers; stops.nr++)
		stops.addr[stops.nr] = restorers[stops.nr];
	if (ri)
		stops.addr[stops.nr++] = unwind_user_uretprobe_trampoline();

	trace->nr = 0;
	trace->truncated = false;
	while (trace->nr < max_entries) {
		unsigned long first, len, stop;

		/* Tens of thousands of frames: let others run now and then. */
		if (trace->nr >= resched_at) {
			cond_resched();
			resched_at = trace->nr + UNWIND_USER_RESCHED;
		}

		if (!unwind_user_plain_fp(state, sw)) {
			trace->entries[trace->nr++] = state->ip;
			/* A dying task ends the walk, as in the run. */
			if (fatal_signal_pending(current) ||
			    unwind_user_next(state, sw))
				break;
		} else if (can_do_masked_user_access() &&
			   unwind_user_fp_run_range(sw, &stops, &first, &len,
						    &stop)) {
			if (!unwind_user_fp_run(state, first, len, stop, trace,
						max_entries))
				break;
		} else {
			trace->entries[trace->nr++] = state->ip;
			if (fatal_signal_pending(current) ||
			    unwind_user_next_fp(state))
				break;
		}
		if (!unwind_user_uretprobe_fixup(state, &ri))
			break;
		/* Slots without a restorer hold 0, which no IP is. */
		if (likely(state->ip != restorers[0] &&
			   state->ip != restorers[1]))
			continue;
		if (unwind_user_sigreturn(state, restorers, nr_restorers) < 0)
			break;
	}
#ifdef CONFIG_UNWIND_USER_SFRAME
	if (!sframe.reads_left)
		trace->truncated = true;
	unwind_user_sframe_done(sw);
#endif
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(unwind_user_walk);

/* Kernel threads, user workers and tasks without an mm have no user stack. */
static bool unwind_user_refused(void)
{
	return (current->flags & (PF_KTHREAD | PF_USER_WORKER)) || !current->mm;
}

/**
 * unwind_user_start - the start of a walk of the current task's user stack
 * @state: filled in with the user state in @regs
 * @regs: the user registers the current task entered the kernel with
 *
 * Takes only what a walk needs (instruction, stack and frame pointers and
 * the word size), so that a caller can keep the start of a walk while the
 * registers change, for example before a signal frame is set up.
 *
 * Context: any; reads only @regs.
 * Return: 0; -EINVAL if the current task has no user stack to walk (kernel
 * threads, user workers, tasks without an mm) or @regs are in a user mode
 * the walker does not support.
 */
int unwind_user_start(struct unwind_user_state *state, struct pt_regs *regs)
{
	if (unwind_user_refused())
		return -EINVAL;

	state->ws = arch_unwind_user_word_size(regs);
	if (!state->ws)
		return -EINVAL;
	state->ip = instruction_pointer(regs);
	state->sp = user_stack_pointer(regs);
	state->fp = frame_pointer(regs);
	state->topmost = true;
	/*
	 * Code makes a system call from its body, never from a function's
	 * first instruction. The IP of a system call entry is at one only
	 * after execve(): the new program's entry point, which has no caller
	 * and no return address at the stack pointer (argc is there).
	 */
	state->syscall = syscall_get_nr(current, regs) >= 0;
#ifdef CONFIG_UPROBES
	/*
	 * Stopped to single-step a probed instruction out of line: the IP is
	 * in the uprobes XOL area, not in the program. Report the probed
	 * address, where the task is as far as its code is concerned.
	 */
	if (current->utask && current->utask->active_uprobe &&
	    state->ip == current->utask->xol_vaddr)
		state->ip = current->utask->vaddr;
#endif
	return 0;
}

/**
 * unwind_user_from - walk the current task's user stack from a given start
 * @start: the start, from unwind_user_start() during the same kernel entry
 * @trace: filled with the user instruction addresses, innermost first;
 *	   @trace->entries must have room for @max_entries
 * @max_entries: the depth cap
 *
 * As unwind_user(), from the state in @start rather than from the current
 * registers. @start is not changed.
 *
 * Context: task context, page faults allowed; may sleep.
 * Return: 0, even if the walk stopped early; -EINVAL as for unwind_user().
 * @trace->nr is always set.
 */
int unwind_user_from(const struct unwind_user_state *start,
		     struct unwind_stacktrace *trace, unsigned int max_entries)
{
	struct unwind_user_state state = *start;

	trace->nr = 0;
	if (unwind_user_refused() || !state.ws)
		return -EINVAL;
	state.topmost = true;
	return unwind_user_walk(&state, trace, max_entries);
}

/**
 * unwind_user - walk the current task's user stack
 * @trace: filled with the user instruction addresses, innermost first;
 *	   @trace->entries must have room for @max_entries
 * @max_entries: the depth cap
 *
 * Walk the frame-pointer chain that starts at the user registers the current
 * task entered the kernel with. The first entry is the user instruction
 * pointer at kernel entry; each further entry is a return address. The walk
 * stops at the outermost frame, at the first frame that looks corrupt (not
 * moving up the stack, misaligned, outside user space or unmapped), or at
 * @max_entries. Entries walked before the stop are kept.
 *
 * Context: task context, page faults allowed; may sleep.
 * Return: 0 on success, even if the walk stopped early; -EINVAL if the current
 * task has no user stack to walk (kernel threads, user workers, tasks without
 * an mm, or a user mode the walker does not support). @trace->nr is always
 * set.
 */
int unwind_user(struct unwind_stacktrace *trace, unsigned int max_entries)
{
	struct unwind_user_state state;

	trace->nr = 0;
	if (unwind_user_start(&state, task_pt_regs(current)))
		return -EINVAL;
	return unwind_user_walk(&state, trace, max_entries);
}
EXPORT_SYMBOL_IF_KUNIT(unwind_user);
