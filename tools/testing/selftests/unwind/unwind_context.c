// SPDX-License-Identifier: GPL-2.0
/*
 * A thread's OpenTelemetry context record (OTEP 4947), registered with
 * prctl(PR_UNWIND_CONTEXT) and delivered as unwind:unwind_user_context with
 * each deferred user stack. A profiler joins the record to the stack by
 * thread and cookie, so both must be exact:
 *
 *  1. prctl: every documented error, SET twice, EBUSY, GET, CLEAR.
 *  2. One getppid() call per case, each with its exact event: none when not
 *     registered or after CLEAR; "none" for a NULL record; "invalid" for
 *     valid = 0, a misaligned record, attrs_data_size 613 or an attribute
 *     past the end; "fault" for an unmapped record or variable; "ok" with
 *     the exact IDs, flags and attributes (612 bytes), also from a page the
 *     kernel must fault in. Each event has its call's cookie, once.
 *  3. Four threads: each call of each thread has its own thread's IDs.
 *  4. A thread rewrites its record while perf samples it with deferred
 *     callchains: every event is a whole record or "invalid", never a mix.
 *  5. fork() keeps the registration; a new thread and execve() do not,
 *     nor does a CLONE_VM child that runs beside its parent (a vfork()
 *     child, whose parent waits, does).
 *  6. uid 65534 may record the event with PERF_SAMPLE_RAW for its own task
 *     but not CPU-wide, as sys_enter_getppid.
 *
 * Events come from an ftrace instance of our own. With userstacktrace_delay
 * each traced sys_getppid() line is followed by "<user unwind request>
 * cookie=0x..." and the context event by a request line of its own with the
 * same cookie. Needs root, tracefs and the event; skips without them.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* memfd_create(), setresuid() */
#endif
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest.h"

#ifndef PR_UNWIND_CONTEXT
#define PR_UNWIND_CONTEXT		0x55435458	/* "UCTX" */
#define PR_UNWIND_CONTEXT_SET		1
#define PR_UNWIND_CONTEXT_GET		2
#define PR_UNWIND_CONTEXT_CLEAR		3
#endif

#define TRACEFS		"/sys/kernel/tracing"
#define CTX_EVENT	"events/unwind/unwind_user_context"
#define SC_EVENT	"events/syscalls/sys_enter_getppid"
#define EXEC_EVENT	"events/syscalls/sys_enter_execve"
#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define NOBODY		65534
/* attr.defer_callchain: bit 38 of the flag word after read_format. */
#define DEFER_CALLCHAIN	0x4000000000ULL

#define TRACE_ID_SIZE	16
#define SPAN_ID_SIZE	8
#define REC_HDR_SIZE	28
#define REC_MAX_SIZE	640
#define ATTRS_MAX	(REC_MAX_SIZE - REC_HDR_SIZE)
#define TEXT_SIZE	(2 * REC_MAX_SIZE + 128)	/* an event's text */

/* The OTEP 4947 record, host endian. */
struct otel_rec {
	__u8	trace_id[TRACE_ID_SIZE];
	__u8	span_id[SPAN_ID_SIZE];
	__u8	valid;
	__u8	trace_flags;
	__u16	attrs_data_size;
	__u8	attrs_data[ATTRS_MAX];
};

static_assert(offsetof(struct otel_rec, attrs_data) == REC_HDR_SIZE, "28-byte header");
static_assert(sizeof(struct otel_rec) == REC_MAX_SIZE, "640 bytes at most");

/* 8-byte aligned, so that +1 is misaligned. */
union rec_buf {
	struct otel_rec	rec;
	__u64		align;
};

__thread void *otel_thread_ctx_v1;

static char inst[64];		/* our ftrace instance */
static char paranoid_old[32];	/* perf_event_paranoid to restore */

/* Report a failed check; returns 0 for the test's result. */
static int __printf(1, 2) fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	va_end(ap);
	return 0;
}

static int gettid_(void)
{
	return syscall(SYS_gettid);
}

static long uctx(unsigned long op, unsigned long a3, unsigned long a4, unsigned long a5)
{
	return prctl(PR_UNWIND_CONTEXT, op, a3, a4, a5);
}

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, val, strlen(val));

	if (fd >= 0)
		close(fd);
	if (n == (ssize_t)strlen(val))
		return 0;
	fail("writing \"%s\" to %s: %s\n", val, path, strerror(errno));
	return -1;
}

static int read_str(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int inst_write(const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", inst, file);
	return write_str(path, val);
}

static void cleanup(void)
{
	if (!access(inst, F_OK)) {
		inst_write("events/enable", "0");
		inst_write("options/userstacktrace_delay", "0");
		if (rmdir(inst))
			fail("rmdir %s: %s\n", inst, strerror(errno));
	}
	if (paranoid_old[0])
		write_str(PARANOID, paranoid_old);
	paranoid_old[0] = '\0';
}

/*
 * A fresh instance with the context event of @tids and, with @syscalls,
 * their getppid() calls, each asking for a deferred stack. The global clock
 * orders the events of a thread that changes CPUs.
 */
static int inst_setup(const int *tids, int n, int syscalls)
{
	char filter[256];
	int i, len = 0;

	cleanup();
	if (mkdir(inst, 0755)) {
		fail("mkdir %s: %s\n", inst, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++)
		len += snprintf(filter + len, sizeof(filter) - len, "%scommon_pid == %d",
				i ? " || " : "", tids[i]);
	if (inst_write("trace_clock", "global") || inst_write(CTX_EVENT "/filter", filter))
		return -1;
	if (syscalls && (inst_write("options/userstacktrace_delay", "1") ||
			 inst_write(SC_EVENT "/filter", filter) ||
			 inst_write(SC_EVENT "/enable", "1")))
		return -1;
	/* 2: execve() too, which delivers the old program's entry at once. */
	if (syscalls == 2 && (inst_write(EXEC_EVENT "/filter", filter) ||
			      inst_write(EXEC_EVENT "/enable", "1")))
		return -1;
	return inst_write(CTX_EVENT "/enable", "1");
}

/* A trace line that matters: a call, a request, a context event, a stack. */
enum { EV_CALL, EV_REQ, EV_CTX, EV_STACK };

struct tev {
	int			tid, kind;
	unsigned long long	cookie;
	const char		*text;	/* EV_CTX: from "status=" on */
};

static char *tracebuf;
static struct tev *evs;
static int nevs, maxevs;

/*
 * "<comm>-<tid> [cpu] flags timestamp: message": the tid is the number
 * right before the first '[', the message follows the first ": " after it.
 */
static void parse_line(char *line)
{
	char *br = strchr(line, '['), *p, *end, *msg;
	struct tev e = { 0 };
	int off = 0;

	if (!br || line[0] == '#')
		return;
	for (end = br; end > line && end[-1] == ' '; end--)
		;
	for (p = end; p > line && p[-1] >= '0' && p[-1] <= '9'; p--)
		;
	msg = strstr(br, ": ");
	if (p == end || p == line || p[-1] != '-' || !msg)
		return;
	e.tid = atoi(p);
	msg += 2;
	if (!strncmp(msg, "sys_getppid(", 12) || !strncmp(msg, "sys_execve(", 11))
		e.kind = EV_CALL;
	else if (sscanf(msg, "<user unwind request> cookie=%llx", &e.cookie) == 1)
		e.kind = EV_REQ;
	else if (sscanf(msg, "unwind_user_context: cookie=%llx %n", &e.cookie, &off) == 1 && off)
		e.kind = EV_CTX;
	else if (sscanf(msg, "<user unwind stack> cookie=%llx", &e.cookie) == 1)
		e.kind = EV_STACK;
	else
		return;
	e.text = msg + off;
	if (nevs == maxevs) {
		maxevs = maxevs ? 2 * maxevs : 1024;
		evs = realloc(evs, maxevs * sizeof(*evs));
		if (!evs)
			ksft_exit_fail_msg("out of memory\n");
	}
	evs[nevs++] = e;
}

/* Disable the instance's events and parse what it recorded. */
static int inst_stop(void)
{
	char path[256], *line, *save;
	size_t cap = 0;
	ssize_t len;
	FILE *f;

	inst_write("events/enable", "0");
	snprintf(path, sizeof(path), "%s/trace", inst);
	free(tracebuf);
	tracebuf = NULL;
	nevs = 0;
	f = fopen(path, "re");
	/* The whole file: it has no NUL. */
	len = f ? getdelim(&tracebuf, &cap, '\0', f) : -1;
	if (f)
		fclose(f);
	if (len <= 0)
		return fail("reading %s: %s\n", path, strerror(errno)) - 1;
	for (line = strtok_r(tracebuf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		parse_line(line);
	return 0;
}

/* A getppid() call: the cookie of its request, its context events. */
struct call {
	unsigned long long	cookie;
	int			nctx, nstack, bad;
	const struct tev	*ctx;
};

/*
 * The calls of @tid in trace order. A context event belongs to the call it
 * follows, must carry that call's cookie and come before its stack; so must
 * any later request line (the context event's own) and the stack. Returns
 * the number of calls, or -1.
 */
static int collect(int tid, struct call *c, int max)
{
	int i, j, n = 0;

	for (i = 0; i < nevs; i++) {
		const struct tev *e = &evs[i];
		struct call *cur = n ? &c[n - 1] : NULL;

		if (e->tid != tid)
			continue;
		if (e->kind == EV_CALL) {
			if (n == max)
				return fail("tid %d: more than %d calls\n", tid, max) - 1;
			memset(&c[n++], 0, sizeof(*c));
		} else if (!cur) {
			return fail("tid %d: cookie %#llx before any call\n", tid, e->cookie) - 1;
		} else if (e->kind == EV_REQ && !cur->cookie) {
			cur->cookie = e->cookie;
		} else if (e->cookie != cur->cookie) {
			cur->bad = 1;
			fail("tid %d, call %d with cookie %#llx: %s with cookie %#llx\n", tid,
			     n - 1, cur->cookie, e->kind == EV_REQ ? "request" : "context",
			     e->cookie);
		} else if (e->kind == EV_STACK) {
			cur->nstack++;
		} else if (e->kind == EV_CTX && cur->nstack) {
			fail("tid %d, call %d: context after the stack\n", tid, n - 1);
			cur->bad = 1;
		} else if (e->kind == EV_CTX && !cur->nctx++) {
			cur->ctx = e;
		}
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (c[i].cookie && c[i].cookie == c[j].cookie) {
				fail("tid %d: calls %d and %d share cookie %#llx\n", tid, j, i,
				     c[i].cookie);
				c[i].bad = 1;
			}
	return n;
}

/* A call's events: one context event reading @want, or none (NULL). */
static int check_call(const struct call *c, const char *name, const char *want)
{
	if (c->bad || !c->cookie)
		return fail("%s: no request cookie, or events with other cookies\n", name);
	if (c->nctx != !!want)
		return fail("%s: %d context events with cookie %#llx, want %d\n", name,
			    c->nctx, c->cookie, !!want);
	if (want && strcmp(c->ctx->text, want))
		return fail("%s: cookie %#llx\n#  got: %s\n# want: %s\n", name, c->cookie,
			    c->ctx->text, want);
	return 1;
}

static char *hex(char *out, const __u8 *p, size_t n)
{
	size_t i;

	*out = '\0';
	for (i = 0; i < n; i++)
		out += sprintf(out, "%02x", p[i]);
	return out;
}

/* The event's text from "status=" on: with @r's fields if @status is ok. */
static void rec_text(char *out, const char *status, const struct otel_rec *r)
{
	static const struct otel_rec zero;

	if (strcmp(status, "ok"))
		r = &zero;
	out += sprintf(out, "status=%s trace_id=", status);
	out = hex(out, r->trace_id, TRACE_ID_SIZE);
	out += sprintf(out, " span_id=");
	out = hex(out, r->span_id, SPAN_ID_SIZE);
	out += sprintf(out, " flags=0x%02x attrs=", r->trace_flags);
	hex(out, r->attrs_data, r->attrs_data_size);
}

static void rec_fill(struct otel_rec *r, int trace_base, int span_base, int flags)
{
	int i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < TRACE_ID_SIZE; i++)
		r->trace_id[i] = trace_base + i;
	for (i = 0; i < SPAN_ID_SIZE; i++)
		r->span_id[i] = span_base + i;
	r->trace_flags = flags;
	r->valid = 1;
}

static void *unmapped_page(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || munmap(p, pg))
		ksft_exit_fail_msg("mmap/munmap: %s\n", strerror(errno));
	return p;
}

/* prctl() must return 0, or fail with @err. */
static int check_ret(long ret, int err, const char *what)
{
	if (err ? ret == -1 && errno == err : !ret)
		return 1;
	return fail("%s: returned %ld (%s), want %s\n", what, ret,
		    ret ? strerror(errno) : "success", err ? strerror(err) : "0");
}

/* GET must give @addr. */
static int get_is(unsigned long addr, const char *what)
{
	__u64 got = 0xdeadbeef;

	if (uctx(PR_UNWIND_CONTEXT_GET, (unsigned long)&got, 0, 0))
		return fail("%s: GET: %s\n", what, strerror(errno));
	if (got != addr)
		return fail("%s: GET gave %#llx, want %#lx\n", what, (unsigned long long)got, addr);
	return 1;
}

static int test_prctl(void)
{
	static __u64 slots[2];
	unsigned long me = (unsigned long)&otel_thread_ctx_v1;
	unsigned long other = (unsigned long)&slots[0];
	unsigned long hole = (unsigned long)unmapped_page();
	int ok = 1;

	ok &= check_ret(uctx(0, 0, 0, 0), EINVAL, "sub-operation 0");
	ok &= check_ret(uctx(4, 0, 0, 0), EINVAL, "sub-operation 4");
	ok &= check_ret(uctx(PR_UNWIND_CONTEXT_SET, me, 1, 0), EINVAL, "SET with arg4 = 1");
	ok &= check_ret(uctx(PR_UNWIND_CONTEXT_SET, me, 0, 1), EINVAL, "SET with arg5 = 1");
	ok &= check_ret(uctx(PR_UNWIND_CONTEXT_GET, other, 1, 0), EINVAL, "GET with arg4 = 1");
	ok &= check_ret(uctx(PR_UNWIND_CONTEXT_SET, 0, 0, 0), EINVAL, "SET of 0");
	ok &= check_ret(uctx(PR_UNWIND_CONTEXT_SET, other + 4, 0, 0), EINVAL, "SET misaligned");
	ok &= check_ret(uctx(PR_UNWIND_CONTEXT_SET, hole, 0, 0), EFAULT, "SET unmapped");
	ok &= check_ret(uctx(PR_UNWIND_CONTEXT_GET, hole, 0, 0), EFAULT, "GET unmapped");
	ok &= get_is(0, "after the failed calls");
	ok &= check_ret(uctx(PR_UNWIND_CONTEXT_SET, me, 0, 0), 0, "SET");
	ok &= check_ret(uctx(PR_UNWIND_CONTEXT_SET, me, 0, 0), 0, "SET of the same address");
	ok &= check_ret(uctx(PR_UNWIND_CONTEXT_SET, other, 0, 0), EBUSY, "SET another address");
	ok &= get_is(me, "after SET");
	ok &= check_ret(uctx(PR_UNWIND_CONTEXT_CLEAR, 1, 0, 0), EINVAL, "CLEAR with arg3 = 1");
	ok &= get_is(me, "after a failed CLEAR");
	ok &= check_ret(uctx(PR_UNWIND_CONTEXT_CLEAR, 0, 0, 0), 0, "CLEAR");
	ok &= get_is(0, "after CLEAR");
	return ok;
}

/* The cases of test 2: one getppid() call each. */
#define NSTEPS	13

static struct {
	const char	*name;
	int		setup, event;	/* could be set up; an event is due */
	char		want[TEXT_SIZE];
} steps[NSTEPS];
static int nsteps;

/* Note what the next call's event must read (none without @status), call. */
static void step(const char *name, int setup, const char *status, const struct otel_rec *r)
{
	steps[nsteps].name = name;
	steps[nsteps].setup = setup;
	steps[nsteps].event = !!status;
	if (status)
		rec_text(steps[nsteps].want, status, r);
	nsteps++;
	syscall(SYS_getppid);
}

/* Attributes { key, len, value[len] } filling all 612 bytes. */
static void attrs_fill(struct otel_rec *r)
{
	static const int lens[] = { 255, 255, ATTRS_MAX - 2 * 257 - 2 };
	int i, j, off = 0;

	for (i = 0; i < 3; i++) {
		r->attrs_data[off++] = i + 1;
		r->attrs_data[off++] = lens[i];
		for (j = 0; j < lens[i]; j++)
			r->attrs_data[off++] = i * 64 + j * 7;
	}
	r->attrs_data_size = off;
}

static void run_steps(void)
{
	static union rec_buf buf, buf2;
	struct otel_rec *r = &buf.rec;
	unsigned long me = (unsigned long)&otel_thread_ctx_v1;
	long pg = sysconf(_SC_PAGESIZE);
	void *map = MAP_FAILED, **slot;
	int fd, ok, i;

	uctx(PR_UNWIND_CONTEXT_CLEAR, 0, 0, 0);
	step("not registered: no event", 1, NULL, NULL);
	otel_thread_ctx_v1 = NULL;
	ok = check_ret(uctx(PR_UNWIND_CONTEXT_SET, me, 0, 0), 0, "SET");
	step("NULL record pointer: none", ok, "none", NULL);
	rec_fill(r, 0x10, 0xa0, 0x01);
	r->valid = 0;
	otel_thread_ctx_v1 = r;
	step("valid = 0: invalid", ok, "invalid", NULL);
	r->valid = 1;
	step("valid record: ok, exact IDs", ok, "ok", r);
	r->valid = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < SPAN_ID_SIZE; i++)
		r->span_id[i] = 0xb0 + i;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	r->valid = 1;
	step("span switched: ok, the new span", ok, "ok", r);
	attrs_fill(r);
	step("612 bytes of attributes: ok, exact attributes", ok, "ok", r);
	r->attrs_data_size = ATTRS_MAX + 1;
	step("attrs_data_size 613: invalid", ok, "invalid", NULL);
	r->attrs_data_size = 10;	/* { 1, 3, ... } { 2, 6, ... } need 13 */
	r->attrs_data[1] = 3;
	r->attrs_data[5] = 2;
	r->attrs_data[6] = 6;
	step("attribute past attrs_data_size: invalid", ok, "invalid", NULL);
	r->attrs_data_size = 0;
	otel_thread_ctx_v1 = (char *)r + 1;
	step("misaligned record: invalid", ok, "invalid", NULL);
	otel_thread_ctx_v1 = unmapped_page();
	step("unmapped record: fault", ok, "fault", NULL);

	/* Written with write(), never touched through the mapping. */
	rec_fill(&buf2.rec, 0xc0, 0xd0, 0x03);
	fd = memfd_create("uctx_record", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, &buf2, sizeof(buf2)) == sizeof(buf2))
		map = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 0);
	otel_thread_ctx_v1 = map == MAP_FAILED ? NULL : map;
	step("record on a page not faulted in: ok", ok && map != MAP_FAILED, "ok", &buf2.rec);

	/* The registered variable itself goes away. */
	uctx(PR_UNWIND_CONTEXT_CLEAR, 0, 0, 0);
	slot = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok = slot != MAP_FAILED;
	if (ok) {
		*slot = r;
		ok = check_ret(uctx(PR_UNWIND_CONTEXT_SET, (unsigned long)slot, 0, 0), 0, "SET") &&
		     !munmap(slot, pg);
	}
	step("unmapped registered variable: fault", ok, "fault", NULL);
	otel_thread_ctx_v1 = r;
	ok = check_ret(uctx(PR_UNWIND_CONTEXT_CLEAR, 0, 0, 0), 0, "CLEAR");
	step("after CLEAR: no event", ok, NULL, NULL);
	if (map != MAP_FAILED)
		munmap(map, pg);
	if (fd >= 0)
		close(fd);
}

static void test_statuses(void)
{
	struct call calls[NSTEPS + 1];
	int tid = gettid_(), setup, n = -1, i;

	setup = !inst_setup(&tid, 1, 1);
	run_steps();
	if (setup && !inst_stop())
		n = collect(tid, calls, NSTEPS + 1);
	cleanup();
	if (n != nsteps)
		fail("%d getppid() calls traced, want %d\n", n, nsteps);
	for (i = 0; i < nsteps; i++) {
		if (!steps[i].setup)
			fail("%s: could not be set up\n", steps[i].name);
		ksft_test_result(n == nsteps && steps[i].setup &&
				 check_call(&calls[i], steps[i].name,
					    steps[i].event ? steps[i].want : NULL),
				 "status: %s\n", steps[i].name);
	}
}

#define NTHREADS	4
#define NCALLS		20

static struct worker {
	pthread_t	thread;
	int		tid, err;
	union rec_buf	buf;
} workers[NTHREADS];
static pthread_barrier_t ready, go;

/* Thread @t's record for its call @i. */
static void mt_rec(struct otel_rec *r, int t, int i)
{
	rec_fill(r, 0x40 + 0x10 * t, 0x80, 0x01);
	r->span_id[0] = t;
	r->span_id[1] = i;
}

static void *mt_worker(void *arg)
{
	struct worker *w = arg;
	int i;

	w->tid = gettid_();
	if (uctx(PR_UNWIND_CONTEXT_SET, (unsigned long)&otel_thread_ctx_v1, 0, 0))
		w->err = errno;
	otel_thread_ctx_v1 = &w->buf.rec;
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&go);
	for (i = 0; i < NCALLS; i++) {
		mt_rec(&w->buf.rec, w - workers, i);
		syscall(SYS_getppid);
	}
	return NULL;
}

/*
 * Each call of each thread has one event with that thread's IDs for that
 * call; an event with another cookie fails collect().
 */
static int check_threads(void)
{
	struct call calls[NCALLS + 1];
	char want[TEXT_SIZE], name[64];
	struct otel_rec r;
	int t, i, n, ok = 1;

	for (t = 0; t < NTHREADS; t++) {
		n = collect(workers[t].tid, calls, NCALLS + 1);
		if (n != NCALLS) {
			ok = fail("thread %d: %d calls traced, want %d\n", t, n, NCALLS);
			continue;
		}
		for (i = 0; i < NCALLS; i++) {
			mt_rec(&r, t, i);
			rec_text(want, "ok", &r);
			snprintf(name, sizeof(name), "thread %d, call %d", t, i);
			ok &= check_call(&calls[i], name, want);
		}
	}
	return ok;
}

static int test_threads(void)
{
	int tids[NTHREADS], t, ok;

	pthread_barrier_init(&ready, NULL, NTHREADS + 1);
	pthread_barrier_init(&go, NULL, NTHREADS + 1);
	for (t = 0; t < NTHREADS; t++)
		if (pthread_create(&workers[t].thread, NULL, mt_worker, &workers[t]))
			ksft_exit_fail_msg("pthread_create\n");
	pthread_barrier_wait(&ready);
	for (t = 0; t < NTHREADS; t++)
		tids[t] = workers[t].tid;
	ok = !inst_setup(tids, NTHREADS, 1);
	pthread_barrier_wait(&go);
	for (t = 0; t < NTHREADS; t++) {
		pthread_join(workers[t].thread, NULL);
		if (workers[t].err)
			ok = fail("thread %d: SET: %s\n", t, strerror(workers[t].err));
	}
	ok = ok && !inst_stop() && check_threads();
	cleanup();
	pthread_barrier_destroy(&ready);
	pthread_barrier_destroy(&go);
	return ok;
}

static union rec_buf torn_buf;
static int torn_tid;
static unsigned long torn_writes;

/* Rewrite the record following its protocol for 0.5 s, in user space. */
static void *torn_worker(void *arg)
{
	struct otel_rec *r = &torn_buf.rec;
	struct timespec t0, t;
	unsigned int k = 0;
	int i;

	torn_tid = gettid_();
	rec_fill(r, 0, 0, 0x01);
	memset(r->trace_id, 0, TRACE_ID_SIZE);
	memset(r->span_id, 0, SPAN_ID_SIZE);
	otel_thread_ctx_v1 = r;
	if (uctx(PR_UNWIND_CONTEXT_SET, (unsigned long)&otel_thread_ctx_v1, 0, 0))
		torn_tid = -errno;
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&go);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (i = 0; i < 4096; i++, k++) {
			r->valid = 0;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			memset(r->trace_id, k & 0xff, TRACE_ID_SIZE);
			memset(r->span_id, k & 0xff, SPAN_ID_SIZE);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			r->valid = 1;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 500000000L);
	torn_writes = k;
	return arg;
}

/* Each event: ok with one byte k in all 24 ID bytes, or invalid. */
static int check_torn(void)
{
	char want[TEXT_SIZE];
	struct otel_rec r;
	int i, nok = 0, ninval = 0, ok = 1;
	unsigned int k;

	for (i = 0; i < nevs; i++) {
		if (evs[i].kind != EV_CTX || evs[i].tid != torn_tid)
			continue;
		if (sscanf(evs[i].text, "status=ok trace_id=%2x", &k) == 1) {
			rec_fill(&r, 0, 0, 0x01);
			memset(r.trace_id, k, TRACE_ID_SIZE);
			memset(r.span_id, k, SPAN_ID_SIZE);
			rec_text(want, "ok", &r);
			nok++;
		} else {
			rec_text(want, "invalid", NULL);
			ninval++;
		}
		if (strcmp(evs[i].text, want) && ok)
			ok = fail("mixed record: %s\n", evs[i].text);
	}
	ksft_print_msg("%lu rewrites, %d events ok, %d invalid\n", torn_writes, nok, ninval);
	return ok && (nok || ninval ? 1 : fail("no context event\n"));
}

/* A sampling event (@defer: every 100 us, deferred callchains): fd or -errno. */
static int perf_open(__u32 type, __u64 config, __u64 sample_type, int defer, int pid, int cpu)
{
	size_t off = offsetof(struct perf_event_attr, read_format) + sizeof(__u64);
	struct perf_event_attr attr;
	__u64 flags;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.sample_type = sample_type;
	attr.sample_period = defer ? 100000 : 1;
	/* Through the flag word: headers without the series lack the field. */
	memcpy(&flags, (char *)&attr + off, sizeof(flags));
	flags |= defer ? DEFER_CALLCHAIN : 0;
	memcpy((char *)&attr + off, &flags, sizeof(flags));
	fd = syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void test_torn(void)
{
	const char *name = "sampled while rewriting: whole records or invalid\n";
	long pg = sysconf(_SC_PAGESIZE);
	void *ring = MAP_FAILED;
	int fd = -1, err = 0, ok;
	pthread_t th;

	pthread_barrier_init(&ready, NULL, 2);
	pthread_barrier_init(&go, NULL, 2);
	if (pthread_create(&th, NULL, torn_worker, NULL))
		ksft_exit_fail_msg("pthread_create\n");
	pthread_barrier_wait(&ready);
	ok = torn_tid > 0 && !inst_setup(&torn_tid, 1, 0);
	if (torn_tid > 0)
		fd = perf_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
			       PERF_SAMPLE_CALLCHAIN, 1, torn_tid, -1);
	if (fd < 0)
		err = torn_tid > 0 ? -fd : 0;
	else
		ring = mmap(NULL, 9 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	pthread_barrier_wait(&go);
	pthread_join(th, NULL);
	if (ring != MAP_FAILED)
		munmap(ring, 9 * pg);
	if (fd >= 0)
		close(fd);
	ok = ok && !inst_stop();
	cleanup();
	pthread_barrier_destroy(&ready);
	pthread_barrier_destroy(&go);
	if (err == ENOENT || err == EOPNOTSUPP) {
		ksft_test_result_skip("perf_event_open: %s: %s", strerror(err), name);
		return;
	}
	if (torn_tid < 0)
		fail("SET: %s\n", strerror(-torn_tid));
	if (err)
		ok = fail("perf_event_open: %s\n", strerror(err));
	ksft_test_result(ok && check_torn(), "%s", name);
}

/* An exit status: 0 if GET gives @addr, 1 if another address, 2 if it fails. */
static int get_status(unsigned long addr)
{
	__u64 got = 0xdeadbeef;

	if (uctx(PR_UNWIND_CONTEXT_GET, (unsigned long)&got, 0, 0))
		return 2;
	return got == addr ? 0 : 1;
}

static void *thread_get(void *arg)
{
	return (void *)(long)get_status((unsigned long)arg);
}

static int wait_child(pid_t pid, const char *what)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return fail("%s: fork/waitpid: %s\n", what, strerror(errno));
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 1;
	return fail("%s: child status %#x\n", what, status);
}

/*
 * A clone() child's check: GET gives @arg (0: nothing registered). The
 * children share the memory: the value is left in clone_got for the
 * parent's report.
 */
static __u64 clone_got;

static int clone_get(void *arg)
{
	__u64 got = 0xdeadbeef;

	if (syscall(SYS_prctl, PR_UNWIND_CONTEXT, PR_UNWIND_CONTEXT_GET,
		    (unsigned long)&got, 0UL, 0UL))
		return 2;
	clone_got = got;
	return got == (unsigned long)arg ? 0 : 1;
}

/*
 * A child that shares the memory and runs beside its parent would read the
 * record its parent rewrites: it starts without the registration. A vfork()
 * child (CLONE_VM | CLONE_VFORK), whose parent waits, keeps it.
 */
static void test_clone_vm(void)
{
	unsigned long me = (unsigned long)&otel_thread_ctx_v1;
	const size_t size = 64 * 1024;
	char *stack = malloc(size);
	int reg, shared = 0, vforked = 0;

	reg = check_ret(uctx(PR_UNWIND_CONTEXT_SET, me, 0, 0), 0, "SET");
	if (stack) {
		shared = wait_child(clone(clone_get, stack + size,
					  CLONE_VM | SIGCHLD, (void *)0UL),
				    "CLONE_VM") ||
			 fail("CLONE_VM: GET gave %#llx, want 0 (registered %#lx)\n",
			      (unsigned long long)clone_got, me);
		vforked = wait_child(clone(clone_get, stack + size,
					   CLONE_VM | CLONE_VFORK | SIGCHLD,
					   (void *)me),
				     "CLONE_VM | CLONE_VFORK") ||
			  fail("vfork: GET gave %#llx, want %#lx\n",
			       (unsigned long long)clone_got, me);
	}
	free(stack);
	ksft_test_result(reg && shared && vforked,
			 "a CLONE_VM child starts without a registration, a vfork() child keeps it\n");
	uctx(PR_UNWIND_CONTEXT_CLEAR, 0, 0, 0);
}

static void test_inherit(char *self)
{
	unsigned long me = (unsigned long)&otel_thread_ctx_v1;
	char *const argv[] = { self, "--exec-child", NULL };
	void *res = (void *)-1L;
	pthread_t th;
	pid_t pid;
	int reg;

	reg = check_ret(uctx(PR_UNWIND_CONTEXT_SET, me, 0, 0), 0, "SET");
	pid = fork();
	if (!pid)
		_exit(get_status(me));
	ksft_test_result(wait_child(pid, "fork") && reg,
			 "fork: the child keeps the registration\n");

	if (pthread_create(&th, NULL, thread_get, NULL) || pthread_join(th, &res))
		res = (void *)-1L;
	if (res)
		fail("new thread: GET status %ld\n", (long)res);
	ksft_test_result(!res && reg, "a new thread starts without a registration\n");

	pid = fork();
	if (!pid) {
		if (!uctx(PR_UNWIND_CONTEXT_SET, me, 0, 0))
			execv("/proc/self/exe", argv);
		_exit(3);
	}
	ksft_test_result(wait_child(pid, "exec") && reg, "execve ends the registration\n");
	uctx(PR_UNWIND_CONTEXT_CLEAR, 0, 0, 0);
}

/*
 * execve() delivers the old program's pending stacks before its point of no
 * return: the context that goes with them is the old program's record,
 * read before the registration ends.
 */
static void test_exec_context(char *self)
{
	char *const argv[] = { self, "--exec-child", NULL };
	char want[2 * REC_MAX_SIZE + 128], c;
	struct call calls[2];
	struct otel_rec r;
	int sync[2], tid, n, ok;
	pid_t pid;

	rec_fill(&r, 0x70, 0x90, 1);
	rec_text(want, "ok", &r);
	if (pipe(sync)) {
		ksft_test_result_fail("execve: pipe: %s\n", strerror(errno));
		return;
	}
	pid = fork();
	if (!pid) {
		otel_thread_ctx_v1 = &r;
		close(sync[1]);
		if (!uctx(PR_UNWIND_CONTEXT_SET, (unsigned long)&otel_thread_ctx_v1, 0, 0) &&
		    read(sync[0], &c, 1) == 0)
			execv("/proc/self/exe", argv);
		_exit(3);
	}
	close(sync[0]);
	tid = pid;
	ok = pid > 0 && !inst_setup(&tid, 1, 2);
	/* The child execs once it sees the end of the pipe. */
	close(sync[1]);
	ok &= wait_child(pid, "execve");
	ok &= !inst_stop();
	n = ok ? collect(tid, calls, 2) : -1;
	if (n != 1)
		ok = fail("execve: %d calls, want 1\n", n);
	ksft_test_result(ok && check_call(&calls[0], "execve", want),
			 "execve: the old program's context goes with its last entry\n");
	cleanup();
}

/* 0 if the caller may open tracepoint @id for @pid and @cpu, else errno. */
static int perf_tp(__u64 id, int pid, int cpu)
{
	int fd = perf_open(PERF_TYPE_TRACEPOINT, id, PERF_SAMPLE_RAW, 0, pid, cpu);

	if (fd < 0)
		return -fd;
	close(fd);
	return 0;
}

static const char *res_str(int err)
{
	return err ? strerror(err) : "allowed";
}

/* In a child with uid and gid 65534: the four opens, exit status 0 if right. */
static int perms_child(const __u64 *ids)
{
	int res[4], i;

	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return 2;
	for (i = 0; i < 4; i++)
		res[i] = perf_tp(ids[i / 2], i & 1 ? -1 : 0, i & 1 ? 0 : -1);
	ksft_print_msg("uid %d, perf_event_paranoid 1: unwind_user_context: task %s, CPU %s\n",
		       NOBODY, res_str(res[0]), res_str(res[1]));
	ksft_print_msg("uid %d, perf_event_paranoid 1: sys_enter_getppid: task %s, CPU %s\n",
		       NOBODY, res_str(res[2]), res_str(res[3]));
	return !(!res[0] && (res[1] == EACCES || res[1] == EPERM) &&
		 res[2] == res[0] && res[3] == res[1]);
}

/* 1 pass, 0 fail, -1 skip. */
static int test_perms(void)
{
	char buf[32];
	__u64 ids[2];
	pid_t pid;
	int ok;

	if (read_str(TRACEFS "/" CTX_EVENT "/id", buf, sizeof(buf)))
		return fail("no id of %s\n", CTX_EVENT);
	ids[0] = strtoull(buf, NULL, 10);
	if (read_str(TRACEFS "/" SC_EVENT "/id", buf, sizeof(buf)))
		return fail("no id of %s\n", SC_EVENT);
	ids[1] = strtoull(buf, NULL, 10);
	if (read_str(PARANOID, buf, sizeof(buf)) || write_str(PARANOID, "1"))
		return -1;
	snprintf(paranoid_old, sizeof(paranoid_old), "%s", buf);
	pid = fork();
	if (!pid)
		_exit(perms_child(ids));
	ok = wait_child(pid, "uid 65534 (exit 1: wrong results, 2: setresuid)");
	cleanup();
	return ok;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc > 1 && !strcmp(argv[1], "--exec-child"))
		return get_status(0);

	ksft_print_header();
	if (access(TRACEFS "/instances", W_OK))
		ksft_exit_skip("%s/instances: %s (needs root and tracefs)\n", TRACEFS,
			       strerror(errno));
	if (access(TRACEFS "/" CTX_EVENT, F_OK))
		ksft_exit_skip("no %s: kernel without the context event\n", CTX_EVENT);
	snprintf(inst, sizeof(inst), TRACEFS "/instances/uctx_%d", getpid());
	atexit(cleanup);
	ksft_set_plan(1 + NSTEPS + 1 + 1 + 3 + 1 + 1 + 1);

	ksft_test_result(test_prctl(), "prctl: errors, SET, EBUSY, GET, CLEAR\n");
	test_statuses();
	ksft_test_result(test_threads(), "%d threads: each call its own thread's IDs\n",
			 NTHREADS);
	test_torn();
	test_inherit(argv[0]);
	ret = test_perms();
	if (ret < 0)
		ksft_test_result_skip("permissions: cannot set %s\n", PARANOID);
	else
		ksft_test_result(ret, "permissions: own task allowed, CPU-wide refused\n");
	test_exec_context(argv[0]);
	test_clone_vm();
	ksft_finished();
}
