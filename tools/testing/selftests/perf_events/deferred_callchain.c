// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user callchains through the raw perf ABI: attr.defer_callchain,
 * attr.defer_output and PERF_RECORD_CALLCHAIN_DEFERRED.
 *
 * A worker thread runs a() -> b() -> c(). c() is one asm block that makes
 * read() system calls from /dev/zero with an inline syscall instruction (or,
 * for user-mode sampling, spins), and the thread stays inside the block for as
 * long as an event is enabled on it. So the user stack of every kernel entry
 * the events see is known exactly: the address right after the syscall
 * instruction (for an interrupt: an address inside the block), then the
 * return addresses into b(), a() and the thread function, which each function
 * records itself. A read() is of 1 MiB, or more on fast machines: long enough
 * for several samples of cpu-clock every 100 us.
 *
 * The events sample the worker in the kernel (exclude_user) with
 * PERF_SAMPLE_TID | TIME | CALLCHAIN, sample_id_all and CLOCK_MONOTONIC time,
 * so that times compare across CPUs. The results, one TAP line each:
 *
 *  1. The ABI bits are where mainline has them, and every combination opens:
 *     like mainline, defer_callchain without PERF_SAMPLE_CALLCHAIN or with
 *     exclude_callchain_user is accepted and does nothing.
 *  2. Per-task event: every sample's callchain is PERF_CONTEXT_KERNEL, kernel
 *     addresses, PERF_CONTEXT_USER_DEFERRED and a non-zero cookie. Every
 *     cookie has exactly one deferred record, of the same thread, with the
 *     exact user frames, written after the cookie's first sample and before
 *     the thread's next entry. No record comes without a sample, and some
 *     entry had several samples but one record.
 *  3. The same with per-CPU events on every CPU, buffers merged.
 *  4. Without defer_output, samples still defer and no record is written.
 *  5. One-page buffers of three threads, read late, overflow: there is a
 *     PERF_RECORD_LOST, and what survives never mis-stitches. A cookie
 *     belongs to one thread and one entry, and has at most one record.
 *  6. For perf_event_paranoid -1, 0, 1, 2 and 3, an unprivileged child opens
 *     a deferred event exactly when it opens the same event with an ordinary
 *     callchain, and otherwise fails with the same errno; the deferred
 *     per-task events it opens deliver exact records.
 *  7. (result 11) Opening and closing an event with defer_callchain in a
 *     loop for three seconds unregisters perf's unwind work at most once a
 *     second (the function tracer counts unwind_deferred_cancel()).
 *  8. (result 12) A per-task sched:sched_switch event on a worker that
 *     blocks in read() on a pipe 400 times: every blocking call's entry has
 *     one exact record, which starts right after the syscall instruction.
 *     The requests come from __schedule(), in task context with interrupts
 *     off but before the exit loop looks at the work flags, so they raise no
 *     self-interrupt: the IRQ work interrupts of all CPUs (IWI in
 *     /proc/interrupts) grow by less than a quarter of the switches.
 *
 * The reader drains the buffers while the worker runs, and the worker starts
 * a system call only when the reader has caught up with all but its last
 * two, so that nothing is lost in 2-4 however slow the machine.
 *
 * A sample taken after the record was written, while the task is still on
 * its way out of the same entry, gets the entry's cookie too: records are
 * only required to follow an entry's first sample. And an entry in progress
 * when the events are disabled loses its record: only entries wholly before
 * enabling or after the stop request may lack one.
 *
 * Run as root, it runs everything, changing perf_event_paranoid for 6 and
 * restoring it at the end, also when it fails or gets SIGINT, SIGTERM or
 * SIGHUP, and using the function tracer for 7 (left as nop, with no filter)
 * and a tracepoint for 8.
 * Run as another user, it runs 1-5 (2, 4 and 5 if perf_event_paranoid
 * lets users sample their own threads in the kernel, <= 1, and 3 if it lets
 * them open per-CPU events, <= 0; skipped otherwise) and leaves 6-8 out. With
 * -u, root sets perf_event_paranoid to 0, runs the tests in a child with uid
 * and gid 65534 (1-5 run), and restores the level afterwards.
 *
 * Build with frame pointers in every frame and without inlining:
 * -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline
 * -fno-optimize-sibling-calls. x86-64 only.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../kselftest.h"

#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define NOBODY		65534
#define MIB		(1024UL * 1024)
#define MAX_LEN		(64 * MIB)	/* the longest read() */
#define PERIOD_NS	100000ULL	/* shorter swamps the CPUs with per-CPU events */
#define DATA_PAGES	128		/* per buffer: perf_event_mlock_kb's default */
#define AHEAD		2		/* calls the worker may make ahead of the reader */
#define MIN_CALLS	50
#define MIN_SAMPLES	50
#define TIMEOUT_NS	5000000000ULL
/*
 * The overflow test's wait for its workers' calls: only a guard against a
 * hang, not a verdict on speed. A loaded debug boot once made 36 of 50
 * calls in 5 s.
 */
#define CALLS_TIMEOUT_NS	60000000000ULL
#define NWORKERS	3		/* threads of the overflow test */
#define ROUND		50		/* calls per thread between late reads */
#define NIPS		4		/* user frames known exactly */

#define load_acquire(p)		__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)

/* attr_init() flags */
#define F_KERNEL	0x01	/* sample in the kernel, else in user space */
#define F_DEFER		0x02	/* defer_callchain */
#define F_OUTPUT	0x04	/* defer_output */
#define F_NOCHAIN	0x08	/* no PERF_SAMPLE_CALLCHAIN */
#define F_NOUSER	0x10	/* exclude_callchain_user */
#define F_DUMMY		0x20	/* PERF_COUNT_SW_DUMMY */

struct worker {
	pthread_t	thread;
	int		tid;
	int		sys;		/* read() in a loop, else spin */
	/* Set by the reader. */
	unsigned long	allowed;	/* calls it may have made */
	unsigned long	stop;
	unsigned long	release;
	/* Set by the worker, from inside c()'s block. */
	unsigned long	count;		/* calls made (spins, if !sys) */
	unsigned long	stopped;
	unsigned long	lo, hi;		/* the block */
	long		ret;		/* of the last read() */
	/* The user stack at a system call: the syscall's return address first. */
	unsigned long	expected[NIPS];
};

struct sample {
	__u64	time;
	__u64	seq;	/* order of arrival in the log */
	__u64	cookie;
	int	tid;
};

struct record {
	__u64	time;
	__u64	seq;
	__u64	cookie;
	__u64	nr;
	__u64	ips[NIPS];
	int	tid;
};

/* What was read from a test's buffers, of the threads it watches. */
struct log {
	int		tids[NWORKERS];
	int		ntids;
	int		pid;
	bool		kernel;		/* samples are taken in the kernel */
	bool		one_ring;	/* one per-task buffer, see check_entries() */
	__u64		seq;		/* samples and records read so far */
	struct sample	*samples;
	int		nsamples, maxsamples;
	struct record	*records;
	int		nrecords, maxrecords;
	int		repeats;	/* samples with the cookie of the one before */
	int		foreign;	/* samples and records of other threads */
	int		lost_records;
	__u64		lost;
	int		bad;
	char		why[320];	/* what was wrong with the first bad record */
};

struct ring {
	int				fd;
	struct perf_event_mmap_page	*page;
	size_t				len;
	__u64				last_cookie;
};

/* One kernel entry of one thread: its samples and its record. */
struct entry {
	__u64			cookie;
	__u64			first, last;	/* its samples' times */
	__u64			start, end;	/* including its record's */
	__u64			sfirst, slast;	/* the same in order of arrival */
	int			tid;
	int			nsamples;
	const struct record	*rec;
};

/* What a run must show. */
struct expect {
	const struct worker	*w;	/* frames of the records, if set */
	bool			exact;	/* one record per entry */
	__u64			go, stop; /* entries wholly outside may lack one */
};

struct stats {
	int	entries, records, max_samples, at_syscall, unfinished;
};

static int zero_fd;
static char *zbuf;
static unsigned long zlen;
static bool privileged;
static int paranoid;
static int first_cpu;
static long page_size;
static __u64 recbuf[65536 / sizeof(__u64)];
static struct entry *entries;
static int maxentries;

static char saved_paranoid[16];	/* the level to restore, "" if none */
static size_t saved_len;
static pid_t saved_by;

/* Report a failed check; the caller returns false. */
static bool __printf(1, 2) fail(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	return false;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static __u64 min_u64(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

static __u64 max_u64(__u64 a, __u64 b)
{
	return a > b ? a : b;
}

static int perf_open(struct perf_event_attr *attr, int pid, int cpu)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static const char *outcome(int err)
{
	const char *name = err ? strerrorname_np(err) : "ok";

	return name ?: "?";
}

/*
 * cpu-clock sampling with the test's sample layout. Kernel-mode events
 * exclude user mode, so every sample is taken during a kernel entry. User-mode
 * ones also exclude the kernel callchain, which is what lets an unprivileged
 * user at perf_event_paranoid 2 sample with callchains.
 */
static void attr_init(struct perf_event_attr *attr, unsigned int flags)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = flags & F_DUMMY ? PERF_COUNT_SW_DUMMY : PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_period = PERIOD_NS;
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	if (!(flags & F_NOCHAIN))
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
	attr->sample_id_all = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->disabled = 1;
	attr->exclude_hv = 1;
	attr->exclude_idle = 1;
	if (flags & F_KERNEL) {
		attr->exclude_user = 1;
	} else {
		attr->exclude_kernel = 1;
		attr->exclude_callchain_kernel = 1;
	}
	attr->exclude_callchain_user = !!(flags & F_NOUSER);
	attr->defer_callchain = !!(flags & F_DEFER);
	attr->defer_output = !!(flags & F_OUTPUT);
}

/* The worker's code. Each function records where it returns to. */
static void c(struct worker *w)
{
	w->expected[1] = (unsigned long)__builtin_return_address(0);
	/*
	 * Everything the thread does while sampled happens in here, so that
	 * an interrupt, too, finds it inside the block with c()'s frame set
	 * up. The block publishes its own bounds and the syscall's return
	 * address before it waits for the reader.
	 */
	asm volatile("0:\tlea 0b(%%rip), %%rax\n\t"
		     "mov %%rax, %[lo]\n\t"
		     "lea 2f(%%rip), %%rax\n\t"
		     "mov %%rax, %[sysret]\n\t"
		     "lea 6f(%%rip), %%rax\n\t"
		     "mov %%rax, %[hi]\n"
		     /* Wait until allowed another call, or told to stop. */
		     "1:\tpause\n\t"
		     "cmpq $0, %[stop]\n\t"
		     "jne 4f\n\t"
		     "mov %[count], %%rax\n\t"
		     "cmp %[allowed], %%rax\n\t"
		     "jae 1b\n\t"
		     "cmpl $0, %[sys]\n\t"
		     "je 3f\n\t"
		     "mov %[nr], %%eax\n\t"
		     "syscall\n"
		     "2:\tmov %%rax, %[ret]\n"
		     "3:\tincq %[count]\n\t"
		     "jmp 1b\n"
		     /* Stopped: say so, and stay in the block until released. */
		     "4:\tmovq $1, %[stopped]\n"
		     "5:\tpause\n\t"
		     "cmpq $0, %[release]\n\t"
		     "je 5b\n"
		     "6:"
		     : [lo] "=m" (w->lo), [sysret] "=m" (w->expected[0]),
		       [hi] "=m" (w->hi), [count] "+m" (w->count),
		       [ret] "=m" (w->ret), [stopped] "=m" (w->stopped)
		     : [stop] "m" (w->stop), [allowed] "m" (w->allowed),
		       [sys] "m" (w->sys), [release] "m" (w->release),
		       [nr] "i" (SYS_read), "D" ((long)zero_fd), "S" (zbuf),
		       "d" (zlen)
		     : "rax", "rcx", "r11", "cc", "memory");
}

static void b(struct worker *w)
{
	w->expected[2] = (unsigned long)__builtin_return_address(0);
	c(w);
	asm volatile("" ::: "memory");	/* no tail call */
}

static void a(struct worker *w)
{
	w->expected[3] = (unsigned long)__builtin_return_address(0);
	b(w);
	asm volatile("" ::: "memory");
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->tid = syscall(SYS_gettid);
	a(w);
	return NULL;
}

/* Start a worker and wait until it is in its block, waiting to be allowed. */
static void worker_start(struct worker *w, bool sys)
{
	memset(w, 0, sizeof(*w));
	w->sys = sys;
	if (pthread_create(&w->thread, NULL, worker_main, w))
		ksft_exit_fail_msg("pthread_create failed\n");
	while (!load_acquire(&w->hi))
		sched_yield();
}

static void worker_release(struct worker *w)
{
	store_release(&w->release, 1UL);
	pthread_join(w->thread, NULL);
}

/* For error paths: no event is enabled on the worker. */
static void worker_finish(struct worker *w)
{
	store_release(&w->stop, 1UL);
	while (!load_acquire(&w->stopped))
		sched_yield();
	worker_release(w);
}

/* Returns 0 or a negative errno; mmap failures are reported here. */
static int ring_open(struct ring *r, struct perf_event_attr *attr, int pid,
		     int cpu, int pages)
{
	int err;

	memset(r, 0, sizeof(*r));
	r->fd = perf_open(attr, pid, cpu);
	if (r->fd < 0)
		return -errno;
	r->len = (1 + pages) * page_size;
	r->page = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->page == MAP_FAILED) {
		err = -errno;
		ksft_print_msg("mmap of %d pages: %s\n", 1 + pages, strerror(errno));
		close(r->fd);
		return err;
	}
	return 0;
}

static void ring_close(struct ring *r)
{
	munmap(r->page, r->len);
	close(r->fd);
}

static void rings_ioctl(struct ring *rings, int nrings, unsigned long cmd)
{
	int i;

	for (i = 0; i < nrings; i++)
		if (ioctl(rings[i].fd, cmd, 0))
			ksft_exit_fail_msg("perf ioctl %#lx: %s\n", cmd, strerror(errno));
}

static void log_init(struct log *log, const struct worker *w, int nw, bool kernel)
{
	int i;

	memset(log, 0, sizeof(*log));
	for (i = 0; i < nw; i++)
		log->tids[i] = w[i].tid;
	log->ntids = nw;
	log->pid = getpid();
	log->kernel = kernel;
}

static void log_free(struct log *log)
{
	free(log->samples);
	free(log->records);
}

static void __printf(2, 3) log_bad(struct log *log, const char *fmt, ...)
{
	va_list ap;

	if (!log->bad++) {
		va_start(ap, fmt);
		vsnprintf(log->why, sizeof(log->why), fmt, ap);
		va_end(ap);
	}
}

static bool log_wants(struct log *log, int pid, int tid)
{
	int i;

	for (i = 0; i < log->ntids; i++) {
		if (log->tids[i] != tid)
			continue;
		if (pid != log->pid)
			log_bad(log, "TID %d in a record of PID %d, want %d\n",
				tid, pid, log->pid);
		return true;
	}
	log->foreign++;
	return false;
}

static void *grow(void *p, int *max, size_t size)
{
	*max = *max ? 2 * *max : 1024;
	p = realloc(p, *max * size);
	if (!p)
		ksft_exit_fail_msg("out of memory\n");
	return p;
}

static bool is_kernel_ip(__u64 ip)
{
	return ip >> 63 && ip < PERF_CONTEXT_MAX;
}

/*
 * The cookie of a deferred callchain, or 0 with @why set. In kernel mode:
 * PERF_CONTEXT_KERNEL, at least one kernel address, PERF_CONTEXT_USER_DEFERRED
 * and the cookie. In user mode there is no kernel part.
 */
static __u64 chain_cookie(const __u64 *ips, __u64 nr, bool kernel,
			  char *why, size_t len)
{
	const char *err;
	__u64 i = 0;

	if (kernel) {
		err = "not PERF_CONTEXT_KERNEL";
		if (!nr || ips[0] != PERF_CONTEXT_KERNEL)
			goto bad;
		for (i = 1; i < nr && is_kernel_ip(ips[i]); i++)
			;
		err = "no kernel address";
		if (i == 1)
			goto bad;
	}
	err = "PERF_CONTEXT_USER: the user stack was walked in place";
	if (i < nr && ips[i] == PERF_CONTEXT_USER)
		goto bad;
	err = "not PERF_CONTEXT_USER_DEFERRED";
	if (i == nr || ips[i] != PERF_CONTEXT_USER_DEFERRED)
		goto bad;
	err = "the cookie must be the last entry";
	i++;
	if (nr != i + 1)
		goto bad;
	err = "a zero cookie";
	if (ips[i])
		return ips[i];
bad:
	snprintf(why, len, "callchain entry %llu of %llu is %#llx: %s\n",
		 i, nr, i < nr ? ips[i] : 0, err);
	return 0;
}

struct sample_event {
	struct perf_event_header	header;
	__u32				pid, tid;
	__u64				time;
	__u64				nr;
	__u64				ips[];
};

struct deferred_event {
	struct perf_event_header	header;
	__u64				cookie;
	__u64				nr;
	__u64				ips[];	/* then struct sample_id */
};

struct sample_id {
	__u32	pid, tid;
	__u64	time;
};

static void parse_sample(struct log *log, struct ring *r, const struct sample_event *ev)
{
	__u64 room = (ev->header.size - sizeof(*ev)) / sizeof(__u64);
	struct sample *s;
	char why[160];
	__u64 cookie;

	if (ev->header.size < sizeof(*ev) || ev->nr > room ||
	    ev->header.size != sizeof(*ev) + ev->nr * sizeof(__u64)) {
		log_bad(log, "sample of %u bytes with %llu callchain entries\n",
			ev->header.size, ev->header.size < sizeof(*ev) ? 0 : ev->nr);
		return;
	}
	if (!log_wants(log, ev->pid, ev->tid))
		return;
	cookie = chain_cookie(ev->ips, ev->nr, log->kernel, why, sizeof(why));
	if (!cookie) {
		log_bad(log, "TID %d: %s", ev->tid, why);
		return;
	}
	if (log->nsamples == log->maxsamples)
		log->samples = grow(log->samples, &log->maxsamples, sizeof(*s));
	s = &log->samples[log->nsamples++];
	s->time = ev->time;
	s->seq = log->seq++;
	s->cookie = cookie;
	s->tid = ev->tid;
	log->repeats += cookie == r->last_cookie;
	r->last_cookie = cookie;
}

static void parse_deferred(struct log *log, const struct deferred_event *ev)
{
	size_t fixed = sizeof(*ev) + sizeof(struct sample_id);
	const struct sample_id *id;
	struct record *rec;

	if (ev->header.size < fixed ||
	    ev->nr > (ev->header.size - fixed) / sizeof(__u64) ||
	    ev->header.size != fixed + ev->nr * sizeof(__u64)) {
		log_bad(log, "deferred record of %u bytes with nr %llu\n",
			ev->header.size, ev->header.size < fixed ? 0 : ev->nr);
		return;
	}
	id = (const void *)&ev->ips[ev->nr];
	if (!log_wants(log, id->pid, id->tid))
		return;
	if (ev->header.misc != PERF_RECORD_MISC_USER) {
		log_bad(log, "deferred record misc %#x, want PERF_RECORD_MISC_USER\n",
			ev->header.misc);
		return;
	}
	if (!ev->cookie) {
		log_bad(log, "deferred record with cookie 0\n");
		return;
	}
	if (log->nrecords == log->maxrecords)
		log->records = grow(log->records, &log->maxrecords, sizeof(*rec));
	rec = &log->records[log->nrecords++];
	memset(rec, 0, sizeof(*rec));
	rec->time = id->time;
	rec->seq = log->seq++;
	rec->cookie = ev->cookie;
	rec->nr = ev->nr;
	memcpy(rec->ips, ev->ips, min_u64(ev->nr, NIPS) * sizeof(__u64));
	rec->tid = id->tid;
}

static void parse(struct log *log, struct ring *r, const struct perf_event_header *hdr)
{
	const __u64 *body = (const __u64 *)(hdr + 1);

	switch (hdr->type) {
	case PERF_RECORD_SAMPLE:
		parse_sample(log, r, (const void *)hdr);
		break;
	case PERF_RECORD_CALLCHAIN_DEFERRED:
		parse_deferred(log, (const void *)hdr);
		break;
	case PERF_RECORD_LOST:	/* id, lost, sample_id */
		if (hdr->size != sizeof(*hdr) + 2 * sizeof(__u64) + sizeof(struct sample_id))
			log_bad(log, "PERF_RECORD_LOST of %u bytes\n", hdr->size);
		log->lost_records++;
		log->lost += body[1];
		break;
	case PERF_RECORD_THROTTLE:	/* only fewer samples */
	case PERF_RECORD_UNTHROTTLE:
		break;
	default:
		log_bad(log, "unexpected record type %u\n", hdr->type);
	}
}

static void ring_copy(const struct ring *r, __u64 pos, void *dst, size_t len)
{
	const char *data = (const char *)r->page + r->page->data_offset;
	__u64 size = r->page->data_size, off = pos & (size - 1);
	size_t first = min_u64(len, size - off);

	memcpy(dst, data + off, first);
	memcpy((char *)dst + first, data, len - first);
}

/* Read all records written so far, records that wrap around included. */
static void drain(struct ring *r, struct log *log)
{
	__u64 head = load_acquire(&r->page->data_head);
	__u64 tail = r->page->data_tail;
	struct perf_event_header *hdr = (void *)recbuf;

	while (head - tail >= sizeof(*hdr)) {
		ring_copy(r, tail, hdr, sizeof(*hdr));
		if (hdr->size < sizeof(*hdr) || hdr->size % sizeof(__u64) ||
		    hdr->size > head - tail) {
			log_bad(log, "record of %u bytes with %llu bytes in the buffer\n",
				hdr->size, head - tail);
			tail = head;
			break;
		}
		ring_copy(r, tail, recbuf, hdr->size);
		parse(log, r, hdr);
		tail += hdr->size;
	}
	store_release(&r->page->data_tail, tail);
}

static void drain_all(struct ring *rings, int nrings, struct log *log)
{
	int i;

	for (i = 0; i < nrings; i++)
		drain(&rings[i], log);
}

static bool enough(const struct worker *w, const struct log *log, unsigned long calls)
{
	if (!w->sys)
		return log->nsamples >= MIN_SAMPLES;
	return calls >= MIN_CALLS && log->nsamples >= MIN_SAMPLES && log->repeats;
}

/*
 * Sample @w through @rings (open, disabled) until enough() or the timeout:
 * enable them, let the worker make a call only when the reader has drained
 * the records of all but its last AHEAD calls, stop it in user space, disable
 * the events, release and join it, and drain what is left. Its last call
 * returned to user space before it stopped, so that call's record is in.
 */
static void run(struct worker *w, struct ring *rings, int nrings,
		struct log *log, struct expect *ex)
{
	unsigned long calls = 0;

	rings_ioctl(rings, nrings, PERF_EVENT_IOC_ENABLE);
	ex->go = now_ns();
	if (!w->sys)
		store_release(&w->allowed, ULONG_MAX);
	for (;;) {
		calls = load_acquire(&w->count);
		drain_all(rings, nrings, log);
		if (enough(w, log, calls))
			break;
		if (now_ns() - ex->go > TIMEOUT_NS) {
			ksft_print_msg("stopped after %llu s: %lu calls, %d samples, %d repeated\n",
				       TIMEOUT_NS / 1000000000, calls, log->nsamples,
				       log->repeats);
			break;
		}
		if (w->sys)
			store_release(&w->allowed, calls + AHEAD);
	}
	ex->stop = now_ns();
	store_release(&w->stop, 1UL);
	while (!load_acquire(&w->stopped))
		drain_all(rings, nrings, log);
	/*
	 * Disabling races with the worker's interrupts: an entry in progress
	 * now loses its record, as the events are off when it returns. Such
	 * entries began after ex->stop; the ones before ex->go can lose theirs
	 * the same way on per-CPU events, which are enabled one by one.
	 */
	rings_ioctl(rings, nrings, PERF_EVENT_IOC_DISABLE);
	worker_release(w);
	drain_all(rings, nrings, log);
}

static int cmp_u64(__u64 a, __u64 b)
{
	return a < b ? -1 : a > b;
}

static int cmp_sample(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	return cmp_u64(x->cookie, y->cookie) ?: cmp_u64(x->time, y->time);
}

static int cmp_record(const void *a, const void *b)
{
	const struct record *x = a, *y = b;

	return cmp_u64(x->cookie, y->cookie);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->tid - y->tid ?: cmp_u64(x->start, y->start);
}

static int cmp_entry_seq(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->tid - y->tid ?: cmp_u64(x->sfirst, y->sfirst);
}

static bool check_frames(const struct record *r, const struct worker *w, int *at_syscall)
{
	static const char * const what[NIPS] = {
		"after the syscall", "into b()", "into a()", "into the thread function",
	};
	int i;

	if (r->nr < NIPS)
		return fail("record %#llx has %llu frames, want at least %d\n",
			    r->cookie, r->nr, NIPS);
	if (r->ips[0] < w->lo || r->ips[0] >= w->hi)
		return fail("record %#llx: frame 0 is %#llx, want %#lx (%s) or in [%#lx, %#lx)\n",
			    r->cookie, r->ips[0], w->expected[0], what[0], w->lo, w->hi);
	*at_syscall += r->ips[0] == w->expected[0];
	for (i = 1; i < NIPS; i++)
		if (r->ips[i] != w->expected[i])
			return fail("record %#llx: frame %d is %#llx, want %#lx (%s)\n",
				    r->cookie, i, r->ips[i], w->expected[i], what[i]);
	return true;
}

static bool check_entry(struct entry *e, const struct expect *ex, struct stats *st)
{
	const struct record *r = e->rec;

	if (!r) {
		e->start = e->first;
		e->end = e->last;
	} else if (!e->nsamples) {
		e->start = r->time;
		e->end = r->time;
	} else {
		e->start = min_u64(e->first, r->time);
		e->end = max_u64(e->last, r->time);
	}
	if (e->nsamples > st->max_samples)
		st->max_samples = e->nsamples;
	if (r)
		st->records++;
	if (ex->exact && r && !e->nsamples)
		return fail("record %#llx of TID %d has no sample\n", e->cookie, e->tid);
	if (ex->exact && r && r->time < e->first)
		return fail("record %#llx written at %llu ns, before its first sample at %llu ns\n",
			    e->cookie, r->time, e->first);
	if (ex->exact && !r) {
		if (e->first <= ex->stop && e->last >= ex->go)
			return fail("cookie %#llx (TID %d, %d samples, %llu..%llu ns): no record\n",
				    e->cookie, e->tid, e->nsamples, e->first, e->last);
		st->unfinished++;
	}
	if (r && ex->w)
		return check_frames(r, ex->w, &st->at_syscall);
	return true;
}

/* An entry's times and order of arrival (#), for a failure's message. */
static void show_entry(const struct entry *e)
{
	ksft_print_msg("%#llx: %d samples %llu..%llu ns, #%llu..#%llu, record at %llu ns\n",
		       e->cookie, e->nsamples, e->first, e->last, e->sfirst,
		       e->slast, e->rec ? e->rec->time : 0ULL);
}

/*
 * Group samples and records by cookie into kernel entries. A cookie belongs
 * to one thread and has at most one record; the entries of one thread,
 * records included, never overlap. Then check_entry() each.
 *
 * Overlap is judged by time across buffers. In one per-task buffer
 * (@log->one_ring) it is judged by order of arrival instead, which is the
 * thread's own order whatever the clocks of its CPUs say: a loaded debug
 * boot once stamped an entry 8 ms before the end of the one before it, on
 * another CPU, with nothing else wrong.
 */
static bool check_entries(struct log *log, const struct expect *ex, struct stats *st)
{
	struct sample *s = log->samples;
	struct record *r = log->records;
	int i = 0, j = 0, n = 0, k;
	struct entry *e, *p;

	memset(st, 0, sizeof(*st));
	qsort(s, log->nsamples, sizeof(*s), cmp_sample);
	qsort(r, log->nrecords, sizeof(*r), cmp_record);
	while (maxentries < log->nsamples + log->nrecords)
		entries = grow(entries, &maxentries, sizeof(*entries));

	while (i < log->nsamples || j < log->nrecords) {
		e = &entries[n++];
		memset(e, 0, sizeof(*e));
		if (j == log->nrecords || (i < log->nsamples && s[i].cookie <= r[j].cookie))
			e->cookie = s[i].cookie;
		else
			e->cookie = r[j].cookie;
		for (; i < log->nsamples && s[i].cookie == e->cookie; i++) {
			if (e->nsamples && s[i].tid != e->tid)
				return fail("cookie %#llx in samples of TIDs %d and %d\n",
					    e->cookie, e->tid, s[i].tid);
			if (!e->nsamples) {
				e->first = s[i].time;
				e->sfirst = s[i].seq;
			}
			e->sfirst = min_u64(e->sfirst, s[i].seq);
			e->slast = max_u64(e->slast, s[i].seq);
			e->tid = s[i].tid;
			e->last = s[i].time;
			e->nsamples++;
		}
		if (j < log->nrecords && r[j].cookie == e->cookie) {
			e->rec = &r[j++];
			if (j < log->nrecords && r[j].cookie == e->cookie)
				return fail("two records for cookie %#llx\n", e->cookie);
			if (e->nsamples && e->rec->tid != e->tid)
				return fail("record %#llx is of TID %d, its samples of TID %d\n",
					    e->cookie, e->rec->tid, e->tid);
			e->tid = e->rec->tid;
			if (!e->nsamples)
				e->sfirst = e->rec->seq;
			e->sfirst = min_u64(e->sfirst, e->rec->seq);
			e->slast = max_u64(e->slast, e->rec->seq);
		}
		if (!check_entry(e, ex, st))
			return false;
	}

	qsort(entries, n, sizeof(*entries), log->one_ring ? cmp_entry_seq : cmp_entry);
	for (k = 1; k < n; k++) {
		e = &entries[k];
		p = &entries[k - 1];
		if (e->tid != p->tid)
			continue;
		if (log->one_ring ? e->sfirst < p->slast : e->start < p->end) {
			show_entry(p);
			show_entry(e);
			return fail("TID %d: %#llx began before %#llx ended (by %s)\n",
				    e->tid, e->cookie, p->cookie,
				    log->one_ring ? "arrival" : "time");
		}
	}
	st->entries = n;
	return true;
}

/* What every test asks of what it read, before looking at entries. */
static bool check_log(const struct log *log, bool per_task)
{
	if (log->bad)
		return fail("%d bad records, the first: %s", log->bad, log->why);
	if (per_task && log->foreign)
		return fail("%d samples or records of other threads in per-task buffers\n",
			    log->foreign);
	if (!log->nsamples)
		return fail("no samples\n");
	return true;
}

/* Deferred samples, and with @output one record per entry, exact. */
static bool check_run(struct log *log, struct expect *ex, bool output, bool per_task)
{
	const struct worker *w = ex->w;
	struct stats st;

	if (!check_log(log, per_task))
		return false;
	if (log->lost_records)
		return fail("%d PERF_RECORD_LOST (%llu records): the reader fell behind\n",
			    log->lost_records, log->lost);
	if (w->sys && w->ret != zlen)
		return fail("read() returned %ld, want %lu\n", w->ret, zlen);
	if (!output && log->nrecords)
		return fail("%d deferred records without defer_output\n", log->nrecords);
	if (!check_entries(log, ex, &st))
		return false;
	ksft_print_msg("%d samples in %d entries (max %d), %d records, %d at syscall, %d open\n",
		       log->nsamples, st.entries, st.max_samples, st.records,
		       st.at_syscall, st.unfinished);
	if (output && log->kernel && w->sys && st.max_samples < 2)
		return fail("no entry had two samples: one record for several not shown\n");
	if (output && w->sys && !st.at_syscall)
		return fail("no record starts right after the syscall instruction\n");
	return true;
}

static bool run_and_check(struct worker *w, struct ring *rings, int nrings,
			  bool output, bool kernel, bool per_task)
{
	struct expect ex = { .w = w, .exact = output };
	struct log log;
	bool ok;

	log_init(&log, w, 1, kernel);
	log.one_ring = per_task && nrings == 1;
	run(w, rings, nrings, &log, &ex);
	ok = check_run(&log, &ex, output, per_task);
	log_free(&log);
	return ok;
}

/* EACCES for an unprivileged user is the administrator's choice: a skip. */
static void open_failed(int err, const char *name)
{
	if (err == -EACCES && !privileged)
		ksft_test_result_skip("%s: perf_event_paranoid=%d forbids it\n", name, paranoid);
	else
		ksft_test_result_fail("%s: perf_event_open: %s\n", name, strerror(-err));
}

/* The flag bits must be where mainline has them: bits 38 and 39. */
static bool check_abi_bits(void)
{
	size_t off = offsetof(struct perf_event_attr, read_format) + sizeof(__u64);
	struct perf_event_attr attr;
	__u64 flags;

	memset(&attr, 0, sizeof(attr));
	attr.defer_callchain = 1;
	memcpy(&flags, (char *)&attr + off, sizeof(flags));
	if (flags != 1ULL << 38)
		return fail("defer_callchain is flags %#llx, want bit 38\n", flags);
	attr.defer_callchain = 0;
	attr.defer_output = 1;
	memcpy(&flags, (char *)&attr + off, sizeof(flags));
	if (flags != 1ULL << 39)
		return fail("defer_output is flags %#llx, want bit 39\n", flags);
	return true;
}

static void test_attrs(void)
{
	static const struct {
		const char	*what;
		unsigned int	flags;
		int		err;
	} cases[] = {
		/* Mainline accepts these as no-ops: no user callchain to defer. */
		{ "defer_callchain without PERF_SAMPLE_CALLCHAIN", F_DEFER | F_NOCHAIN, 0 },
		{ "defer_callchain with exclude_callchain_user", F_DEFER | F_NOUSER, 0 },
		{ "defer_callchain", F_DEFER, 0 },
		{ "defer_callchain and defer_output", F_DEFER | F_OUTPUT, 0 },
		{ "defer_output without a callchain", F_OUTPUT | F_NOCHAIN, 0 },
		{ "defer_output on a dummy event", F_OUTPUT | F_DUMMY | F_NOCHAIN, 0 },
	};
	struct perf_event_attr attr;
	bool ok = check_abi_bits();
	int i, fd, err;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		attr_init(&attr, cases[i].flags);
		fd = perf_open(&attr, 0, -1);
		err = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
		if (err == cases[i].err)
			continue;
		if (!cases[i].err && err == EACCES && !privileged) {
			ksft_print_msg("%s: EACCES at perf_event_paranoid=%d, not checked\n",
				       cases[i].what, paranoid);
			continue;
		}
		ok = fail("%s: %s, want %s\n", cases[i].what, outcome(err),
			  outcome(cases[i].err));
	}
	ksft_test_result(ok, "ABI bits, and the attrs mainline accepts open\n");
}

/* Test 2 with @output, test 4 without. */
static void test_task(bool output)
{
	const char *name = output ? "per-task event: one exact record per entry" :
				    "without defer_output: samples defer, no records";
	struct perf_event_attr attr;
	struct worker w;
	struct ring ring;
	int err;

	worker_start(&w, true);
	attr_init(&attr, F_KERNEL | F_DEFER | (output ? F_OUTPUT : 0));
	err = ring_open(&ring, &attr, w.tid, -1, DATA_PAGES);
	if (err) {
		worker_finish(&w);
		open_failed(err, name);
		return;
	}
	ksft_test_result(run_and_check(&w, &ring, 1, output, true, true), "%s\n", name);
	ring_close(&ring);
}

static void test_cpus(void)
{
	const char *name = "per-CPU events: one exact record per entry";
	struct perf_event_attr attr;
	struct ring *rings;
	struct worker w;
	int cpu, n = 0, err = 0;
	cpu_set_t set;

	if (!privileged && paranoid > 0) {
		ksft_test_result_skip("%s: needs root or perf_event_paranoid <= 0, is %d\n",
				      name, paranoid);
		return;
	}
	if (sched_getaffinity(0, sizeof(set), &set))
		ksft_exit_fail_msg("sched_getaffinity: %s\n", strerror(errno));
	rings = calloc(CPU_COUNT(&set), sizeof(*rings));
	if (!rings)
		ksft_exit_fail_msg("out of memory\n");

	worker_start(&w, true);
	attr_init(&attr, F_KERNEL | F_DEFER | F_OUTPUT);
	for (cpu = 0; cpu < CPU_SETSIZE && !err; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		err = ring_open(&rings[n], &attr, -1, cpu, DATA_PAGES);
		if (!err)
			n++;
	}
	if (err) {
		worker_finish(&w);
		open_failed(err, name);
	} else {
		ksft_test_result(run_and_check(&w, rings, n, true, true, false), "%s\n", name);
	}
	while (n--)
		ring_close(&rings[n]);
	free(rings);
}

/* Wait until every worker made @calls calls, or the timeout. */
static bool wait_calls(struct worker *w, unsigned long calls)
{
	__u64 start = now_ns();
	int i;

	for (i = 0; i < NWORKERS; i++)
		store_release(&w[i].allowed, calls);
	for (i = 0; i < NWORKERS; i++) {
		while (load_acquire(&w[i].count) < calls) {
			if (now_ns() - start > CALLS_TIMEOUT_NS)
				return fail("worker %d made %lu of %lu calls\n",
					    i, load_acquire(&w[i].count), calls);
			sched_yield();
		}
	}
	return true;
}

/*
 * Several threads, each with a one-page buffer that the reader leaves alone
 * for ROUND calls: it overflows, and the first record written after the late
 * read is a PERF_RECORD_LOST. What survives must still stitch: a cookie to
 * one thread and one entry, at most one record, with exact frames.
 */
static void test_overflow(void)
{
	const char *name = "overflow: records lost, none mis-stitched";
	struct expect ex = { .exact = false };
	struct ring rings[NWORKERS];
	struct worker w[NWORKERS];
	struct perf_event_attr attr;
	int i, n, err = 0;
	struct stats st;
	struct log log;
	bool ok;

	for (i = 0; i < NWORKERS; i++)
		worker_start(&w[i], true);
	attr_init(&attr, F_KERNEL | F_DEFER | F_OUTPUT);
	attr.sample_period = PERIOD_NS / 2;
	for (n = 0; n < NWORKERS; n++) {
		err = ring_open(&rings[n], &attr, w[n].tid, -1, 1);
		if (err)
			break;
	}
	if (err) {
		for (i = 0; i < NWORKERS; i++)
			worker_finish(&w[i]);
		while (n--)
			ring_close(&rings[n]);
		open_failed(err, name);
		return;
	}

	log_init(&log, w, NWORKERS, true);
	rings_ioctl(rings, NWORKERS, PERF_EVENT_IOC_ENABLE);
	ok = wait_calls(w, ROUND);
	drain_all(rings, NWORKERS, &log);
	ok = ok && wait_calls(w, 2 * ROUND);
	for (i = 0; i < NWORKERS; i++)
		store_release(&w[i].stop, 1UL);
	for (i = 0; i < NWORKERS; i++)
		while (!load_acquire(&w[i].stopped))
			sched_yield();
	rings_ioctl(rings, NWORKERS, PERF_EVENT_IOC_DISABLE);
	for (i = 0; i < NWORKERS; i++)
		worker_release(&w[i]);
	drain_all(rings, NWORKERS, &log);
	for (i = 0; i < NWORKERS; i++)
		ring_close(&rings[i]);

	ex.w = &w[0];	/* the same code: the same frames */
	ok = ok && check_log(&log, true);
	if (ok && !log.lost_records)
		ok = fail("no PERF_RECORD_LOST: the buffers did not overflow\n");
	ok = ok && check_entries(&log, &ex, &st);
	if (ok)
		ksft_print_msg("%d samples, %d entries, %d records, %d PERF_RECORD_LOST (%llu)\n",
			       log.nsamples, st.entries, st.records, log.lost_records,
			       log.lost);
	log_free(&log);
	ksft_test_result(ok, "%s\n", name);
}

static int read_paranoid(void)
{
	char buf[16] = "";
	int fd = open(PARANOID, O_RDONLY), len;

	if (fd < 0)
		return INT_MIN;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return len > 0 ? atoi(buf) : INT_MIN;
}

/* Write @len bytes to @path, opened with O_WRONLY | @flags; 0 or -errno. */
static int write_file(const char *path, int flags, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags), ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, buf, len) == len ? 0 : -errno;
	close(fd);
	return ret;
}

static int write_paranoid(const char *level, size_t len)
{
	return write_file(PARANOID, 0, level, len);
}

static int set_paranoid(int level)
{
	char buf[16];

	return write_paranoid(buf, snprintf(buf, sizeof(buf), "%d\n", level));
}

/* Only the process that saved the level restores it, and only once. */
static void restore_paranoid(void)
{
	if (!saved_len || getpid() != saved_by)
		return;
	if (write_paranoid(saved_paranoid, saved_len))
		ksft_print_msg("could not restore %s to %s", PARANOID, saved_paranoid);
	saved_len = 0;
}

/* Async-signal-safe: open(), write() and close() only. */
static void restore_and_die(int sig)
{
	if (saved_len && getpid() == saved_by)
		write_paranoid(saved_paranoid, saved_len);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Remember the level to restore at the end, at exit() or on a signal. */
static int save_paranoid(void)
{
	static bool hooked;
	int level = read_paranoid();

	if (level == INT_MIN)
		return -1;
	saved_len = snprintf(saved_paranoid, sizeof(saved_paranoid), "%d\n", level);
	saved_by = getpid();
	if (!hooked) {
		atexit(restore_paranoid);
		signal(SIGINT, restore_and_die);
		signal(SIGTERM, restore_and_die);
		signal(SIGHUP, restore_and_die);
		hooked = true;
	}
	return 0;
}

static int drop_privileges(void)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return -errno;
	privileged = false;
	return 0;
}

static const struct {
	const char	*name;
	unsigned int	flags;
} modes[] = {
	{ "kernel", F_KERNEL },
	{ "user", 0 },
};

/*
 * Open an event of @mode on @pid/@cpu with an ordinary and with a deferred
 * callchain (and defer_output). Both must open, or fail with the same errno.
 * Returns the deferred one's errno, or 0.
 */
static int open_both(const char *target, int pid, int cpu, int mode, bool *ok,
		     char *line, size_t *len, size_t size)
{
	struct perf_event_attr attr;
	int d, fd, err[2];

	for (d = 0; d < 2; d++) {
		attr_init(&attr, modes[mode].flags | (d ? F_DEFER | F_OUTPUT : 0));
		fd = perf_open(&attr, pid, cpu);
		err[d] = fd < 0 ? errno : 0;
		if (fd >= 0)
			close(fd);
	}
	*len += snprintf(line + *len, size - *len, "%s%s %s %s/%s", *len ? ", " : "",
			 target, modes[mode].name, outcome(err[0]), outcome(err[1]));
	if (err[0] != err[1])
		*ok = fail("%s %s: plain %s, deferred %s\n", target, modes[mode].name,
			   outcome(err[0]), outcome(err[1]));
	return err[1];
}

/*
 * In an unprivileged child: per-task events on itself, per-CPU events and
 * events on PID 1 (root's, which must fail), each sampling in the kernel and
 * in user space, open with a deferred callchain exactly when they open with
 * an ordinary one. Where the deferred per-task event opens, its records must
 * arrive, exact.
 *
 * In user mode (exclude_kernel and exclude_callchain_kernel, which is what
 * paranoid 2 allows) the worker spins in its block instead of making system
 * calls. Each sample is then taken in an interrupt of the block: its
 * callchain is only the marker and the cookie, and its record starts with the
 * interrupted address inside the block, followed by the same exact return
 * addresses.
 */
static int paranoid_child(int level)
{
	struct perf_event_attr attr;
	bool ok = true, opened[2];
	struct worker w;
	struct ring ring;
	char line[320];
	size_t len = 0;
	int m, err;

	if (drop_privileges()) {
		fail("dropping privileges: %s\n", strerror(errno));
		return 1;
	}
	for (m = 0; m < 2; m++) {
		opened[m] = !open_both("task", 0, -1, m, &ok, line, &len, sizeof(line));
		open_both("cpu", -1, first_cpu, m, &ok, line, &len, sizeof(line));
		if (!open_both("pid 1", 1, -1, m, &ok, line, &len, sizeof(line)))
			ok = fail("an unprivileged user opened an event on PID 1\n");
	}
	ksft_print_msg("paranoid=%d plain/deferred: %s\n", level, line);

	for (m = 0; m < 2; m++) {
		if (!opened[m])
			continue;
		worker_start(&w, modes[m].flags & F_KERNEL);
		attr_init(&attr, modes[m].flags | F_DEFER | F_OUTPUT);
		err = ring_open(&ring, &attr, w.tid, -1, DATA_PAGES);
		if (err) {
			worker_finish(&w);
			ok = fail("%s: the worker's event: %s\n", modes[m].name, strerror(-err));
			continue;
		}
		if (!run_and_check(&w, &ring, 1, true, modes[m].flags & F_KERNEL, true))
			ok = fail("%s mode: records wrong\n", modes[m].name);
		ring_close(&ring);
	}
	fflush(stdout);
	return ok ? 0 : 1;
}

static void test_paranoid(void)
{
	static const int levels[] = { -1, 0, 1, 2, 3 };
	int i, child, status;
	bool saved, ok;

	saved = privileged && !save_paranoid();
	for (i = 0; i < ARRAY_SIZE(levels); i++) {
		if (!privileged) {
			ksft_test_result_skip("paranoid=%d deferred matches plain: needs root\n",
					      levels[i]);
			continue;
		}
		if (!saved || set_paranoid(levels[i])) {
			ksft_test_result_skip("paranoid=%d deferred matches plain: cannot set %s\n",
					      levels[i], PARANOID);
			continue;
		}
		fflush(stdout);
		child = fork();
		if (child < 0)
			ksft_exit_fail_msg("fork: %s\n", strerror(errno));
		if (!child)
			_exit(paranoid_child(levels[i]));
		ok = waitpid(child, &status, 0) == child && WIFEXITED(status) &&
		     !WEXITSTATUS(status);
		ksft_test_result(ok, "paranoid=%d deferred matches plain\n", levels[i]);
	}
	restore_paranoid();
}

#define TRACEFS		"/sys/kernel/tracing"
#define CHURN_NS	3000000000ULL

/* Write @val to the tracefs file @file, truncating it; 0 or -errno. */
static int tracefs_write(const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	return write_file(path, O_TRUNC, val, strlen(val));
}

/* How many lines of the trace buffer show a call of @func; -1 on error. */
static int trace_calls(const char *func)
{
	FILE *f = fopen(TRACEFS "/trace", "re");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && strstr(line, func))
			n++;
	fclose(f);
	return n;
}

/*
 * 11. Creating and closing an event with defer_callchain, over and over with
 * no other such event, unregisters perf's unwind work at most once a second:
 * each unregistration turns the exit path's static key off, waits for two
 * grace periods and visits every thread. Counted with the function tracer on
 * unwind_deferred_cancel(), which only that release calls; the release is
 * delayed by a second after the last event goes, so a window of S seconds
 * holds at most S + 1 of them (one more for rounding S down).
 */
static void test_churn(void)
{
	static const char name[] =
		"open/close churn: perf's unwind work released at most once a second";
	struct perf_event_attr attr;
	__u64 start, secs;
	int fd, cycles = 0, calls, err = 0;
	bool traced;

	if (tracefs_write("current_tracer", "nop") ||
	    tracefs_write("set_ftrace_filter", "unwind_deferred_cancel") ||
	    tracefs_write("trace", "")) {
		ksft_test_result_skip("%s: no function tracer filter in %s\n", name, TRACEFS);
		tracefs_write("set_ftrace_filter", "");
		return;
	}
	attr_init(&attr, F_KERNEL | F_DEFER | F_OUTPUT);
	start = now_ns();
	traced = !tracefs_write("current_tracer", "function");
	while (traced && now_ns() - start < CHURN_NS) {
		fd = perf_open(&attr, 0, -1);
		if (fd < 0) {
			err = errno;
			break;
		}
		close(fd);
		cycles++;
	}
	/* Stop before reading: changing the tracer empties the buffer. */
	tracefs_write("tracing_on", "0");
	secs = (now_ns() - start) / 1000000000ULL;
	calls = trace_calls("unwind_deferred_cancel");
	tracefs_write("current_tracer", "nop");
	tracefs_write("set_ftrace_filter", "");
	tracefs_write("trace", "");
	tracefs_write("tracing_on", "1");
	if (!traced || err) {
		ksft_test_result_fail("%s: %s\n", name, traced ? strerror(err) :
				      "cannot start the function tracer");
		return;
	}
	ksft_print_msg("%d events opened and closed in %llu s, %d unregistrations\n",
		       cycles, secs, calls);
	ksft_test_result(calls >= 0 && calls <= (int)secs + 2, "%s\n", name);
}

#define SWITCHES	400

/* The IWI line of /proc/interrupts summed over the CPUs, or -1. */
static long irq_work_interrupts(void)
{
	FILE *f = fopen("/proc/interrupts", "re");
	char line[8192], *p, *end;
	long sum = -1, v;

	if (!f)
		return -1;
	while (sum < 0 && fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, "IWI:", 4))
			continue;
		sum = 0;
		for (p += 4; v = strtol(p, &end, 10), end != p; p = end)
			sum += v;
	}
	fclose(f);
	return sum;
}

/* The event id of the tracepoint @name ("sched/sched_switch"), or -1. */
static int tracepoint_id(const char *name)
{
	char path[128];
	int id = -1;
	FILE *f;

	snprintf(path, sizeof(path), TRACEFS "/events/%s/id", name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &id) != 1)
		id = -1;
	fclose(f);
	return id;
}

/* Read the first line of /proc/self/task/@tid/@file into @buf. */
static bool task_file(int tid, const char *file, char *buf, size_t len)
{
	char path[64];
	int fd, n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", tid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n > 0;
}

/*
 * Wait until thread @tid sleeps in read() (state S, in system call 0: not
 * in the exit work of an interrupt, where a walk may sleep too); false
 * after TIMEOUT_NS.
 */
static bool wait_in_read(int tid, struct ring *r, struct log *log)
{
	__u64 start = now_ns();
	char buf[256], *p;

	while (now_ns() - start < TIMEOUT_NS) {
		drain(r, log);
		if (!task_file(tid, "stat", buf, sizeof(buf)))
			return false;
		/* "tid (comm) S ...": the comm may hold spaces and parentheses. */
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'S' &&
		    task_file(tid, "syscall", buf, sizeof(buf)) &&
		    !strncmp(buf, "0 ", 2))
			return true;
		sched_yield();
	}
	return false;
}

/*
 * 8: sched_switch samples of a worker blocking on a pipe. The worker's c()
 * reads one byte from the pipe instead of /dev/zero; the byte is written
 * only once the worker sleeps, so that every call blocks and is switched
 * out, and each switch is the first request of its entry.
 */
static void test_switch(void)
{
	static const char name[] =
		"sched_switch: exact records, no self-interrupt per switch";
	struct expect ex = { .exact = true };
	struct perf_event_attr attr;
	int pfd[2], id, err, i, saved_fd = zero_fd;
	unsigned long saved_len = zlen;
	long iwi0, iwi1;
	struct worker w;
	__u64 t;
	struct ring ring;
	struct stats st;
	struct log log;
	bool ok = true;

	id = tracepoint_id("sched/sched_switch");
	if (id < 0) {
		ksft_test_result_skip("%s: no sched_switch in %s\n", name, TRACEFS);
		return;
	}
	if (pipe2(pfd, O_CLOEXEC))
		ksft_exit_fail_msg("pipe2: %s\n", strerror(errno));
	zero_fd = pfd[0];
	zlen = 1;
	worker_start(&w, true);
	attr_init(&attr, F_KERNEL | F_DEFER | F_OUTPUT);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = id;
	attr.sample_period = 1;
	err = ring_open(&ring, &attr, w.tid, -1, DATA_PAGES);
	if (err) {
		worker_finish(&w);
		ksft_test_result_fail("%s: perf_event_open: %s\n", name, strerror(-err));
		goto out;
	}
	log_init(&log, &w, 1, true);
	log.one_ring = true;
	ex.w = &w;
	rings_ioctl(&ring, 1, PERF_EVENT_IOC_ENABLE);
	ex.go = now_ns();
	iwi0 = irq_work_interrupts();
	for (i = 0; ok && i < SWITCHES; i++) {
		store_release(&w.allowed, i + 1UL);
		ok = wait_in_read(w.tid, &ring, &log) && write(pfd[1], "x", 1) == 1;
		for (t = now_ns(); ok && load_acquire(&w.count) <= (unsigned long)i;
		     ok = now_ns() - t < TIMEOUT_NS)
			drain(&ring, &log);
	}
	iwi1 = irq_work_interrupts();
	ex.stop = now_ns();
	/* On failure the worker may still sleep in read(): wake it. */
	if (!ok && write(pfd[1], "x", 1) != 1)
		ksft_exit_fail_msg("write to the pipe: %s\n", strerror(errno));
	store_release(&w.stop, 1UL);
	while (!load_acquire(&w.stopped))
		drain(&ring, &log);
	rings_ioctl(&ring, 1, PERF_EVENT_IOC_DISABLE);
	worker_release(&w);
	drain(&ring, &log);
	ring_close(&ring);

	if (!ok)
		ok = fail("call %d: no block in, or return from, read() in %llu s\n",
			  i, TIMEOUT_NS / 1000000000);
	else if (iwi0 < 0 || iwi1 < 0)
		ok = fail("no IWI line in /proc/interrupts\n");
	else if (!check_log(&log, true) || !check_entries(&log, &ex, &st))
		ok = false;
	else if (log.lost_records)
		ok = fail("%d PERF_RECORD_LOST\n", log.lost_records);
	else if (w.ret != 1)
		ok = fail("read() returned %ld, want 1\n", w.ret);
	if (ok) {
		ksft_print_msg("%d switches: %d samples, %d entries, %d records (%d at syscall)\n",
			       SWITCHES, log.nsamples, st.entries, st.records,
			       st.at_syscall);
		ksft_print_msg("IRQ work interrupts meanwhile: %ld\n", iwi1 - iwi0);
		if (st.at_syscall < SWITCHES)
			ok = fail("%d records start after the syscall, want %d\n",
				  st.at_syscall, SWITCHES);
		else if ((iwi1 - iwi0) * 4 >= SWITCHES)
			ok = fail("%ld IRQ work interrupts for %d switches: one per request\n",
				  iwi1 - iwi0, SWITCHES);
	}
	ksft_test_result(ok, "%s\n", name);
	log_free(&log);
out:
	close(pfd[0]);
	close(pfd[1]);
	zero_fd = saved_fd;
	zlen = saved_len;
}

/* The fastest of three read()s of @len bytes. */
static __u64 time_read(unsigned long len)
{
	__u64 t, best = ~0ULL;
	int i;

	for (i = 0; i < 3; i++) {
		t = now_ns();
		if (read(zero_fd, zbuf, len) != len)
			ksft_exit_fail_msg("read /dev/zero: %s\n", strerror(errno));
		best = min_u64(best, now_ns() - t);
	}
	return best;
}

/*
 * One read() of 1 MiB, or more on fast machines, is to last four sample
 * periods, so that entries get several samples.
 */
static void calibrate(void)
{
	__u64 t;

	zbuf = mmap(NULL, MAX_LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (zbuf == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	for (zlen = MIB; ; zlen *= 2) {
		memset(zbuf, 1, zlen);	/* no page faults inside read() */
		t = time_read(zlen);
		if (t >= 4 * PERIOD_NS || zlen == MAX_LEN)
			break;
	}
	ksft_print_msg("uid %d, paranoid %d, read() of %lu MiB in %llu us, period %llu us\n",
		       getuid(), paranoid, zlen / MIB, t / 1000, PERIOD_NS / 1000);
}

static void __noreturn run_tests(void)
{
	cpu_set_t set;

	privileged = !geteuid();
	ksft_print_header();
	/* Changing perf_event_paranoid (6-10) and tracing (11, 12) need root. */
	ksft_set_plan(privileged ? 12 : 5);
	paranoid = read_paranoid();
	if (sched_getaffinity(0, sizeof(set), &set))
		ksft_exit_fail_msg("sched_getaffinity: %s\n", strerror(errno));
	for (first_cpu = 0; !CPU_ISSET(first_cpu, &set); first_cpu++)
		;
	calibrate();

	test_attrs();
	test_task(true);
	test_cpus();
	test_task(false);
	test_overflow();
	if (privileged) {
		test_paranoid();
		test_churn();
		test_switch();
	}
	ksft_finished();
}

/*
 * -u: as root, run the tests as uid 65534 with perf_event_paranoid at 0,
 * which lets an unprivileged user sample its own threads in the kernel and
 * open per-CPU events.
 */
static void __noreturn run_unprivileged(void)
{
	int child, status;

	if (geteuid())
		ksft_exit_fail_msg("-u needs root\n");
	if (save_paranoid() || set_paranoid(0))
		ksft_exit_fail_msg("cannot set %s to 0\n", PARANOID);
	fflush(stdout);
	child = fork();
	if (child < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!child) {
		if (drop_privileges())
			ksft_exit_fail_msg("dropping privileges: %s\n", strerror(errno));
		run_tests();
	}
	if (waitpid(child, &status, 0) != child)
		ksft_exit_fail_msg("waitpid: %s\n", strerror(errno));
	restore_paranoid();
	if (!WIFEXITED(status))
		ksft_exit_fail_msg("the unprivileged child died, status %#x\n", status);
	exit(WEXITSTATUS(status));
}

int main(int argc, char **argv)
{
	int opt;
	bool unprivileged = false;

	while ((opt = getopt(argc, argv, "uh")) != -1) {
		switch (opt) {
		case 'u':
			unprivileged = true;
			break;
		default:
			printf("Usage: %s [-u]\n"
			       "  -u  as root: set perf_event_paranoid to 0 and run as uid 65534\n",
			       argv[0]);
			return opt == 'h' ? KSFT_PASS : KSFT_FAIL;
		}
	}
	page_size = sysconf(_SC_PAGESIZE);
	zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (zero_fd < 0)
		ksft_exit_fail_msg("open /dev/zero: %s\n", strerror(errno));
	if (unprivileged)
		run_unprivileged();
	run_tests();
}
