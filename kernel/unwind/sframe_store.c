// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame tables loaded from user space, keyed by GNU build-id.
 *
 * Most code has no SFrame section and no frame pointers, only .eh_frame.
 * The kernel does not interpret DWARF: a user-space tool converts a file's
 * .eh_frame to an SFrame section, and a privileged process loads it here
 * for the file's build-id. When a walk first meets a mapping of a file that
 * has no section of its own, sframe_vma.c reads the build-id note from the
 * process's memory and looks it up here; the table then serves that mapping
 * exactly as a section in the file would. One load serves every process
 * that maps the file, and a rebuilt file has another build-id, so it never
 * gets a stale table.
 *
 * A table is untrusted input like a section in user memory: it is checked
 * in full (sframe_validate()) before it is accepted, and every later read
 * goes through the same bounded reader. It lives in kernel memory, charged
 * to the loader's memory cgroup, within a total that root can set
 * (kernel.sframe_tables_max_bytes). The total counts every table from the
 * write that completes its header until it is freed: tables being written,
 * in the store, and removed but still used by mappings.
 *
 * Interface: the character device /dev/sframe_tables, which only a process
 * with CAP_PERFMON or CAP_SYS_ADMIN may open (-EPERM otherwise).
 *  - write() a struct sframe_table_hdr followed by the section: one table
 *    per open file, in as many writes as needed. The write that completes
 *    the header refuses a bad one (sframe_table_alloc()); the write that
 *    completes the table returns 0 bytes short on success, or the error
 *    (sframe_table_add()). An error changes nothing.
 *  - write() "remove <hex build-id>\n" to remove a table.
 *  - read() lists the tables: "<hex build-id> <bytes> <mappings>" per line.
 *
 * Lifetime: a table holds one reference for the store and one per mapping
 * entry (struct sframe_vma_info) that uses it. Removing it drops the
 * store's reference; mappings already using it keep it until they go, so
 * no walk ever reads freed memory. Lookups run under RCU.
 */

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/jhash.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysctl.h>
#include <linux/uaccess.h>
#include <uapi/linux/sframe_table.h>
#include <kunit/visibility.h>

#include "sframe.h"

/* One table is at most this big; libstdc++'s is about 250 KiB. */
#define SFRAME_TABLE_MAX_SIZE	(16 << 20)
#define SFRAME_TABLE_HASH_BITS	6

static DEFINE_MUTEX(sframe_tables_mutex);	/* add, remove */
static struct hlist_head sframe_tables[1 << SFRAME_TABLE_HASH_BITS];
static atomic_long_t sframe_tables_bytes;	/* of every table allocated */
/* Bumped, under the mutex, after each table is added; see below. */
static u64 sframe_tables_gen;
static unsigned long sframe_tables_max_bytes = 64 << 20;

static u32 sframe_build_id_hash(const u8 *id, unsigned int len)
{
	return jhash(id, len, 0) & ((1 << SFRAME_TABLE_HASH_BITS) - 1);
}

/* Size charged to the total: what was allocated for the table. */
static size_t sframe_table_bytes(const struct sframe_table *t)
{
	return sizeof(*t) + t->size;
}

static void sframe_table_free_rcu(struct rcu_head *rcu)
{
	kvfree(container_of(rcu, struct sframe_table, rcu));
}

/**
 * sframe_table_put - drop a reference to a loaded table
 * @t: the table, or NULL
 *
 * The last reference takes it off the total and frees it after an RCU
 * grace period, since lookups may still be looking at it.
 *
 * Context: any; does not sleep.
 */
void sframe_table_put(struct sframe_table *t)
{
	if (t && refcount_dec_and_test(&t->ref)) {
		atomic_long_sub(sframe_table_bytes(t), &sframe_tables_bytes);
		call_rcu(&t->rcu, sframe_table_free_rcu);
	}
}
EXPORT_SYMBOL_IF_KUNIT(sframe_table_put);

/**
 * sframe_table_free - free a table that the store never took
 * @t: a table from sframe_table_alloc(), or NULL
 *
 * Context: task context, may sleep.
 */
VISIBLE_IF_KUNIT void sframe_table_free(struct sframe_table *t)
{
	if (!t)
		return;
	atomic_long_sub(sframe_table_bytes(t), &sframe_tables_bytes);
	kvfree(t);
}
EXPORT_SYMBOL_IF_KUNIT(sframe_table_free);

/* Under RCU or the mutex. */
static struct sframe_table *sframe_table_find(const u8 *id, unsigned int len)
{
	struct sframe_table *t;

	hlist_for_each_entry_rcu(t, &sframe_tables[sframe_build_id_hash(id, len)],
				 node, lockdep_is_held(&sframe_tables_mutex))
		if (t->build_id_len == len && !memcmp(t->build_id, id, len))
			return t;
	return NULL;
}

/**
 * sframe_table_get - the table loaded for a build-id
 * @id: the build-id
 * @len: its length
 *
 * Context: any; does not sleep.
 * Return: the table with a reference the caller must drop with
 * sframe_table_put(), or NULL when none is loaded for @id.
 */
struct sframe_table *sframe_table_get(const u8 *id, unsigned int len)
{
	struct sframe_table *t;

	if (!len || len > SFRAME_TABLE_BUILD_ID_MAX)
		return NULL;
	rcu_read_lock();
	t = sframe_table_find(id, len);
	if (t && !refcount_inc_not_zero(&t->ref))
		t = NULL;
	rcu_read_unlock();
	return t;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_table_get);

/**
 * sframe_tables_generation - how many tables were ever added to the store
 *
 * A mapping found to have no table keeps the generation it was examined
 * at, and looks again when it changed. Read before sframe_table_get(): a
 * table that lookup missed was added after this read, and bumps it past
 * the value read.
 *
 * Context: any; does not sleep.
 * Return: the number of tables added since boot.
 */
u64 sframe_tables_generation(void)
{
	/* Pairs with the release in sframe_table_add(). */
	return smp_load_acquire(&sframe_tables_gen);
}

/*
 * The section of @t as the reader sees it, at load bias @bias, with the
 * text range @text_start..@text_end.
 */
void sframe_table_section(const struct sframe_table *t, unsigned long bias,
			  struct sframe_section *sec)
{
	memset(sec, 0, sizeof(*sec));
	sec->sframe_start = bias + t->sframe_vaddr;
	sec->sframe_end = sec->sframe_start + t->size;
	sec->text_start = bias + t->text_vaddr;
	sec->text_end = sec->text_start + t->text_size;
	sec->kdata = t->data;
}

/**
 * sframe_table_alloc - check a table's header and allocate the table
 * @hdr: the header
 *
 * The caller fills in @hdr->sframe_size bytes of section at ->data, then
 * hands the table to sframe_table_add(), or frees it with
 * sframe_table_free(). It counts in the total from now on: a section
 * buffered by a writer takes as much memory as a loaded one.
 *
 * Context: task context, may sleep.
 * Return: the table; ERR_PTR(-EINVAL) for a bad header, ERR_PTR(-E2BIG)
 * for a section larger than 16 MiB, ERR_PTR(-ENOSPC) when the total would
 * exceed kernel.sframe_tables_max_bytes, ERR_PTR(-ENOMEM).
 */
VISIBLE_IF_KUNIT struct sframe_table *
sframe_table_alloc(const struct sframe_table_hdr *hdr)
{
	struct sframe_table *t;
	size_t bytes;

	if (hdr->magic != SFRAME_TABLE_MAGIC ||
	    hdr->version != SFRAME_TABLE_VERSION || hdr->flags ||
	    !hdr->build_id_len || hdr->build_id_len > SFRAME_TABLE_BUILD_ID_MAX ||
	    !hdr->sframe_size || !hdr->text_size ||
	    hdr->text_vaddr + hdr->text_size < hdr->text_vaddr ||
	    hdr->sframe_vaddr + hdr->sframe_size < hdr->sframe_vaddr ||
	    hdr->text_vaddr + hdr->text_size > TASK_SIZE_MAX ||
	    hdr->sframe_vaddr + hdr->sframe_size > TASK_SIZE_MAX)
		return ERR_PTR(-EINVAL);
	if (hdr->sframe_size > SFRAME_TABLE_MAX_SIZE)
		return ERR_PTR(-E2BIG);

	/* As sframe_table_bytes() counts it. */
	bytes = sizeof(*t) + hdr->sframe_size;
	if ((unsigned long)atomic_long_add_return(bytes, &sframe_tables_bytes) >
	    READ_ONCE(sframe_tables_max_bytes)) {
		atomic_long_sub(bytes, &sframe_tables_bytes);
		return ERR_PTR(-ENOSPC);
	}
	t = kvmalloc(struct_size(t, data, hdr->sframe_size), GFP_KERNEL_ACCOUNT);
	if (!t) {
		atomic_long_sub(bytes, &sframe_tables_bytes);
		return ERR_PTR(-ENOMEM);
	}
	refcount_set(&t->ref, 1);
	t->build_id_len = hdr->build_id_len;
	memcpy(t->build_id, hdr->build_id, hdr->build_id_len);
	t->size = hdr->sframe_size;
	t->sframe_vaddr = hdr->sframe_vaddr;
	t->text_vaddr = hdr->text_vaddr;
	t->text_size = hdr->text_size;
	return t;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_table_alloc);

/**
 * sframe_table_add - check a table in full and add it to the store
 * @t: a table from sframe_table_alloc() with its section filled in; the
 *     store owns it from now on, and frees it if it is refused
 *
 * Context: task context, may sleep.
 * Return: 0; -EINVAL for a section that the reader does not accept in
 * full; -EEXIST when a table is loaded for the build-id already.
 */
VISIBLE_IF_KUNIT int sframe_table_add(struct sframe_table *t)
{
	int ret;

	/*
	 * Checked in full, at the addresses of a file loaded at bias 0, and
	 * kept set up for the walks that use it.
	 */
	sframe_table_section(t, 0, &t->sec);
	ret = sframe_init(&t->sec);
	if (!ret)
		ret = sframe_validate(&t->sec);
	if (ret) {
		sframe_table_free(t);
		return -EINVAL;
	}

	mutex_lock(&sframe_tables_mutex);
	if (sframe_table_find(t->build_id, t->build_id_len)) {
		ret = -EEXIST;
	} else {
		hlist_add_head_rcu(&t->node,
				   &sframe_tables[sframe_build_id_hash(t->build_id,
								       t->build_id_len)]);
		/* After the table can be found: see sframe_tables_generation(). */
		smp_store_release(&sframe_tables_gen, sframe_tables_gen + 1);
	}
	mutex_unlock(&sframe_tables_mutex);
	if (ret)
		sframe_table_free(t);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_table_add);

/**
 * sframe_table_remove - remove the table of a build-id from the store
 * @id: the build-id
 * @len: its length
 *
 * Mappings that use the table already keep it until they go away.
 *
 * Context: task context, may sleep.
 * Return: 0, or -ENOENT when no table is loaded for @id.
 */
VISIBLE_IF_KUNIT int sframe_table_remove(const u8 *id, unsigned int len)
{
	struct sframe_table *t;

	mutex_lock(&sframe_tables_mutex);
	t = len && len <= SFRAME_TABLE_BUILD_ID_MAX ? sframe_table_find(id, len) : NULL;
	if (t)
		hlist_del_rcu(&t->node);
	mutex_unlock(&sframe_tables_mutex);
	if (!t)
		return -ENOENT;
	sframe_table_put(t);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_table_remove);

/*
 * One open /dev/sframe_tables: a table being written. A character device
 * gets no FMODE_ATOMIC_POS, so threads sharing the file (or a dup()ed or
 * inherited descriptor) may write at once: @lock serialises every use of
 * the other fields, across the copies from user memory that may sleep, so
 * that no write sees another's half-done state, and the section is copied
 * into a table that nothing else can see until sframe_table_add() takes it.
 */
struct sframe_table_writer {
	struct mutex		lock;	/* serialises write() and release() */
	struct sframe_table_hdr	hdr;
	size_t			got;	/* bytes of header and section so far */
	struct sframe_table	*table;	/* allocated once the header is in */
	bool			done;	/* one table per open */
};

static int sframe_tables_show(struct seq_file *m, void *v)
{
	struct sframe_table *t;
	int i;

	mutex_lock(&sframe_tables_mutex);
	for (i = 0; i < ARRAY_SIZE(sframe_tables); i++)
		hlist_for_each_entry(t, &sframe_tables[i], node)
			/* The store's own reference is not a mapping. */
			seq_printf(m, "%*phN %u %u\n", t->build_id_len, t->build_id,
				   t->size, refcount_read(&t->ref) - 1);
	mutex_unlock(&sframe_tables_mutex);
	return 0;
}

static int sframe_tables_open(struct inode *inode, struct file *file)
{
	struct sframe_table_writer *w;
	int ret;

	if (!perfmon_capable())
		return -EPERM;
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	mutex_init(&w->lock);
	/* misc_open() left the miscdevice here; the seq_file takes its place. */
	file->private_data = NULL;
	ret = single_open(file, sframe_tables_show, w);
	if (ret) {
		mutex_destroy(&w->lock);
		kfree(w);
	}
	return ret;
}

static int sframe_tables_release(struct inode *inode, struct file *file)
{
	struct sframe_table_writer *w = ((struct seq_file *)file->private_data)->private;

	/* The last reference is gone, so no write() runs; the lock says so. */
	mutex_lock(&w->lock);
	sframe_table_free(w->table);
	w->table = NULL;
	mutex_unlock(&w->lock);
	mutex_destroy(&w->lock);
	kfree(w);
	return single_release(inode, file);
}

/* "remove <hex build-id>\n", all of it in one write. */
static ssize_t sframe_tables_cmd(const char __user *ubuf, size_t count)
{
	char buf[8 + 2 * SFRAME_TABLE_BUILD_ID_MAX + 2];
	u8 id[SFRAME_TABLE_BUILD_ID_MAX];
	size_t len;
	int ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	len = strcspn(buf + 7, "\n");
	if (strncmp(buf, "remove ", 7) || !len || len % 2 ||
	    len / 2 > SFRAME_TABLE_BUILD_ID_MAX ||
	    (buf[7 + len] && strcmp(buf + 7 + len, "\n")) ||
	    hex2bin(id, buf + 7, len / 2))
		return -EINVAL;
	ret = sframe_table_remove(id, len / 2);
	return ret ?: count;
}

/* Context: task context, w->lock held; reads user memory, may sleep. */
static ssize_t sframe_tables_write_locked(struct sframe_table_writer *w,
					  const char __user *ubuf, size_t count)
{
	size_t hlen = sizeof(w->hdr), n;
	int ret;

	if (!count)
		return 0;
	if (w->done)
		return -EINVAL;
	if (!w->got && count >= 7) {
		char c[7];

		if (copy_from_user(c, ubuf, 7))
			return -EFAULT;
		if (!memcmp(c, "remove ", 7)) {
			w->done = true;
			return sframe_tables_cmd(ubuf, count);
		}
	}
	if (w->got < hlen) {
		n = min(count, hlen - w->got);
		if (copy_from_user((u8 *)&w->hdr + w->got, ubuf, n))
			return -EFAULT;
		w->got += n;
		if (w->got < hlen)
			return n;
		/* Refuse a bad header at once, before buffering the section. */
		w->table = sframe_table_alloc(&w->hdr);
		if (IS_ERR(w->table)) {
			ret = PTR_ERR(w->table);
			w->table = NULL;
			w->done = true;
			return ret;
		}
		ubuf += n;
		count -= n;
		if (!count)
			return n;
	} else {
		n = 0;
	}
	if (count > hlen + w->hdr.sframe_size - w->got) {
		w->done = true;
		return -EINVAL;		/* more than the header said */
	}
	if (copy_from_user(w->table->data + (w->got - hlen), ubuf, count))
		return -EFAULT;
	w->got += count;
	if (w->got < hlen + w->hdr.sframe_size)
		return n + count;

	/* The section is read into the table itself: no second copy. */
	w->done = true;
	ret = sframe_table_add(w->table);
	w->table = NULL;
	return ret ?: n + count;
}

static ssize_t sframe_tables_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	struct sframe_table_writer *w = ((struct seq_file *)file->private_data)->private;
	ssize_t ret;

	if (mutex_lock_interruptible(&w->lock))
		return -ERESTARTSYS;
	ret = sframe_tables_write_locked(w, ubuf, count);
	mutex_unlock(&w->lock);
	return ret;
}

static const struct file_operations sframe_tables_fops = {
	.owner		= THIS_MODULE,
	.open		= sframe_tables_open,
	.read		= seq_read,
	.write		= sframe_tables_write,
	.llseek		= seq_lseek,
	.release	= sframe_tables_release,
};

static struct miscdevice sframe_tables_dev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "sframe_tables",
	.fops	= &sframe_tables_fops,
	/* Who may use it is decided by capability, in open(). */
	.mode	= 0666,
};

static struct ctl_table sframe_tables_sysctl[] = {
	{
		.procname	= "sframe_tables_max_bytes",
		.data		= &sframe_tables_max_bytes,
		.maxlen		= sizeof(sframe_tables_max_bytes),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
	},
};

static int __init sframe_store_init(void)
{
	register_sysctl_init("kernel", sframe_tables_sysctl);
	return misc_register(&sframe_tables_dev);
}
device_initcall(sframe_store_init);
