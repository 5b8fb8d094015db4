/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _ASM_X86_UNWIND_USER_H
#define _ASM_X86_UNWIND_USER_H

#include <linux/types.h>
#include <linux/uaccess.h>
#include <linux/unwind_user_types.h>
#include <asm/ptrace.h>

/*
 * A frame set up by "push %rbp; mov %rsp,%rbp" (or its 32-bit form): the
 * frame pointer points at the saved frame pointer, the return address is one
 * word above it, and the caller's stack pointer one word above that.
 */
static inline struct unwind_user_frame arch_unwind_user_fp_frame(int ws)
{
	return (struct unwind_user_frame) {
		.cfa_off = 2 * ws, .ra_off = -ws, .fp_off = -2 * ws, .use_fp = true,
	};
}

/*
 * Stopped on a function's first instruction (ENDBR or "push %rbp"): only the
 * return address is on the stack, and the frame pointer is still the caller's.
 */
static inline struct unwind_user_frame arch_unwind_user_entry_frame(int ws)
{
	return (struct unwind_user_frame) {
		.cfa_off = ws, .ra_off = -ws, .fp_off = 0, .use_fp = false,
	};
}

/*
 * Stopped after "push %rbp" but before "mov %rsp,%rbp": the saved frame
 * pointer is at the stack pointer and the return address above it.
 */
static inline struct unwind_user_frame arch_unwind_user_pushed_frame(int ws)
{
	return (struct unwind_user_frame) {
		.cfa_off = 2 * ws, .ra_off = -ws, .fp_off = -2 * ws, .use_fp = false,
	};
}

/**
 * arch_unwind_user_word_size - word size of the user code that entered
 * @regs: the user register frame
 *
 * Return: 8 for 64-bit code, 4 for 32-bit compat code, 0 for modes the walker
 * does not support (vm86, or a frame that is not from user mode).
 */
static inline unsigned int arch_unwind_user_word_size(struct pt_regs *regs)
{
	if (!user_mode(regs) || v8086_mode(regs))
		return 0;
	return user_64bit_mode(regs) ? 8 : 4;
}

#define arch_unwind_user_topmost_frame arch_unwind_user_topmost_frame
/**
 * arch_unwind_user_topmost_frame - detect a topmost frame not yet set up
 * @state: the walker's state at the topmost frame: the user instruction
 *	   address the task entered the kernel from, its stack and frame
 *	   pointers and word size
 * @frame: filled in with the frame layout when detected
 *
 * An interrupt, exception or probe can stop a task on a function's first
 * instructions, before it saved its caller's frame pointer. A plain frame
 * pointer walk would then skip the caller. Look at the code at the address:
 * ENDBR or "push %rbp" mean nothing but the return address is on the stack
 * yet; "mov %rsp,%rbp" right after "push %rbp" means the frame pointer was
 * pushed but not yet set.
 *
 * A uprobe on that "push %rbp" leaves an int3 (0xcc) in its place, while
 * uprobes has already carried the push out (emulated or single-stepped)
 * by the time the walk runs. Then the word at the stack pointer is the
 * pushed frame pointer, still equal to the frame pointer register, and that
 * is what identifies the case.
 *
 * Context: task context; reads user memory and may fault.
 * Return: true when @frame was filled in.
 */
static inline bool
arch_unwind_user_topmost_frame(const struct unwind_user_state *state,
			       struct unwind_user_frame *frame)
{
	const u8 __user *p = (const u8 __user *)state->ip;
	unsigned int ws = state->ws;
	u8 insn[4], prev;

	if (get_user(insn[0], p))
		return false;

	if (insn[0] == 0x55) {				/* push %rbp */
		*frame = arch_unwind_user_entry_frame(ws);
		return true;
	}

	if (insn[0] == 0xf3) {				/* endbr64 / endbr32 */
		if (copy_from_user(insn, p, 4))
			return false;
		if (insn[1] == 0x0f && insn[2] == 0x1e &&
		    insn[3] == (ws == 8 ? 0xfa : 0xfb)) {
			*frame = arch_unwind_user_entry_frame(ws);
			return true;
		}
		return false;
	}

	/* mov %rsp,%rbp: 48 89 e5 or 48 8b ec; 32-bit: no REX prefix. */
	if (ws == 8) {
		if (insn[0] != 0x48 || copy_from_user(insn, p, 3))
			return false;
		memmove(insn, insn + 1, 2);
	} else if (copy_from_user(insn, p, 2)) {
		return false;
	}
	if (!((insn[0] == 0x89 && insn[1] == 0xe5) ||
	      (insn[0] == 0x8b && insn[1] == 0xec)))
		return false;
	if (get_user(prev, p - 1))
		return false;
	if (IS_ENABLED(CONFIG_UPROBES) && prev == 0xcc) {	/* uprobe'd push */
		unsigned long pushed;

		if (ws == 8) {
			if (get_user(pushed, (const unsigned long __user *)state->sp))
				return false;
		} else {
			u32 word;

			if (get_user(word, (const u32 __user *)state->sp))
				return false;
			pushed = word;
		}
		if (pushed != state->fp)
			return false;
	} else if (prev != 0x55) {
		return false;
	}
	*frame = arch_unwind_user_pushed_frame(ws);
	return true;
}

#ifdef CONFIG_X86_64
#include <linux/sched/signal.h>
#include <asm/sigframe.h>

#define arch_unwind_user_sigreturn arch_unwind_user_sigreturn
/**
 * arch_unwind_user_sigreturn - step from a signal handler's return address
 * @state: the walker's state at the frame whose return address @state->ip
 *	   is; @state->sp is the CFA of the handler's frame
 * @restorers: sa_restorer addresses of the task's signal handlers
 * @nr: how many
 *
 * A handler returns to its sa_restorer, glibc's __restore_rt: "mov $15,
 * %rax; syscall" (rt_sigreturn), or musl's, which moves the number with a
 * shorter encoding, "mov $15, %eax". The kernel put the address there when it
 * built the rt_sigframe, whose ucontext follows it: the CFA of the handler's
 * frame is the ucontext. Recognise the trampoline by its address (one of
 * the task's restorers) and its code, then continue with the instruction,
 * stack and frame pointers that the signal interrupted, read from the
 * ucontext's sigcontext and checked: user addresses, an aligned stack. The
 * trampoline itself is not reported: it is not a frame.
 *
 * Context: task context; reads user memory and may fault.
 * Return: 1 when @state now describes the interrupted frame, 0 when
 * @state->ip is no signal trampoline, or -EFAULT/-EINVAL when it is one but
 * its frame cannot be read or is not sane (the walk then stops).
 */
static inline int arch_unwind_user_sigreturn(struct unwind_user_state *state,
					     const unsigned long *restorers,
					     unsigned int nr)
{
	static const u8 glibc[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00,
				    0x0f, 0x05 };
	static const u8 musl[] = { 0xb8, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
	const void __user *at = (const void __user *)state->ip;
	const struct sigcontext __user *sc;
	unsigned long ip, sp, bp;
	u8 insn[sizeof(glibc)];
	unsigned int i;

	if (state->ws != 8)
		return 0;
	for (i = 0; i < nr && restorers[i] != state->ip; i++)
		;
	if (i == nr)
		return 0;
	/* The shorter first: it may end where the next page is not mapped. */
	if (copy_from_user(insn, at, sizeof(musl)))
		return 0;
	if (memcmp(insn, musl, sizeof(musl)) &&
	    (copy_from_user(insn, at, sizeof(glibc)) ||
	     memcmp(insn, glibc, sizeof(glibc))))
		return 0;

	sc = (const struct sigcontext __user *)
		(state->sp + offsetof(struct ucontext, uc_mcontext));
	if (!user_read_access_begin(sc, sizeof(*sc)))
		return -EFAULT;
	unsafe_get_user(ip, &sc->ip, fault);
	unsafe_get_user(sp, &sc->sp, fault);
	unsafe_get_user(bp, &sc->bp, fault);
	user_read_access_end();

	if (!ip || ip >= TASK_SIZE_MAX || !sp || sp >= TASK_SIZE_MAX ||
	    (sp & 7))
		return -EINVAL;
	state->ip = ip;
	state->sp = sp;
	state->fp = bp;
	return 1;
fault:
	user_read_access_end();
	return -EFAULT;
}

#define arch_unwind_user_restorers arch_unwind_user_restorers
/**
 * arch_unwind_user_restorers - the sa_restorer addresses of current's handlers
 * @out: filled with up to @max distinct addresses
 * @max: room in @out
 *
 * Read without the siglock: a handler changed during the walk at worst
 * misses or adds a candidate, and a candidate is used only if its code is
 * the rt_sigreturn trampoline.
 *
 * Return: how many were found.
 */
static inline unsigned int arch_unwind_user_restorers(unsigned long *out,
						      unsigned int max)
{
	struct sighand_struct *sh = current->sighand;
	const struct k_sigaction *ka, *group, *end;
	unsigned int n = 0, i;

	if (!sh || !max)
		return 0;
	/*
	 * Every walk scans all the actions, 8 at a time: one load and OR a
	 * signal while none of the 8 has SA_RESTORER, the common case, and
	 * the rest out of line.
	 */
	BUILD_BUG_ON(_NSIG % 8);
	end = sh->action + _NSIG;
	for (group = sh->action; group < end; group += 8) {
		/* Written out: the compiler keeps a loop of 8 as a loop. */
		unsigned long flags = READ_ONCE(group[0].sa.sa_flags) |
			READ_ONCE(group[1].sa.sa_flags) |
			READ_ONCE(group[2].sa.sa_flags) |
			READ_ONCE(group[3].sa.sa_flags) |
			READ_ONCE(group[4].sa.sa_flags) |
			READ_ONCE(group[5].sa.sa_flags) |
			READ_ONCE(group[6].sa.sa_flags) |
			READ_ONCE(group[7].sa.sa_flags);

		if (likely(!(flags & SA_RESTORER)))
			continue;
		for (ka = group; ka < group + 8; ka++) {
			unsigned long r;

			if (!(READ_ONCE(ka->sa.sa_flags) & SA_RESTORER))
				continue;
			r = (unsigned long)READ_ONCE(ka->sa.sa_restorer);
			for (i = 0; i < n && out[i] != r; i++)
				;
			if (i < n || !r)
				continue;
			out[n++] = r;
			if (n == max)
				return n;
		}
	}
	return n;
}
#endif /* CONFIG_X86_64 */

#endif /* _ASM_X86_UNWIND_USER_H */
