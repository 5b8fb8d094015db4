// SPDX-License-Identifier: GPL-2.0
/*
 * Test client for user-space stack unwinding, for test kernels only.
 *
 * /sys/kernel/debug/unwind_test/user_stack: a read() walks the reading task's
 * user stack with unwind_user() from inside the read system call, and returns
 * the walk as text: a header line "nr=N ws=W" followed by one user address per
 * line, in hex, innermost first. A user-space test makes the read() from a
 * known call chain and compares.
 *
 * /sys/kernel/debug/unwind_test/sframe_park: two walks of one mapping at
 * once (contract 22). Writing "park TID" makes the next SFrame lookup of
 * thread TID stop between reading its mapping's entry and taking its
 * reference, with the VMA read-locked; a read() returns "parked TID" once
 * it has stopped there; writing "release" lets it go on. Meanwhile another
 * thread of the process walks the same mapping.
 */

#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>

#include "../../kernel/unwind/sframe.h"

#define UNWIND_TEST_MAX_ENTRIES	64

static ssize_t user_stack_read(struct file *file, char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	unsigned int ws = arch_unwind_user_word_size(task_pt_regs(current));
	struct unwind_stacktrace trace;
	size_t size, len = 0;
	unsigned long *entries;
	unsigned int i;
	ssize_t ret;
	char *buf;
	int err;

	/* The walk is of this very read(): a partial read cannot be resumed. */
	if (*ppos)
		return 0;

	size = 32 + UNWIND_TEST_MAX_ENTRIES * 20;
	entries = kcalloc(UNWIND_TEST_MAX_ENTRIES, sizeof(*entries), GFP_KERNEL);
	buf = kmalloc(size, GFP_KERNEL);
	if (!entries || !buf) {
		ret = -ENOMEM;
		goto out;
	}

	trace.entries = entries;
	err = unwind_user(&trace, UNWIND_TEST_MAX_ENTRIES);
	if (err) {
		ret = err;
		goto out;
	}

	len = scnprintf(buf, size, "nr=%u ws=%u\n", trace.nr, ws);
	for (i = 0; i < trace.nr; i++)
		len += scnprintf(buf + len, size - len, "%lx\n", entries[i]);
	ret = simple_read_from_buffer(ubuf, count, ppos, buf, len);
out:
	kfree(buf);
	kfree(entries);
	return ret;
}

static const struct file_operations user_stack_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= user_stack_read,
};

#ifdef CONFIG_UNWIND_USER_SFRAME
static pid_t park_tid;			/* the thread to park next, or 0 */
static DECLARE_COMPLETION(park_parked);
static DECLARE_COMPLETION(park_release);

/* Called by every SFrame lookup; see sframe_vma_test_hook. */
static void park_hook(void)
{
	pid_t tid = current->pid;

	if (READ_ONCE(park_tid) != tid || cmpxchg(&park_tid, tid, 0) != tid)
		return;
	complete(&park_parked);
	/* Killable, so that a failing test cannot leave the task stuck. */
	if (wait_for_completion_killable(&park_release))
		pr_info("unwind_test: parked task %d killed\n", tid);
}

static ssize_t park_read(struct file *file, char __user *ubuf, size_t count,
			 loff_t *ppos)
{
	char buf[32];
	int len;

	if (*ppos)
		return 0;
	if (wait_for_completion_killable(&park_parked))
		return -EINTR;
	len = scnprintf(buf, sizeof(buf), "parked\n");
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static ssize_t park_write(struct file *file, const char __user *ubuf,
			  size_t count, loff_t *ppos)
{
	char buf[32];
	int tid;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sscanf(buf, "park %d", &tid) == 1 && tid > 0) {
		reinit_completion(&park_parked);
		reinit_completion(&park_release);
		WRITE_ONCE(park_tid, tid);
	} else if (!strcmp(buf, "release\n") || !strcmp(buf, "release")) {
		WRITE_ONCE(park_tid, 0);
		complete_all(&park_release);
	} else {
		return -EINVAL;
	}
	return count;
}

static const struct file_operations park_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.read	= park_read,
	.write	= park_write,
};
#endif

static int __init unwind_test_client_init(void)
{
	struct dentry *dir = debugfs_create_dir("unwind_test", NULL);

	debugfs_create_file("user_stack", 0400, dir, NULL, &user_stack_fops);
#ifdef CONFIG_UNWIND_USER_SFRAME
	debugfs_create_file("sframe_park", 0600, dir, NULL, &park_fops);
	WRITE_ONCE(sframe_vma_test_hook, park_hook);
#endif
	return 0;
}
late_initcall(unwind_test_client_init);
