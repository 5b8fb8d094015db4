// SPDX-License-Identifier: GPL-2.0
/*
 * BPF as a client of the deferred user-stack unwinder: the kfunc
 * bpf_unwind_user_request() and the tracepoint unwind:unwind_user_stack,
 * checked against exact stacks (bpf_unwind.bpf.c holds the programs).
 *
 * A program on syscalls:sys_enter_getppid, filtered to this thread, asks
 * for the user stack and keeps the cookie the kfunc returns, and also what
 * bpf_get_stack(BPF_F_USER_STACK) walks in place (the anchor: what BPF has
 * without the series). A tp_btf program on unwind:unwind_user_stack keeps
 * every delivery for this thread. getppid() is made by an inline system
 * call instruction at the bottom of a chain of functions that each record
 * their return address, so the expected stack is exact. The delivery comes
 * before the system call returns, so each check reads the programs'
 * results right after it, with nothing to wait for.
 *
 * Results:
 *  1. One entry: the stack is delivered exactly once, with the cookie the
 *     kfunc returned (positive), and its first NFRAMES frames are the
 *     chain's (frame pointers).
 *  2. The anchor: bpf_get_stack() gives the same NFRAMES frames in place,
 *     which shows the expected frames are right.
 *  3. Two entries: two different cookies, each delivered once with its
 *     own stack.
 *  4. Two programs (tracepoint, and tp_btf on sys_enter) asking during one
 *     entry get the same cookie, and the stack is delivered once.
 *  5. A request from a kernel thread (a kworker, in
 *     workqueue_execute_start) returns -EINVAL.
 *  6. A request from an exiting task (sched_process_exit, PF_EXITING set)
 *     returns -EINVAL.
 *  7. A process without privileges (uid and gid 65534, no capabilities)
 *     cannot load the object, nor a tracepoint program: EPERM.
 *  8. Code without frame pointers, described by SFrame only: the deferred
 *     stack is the exact chain, the anchor is cut short; both counts of
 *     correct frames are in the message.
 *  9. One walk for all tracers: a perf event on the same tracepoint with
 *     defer_callchain and defer_output also asks during each entry. Its
 *     samples end with PERF_CONTEXT_USER_DEFERRED and BPF's cookie, its
 *     deferred records carry that cookie and BPF's frames, and the user
 *     stack is walked once per entry (counted by fentry programs on
 *     unwind_user() and unwind_user_from(), the walks of the unwinder).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../kselftest.h"
#include "user_stack.h"
#include "bpf_unwind.h"
#include "bpf_unwind.skel.h"

#define NFRAMES		5	/* frames known exactly */
#define NOBODY		65534
#define PERF_PAGES	8
#define GETPPID_ID	"/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id"

/* In bpf_unwind_nofp.c, built without frame pointers, with SFrame. */
long nofp_f1(unsigned long *ips);

static struct bpf_unwind_bpf *skel;
static struct bpf_unwind_state *st;	/* the programs' map, mapped */
static bool walks_counted;	/* fentry on the walks loaded */
static pid_t parent_ppid;

/*
 * The frame-pointer chain: caller -> f1 -> f2 -> f3, f3 makes the call.
 * ips[0] is the address after the system call instruction, ips[1..3]
 * where f3, f2 and f1 return to, ips[4] where f1's caller returns to.
 */
static void f3(unsigned long *ips)
{
	long ret;

	ips[1] = (unsigned long)__builtin_return_address(0);
	ret = syscall3_here(SYS_getppid, 0, 0, 0, ips[0]);
	if (ret != parent_ppid)
		ksft_exit_fail_msg("getppid: %ld, want %d\n", ret, parent_ppid);
}

static void f2(unsigned long *ips)
{
	ips[2] = (unsigned long)__builtin_return_address(0);
	f3(ips);
	asm volatile("" : : : "memory");	/* no tail call */
}

static void f1(unsigned long *ips)
{
	ips[3] = (unsigned long)__builtin_return_address(0);
	f2(ips);
	asm volatile("" : : : "memory");
}

/* One getppid() entry through the frame-pointer chain. */
static void fp_call(unsigned long *ips)
{
	ips[4] = (unsigned long)__builtin_return_address(0);
	f1(ips);
	asm volatile("" : : : "memory");
}

/* One getppid() entry through the chain without frame pointers. */
static void nofp_call(unsigned long *ips)
{
	long ret;

	ips[4] = (unsigned long)__builtin_return_address(0);
	ret = nofp_f1(ips);
	if (ret != parent_ppid)
		ksft_exit_fail_msg("getppid: %ld, want %d\n", ret, parent_ppid);
	asm volatile("" : : : "memory");
}

/* Forget what the programs recorded: each check counts from zero. */
static void reset(void)
{
	struct bpf_unwind_state *b = st;

	b->nreq = 0;
	b->nreq2 = 0;
	b->ndeliv = 0;
	b->nwalks = 0;
	memset(b->req_cookie, 0, sizeof(b->req_cookie));
	memset(b->req2_cookie, 0, sizeof(b->req2_cookie));
	memset(b->anchor, 0, sizeof(b->anchor));
	memset(b->deliv_cookie, 0, sizeof(b->deliv_cookie));
	memset(b->deliv_ips, 0, sizeof(b->deliv_ips));
}

/* How many of @got's first NFRAMES frames are @want's, in order. */
static unsigned int prefix(const __u64 *got, unsigned int nr, const unsigned long *want)
{
	unsigned int i;

	for (i = 0; i < NFRAMES && i < nr; i++)
		if (got[i] != want[i])
			break;
	return i;
}

static void print_frames(const char *what, const __u64 *got, unsigned int nr,
			 const unsigned long *want)
{
	unsigned int i;

	for (i = 0; i < NFRAMES; i++)
		ksft_print_msg("%s[%u] = %#llx%s, want %#lx\n", what, i,
			       i < nr ? (unsigned long long)got[i] : 0ULL,
			       i < nr ? "" : " (missing)", want[i]);
}

/*
 * Delivery @i must be request @i's cookie, positive, with the expected
 * frames. Prints why not; returns true if it is.
 */
static bool delivered(unsigned int i, const unsigned long *want)
{
	struct bpf_unwind_state *b = st;

	if (b->req_cookie[i] <= 0) {
		ksft_print_msg("request %u: the kfunc returned %lld\n", i,
			       (long long)b->req_cookie[i]);
		return false;
	}
	if (b->deliv_cookie[i] != (__u64)b->req_cookie[i]) {
		ksft_print_msg("delivery %u: cookie %#llx, the kfunc returned %#llx\n",
			       i, (unsigned long long)b->deliv_cookie[i],
			       (unsigned long long)b->req_cookie[i]);
		return false;
	}
	if (prefix(b->deliv_ips[i], b->deliv_nr[i], want) != NFRAMES) {
		ksft_print_msg("delivery %u: nr %u, frames differ\n", i, b->deliv_nr[i]);
		print_frames("deferred", b->deliv_ips[i], b->deliv_nr[i], want);
		return false;
	}
	return true;
}

static bool counts(unsigned int nreq, unsigned int ndeliv)
{
	struct bpf_unwind_state *b = st;

	if (b->nreq == nreq && b->ndeliv == ndeliv)
		return true;
	ksft_print_msg("%u requests and %u deliveries, want %u and %u\n",
		       b->nreq, b->ndeliv, nreq, ndeliv);
	return false;
}

/* 1 and 2 */
static void test_one_entry(void)
{
	struct bpf_unwind_state *b = st;
	unsigned long ips[NFRAMES];
	unsigned int nr;
	bool ok;

	reset();
	fp_call(ips);
	ok = counts(1, 1) && delivered(0, ips);
	ksft_test_result(ok, "one entry: delivered once, the kfunc's cookie, %d exact frames\n",
			 NFRAMES);

	nr = b->anchor_len[0] > 0 ? b->anchor_len[0] / 8 : 0;
	ok = b->nreq == 1 && prefix(b->anchor[0], nr, ips) == NFRAMES;
	if (!ok) {
		ksft_print_msg("bpf_get_stack: %lld\n", (long long)b->anchor_len[0]);
		print_frames("anchor", b->anchor[0], nr, ips);
	}
	ksft_test_result(ok, "bpf_get_stack() in place gives the same frames (frame pointers)\n");
}

/* 3 */
static void test_two_entries(void)
{
	struct bpf_unwind_state *b = st;
	unsigned long ips[2][NFRAMES];
	bool ok;

	reset();
	fp_call(ips[0]);
	fp_call(ips[1]);
	ok = counts(2, 2) && delivered(0, ips[0]) && delivered(1, ips[1]);
	if (ok && b->req_cookie[0] == b->req_cookie[1]) {
		ksft_print_msg("both entries got cookie %#llx\n",
			       (unsigned long long)b->req_cookie[0]);
		ok = false;
	}
	ksft_test_result(ok, "two entries: two cookies, each delivered once\n");
}

/* 4 */
static void test_two_requests(void)
{
	struct bpf_unwind_state *b = st;
	unsigned long ips[NFRAMES];
	bool ok;

	reset();
	b->second_on = 1;
	fp_call(ips);
	b->second_on = 0;
	ok = counts(1, 1) && delivered(0, ips);
	if (ok && (b->nreq2 != 1 || b->req2_cookie[0] != b->req_cookie[0])) {
		ksft_print_msg("tp_btf/sys_enter: %u requests, cookie %#llx; tracepoint's %#llx\n",
			       b->nreq2, (unsigned long long)b->req2_cookie[0],
			       (unsigned long long)b->req_cookie[0]);
		ok = false;
	}
	ksft_test_result(ok, "two programs in one entry: one cookie, one delivery\n");
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* 5 */
static void test_kthread(void)
{
	struct bpf_unwind_state *b = st;
	unsigned long long end = now_ns() + 10000000000ULL;
	bool ok;
	int fd;

	b->kthread_seen = 0;
	b->kthread_done = 0;
	__atomic_store_n(&b->kthread_on, 1, __ATOMIC_RELEASE);
	/*
	 * The last reference to a map is dropped in a work item: each
	 * close() below queues one for a kworker, whose start the program
	 * sees (as any other work item). Polled, not slept on.
	 */
	while (!__atomic_load_n(&b->kthread_done, __ATOMIC_ACQUIRE) && now_ns() < end) {
		fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);
		if (fd >= 0)
			close(fd);
		sched_yield();
	}
	b->kthread_on = 0;
	ok = __atomic_load_n(&b->kthread_done, __ATOMIC_ACQUIRE) &&
	     b->kthread_ret == -EINVAL;
	if (!ok)
		ksft_print_msg("kernel thread: %s, returned %lld (pid %d)\n",
			       b->kthread_done ? "seen" : "no work item in 10 s",
			       (long long)b->kthread_ret, b->kthread_pid);
	ksft_test_result(ok, "a kernel thread's request: -EINVAL\n");
}

/* 6 */
static void test_exiting(void)
{
	struct bpf_unwind_state *b = st;
	int p[2], status;
	pid_t pid;
	char c;
	bool ok;

	if (pipe(p))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	b->exit_seen = 0;
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid) {
		/* Exit once the parent armed the probe for this pid. */
		close(p[1]);
		_exit(read(p[0], &c, 1) == 1 ? 0 : 1);
	}
	close(p[0]);
	b->exit_tid = pid;
	if (write(p[1], "", 1) != 1)
		ksft_exit_fail_msg("write: %s\n", strerror(errno));
	close(p[1]);
	/* The probe runs in do_exit(), before the child can be reaped. */
	if (waitpid(pid, &status, 0) != pid)
		ksft_exit_fail_msg("waitpid: %s\n", strerror(errno));
	b->exit_tid = 0;
	ok = b->exit_seen == 1 && (b->exit_flags & PF_EXITING) && b->exit_ret == -EINVAL;
	if (!ok)
		ksft_print_msg("exiting child: seen %u times, flags %#x, returned %lld\n",
			       b->exit_seen, b->exit_flags, (long long)b->exit_ret);
	ksft_test_result(ok, "an exiting task's request: -EINVAL\n");
}

/* A tracepoint program's smallest body, r0 = 0; exit, loaded by hand. */
static int raw_prog_load(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	attr.insns = (unsigned long)insns;
	attr.insn_cnt = 2;
	attr.license = (unsigned long)"GPL";
	return syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* 7 */
static void test_unprivileged(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int p[2], res[3] = { -1, -1, -1 }, status;
	struct bpf_unwind_bpf *s;
	pid_t pid;
	bool ok;

	if (pipe(p))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid) {
		close(p[0]);
		libbpf_set_print(quiet);
		/* A uid other than 0 after setresuid() keeps no capability. */
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY) || syscall(SYS_capget, &h, d))
			_exit(1);
		res[0] = d[0].effective | d[1].effective | d[0].permitted | d[1].permitted;
		errno = 0;
		s = bpf_unwind_bpf__open_and_load();
		res[1] = s ? 0 : errno;
		res[2] = raw_prog_load() >= 0 ? 0 : errno;
		_exit(write(p[1], res, sizeof(res)) == sizeof(res) ? 0 : 1);
	}
	close(p[1]);
	ok = read(p[0], res, sizeof(res)) == sizeof(res);
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		ok = false;
	ok = ok && !res[0] && res[1] == EPERM && res[2] == EPERM;
	if (!ok)
		ksft_print_msg("uid %d: capabilities %#x, skeleton load: %s, BPF_PROG_LOAD: %s\n",
			       NOBODY, res[0], res[1] ? strerror(res[1]) : "loaded",
			       res[2] ? strerror(res[2]) : "loaded");
	ksft_test_result(ok, "without privileges, loading fails with EPERM\n");
}

/* 8 */
static void test_sframe(void)
{
	struct bpf_unwind_state *b = st;
	unsigned int deferred = 0, anchor = 0, nr;
	unsigned long ips[NFRAMES];
	bool ok;

	reset();
	nofp_call(ips);
	ok = counts(1, 1) && delivered(0, ips);
	if (b->ndeliv)
		deferred = prefix(b->deliv_ips[0], b->deliv_nr[0], ips);
	nr = b->anchor_len[0] > 0 ? b->anchor_len[0] / 8 : 0;
	anchor = prefix(b->anchor[0], nr, ips);
	if (anchor >= deferred) {
		ksft_print_msg("bpf_get_stack() got %u frames right: no frame pointers, so it must not\n",
			       anchor);
		print_frames("anchor", b->anchor[0], nr, ips);
		ok = false;
	}
	ksft_test_result(ok, "no frame pointers, SFrame: deferred %u of %d frames right, bpf_get_stack() %u\n",
			 deferred, NFRAMES, anchor);
}

/* The cookie after PERF_CONTEXT_USER_DEFERRED, the callchain's end; or 0. */
static __u64 chain_cookie(const __u64 *ips, __u64 nr)
{
	if (nr < 2 || ips[nr - 2] != PERF_CONTEXT_USER_DEFERRED)
		return 0;
	return ips[nr - 1];
}

/* 9 */
static void test_perf(void)
{
	struct bpf_unwind_state *b = st;
	unsigned int nsamples = 0, nrecords = 0, i;
	__u64 samples[2] = { 0, 0 }, records[2] = { 0, 0 };
	struct perf_event_mmap_page *page;
	struct perf_event_attr attr;
	unsigned long ips[2][NFRAMES];
	long psz = sysconf(_SC_PAGESIZE);
	__u64 head, tail;
	char buf[32];
	bool ok = true;
	int fd, id;
	FILE *f;

	f = fopen(GETPPID_ID, "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		ksft_exit_fail_msg("%s: %s\n", GETPPID_ID, strerror(errno));
	fclose(f);
	id = atoi(buf);

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = id;
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	/* The user part only: the chain is then the marker and the cookie. */
	attr.exclude_callchain_kernel = 1;
	attr.defer_callchain = 1;
	attr.defer_output = 1;
	fd = syscall(SYS_perf_event_open, &attr, gettid(), -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		ksft_exit_fail_msg("perf_event_open: %s\n", strerror(errno));
	page = mmap(NULL, (1 + PERF_PAGES) * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (page == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));

	reset();
	fp_call(ips[0]);
	fp_call(ips[1]);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);

	/* The records, all written before each getppid() returned. */
	head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
	for (tail = page->data_tail; tail < head;) {
		struct perf_event_header *hdr;
		__u64 *body;

		hdr = (void *)((char *)page + psz + tail % (PERF_PAGES * psz));
		/* Two samples and two records: far from wrapping. */
		body = (__u64 *)(hdr + 1);
		if (hdr->type == PERF_RECORD_SAMPLE) {
			/* pid, tid; nr; ips */
			if (nsamples < 2)
				samples[nsamples] = chain_cookie(body + 2, body[1]);
			nsamples++;
		} else if (hdr->type == PERF_RECORD_CALLCHAIN_DEFERRED) {
			/* cookie; nr; ips: the same walk as BPF's */
			if (nrecords < 2) {
				records[nrecords] = body[0];
				if (prefix(body + 2, body[1], ips[nrecords]) != NFRAMES) {
					ksft_print_msg("perf's deferred record %u: frames differ\n",
						       nrecords);
					print_frames("perf", body + 2, body[1], ips[nrecords]);
					ok = false;
				}
			}
			nrecords++;
		}
		tail += hdr->size;
	}
	munmap(page, (1 + PERF_PAGES) * psz);
	close(fd);

	ok = counts(2, 2) && delivered(0, ips[0]) && delivered(1, ips[1]) && ok;
	if (nsamples != 2 || nrecords != 2) {
		ksft_print_msg("perf: %u samples, %u deferred records, want 2 and 2\n",
			       nsamples, nrecords);
		ok = false;
	}
	for (i = 0; i < 2; i++) {
		if (samples[i] != (__u64)b->req_cookie[i] || records[i] != samples[i]) {
			ksft_print_msg("entry %u: BPF's cookie %#llx, perf's sample %#llx, record %#llx\n",
				       i, (unsigned long long)b->req_cookie[i],
				       (unsigned long long)samples[i],
				       (unsigned long long)records[i]);
			ok = false;
		}
	}
	if (!walks_counted) {
		ksft_print_msg("no fentry on unwind_user()/unwind_user_from(): walks not counted\n");
		ok = false;
	} else if (b->nwalks != 2) {
		ksft_print_msg("%u walks for 2 entries with BPF and perf asking\n", b->nwalks);
		ok = false;
	}
	ksft_test_result(ok, "BPF and perf in the same entries: perf has BPF's cookie, %u walks for 2 entries\n",
			 b->nwalks);
}

/*
 * Open and load the programs; without the walk counters if their fentry
 * attachment is refused (then result 9 fails, the others still run).
 */
static struct bpf_unwind_bpf *load(bool walks)
{
	struct bpf_unwind_bpf *s;
	int err;

	s = bpf_unwind_bpf__open();
	if (!s)
		ksft_exit_fail_msg("opening the BPF object: %s\n", strerror(errno));
	if (!walks) {
		bpf_program__set_autoload(s->progs.walk_user, false);
		bpf_program__set_autoload(s->progs.walk_user_from, false);
	}
	err = bpf_unwind_bpf__load(s);
	if (err) {
		bpf_unwind_bpf__destroy(s);
		if (walks)
			return NULL;
		ksft_exit_fail_msg("loading the BPF object: %s\n", strerror(-err));
	}
	return s;
}

int main(void)
{
	int err;

	ksft_print_header();
	ksft_set_plan(9);
	parent_ppid = getppid();

	skel = load(true);
	walks_counted = skel;
	if (!skel) {
		ksft_print_msg("retrying without the fentry walk counters\n");
		skel = load(false);
	}
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED,
		  bpf_map__fd(skel->maps.state), 0);
	if (st == MAP_FAILED)
		ksft_exit_fail_msg("mmap of the state map: %s\n", strerror(errno));
	st->target_tid = gettid();
	err = bpf_unwind_bpf__attach(skel);
	if (err)
		ksft_exit_fail_msg("attaching: %s\n", strerror(-err));

	test_one_entry();
	test_two_entries();
	test_two_requests();
	test_kthread();
	test_exiting();
	test_unprivileged();
	test_sframe();
	test_perf();

	bpf_unwind_bpf__destroy(skel);
	ksft_finished();
}
