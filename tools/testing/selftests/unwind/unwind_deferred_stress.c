// SPDX-License-Identifier: GPL-2.0
/*
 * Stress test of deferred user-space unwinding, through the test client of
 * lib/tests/unwind_deferred_test.c (/sys/kernel/debug/unwind_deferred_test/).
 *
 * Eight stable tracers (ids 0..7) stay registered for the whole test; four
 * churn tracers (ids 8..11) are cancelled and registered again in a loop by
 * one thread, so that their bits in the per-task masks get freed and reused
 * while NTHREADS worker threads keep requesting. Every worker write of
 * "request MASK task K" is one kernel entry: each tracer in MASK requests K
 * times, and must be called back once for it, with the entry's cookie, when
 * the write returns to user space.
 *
 * Afterwards the client's log is parsed and checked:
 *  1. no write to ctl failed;
 *  2. the log is complete (fewer records than the client's capacity) and
 *     every line is well formed;
 *  3. stable tracers: every request returned 0, and the requests and the
 *     callbacks are the same multiset of (tid, tracer, cookie): exactly one
 *     callback per requesting tracer per entry, none for a tracer that did
 *     not request;
 *  4. churn tracers: every request returned 0 or -EINVAL (cancelled), and
 *     every callback matches exactly one successful request with the same
 *     (tid, tracer, generation, cookie): no callback after cancel, none
 *     meant for an earlier owner of a reused bit, no duplicate; a cancelled
 *     request gets no callback;
 *  5. successful requests have non-zero cookies, never shared by two tasks;
 *  6. every callback ran in a worker task, and not while it was exiting.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "../kselftest.h"

#define UT_DIR		"/sys/kernel/debug/unwind_deferred_test/"
#define UT_CTL		UT_DIR "ctl"
#define UT_LOG		UT_DIR "log"
#define UT_LOG_SIZE	65536		/* records the client keeps */

#define NTHREADS	4
#define ROUNDS		400		/* per worker, at least */
#define MAX_ROUNDS	1000		/* per worker, at most: bounds the log */
#define MIN_CHURN	16		/* churn cycles the workers wait for */
#define MAX_REPEAT	3		/* K in "request MASK task K" */

#define NR_TRACERS	12
#define STABLE_MASK	0x0ffu		/* ids 0..7 */
#define CHURN_MASK	0xf00u		/* ids 8..11 */
#define FIRST_CHURN	8
#define EINVAL_RET	(-22)		/* -EINVAL as logged by the client */

#define NR_TESTS	6
#define MAX_ERR_MSGS	8

struct ut_event {
	bool			cb;
	int			tid;
	unsigned int		tracer;
	unsigned int		gen;
	int			ret;
	unsigned int		exiting;
	unsigned int		nr;
	unsigned long long	cookie;
};

struct ut_key {
	int			tid;
	unsigned int		tracer;
	unsigned int		gen;
	unsigned long long	cookie;
};

struct match_stats {
	size_t	matched;	/* keys with one request and one callback */
	size_t	missing;	/* requests without a callback */
	size_t	extra;		/* callbacks without a request */
	size_t	dups;		/* callbacks whose key is not unique */
};

static pid_t worker_tids[NTHREADS];
static pthread_barrier_t start_barrier;
static int workers_done;
static unsigned int write_failures;
static unsigned long churn_cycles;
static unsigned long churn_progress;	/* cycles so far, while running */

static unsigned int xorshift32(unsigned int *state)
{
	unsigned int x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

/* One command, one write(); failures are counted and the first few shown. */
static __printf(2, 3) int ctl_cmd(int fd, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	ssize_t ret;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);

	ret = write(fd, buf, len);
	if (ret == len)
		return 0;
	if (__atomic_fetch_add(&write_failures, 1, __ATOMIC_RELAXED) < MAX_ERR_MSGS) {
		if (ret < 0)
			ksft_print_msg("write \"%s\": %s\n", buf, strerror(errno));
		else
			ksft_print_msg("write \"%s\": returned %zd\n", buf, ret);
	}
	return -1;
}

static int open_ctl(void)
{
	int fd = open(UT_CTL, O_WRONLY);

	if (fd < 0)
		ksft_exit_fail_perror("open " UT_CTL);
	return fd;
}

static void *worker_fn(void *arg)
{
	int idx = (int)(long)arg;
	unsigned int seed = (idx + 1) * 0x9e3779b9u;
	int fd = open_ctl();
	int i;

	worker_tids[idx] = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&start_barrier);

	/* Keep the churn overlapping: go on until it did MIN_CHURN cycles. */
	for (i = 0; i < MAX_ROUNDS; i++) {
		if (i >= ROUNDS &&
		    __atomic_load_n(&churn_progress, __ATOMIC_RELAXED) >= MIN_CHURN)
			break;
		unsigned int mask = xorshift32(&seed) % (STABLE_MASK | CHURN_MASK) + 1;
		int repeat = xorshift32(&seed) % MAX_REPEAT + 1;

		ctl_cmd(fd, "request %x task %d", mask, repeat);
	}
	close(fd);
	return NULL;
}

static void *churn_fn(void *arg)
{
	unsigned int seed = (NTHREADS + 1) * 0x9e3779b9u;
	int fd = open_ctl();
	unsigned long cycles = 0;

	pthread_barrier_wait(&start_barrier);

	/* At least one cycle, then until the workers are done. */
	do {
		unsigned int mask = (xorshift32(&seed) % 15 + 1) << FIRST_CHURN;

		ctl_cmd(fd, "cancel %x", mask);
		ctl_cmd(fd, "register %x", mask);
		cycles++;
		__atomic_store_n(&churn_progress, cycles, __ATOMIC_RELAXED);
	} while (!__atomic_load_n(&workers_done, __ATOMIC_ACQUIRE));

	churn_cycles = cycles;
	close(fd);
	return NULL;
}

/* Read the whole log, NUL-terminated; it may be several megabytes. */
static char *read_log(size_t *lenp)
{
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	int fd;

	if (!buf)
		ksft_exit_fail_msg("out of memory\n");
	fd = open(UT_LOG, O_RDONLY);
	if (fd < 0)
		ksft_exit_fail_perror("open " UT_LOG);
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				ksft_exit_fail_msg("out of memory\n");
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ksft_exit_fail_perror("read " UT_LOG);
		}
		if (!n)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	*lenp = len;
	return buf;
}

static bool parse_line(const char *line, struct ut_event *ev)
{
	unsigned int again, walks;
	char ctx[16];

	memset(ev, 0, sizeof(*ev));
	if (!strncmp(line, "req ", 4)) {
		if (sscanf(line,
			   "req tid=%d tracer=%u gen=%u ctx=%15s ret=%d again=%u cookie=%llx",
			   &ev->tid, &ev->tracer, &ev->gen, ctx, &ev->ret, &again,
			   &ev->cookie) != 7)
			return false;
		if (strcmp(ctx, "task"))
			return false;
	} else if (!strncmp(line, "cb ", 3)) {
		if (sscanf(line,
			   "cb tid=%d tracer=%u gen=%u cookie=%llx exiting=%u walks=%u nr=%u",
			   &ev->tid, &ev->tracer, &ev->gen, &ev->cookie,
			   &ev->exiting, &walks, &ev->nr) != 7)
			return false;
		ev->cb = true;
	} else {
		return false;
	}
	return ev->tracer < NR_TRACERS;
}

static bool is_stable(unsigned int tracer)
{
	return (1u << tracer) & STABLE_MASK;
}

static int key_cmp(const void *a, const void *b)
{
	const struct ut_key *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->tracer != y->tracer)
		return x->tracer < y->tracer ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	if (x->cookie != y->cookie)
		return x->cookie < y->cookie ? -1 : 1;
	return 0;
}

/* By cookie first: tasks that share a cookie end up next to each other. */
static int cookie_cmp(const void *a, const void *b)
{
	const struct ut_key *x = a, *y = b;

	if (x->cookie != y->cookie)
		return x->cookie < y->cookie ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return 0;
}

static struct ut_key ev_key(const struct ut_event *ev, bool with_gen)
{
	struct ut_key k = {
		.tid = ev->tid, .tracer = ev->tracer,
		.gen = with_gen ? ev->gen : 0, .cookie = ev->cookie,
	};

	return k;
}

static size_t group_end(const struct ut_key *v, size_t n, size_t i)
{
	size_t j = i + 1;

	while (j < n && !key_cmp(&v[i], &v[j]))
		j++;
	return j;
}

/*
 * Walk the sorted requests @req and callbacks @cb group by group of equal
 * keys, and count how they pair up.
 */
static void match_keys(const struct ut_key *req, size_t nreq,
		       const struct ut_key *cb, size_t ncb,
		       struct match_stats *st, const char *what, bool need_cb)
{
	size_t i = 0, j = 0;
	int shown = 0;

	memset(st, 0, sizeof(*st));
	while (i < nreq || j < ncb) {
		size_t ei = i, ej = j, nr, nc;
		const struct ut_key *k;
		int c;

		if (i >= nreq)
			c = 1;
		else if (j >= ncb)
			c = -1;
		else
			c = key_cmp(&req[i], &cb[j]);
		if (c <= 0)
			ei = group_end(req, nreq, i);
		if (c >= 0)
			ej = group_end(cb, ncb, j);
		nr = ei - i;
		nc = ej - j;
		k = c <= 0 ? &req[i] : &cb[j];

		if (nr == 1 && nc == 1) {
			st->matched++;
		} else {
			if (nr > nc)
				st->missing += nr - nc;
			if (nc > nr)
				st->extra += nc - nr;
			if (nc && (nr > 1 || nc > 1))
				st->dups += nc;
			if ((nc || need_cb) && shown++ < MAX_ERR_MSGS)
				ksft_print_msg("%s: tid=%d id=%u gen=%u %llx: %zu req %zu cb\n",
					       what, k->tid, k->tracer, k->gen,
					       k->cookie, nr, nc);
		}
		i = ei;
		j = ej;
	}
}

static bool is_worker(int tid)
{
	int i;

	for (i = 0; i < NTHREADS; i++)
		if (worker_tids[i] == tid)
			return true;
	return false;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		ksft_exit_fail_msg("out of memory\n");
	return p;
}

int main(void)
{
	struct ut_key *sreq, *scb, *creq, *ccb, *ccancel, *cookies;
	size_t nsreq = 0, nscb = 0, ncreq = 0, nccb = 0, nccancel = 0;
	size_t ncookies = 0, nev = 0, nrec = 0, bad = 0, len, i;
	size_t stable_bad_ret = 0, churn_bad_ret = 0, cb_on_cancelled = 0;
	size_t zero_cookie = 0, shared_cookie = 0, foreign_cb = 0;
	size_t exiting_cb = 0, empty_cb = 0, nreq = 0, ncb = 0;
	pthread_t workers[NTHREADS], churn;
	struct match_stats sst, cst;
	struct ut_event *ev;
	char *log, *line;
	int fd;

	ksft_print_header();

	fd = open(UT_CTL, O_WRONLY);
	if (fd < 0)
		ksft_exit_skip("no deferred unwind test client: %s: %s\n",
			       UT_CTL, strerror(errno));

	ksft_set_plan(NR_TESTS);

	if (ctl_cmd(fd, "clear") || ctl_cmd(fd, "register %x", STABLE_MASK) ||
	    ctl_cmd(fd, "register %x", CHURN_MASK))
		ksft_exit_fail_msg("setting up the test tracers failed\n");

	if (pthread_barrier_init(&start_barrier, NULL, NTHREADS + 1))
		ksft_exit_fail_msg("pthread_barrier_init failed\n");
	if (pthread_create(&churn, NULL, churn_fn, NULL))
		ksft_exit_fail_msg("pthread_create failed\n");
	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&workers[i], NULL, worker_fn, (void *)(long)i))
			ksft_exit_fail_msg("pthread_create failed\n");
	for (i = 0; i < NTHREADS; i++)
		pthread_join(workers[i], NULL);
	__atomic_store_n(&workers_done, 1, __ATOMIC_RELEASE);
	pthread_join(churn, NULL);
	pthread_barrier_destroy(&start_barrier);

	ctl_cmd(fd, "cancel %x", CHURN_MASK);
	ctl_cmd(fd, "cancel %x", STABLE_MASK);
	close(fd);

	ksft_test_result(!write_failures, "no write to ctl failed (%u failed)\n",
			 write_failures);

	/* Parse the log. */
	log = read_log(&len);
	for (i = 0; i < len; i++)
		if (log[i] == '\n')
			nrec++;
	ev = xcalloc(nrec + 1, sizeof(*ev));
	for (line = log; *line; ) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		if (*line && parse_line(line, &ev[nev]))
			nev++;
		else if (*line && bad++ < MAX_ERR_MSGS)
			ksft_print_msg("bad log line: %s\n", line);
		line = nl ? nl + 1 : line + strlen(line);
	}
	nrec = nev + bad;

	ksft_test_result(nrec < UT_LOG_SIZE && !bad,
			 "log complete: %zu records (capacity %d), %zu malformed\n",
			 nrec, UT_LOG_SIZE, bad);
	if (nrec >= UT_LOG_SIZE) {
		for (i = 3; i <= NR_TESTS; i++)
			ksft_test_result_skip("check %zu: log overflowed\n", i);
		ksft_finished();
	}

	sreq = xcalloc(nev, sizeof(*sreq));
	scb = xcalloc(nev, sizeof(*scb));
	creq = xcalloc(nev, sizeof(*creq));
	ccb = xcalloc(nev, sizeof(*ccb));
	ccancel = xcalloc(nev, sizeof(*ccancel));
	cookies = xcalloc(nev, sizeof(*cookies));

	for (i = 0; i < nev; i++) {
		const struct ut_event *e = &ev[i];
		bool stable = is_stable(e->tracer);

		if (e->cb) {
			ncb++;
			if (stable)
				scb[nscb++] = ev_key(e, false);
			else
				ccb[nccb++] = ev_key(e, true);
			if (!is_worker(e->tid))
				foreign_cb++;
			if (e->exiting)
				exiting_cb++;
			if (!e->nr)
				empty_cb++;
			continue;
		}

		nreq++;
		if (stable && e->ret != 0)
			stable_bad_ret++;
		if (!stable && e->ret != 0 && e->ret != EINVAL_RET)
			churn_bad_ret++;
		if (e->ret == 0) {
			if (stable)
				sreq[nsreq++] = ev_key(e, false);
			else
				creq[ncreq++] = ev_key(e, true);
			cookies[ncookies++] = ev_key(e, false);
			if (!e->cookie)
				zero_cookie++;
		} else if (!stable && e->ret == EINVAL_RET) {
			ccancel[nccancel++] = ev_key(e, true);
		}
	}

	/* 3. Stable tracers: requests and callbacks pair up exactly. */
	qsort(sreq, nsreq, sizeof(*sreq), key_cmp);
	qsort(scb, nscb, sizeof(*scb), key_cmp);
	match_keys(sreq, nsreq, scb, nscb, &sst, "stable", true);
	if (sst.missing || sst.extra || sst.dups || stable_bad_ret)
		ksft_print_msg("stable: %zu req w/o cb, %zu cb w/o req, %zu dup, %zu ret!=0\n",
			       sst.missing, sst.extra, sst.dups, stable_bad_ret);
	ksft_test_result(!sst.missing && !sst.extra && !sst.dups && !stable_bad_ret,
			 "stable tracers: one callback per request (%zu pairs)\n",
			 sst.matched);

	/* 4. Churn tracers: every callback has its own successful request. */
	qsort(creq, ncreq, sizeof(*creq), key_cmp);
	qsort(ccb, nccb, sizeof(*ccb), key_cmp);
	qsort(ccancel, nccancel, sizeof(*ccancel), key_cmp);
	match_keys(creq, ncreq, ccb, nccb, &cst, "churn", false);
	for (i = 0; i < nccb; i++)
		if (bsearch(&ccb[i], ccancel, nccancel, sizeof(*ccancel), key_cmp))
			cb_on_cancelled++;
	if (cst.extra || cst.dups || churn_bad_ret || cb_on_cancelled)
		ksft_print_msg("churn: %zu cb w/o req, %zu dup, %zu bad ret, %zu cb cancelled\n",
			       cst.extra, cst.dups, churn_bad_ret, cb_on_cancelled);
	ksft_print_msg("churn: %zu pairs, %zu req cancelled, %zu req scrubbed\n",
		       cst.matched, nccancel, cst.missing);
	ksft_test_result(!cst.extra && !cst.dups && !churn_bad_ret && !cb_on_cancelled,
			 "churn tracers: no callback without request, after cancel or twice\n");

	/* 5. Cookies: non-zero, never shared by two tasks. */
	qsort(cookies, ncookies, sizeof(*cookies), cookie_cmp);
	for (i = 1; i < ncookies; i++) {
		if (cookies[i].cookie != cookies[i - 1].cookie ||
		    cookies[i].tid == cookies[i - 1].tid)
			continue;
		if (shared_cookie++ < MAX_ERR_MSGS)
			ksft_print_msg("cookie %llx shared by tids %d and %d\n",
				       cookies[i].cookie, cookies[i - 1].tid,
				       cookies[i].tid);
	}
	ksft_test_result(!zero_cookie && !shared_cookie,
			 "cookies non-zero and per task (%zu zero, %zu shared)\n",
			 zero_cookie, shared_cookie);

	/* 6. Callbacks only in the requesting worker tasks, never exiting. */
	ksft_test_result(!foreign_cb && !exiting_cb,
			 "callbacks in worker tasks, not exiting (%zu foreign, %zu exiting)\n",
			 foreign_cb, exiting_cb);

	ksft_print_msg("%zu reqs, %zu cbs (%zu with an empty trace), %lu churn cycles\n",
		       nreq, ncb, empty_cb, churn_cycles);

	free(cookies);
	free(ccancel);
	free(ccb);
	free(creq);
	free(scb);
	free(sreq);
	free(ev);
	free(log);
	ksft_finished();
}
