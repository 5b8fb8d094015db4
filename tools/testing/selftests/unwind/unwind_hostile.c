// SPDX-License-Identifier: GPL-2.0
/*
 * unwind_hostile: a hostile user against every client of the deferred
 * unwinder (contracts 7, 20 and 25).
 *
 *   unwind_hostile [--seed N] [--no-bpf] [SECONDS]
 *
 * SECONDS (default 20) bounds the run; --no-bpf leaves BPF out, for a
 * kernel built without it (the KCSAN kernel).
 *
 * Worker threads enter the kernel with registers and stacks drawn from a
 * seeded generator, while other threads of the same process change its
 * mappings and fork, so that the mm's mmap_lock is often held for writing
 * when a delivery tries to take it:
 *
 *  - entries: getppid() and sched_yield() (which may switch to another
 *    thread with the entry's request pending) made from a trampoline
 *    whose frame and stack pointers are the generator's (the entry's IP
 *    is the instruction after the syscall), and jumps to a bad IP (-1, 0,
 *    a kernel address, a non-canonical one, an unmapped user page, a
 *    PROT_NONE page) whose SIGSEGV is caught on a sigaltstack and left
 *    with siglongjmp();
 *  - frame pointers: 0, at themselves, into the kernel, non-canonical,
 *    wrapping, below the stack pointer, misaligned, at a guard page or just
 *    before it, at an unmapped page, below a MAP_GROWSDOWN edge, and valid
 *    chains of 1 to 16 frames whose return addresses are unique to the
 *    case, ended in each of the ways the walker ends a chain; some chains
 *    lie in a region that another thread keeps replacing and zeroing;
 *  - the clients: an ftrace instance with userstacktrace_delay recording
 *    sys_enter_getppid, sys_enter_sched_yield and signal_generate
 *    (SIGSEGV), a per-thread perf event on each of the three tracepoints
 *    with defer_callchain (and defer_output on one), and BPF programs on
 *    them that call bpf_unwind_user_request(), with one on
 *    unwind:unwind_user_stack that copies each delivery.
 *
 * The oracle is exact. The stack of an entry is the entry's IP, then the
 * return addresses of the generated chain for as long as the walker's rules
 * go on (unwind_user_step() and unwind_user_fp_run() in
 * kernel/unwind/user.c): a frame pointer of 0, a frame whose CFA (fp + 16)
 * is not above the stack pointer or is misaligned, a frame that cannot be
 * read, or a return address of 0 or outside user space ends it. A chain in
 * the region that another thread zeroes may end at any of its frames in
 * that region: a prefix is accepted there, and nothing else. BPF's and
 * perf's copies are checked right after each entry (the delivery happens
 * before the entry returns to user space); ftrace's stacks at the end of
 * each round of entries, in each worker's order, with the same cookie and
 * frames as BPF's and perf's copies of the same entry.
 *
 * The generator is seeded with --seed N or from the clock; the seed comes
 * first in the output, and a failure names the seed, the worker and the
 * case number, which with the seed give the case again (each worker's
 * sequence depends only on the seed). The threads' interleaving does not
 * replay, and the consequence of a lost race is a crash of the kernel, which
 * the harness sees on the console.
 *
 * Run as root (ftrace, perf's tracepoints, BPF). x86-64 only; build with
 * frame pointers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>

#include "../kselftest.h"
#include "unwind_hostile.h"
#include "unwind_hostile.skel.h"

#define TRACEFS		"/sys/kernel/tracing"
#define INST		TRACEFS "/instances/unwind_hostile"

#define PAGE		4096UL
#define NWORKERS	3
#define REGION_PAGES	16		/* a worker's own chain region */
#define HSLOT		(2 * PAGE)	/* a worker's part of the shared region */
#define ROUND_CASES	64		/* entries per worker between checks */
#define MAXE		64		/* frames the oracle follows */
#define MAX_CHAIN	16
#define PERF_PAGES	16

#define STR_(x)		#x
#define STR(x)		STR_(x)

/* The walker's bound for a return address: TASK_SIZE_MAX, 4-level paging. */
#define USER_END	0x7ffffffff000UL
#define KERNEL_ADDR	0xffffffff81000000UL
#define NONCANON	0x8000000000000000UL
/* Return addresses: unique to a worker's case, never mapped, below USER_END. */
#define RA_BASE		0x100000000000UL
#define RA_KERNEL	0xffff888000001000UL

enum entry_kind { E_SYSCALL, E_YIELD, E_FAULT };

enum ip_kind { IP_M1, IP_ZERO, IP_KERNEL, IP_NONCANON, IP_HOLE, IP_NONE, IP_KINDS };

static const char * const ip_names[IP_KINDS] = {
	"-1", "0", "kernel", "non-canonical", "unmapped", "PROT_NONE",
};

enum fp_kind {
	FP_ZERO, FP_SELF, FP_KERNEL, FP_NONCANON, FP_WRAP, FP_BELOW_SP,
	FP_MISALIGNED, FP_GUARD, FP_GUARD_EDGE, FP_HOLE, FP_GD_BELOW,
	FP_GD_CHAIN, FP_CHAIN, FP_CHAIN_SHARED, FP_KINDS
};

static const char * const fp_names[FP_KINDS] = {
	"0", "itself", "kernel", "non-canonical", "wrapping", "below sp",
	"misaligned", "guard page", "guard edge", "unmapped", "below growsdown",
	"growsdown chain", "chain", "chain in changing region",
};

/* How the last frame of a generated chain ends the walk. */
enum chain_end {
	END_ZERO, END_SELF, END_DOWN, END_MISALIGNED, END_GUARD, END_KERNEL,
	END_RA_ZERO, END_RA_KERNEL, END_HOLE, END_TRAIL, END_GD, END_KINDS
};

struct hcase {
	unsigned long	seq;
	int		entry, ipk, fpk, end, frames, text_ras;
	unsigned long	ip, fp, sp;
	unsigned long	exp[MAXE];
	int		nexp;		/* the whole chain's entries */
	int		nmin;		/* fewer only where the region changes */
};

/* One client's copy of an entry's stack. */
struct copy {
	bool		have;
	unsigned long	cookie;
	int		nr;
	unsigned long	ips[MAXE];
};

struct logent {
	struct hcase	c;
	struct copy	bpf, perf;
};

struct worker {
	int		idx;
	pid_t		tid;
	uint64_t	rng;
	unsigned long	seq;
	char		*region;	/* REGION_PAGES, then a PROT_NONE page */
	char		*gd;		/* MAP_GROWSDOWN, 2 pages */
	char		*hslot;		/* in the shared, changing region */
	unsigned long	*hshadow;	/* what the worker wrote there */
	char		*altstack;
	sigjmp_buf	env;
	int		expect_fault;	/* __atomic: read by the handler */
	unsigned long	f_ip, f_sp, f_bp;
	int		pfd[3];
	struct perf_event_mmap_page *pp;
	char		*pbuf;
	struct logent	log[ROUND_CASES];
	int		nlog;
	/* Results. */
	unsigned long	entries, bpf_bad, perf_bad, setup_bad;
	unsigned long	by_entry[3], by_ip[IP_KINDS], by_fp[FP_KINDS], prefixes;
	pthread_t	th;
};

static unsigned long long seed;
static int secs = 20;
static struct worker workers[NWORKERS];
static int stop;			/* __atomic: the mutators end */
static int done;			/* read after round_start */
static pthread_barrier_t round_start, round_end;
static char *shared_region, *trail, *none_page, *hole;
static struct hostile_bpf *bpf_map;
static int perf_on, ftrace_on, bpf_on, bpf_wanted = 1;
static int tp_getppid, tp_yield, tp_signal;
static unsigned long mutations, forks;	/* __atomic */

/* Failures print their case; the first few in full. */
static int printed;			/* __atomic */

/* The entry trampolines (see below), and where each leaves user space. */
void hostile_syscall(unsigned long fp, unsigned long sp, unsigned long *sp_used,
		     long nr);
extern const char hostile_syscall_ret[];
void hostile_jump(unsigned long ip, unsigned long fp, unsigned long sp);
extern const char hostile_jump_insn[];
extern const char hostile_pad[];

/*
 * System call @nr (no arguments) with %rbp = @fp and %rsp = @sp (0: the
 * caller's), restored
 * after the call. Nothing touches the stack between the switch and the
 * system call, so the entry's user state is exactly what was asked. The
 * stack pointer used goes to *@sp_used first, while the stack is real.
 */
asm(".text\n"
	".globl hostile_syscall\n"
	".type hostile_syscall, @function\n"
	"hostile_syscall:\n"
	"\tmov %rbp, %r8\n"
	"\tmov %rsp, %r9\n"
	"\ttest %rsi, %rsi\n"
	"\tcmovz %rsp, %rsi\n"
	"\tmov %rsi, (%rdx)\n"
	"\tmov %rdi, %rbp\n"
	"\tmov %rsi, %rsp\n"
	"\tmov %ecx, %eax\n"
	"\tsyscall\n"
	".globl hostile_syscall_ret\n"
	"hostile_syscall_ret:\n"
	"\tmov %r9, %rsp\n"
	"\tmov %r8, %rbp\n"
	"\tret\n"
	".size hostile_syscall, .-hostile_syscall\n"
	/*
	 * Jump to @ip with %rbp = @fp and %rsp = @sp: never returns, the
	 * SIGSEGV handler leaves with siglongjmp().
	 */
	".globl hostile_jump\n"
	".type hostile_jump, @function\n"
	"hostile_jump:\n"
	"\tmov %rsi, %rbp\n"
	"\tmov %rdx, %rsp\n"
	".globl hostile_jump_insn\n"
	"hostile_jump_insn:\n"
	"\tjmp *%rdi\n"
	".size hostile_jump, .-hostile_jump\n"
	/* Return addresses in text: 64 KiB of int3, never run. */
	".balign 4096\n"
	".globl hostile_pad\n"
	"hostile_pad:\n"
	"\t.fill 65536, 1, 0xcc\n");

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int rnd(struct worker *w, unsigned int n)
{
	return splitmix(&w->rng) % n;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

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

static int read_int(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) <= 0)
		buf[0] = '\0';
	close(fd);
	return buf[0] ? atoi(buf) : -1;
}

/*
 * A return address unique to the worker's case and frame @i: unmapped
 * (each step then looks for the address's mapping, and the walker's
 * general loop takes it), or in hostile_pad, in the program's own text,
 * which has no SFrame section (the frame-pointer run takes every frame
 * after the first there). The pad's addresses repeat every 170 cases of a
 * worker, many rounds apart.
 */
static unsigned long ra_of(struct worker *w, const struct hcase *c, int i)
{
	if (c->text_ras)
		return (unsigned long)hostile_pad +
		       ((c->seq % 170) * NWORKERS + w->idx) * 8 * MAX_CHAIN + i * 8;
	return RA_BASE + ((unsigned long)w->idx << 40) +
	       ((c->seq & 0xfffffffUL) << 8) + (i + 1) * 8;
}

static bool in(unsigned long a, const char *lo, unsigned long len)
{
	return a >= (unsigned long)lo && a - (unsigned long)lo < len;
}

/* Write a word of a frame: in the shared region, its shadow too. */
static void put(struct worker *w, unsigned long addr, unsigned long val)
{
	*(unsigned long *)addr = val;
	if (in(addr, w->hslot, HSLOT))
		w->hshadow[(addr - (unsigned long)w->hslot) / 8] = val;
}

/*
 * The two words of the frame at @fp as the walker would read them: from
 * the worker's own memory, which no other thread writes, or from the
 * shadow of what the worker wrote to the changing region (*@changing set:
 * there the walker may read zeros instead, or nothing). False where the
 * walker cannot read them: outside these regions, which is the kernel,
 * non-canonical addresses, guard, PROT_NONE and unmapped pages, the page
 * after the changing region (PROT_NONE or never written: zeros either way),
 * and the gap below a MAP_GROWSDOWN mapping (a fault, or a new page of
 * zeros).
 */
static bool peek(struct worker *w, unsigned long fp, unsigned long *next,
		 unsigned long *ra, bool *changing)
{
	*changing = false;
	if (in(fp, w->region, REGION_PAGES * PAGE - 8) ||
	    in(fp, w->gd, 2 * PAGE - 8)) {
		*next = ((unsigned long *)fp)[0];
		*ra = ((unsigned long *)fp)[1];
		return true;
	}
	if (in(fp, w->hslot, HSLOT - 8)) {
		*next = w->hshadow[(fp - (unsigned long)w->hslot) / 8];
		*ra = w->hshadow[(fp - (unsigned long)w->hslot) / 8 + 1];
		*changing = true;
		return true;
	}
	return false;
}

/*
 * The oracle: the walker's rules (kernel/unwind/user.c) applied to the
 * entry's state. Misaligned frame pointers never reach peek(): their CFA is
 * misaligned too.
 */
static void expect(struct worker *w, struct hcase *c, unsigned long first)
{
	unsigned long sp = c->sp, fp = c->fp, cfa, next, ra;
	bool changing;

	c->exp[0] = first;
	c->nexp = 1;
	c->nmin = -1;
	while (c->nexp < MAXE) {
		if (!fp)
			break;
		cfa = fp + 16;
		if (cfa <= sp || (cfa & 7))
			break;
		if (!peek(w, fp, &next, &ra, &changing))
			break;
		/* The walk may stop before this frame, and no earlier. */
		if (changing && c->nmin < 0)
			c->nmin = c->nexp;
		if (!ra || ra >= USER_END)
			break;
		c->exp[c->nexp++] = ra;
		sp = cfa;
		fp = next;
	}
	if (c->nmin < 0)
		c->nmin = c->nexp;
}

/* Where a chain's last frame points, for @end. */
static unsigned long end_next(struct worker *w, int end, unsigned long last)
{
	switch (end) {
	case END_SELF:
		return last;
	case END_DOWN:
		return last - 32;
	case END_MISALIGNED:
		return last + 36;
	case END_GUARD:
		return (unsigned long)w->region + REGION_PAGES * PAGE;
	case END_KERNEL:
		return KERNEL_ADDR;
	case END_HOLE:
		return (unsigned long)hole;
	case END_TRAIL:
		return (unsigned long)trail + 8 * rnd(w, 16);
	case END_GD:
		return (unsigned long)w->gd - 16;
	default:
		return 0;
	}
}

/*
 * Build a chain of @k frames from @at upwards, inside [@at, @limit), with
 * return addresses unique to the case, ended by @end. Returns the first
 * frame's address.
 */
static unsigned long build_chain(struct worker *w, struct hcase *c,
				 unsigned long at, unsigned long limit, int k)
{
	unsigned long f[MAX_CHAIN], ra;
	int i;

	f[0] = at;
	for (i = 1; i < k; i++) {
		f[i] = f[i - 1] + 16 + 8 * rnd(w, 8);
		if (f[i] + 16 > limit)
			break;
	}
	k = i;
	c->frames = k;
	c->end = rnd(w, END_KINDS);
	for (i = 0; i < k; i++) {
		ra = ra_of(w, c, i);
		if (i == k - 1 && c->end == END_RA_ZERO)
			ra = 0;
		if (i == k - 1 && c->end == END_RA_KERNEL)
			ra = RA_KERNEL;
		put(w, f[i] + 8, ra);
		put(w, f[i], i < k - 1 ? f[i + 1] :
		    c->end == END_RA_ZERO || c->end == END_RA_KERNEL ?
		    f[i] + 64 : end_next(w, c->end, f[i]));
	}
	return f[0];
}

/* The IP a jump of kind @k goes to. */
static unsigned long bad_ip(int k)
{
	switch (k) {
	case IP_M1:
		return ~0UL;
	case IP_KERNEL:
		return KERNEL_ADDR;
	case IP_NONCANON:
		return NONCANON;
	case IP_HOLE:
		return (unsigned long)hole;
	case IP_NONE:
		return (unsigned long)none_page;
	default:
		return 0;
	}
}

/* Draw an entry: its kind, IP, frame and stack pointers; build its frames. */
static void generate(struct worker *w, struct hcase *c)
{
	unsigned long lo = (unsigned long)w->region, at, sp;
	unsigned long hi = lo + REGION_PAGES * PAGE;

	memset(c, 0, sizeof(*c));
	c->seq = w->seq++;
	c->text_ras = rnd(w, 2);
	c->entry = rnd(w, 5) < 2 ? E_FAULT : rnd(w, 4) ? E_SYSCALL : E_YIELD;
	if (c->entry == E_FAULT) {
		/* -1 most: what review B4 found. */
		c->ipk = rnd(w, 2) ? IP_M1 : rnd(w, IP_KINDS);
		c->ip = bad_ip(c->ipk);
	}
	/* A stack pointer in the region, below where the frames go. */
	at = lo + PAGE + 8 * rnd(w, (REGION_PAGES - 3) * PAGE / 8);
	sp = at - 8 * rnd(w, 8);
	c->sp = sp;
	/* Or the trampoline's own (syscalls only: a fault's goes on). */
	if (c->entry != E_FAULT && !rnd(w, 4))
		c->sp = 0;
	c->fpk = rnd(w, FP_KINDS + 4);
	if (c->fpk >= FP_KINDS)
		c->fpk = FP_CHAIN;
	switch (c->fpk) {
	case FP_ZERO:
		c->fp = 0;
		break;
	case FP_SELF:
		put(w, at, at);
		put(w, at + 8, ra_of(w, c, 0));
		c->fp = at;
		break;
	case FP_KERNEL:
		c->fp = KERNEL_ADDR + 8 * rnd(w, 512);
		break;
	case FP_NONCANON:
		c->fp = NONCANON + 8 * rnd(w, 512);
		break;
	case FP_WRAP:
		c->fp = -8UL * (1 + rnd(w, 2));
		break;
	case FP_BELOW_SP:
		/* A valid frame, but its CFA is not above the stack pointer. */
		c->fp = build_chain(w, c, at, hi, 1 + rnd(w, 4));
		c->sp = c->fp + 16 + 8 * rnd(w, 4);
		break;
	case FP_MISALIGNED:
		c->fp = build_chain(w, c, at, hi, 1 + rnd(w, 4)) + 1 + rnd(w, 7);
		break;
	case FP_GUARD:
		c->fp = hi + 8 * rnd(w, PAGE / 8);
		break;
	case FP_GUARD_EDGE:
		/* The next frame pointer readable, the return address not. */
		c->fp = hi - 8;
		put(w, hi - 8, at);
		break;
	case FP_HOLE:
		c->fp = (unsigned long)hole + 8 * rnd(w, PAGE / 8);
		break;
	case FP_GD_BELOW:
		c->fp = (unsigned long)w->gd - 16;
		break;
	case FP_GD_CHAIN:
		c->fp = build_chain(w, c, (unsigned long)w->gd,
				    (unsigned long)w->gd + 2 * PAGE,
				    1 + rnd(w, MAX_CHAIN));
		/* The stack pointer below the mapping, as a stack's would be. */
		if (c->sp)
			c->sp = (unsigned long)w->gd - 64;
		break;
	case FP_CHAIN_SHARED:
		c->fp = build_chain(w, c, (unsigned long)w->hslot + 8 * rnd(w, 64),
				    (unsigned long)w->hslot + HSLOT,
				    1 + rnd(w, MAX_CHAIN));
		if (c->sp)
			c->sp = (unsigned long)w->hslot - 8 * rnd(w, 4);
		break;
	default:
		c->fp = build_chain(w, c, at, hi, 1 + rnd(w, MAX_CHAIN));
		break;
	}
	/* A fault's stack pointer must be real: the kernel reads nothing there. */
	if (c->entry == E_FAULT && !c->sp)
		c->sp = sp;
}

static void describe(struct worker *w, const struct hcase *c, const char *what,
		     const unsigned long *got, int nr, unsigned long cookie)
{
	char buf[4096];
	int i, n;

	if (__atomic_fetch_add(&printed, 1, __ATOMIC_RELAXED) >= 12)
		return;
	n = snprintf(buf, sizeof(buf),
		     "seed %llu worker %d case %lu: %s: %s ip %#lx fp %#lx (%s, %d frames, end %d%s) sp %#lx\n#  want",
		     seed, w->idx, c->seq, what,
		     c->entry == E_FAULT ? ip_names[c->ipk] :
		     c->entry == E_YIELD ? "sched_yield" : "getppid",
		     c->ip, c->fp, fp_names[c->fpk], c->frames, c->end,
		     c->text_ras ? ", in text" : "", c->sp);
	for (i = 0; i < c->nexp && n < (int)sizeof(buf) - 40; i++)
		n += snprintf(buf + n, sizeof(buf) - n, " %#lx", c->exp[i]);
	if (c->nmin < c->nexp)
		n += snprintf(buf + n, sizeof(buf) - n, " (or the first %d+)", c->nmin);
	n += snprintf(buf + n, sizeof(buf) - n, "\n#  got (cookie %#lx)", cookie);
	for (i = 0; i < nr && n < (int)sizeof(buf) - 40; i++)
		n += snprintf(buf + n, sizeof(buf) - n, " %#lx", got[i]);
	ksft_print_msg("%s\n", buf);
}

/* Is @got (@nr frames) the case's stack, or a permitted prefix of it? */
static bool matches(const struct hcase *c, const unsigned long *got, int nr)
{
	int i;

	if (nr < c->nmin || nr > c->nexp)
		return false;
	for (i = 0; i < nr; i++)
		if (got[i] != c->exp[i])
			return false;
	return true;
}

/* Copy @len bytes at @off of perf's ring, which may wrap. */
static void ring_copy(struct worker *w, void *dst, uint64_t off, size_t len)
{
	size_t size = PERF_PAGES * PAGE, at = off % size;
	char *data = (char *)w->pp + PAGE;

	if (at + len <= size) {
		memcpy(dst, data + at, len);
	} else {
		memcpy(dst, data + at, size - at);
		memcpy((char *)dst + size - at, data, len - (size - at));
	}
}

/*
 * Everything perf wrote since the last call: exactly one sample, whose
 * callchain ends with the deferred marker and a cookie, and one deferred
 * record of that cookie and this thread, copied to @cp.
 */
static bool perf_take(struct worker *w, struct copy *cp, char *why, size_t len)
{
	uint64_t head = __atomic_load_n(&w->pp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = w->pp->data_tail;
	unsigned long sample_cookie = 0;
	int samples = 0, records = 0, other = 0;
	struct perf_event_header h;
	uint64_t *u, words;

	while (tail < head) {
		ring_copy(w, &h, tail, sizeof(h));
		if (h.size < sizeof(h) || h.size > PERF_PAGES * PAGE)
			break;
		ring_copy(w, w->pbuf, tail, h.size);
		u = (uint64_t *)(w->pbuf + sizeof(h));
		/* The record's words after its header. */
		words = (h.size - sizeof(h)) / 8;
		if (h.type == PERF_RECORD_SAMPLE) {
			/* TID, then the callchain. */
			uint64_t nr = u[1], i;

			samples++;
			for (i = 0; i + 1 < nr && 2 + i + 1 < words; i++)
				if (u[2 + i] == PERF_CONTEXT_USER_DEFERRED)
					sample_cookie = u[2 + i + 1];
			if ((__u32)(u[0] >> 32) != (__u32)w->tid)
				other++;
		} else if (h.type == PERF_RECORD_CALLCHAIN_DEFERRED) {
			uint64_t nr = u[1], i;

			records++;
			cp->cookie = u[0];
			cp->nr = nr;
			for (i = 0; i < nr && i < MAXE && 2 + i < words; i++)
				cp->ips[i] = u[2 + i];
			/* sample_id: pid, tid */
			if (2 + nr < words && (__u32)(u[2 + nr] >> 32) != (__u32)w->tid)
				other++;
		} else {
			other++;
		}
		tail += h.size;
	}
	__atomic_store_n(&w->pp->data_tail, head, __ATOMIC_RELEASE);
	cp->have = samples == 1 && records == 1 && !other && sample_cookie &&
		   sample_cookie == cp->cookie;
	if (!cp->have)
		snprintf(why, len,
			 "perf: %d samples (cookie %#lx), %d records (cookie %#lx), %d others",
			 samples, sample_cookie, records, records ? cp->cookie : 0UL, other);
	return cp->have;
}

/* Enter the kernel as case @c says; returns the entry's first frame. */
static unsigned long enter(struct worker *w, struct hcase *c)
{
	unsigned long sp_used;

	if (c->entry != E_FAULT) {
		hostile_syscall(c->fp, c->sp, &sp_used,
				c->entry == E_YIELD ? SYS_sched_yield : SYS_getppid);
		c->sp = sp_used;
		return (unsigned long)hostile_syscall_ret;
	}
	__atomic_store_n(&w->expect_fault, 1, __ATOMIC_RELAXED);
	if (!sigsetjmp(w->env, 0))
		hostile_jump(c->ip, c->fp, c->sp);
	/*
	 * A jump to a non-canonical address may fault on the jump itself
	 * (#GP, as Intel documents) or on the fetch: the IP the handler saw
	 * is the entry's either way, and must be one of the two.
	 */
	if (c->ipk == IP_NONCANON && w->f_ip == (unsigned long)hostile_jump_insn)
		return w->f_ip;
	return c->ip;
}

static __thread struct worker *self;

static void on_segv(int sig, siginfo_t *si, void *p)
{
	ucontext_t *uc = p;
	struct worker *w = self;
	static const char msg[] = "unwind_hostile: unexpected SIGSEGV\n";

	if (!w || !__atomic_load_n(&w->expect_fault, __ATOMIC_RELAXED)) {
		if (write(2, msg, sizeof(msg) - 1) < 0)
			_exit(3);
		abort();
	}
	__atomic_store_n(&w->expect_fault, 0, __ATOMIC_RELAXED);
	w->f_ip = uc->uc_mcontext.gregs[REG_RIP];
	w->f_sp = uc->uc_mcontext.gregs[REG_RSP];
	w->f_bp = uc->uc_mcontext.gregs[REG_RBP];
	siglongjmp(w->env, 1);
}

static int perf_open_tp(int id, int group, bool output)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = id;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	a.sample_id_all = 1;
	a.defer_callchain = 1;
	a.defer_output = output;
	return syscall(SYS_perf_event_open, &a, 0, -1, group, 0);
}

/*
 * The worker's own perf events: getppid()'s with defer_output, whose ring
 * sched_yield()'s and the SIGSEGV event write to as well.
 */
static int perf_setup(struct worker *w)
{
	w->pfd[0] = perf_open_tp(tp_getppid, -1, true);
	if (w->pfd[0] < 0)
		return -1;
	w->pp = mmap(NULL, (1 + PERF_PAGES) * PAGE, PROT_READ | PROT_WRITE,
		     MAP_SHARED, w->pfd[0], 0);
	if (w->pp == MAP_FAILED)
		return -1;
	w->pfd[1] = perf_open_tp(tp_signal, -1, false);
	if (w->pfd[1] < 0 ||
	    ioctl(w->pfd[1], PERF_EVENT_IOC_SET_OUTPUT, w->pfd[0]) ||
	    ioctl(w->pfd[1], PERF_EVENT_IOC_SET_FILTER, "sig == 11"))
		return -1;
	w->pfd[2] = perf_open_tp(tp_yield, -1, false);
	if (w->pfd[2] < 0 ||
	    ioctl(w->pfd[2], PERF_EVENT_IOC_SET_OUTPUT, w->pfd[0]))
		return -1;
	w->pbuf = malloc(PERF_PAGES * PAGE);
	return w->pbuf ? 0 : -1;
}

/* Run one case and check BPF's and perf's copies of its stack. */
static void run_case(struct worker *w)
{
	struct logent *le = &w->log[w->nlog++];
	struct hcase *c = &le->c;
	struct hostile_slot *s = bpf_on ? &bpf_map->slot[w->idx] : NULL;
	unsigned int nreq = 0, ndeliv = 0;
	unsigned long first;
	char why[160];

	memset(&le->bpf, 0, sizeof(le->bpf));
	memset(&le->perf, 0, sizeof(le->perf));
	generate(w, c);
	if (s) {
		nreq = __atomic_load_n(&s->nreq, __ATOMIC_ACQUIRE);
		ndeliv = __atomic_load_n(&s->ndeliv, __ATOMIC_ACQUIRE);
	}
	first = enter(w, c);
	expect(w, c, first);
	w->entries++;
	w->by_entry[c->entry]++;
	w->by_fp[c->fpk]++;
	if (c->entry == E_FAULT) {
		w->by_ip[c->ipk]++;
		if (w->f_ip != first || w->f_sp != c->sp || w->f_bp != c->fp) {
			w->setup_bad++;
			snprintf(why, sizeof(why), "the handler saw ip %#lx sp %#lx bp %#lx",
				 w->f_ip, w->f_sp, w->f_bp);
			describe(w, c, why, NULL, 0, 0);
		}
	}
	if (c->nmin < c->nexp)
		w->prefixes++;

	if (s) {
		unsigned int d = __atomic_load_n(&s->ndeliv, __ATOMIC_ACQUIRE) - ndeliv;
		unsigned int r = s->nreq - nreq;
		int i;

		le->bpf.cookie = s->cookie;
		le->bpf.nr = s->nr;
		for (i = 0; i < (int)s->nr && i < HOSTILE_FRAMES && i < MAXE; i++)
			le->bpf.ips[i] = s->ips[i];
		le->bpf.have = d == 1 && r == 1 && s->cookie == (unsigned long)s->req_cookie;
		if (!le->bpf.have) {
			w->bpf_bad++;
			snprintf(why, sizeof(why),
				 "bpf: %u requests, %u deliveries, cookie %#lx, asked %#llx",
				 r, d, le->bpf.cookie, (unsigned long long)s->req_cookie);
			describe(w, c, why, NULL, 0, 0);
		} else if (s->nr > HOSTILE_FRAMES || !matches(c, le->bpf.ips, le->bpf.nr)) {
			w->bpf_bad++;
			describe(w, c, "bpf", le->bpf.ips, le->bpf.nr, le->bpf.cookie);
		}
	}
	if (perf_on) {
		if (!perf_take(w, &le->perf, why, sizeof(why))) {
			w->perf_bad++;
			describe(w, c, why, NULL, 0, 0);
		} else if (!matches(c, le->perf.ips, le->perf.nr)) {
			w->perf_bad++;
			describe(w, c, "perf", le->perf.ips, le->perf.nr, le->perf.cookie);
		}
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	stack_t ss = { .ss_sp = w->altstack, .ss_size = 8 * PAGE };

	self = w;
	w->tid = gettid();
	/* Touched: a signal delivered while mmap_lock is taken faults nothing. */
	memset(w->altstack, 0, 8 * PAGE);
	if (sigaltstack(&ss, NULL))
		ksft_exit_fail_msg("sigaltstack: %s\n", strerror(errno));
	if (perf_on && perf_setup(w)) {
		ksft_print_msg("worker %d: perf: %s\n", w->idx, strerror(errno));
		__atomic_store_n(&perf_on, 0, __ATOMIC_RELAXED);
	}
	if (bpf_on)
		__atomic_store_n(&bpf_map->slot[w->idx].tid, w->tid, __ATOMIC_RELEASE);
	for (;;) {
		pthread_barrier_wait(&round_start);
		if (done)
			break;
		w->nlog = 0;
		while (w->nlog < ROUND_CASES)
			run_case(w);
		pthread_barrier_wait(&round_end);
	}
	return NULL;
}

/*
 * Another thread's mappings, changed as fast as it can: mmap_lock taken for
 * writing again and again, with mappings split, merged and moved.
 */
static void *mutate_own(void *arg)
{
	char *p, *q;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		p = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			continue;
		p[0] = 1;
		mprotect(p + 4 * PAGE, PAGE, PROT_READ);
		q = mremap(p, 16 * PAGE, 32 * PAGE, MREMAP_MAYMOVE);
		munmap(q == MAP_FAILED ? p : q, q == MAP_FAILED ? 16 * PAGE : 32 * PAGE);
		__atomic_fetch_add(&mutations, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * The region the workers' shared chains lie in, replaced by a new mapping
 * of zeros or zeroed in place under the walks, and the page after it made
 * PROT_NONE and readable again (never written: zeros). A walk there reads
 * what the worker wrote, zeros, or nothing; never anything else.
 */
static void *mutate_shared(void *arg)
{
	size_t len = NWORKERS * HSLOT;
	unsigned int i = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		switch (i++ % 4) {
		case 0:
			mmap(shared_region, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			break;
		case 1:
			madvise(shared_region, len, MADV_DONTNEED);
			break;
		case 2:
			mprotect(trail, PAGE, PROT_NONE);
			break;
		default:
			mprotect(trail, PAGE, PROT_READ);
			break;
		}
		__atomic_fetch_add(&mutations, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* fork() copies the mm with mmap_lock held for writing, for a long time. */
static void *forker(void *arg)
{
	pid_t pid;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pid = fork();
		if (!pid)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		__atomic_fetch_add(&forks, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* ftrace: the instance's stacks, parsed from trace_pipe as they come. */
struct fstack {
	pid_t		tid;
	unsigned long	cookie;
	int		nr;
	int		no_mm;		/* frames without a file (the mm not taken) */
	unsigned long	ips[MAXE];
};

static int pipe_fd = -1;
static char pipe_buf[1 << 16];
static size_t pipe_len;
static struct fstack *fq;		/* this round's stacks, in order */
static int nfq, fq_cap;
static unsigned long ftrace_bad, ftrace_stacks, ftrace_without_mm,
	ftrace_text_stacks, cross_bad;

/* "comm-TID [CPU] ..." : the TID before the CPU field, or -1. */
static pid_t line_tid(const char *line)
{
	const char *p = strstr(line, " [");

	if (!p)
		return -1;
	while (p > line && p[-1] == ' ')
		p--;
	while (p > line && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p == line || p[-1] != '-')
		return -1;
	return atoi(p);
}

/* The stack whose frame lines come next, if any. */
static struct fstack *cur;

static void ftrace_line(char *line)
{
	char *p;

	p = strstr(line, "<user unwind stack> cookie=");
	if (p) {
		if (nfq == fq_cap) {
			fq_cap = fq_cap ? 2 * fq_cap : 1024;
			fq = realloc(fq, fq_cap * sizeof(*fq));
			if (!fq)
				ksft_exit_fail_msg("out of memory\n");
		}
		cur = &fq[nfq++];
		memset(cur, 0, sizeof(*cur));
		cur->tid = line_tid(line);
		cur->cookie = strtoul(p + strlen("<user unwind stack> cookie="), NULL, 16);
		return;
	}
	if (cur && !strncmp(line, " => 0x", 6)) {
		if (cur->nr < MAXE)
			cur->ips[cur->nr] = strtoul(line + 4, NULL, 16);
		cur->nr++;
		if (!strstr(line, " off="))
			cur->no_mm++;
		return;
	}
	if (cur && !strncmp(line, " => ...", 7)) {
		/* Frames dropped: never at these depths; make it a mismatch. */
		cur->nr = MAXE + 1;
		return;
	}
	cur = NULL;
}

/* Read what trace_pipe has now: every stack of the round is there. */
static void ftrace_drain(void)
{
	ssize_t n;
	char *nl, *line;

	for (;;) {
		n = read(pipe_fd, pipe_buf + pipe_len, sizeof(pipe_buf) - 1 - pipe_len);
		if (n <= 0)
			break;
		pipe_len += n;
		pipe_buf[pipe_len] = '\0';
		line = pipe_buf;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			ftrace_line(line);
			line = nl + 1;
		}
		pipe_len -= line - pipe_buf;
		memmove(pipe_buf, line, pipe_len);
	}
}

static bool same_copy(const struct copy *a, const struct fstack *f)
{
	return a->cookie == f->cookie && a->nr == f->nr &&
	       !memcmp(a->ips, f->ips, f->nr * sizeof(f->ips[0]));
}

/*
 * The round's ftrace stacks, per worker in the worker's order: one per
 * entry, the case's stack, and the same cookie and frames as BPF's and
 * perf's copies of the entry.
 */
static void ftrace_check(void)
{
	int i, k, n;

	ftrace_drain();
	for (i = 0; i < NWORKERS; i++) {
		struct worker *w = &workers[i];

		for (k = 0, n = 0; k < nfq; k++) {
			struct fstack *f = &fq[k];
			struct logent *le;

			if (f->tid != w->tid)
				continue;
			if (n >= w->nlog) {
				ftrace_bad++;
				describe(w, &w->log[w->nlog - 1].c,
					 "ftrace: a stack after the last entry",
					 f->ips, f->nr, f->cookie);
				continue;
			}
			le = &w->log[n++];
			ftrace_stacks++;
			if (le->c.entry != E_FAULT) {
				ftrace_text_stacks++;
				ftrace_without_mm += f->no_mm == f->nr;
			}
			if (f->nr > MAXE || !matches(&le->c, f->ips, f->nr)) {
				ftrace_bad++;
				describe(w, &le->c, "ftrace", f->ips, f->nr, f->cookie);
				continue;
			}
			if ((le->bpf.have && !same_copy(&le->bpf, f)) ||
			    (le->perf.have && !same_copy(&le->perf, f))) {
				cross_bad++;
				describe(w, &le->c, "ftrace's copy is not BPF's or perf's",
					 f->ips, f->nr, f->cookie);
			}
		}
		if (n != w->nlog) {
			ftrace_bad += w->nlog - n;
			describe(w, &w->log[n].c, "ftrace: no stack from here on", NULL, 0, 0);
		}
	}
	nfq = 0;
	cur = NULL;
}

/* Where the two clients other than ftrace disagree with each other. */
static void cross_check_round(void)
{
	int i, k;

	for (i = 0; i < NWORKERS; i++) {
		struct worker *w = &workers[i];

		for (k = 0; k < w->nlog; k++) {
			struct logent *le = &w->log[k];

			if (!le->bpf.have || !le->perf.have)
				continue;
			if (le->bpf.cookie != le->perf.cookie || le->bpf.nr != le->perf.nr ||
			    memcmp(le->bpf.ips, le->perf.ips,
				   (le->bpf.nr < MAXE ? le->bpf.nr : MAXE) * sizeof(long))) {
				cross_bad++;
				describe(w, &le->c, "BPF's copy is not perf's",
					 le->perf.ips, le->perf.nr, le->perf.cookie);
			}
		}
	}
}

static int ftrace_setup(void)
{
	mkdir(INST, 0755);
	if (write_file(INST "/buffer_size_kb", "2048") ||
	    write_file(INST "/events/syscalls/sys_enter_getppid/enable", "1") ||
	    write_file(INST "/events/syscalls/sys_enter_sched_yield/enable", "1") ||
	    write_file(INST "/events/signal/signal_generate/filter", "sig == 11") ||
	    write_file(INST "/events/signal/signal_generate/enable", "1") ||
	    write_file(INST "/options/userstacktrace_delay", "1"))
		return -1;
	pipe_fd = open(INST "/trace_pipe", O_RDONLY | O_NONBLOCK);
	return pipe_fd < 0 ? -1 : 0;
}

static void ftrace_teardown(void)
{
	if (pipe_fd >= 0)
		close(pipe_fd);
	write_file(INST "/options/userstacktrace_delay", "0");
	write_file(INST "/events/signal/signal_generate/enable", "0");
	write_file(INST "/events/syscalls/sys_enter_getppid/enable", "0");
	write_file(INST "/events/syscalls/sys_enter_sched_yield/enable", "0");
	rmdir(INST);
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static struct unwind_hostile_bpf *bpf_setup(void)
{
	struct unwind_hostile_bpf *s;

	libbpf_set_print(quiet);
	s = unwind_hostile_bpf__open_and_load();
	if (!s)
		return NULL;
	bpf_map = mmap(NULL, sizeof(*bpf_map), PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(s->maps.hostile), 0);
	if (bpf_map == MAP_FAILED || unwind_hostile_bpf__attach(s)) {
		unwind_hostile_bpf__destroy(s);
		return NULL;
	}
	return s;
}

static void *map_or_die(void *at, size_t len, int prot, int flags)
{
	void *p = mmap(at, len, prot, flags | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	return p;
}

/* The regions every case uses; see peek() for what the walker reads. */
static void regions_setup(void)
{
	char *p;
	int i;

	/* A page between two mappings, unmapped. */
	p = map_or_die(NULL, 3 * PAGE, PROT_READ, 0);
	munmap(p + PAGE, PAGE);
	hole = p + PAGE;
	none_page = map_or_die(NULL, PAGE, PROT_NONE, 0);
	/* The shared region and the page after it. */
	shared_region = map_or_die(NULL, NWORKERS * HSLOT + PAGE,
				   PROT_READ | PROT_WRITE, 0);
	trail = shared_region + NWORKERS * HSLOT;
	mprotect(trail, PAGE, PROT_READ);
	for (i = 0; i < NWORKERS; i++) {
		struct worker *w = &workers[i];

		w->idx = i;
		w->rng = seed ^ (0x5851f42d4c957f2dULL * (i + 1));
		w->region = map_or_die(NULL, (REGION_PAGES + 1) * PAGE,
				       PROT_READ | PROT_WRITE, 0);
		mprotect(w->region + REGION_PAGES * PAGE, PAGE, PROT_NONE);
		w->gd = map_or_die(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
				   MAP_GROWSDOWN);
		w->hslot = shared_region + i * HSLOT;
		w->hshadow = calloc(HSLOT / 8, sizeof(long));
		w->altstack = map_or_die(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, 0);
		if (!w->hshadow)
			ksft_exit_fail_msg("out of memory\n");
	}
}

static void bad_args(const char *prog)
{
	fprintf(stderr, "usage: %s [--seed N] [--no-bpf] [SECONDS]\n", prog);
	exit(KSFT_FAIL);
}

int main(int argc, char **argv)
{
	struct sigaction sa = {
		.sa_sigaction = on_segv,
		/* Left with siglongjmp(): SIGSEGV must not stay blocked. */
		.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER,
	};
	unsigned long entries = 0, bpf_bad = 0, perf_bad = 0, setup_bad = 0,
		      prefixes = 0, by_entry[3] = { 0 }, by_ip[IP_KINDS] = { 0 },
		      by_fp[FP_KINDS] = { 0 };
	struct unwind_hostile_bpf *skel = NULL;
	pthread_t mut[3];
	bool seeded = false, kinds = true;
	long end, rounds = 0;
	int i, j;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
			seeded = true;
		} else if (!strcmp(argv[i], "--no-bpf")) {
			bpf_wanted = 0;
		} else if (argv[i][0] >= '0' && argv[i][0] <= '9') {
			secs = atoi(argv[i]);
		} else {
			bad_args(argv[0]);
		}
	}
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (ts.tv_sec * 1000000007ULL) ^ ts.tv_nsec ^ getpid();
	}
	ksft_print_header();
	/* First, so that a crash of the kernel still shows it. */
	ksft_print_msg("seed %llu (again: unwind_hostile --seed %llu%s %d)\n", seed, seed,
		       bpf_wanted ? "" : " --no-bpf", secs);
	ksft_set_plan(4 + bpf_wanted);
	if (geteuid())
		ksft_exit_skip("needs root (ftrace, perf tracepoints, BPF)\n");

	regions_setup();
	if (sigaction(SIGSEGV, &sa, NULL))
		ksft_exit_fail_msg("sigaction: %s\n", strerror(errno));

	tp_getppid = read_int(TRACEFS "/events/syscalls/sys_enter_getppid/id");
	tp_yield = read_int(TRACEFS "/events/syscalls/sys_enter_sched_yield/id");
	tp_signal = read_int(TRACEFS "/events/signal/signal_generate/id");
	perf_on = tp_getppid > 0 && tp_yield > 0 && tp_signal > 0;
	ftrace_on = !ftrace_setup();
	if (!ftrace_on)
		ksft_print_msg("ftrace instance: %s\n", strerror(errno));
	skel = bpf_wanted ? bpf_setup() : NULL;
	bpf_on = !!skel;
	if (bpf_wanted && !bpf_on)
		ksft_print_msg("BPF: %s\n", strerror(errno));

	pthread_barrier_init(&round_start, NULL, NWORKERS + 1);
	pthread_barrier_init(&round_end, NULL, NWORKERS + 1);
	for (i = 0; i < NWORKERS; i++)
		if (pthread_create(&workers[i].th, NULL, worker_main, &workers[i]))
			ksft_exit_fail_msg("pthread_create\n");
	if (pthread_create(&mut[0], NULL, mutate_own, NULL) ||
	    pthread_create(&mut[1], NULL, mutate_shared, NULL) ||
	    pthread_create(&mut[2], NULL, forker, NULL))
		ksft_exit_fail_msg("pthread_create\n");

	end = now_ms() + secs * 1000L;
	do {
		pthread_barrier_wait(&round_start);
		pthread_barrier_wait(&round_end);
		rounds++;
		/* Every entry of the round has returned: its stacks are out. */
		if (ftrace_on)
			ftrace_check();
		cross_check_round();
	} while (now_ms() < end);
	done = 1;
	pthread_barrier_wait(&round_start);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < NWORKERS; i++)
		pthread_join(workers[i].th, NULL);
	for (i = 0; i < 3; i++)
		pthread_join(mut[i], NULL);
	if (ftrace_on)
		ftrace_teardown();

	for (i = 0; i < NWORKERS; i++) {
		struct worker *w = &workers[i];

		entries += w->entries;
		bpf_bad += w->bpf_bad;
		perf_bad += w->perf_bad;
		setup_bad += w->setup_bad;
		prefixes += w->prefixes;
		for (j = 0; j < 3; j++)
			by_entry[j] += w->by_entry[j];
		for (j = 0; j < IP_KINDS; j++)
			by_ip[j] += w->by_ip[j];
		for (j = 0; j < FP_KINDS; j++)
			by_fp[j] += w->by_fp[j];
	}
	ksft_print_msg("%ld rounds, %lu entries (%lu may be cut in the changing region)\n",
		       rounds, entries, prefixes);
	ksft_print_msg("beside them %lu mapping changes and %lu forks\n", mutations, forks);
	/* How often a delivery could not take mmap_lock at once. */
	ksft_print_msg("ftrace: %lu of %lu system calls' stacks filled without the mm\n",
		       ftrace_without_mm, ftrace_text_stacks);
	ksft_print_msg("  getppid(): %lu, sched_yield(): %lu, jumps: %lu\n",
		       by_entry[E_SYSCALL], by_entry[E_YIELD], by_entry[E_FAULT]);
	kinds &= by_entry[E_SYSCALL] && by_entry[E_YIELD] && by_entry[E_FAULT];
	for (j = 0; j < IP_KINDS; j++) {
		ksft_print_msg("  jumps to %s: %lu\n", ip_names[j], by_ip[j]);
		kinds &= by_ip[j] > 0;
	}
	for (j = 0; j < FP_KINDS; j++) {
		ksft_print_msg("  frame pointer %s: %lu\n", fp_names[j], by_fp[j]);
		kinds &= by_fp[j] > 0;
	}

	ksft_test_result(kinds && !setup_bad,
			 "every kind of entry and frame pointer, %lu entries as generated\n",
			 entries);
	if (bpf_on)
		ksft_test_result(!bpf_bad,
				 "BPF: each of %lu entries delivered once, %s\n",
				 entries, "its request's cookie, the exact stack");
	else if (bpf_wanted)
		ksft_test_result_fail("BPF: not loaded\n");
	if (perf_on)
		ksft_test_result(!perf_bad,
				 "perf: each of %lu entries one sample and %s\n",
				 entries, "one deferred record, the exact stack");
	else
		ksft_test_result_fail("perf: no events\n");
	if (ftrace_on)
		ksft_test_result(!ftrace_bad,
				 "ftrace: %lu stacks for %lu entries, each the exact stack\n",
				 ftrace_stacks, entries);
	else
		ksft_test_result_fail("ftrace: no instance\n");
	ksft_test_result(!cross_bad, "%s: one cookie and the same frames per entry\n",
			 bpf_on ? "ftrace, perf and BPF" : "ftrace and perf");
	if (skel)
		unwind_hostile_bpf__destroy(skel);
	ksft_finished();
}
