// SPDX-License-Identifier: GPL-2.0
/*
 * A small two-worker "service" for the main job's context demo: one thread
 * serves "checkout" requests, the other "search" requests. Each request is
 * a span of its own: before it handles one, the worker fills its
 * OpenTelemetry thread context record (OTEP 4947) with the request's trace
 * and span IDs, and clears its pointer afterwards. Each thread registers
 * its TLS pointer with prctl(PR_UNWIND_CONTEXT), so that the kernel reads
 * the record with every deferred user stack of the thread.
 *
 * The IDs say which kind of request they belong to: the span ID's first
 * byte is 0xc0 for checkout and 0x5e for search, and the trace ID's first
 * byte the same. A stack inside checkout_handle() whose span is a search
 * span would be a context delivered with the wrong stack.
 *
 *   otel_service MS	run both workers for MS milliseconds of CPU each
 *
 * Built static with frame pointers: the stacks are the point here, and
 * the system calls are made from the handlers with their own syscall
 * instruction, so that fp,defer sees whole stacks.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#ifndef PR_UNWIND_CONTEXT
#define PR_UNWIND_CONTEXT		0x55435458
#define PR_UNWIND_CONTEXT_SET		1
#endif

struct otel_ctx_record {
	uint8_t		trace_id[16];
	uint8_t		span_id[8];
	uint8_t		valid;
	uint8_t		trace_flags;
	uint16_t	attrs_size;
	uint8_t		attrs[36];
} __attribute__((aligned(8)));

__thread void *otel_thread_ctx_v1;

#define KIND_CHECKOUT	0xc0
#define KIND_SEARCH	0x5e

static long run_ms;

/* getppid() with its own syscall instruction: the handler keeps its frame. */
static __attribute__((noinline)) long sys_getppid(void)
{
	long ret;

	asm volatile("syscall" : "=a"(ret) : "0"(SYS_getppid) : "rcx", "r11", "memory");
	return ret;
}

static __attribute__((noinline)) unsigned long spin(unsigned long n)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < n; i++)
		x += i * 2654435761UL;
	return x;
}

static __attribute__((noinline)) unsigned long price_items(int n)
{
	sys_getppid();
	return spin(20000UL * n);
}

static __attribute__((noinline)) unsigned long checkout_handle(int n)
{
	return price_items(n) + spin(10000);
}

static __attribute__((noinline)) unsigned long scan_index(int n)
{
	sys_getppid();
	return spin(15000UL * n);
}

static __attribute__((noinline)) unsigned long search_handle(int n)
{
	return scan_index(n) + spin(30000);
}

/* Start a span: the record is invalid while it changes (OTEP 4947). */
static void span_begin(struct otel_ctx_record *rec, int kind, uint64_t n)
{
	static const char route[2][9] = { "checkout", "search" };
	const char *name = route[kind == KIND_SEARCH];

	rec->valid = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memset(rec->trace_id, 0, sizeof(rec->trace_id));
	rec->trace_id[0] = kind;
	memcpy(&rec->trace_id[8], &n, sizeof(n));
	rec->span_id[0] = kind;
	memcpy(&rec->span_id[1], &n, 7);
	rec->trace_flags = 1;
	/* One attribute: key 1, the route. */
	rec->attrs[0] = 1;
	rec->attrs[1] = strlen(name);
	memcpy(&rec->attrs[2], name, rec->attrs[1]);
	rec->attrs_size = 2 + rec->attrs[1];
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rec->valid = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	otel_thread_ctx_v1 = rec;
}

static void span_end(void)
{
	otel_thread_ctx_v1 = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *worker(void *arg)
{
	int kind = (int)(long)arg;
	struct otel_ctx_record rec = { 0 };
	unsigned long sum = 0;
	uint64_t n = 0;

	if (prctl(PR_UNWIND_CONTEXT, PR_UNWIND_CONTEXT_SET, &otel_thread_ctx_v1, 0, 0)) {
		perror("prctl(PR_UNWIND_CONTEXT)");
		exit(1);
	}
	while (cpu_ms() < run_ms) {
		n++;
		span_begin(&rec, kind, n);
		if (kind == KIND_CHECKOUT)
			sum += checkout_handle(1 + n % 3);
		else
			sum += search_handle(1 + n % 4);
		span_end();
	}
	printf("%s: %llu requests (%lu)\n", kind == KIND_CHECKOUT ? "checkout" : "search",
	       (unsigned long long)n, sum & 1);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	run_ms = argc > 1 ? atol(argv[1]) : 1000;
	pthread_create(&t[0], NULL, worker, (void *)(long)KIND_CHECKOUT);
	pthread_create(&t[1], NULL, worker, (void *)(long)KIND_SEARCH);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	return 0;
}
