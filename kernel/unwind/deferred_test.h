/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of kernel/unwind/deferred.c and context.c that only their tests
 * use: the KUnit
 * suite (lib/tests/unwind_deferred_kunit.c) and the test client
 * (lib/tests/unwind_deferred_test.c). Not an interface for tracers.
 */
#ifndef _KERNEL_UNWIND_DEFERRED_TEST_H
#define _KERNEL_UNWIND_DEFERRED_TEST_H

#include <linux/types.h>
#include <linux/unwind_deferred_types.h>

#if IS_ENABLED(CONFIG_KUNIT)
u64 unwind_cookie_make(u32 ctr, unsigned int cpu);
u64 unwind_new_cookie(void);
int unwind_state_request(struct unwind_task_info *info, int bit, u64 *cookie);
union unwind_task_state unwind_state_take_pending(struct unwind_task_info *info);
bool unwind_state_reset(struct unwind_task_info *info);
bool unwind_context_attrs_ok(const u8 *attrs, unsigned int size);
#endif

#ifdef CONFIG_UNWIND_TEST_CLIENT
/*
 * Called by a task's deferred run between its walk and its callbacks, when
 * set: the test client parks the task there to open the window in which a
 * tracer is cancelled and its bit handed to another one.
 */
extern void (*unwind_deferred_test_hook)(void);
#endif

#endif /* _KERNEL_UNWIND_DEFERRED_TEST_H */
