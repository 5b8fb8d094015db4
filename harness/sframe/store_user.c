// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's store of loaded SFrame tables (kernel/unwind/sframe_store.c),
 * built for user space through shim_store.h and the stub headers in
 * kstore/. The reader it calls (sframe_init(), sframe_validate()) is
 * sframe_user.c's build of kernel/unwind/sframe.c.
 */
#include "shim_store.h"

/* Kernel code is not written for -Wextra. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "../../kernel/unwind/sframe_store.c"
#pragma GCC diagnostic pop

struct miscdevice *sframe_shim_misc;
void (*sframe_shim_mutex_contended)(struct mutex *m);
void (*sframe_shim_copy_hook)(void *to, const void *from, unsigned long n);
unsigned long *const sframe_shim_max_bytes = &sframe_tables_max_bytes;

/* RCU: the depth of read-side sections, and the callbacks waiting for 0. */
static unsigned int rcu_depth;
static struct rcu_head *rcu_pending;

void rcu_read_lock(void)
{
	rcu_depth++;
}

void rcu_read_unlock(void)
{
	struct rcu_head *head;

	if (!rcu_depth)
		abort();
	if (--rcu_depth)
		return;
	/* The grace period ends: no reader is left. */
	while (rcu_pending) {
		head = rcu_pending;
		rcu_pending = head->next;
		head->func(head);
	}
}

void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	head->func = func;
	if (!rcu_depth) {
		func(head);
		return;
	}
	head->next = rcu_pending;
	rcu_pending = head;
}

void sframe_shim_rcu_check(bool cond)
{
	if (!cond && !rcu_depth) {
		fprintf(stderr, "suspicious RCU usage: list walk without RCU or lock\n");
		abort();
	}
}

int single_open(struct file *file, int (*show)(struct seq_file *m, void *v),
		void *data)
{
	struct seq_file *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->show = show;
	m->private = data;
	file->private_data = m;
	return 0;
}

int single_release(struct inode *inode, struct file *file)
{
	(void)inode;
	free(file->private_data);
	file->private_data = NULL;
	return 0;
}

ssize_t seq_read(struct file *file, char __user *buf, size_t count,
		 loff_t *ppos)
{
	struct seq_file *m = file->private_data;
	size_t n;
	int ret;

	if (!*ppos) {
		m->count = 0;
		m->overflow = false;
		ret = m->show(m, NULL);
		if (ret)
			return ret;
		if (m->overflow)
			return -ENOMEM;
	}
	if ((size_t)*ppos >= m->count)
		return 0;
	n = min(count, m->count - (size_t)*ppos);
	memcpy(buf, m->buf + *ppos, n);
	*ppos += n;
	return n;
}

loff_t seq_lseek(struct file *file, loff_t off, int whence)
{
	(void)file; (void)off; (void)whence;
	return -ESPIPE;
}

void seq_printf(struct seq_file *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (m->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(m->buf + m->count, sizeof(m->buf) - m->count, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(m->buf) - m->count)
		m->overflow = true;
	else
		m->count += n;
}

bool sframe_user_store_empty(void)
{
	unsigned int i;

	if (mutex_is_locked(&sframe_tables_mutex) || rcu_depth || rcu_pending)
		return false;
	for (i = 0; i < ARRAY_SIZE(sframe_tables); i++)
		if (sframe_tables[i].first)
			return false;
	return !atomic_long_read(&sframe_tables_bytes);
}
