/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Records unwindprof's BPF programs put in the ring buffer, shared with
 * user space. Every record starts with struct up_hdr; @kind says what
 * follows.
 */
#ifndef UNWINDPROF_H
#define UNWINDPROF_H

/*
 * User frames kept of a deferred stack: as many as a per-CPU map's value
 * (the record is built in one, at most 32 KiB) has room for beside the
 * header. A deeper stack is shown cut, with a [truncated] frame.
 */
#define UP_MAX_FRAMES	4000
/*
 * In a UP_STACK's weight, above the walk's count of frames: the walk was
 * cut at kernel.unwind_max_frames with frames left.
 */
#define UP_STACK_TRUNCATED	0x100000000ULL
#define UP_MAX_KFRAMES	64	/* kernel frames kept of a sample */
#define UP_COMM_LEN	16

enum up_kind {
	UP_SAMPLE = 1,	/* an on-CPU sample: weight 1, kernel frames in nr */
	UP_OFFCPU,	/* a blocked interval: weight in ns */
	UP_STACK,	/* the deferred user stack of (tid, cookie) */
	UP_CTX,		/* the OpenTelemetry context of (tid, cookie) */
	UP_EXEC,	/* pid replaced its image: its mappings are new */
};

/* Slots of the "counters" array map. */
enum up_counter {
	UP_CNT_LOST,		/* records the ring buffer had no room for */
	UP_CNT_REQ_FAIL,	/* bpf_unwind_user_request() errors */
	UP_CNT_NR,
};

/* The "config" map's one value, set by user space before attaching. */
struct up_config {
	unsigned int filter_all;	/* every user task, not "targets" */
	unsigned int want_kernel;	/* kernel stacks of on-CPU samples */
	unsigned int self_tgid;		/* never selected: unwindprof itself */
};

struct up_hdr {
	unsigned int kind;
	unsigned int tid;
	unsigned int pid;
	unsigned int nr;		/* frames that follow the header */
	unsigned long long cookie;
	unsigned long long weight;	/* UP_CTX: the context's status */
	char comm[UP_COMM_LEN];
};

struct up_sample {
	struct up_hdr h;
	unsigned long long kframes[UP_MAX_KFRAMES];
};

struct up_stack {
	struct up_hdr h;
	unsigned long long frames[UP_MAX_FRAMES];
};

struct up_ctx {
	struct up_hdr h;
	unsigned char trace_id[16];
	unsigned char span_id[8];
};

#endif /* UNWINDPROF_H */
