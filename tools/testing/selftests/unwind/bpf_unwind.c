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
 * 10. Loading and unloading the programs in a loop for 3 seconds, with no
 *     other program of the kfunc loaded, unregisters BPF's unwind work at
 *     most once a second, and the work is released after the last program
 *     goes. Counted with a kprobe event on unwind_deferred_cancel() that
 *     shows the cancelled work's callback, in a trace instance of its own:
 *     only BPF's (bpf_unwind_user_deliver) counts, not perf's, whose
 *     release result 9's event starts a second before, nor a test
 *     client's. The message gives the loads, the window in whole seconds
 *     S (at most S + 1 releases), the releases and when the last came.
 * 11. A program unloaded while its request is pending is never called: the
 *     test blocks in read() on a pipe after a tp_btf program on sys_enter
 *     of one object asked during that entry; another thread loads a second
 *     object, attaches its receiver only, destroys the first object, and
 *     writes the pipe. The stack of the entry goes to the second object's
 *     receiver, once, with the cookie the first object's program got.
 *
 * With --bench, a benchmark driver instead (harness/guest/bench.sh):
 *
 *   bpf_unwind --bench MODE [-d DEPTH] [-n N]
 *
 * For MODE none, bpf, bpf_event, perf, perf_fp and perf_event: N getppid() calls,
 * each a system call instruction at the bottom of a recursion of DEPTH
 * frames (frame pointers), timed with CLOCK_MONOTONIC around the loop,
 * after BENCH_WARMUP untimed ones. none: nothing attached. bpf: the
 * programs a profiler would have: bench_request on
 * syscalls:sys_enter_getppid asks for the stack, bench_stack on
 * unwind:unwind_user_stack copies its frames. bpf_event: the same event
 * with a program that only counts (no request: what the event costs).
 * perf: a perf event on that tracepoint, on this thread, sample period 1,
 * with a deferred user callchain (defer_callchain, defer_output, no kernel
 * chain), into a ring of 64 pages read after the loop. perf_fp: the same
 * with the user callchain walked in place, by perf's own frame-pointer
 * walk, the one it runs in an NMI (the anchor of the walk's per-frame
 * cost). perf_event: the same event without a callchain.
 * For MODE switch_none and switch_offcpu: two threads, each DEPTH frames
 * down, bound to one CPU, pass a byte back and forth over two pipes N
 * times: a round trip is two context switches. switch_offcpu attaches
 * the off-CPU pattern: bench_switch on sched_switch takes the time and
 * asks for the stack when a thread of this process leaves the CPU, and
 * stores its time off the CPU by thread and cookie when it comes back;
 * bench_stack copies the frames and joins that time to them.
 * Prints one line, "bench mode=M depth=D calls=N ns=T per_call=P ...",
 * P in ns per call (per round trip for switch_*), then what was counted
 * over all calls, the untimed ones too: requests and deliveries, perf's
 * samples and records, and "expected=", the number of calls, which each
 * count must equal for the figure to mean what it says; nr= is the
 * frames of the last delivery (their mean for switch_offcpu).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
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
#include <sys/stat.h>
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
/* One frame a level, then fp_call()'s frames: the deep-stack checks. */
static void deep(unsigned int n, unsigned long *ips)
{
	if (n)
		deep(n - 1, ips);
	else
		fp_call(ips);
	asm volatile("" : : : "memory");	/* no tail call */
}

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
		ksft_print_msg("bpf_get_stack() got %u frames right, without frame pointers\n",
			       anchor);
		print_frames("anchor", b->anchor[0], nr, ips);
		ok = false;
	}
	ksft_test_result(ok, "no frame pointers, SFrame: deferred %u of %d right, anchor %u\n",
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
			ksft_print_msg("entry %u: BPF %#llx, perf sample %#llx, record %#llx\n",
				       i, (unsigned long long)b->req_cookie[i],
				       (unsigned long long)samples[i],
				       (unsigned long long)records[i]);
			ok = false;
		}
	}
	if (!walks_counted) {
		ksft_print_msg("no fentry on unwind_user(), unwind_user_from(): no count\n");
		ok = false;
	} else if (b->nwalks != 2) {
		ksft_print_msg("%u walks for 2 entries with BPF and perf asking\n", b->nwalks);
		ok = false;
	}
	ksft_test_result(ok, "BPF and perf in the same entries: one cookie, %u walks for 2\n",
			 b->nwalks);
}

/*
 * Open and load the tests' programs, not the bench driver's (bench_*) nor
 * result 15's (reset_*), and the walk counters only with @walks. NULL with
 * errno set if that fails.
 */
static struct bpf_unwind_bpf *open_load(bool walks)
{
	struct bpf_program *prog;
	struct bpf_unwind_bpf *s;
	int err;

	s = bpf_unwind_bpf__open();
	if (!s)
		return NULL;
	bpf_object__for_each_program(prog, s->obj)
		bpf_program__set_autoload(prog,
					  strncmp(bpf_program__name(prog), "bench_", 6) &&
					  strncmp(bpf_program__name(prog), "reset_", 6));
	if (!walks) {
		bpf_program__set_autoload(s->progs.walk_user, false);
		bpf_program__set_autoload(s->progs.walk_user_from, false);
	}
	err = bpf_unwind_bpf__load(s);
	if (err) {
		bpf_unwind_bpf__destroy(s);
		errno = -err;
		return NULL;
	}
	return s;
}

/*
 * Open and load the programs; without the walk counters if their fentry
 * attachment is refused (then result 9 fails, the others still run).
 */
static struct bpf_unwind_bpf *load(bool walks)
{
	struct bpf_unwind_bpf *s = open_load(walks);

	if (!s && !walks)
		ksft_exit_fail_msg("loading the BPF object: %s\n", strerror(errno));
	return s;
}

#define CHURN_NS	3000000000ULL
#define RELEASE_NS	5000000000ULL	/* the release after the last program */
#define POLL_NS		100000000ULL
#define TRACEFS		"/sys/kernel/tracing"
#define INSTANCE	TRACEFS "/instances/bpf_unwind"
#define CANCEL_EVENT	"p:bpf_unwind/cancel unwind_deferred_cancel func=work->func:symbol"
#define BPF_CALLBACK	"bpf_unwind_user_deliver"

/* Write @val to @path (appending with @append); 0 or -errno. */
static int write_str(const char *path, const char *val, bool append)
{
	int fd, n, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n != (int)strlen(val))
		err = n < 0 ? -errno : -EIO;
	close(fd);
	return err;
}

/*
 * The trace_pipe of the instance, read without blocking: the lines that
 * show BPF's work cancelled (the callback's name, which perf's has not)
 * are added to *@bpf, the others to *@other. Reading trace_pipe consumes
 * and leaves tracing on, so that no event is missed between two polls.
 */
struct pipe_count {
	int	fd;
	int	bpf, other;
	char	line[512];
	size_t	len;
};

static void count_cancels(struct pipe_count *pc)
{
	char buf[4096];
	ssize_t n, i;

	while ((n = read(pc->fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (pc->len < sizeof(pc->line) - 1)
					pc->line[pc->len++] = buf[i];
				continue;
			}
			pc->line[pc->len] = 0;
			if (strstr(pc->line, "cancel:")) {
				if (strstr(pc->line, BPF_CALLBACK))
					pc->bpf++;
				else
					pc->other++;
			}
			pc->len = 0;
		}
	}
}

/* 13 */
static void test_churn(void)
{
	static const char name[] =
		"load/unload churn: BPF's unwind work released at most once a second";
	struct pipe_count pc = { .fd = -1 };
	unsigned long long start = 0, end = 0, last = 0, secs = 0;
	struct bpf_unwind_bpf *s;
	int cycles = 0, err = 0, during = -1;
	bool probed = false, released = false;

	/*
	 * A trace instance of its own, so that nothing else in the global
	 * buffer counts, and a kprobe event that prints the cancelled
	 * work's callback.
	 */
	rmdir(INSTANCE);
	write_str(TRACEFS "/kprobe_events", "-:bpf_unwind/cancel", true);
	if (mkdir(INSTANCE, 0755) ||
	    write_str(TRACEFS "/kprobe_events", CANCEL_EVENT, true)) {
		ksft_print_msg("%s, kprobe event \"%s\": %s\n", INSTANCE, CANCEL_EVENT,
			       strerror(errno));
		rmdir(INSTANCE);
		ksft_test_result_skip("%s: no trace instance or kprobe event\n", name);
		return;
	}
	probed = true;
	pc.fd = open(INSTANCE "/trace_pipe", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	/* The window: from the probe on until the count after the loop. */
	start = now_ns();
	if (pc.fd < 0 ||
	    write_str(INSTANCE "/events/bpf_unwind/cancel/enable", "1", false)) {
		err = errno;
		goto out;
	}
	while (now_ns() - start < CHURN_NS) {
		s = open_load(walks_counted);
		if (!s) {
			err = errno;
			break;
		}
		bpf_unwind_bpf__destroy(s);
		cycles++;
	}
	count_cancels(&pc);
	end = now_ns();
	last = end;
	secs = (end - start) / 1000000000ULL;
	during = pc.bpf;
	if (err)
		goto out;

	/*
	 * The last program is gone (or going: a program's free is deferred):
	 * its release comes a second later. Polled, not slept on.
	 */
	while (!released && now_ns() - end < RELEASE_NS) {
		usleep(POLL_NS / 1000);
		count_cancels(&pc);
		released = pc.bpf > during;
		last = now_ns();
	}
out:
	if (pc.fd >= 0) {
		write_str(INSTANCE "/events/bpf_unwind/cancel/enable", "0", false);
		close(pc.fd);
	}
	rmdir(INSTANCE);
	if (probed)
		write_str(TRACEFS "/kprobe_events", "-:bpf_unwind/cancel", true);
	if (err) {
		ksft_test_result_fail("%s: %s\n", name, strerror(err));
		return;
	}
	if (during > (int)secs + 1)
		ksft_print_msg("%d releases of BPF's work in %llu s: more than %llu\n",
			       during, secs, secs + 1);
	if (!released)
		ksft_print_msg("BPF's work not released within %llu s of the last program\n",
			       RELEASE_NS / 1000000000ULL);
	ksft_test_result(during <= (int)secs + 1 && released,
			 "%s: %d loads in %llu s, %d releases (perf's %d), %s %llu ms after the loop\n",
			 name, cycles, secs, during, pc.other,
			 released ? "released" : "not released",
			 (last - end) / 1000000ULL);
}

/* ---- the bench driver (--bench) ---- */

#define BENCH_WARMUP	16	/* untimed calls or round trips first */
#define BENCH_PAGES	64	/* perf's ring */

static const char *bench_mode;
static int bench_depth = 8;
static long bench_n = 400;
static int bench_pipe[2][2];	/* [0]: to the other thread, [1]: back */
static struct bpf_link *bench_links[2];
static int bench_nlinks;

static void bench_die(const char *what, int err)
{
	fprintf(stderr, "bpf_unwind --bench %s: %s: %s\n", bench_mode, what, strerror(err));
	exit(1);
}

/*
 * A system call instruction in a function with a frame pointer (glibc's
 * wrappers have none), so that every frame of the bench is walked alike.
 */
static long bench_syscall3(long nr, long a, long b, long c)
{
	long ret;

	asm volatile("syscall" : "=a" (ret) : "0" (nr), "D" (a), "S" (b), "d" (c)
		     : "rcx", "r11", "memory");
	return ret;
}

/* Recursion that keeps its frames: @d calls of this, then @fn. */
static long nest(int d, long (*fn)(void *), void *arg)
{
	long ret;

	if (d <= 1)
		ret = fn(arg);
	else
		ret = nest(d - 1, fn, arg);
	asm volatile("" : : : "memory");	/* no tail call */
	return ret;
}

static void getppid_n(long n)
{
	long i;

	for (i = 0; i < n; i++)
		bench_syscall3(SYS_getppid, 0, 0, 0);
}

/* The timed loop, DEPTH frames down, after the warm-up: its nanoseconds. */
static long getppid_loop(void *arg)
{
	unsigned long long t;

	getppid_n(BENCH_WARMUP);
	t = now_ns();
	getppid_n(bench_n);
	return now_ns() - t;
}

static void bench_pass(int from, int to, long n)
{
	char c = 0;
	long i;

	for (i = 0; i < n; i++) {
		if (bench_syscall3(SYS_write, to, (long)&c, 1) != 1 ||
		    bench_syscall3(SYS_read, from, (long)&c, 1) != 1)
			bench_die("pipe", EIO);
	}
}

/* The other thread: answer every byte, DEPTH frames down. */
static long pong_loop(void *arg)
{
	char c;
	long i;

	for (i = 0; i < BENCH_WARMUP + bench_n; i++) {
		if (bench_syscall3(SYS_read, bench_pipe[0][0], (long)&c, 1) != 1 ||
		    bench_syscall3(SYS_write, bench_pipe[1][1], (long)&c, 1) != 1)
			bench_die("pipe", EIO);
	}
	return 0;
}

static long ping_loop(void *arg)
{
	unsigned long long t;

	bench_pass(bench_pipe[1][0], bench_pipe[0][1], BENCH_WARMUP);
	t = now_ns();
	bench_pass(bench_pipe[1][0], bench_pipe[0][1], bench_n);
	return now_ns() - t;
}

static void *pong(void *arg)
{
	nest(bench_depth, pong_loop, NULL);
	return NULL;
}

/* Both threads on the CPU this one runs on: each pass is a switch. */
static void bench_pin(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		bench_die("sched_setaffinity", errno);
}

static long bench_switches(void)
{
	pthread_t t;
	long ns;
	int err;

	if (pipe(bench_pipe[0]) || pipe(bench_pipe[1]))
		bench_die("pipe", errno);
	bench_pin();	/* inherited by the thread */
	err = pthread_create(&t, NULL, pong, NULL);
	if (err)
		bench_die("pthread_create", err);
	ns = nest(bench_depth, ping_loop, NULL);
	pthread_join(t, NULL);
	return ns;
}

struct bench_ring {
	struct perf_event_mmap_page *page;
	long psz;
	__u64 samples, records, lost, nr;
	bool in_place;		/* perf_fp: the samples carry the user chain */
};

static __u64 ring_u64(struct bench_ring *r, __u64 off)
{
	return *(__u64 *)((char *)r->page + r->psz + off % (BENCH_PAGES * r->psz));
}

/* Count what the ring holds: samples, deferred records, lost records. */
static void ring_drain(struct bench_ring *r)
{
	__u64 head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = r->page->data_tail;

	while (tail < head) {
		struct perf_event_header hdr;
		__u64 h = ring_u64(r, tail);

		memcpy(&hdr, &h, sizeof(hdr));
		if (hdr.type == PERF_RECORD_SAMPLE) {
			r->samples++;
			/* header; pid, tid; nr; ips (PERF_CONTEXT_USER first) */
			if (r->in_place)
				r->nr = ring_u64(r, tail + 16) - 1;
		} else if (hdr.type == PERF_RECORD_CALLCHAIN_DEFERRED) {
			/* header; cookie; nr; ips */
			r->records++;
			r->nr = ring_u64(r, tail + 16);
		} else if (hdr.type == PERF_RECORD_LOST) {
			/* header; id; lost */
			r->lost += ring_u64(r, tail + 16);
		}
		if (!hdr.size)
			break;
		tail += hdr.size;
	}
	__atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);
}

/*
 * A perf event on syscalls:sys_enter_getppid for this thread, sampling
 * every call: with @chain, with the deferred user callchain; without, the
 * event alone. Its ring is mapped to @r; returns its fd.
 */
static int bench_perf_open(struct bench_ring *r, bool chain, bool defer)
{
	struct perf_event_attr attr;
	char buf[32];
	FILE *f;
	int fd;

	f = fopen(GETPPID_ID, "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		bench_die(GETPPID_ID, errno);
	fclose(f);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = atoi(buf);
	attr.sample_period = 1;
	attr.sample_type = PERF_SAMPLE_TID;
	if (chain) {
		attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
		attr.exclude_callchain_kernel = 1;
		attr.defer_callchain = defer;
		attr.defer_output = defer;
	}
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		bench_die("perf_event_open", errno);
	r->psz = sysconf(_SC_PAGESIZE);
	r->page = mmap(NULL, (1 + BENCH_PAGES) * r->psz, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);
	if (r->page == MAP_FAILED)
		bench_die("mmap of perf's ring", errno);
	return fd;
}

/* Count what the ring got, and close the event. */
static void bench_perf_close(int fd, struct bench_ring *r)
{
	ring_drain(r);
	munmap(r->page, (1 + BENCH_PAGES) * r->psz);
	close(fd);
}

/*
 * Load the bench driver's programs named in @names (and no others: a
 * program that calls the kfunc registers BPF's unwind work by being
 * loaded) and attach them.
 */
static struct bpf_unwind_bpf *bench_load(const char *const *names)
{
	struct bpf_program *prog;
	struct bpf_unwind_bpf *s;
	const char *const *n;
	struct bpf_link *l;
	int err;

	s = bpf_unwind_bpf__open();
	if (!s)
		bench_die("opening the programs", errno);
	bpf_object__for_each_program(prog, s->obj) {
		for (n = names; *n && strcmp(*n, bpf_program__name(prog)); n++)
			;
		bpf_program__set_autoload(prog, *n);
	}
	err = bpf_unwind_bpf__load(s);
	if (err)
		bench_die("loading the programs", -err);
	for (n = names; *n; n++) {
		prog = bpf_object__find_program_by_name(s->obj, *n);
		l = bpf_program__attach(prog);
		err = libbpf_get_error(l);
		if (err)
			bench_die(*n, -err);
		bench_links[bench_nlinks++] = l;
	}
	return s;
}

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif
#define BENCH_COPY_ENV	"BPF_UNWIND_BENCH_COPY"

/*
 * This program has an SFrame section, for result 8's code only, and a
 * walk through frame-pointer code of a file with a section looks for its
 * rows first, which costs far more per frame than the frame-pointer step
 * the bench is about. So the driver runs from a copy of this file whose
 * PT_GNU_SFRAME header is PT_NULL: the same code at the same addresses,
 * walked by frame pointers, as the frame-pointer programs a profiler
 * meets. Returns only in that copy, which unlinks itself.
 */
static void bench_reexec(char **argv)
{
	char path[] = "/tmp/bpf_unwind_bench.XXXXXX";
	const char *self = getenv(BENCH_COPY_ENV);
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	ssize_t len = 0, n;
	size_t size = 1 << 20;
	char *img = NULL;
	int fd, i;

	if (self) {
		unlink(self);
		unsetenv(BENCH_COPY_ENV);
		return;
	}
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		bench_die("/proc/self/exe", errno);
	do {
		if (!img || len == (ssize_t)size) {
			size *= 2;
			img = realloc(img, size);
			if (!img)
				bench_die("realloc", ENOMEM);
		}
		n = read(fd, img + len, size - len);
		if (n < 0)
			bench_die("/proc/self/exe", errno);
		len += n;
	} while (n > 0);
	close(fd);
	eh = (Elf64_Ehdr *)img;
	if (len < (ssize_t)sizeof(*eh) ||
	    eh->e_phoff + (size_t)eh->e_phnum * sizeof(*ph) > (size_t)len)
		bench_die("/proc/self/exe", ENOEXEC);
	ph = (Elf64_Phdr *)(img + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_GNU_SFRAME)
			ph[i].p_type = PT_NULL;
	fd = mkstemp(path);
	if (fd < 0)
		bench_die("mkstemp", errno);
	if (write(fd, img, len) != len || fchmod(fd, 0700))
		bench_die(path, errno);
	close(fd);
	free(img);
	setenv(BENCH_COPY_ENV, path, 1);
	execv(path, argv);
	bench_die(path, errno);
}

static int bench_main(int argc, char **argv)
{
	static const char *const bpf_progs[] = { "bench_request", "bench_stack", NULL };
	static const char *const tp_progs[] = { "bench_event", NULL };
	static const char *const offcpu_progs[] = { "bench_switch", "bench_stack", NULL };
	const char *const *progs = NULL;
	struct bpf_unwind_bench *b = NULL;
	struct bpf_unwind_bpf *s = NULL;
	struct bench_ring r = {};
	bool switches, perf;
	int opt, i, fd = -1;
	long ns;

	bench_mode = argv[2];
	bench_reexec(argv);
	optind = 3;
	while ((opt = getopt(argc, argv, "d:n:")) != -1) {
		switch (opt) {
		case 'd':
			bench_depth = atoi(optarg);
			break;
		case 'n':
			bench_n = atol(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (bench_depth < 1 || bench_n < 1 || optind != argc)
		goto usage;
	switches = !strncmp(bench_mode, "switch_", 7);
	perf = !strncmp(bench_mode, "perf", 4);
	if (!strcmp(bench_mode, "bpf"))
		progs = bpf_progs;
	else if (!strcmp(bench_mode, "bpf_event"))
		progs = tp_progs;
	else if (!strcmp(bench_mode, "switch_offcpu"))
		progs = offcpu_progs;
	else if (strcmp(bench_mode, "none") && strcmp(bench_mode, "perf") &&
		 strcmp(bench_mode, "perf_fp") && strcmp(bench_mode, "perf_event") &&
		 strcmp(bench_mode, "switch_none"))
		goto usage;
	if (progs) {
		s = bench_load(progs);
		b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED,
			 bpf_map__fd(s->maps.bench), 0);
		if (b == MAP_FAILED)
			bench_die("mmap of the bench map", errno);
		b->offcpu = switches;
		b->tgid = getpid();
	}

	r.in_place = !strcmp(bench_mode, "perf_fp");
	if (perf)
		fd = bench_perf_open(&r, strcmp(bench_mode, "perf_event"),
				     !strcmp(bench_mode, "perf"));
	/* The same frames below the loop in every mode. */
	if (switches)
		ns = bench_switches();
	else
		ns = nest(bench_depth, getppid_loop, NULL);
	if (perf)
		bench_perf_close(fd, &r);
	if (b)
		b->tgid = 0;

	printf("bench mode=%s depth=%d calls=%ld ns=%ld per_call=%.1f", bench_mode,
	       bench_depth, bench_n, ns, (double)ns / bench_n);
	if (perf)
		printf(" samples=%llu records=%llu lost=%llu nr=%llu expected=%ld",
		       (unsigned long long)r.samples, (unsigned long long)r.records,
		       (unsigned long long)r.lost, (unsigned long long)r.nr,
		       bench_n + BENCH_WARMUP);
	if (b && progs == tp_progs)
		printf(" events=%llu expected=%ld", (unsigned long long)b->events,
		       bench_n + BENCH_WARMUP);
	if (b && progs == bpf_progs)
		printf(" requests=%llu refused=%llu deliveries=%llu nr=%llu expected=%ld",
		       (unsigned long long)b->requests, (unsigned long long)b->refused,
		       (unsigned long long)b->deliveries,
		       (unsigned long long)b->last_nr,
		       bench_n + BENCH_WARMUP);
	if (b && switches)
		printf(" requests=%llu refused=%llu deliveries=%llu",
		       (unsigned long long)b->requests, (unsigned long long)b->refused,
		       (unsigned long long)b->deliveries);
	if (b && switches)
		printf(" switch_ins=%llu joined=%llu offcpu_ns=%llu nr=%.1f",
		       (unsigned long long)b->switch_ins,
		       (unsigned long long)b->joined, (unsigned long long)b->offcpu_ns,
		       b->deliveries ? (double)b->frames / b->deliveries : 0.0);
	printf("\n");
	for (i = 0; i < bench_nlinks; i++)
		bpf_link__destroy(bench_links[i]);
	if (s)
		bpf_unwind_bpf__destroy(s);
	return 0;
usage:
	fprintf(stderr, "usage: bpf_unwind --bench MODE [-d DEPTH] [-n N]\n%s\n",
		"MODE: none, bpf, bpf_event, perf, perf_fp, perf_event, switch_none, switch_offcpu");
	return 2;
}

struct unload_pending {
	struct bpf_unwind_bpf *first, *second;
	struct bpf_unwind_state *first_st, *second_st;
	struct bpf_link *link;
	pid_t tid;
	int pipe[2];
	__s64 cookie;
	const char *err;
};

/*
 * Result 14's other thread: once the first object's program has asked
 * during the test thread's read(), attach the second object's receiver,
 * unload the first object and let the read() return.
 */
static void *unload_first(void *arg)
{
	struct unload_pending *u = arg;
	unsigned long long end = now_ns() + 10000000000ULL;

	while (!__atomic_load_n(&u->first_st->nreq2, __ATOMIC_ACQUIRE)) {
		if (now_ns() > end) {
			u->err = "no request on read() within 10 s";
			break;
		}
		sched_yield();
	}
	u->cookie = u->first_st->req2_cookie[0];
	u->second_st->target_tid = u->tid;
	u->link = bpf_program__attach(u->second->progs.on_stack);
	if (!u->link && !u->err)
		u->err = "attaching the second receiver failed";
	munmap(u->first_st, sizeof(*u->first_st));
	bpf_unwind_bpf__destroy(u->first);
	u->first = NULL;
	if (write(u->pipe[1], "x", 1) != 1 && !u->err)
		u->err = "write to the pipe failed";
	return NULL;
}

static struct bpf_unwind_state *map_state(struct bpf_unwind_bpf *s)
{
	struct bpf_unwind_state *m;

	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(s->maps.state), 0);
	if (m == MAP_FAILED)
		ksft_exit_fail_msg("mmap of the state map: %s\n", strerror(errno));
	return m;
}

static void test_unload_pending(void)
{
	struct unload_pending u = { .tid = gettid() };
	struct bpf_unwind_state *b;
	pthread_t t;
	bool ok;
	char c;

	u.first = load(false);
	u.second = load(false);
	u.first_st = map_state(u.first);
	u.second_st = map_state(u.second);
	b = u.second_st;
	if (pipe(u.pipe) || bpf_unwind_bpf__attach(u.first))
		ksft_exit_fail_msg("result 14: pipe or attach failed\n");
	u.first_st->target_tid = u.tid;
	u.first_st->read_on = 1;
	if (pthread_create(&t, NULL, unload_first, &u))
		ksft_exit_fail_msg("result 14: pthread_create failed\n");
	ok = read(u.pipe[0], &c, 1) == 1;
	pthread_join(t, NULL);

	if (u.err) {
		ksft_print_msg("%s\n", u.err);
		ok = false;
	}
	if (b->ndeliv != 1 || b->deliv_cookie[0] != (__u64)u.cookie ||
	    u.cookie <= 0 || !b->deliv_nr[0]) {
		ksft_print_msg("receiver: %u deliveries, cookie %#llx nr %u; requester's %#llx\n",
			       b->ndeliv, (unsigned long long)b->deliv_cookie[0],
			       b->deliv_nr[0], (unsigned long long)u.cookie);
		ok = false;
	}
	ksft_test_result(ok, "unloaded with a request pending: the receiver attached has it\n");
	bpf_link__destroy(u.link);
	munmap(b, sizeof(*b));
	bpf_unwind_bpf__destroy(u.second);
	close(u.pipe[0]);
	close(u.pipe[1]);
}

/*
 * 12: nothing runs a request after the end of the entry. A request from a
 * return probe on __unwind_reset_info() (a BPF fexit program calling the
 * kfunc, a kretprobe, perf probe's %return), on unwind_state_reset() or on
 * x86's ret_from_fork(), whose return comes after a fork child's exit to
 * user space, came after the reset and raised no interrupt: the entry
 * stayed open, the next entry got the probe's cookie and the probe the
 * next entry's stack. For each, a kretprobe (tracefs) and an fexit
 * program that calls the kfunc must be refused; the program must load
 * (it is valid) and fail to attach. Were the one on __unwind_reset_info()
 * attached, the cookies of four getppid() entries show what it does.
 */
static const char *const reset_targets[] = {
	"__unwind_reset_info", "unwind_state_reset", "ret_from_fork",
};

/* A kretprobe on @func through tracefs: true if refused with EINVAL. */
static bool kretprobe_refused(const char *func)
{
	char def[128];
	bool ok = true;
	ssize_t n;
	int fd, err;

	fd = open("/sys/kernel/tracing/kprobe_events", O_WRONLY | O_APPEND);
	if (fd < 0) {
		ksft_print_msg("kprobe_events: %s\n", strerror(errno));
		return false;
	}
	snprintf(def, sizeof(def), "r:unwind_reset_probe %s", func);
	n = write(fd, def, strlen(def));
	err = errno;
	if (n >= 0) {
		ksft_print_msg("a kretprobe on %s() was accepted\n", func);
		n = write(fd, "-:unwind_reset_probe", 20);
		ok = false;
	} else if (err != EINVAL) {
		ksft_print_msg("a kretprobe on %s(): %s, want EINVAL\n", func,
			       strerror(err));
		ok = false;
	}
	close(fd);
	return ok;
}

/* The cookies of four getppid() entries with @s's fexit program attached. */
static bool reset_cookies(struct bpf_unwind_bpf *s)
{
	unsigned long ips[NFRAMES];
	struct bpf_unwind_state *b;
	struct bpf_link *link;
	bool ok = true;
	int i, j;

	b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(s->maps.state), 0);
	if (b == MAP_FAILED)
		ksft_exit_fail_msg("mmap of the state map: %s\n", strerror(errno));
	link = bpf_program__attach(s->progs.request_getppid);
	if (!link)
		ksft_exit_fail_msg("attaching request_getppid: %s\n", strerror(errno));
	b->target_tid = gettid();
	for (i = 0; i < 4; i++)
		fp_call(ips);
	b->target_tid = 0;
	for (i = 0; i < (int)b->nreq; i++) {
		for (j = 0; j < i; j++)
			if (b->req_cookie[j] == b->req_cookie[i])
				ok = false;
		for (j = 0; j < (int)b->nreset; j++)
			if (b->reset_cookie[j] == b->req_cookie[i])
				ok = false;
		ksft_print_msg("entry %d: cookie %#llx, the fexit's after it %#llx\n",
			       i, (unsigned long long)b->req_cookie[i],
			       i < (int)b->nreset ?
			       (unsigned long long)b->reset_cookie[i] : 0ULL);
	}
	if (b->nreq != 4)
		ok = false;
	bpf_link__destroy(link);
	munmap(b, sizeof(*b));
	return ok;
}

/* An fexit program on @func that calls the kfunc: true if refused. */
static bool fexit_refused(const char *func)
{
	struct bpf_program *prog;
	struct bpf_unwind_bpf *s;
	struct bpf_link *link;
	bool ok;
	int err;

	s = bpf_unwind_bpf__open();
	if (!s)
		ksft_exit_fail_msg("opening the BPF object: %s\n", strerror(errno));
	bpf_object__for_each_program(prog, s->obj)
		bpf_program__set_autoload(prog, false);
	bpf_program__set_autoload(s->progs.reset_exit, true);
	bpf_program__set_autoload(s->progs.request_getppid, true);
	err = bpf_program__set_attach_target(s->progs.reset_exit, 0, func) ?:
	      bpf_unwind_bpf__load(s);
	if (err) {
		ksft_print_msg("fexit on %s(): the program does not load: %s\n",
			       func, strerror(-err));
		bpf_unwind_bpf__destroy(s);
		return false;
	}
	link = bpf_program__attach(s->progs.reset_exit);
	ok = !link;
	if (ok) {
		ksft_print_msg("fexit on %s(): attach refused (%s)\n", func,
			       strerror(errno));
	} else {
		ksft_print_msg("fexit on %s() attached\n", func);
		if (!strcmp(func, reset_targets[0]))
			reset_cookies(s);
		bpf_link__destroy(link);
	}
	bpf_unwind_bpf__destroy(s);
	return ok;
}

static void test_reset_probe(void)
{
	bool ok = true;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(reset_targets); i++) {
		if (!kretprobe_refused(reset_targets[i]))
			ok = false;
		if (!fexit_refused(reset_targets[i]))
			ok = false;
	}
	ksft_test_result(ok, "no probe can request after the entry's end\n");
}

#define MAX_FRAMES	"/proc/sys/kernel/unwind_max_frames"

/* Set kernel.unwind_max_frames; 0, or -errno of the write. */
static int set_max_frames(unsigned int n)
{
	char buf[16];
	int fd, len, ret = 0;

	fd = open(MAX_FRAMES, O_WRONLY);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%u\n", n);
	if (write(fd, buf, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * One entry from deep(@levels): its delivery's cookie and first frames
 * must be right, @nr frames (any, if 0; the count is then put in @nr) and
 * @truncated as given. Prints why not. Always called from the same
 * frame (and never inlined: -fno-inline), so that the frames below
 * deep() are the same each time.
 */
static bool deep_entry(unsigned int levels, unsigned int *nr, bool truncated)
{
	struct bpf_unwind_state *b = st;
	unsigned long ips[NFRAMES];

	reset();
	deep(levels, ips);
	if (!counts(1, 1) || !delivered(0, ips))
		return false;
	if (!*nr)
		*nr = b->deliv_nr[0];
	if (b->deliv_nr[0] == *nr && b->deliv_truncated[0] == truncated)
		return true;
	ksft_print_msg("%u levels: nr %u, truncated %u; want %u and %u\n",
		       levels, b->deliv_nr[0], b->deliv_truncated[0], *nr,
		       truncated);
	return false;
}

/* deep_entry() with the count given, from the caller's own frame. */
#define deep_want(levels, nr, truncated)				\
	({								\
		unsigned int __nr = (nr);				\
									\
		deep_entry(levels, &__nr, truncated);			\
	})

/*
 * 10-12: kernel.unwind_max_frames. A stack of 3000 levels (deeper than the
 * cache page, 508 entries) comes whole at the default of 4095, with the
 * frames below the levels that deep(0) has (@base); cut at 1000, marked;
 * a stack of exactly the bound is not marked, one frame more is; the
 * bound below the page cuts there too; raised to the upper limit, the
 * buffer grows and the stack comes whole. The sysctl takes 16 to 32767.
 */
static void test_deep(void)
{
	unsigned int base;
	char old[16] = "";
	int fd, n;
	bool ok;

	fd = open(MAX_FRAMES, O_RDONLY);
	if (fd < 0) {
		ksft_test_result_fail("%s: %s\n", MAX_FRAMES, strerror(errno));
		ksft_test_result_skip("deep stacks cut at the bound\n");
		ksft_test_result_skip("kernel.unwind_max_frames limits\n");
		return;
	}
	n = read(fd, old, sizeof(old) - 1);
	close(fd);
	old[n > 0 ? n : 0] = '\0';

	base = 0;
	ok = !strcmp(old, "4095\n");
	if (!ok)
		ksft_print_msg("%s: %s, want the default 4095\n", MAX_FRAMES, old);
	ok = ok && deep_entry(0, &base, false) && base > NFRAMES && base < 16 &&
	     deep_want(3000, base + 3000, false);
	ksft_test_result(ok, "3000 levels at the default bound: %u frames, whole, not marked\n",
			 base + 3000);

	ok = base > NFRAMES && base < 16 &&
	     !set_max_frames(1000) && deep_want(3000, 1000, true);
	ok = ok && !set_max_frames(base + 3000) &&
	     deep_want(3000, base + 3000, false);
	ok = ok && !set_max_frames(base + 2999) &&
	     deep_want(3000, base + 2999, true);
	ok = ok && !set_max_frames(16) && deep_want(100, 16, true) &&
	     deep_want(16 - base, 16, false);
	ok = ok && !set_max_frames(32767) &&
	     deep_want(20000, base + 20000, false);
	ksft_test_result(ok, "cut and marked at 1000, %u and 16, not at %u; whole at 32767\n",
			 base + 2999, base + 3000);

	ok = set_max_frames(15) == -EINVAL && set_max_frames(32768) == -EINVAL &&
	     !set_max_frames(32767) && !set_max_frames(16);
	ksft_test_result(ok, "kernel.unwind_max_frames takes 16 to 32767\n");

	fd = open(MAX_FRAMES, O_WRONLY);
	if (fd < 0 || write(fd, old, strlen(old)) != (ssize_t)strlen(old))
		ksft_print_msg("restoring %s to %s failed\n", MAX_FRAMES, old);
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	int err;

	if (argc > 2 && !strcmp(argv[1], "--bench"))
		return bench_main(argc, argv);
	if (argc > 1) {
		fprintf(stderr, "usage: bpf_unwind [--bench MODE [-d DEPTH] [-n N]]\n");
		return 2;
	}

	ksft_print_header();
	ksft_set_plan(15);
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
	test_deep();

	/* Result 13 needs no program of the kfunc loaded. */
	munmap(st, sizeof(*st));
	bpf_unwind_bpf__destroy(skel);
	skel = NULL;
	test_churn();
	test_unload_pending();
	test_reset_probe();
	ksft_finished();
}
