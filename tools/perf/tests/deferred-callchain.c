// SPDX-License-Identifier: GPL-2.0
/*
 * Merging of deferred user callchains into the samples that wait for them,
 * with hand-made samples and records: no kernel needed.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/compiler.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>

#include "debug.h"
#include "event.h"
#include "tests.h"
#include "util/addr_location.h"
#include "util/deferred-callchain.h"
#include "util/dso.h"
#include "util/evlist.h"
#include "util/evsel.h"
#include "util/machine.h"
#include "util/map.h"
#include "util/ordered-events.h"
#include "util/session.h"
#include "util/thread.h"
#include "util/tool.h"

#define MAX_IPS		16
#define MAX_DELIVERED	16

/* Kernel and user addresses the test samples and records use. */
#define KADDR(t, i)	(0xffffffff81000000ULL + (t) * 0x100 + (i))
#define UADDR(c, i)	(0x0000555500000000ULL + (((c) >> 32) & 0xff) * 0x100 + (i))

/* Cookies: opaque, non-zero, large values are not context markers. */
#define COOKIE_A	0x0000000300000001ULL
#define COOKIE_B	0x0000000500000001ULL
#define COOKIE_C	0xfffffffffffffff1ULL
#define COOKIE_D	0x0000000700000001ULL

struct delivered {
	u32	tid;
	u64	time;
	u64	nr;
	u64	ips[MAX_IPS];
};

struct merge_test {
	struct deferred_callchains	dc;
	struct delivered		out[MAX_DELIVERED];
	int				nr_out;
};

static int merge_test__deliver(struct deferred_callchains *dc,
			       struct deferred_sample *ds)
{
	struct merge_test *mt = container_of(dc, struct merge_test, dc);
	struct ip_callchain *chain = ds->sample.callchain;
	struct delivered *d;

	if (mt->nr_out == MAX_DELIVERED || chain->nr > MAX_IPS)
		return -E2BIG;

	d = &mt->out[mt->nr_out++];
	d->tid = ds->sample.tid;
	d->time = ds->sample.time;
	d->nr = chain->nr;
	memcpy(d->ips, chain->ips, chain->nr * sizeof(u64));
	return 0;
}

static void merge_test__init(struct merge_test *mt)
{
	memset(mt, 0, sizeof(*mt));
	deferred_callchains__init(&mt->dc, merge_test__deliver);
}

/*
 * Hold a sample of @tid at @time with @nr_kernel kernel addresses and a
 * deferred user part with @cookie, as the kernel records it. The record is
 * overwritten afterwards: the held sample must use its own copy.
 */
static int add_sample(struct merge_test *mt, u32 tid, u64 time, u64 cookie,
		      int nr_kernel)
{
	u64 buf[2 + MAX_IPS];
	struct perf_event_header *header = (struct perf_event_header *)buf;
	struct ip_callchain *chain = (struct ip_callchain *)&buf[1];
	struct perf_sample sample;
	int i, ret;

	chain->nr = 0;
	chain->ips[chain->nr++] = PERF_CONTEXT_KERNEL;
	for (i = 0; i < nr_kernel; i++)
		chain->ips[chain->nr++] = KADDR(time, i);
	chain->ips[chain->nr++] = PERF_CONTEXT_USER_DEFERRED;
	chain->ips[chain->nr++] = cookie;

	header->type = PERF_RECORD_SAMPLE;
	header->misc = PERF_RECORD_MISC_KERNEL;
	header->size = sizeof(u64) * (2 + chain->nr);

	memset(&sample, 0, sizeof(sample));
	sample.pid = tid;
	sample.tid = tid;
	sample.time = time;
	sample.callchain = chain;

	ret = deferred_callchains__add(&mt->dc, (union perf_event *)buf, &sample,
				       NULL, NULL, NULL);
	memset(buf, 0xa5, sizeof(buf));
	return ret;
}

/*
 * The user part for @cookie: @nr addresses. They are overwritten afterwards:
 * what is kept of them must be a copy.
 */
static int add_record(struct merge_test *mt, u32 tid, u64 cookie, int nr)
{
	__u64 ips[MAX_IPS];
	int i, ret;

	for (i = 0; i < nr; i++)
		ips[i] = UADDR(cookie, i);
	ret = deferred_callchains__process(&mt->dc, tid, cookie, nr, ips);
	memset(ips, 0xa5, sizeof(ips));
	return ret;
}

/*
 * Check delivered sample @idx: @tid, @time, its kernel part, then, if
 * @merged, PERF_CONTEXT_USER and the @nr_user addresses of @cookie, else
 * the deferred marker and @cookie as recorded.
 */
static int check_delivered(struct merge_test *mt, int idx, u32 tid, u64 time,
			   int nr_kernel, bool merged, u64 cookie, int nr_user)
{
	struct delivered *d = &mt->out[idx];
	u64 expected[MAX_IPS];
	u64 nr = 0;
	int i;

	if (idx >= mt->nr_out) {
		pr_debug("sample %d was not delivered\n", idx);
		return TEST_FAIL;
	}

	expected[nr++] = PERF_CONTEXT_KERNEL;
	for (i = 0; i < nr_kernel; i++)
		expected[nr++] = KADDR(time, i);
	if (!merged) {
		expected[nr++] = PERF_CONTEXT_USER_DEFERRED;
		expected[nr++] = cookie;
	} else if (nr_user) {
		expected[nr++] = PERF_CONTEXT_USER;
		for (i = 0; i < nr_user; i++)
			expected[nr++] = UADDR(cookie, i);
	}

	if (d->tid != tid || d->time != time) {
		pr_debug("sample %d: tid %u time %llu, expected tid %u time %llu\n",
			 idx, d->tid, (unsigned long long)d->time, tid,
			 (unsigned long long)time);
		return TEST_FAIL;
	}
	if (d->nr != nr || memcmp(d->ips, expected, nr * sizeof(u64))) {
		pr_debug("sample %d (tid %u time %llu): unexpected callchain:\n",
			 idx, tid, (unsigned long long)time);
		for (i = 0; i < (int)max(d->nr, nr); i++) {
			pr_debug("  %2d: %016llx expected %016llx\n", i,
				 i < (int)d->nr ? (unsigned long long)d->ips[i] : 0,
				 i < (int)nr ? (unsigned long long)expected[i] : 0);
		}
		return TEST_FAIL;
	}
	return TEST_OK;
}

/* check_delivered() tells what differs */
#define CHECK_DELIVERED(...)						\
	TEST_ASSERT_VAL("delivered sample",				\
			check_delivered(mt, __VA_ARGS__) == TEST_OK)

#define CHECK_COUNTS(out, held)						\
	TEST_ASSERT_VAL("delivered and held samples",			\
			mt->nr_out == (out) && mt->dc.nr_samples == (held))

#define CHECK_STATS(merged, unmerged)					\
	TEST_ASSERT_VAL("merged and unmerged samples",			\
			mt->dc.nr_merged == (merged) &&			\
			mt->dc.nr_unmerged == (unmerged))

static int match(struct merge_test *mt)
{
	/* Two samples of one kernel entry get the same user part. */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 1, COOKIE_A, 3) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 2, COOKIE_A, 2) == 0);
	CHECK_COUNTS(0, 2);
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_A, 5) == 0);
	CHECK_COUNTS(2, 0);
	CHECK_DELIVERED(0, 100, 1, 3, true, COOKIE_A, 5);
	CHECK_DELIVERED(1, 100, 2, 2, true, COOKIE_A, 5);

	/* A cookie that looks like a context marker is still a cookie. */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 3, COOKIE_C, 1) == 0);
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_C, 7) == 0);
	CHECK_DELIVERED(2, 100, 3, 1, true, COOKIE_C, 7);

	/* An empty user stack leaves just the kernel part. */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 4, COOKIE_B, 2) == 0);
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_B, 0) == 0);
	CHECK_DELIVERED(3, 100, 4, 2, true, COOKIE_B, 0);

	/* A record whose samples were lost delivers nothing. */
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_A, 4) == 0);
	CHECK_COUNTS(4, 0);
	CHECK_STATS(4, 0);
	return TEST_OK;
}

static int mismatch(struct merge_test *mt)
{
	/* The same cookie for another thread is not ours. */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 1, COOKIE_A, 2) == 0);
	TEST_ASSERT_VAL("record", add_record(mt, 200, COOKIE_A, 3) == 0);
	CHECK_COUNTS(0, 1);

	/*
	 * Another cookie for this thread: the record of the held sample was
	 * lost, deliver it as recorded, never with the wrong user part.
	 */
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_B, 3) == 0);
	CHECK_COUNTS(1, 0);
	CHECK_DELIVERED(0, 100, 1, 2, false, COOKIE_A, 0);

	/*
	 * Lost record of an older entry, then a matching one: time order.
	 * Each entry has a cookie of its own.
	 */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 2, COOKIE_A, 1) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 3, COOKIE_D, 2) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 4, COOKIE_D, 3) == 0);
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_D, 4) == 0);
	CHECK_COUNTS(4, 0);
	CHECK_DELIVERED(1, 100, 2, 1, false, COOKIE_A, 0);
	CHECK_DELIVERED(2, 100, 3, 2, true, COOKIE_D, 4);
	CHECK_DELIVERED(3, 100, 4, 3, true, COOKIE_D, 4);
	CHECK_STATS(2, 2);
	return TEST_OK;
}

static int lost(struct merge_test *mt)
{
	union perf_event event = {
		.header = {
			.type = PERF_RECORD_SAMPLE,
			.size = sizeof(struct perf_event_header),
		},
	};
	struct perf_sample sample;

	/* A sample without a deferred user part is not held. */
	memset(&sample, 0, sizeof(sample));
	TEST_ASSERT_VAL("add without callchain",
			deferred_callchains__add(&mt->dc, &event, &sample,
						 NULL, NULL, NULL) == -EINVAL);
	CHECK_COUNTS(0, 0);

	/* Records that never arrive: flushing delivers what was recorded. */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 1, COOKIE_A, 2) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 101, 2, COOKIE_B, 1) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 3, COOKIE_A, 3) == 0);
	TEST_ASSERT_VAL("flush tid", deferred_callchains__flush_tid(&mt->dc, 100) == 0);
	CHECK_COUNTS(2, 1);
	CHECK_DELIVERED(0, 100, 1, 2, false, COOKIE_A, 0);
	CHECK_DELIVERED(1, 100, 3, 3, false, COOKIE_A, 0);

	/* Held since before a time (perf top): those, the others stay. */
	TEST_ASSERT_VAL("add", add_sample(mt, 102, 4, COOKIE_C, 0) == 0);
	TEST_ASSERT_VAL("flush before",
			deferred_callchains__flush_before(&mt->dc, 4) == 0);
	CHECK_COUNTS(3, 1);
	CHECK_DELIVERED(2, 101, 2, 1, false, COOKIE_B, 0);

	TEST_ASSERT_VAL("flush", deferred_callchains__flush(&mt->dc) == 0);
	CHECK_COUNTS(4, 0);
	CHECK_DELIVERED(3, 102, 4, 0, false, COOKIE_C, 0);

	/* Nothing left: a late record delivers nothing. */
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_A, 2) == 0);
	CHECK_COUNTS(4, 0);
	CHECK_STATS(0, 4);

	/* Held samples are freed without delivery on exit. */
	TEST_ASSERT_VAL("add", add_sample(mt, 103, 5, COOKIE_A, 1) == 0);
	deferred_callchains__exit(&mt->dc);
	CHECK_COUNTS(4, 0);
	return TEST_OK;
}

static int interleaved(struct merge_test *mt)
{
	/* Two threads in the kernel at once, records in reverse order. */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 1, COOKIE_A, 2) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 200, 2, COOKIE_B, 3) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 3, COOKIE_A, 1) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 200, 4, COOKIE_B, 2) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 300, 5, COOKIE_C, 2) == 0);

	TEST_ASSERT_VAL("record", add_record(mt, 200, COOKIE_B, 6) == 0);
	CHECK_COUNTS(2, 3);
	CHECK_DELIVERED(0, 200, 2, 3, true, COOKIE_B, 6);
	CHECK_DELIVERED(1, 200, 4, 2, true, COOKIE_B, 6);

	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_A, 2) == 0);
	CHECK_COUNTS(4, 1);
	CHECK_DELIVERED(2, 100, 1, 2, true, COOKIE_A, 2);
	CHECK_DELIVERED(3, 100, 3, 1, true, COOKIE_A, 2);

	/* The third thread's record never comes. */
	TEST_ASSERT_VAL("flush", deferred_callchains__flush(&mt->dc) == 0);
	CHECK_COUNTS(5, 0);
	CHECK_DELIVERED(4, 300, 5, 2, false, COOKIE_C, 0);
	CHECK_STATS(4, 1);
	return TEST_OK;
}

static int late(struct merge_test *mt)
{
	/*
	 * A sample taken after its record, in the same kernel entry: while
	 * the thread ran the deferred callbacks, say. Its record went out
	 * already, and only once per entry: the user part comes from it.
	 */
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 1, COOKIE_A, 2) == 0);
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_A, 5) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 2, COOKIE_A, 3) == 0);
	CHECK_COUNTS(2, 0);
	CHECK_DELIVERED(0, 100, 1, 2, true, COOKIE_A, 5);
	CHECK_DELIVERED(1, 100, 2, 3, true, COOKIE_A, 5);

	/* A second record of the entry (another event's) changes nothing. */
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_A, 5) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 3, COOKIE_A, 1) == 0);
	CHECK_COUNTS(3, 0);
	CHECK_DELIVERED(2, 100, 3, 1, true, COOKIE_A, 5);

	/* Another thread's sample with that cookie waits for its own. */
	TEST_ASSERT_VAL("add", add_sample(mt, 200, 4, COOKIE_A, 1) == 0);
	CHECK_COUNTS(3, 1);

	/*
	 * The thread's next entry: a sample of the last one, if one came
	 * now, must never get the new entry's user part, nor the old one's.
	 */
	TEST_ASSERT_VAL("record", add_record(mt, 100, COOKIE_B, 4) == 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 5, COOKIE_A, 1) == 0);
	CHECK_COUNTS(3, 2);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 6, COOKIE_B, 2) == 0);
	CHECK_COUNTS(4, 2);
	CHECK_DELIVERED(3, 100, 6, 2, true, COOKIE_B, 4);

	/* The thread exited: what its last record brought is forgotten. */
	TEST_ASSERT_VAL("flush tid", deferred_callchains__flush_tid(&mt->dc, 100) == 0);
	CHECK_COUNTS(5, 1);
	CHECK_DELIVERED(4, 100, 5, 1, false, COOKIE_A, 0);
	TEST_ASSERT_VAL("add", add_sample(mt, 100, 7, COOKIE_B, 1) == 0);
	CHECK_COUNTS(5, 2);

	TEST_ASSERT_VAL("flush", deferred_callchains__flush(&mt->dc) == 0);
	CHECK_COUNTS(7, 0);
	CHECK_DELIVERED(5, 200, 4, 1, false, COOKIE_A, 0);
	CHECK_DELIVERED(6, 100, 7, 1, false, COOKIE_B, 0);
	CHECK_STATS(4, 3);
	return TEST_OK;
}

/*
 * A shell forks and its child execs a program, read through a session and
 * its ordered events as perf report reads a file, in flush rounds. With a
 * coarse perf clock (jiffies, when the TSC is unusable) the FORK, the
 * child's exec and its first samples can all have one timestamp, and
 * ordered events keep events of equal timestamps in the order of the file:
 * the order in which perf record read the CPU buffers. Here it read the
 * child's first, so its COMM and MMAP come before its FORK. The shell and
 * the program are static programs, linked at the same address. Every
 * sample must show the comm and the binary of the program its thread ran,
 * at its address and at every address of its user callchain, merged or not.
 */
#define FE_SHELL_PID	1000
#define FE_PROG_PID	1001
#define FE_SHELL	"/perf-test/deferred-callchain/sh"
#define FE_PROG		"/perf-test/deferred-callchain/prog"
#define FE_TEXT		0x400000ULL
#define FE_TEXT_SIZE	0x100000ULL
#define FE_MAX_WORDS	512
/* One tick of the clock */
#define FE_TICK		4000000ULL

struct fork_exec {
	struct perf_tool	tool;
	struct perf_session	*session;
	/* The events, in file order; queued events point into it. */
	u64			words[FE_MAX_WORDS];
	unsigned int		nr_words;
	unsigned int		start;
	bool			overflow;
	int			nr_samples;
	int			nr_wrong;
};

static void fe__u64(struct fork_exec *fe, u64 val)
{
	if (fe->nr_words == FE_MAX_WORDS) {
		fe->overflow = true;
		return;
	}
	fe->words[fe->nr_words++] = val;
}

static void fe__u32s(struct fork_exec *fe, u32 lo, u32 hi)
{
	union {
		u64	val;
		u32	val32[2];
	} u = { .val32 = { lo, hi } };

	fe__u64(fe, u.val);
}

/* A string with its NUL, in whole u64 words. */
static void fe__str(struct fork_exec *fe, const char *str)
{
	size_t len = strlen(str) + 1;
	size_t i;

	for (i = 0; i < len; i += sizeof(u64)) {
		u64 word = 0;

		memcpy(&word, str + i, min(len - i, sizeof(u64)));
		fe__u64(fe, word);
	}
}

static void fe__begin(struct fork_exec *fe, u32 type, u16 misc)
{
	struct perf_event_header header = {
		.type = type,
		.misc = misc,
	};
	u64 word = 0;

	memcpy(&word, &header, sizeof(header));
	fe->start = fe->nr_words;
	fe__u64(fe, word);
}

/*
 * End the event: a side-band record gets its sample_id (@pid, @tid and
 * @time), then queue it as the session queues what it reads.
 */
static int fe__queue(struct fork_exec *fe, u32 pid, u32 tid, u64 time)
{
	union perf_event *event;

	if (fe->overflow)
		return -E2BIG;
	event = (union perf_event *)&fe->words[fe->start];
	if (event->header.type != PERF_RECORD_SAMPLE) {
		fe__u32s(fe, pid, tid);
		fe__u64(fe, time);
		if (fe->overflow)
			return -E2BIG;
	}
	event->header.size = (fe->nr_words - fe->start) * sizeof(u64);
	return perf_session__queue_event(fe->session, event, time,
					 fe->start * sizeof(u64), NULL);
}

/* @pid execs @comm, whose text @file is mapped at FE_TEXT. */
static int fe__exec(struct fork_exec *fe, u32 pid, const char *comm,
		    const char *file, u64 time)
{
	int ret;

	fe__begin(fe, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	fe__u32s(fe, pid, pid);
	fe__str(fe, comm);
	ret = fe__queue(fe, pid, pid, time);
	if (ret)
		return ret;

	fe__begin(fe, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	fe__u32s(fe, pid, pid);
	fe__u64(fe, FE_TEXT);
	fe__u64(fe, FE_TEXT_SIZE);
	fe__u64(fe, 0);				/* pgoff */
	fe__u32s(fe, 0, 0);			/* maj, min */
	fe__u64(fe, pid);			/* ino */
	fe__u64(fe, 0);				/* ino_generation */
	fe__u32s(fe, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	fe__str(fe, file);
	return fe__queue(fe, pid, pid, time);
}

/* PERF_RECORD_FORK or PERF_RECORD_EXIT, written by @sid_pid. */
static int fe__task(struct fork_exec *fe, u32 type, u32 pid, u32 ppid,
		    u32 sid_pid, u64 time)
{
	fe__begin(fe, type, 0);
	fe__u32s(fe, pid, ppid);
	fe__u32s(fe, pid, ppid);		/* tid, ptid */
	fe__u64(fe, time);
	return fe__queue(fe, sid_pid, sid_pid, time);
}

/*
 * A sample of @pid in user mode at @ip: with a deferred user part if
 * @cookie, else with the user frames @ip and @ip + 0x10.
 */
static int fe__sample(struct fork_exec *fe, u32 pid, u64 ip, u64 cookie,
		      u64 time)
{
	fe__begin(fe, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	fe__u64(fe, ip);
	fe__u32s(fe, pid, pid);
	fe__u64(fe, time);
	if (cookie) {
		fe__u64(fe, 2);
		fe__u64(fe, PERF_CONTEXT_USER_DEFERRED);
		fe__u64(fe, cookie);
	} else {
		fe__u64(fe, 3);
		fe__u64(fe, PERF_CONTEXT_USER);
		fe__u64(fe, ip);
		fe__u64(fe, ip + 0x10);
	}
	return fe__queue(fe, pid, pid, time);
}

/* The user part of the samples of @pid with @cookie: @ip, @ip + 0x10. */
static int fe__deferred(struct fork_exec *fe, u32 pid, u64 cookie, u64 ip,
			u64 time)
{
	fe__begin(fe, PERF_RECORD_CALLCHAIN_DEFERRED, PERF_RECORD_MISC_USER);
	fe__u64(fe, cookie);
	fe__u64(fe, 2);
	fe__u64(fe, ip);
	fe__u64(fe, ip + 0x10);
	return fe__queue(fe, pid, pid, time);
}

/* A PERF_RECORD_FINISHED_ROUND: deliver what the previous rounds queued. */
static int fe__round(struct fork_exec *fe)
{
	return ordered_events__flush(&fe->session->ordered_events,
				     OE_FLUSH__ROUND);
}

/* Is @ip in @file's map of @thread? Say what it is in if not. */
static bool fe__in_file(struct thread *thread, u64 ip, const char *file)
{
	struct addr_location al;
	const char *found = "no map";
	bool ret;

	addr_location__init(&al);
	if (thread__find_map(thread, PERF_RECORD_MISC_USER, ip, &al))
		found = dso__long_name(map__dso(al.map));
	ret = !strcmp(found, file);
	if (!ret)
		pr_debug("  %#llx: in %s, expected %s\n",
			 (unsigned long long)ip, found, file);
	addr_location__exit(&al);
	return ret;
}

static int fork_exec__sample(const struct perf_tool *tool,
			     union perf_event *event __maybe_unused,
			     struct perf_sample *sample,
			     struct evsel *evsel __maybe_unused,
			     struct machine *machine)
{
	struct fork_exec *fe = container_of(tool, struct fork_exec, tool);
	bool prog = sample->tid == FE_PROG_PID;
	const char *comm = prog ? "prog" : "sh";
	const char *file = prog ? FE_PROG : FE_SHELL;
	struct ip_callchain *chain = sample->callchain;
	struct thread *thread;
	bool user = false;
	bool ok;
	u64 i;

	thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	if (!thread)
		return -ENOMEM;

	pr_debug("sample of %u at %llu: %s\n", sample->tid,
		 (unsigned long long)sample->time, thread__comm_str(thread));
	ok = !strcmp(thread__comm_str(thread), comm);
	if (!ok)
		pr_debug("  comm %s, expected %s\n", thread__comm_str(thread), comm);
	ok &= fe__in_file(thread, sample->ip, file);
	for (i = 0; i < chain->nr; i++) {
		u64 ip = chain->ips[i];

		if (ip == PERF_CONTEXT_USER_DEFERRED) {
			pr_debug("  user part not merged\n");
			ok = false;
			break;
		}
		if (ip >= PERF_CONTEXT_MAX)
			user = ip == PERF_CONTEXT_USER;
		else if (user)
			ok &= fe__in_file(thread, ip, file);
	}
	thread__put(thread);

	fe->nr_samples++;
	if (!ok)
		fe->nr_wrong++;
	return 0;
}

#define FE_IP(i)	(FE_TEXT + 0x1000 * (i))

static int fork_exec__events(struct fork_exec *fe)
{
	struct deferred_callchains *dc = &fe->session->deferred_callchains;
	u64 t = FE_TICK;

	/* The shell runs: a sample, a kernel entry with its user part. */
	TEST_ASSERT_VAL("exec", fe__exec(fe, FE_SHELL_PID, "sh", FE_SHELL, t) == 0);
	TEST_ASSERT_VAL("sample", fe__sample(fe, FE_SHELL_PID, FE_IP(1), 0, t) == 0);
	TEST_ASSERT_VAL("sample", fe__sample(fe, FE_SHELL_PID, FE_IP(2), COOKIE_A, t + 1) == 0);
	TEST_ASSERT_VAL("record", fe__deferred(fe, FE_SHELL_PID, COOKIE_A, FE_IP(2), t + 2) == 0);
	TEST_ASSERT_VAL("round", fe__round(fe) == 0);

	/*
	 * One tick: the child, on another CPU, execs and takes a sample; its
	 * buffer is read first. Then the shell's: a sample and the FORK.
	 */
	t += FE_TICK;
	TEST_ASSERT_VAL("exec", fe__exec(fe, FE_PROG_PID, "prog", FE_PROG, t) == 0);
	TEST_ASSERT_VAL("sample", fe__sample(fe, FE_PROG_PID, FE_IP(3), COOKIE_B, t) == 0);
	TEST_ASSERT_VAL("record", fe__deferred(fe, FE_PROG_PID, COOKIE_B, FE_IP(3), t) == 0);
	TEST_ASSERT_VAL("sample", fe__sample(fe, FE_SHELL_PID, FE_IP(4), 0, t) == 0);
	TEST_ASSERT_VAL("fork", fe__task(fe, PERF_RECORD_FORK, FE_PROG_PID, FE_SHELL_PID,
					 FE_SHELL_PID, t) == 0);
	TEST_ASSERT_VAL("round", fe__round(fe) == 0);

	/* The program runs and exits, the shell's wait returns. */
	t += FE_TICK;
	TEST_ASSERT_VAL("sample", fe__sample(fe, FE_PROG_PID, FE_IP(5), 0, t) == 0);
	TEST_ASSERT_VAL("sample", fe__sample(fe, FE_PROG_PID, FE_IP(6), COOKIE_C, t) == 0);
	TEST_ASSERT_VAL("record", fe__deferred(fe, FE_PROG_PID, COOKIE_C, FE_IP(6), t) == 0);
	TEST_ASSERT_VAL("round", fe__round(fe) == 0);
	t += FE_TICK;
	TEST_ASSERT_VAL("sample", fe__sample(fe, FE_PROG_PID, FE_IP(7), COOKIE_D, t) == 0);
	TEST_ASSERT_VAL("record", fe__deferred(fe, FE_PROG_PID, COOKIE_D, FE_IP(7), t) == 0);
	TEST_ASSERT_VAL("exit", fe__task(fe, PERF_RECORD_EXIT, FE_PROG_PID, FE_SHELL_PID,
					 FE_PROG_PID, t) == 0);
	TEST_ASSERT_VAL("sample", fe__sample(fe, FE_SHELL_PID, FE_IP(8), 0, t) == 0);
	TEST_ASSERT_VAL("round", fe__round(fe) == 0);

	/* The end of the file. */
	TEST_ASSERT_VAL("flush", ordered_events__flush(&fe->session->ordered_events,
						       OE_FLUSH__FINAL) == 0);
	TEST_ASSERT_VAL("flush", deferred_callchains__flush(dc) == 0);

	pr_debug("%d samples, %d with a wrong comm or binary, %llu merged\n",
		 fe->nr_samples, fe->nr_wrong, (unsigned long long)dc->nr_merged);
	TEST_ASSERT_VAL("every sample delivered", fe->nr_samples == 8);
	TEST_ASSERT_VAL("every sample merged", dc->nr_merged == 4 && dc->nr_unmerged == 0);
	TEST_ASSERT_VAL("comm and binary of every sample", fe->nr_wrong == 0);
	return TEST_OK;
}

static int test__deferred_callchain_fork_exec(struct test_suite *test __maybe_unused,
					      int subtest __maybe_unused)
{
	struct perf_event_attr attr = {
		.type		= PERF_TYPE_SOFTWARE,
		.config		= PERF_COUNT_SW_CPU_CLOCK,
		.sample_type	= PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				  PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN,
		.sample_id_all	= 1,
		.defer_callchain = 1,
		.defer_output	= 1,
	};
	struct evlist *evlist;
	struct evsel *evsel;
	struct fork_exec *fe;
	int ret = TEST_FAIL;

	fe = zalloc(sizeof(*fe));
	evlist = evlist__new();
	evsel = evsel__new(&attr);
	if (!fe || !evlist || !evsel) {
		evsel__delete(evsel);
		goto out;
	}
	evlist__add(evlist, evsel);

	perf_tool__init(&fe->tool, /*ordered_events=*/true);
	fe->tool.sample = fork_exec__sample;
	fe->tool.comm = perf_event__process_comm;
	fe->tool.mmap2 = perf_event__process_mmap2;
	fe->tool.fork = perf_event__process_fork;
	fe->tool.exit = perf_event__process_exit;

	fe->session = perf_session__new(NULL, &fe->tool);
	if (IS_ERR(fe->session)) {
		fe->session = NULL;
		goto out;
	}
	fe->session->evlist = evlist;

	ret = fork_exec__events(fe);
out:
	perf_session__delete(fe ? fe->session : NULL);
	evlist__delete(evlist);
	free(fe);
	return ret;
}

static int run_merge_test(int (*fn)(struct merge_test *mt))
{
	struct merge_test mt;
	int ret;

	merge_test__init(&mt);
	ret = fn(&mt);
	deferred_callchains__exit(&mt.dc);
	return ret;
}

#define DEFINE_MERGE_TEST(name)						\
static int test__deferred_callchain_##name(struct test_suite *test __maybe_unused, \
					   int subtest __maybe_unused)	\
{									\
	return run_merge_test(name);					\
}

DEFINE_MERGE_TEST(match)
DEFINE_MERGE_TEST(mismatch)
DEFINE_MERGE_TEST(lost)
DEFINE_MERGE_TEST(interleaved)
DEFINE_MERGE_TEST(late)

static struct test_case tests__deferred_callchain[] = {
	TEST_CASE("Deferred callchain: matching cookie", deferred_callchain_match),
	TEST_CASE("Deferred callchain: mismatched cookie", deferred_callchain_mismatch),
	TEST_CASE("Deferred callchain: record never arrives", deferred_callchain_lost),
	TEST_CASE("Deferred callchain: interleaved threads", deferred_callchain_interleaved),
	TEST_CASE("Deferred callchain: sample after its record", deferred_callchain_late),
	TEST_CASE("Deferred callchain: fork and exec in one clock tick",
		  deferred_callchain_fork_exec),
	{	.name = NULL, }
};

struct test_suite suite__deferred_callchain = {
	.desc = "Deferred callchain merging",
	.test_cases = tests__deferred_callchain,
};
