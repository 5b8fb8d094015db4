// SPDX-License-Identifier: GPL-2.0
/*
 * Contracts of the deferred user-stack unwinder, checked on real tasks
 * through the kernel's test client (CONFIG_UNWIND_TEST_CLIENT), which owns a
 * set of test tracers and logs every request and every callback.
 *
 * Each write() to the client's ctl file is one kernel entry of the writing
 * thread. The requests it makes must all get that entry's cookie, every
 * requesting tracer must be called back exactly once for the entry with the
 * same cookie and with the user stack walked once, and nothing else may be
 * called back. The program also leaves requests pending across exit(),
 * execve() and fork() (the client requests from the entry of those system
 * calls), cancels a tracer with a request pending, and asks from a kernel
 * thread, which must be refused.
 *
 * The request write is made from c() in main -> a -> b -> c with an inline
 * system call instruction, so the expected trace is exact.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* sched_setaffinity() */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest.h"
#include "user_stack.h"

#define CTL	"/sys/kernel/debug/unwind_deferred_test/ctl"
#define LOG	"/sys/kernel/debug/unwind_deferred_test/log"
#define MAXREC	4096
#define NIPS	8

struct rec {
	int			cb;
	int			tid;
	unsigned int		tracer, gen, exiting, walks, nr, again;
	int			ret;
	char			ctx[16];
	unsigned long long	cookie;
	unsigned long		ips[NIPS];
};

static struct rec recs[MAXREC];
static int nrecs;
static int ctl_fd;
static char logbuf[1 << 20];

static unsigned long expected[4];
static const char *chain_cmd;
static long chain_ret;

static int gettid_(void)
{
	return syscall(SYS_gettid);
}

static int ctl(const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return write(ctl_fd, buf, len) == len ? 0 : -errno;
}

static void c(void)
{
	long ret;

	unsigned long ip;

	expected[1] = (unsigned long)__builtin_return_address(0);
	asm volatile("lea 1f(%%rip), %[ip]\n\t"
		     "syscall\n"
		     "1:"
		     : [ip] "=&r" (ip), "=a" (ret)
		     : "a" ((long)SYS_write), "D" ((long)ctl_fd), "S" (chain_cmd),
		       "d" (strlen(chain_cmd))
		     : "rcx", "r11", "memory");
	expected[0] = ip;
	chain_ret = ret;
}

static void b(void)
{
	expected[2] = (unsigned long)__builtin_return_address(0);
	c();
	asm volatile("" ::: "memory");	/* no tail call */
}

static void a(void)
{
	expected[3] = (unsigned long)__builtin_return_address(0);
	b();
	asm volatile("" ::: "memory");
}

/* One ctl command, written from the known call chain. */
static int chain(const char *cmd)
{
	chain_cmd = cmd;
	a();
	return chain_ret < 0 ? (int)chain_ret : 0;
}

static void read_log(void)
{
	size_t len = 0;
	ssize_t n;
	char *line, *save;
	int fd = open(LOG, O_RDONLY);

	if (fd < 0)
		ksft_exit_fail_msg("open %s: %s\n", LOG, strerror(errno));
	while ((n = read(fd, logbuf + len, sizeof(logbuf) - 1 - len)) > 0)
		len += n;
	close(fd);
	logbuf[len] = '\0';

	nrecs = 0;
	for (line = strtok_r(logbuf, "\n", &save); line && nrecs < MAXREC;
	     line = strtok_r(NULL, "\n", &save)) {
		struct rec *r = &recs[nrecs];
		char *ips;
		int i;

		memset(r, 0, sizeof(*r));
		if (sscanf(line, "req tid=%d tracer=%u gen=%u ctx=%15s ret=%d again=%u cookie=%llx",
			   &r->tid, &r->tracer, &r->gen, r->ctx, &r->ret, &r->again,
			   &r->cookie) == 7) {
			nrecs++;
			continue;
		}
		if (sscanf(line, "cb tid=%d tracer=%u gen=%u cookie=%llx exiting=%u walks=%u nr=%u",
			   &r->tid, &r->tracer, &r->gen, &r->cookie, &r->exiting,
			   &r->walks, &r->nr) != 7)
			ksft_exit_fail_msg("bad log line: %s\n", line);
		r->cb = 1;
		ips = strstr(line, "ips=");
		for (i = 0, ips = ips ? ips + 4 : NULL; ips && *ips && i < NIPS; i++) {
			r->ips[i] = strtoul(ips, &ips, 16);
			if (*ips == ',')
				ips++;
		}
		nrecs++;
	}
}

static int count(int cb, int tid, int tracer)
{
	int i, n = 0;

	for (i = 0; i < nrecs; i++)
		if (recs[i].cb == cb && (tid < 0 || recs[i].tid == tid) &&
		    (tracer < 0 || recs[i].tracer == (unsigned int)tracer))
			n++;
	return n;
}

/* Report a failed check of a test function, which then returns 0. */
static int fail(int line, const char *fmt, ...)
{
	va_list ap;

	ksft_print_msg("line %d: ", line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	return 0;
}

static struct rec *find(int cb, int tid, int tracer)
{
	int i;

	for (i = 0; i < nrecs; i++)
		if (recs[i].cb == cb && recs[i].tid == tid &&
		    recs[i].tracer == (unsigned int)tracer)
			return &recs[i];
	return NULL;
}

/* Show the whole log as read, so that a rare failure can be diagnosed. */
static void dump_log(void)
{
	int i;

	for (i = 0; i < nrecs; i++)
		ksft_print_msg("log: %s tid=%d tracer=%u gen=%u %s ret=%d cookie=%llx %u %#lx\n",
			       recs[i].cb ? "cb " : "req", recs[i].tid, recs[i].tracer,
			       recs[i].gen, recs[i].cb ? "-" : recs[i].ctx, recs[i].ret,
			       recs[i].cookie, recs[i].nr, recs[i].ips[0]);
}

/*
 * The tracers in @mask requested during one entry of @tid: each has exactly
 * one request line of context @ctx returning @ret and exactly one callback,
 * all with one cookie (returned), and no other tracer was called back. With
 * @frames, the callbacks' traces start with the known call chain.
 */
static unsigned long long check_entry(int tid, unsigned int mask, const char *ctx,
				      int ret, int frames, unsigned int *walks)
{
	unsigned long long cookie = 0;
	int t, i;

	for (t = 0; t < 32; t++) {
		struct rec *req = find(0, tid, t), *cb = find(1, tid, t);

		if (!(mask & (1u << t))) {
			if (cb)
				return fail(__LINE__, "tracer %d called back without asking\n", t);
			continue;
		}
		if (!(req && !strcmp(req->ctx, ctx)))
			return fail(__LINE__, "tracer %d: no %s request\n", t, ctx);
		if (!(req->ret == ret))
			return fail(__LINE__, "tracer %d: request returned %d, want %d\n",
				    t, req->ret, ret);
		if (!(req->cookie))
			return fail(__LINE__, "tracer %d: zero cookie\n", t);
		if (cookie && req->cookie != cookie)
			return fail(__LINE__, "tracer %d: cookie %llx, others %llx\n",
				    t, req->cookie, cookie);
		cookie = req->cookie;
		if (!(count(1, tid, t) == 1))
			return fail(__LINE__, "tracer %d: %d callbacks\n", t, count(1, tid, t));
		if (!(cb->cookie == cookie))
			return fail(__LINE__, "tracer %d: callback cookie %llx, want %llx\n",
				    t, cb->cookie, cookie);
		if (cb->exiting)
			return fail(__LINE__, "tracer %d: callback marked exiting\n", t);
		if (walks && *walks)
			if (!(cb->walks == *walks))
				return fail(__LINE__, "tracer %d: walks %u, want %u\n",
					    t, cb->walks, *walks);
		if (walks)
			*walks = cb->walks;
		for (i = 0; frames && i < 4; i++)
			if (!(cb->nr > 4 && cb->ips[i] == expected[i]))
				return fail(__LINE__, "tracer %d: frame %d is %#lx, want %#lx\n",
					    t, i, cb->ips[i], expected[i]);
	}
	return cookie;
}

static int tid;
static unsigned long long cookie1;
static unsigned int walks1;

static int test_task(void)
{
	unsigned int walks = 0;

	if (ctl("clear") || chain("request 7 task 5"))
		return fail(__LINE__, "write failed\n");
	read_log();
	cookie1 = check_entry(tid, 7, "task", 0, 1, &walks);
	if (!(cookie1))
		return fail(__LINE__, "entry check failed\n");
	if (!(find(0, tid, 0)->again == 4))
		return fail(__LINE__, "later requests did not all return 1\n");
	if (!((cookie1 & 0xffffffffull) >= 1 && (cookie1 >> 32) & 1))
		return fail(__LINE__, "cookie %llx not in cpu+1 | odd counter format\n", cookie1);
	walks1 = walks;
	return 1;
}

static int test_next_entry(void)
{
	unsigned int walks = 0;
	unsigned long long cookie;

	if (ctl("clear") || chain("request 7 task 1"))
		return fail(__LINE__, "write failed\n");
	read_log();
	cookie = check_entry(tid, 7, "task", 0, 1, &walks);
	if (!(cookie && cookie != cookie1))
		return fail(__LINE__, "cookie %llx, previous %llx\n", cookie, cookie1);
	if (!(walks == walks1 + 1))
		return fail(__LINE__, "walks %u after %u: not exactly one walk\n", walks, walks1);
	return 1;
}

static int test_ctx(const char *ctx)
{
	char cmd[32];
	unsigned int walks = 0;

	snprintf(cmd, sizeof(cmd), "request 7 %s 3", ctx);
	if (ctl("clear") || chain(cmd))
		return fail(__LINE__, "write failed: %s\n", strerror(errno));
	read_log();
	if (!(check_entry(tid, 7, ctx, 0, 1, &walks)))
		return fail(__LINE__, "entry check failed\n");
	if (!(find(0, tid, 1)->again == 2))
		return fail(__LINE__, "later requests did not return 1\n");
	return 1;
}

static int test_mixed(void)
{
	unsigned long long cookie = 0;
	int i;

	if (ctl("clear") || chain("request 3 mixed 2"))
		return fail(__LINE__, "write failed\n");
	read_log();
	if (!(count(0, tid, -1) == 6))
		return fail(__LINE__, "%d requests\n", count(0, tid, -1));
	for (i = 0; i < nrecs; i++) {
		if (recs[i].cb)
			continue;
		if (cookie && recs[i].cookie != cookie)
			return fail(__LINE__, "cookies differ within an entry\n");
		cookie = recs[i].cookie;
		if (!(recs[i].ret == (strcmp(recs[i].ctx, "task") ? 1 : 0)))
			return fail(__LINE__, "%s request returned %d\n", recs[i].ctx, recs[i].ret);
	}
	if (!(count(1, tid, 0) == 1 && count(1, tid, 1) == 1 && count(1, -1, -1) == 2))
		return fail(__LINE__, "not one callback per tracer\n");
	if (!(find(1, tid, 0)->cookie == cookie && find(1, tid, 1)->cookie == cookie))
		return fail(__LINE__, "callback cookie differs\n");
	if (!(find(1, tid, 0)->walks == find(1, tid, 1)->walks))
		return fail(__LINE__, "walked twice\n");
	return 1;
}

/* A request made from a callback: the same entry, a second deferred run. */
static int test_request_from_callback(void)
{
	struct rec *req;

	if (ctl("clear") || ctl("rerequest 2") || chain("request 1 task 1"))
		return fail(__LINE__, "write failed\n");
	read_log();
	req = find(0, tid, 1);
	if (!req || strcmp(req->ctx, "callback") || req->ret != 0)
		return fail(__LINE__, "no request from the callback\n");
	if (req->cookie != find(0, tid, 0)->cookie)
		return fail(__LINE__, "cookie changed within the entry\n");
	if (count(1, tid, 0) != 1 || count(1, tid, 1) != 1) {
		dump_log();
		return fail(__LINE__, "callbacks: tracer 0 %d, tracer 1 %d, want 1 each\n",
			    count(1, tid, 0), count(1, tid, 1));
	}
	if (find(1, tid, 1)->cookie != req->cookie ||
	    find(1, tid, 1)->walks != find(1, tid, 0)->walks)
		return fail(__LINE__, "second run: other cookie or another walk\n");
	return 1;
}

static int test_only_requesters(void)
{
	if (ctl("clear") || chain("request 5 task 1"))
		return fail(__LINE__, "write failed\n");
	read_log();
	if (!(check_entry(tid, 5, "task", 0, 1, NULL)))
		return fail(__LINE__, "entry check failed\n");
	if (!(count(1, -1, -1) == 2))
		return fail(__LINE__, "%d callbacks, want 2\n", count(1, -1, -1));
	return 1;
}

static int test_cancel_pending(void)
{
	unsigned int gen;

	if (ctl("clear") || chain("reqcancel 3 2"))
		return fail(__LINE__, "write failed\n");
	read_log();
	if (!(count(1, -1, 1) == 0))
		return fail(__LINE__, "cancelled tracer called back\n");
	if (!(count(1, tid, 0) == 1))
		return fail(__LINE__, "tracer 0: %d callbacks\n", count(1, tid, 0));
	gen = find(0, tid, 1)->gen;

	if (ctl("register 2") || ctl("clear") || chain("request 2 task 1"))
		return fail(__LINE__, "write failed\n");
	read_log();
	if (!(check_entry(tid, 2, "task", 0, 1, NULL)))
		return fail(__LINE__, "re-registered tracer\n");
	if (!(find(1, tid, 1)->gen == gen + 1))
		return fail(__LINE__, "callback for generation %u, want %u\n",
			    find(1, tid, 1)->gen, gen + 1);
	return 1;
}

/* A thread blocked in read() with a request of tracer 1 pending. */
static int pipefd[2];
static int blocked_tid;

static void *blocked_thread(void *arg)
{
	char ch;

	blocked_tid = gettid_();
	if (ctl("arm %d 2", SYS_read))
		return NULL;
	if (read(pipefd[0], &ch, 1) != 1)
		return NULL;
	return arg;
}

static int test_scrub(void)
{
	pthread_t th;
	void *res = NULL;
	int i, armed = 0;

	if (pipe(pipefd) || ctl("clear"))
		return fail(__LINE__, "setup failed\n");
	if (pthread_create(&th, NULL, blocked_thread, pipefd))
		return fail(__LINE__, "pthread_create\n");
	/* Wait until the thread made its request: the log says so. */
	for (i = 0; i < 10000000 && !armed; i++) {
		read_log();
		armed = blocked_tid && find(0, blocked_tid, 1);
	}
	if (!(armed))
		return fail(__LINE__, "the blocked thread never requested\n");
	if (!(find(0, blocked_tid, 1)->ret == 0))
		return fail(__LINE__, "request failed\n");
	/* Cancel tracer 1 and hand its bit to a new registration. */
	if (ctl("cancel 2") || ctl("register 2"))
		return fail(__LINE__, "cancel/register failed\n");
	if (!(write(pipefd[1], "x", 1) == 1))
		return fail(__LINE__, "pipe write\n");
	pthread_join(th, &res);
	if (!(res == pipefd))
		return fail(__LINE__, "blocked thread failed\n");
	read_log();
	if (!(count(1, blocked_tid, -1) == 0))
		return fail(__LINE__, "%d callbacks for a request of a cancelled tracer\n",
			    count(1, blocked_tid, -1));
	close(pipefd[0]);
	close(pipefd[1]);
	return 1;
}

/* Wait for @child; true if it exited with status 0. */
static int reap(int child, int *status)
{
	return waitpid(child, status, 0) == child && WIFEXITED(*status) &&
	       !WEXITSTATUS(*status);
}

static int test_exit_pending(void)
{
	struct rec *req, *cb;
	int status, child, t;

	if (ctl("clear"))
		return fail(__LINE__, "clear\n");
	child = fork();
	if (child < 0)
		return fail(__LINE__, "fork\n");
	if (!child) {
		if (ctl("arm %d 3", SYS_exit_group))
			syscall(SYS_exit_group, 2);
		syscall(SYS_exit_group, 0);
	}
	if (!reap(child, &status))
		return fail(__LINE__, "child failed (status %#x)\n", status);
	read_log();
	for (t = 0; t < 2; t++) {
		req = find(0, child, t);
		cb = find(1, child, t);
		if (!(req && req->ret == 0 && !strcmp(req->ctx, "probe")))
			return fail(__LINE__, "tracer %d: no request at exit_group\n", t);
		if (!(cb && count(1, child, t) == 1))
			return fail(__LINE__, "tracer %d: callback lost at exit\n", t);
		if (!(cb->cookie == req->cookie && cb->exiting == 1))
			return fail(__LINE__, "tracer %d: cookie %llx/%llx exiting %u\n",
				    t, cb->cookie, req->cookie, cb->exiting);
		/* Walked while the mm still existed: exit_group()'s caller. */
		if (cb->nr < 2)
			return fail(__LINE__, "tracer %d: %u frames: walked without the mm\n",
				    t, cb->nr);
	}
	return 1;
}

static int test_fork(void)
{
	struct rec *preq, *pcb, *creq, *ccb;
	int status, child;

	if (ctl("clear") || ctl("arm %d 1", SYS_fork))
		return fail(__LINE__, "arm\n");
	child = syscall(SYS_fork);
	if (child < 0)
		return fail(__LINE__, "fork\n");
	if (!child)
		syscall(SYS_exit_group, ctl("request 1 task 1") ? 1 : 0);
	if (!reap(child, &status))
		return fail(__LINE__, "child failed (status %#x)\n", status);
	read_log();
	preq = find(0, tid, 0);
	pcb = find(1, tid, 0);
	creq = find(0, child, 0);
	ccb = find(1, child, 0);
	if (!(preq && pcb && pcb->cookie == preq->cookie && count(1, tid, 0) == 1))
		return fail(__LINE__, "parent's fork entry not delivered once\n");
	if (!(creq && creq->ret == 0))
		return fail(__LINE__, "child's first request returned %d: inherited state\n",
			    creq ? creq->ret : -999);
	if (!(creq->cookie != preq->cookie))
		return fail(__LINE__, "child got the parent's cookie\n");
	if (!(ccb && count(1, child, 0) == 1 && ccb->cookie == creq->cookie))
		return fail(__LINE__, "child not called back once with its cookie\n");
	if (!(ccb->walks == 1))
		return fail(__LINE__, "child's walk count %u: inherited\n", ccb->walks);
	return 1;
}

static int cookies[4];
static unsigned long long thread_cookie[4];
static int thread_tid[4];
static pthread_barrier_t barrier;

static void *request_thread(void *arg)
{
	long i = (long)arg;

	thread_tid[i] = gettid_();
	pthread_barrier_wait(&barrier);
	cookies[i] = ctl("request 1 task 1");
	return NULL;
}

static int test_threads(void)
{
	pthread_t th[4];
	long i, j;

	if (ctl("clear"))
		return fail(__LINE__, "clear\n");
	pthread_barrier_init(&barrier, NULL, 4);
	for (i = 0; i < 4; i++)
		if (pthread_create(&th[i], NULL, request_thread, (void *)i))
			return fail(__LINE__, "create\n");
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	read_log();
	for (i = 0; i < 4; i++) {
		struct rec *req = find(0, thread_tid[i], 0);

		if (!(!cookies[i] && req && req->ret == 0))
			return fail(__LINE__, "thread %ld: request failed\n", i);
		thread_cookie[i] = req->cookie;
		if (count(1, thread_tid[i], 0) != 1 ||
		    find(1, thread_tid[i], 0)->cookie != req->cookie)
			return fail(__LINE__, "thread %ld: not called back once with its cookie\n",
				    i);
		for (j = 0; j < i; j++)
			if (!(thread_cookie[j] != thread_cookie[i]))
				return fail(__LINE__, "threads %ld and %ld share cookie %llx\n",
					    j, i, thread_cookie[i]);
	}
	return 1;
}

static int test_kthread(void)
{
	if (ctl("clear") || ctl("request 3 kthread 1"))
		return fail(__LINE__, "write failed\n");
	read_log();
	if (!(count(0, 0, 0) == 1 && find(0, 0, 0)->ret == -EINVAL && find(0, 0, 0)->cookie == 0))
		return fail(__LINE__, "kernel thread request not refused\n");
	if (!(count(1, -1, -1) == 0))
		return fail(__LINE__, "callback for a kernel thread\n");
	return 1;
}

/* execve() with requests pending, from the entry of execve itself. */
static void do_exec(const char *path)
{
	static char *const argv[] = { "unwind_deferred", "--after-exec", NULL };
	static char *const envp[] = { NULL };

	asm volatile("syscall\n"
		     ".globl exec_syscall_ret\n"
		     "exec_syscall_ret:"
		     : : "a" ((long)SYS_execve), "D" (path), "S" (argv), "d" (envp)
		     : "rcx", "r11", "memory");
}

/* The user address execve() was called from: right after its syscall. */
static unsigned long exec_ret_ip(void)
{
	unsigned long ip;

	asm("lea exec_syscall_ret(%%rip), %0" : "=r" (ip));
	return ip;
}

extern char _start[];

/*
 * execve() is a hard boundary (contract 11). Tracers 0 and 1 request at the
 * entry of execve(), before its point of no return: they get the old
 * program's stack (from the instruction after the system call) with that
 * cookie. Tracer 2 requests after the point of no return
 * (sched_process_exec): it gets a new cookie and the new program's stack,
 * which starts at its entry point (the same static binary, so _start).
 */
static int test_execve(void)
{
	struct rec *req, *cb, *req2, *cb2;
	int status, child, t;

	if (ctl("clear"))
		return fail(__LINE__, "clear\n");
	child = fork();
	if (child < 0)
		return fail(__LINE__, "fork\n");
	if (!child) {
		if (!ctl("arm %d 3", SYS_execve) && !ctl("armexec 4"))
			do_exec("/proc/self/exe");
		syscall(SYS_exit_group, 3);
	}
	if (!reap(child, &status))
		return fail(__LINE__, "child failed (status %#x)\n", status);
	read_log();
	req2 = find(0, child, 2);
	cb2 = find(1, child, 2);
	if (!(req2 && req2->ret == 0 && !strcmp(req2->ctx, "exec")))
		return fail(__LINE__, "tracer 2: no request after the point of no return\n");
	for (t = 0; t < 2; t++) {
		req = find(0, child, t);
		cb = find(1, child, t);
		if (!(req && req->ret == 0 && !strcmp(req->ctx, "probe")))
			return fail(__LINE__, "tracer %d: no request at execve\n", t);
		if (!(cb && count(1, child, t) == 1 && cb->cookie == req->cookie))
			return fail(__LINE__, "tracer %d: not one callback with its cookie\n",
				    t);
		if (!(cb->nr >= 1 && cb->ips[0] == exec_ret_ip())) {
			dump_log();
			return fail(__LINE__, "tracer %d: trace starts at %#lx, not %p\n",
				    t, cb->ips[0], (void *)exec_ret_ip());
		}
		if (!(req2->cookie != req->cookie))
			return fail(__LINE__, "cookie %llx on both sides of execve\n",
				    req->cookie);
	}
	if (!(cb2 && count(1, child, 2) == 1 && cb2->cookie == req2->cookie))
		return fail(__LINE__, "tracer 2: not one callback with its cookie\n");
	if (!(cb2->nr >= 1 && cb2->ips[0] == (unsigned long)_start))
		return fail(__LINE__, "tracer 2: trace starts at %#lx, not the new program's %p\n",
			    cb2->ips[0], (void *)_start);
	return 1;
}

static int park_done;		/* accessed with __atomic builtins */
static const char *park_cmd, *park_req;

static void *park_thread(void *arg)
{
	/* The deferred run of this write() parks after its walk or in a callback. */
	__atomic_store_n(&park_done, ctl("%s", park_cmd) || ctl("%s", park_req) ?
			 -1 : 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A tracer's bit is reused only when no task can still call back for it
 * (contract 13). A deferred run is parked between its walk and its callbacks;
 * meanwhile its tracer (2) is cancelled and every free bit, the cancelled
 * one included, goes to new tracers. Released, the task must call back
 * nobody: not the cancelled tracer, and not the new owner of its bit.
 */
static int test_bit_reuse(void)
{
	pthread_t th;
	int i, ptid = -1;

	if (ctl("clear"))
		return fail(__LINE__, "clear\n");
	park_done = 0;
	park_cmd = "park";
	park_req = "request 4 task 1";
	if (pthread_create(&th, NULL, park_thread, NULL))
		return fail(__LINE__, "pthread_create\n");
	if (ctl("waitpark"))
		return fail(__LINE__, "waitpark: %s\n", strerror(errno));
	if (ctl("cancel 4"))
		return fail(__LINE__, "cancel\n");
	/* Takes every free bit; -EBUSY at the end is expected. */
	ctl("register fffffffffffffff8");
	ctl("unpark");
	pthread_join(th, NULL);
	ctl("cancel fffffffffffffff8");
	if (ctl("register 4"))
		return fail(__LINE__, "register 4 again\n");
	if (park_done != 1)
		return fail(__LINE__, "parked thread's writes failed\n");
	read_log();
	for (i = 0; i < nrecs; i++)
		if (!recs[i].cb && recs[i].tracer == 2 && !strcmp(recs[i].ctx, "task"))
			ptid = recs[i].tid;
	if (ptid < 0)
		return fail(__LINE__, "no request of tracer 2\n");
	for (i = 0; i < nrecs; i++)
		if (recs[i].cb && recs[i].tid == ptid)
			return fail(__LINE__, "tracer %u (gen %u) called back unasked\n",
				    recs[i].tracer, recs[i].gen);
	return 1;
}

static int key_tid, key_ret;	/* key_ret: __atomic */

/*
 * Parks in the deferred run of its first request; then, without another
 * system call, stops inside a second write() and, when let go, asks again
 * from that same kernel entry.
 */
static void *key_thread(void *arg)
{
	int ret;

	key_tid = gettid_();
	ret = ctl("park") || ctl("request 1 task 1") || chain("gate 1");
	__atomic_store_n(&key_ret, ret ? -1 : 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The exit-to-user static key is on exactly while a tracer is registered,
 * and turning it off loses nothing and leaves nothing behind. Run first,
 * before anything registered (perf registers only while an event with
 * defer_callchain exists, ftrace only while an instance has the option).
 * A thread requests, and its deferred run parks after the walk; the only
 * tracer is cancelled, so the key goes off while the thread's entry is not
 * over yet, and its return to user space no longer ends it. The thread
 * enters the kernel again, and while it is inside, a tracer registers
 * (the key goes on) and the thread asks: it must get a new cookie and its
 * own stack, not the old entry's cookie and cached trace.
 */
static int test_key(void)
{
	unsigned long long c1 = 0, c2 = 0;
	struct rec *cb = NULL;
	pthread_t th;
	int i, n = 0;

	if (ctl("cancel ffffffffffffffff") || ctl("clear"))
		return fail(__LINE__, "cancel, clear\n");
	if (ctl("key 0"))
		return fail(__LINE__, "key on with no tracer registered\n");
	if (ctl("register 1") || ctl("key 1"))
		return fail(__LINE__, "key off with a tracer registered\n");
	if (pthread_create(&th, NULL, key_thread, NULL))
		return fail(__LINE__, "pthread_create\n");
	if (ctl("waitpark"))
		return fail(__LINE__, "waitpark: %s\n", strerror(errno));
	if (ctl("cancel 1") || ctl("key 0"))
		return fail(__LINE__, "key still on after the last cancel\n");
	ctl("unpark");
	if (ctl("waitgate"))
		return fail(__LINE__, "waitgate: %s\n", strerror(errno));
	if (ctl("register 1") || ctl("key 1"))
		return fail(__LINE__, "register again\n");
	ctl("opengate");
	pthread_join(th, NULL);
	ctl("cancel 1");
	if (key_ret != 1)
		return fail(__LINE__, "thread's writes failed\n");

	read_log();
	for (i = 0; i < nrecs; i++) {
		if (recs[i].tid != key_tid)
			continue;
		if (recs[i].cb) {
			cb = &recs[i];
			n++;
		} else if (!c1) {
			c1 = recs[i].cookie;
		} else {
			c2 = recs[i].cookie;
		}
	}
	if (!(c1 && c2 && c1 != c2)) {
		dump_log();
		return fail(__LINE__, "cookies %llx then %llx: the old entry lived on\n",
			    c1, c2);
	}
	if (!(n == 1 && cb->cookie == c2))
		return fail(__LINE__, "%d callbacks, want one with cookie %llx\n", n, c2);
	for (i = 0; i < 4; i++)
		if (!(cb->nr > 4 && cb->ips[i] == expected[i]))
			return fail(__LINE__, "frame %d is %#lx, want %#lx (a stale trace?)\n",
				    i, cb->ips[i], expected[i]);
	return 1;
}

#define TRACEFS		"/sys/kernel/tracing"
#define INST		TRACEFS "/instances/unwind_mm"

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/*
 * Threads of test_mm_locked(). All are created before the mm is locked
 * (creating a thread maps its stack, which needs mmap_lock), wait at
 * mm_start with their stacks touched, then each waits at its own gate.
 */
static int mm_holder_ret = 1, getppid_done, cleared;	/* __atomic */
static pthread_barrier_t mm_start, caller_gate, parker_gate, clearer_gate;

static void *mm_holder(void *arg)
{
	__atomic_store_n(&mm_holder_ret, ctl("mmlock"), __ATOMIC_RELEASE);
	return NULL;
}

static unsigned long mm_caller_ip;
static int mm_caller_faults;
static sigjmp_buf mm_caller_env;
/* The handler's stack, touched before the mm is locked. */
static char mm_caller_altstack[1 << 16];

static void mm_caller_segv(int sig, siginfo_t *si, void *uc)
{
	siglongjmp(mm_caller_env, 1);
}

static void *mm_caller(void *arg)
{
	stack_t ss = {
		.ss_sp = mm_caller_altstack,
		.ss_size = sizeof(mm_caller_altstack),
	};
	unsigned long ip;
	long ret;

	memset(mm_caller_altstack, 0, sizeof(mm_caller_altstack));
	if (sigaltstack(&ss, NULL))
		return NULL;
	pthread_barrier_wait(&mm_start);
	pthread_barrier_wait(&caller_gate);
	/* From here, so that the first frame is known exactly. */
	asm volatile("lea 1f(%%rip), %[ip]\n\t"
		     "syscall\n"
		     "1:"
		     : [ip] "=&r" (ip), "=a" (ret)
		     : "a" ((long)SYS_getppid)
		     : "rcx", "r11", "memory");
	mm_caller_ip = ip;
	/*
	 * A hostile entry: jump to -1 with no frame pointer. The fault's
	 * registers hold ip 0xffffffffffffffff, and the stack of the entry,
	 * walked while mmap_lock cannot be taken, is that address alone. The
	 * handler runs on its own stack, already touched, so that delivering
	 * the signal needs no page fault (which would wait for mmap_lock).
	 */
	if (!sigsetjmp(mm_caller_env, 1))
		asm volatile("xor %%ebp, %%ebp\n\t"
			     "jmp *%%rax"
			     : : "a" (~0UL) : "memory");
	else
		mm_caller_faults++;
	__atomic_store_n(&getppid_done, gettid_(), __ATOMIC_RELEASE);
	return NULL;
}

static void *mm_parker(void *arg)
{
	pthread_barrier_wait(&mm_start);
	pthread_barrier_wait(&parker_gate);
	/* The callback of this write()'s entry parks inside SRCU. */
	__atomic_store_n(&park_done, ctl("park cb") || ctl("request 1 task 1") ?
			 -1 : 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *mm_clearer(void *arg)
{
	pthread_barrier_wait(&mm_start);
	pthread_barrier_wait(&clearer_gate);
	__atomic_store_n(&cleared, write_file(INST "/options/userstacktrace_delay", "0") ?
			 -1 : 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Wait up to about 10 s for *@flag; a stall is the failure looked for. */
static int bounded_wait(int *flag)
{
	int i;

	for (i = 0; i < 10000 && !__atomic_load_n(flag, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

/*
 * Nothing a traced process does can stall tracefs (contract 12). While one
 * thread holds its mm's mmap_lock for writing, another makes a traced
 * system call: the instance's callback must not wait for the lock, and must
 * record the stack with addresses alone. The same thread then jumps to -1,
 * and the fault's signal_generate event asks for the stack of an entry
 * whose instruction pointer is 0xffffffffffffffff: recorded as it is, alone
 * (contract 25), with no mapping looked up. Then, with the lock still held
 * and a third thread stopped inside a callback (of a test tracer, so inside
 * the unwinder's SRCU section), clearing the option must wait for neither.
 */
static int test_mm_locked(void)
{
	static char buf[1 << 16];
	struct sigaction sa = {
		.sa_sigaction = mm_caller_segv,
		.sa_flags = SA_SIGINFO | SA_ONSTACK,
	}, old_sa;
	pthread_t holder, caller, parker, clearer;
	char pat[32], *line, *save;
	int fd, n, len = 0, found = 0, ok = 1;
	/* Per stack of the caller: frames, offsets, first frame. */
	int frames[2] = { 0, 0 }, with_off[2] = { 0, 0 }, stacks = 0;
	unsigned long first[2] = { 0, 0 };

	mkdir(INST, 0755);
	if (write_file(INST "/events/syscalls/sys_enter_getppid/enable", "1") ||
	    write_file(INST "/events/signal/signal_generate/enable", "1") ||
	    write_file(INST "/options/userstacktrace_delay", "1"))
		return fail(__LINE__, "cannot set up %s\n", INST);
	mm_caller_faults = 0;
	if (sigaction(SIGSEGV, &sa, &old_sa))
		return fail(__LINE__, "sigaction\n");
	pthread_barrier_init(&mm_start, NULL, 4);
	pthread_barrier_init(&caller_gate, NULL, 2);
	pthread_barrier_init(&parker_gate, NULL, 2);
	pthread_barrier_init(&clearer_gate, NULL, 2);
	getppid_done = 0;
	park_done = 0;
	cleared = 0;
	if (pthread_create(&caller, NULL, mm_caller, NULL) ||
	    pthread_create(&parker, NULL, mm_parker, NULL) ||
	    pthread_create(&clearer, NULL, mm_clearer, NULL))
		return fail(__LINE__, "pthread_create\n");
	pthread_barrier_wait(&mm_start);
	if (pthread_create(&holder, NULL, mm_holder, NULL))
		return fail(__LINE__, "pthread_create\n");
	if (ctl("waitmm"))
		return fail(__LINE__, "waitmm\n");

	pthread_barrier_wait(&caller_gate);
	if (!bounded_wait(&getppid_done))
		ok = fail(__LINE__, "the traced system call stalled behind mmap_lock\n");
	pthread_barrier_wait(&parker_gate);
	if (ctl("waitpark"))
		ok = fail(__LINE__, "cannot park a task in a callback\n");
	pthread_barrier_wait(&clearer_gate);
	if (bounded_wait(&cleared) != 1)
		ok = fail(__LINE__, "clearing the option %s\n",
			  cleared ? "failed" : "stalled");
	ctl("unpark");
	ctl("mmunlock");
	pthread_join(holder, NULL);
	pthread_join(caller, NULL);
	pthread_join(parker, NULL);
	pthread_join(clearer, NULL);
	sigaction(SIGSEGV, &old_sa, NULL);
	if (!ok)
		goto out;
	if (mm_holder_ret || park_done != 1)
		return fail(__LINE__, "mmlock or park failed\n");
	if (mm_caller_faults != 1)
		return fail(__LINE__, "the jump to -1 faulted %d times, want 1\n",
			    mm_caller_faults);

	fd = open(INST "/trace", O_RDONLY);
	if (fd < 0)
		return fail(__LINE__, "open trace\n");
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	snprintf(pat, sizeof(pat), "-%d ", getppid_done);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "<user unwind stack>")) {
			found = !!strstr(line, pat);
			stacks += found;
			continue;
		}
		if (!found || strncmp(line, " => ", 4) || stacks > 2)
			continue;
		if (!frames[stacks - 1]++)
			first[stacks - 1] = strtoul(line + 4, NULL, 16);
		if (strstr(line, "off="))
			with_off[stacks - 1]++;
	}
	if (stacks != 2)
		ok = fail(__LINE__, "%d stacks of the caller, want 2\n", stacks);
	else if (!(frames[0] >= 1 && first[0] == mm_caller_ip && !with_off[0]))
		ok = fail(__LINE__, "%d frames from %#lx, %d with offsets: want %#lx alone\n",
			  frames[0], first[0], with_off[0], mm_caller_ip);
	else if (!(frames[1] == 1 && first[1] == ~0UL && !with_off[1]))
		ok = fail(__LINE__, "%d frames from %#lx, %d with offsets: want -1 alone\n",
			  frames[1], first[1], with_off[1]);
out:
	write_file(INST "/options/userstacktrace_delay", "0");
	write_file(INST "/events/signal/signal_generate/enable", "0");
	rmdir(INST);
	return ok;
}

/*
 * uprobes (a real uprobe and a real uretprobe, through tracefs): a uprobe on
 * up_callee()'s "push %rbp" and a uretprobe on up_caller() record events in
 * an instance with userstacktrace_delay. The uprobe's deferred stack must
 * start after the push (uprobes carried it out) and go on with up_caller()
 * (not skip it, although the code there now reads int3) and then with the
 * real return address of up_caller(), not the uretprobe trampoline that
 * replaces it on the stack.
 */
#define UPINST		TRACEFS "/instances/unwind_up"

static unsigned long up_ret_in_caller, up_test_ret;

static void up_callee(void)
{
	up_ret_in_caller = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");
}

static void up_caller(void)
{
	/* Taken once, before the uretprobe replaces it on the stack. */
	if (!up_test_ret)
		up_test_ret = (unsigned long)__builtin_return_address(0);
	up_callee();
	asm volatile("" ::: "memory");
}

static void up_test_call(void)
{
	up_caller();
	asm volatile("" ::: "memory");
}

/* The file offset of @addr in the executable, from /proc/self/maps. */
static long file_offset(unsigned long addr)
{
	unsigned long start, end, off;
	char line[512];
	long ret = -1;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &off) == 3 &&
		    addr >= start && addr < end) {
			ret = addr - start + off;
			break;
		}
	fclose(f);
	return ret;
}

static int test_uprobes(void)
{
	static char buf[1 << 16];
	unsigned long push = 0, fr[4];
	const unsigned char *p = (const unsigned char *)up_callee;
	char exe[256], cmd[1024], *line, *save;
	int i, fd, n, len = 0, nf = -1, ok = 0, seen = 0, seen_xol = 0, ok_xol = 0;
	ssize_t el;

	for (i = 0; i < 8; i++)
		if (p[i] == 0x55 && p[i + 1] == 0x48 && p[i + 2] == 0x89 && p[i + 3] == 0xe5)
			push = (unsigned long)&p[i];
	if (!push)
		return fail(__LINE__, "no push %%rbp; mov %%rsp,%%rbp in up_callee\n");
	el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (el <= 0)
		return fail(__LINE__, "readlink\n");
	exe[el] = '\0';

	/* The return addresses, taken without probes. */
	up_test_call();
	mkdir(UPINST, 0755);
	/*
	 * Also a probe on the instruction after "mov %rsp,%rbp", which uprobes
	 * single-steps out of line: at the walk, the task's IP is in the XOL
	 * slot, and the stack must start at the probed address instead.
	 */
	snprintf(cmd, sizeof(cmd),
		 "p:unwind_up/push %s:0x%lx\np:unwind_up/xol %s:0x%lx\nr:unwind_up/ret %s:0x%lx\n",
		 exe, file_offset(push), exe, file_offset(push + 4),
		 exe, file_offset((unsigned long)up_caller));
	if (write_file(TRACEFS "/uprobe_events", cmd) ||
	    write_file(UPINST "/events/unwind_up/enable", "1") ||
	    write_file(UPINST "/options/userstacktrace_delay", "1")) {
		fail(__LINE__, "cannot set up the probes: %s\n", cmd);
		goto out;
	}
	up_test_call();
	write_file(UPINST "/events/unwind_up/enable", "0");

	fd = open(UPINST "/trace", O_RDONLY);
	if (fd < 0) {
		fail(__LINE__, "open trace\n");
		goto out;
	}
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	/* The stack whose first frame is right after the probed push. */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "<user unwind stack>")) {
			nf = 0;
			continue;
		}
		if (nf < 0 || nf >= 4 || strncmp(line, " => ", 4))
			continue;
		fr[nf++] = strtoul(line + 4, NULL, 16);
		if (nf == 3 && fr[0] == push + 4) {
			seen_xol = 1;
			if (fr[1] != up_ret_in_caller || fr[2] != up_test_ret)
				fail(__LINE__, "XOL probe: frames %#lx %#lx, want %#lx %#lx\n",
				     fr[1], fr[2], up_ret_in_caller, up_test_ret);
			else
				ok_xol = 1;
		}
		if (nf == 4 && fr[0] == push + 1) {
			seen = 1;
			if (fr[1] != up_ret_in_caller)
				fail(__LINE__, "frame 1 is %#lx, want up_caller's %#lx\n",
				     fr[1], up_ret_in_caller);
			else if (fr[2] != up_test_ret)
				fail(__LINE__, "frame 2 is %#lx, want %#lx (trampoline?)\n",
				     fr[2], up_test_ret);
			else
				ok = 1;
		}
	}
	if (!seen)
		fail(__LINE__, "no deferred stack starting at %#lx\n", push + 1);
	if (!seen_xol)
		fail(__LINE__, "no deferred stack starting at the probed %#lx\n", push + 4);
	ok = ok && ok_xol;
out:
	write_file(UPINST "/options/userstacktrace_delay", "0");
	rmdir(UPINST);
	write_file(TRACEFS "/uprobe_events", "-:unwind_up/push\n");
	write_file(TRACEFS "/uprobe_events", "-:unwind_up/xol\n");
	write_file(TRACEFS "/uprobe_events", "-:unwind_up/ret\n");
	return ok;
}

/*
 * A system call that is interrupted by a signal with a handler (contract
 * 16). The exit delivers the signal before it runs the deferred walk, and
 * the signal frame rewrites the user registers: the deferred stack must
 * still be the system call's, from the instruction after it up through its
 * callers, never the handler's.
 */
static unsigned long sig_expected[3];
static int sig_caught;		/* __atomic */

/* A call, so that sig_read() is not a leaf and keeps its frame. */
static long sig_one(void)
{
	return 1;
}

static void sig_handler(int sig)
{
	__atomic_store_n(&sig_caught, 1, __ATOMIC_SEQ_CST);
}

static long sig_read(int fd)
{
	unsigned long ip;
	long ret;
	char ch;

	sig_expected[1] = (unsigned long)__builtin_return_address(0);
	ret = syscall3_here(SYS_read, fd, &ch, sig_one(), ip);
	sig_expected[0] = ip;
	return ret;
}

static long sig_caller(int fd)
{
	long ret;

	sig_expected[2] = (unsigned long)__builtin_return_address(0);
	ret = sig_read(fd);
	asm volatile("" ::: "memory");	/* no tail call */
	return ret;
}

/* Wait until thread @t is blocked in read(): its syscall file says so. */
static void wait_blocked_in_read(int t)
{
	char path[64], buf[64];
	long i;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", t);
	for (i = 0; i < 100000000; i++) {
		int fd = open(path, O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

		if (fd >= 0)
			close(fd);
		if (n > 2 && !strncmp(buf, "0 ", 2))
			return;
		sched_yield();
	}
}

static void *sig_sender(void *arg)
{
	int t = *(int *)arg;

	wait_blocked_in_read(t);
	syscall(SYS_tgkill, getpid(), t, SIGALRM);
	return NULL;
}

static int test_signal(void)
{
	struct sigaction sa = { .sa_handler = sig_handler };
	struct rec *req, *cb;
	pthread_t th;
	long ret;
	int i;

	/* No SA_RESTART: read() returns -EINTR through the handler. */
	if (sigaction(SIGALRM, &sa, NULL) || pipe(pipefd) || ctl("clear"))
		return fail(__LINE__, "setup failed\n");
	if (ctl("arm %d 1", SYS_read))
		return fail(__LINE__, "arm failed\n");
	if (pthread_create(&th, NULL, sig_sender, &tid))
		return fail(__LINE__, "pthread_create\n");
	ret = sig_caller(pipefd[0]);
	pthread_join(th, NULL);
	close(pipefd[0]);
	close(pipefd[1]);
	signal(SIGALRM, SIG_DFL);
	if (!(ret == -EINTR && __atomic_load_n(&sig_caught, __ATOMIC_SEQ_CST)))
		return fail(__LINE__, "read returned %ld, handler ran: %d\n", ret,
			    sig_caught);
	read_log();
	req = find(0, tid, 0);
	cb = find(1, tid, 0);
	if (!(req && req->ret == 0 && !strcmp(req->ctx, "probe")))
		return fail(__LINE__, "no request at read()\n");
	if (!(cb && count(1, tid, 0) == 1 && cb->cookie == req->cookie))
		return fail(__LINE__, "not one callback with the request's cookie\n");
	for (i = 0; i < 3; i++)
		if (!(cb->nr > 3 && cb->ips[i] == sig_expected[i])) {
			dump_log();
			return fail(__LINE__, "frame %d is %#lx, want %#lx (handler %p)\n",
				    i, cb->ips[i], sig_expected[i], (void *)sig_handler);
		}
	return 1;
}

/*
 * A request made on the way out, after the exit loop looked at the flags
 * for the last time (contract 2): the client requests from
 * x86_fpu_regs_activated, which fires there when another user task used
 * the CPU while this one was blocked. The entry must end with its own
 * callback and stack, and the next entry must get a new cookie. The other
 * task is a thread on the same CPU that answers through a pipe.
 */
static int late_pipe[2];
static unsigned long late_expected[2];
static int late_peer_ok;

static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* On the same CPU: runs in user space while @arg's thread is blocked. */
static void *late_peer(void *arg)
{
	pin_cpu0();
	wait_blocked_in_read(tid);
	if (write(late_pipe[1], "x", 1) != 1)
		return NULL;
	return arg;
}

static long late_syscall(long nr, long a0, void *a1, long a2, int slot)
{
	unsigned long ip;
	long ret;

	ret = syscall3_here(nr, a0, a1, a2, ip);
	late_expected[slot] = ip;
	return ret;
}

static int test_late(void)
{
	struct rec *req0, *cb0, *req1, *cb1;
	void *res = NULL;
	pthread_t th;
	char ch;

	if (pipe(late_pipe) || ctl("clear"))
		return fail(__LINE__, "setup failed\n");
	pin_cpu0();
	/* Tracer 1 asks at the next getppid(); tracer 0 on the way out of read(). */
	if (ctl("arm %d 2", SYS_getppid) || ctl("late %d 1", SYS_read))
		return fail(__LINE__, "arm failed\n");
	if (pthread_create(&th, NULL, late_peer, &late_peer_ok))
		return fail(__LINE__, "pthread_create\n");
	/* Blocks until the peer, on this CPU, wrote from user space. */
	if (late_syscall(SYS_read, late_pipe[0], &ch, 1, 0) != 1)
		return fail(__LINE__, "read\n");
	late_syscall(SYS_getppid, 0, NULL, 0, 1);
	pthread_join(th, &res);
	close(late_pipe[0]);
	close(late_pipe[1]);
	if (!(res == &late_peer_ok))
		return fail(__LINE__, "peer failed\n");
	read_log();
	req0 = find(0, tid, 0);
	cb0 = find(1, tid, 0);
	req1 = find(0, tid, 1);
	cb1 = find(1, tid, 1);
	if (!(req0 && req0->ret == 0 && !strcmp(req0->ctx, "late")))
		return fail(__LINE__, "no request after the exit loop\n");
	if (!(req1 && req1->ret == 0 && !strcmp(req1->ctx, "probe")))
		return fail(__LINE__, "no request at getppid()\n");
	if (!(req0->cookie != req1->cookie)) {
		dump_log();
		return fail(__LINE__, "read() and getppid() share cookie %llx\n",
			    req0->cookie);
	}
	if (!(cb0 && count(1, tid, 0) == 1 && cb0->cookie == req0->cookie &&
	      cb0->nr >= 1 && cb0->ips[0] == late_expected[0])) {
		dump_log();
		return fail(__LINE__, "late request: no callback with read()'s stack (%#lx)\n",
			    late_expected[0]);
	}
	if (!(cb1 && count(1, tid, 1) == 1 && cb1->cookie == req1->cookie &&
	      cb1->nr >= 1 && cb1->ips[0] == late_expected[1]))
		return fail(__LINE__, "getppid(): no callback with its own stack\n");
	return 1;
}

/*
 * The last tracer is cancelled while a task is between its walk and its
 * callbacks, which ends the task's entry; a new tracer then requests from
 * that task before the callbacks (as an interrupt during the walk could),
 * which begins a new entry with a new cookie. The run must not hand the
 * new tracer the dead entry's cookie: it gets exactly one callback, with
 * the cookie its request returned (contract 3).
 */
static int test_dead_entry(void)
{
	struct rec *req, *cb;
	pthread_t th;
	int ptid = -1, i;

	if (ctl("clear"))
		return fail(__LINE__, "clear\n");
	park_done = 0;
	park_cmd = "park";
	park_req = "request 1 task 1";
	if (pthread_create(&th, NULL, park_thread, NULL))
		return fail(__LINE__, "pthread_create\n");
	if (ctl("waitpark"))
		return fail(__LINE__, "waitpark: %s\n", strerror(errno));
	/* The last tracers go: every entry ends. Then a new one. */
	if (ctl("cancel f") || ctl("key 0") || ctl("register 10"))
		return fail(__LINE__, "cancel, key or register failed\n");
	ctl("unpark 10");
	pthread_join(th, NULL);
	if (park_done != 1)
		return fail(__LINE__, "parked thread's writes failed\n");
	read_log();
	for (i = 0; i < nrecs; i++)
		if (!recs[i].cb && recs[i].tracer == 0 && !strcmp(recs[i].ctx, "task"))
			ptid = recs[i].tid;
	req = find(0, ptid, 4);
	cb = find(1, ptid, 4);
	if (!(ptid >= 0 && req && req->ret == 0 && !strcmp(req->ctx, "parked")))
		return fail(__LINE__, "no request of the new tracer\n");
	if (!(req->cookie != find(0, ptid, 0)->cookie))
		return fail(__LINE__, "new entry kept cookie %llx\n", req->cookie);
	if (!(cb && count(1, ptid, 4) == 1 && cb->cookie == req->cookie)) {
		dump_log();
		return fail(__LINE__, "new tracer: %d callbacks, cookie %llx, want one with %llx\n",
			    count(1, ptid, 4), cb ? cb->cookie : 0, req->cookie);
	}
	if (!(count(1, ptid, 0) == 0))
		return fail(__LINE__, "cancelled tracer called back\n");
	if (ctl("cancel 10") || ctl("register f"))
		return fail(__LINE__, "restoring the tracers failed\n");
	return 1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--after-exec"))
		return 0;

	ksft_print_header();
	ctl_fd = open(CTL, O_WRONLY);
	if (ctl_fd < 0)
		ksft_exit_skip("%s: %s (needs CONFIG_UNWIND_TEST_CLIENT)\n", CTL,
			       strerror(errno));
	tid = gettid_();
	if (argc > 1 && !strcmp(argv[1], "--key")) {
		ksft_set_plan(1);
		ksft_test_result(test_key(),
				 "static key: on only with a tracer, no entry outlives it\n");
		ksft_finished();
	}
	ksft_set_plan(20);
	if (ctl("cancel ffffffffffffffff") || ctl("register f"))
		ksft_exit_fail_msg("registering test tracers: %s\n", strerror(errno));

	ksft_test_result(test_task(), "task context: one cookie and callback, exact frames\n");
	ksft_test_result(test_next_entry(), "next entry: new cookie, exactly one more walk\n");
	ksft_test_result(test_ctx("irq"), "hard IRQ context requests\n");
	ksft_test_result(test_ctx("nmi"), "NMI context requests\n");
	ksft_test_result(test_mixed(), "task, IRQ and NMI requests share one entry\n");
	ksft_test_result(test_only_requesters(), "only requesting tracers are called back\n");
	ksft_test_result(test_request_from_callback(), "request from a callback: once each\n");
	ksft_test_result(test_cancel_pending(), "cancel with a request pending\n");
	ksft_test_result(test_scrub(), "cancelled bit scrubbed from other tasks\n");
	ksft_test_result(test_exit_pending(), "exit with a request pending delivers\n");
	ksft_test_result(test_fork(), "fork child inherits nothing\n");
	ksft_test_result(test_threads(), "threads get distinct cookies\n");
	ksft_test_result(test_kthread(), "kernel threads are refused\n");
	ksft_test_result(test_execve(),
			 "execve: old stack before the point of no return, new cookie and stack after\n");
	ksft_test_result(test_bit_reuse(),
			 "a reused bit gets no callback for an entry of its old owner\n");
	ksft_test_result(test_mm_locked(),
			 "mmap_lock held: addresses alone, option cleared without a stall\n");
	ksft_test_result(test_uprobes(),
			 "uprobes on push %%rbp and on a single-stepped instruction, pending uretprobe: exact frames\n");
	ksft_test_result(test_signal(),
			 "system call interrupted by a signal: its own stack, not the handler's\n");
	ksft_test_result(test_late(),
			 "request after the exit loop: its entry's stack, no cookie shared\n");
	ksft_test_result(test_dead_entry(),
			 "entry ended during the walk: a new tracer gets its own cookie\n");
	ctl("cancel f");
	ksft_finished();
}
