/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_USER_H
#define _LINUX_UNWIND_USER_H

#include <linux/unwind_user_types.h>

#ifdef CONFIG_HAVE_UNWIND_USER_FP
#include <asm/unwind_user.h>
#endif

#ifndef arch_unwind_user_topmost_frame
/*
 * Without an arch hook, assume the topmost frame already set up its frame
 * pointer, like every other frame.
 */
static inline bool
arch_unwind_user_topmost_frame(const struct unwind_user_state *state,
			       struct unwind_user_frame *frame)
{
	return false;
}
#endif

#ifndef arch_unwind_user_sigreturn
/* Without an arch hook, signal frames are not recognised. */
static inline int arch_unwind_user_sigreturn(struct unwind_user_state *state,
					     const unsigned long *restorers,
					     unsigned int nr)
{
	return 0;
}

static inline unsigned int arch_unwind_user_restorers(unsigned long *out,
						      unsigned int max)
{
	return 0;
}
#endif

#ifdef CONFIG_UNWIND_USER

struct pt_regs;

int unwind_user(struct unwind_stacktrace *trace, unsigned int max_entries);
int unwind_user_start(struct unwind_user_state *state, struct pt_regs *regs);
int unwind_user_from(const struct unwind_user_state *start,
		     struct unwind_stacktrace *trace, unsigned int max_entries);

#if IS_ENABLED(CONFIG_KUNIT)
int unwind_user_walk(struct unwind_user_state *state,
		     struct unwind_stacktrace *trace, unsigned int max_entries);
#endif

#else /* !CONFIG_UNWIND_USER */

static inline int unwind_user(struct unwind_stacktrace *trace,
			      unsigned int max_entries)
{
	trace->nr = 0;
	return -EOPNOTSUPP;
}

#endif /* CONFIG_UNWIND_USER */

struct vm_area_struct;

#ifdef CONFIG_UNWIND_USER_SFRAME
void sframe_vma_dup(struct vm_area_struct *vma);
void sframe_vma_free(struct vm_area_struct *vma);

struct mm_struct;

/**
 * struct sframe_mm_usage - the SFrame registry of one mm (for the bench)
 * @vmas:	mappings
 * @exec:	file-backed executable mappings
 * @examined:	of those, examined by a walk (with or without a section)
 * @sections:	of those, with a section: an entry each
 * @bytes:	the entries' allocated size
 */
struct sframe_mm_usage {
	unsigned long	vmas;
	unsigned long	exec;
	unsigned long	examined;
	unsigned long	sections;
	size_t		bytes;
};

int sframe_mm_usage(struct mm_struct *mm, struct sframe_mm_usage *u);
#else
static inline void sframe_vma_dup(struct vm_area_struct *vma) {}
static inline void sframe_vma_free(struct vm_area_struct *vma) {}
#endif

#endif /* _LINUX_UNWIND_USER_H */
