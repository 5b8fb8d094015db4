// SPDX-License-Identifier: GPL-2.0
/*
 * Test client for user-space stack unwinding, for test kernels only.
 *
 * /sys/kernel/debug/unwind_test/user_stack: a read() walks the reading task's
 * user stack with unwind_user() from inside the read system call, and returns
 * the walk as text: a header line "nr=N ws=W" followed by one user address per
 * line, in hex, innermost first. A user-space test makes the read() from a
 * known call chain and compares.
 */

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>

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

static int __init unwind_test_client_init(void)
{
	struct dentry *dir = debugfs_create_dir("unwind_test", NULL);

	debugfs_create_file("user_stack", 0400, dir, NULL, &user_stack_fops);
	return 0;
}
late_initcall(unwind_test_client_init);
