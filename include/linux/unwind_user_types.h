/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_USER_TYPES_H
#define _LINUX_UNWIND_USER_TYPES_H

#include <linux/types.h>

/**
 * struct unwind_stacktrace - a user-space stack trace
 * @nr:		number of valid entries
 * @truncated:	the deferred walk stopped at kernel.unwind_max_frames with
 *		frames left: the stack is deeper than @nr. Set by the deferred
 *		core only; unwind_user() leaves it alone.
 * @entries:	user instruction addresses, innermost first; the array is
 *		owned by the caller
 */
struct unwind_stacktrace {
	unsigned int	nr;
	bool		truncated;
	unsigned long	*entries;
};

/**
 * struct unwind_user_frame - where a frame keeps its caller's state
 * @cfa_off:	offset of the canonical frame address (the caller's stack
 *		pointer) from the base register
 * @ra_off:	offset of the saved return address from the CFA
 * @fp_off:	offset of the saved frame pointer from the CFA, or 0 when the
 *		frame did not save it (the caller's frame pointer is live)
 * @use_fp:	the base register is the frame pointer, not the stack pointer
 */
struct unwind_user_frame {
	s32	cfa_off;
	s32	ra_off;
	s32	fp_off;
	bool	use_fp;
};

/**
 * struct unwind_user_state - the walker's position in a user stack
 * @ip:		instruction address of the current frame
 * @sp:		stack pointer of the current frame
 * @fp:		frame pointer of the current frame
 * @ws:		user word size in bytes: 8 for native tasks, 4 for compat
 * @topmost:	the current frame is the one the task entered the kernel from,
 *		so it may not have set up its frame yet
 * @syscall:	... by a system call: then it has, or it is a new program's
 *		entry point after execve(), which has no caller
 */
struct unwind_user_state {
	unsigned long	ip;
	unsigned long	sp;
	unsigned long	fp;
	unsigned int	ws;
	bool		topmost;
	bool		syscall;
};

#endif /* _LINUX_UNWIND_USER_TYPES_H */
