// SPDX-License-Identifier: GPL-2.0
/*
 * Walk a real program's user stack from a system call and compare it with
 * the program's own call chain, main -> a -> b -> c.
 *
 * c() makes a read() of /sys/kernel/debug/unwind_test/user_stack with an
 * inline system call instruction, so the user IP at kernel entry is in c()
 * itself, right after the instruction. Each function records its own return
 * address, which is what a frame-pointer walk must find: the expected trace
 * is exact, not a guess from symbol ranges. Built twice: 64-bit (syscall) and
 * 32-bit (int $0x80, compat word size 4). Needs frame pointers.
 *
 * 64-bit also walks through a signal frame: main -> sa -> sb, where sb()
 * sends itself SIGUSR1 with tgkill, and the handler calls sig_read(), which
 * makes the read(). The walk must give sig_read(), the handler, then sb()
 * where the signal interrupted it (right after its system call), then sa()
 * and main(): never the signal trampoline, which is no frame. The handler
 * is not the topmost frame, so that the step to the trampoline is one of a
 * run of plain frame-pointer steps, which must stop there.
 */

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "../kselftest.h"
#include "user_stack.h"

#define DEPTH		5	/* c, b, a, main, main's caller */

static unsigned long expected[DEPTH];
static char buf[4096];
static long nread;
static int fd;

static void c(void)
{
	unsigned long ip;
	long ret;

	expected[1] = (unsigned long)__builtin_return_address(0);
#ifdef __x86_64__
	asm volatile("lea 1f(%%rip), %[ip]\n\t"
		     "syscall\n"
		     "1:"
		     : [ip] "=&r" (ip), "=a" (ret)
		     : "a" ((long)SYS_read), "D" ((long)fd), "S" (buf),
		       "d" (sizeof(buf) - 1)
		     : "rcx", "r11", "memory");
#else
	asm volatile("movl $1f, %[ip]\n\t"
		     "int $0x80\n"
		     "1:"
		     : [ip] "=&r" (ip), "=a" (ret)
		     : "a" ((long)SYS_read), "b" ((long)fd), "c" (buf),
		       "d" (sizeof(buf) - 1)
		     : "memory");
#endif
	expected[0] = ip;
	nread = ret;
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

#ifdef __x86_64__
#define SIG_DEPTH	5	/* sig_read, the handler, sb, sa, main */

static unsigned long sig_expected[SIG_DEPTH];

/* A call, so that sig_read() is not a leaf and keeps its frame. */
static long sig_one(void)
{
	return 1;
}

static __attribute__((noinline)) void sig_read(void)
{
	unsigned long ip;
	long ret;

	sig_expected[1] = (unsigned long)__builtin_return_address(0);
	ret = syscall3_here(SYS_read, fd, buf, sizeof(buf) - sig_one(), ip);
	sig_expected[0] = ip;
	nread = ret;
}

static void sig_handler(int sig)
{
	sig_read();
	asm volatile("" ::: "memory");	/* no tail call */
}

static void sb(void)
{
	unsigned long ip;

	sig_expected[3] = (unsigned long)__builtin_return_address(0);
	syscall3_here(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1, ip);
	sig_expected[2] = ip;
}

static void sa(void)
{
	sig_expected[4] = (unsigned long)__builtin_return_address(0);
	sb();
	asm volatile("" ::: "memory");
}

/*
 * musl's __restore_rt, byte for byte: "mov $15, %eax; syscall", shorter
 * than glibc's "mov $15, %rax".
 */
asm(".pushsection .text\n"
	".globl musl_restore_rt\n"
	"musl_restore_rt:\n\t"
	"movl $15, %eax\n\t"
	"syscall\n"
	".popsection");

/* The kernel's struct sigaction for rt_sigaction() on x86-64. */
struct kernel_sigaction {
	void		(*handler)(int sig);
	unsigned long	flags;
	void		(*restorer)(void);
	unsigned long	mask;
};

#define SA_RESTORER_	0x04000000

/*
 * The walk from the handler: how many frames match, from the innermost.
 * @musl: the handler returns through musl's trampoline, installed with
 * rt_sigaction() directly, instead of glibc's.
 */
static unsigned int walk_signal(int musl)
{
	struct sigaction act = { .sa_handler = sig_handler };
	struct kernel_sigaction kact = {
		.handler = sig_handler, .flags = SA_RESTORER_,
	};
	unsigned long got[8];
	unsigned int nr, ws, i;

	/* Its address, without a C declaration of code written in asm. */
	asm("lea musl_restore_rt(%%rip), %0" : "=r" (kact.restorer));

	if (musl ? syscall(SYS_rt_sigaction, SIGUSR1, &kact, NULL, 8) :
		   sigaction(SIGUSR1, &act, NULL))
		return 0;
	/* A new open file: each read() of it walks from its start. */
	close(fd);
	fd = open(STACK_FILE, O_RDONLY);
	nread = 0;
	sa();
	/* The handler wrote nread and buf: the compiler cannot see that. */
	asm volatile("" ::: "memory");
	nr = user_stack_parse(buf, nread, got, 8, &ws);
	for (i = 0; i < SIG_DEPTH; i++)
		ksft_print_msg("signal frame %u: %#lx, expected %#lx\n", i,
			       i < nr ? got[i] : 0, sig_expected[i]);
	for (i = 0; i < nr && i < SIG_DEPTH; i++)
		if (got[i] != sig_expected[i])
			break;
	return i;
}
#endif

int main(void)
{
	unsigned int nr, ws, i, want_ws = sizeof(long);
	unsigned long got[64];

	expected[4] = (unsigned long)__builtin_return_address(0);
	ksft_print_header();
#ifdef __x86_64__
	ksft_set_plan(5);
#else
	ksft_set_plan(3);
#endif

	fd = open(STACK_FILE, O_RDONLY);
	if (fd < 0)
		ksft_exit_skip("%s: %s (needs CONFIG_UNWIND_TEST_CLIENT)\n",
			       STACK_FILE, strerror(errno));
	a();
	nr = user_stack_parse(buf, nread, got, 64, &ws);
	for (i = 0; i < nr && i < 64; i++)
		ksft_print_msg("frame %u: %#lx%s\n", i, got[i],
			       i < DEPTH && got[i] == expected[i] ? "" :
			       i < DEPTH ? " (mismatch)" : "");
	for (i = 0; i < DEPTH; i++)
		ksft_print_msg("expected %u: %#lx\n", i, expected[i]);

	ksft_test_result(ws == want_ws, "word size %u, want %u\n", ws, want_ws);
	ksft_test_result(nr >= DEPTH, "walked %u frames, want at least %u\n",
			 nr, DEPTH);
	for (i = 0; i < DEPTH && i < nr; i++)
		if (got[i] != expected[i])
			break;
	ksft_test_result(i == DEPTH, "the walked call chain matches exactly\n");
#ifdef __x86_64__
	ksft_test_result(walk_signal(0) == SIG_DEPTH,
			 "through a signal frame: handler, interrupted function, its callers\n");
	ksft_test_result(walk_signal(1) == SIG_DEPTH,
			 "the same through musl's rt_sigreturn trampoline\n");
#endif
	ksft_finished();
}
