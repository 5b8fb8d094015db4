/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space shim for kernel/unwind/sframe_store.c (the store of SFrame
 * tables loaded through /dev/sframe_tables), on top of shim.h: just enough
 * of the kernel's locking, RCU, lists, allocation, seq_file and device
 * registration for store_user.c to build the kernel file unchanged. The
 * kernel headers it includes are the stubs in kstore/, which only include
 * this file.
 *
 * Stand-ins, each checking what the kernel would check:
 *  - a mutex is a pthread mutex, so that writers may run on real threads
 *    (store_race.c): locking one this thread holds, unlocking or
 *    destroying one it does not hold as it should, aborts. A lock attempt
 *    that finds the mutex held calls sframe_shim_mutex_contended first, if
 *    set, for a test to know that a writer waits for the lock;
 *  - RCU (single-threaded, as is everything but the mutex): a grace
 *    period ends as soon as no reader is inside
 *    rcu_read_lock(), so call_rcu() runs its callback at once outside a
 *    read-side section and at the outermost rcu_read_unlock() inside one;
 *    an RCU list walk outside both a read-side section and its lockdep
 *    condition aborts (lockdep's "suspicious RCU usage");
 *  - refcount_t aborts on an underflow (the kernel warns and saturates);
 *  - a deleted hlist node is poisoned, as in the kernel;
 *  - memory is malloc()/free(), so ASan sees every use after free and LSan
 *    every table that is not freed;
 *  - copy_from_user() is memcpy() from the caller's buffer, after a call of
 *    sframe_shim_copy_hook if set: a test stops a writer there as a page
 *    fault would stop it in the kernel; capabilities are
 *    always granted; sysctl registration is a no-op and misc_register()
 *    only records the device, for the fuzzer to open it.
 */
#ifndef SFRAME_SHIM_STORE_H
#define SFRAME_SHIM_STORE_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>	/* ssize_t, loff_t */
#include "shim.h"

/* The kernel's own "restart the system call" code, never seen by user space. */
#ifndef ERESTARTSYS
#define ERESTARTSYS	512
#endif

/* What sframe.h declares the store's interface under. */
#define CONFIG_UNWIND_USER_SFRAME	1
#define CONFIG_KUNIT			1
#define IS_ENABLED(option)		(option)

#define VISIBLE_IF_KUNIT
#define __init
#define __user
#define __aligned(x)		__attribute__((aligned(x)))

#define PAGE_SIZE		4096UL
#define TASK_SIZE_MAX		((1UL << 47) - PAGE_SIZE)	/* x86-64 */

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define READ_ONCE(x)		(*(const volatile typeof(x) *)&(x))
#define smp_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)
#define min(a, b)							\
	({ typeof(a) _a = (a); typeof(b) _b = (b); _a < _b ? _a : _b; })
#define struct_size(p, member, n) \
	(sizeof(*(p)) + sizeof(*(p)->member) * (size_t)(n))

/* ERR_PTR() and friends. */
#define MAX_ERRNO	4095
static inline void *ERR_PTR(long error)
{
	return (void *)error;
}

static inline long PTR_ERR(const void *ptr)
{
	return (long)ptr;
}

static inline bool IS_ERR(const void *ptr)
{
	return (unsigned long)ptr >= (unsigned long)-MAX_ERRNO;
}

/* Allocation. */
#define GFP_KERNEL		0
#define GFP_KERNEL_ACCOUNT	0

static inline void *kvmalloc(size_t size, int gfp)
{
	(void)gfp;
	return malloc(size);
}

static inline void *kzalloc(size_t size, int gfp)
{
	(void)gfp;
	return calloc(1, size);
}

static inline void kvfree(const void *p)
{
	free((void *)p);
}

static inline void kfree(const void *p)
{
	free((void *)p);
}

/*
 * Mutex, and lockdep's view of it. @owner is only read by a thread to see
 * whether it is itself the holder: @held is set after it and cleared
 * before the unlock, so a thread never sees itself as the holder of a
 * mutex that another thread holds.
 */
struct mutex {
	pthread_mutex_t	lock;
	pthread_t	owner;	/* valid while @held */
	bool		held;
};

#define DEFINE_MUTEX(m)		struct mutex m = { .lock = PTHREAD_MUTEX_INITIALIZER }
#define lockdep_is_held(m)	sframe_shim_mutex_held(m)

/* Called, when set, by a thread about to wait for a held mutex. */
extern void (*sframe_shim_mutex_contended)(struct mutex *m);

static inline bool sframe_shim_mutex_held(struct mutex *m)
{
	return __atomic_load_n(&m->held, __ATOMIC_ACQUIRE) &&
	       pthread_equal(__atomic_load_n(&m->owner, __ATOMIC_RELAXED),
			     pthread_self());
}

static inline bool mutex_is_locked(struct mutex *m)
{
	return __atomic_load_n(&m->held, __ATOMIC_ACQUIRE);
}

static inline void mutex_init(struct mutex *m)
{
	if (pthread_mutex_init(&m->lock, NULL))
		abort();
	m->held = false;
}

static inline void mutex_destroy(struct mutex *m)
{
	/* DEBUG_MUTEXES warns of a mutex destroyed while locked. */
	if (mutex_is_locked(m) || pthread_mutex_destroy(&m->lock))
		abort();
}

static inline void mutex_lock(struct mutex *m)
{
	if (sframe_shim_mutex_held(m))
		abort();	/* a deadlock, or a missed unlock */
	if (pthread_mutex_trylock(&m->lock)) {
		if (sframe_shim_mutex_contended)
			sframe_shim_mutex_contended(m);
		if (pthread_mutex_lock(&m->lock))
			abort();
	}
	__atomic_store_n(&m->owner, pthread_self(), __ATOMIC_RELAXED);
	__atomic_store_n(&m->held, true, __ATOMIC_RELEASE);
}

/* No signals here: the wait is never interrupted. */
static inline int mutex_lock_interruptible(struct mutex *m)
{
	mutex_lock(m);
	return 0;
}

static inline void mutex_unlock(struct mutex *m)
{
	if (!sframe_shim_mutex_held(m))
		abort();	/* not locked, or by another thread */
	__atomic_store_n(&m->held, false, __ATOMIC_RELEASE);
	if (pthread_mutex_unlock(&m->lock))
		abort();
}

/* atomic_long_t: the store's total. */
typedef struct {
	long	v;
} atomic_long_t;

static inline long atomic_long_add_return(long n, atomic_long_t *a)
{
	return __atomic_add_fetch(&a->v, n, __ATOMIC_SEQ_CST);
}

static inline void atomic_long_sub(long n, atomic_long_t *a)
{
	__atomic_sub_fetch(&a->v, n, __ATOMIC_SEQ_CST);
}

static inline long atomic_long_read(const atomic_long_t *a)
{
	return __atomic_load_n(&a->v, __ATOMIC_SEQ_CST);
}

/* refcount_t. */
typedef struct {
	int	refs;
} refcount_t;

static inline void refcount_set(refcount_t *r, int n)
{
	r->refs = n;
}

static inline unsigned int refcount_read(const refcount_t *r)
{
	return r->refs;
}

static inline bool refcount_dec_and_test(refcount_t *r)
{
	if (r->refs <= 0)
		abort();	/* the kernel's refcount underflow warning */
	return --r->refs == 0;
}

static inline bool refcount_inc_not_zero(refcount_t *r)
{
	if (!r->refs)
		return false;
	r->refs++;
	return true;
}

/* RCU (store_user.c). */
struct rcu_head {
	struct rcu_head	*next;
	void		(*func)(struct rcu_head *head);
};

void rcu_read_lock(void);
void rcu_read_unlock(void);
void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head));
/* Aborts when @cond is false outside a read-side section. */
void sframe_shim_rcu_check(bool cond);

/* hlist, with the RCU variants. */
struct hlist_node {
	struct hlist_node	*next, **pprev;
};

struct hlist_head {
	struct hlist_node	*first;
};

#define LIST_POISON2		((void *)0x122)

#define hlist_entry_safe(ptr, type, member) \
	({ typeof(ptr) ____ptr = (ptr); \
	   ____ptr ? container_of(____ptr, type, member) : NULL; })

#define hlist_for_each_entry(pos, head, member)				\
	for (pos = hlist_entry_safe((head)->first, typeof(*(pos)), member); \
	     pos;							\
	     pos = hlist_entry_safe((pos)->member.next, typeof(*(pos)), member))

/* The optional lockdep condition, or 0 when there is none. */
#define __sframe_shim_rcu_cond(dummy, cond, extra...)	(cond)
#define hlist_for_each_entry_rcu(pos, head, member, cond...)		\
	for (sframe_shim_rcu_check(__sframe_shim_rcu_cond(dummy, ##cond, 0)), \
	     pos = hlist_entry_safe((head)->first, typeof(*(pos)), member); \
	     pos;							\
	     pos = hlist_entry_safe((pos)->member.next, typeof(*(pos)), member))

static inline void hlist_add_head_rcu(struct hlist_node *n,
				      struct hlist_head *h)
{
	struct hlist_node *first = h->first;

	n->next = first;
	n->pprev = &h->first;
	if (first)
		first->pprev = &n->next;
	h->first = n;
}

static inline void hlist_del_rcu(struct hlist_node *n)
{
	struct hlist_node *next = n->next;
	struct hlist_node **pprev = n->pprev;

	if (pprev == LIST_POISON2)
		abort();	/* deleted twice */
	*pprev = next;
	if (next)
		next->pprev = pprev;
	n->pprev = LIST_POISON2;
}

/* Any hash does: the store only needs equal build-ids in one bucket. */
static inline u32 jhash(const void *key, u32 length, u32 initval)
{
	const u8 *p = key;
	u32 h = 2166136261u ^ initval;	/* FNV-1a */

	while (length--)
		h = (h ^ *p++) * 16777619u;
	return h;
}

/* Strings, and user memory. */
static inline int hex2bin(u8 *dst, const char *src, size_t count)
{
	while (count--) {
		int hi, lo;
		char c;

		c = *src++;
		hi = c >= '0' && c <= '9' ? c - '0' :
		     c >= 'a' && c <= 'f' ? c - 'a' + 10 :
		     c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		c = *src++;
		lo = c >= '0' && c <= '9' ? c - '0' :
		     c >= 'a' && c <= 'f' ? c - 'a' + 10 :
		     c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (hi < 0 || lo < 0)
			return -EINVAL;
		*dst++ = hi << 4 | lo;
	}
	return 0;
}

/* Called, when set, before each copy from user memory (store_user.c). */
extern void (*sframe_shim_copy_hook)(void *to, const void *from,
				     unsigned long n);

static inline unsigned long copy_from_user(void *to, const void *from,
					   unsigned long n)
{
	if (sframe_shim_copy_hook)
		sframe_shim_copy_hook(to, from, n);
	memcpy(to, from, n);
	return 0;
}

static inline bool perfmon_capable(void)
{
	return true;
}

/* Files, seq_file and the misc device. */
struct module;
#define THIS_MODULE		((struct module *)NULL)

struct inode {
	int	unused;
};

struct file {
	void	*private_data;
};

struct file_operations {
	struct module	*owner;
	int		(*open)(struct inode *inode, struct file *file);
	ssize_t		(*read)(struct file *file, char __user *buf,
				size_t count, loff_t *ppos);
	ssize_t		(*write)(struct file *file, const char __user *buf,
				 size_t count, loff_t *ppos);
	loff_t		(*llseek)(struct file *file, loff_t off, int whence);
	int		(*release)(struct inode *inode, struct file *file);
};

#define MISC_DYNAMIC_MINOR	255

struct miscdevice {
	int				minor;
	const char			*name;
	const struct file_operations	*fops;
	unsigned short			mode;
};

/* The device misc_register() saw last (store_user.c). */
extern struct miscdevice *sframe_shim_misc;

static inline int misc_register(struct miscdevice *misc)
{
	sframe_shim_misc = misc;
	return 0;
}

/* A single_open() seq_file: show() prints the whole file at once. */
struct seq_file {
	char		buf[4096];
	size_t		count;
	bool		overflow;
	int		(*show)(struct seq_file *m, void *v);
	void		*private;
};

int single_open(struct file *file, int (*show)(struct seq_file *m, void *v),
		void *data);
int single_release(struct inode *inode, struct file *file);
ssize_t seq_read(struct file *file, char __user *buf, size_t count,
		 loff_t *ppos);
loff_t seq_lseek(struct file *file, loff_t off, int whence);
/*
 * vsnprintf(): the kernel's "%*phN" (hex of a buffer) comes out as the C
 * library's "%*p" and then "hN", the pointer in place of the hex.
 */
void seq_printf(struct seq_file *m, const char *fmt, ...);

/* sysctl: registration is a no-op; the fuzzer sets the limit here. */
extern unsigned long *const sframe_shim_max_bytes;
struct ctl_table {
	const char	*procname;
	void		*data;
	int		maxlen;
	unsigned short	mode;
	int		(*proc_handler)(const struct ctl_table *table,
					int write, void *buf, size_t *lenp,
					loff_t *ppos);
};

static inline int proc_doulongvec_minmax(const struct ctl_table *table,
					 int write, void *buf, size_t *lenp,
					 loff_t *ppos)
{
	(void)table; (void)write; (void)buf; (void)lenp; (void)ppos;
	return -EINVAL;
}

#define register_sysctl_init(path, table)	((void)(path), (void)(table))

/* Nothing left in the store, nor locked, nor waiting for RCU (store_user.c). */
bool sframe_user_store_empty(void);

/* The store's initcall, for the fuzzer to run once (store_user.c). */
extern int (*sframe_shim_initcall)(void);
#define device_initcall(fn)	int (*sframe_shim_initcall)(void) = fn

#endif
