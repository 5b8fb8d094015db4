// SPDX-License-Identifier: GPL-2.0
/*
 * Walk through code a JIT wrote into anonymous executable memory, which
 * has no ELF file, so no SFrame section and no table: the walker can only
 * use frame pointers there. What it does, with exact frames, for the three
 * kinds of generated code a JIT makes:
 *
 *  - a function that keeps a frame pointer (V8's code, HotSpot's with
 *    -XX:+PreserveFramePointer): the walk goes through it, and every
 *    frame is there: the JIT function, its caller at the call, and on;
 *  - a frameless function that leaves the register alone: its caller is
 *    missing, because the frame pointer register still holds the caller's
 *    frame, whose return address is the caller's caller's. The frames
 *    that follow are right: one is left out, none is made up;
 *  - a function that uses the frame pointer register for data, as
 *    HotSpot's compiled code as people start it may: here the value 1,
 *    below the stack pointer, so the walk ends after the JIT frame. A
 *    frame-pointer walk cannot tell a frame pointer from a number: one
 *    that points into the stack above the stack pointer is followed like
 *    a frame, within the walk's bounds, in the task's own memory. Only
 *    unwind data the runtime registered could do better.
 *
 * Each JIT function makes a read() of the test client's user_stack file
 * with the arguments its caller passed, from a system call instruction at
 * a known offset. jit_call() calls it from inline assembly, so that the
 * return address in jit_call() is known exactly too.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "../kselftest.h"
#include "user_stack.h"

#ifdef __x86_64__

#define MAX_FRAMES	64

#define noinline	__attribute__((noinline))

/* Offsets after each function's syscall instruction: its walk's first frame */
#define JIT_FP_IP	11
#define JIT_NOFP_IP	7
#define JIT_DATA_IP	15

/* push %rbp; mov %rsp,%rbp; mov $SYS_read,%eax; syscall; pop %rbp; ret */
static const unsigned char jit_fp[] = {
	0x55, 0x48, 0x89, 0xe5, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x0f, 0x05,
	0x5d, 0xc3,
};

/* mov $SYS_read,%eax; syscall; ret */
static const unsigned char jit_nofp[] = {
	0xb8, 0x00, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3,
};

/*
 * mov %rbp,%r10; mov $1,%ebp; mov $SYS_read,%eax; syscall;
 * mov %r10,%rbp; ret
 */
static const unsigned char jit_data[] = {
	0x49, 0x89, 0xea, 0xbd, 0x01, 0x00, 0x00, 0x00, 0xb8, 0x00, 0x00,
	0x00, 0x00, 0x0f, 0x05, 0x4c, 0x89, 0xd5, 0xc3,
};

static char buf[4096];
static unsigned long main_ret;	/* main()'s return address */
static unsigned long walk_ret;	/* walk()'s return address */
static unsigned long call_ret;	/* jit_call()'s return address */
static unsigned long jit_ret;	/* the address after jit_call()'s call */

/*
 * Call @fn(fd, buf, len) and return what it returned. The call is moved
 * below the red zone: the compiler does not know that this function calls.
 * The stack is not aligned as the ABI has it at a call: the JIT functions
 * keep nothing on it that needs to be.
 */
static noinline long jit_call(const void *fn, int fd)
{
	long ret, a0 = fd, a1 = (long)buf, a2 = sizeof(buf) - 1;

	call_ret = (unsigned long)__builtin_return_address(0);
	asm volatile("lea 1f(%%rip), %[ra]\n\t"
		     "lea -128(%%rsp), %%rsp\n\t"
		     "call *%[fn]\n"
		     "1:\n\t"
		     "lea 128(%%rsp), %%rsp"
		     : [ra] "=&r" (jit_ret), "=a" (ret), "+D" (a0), "+S" (a1),
		       "+d" (a2)
		     : [fn] "r" (fn)
		     : "rcx", "r8", "r9", "r10", "r11", "memory");
	return ret;
}

enum jit_kind {
	JIT_FRAME,	/* keeps a frame pointer */
	JIT_FRAMELESS,	/* leaves the register to its caller's frame */
	JIT_DATA,	/* puts a number in it */
};

/*
 * Run the JIT function at @fn, whose system call returns to @ip, and
 * compare the walk with what @kind of code gives: the JIT frame, then
 * jit_call() at its call, walk(), main() and main()'s caller. Prints what
 * it got. The file is opened for each walk: it is made at offset 0.
 */
static noinline bool walk(const char *what, const void *fn, unsigned long ip,
			  enum jit_kind kind)
{
	unsigned long got[MAX_FRAMES], want[5];
	unsigned int nr, ws, i, n = 0;
	long len;
	int fd;

	walk_ret = (unsigned long)__builtin_return_address(0);
	fd = open(STACK_FILE, O_RDONLY);
	if (fd < 0)
		ksft_exit_fail_msg("%s: %s\n", STACK_FILE, strerror(errno));
	len = jit_call(fn, fd);
	close(fd);
	want[n++] = ip;
	if (kind == JIT_FRAME)
		want[n++] = jit_ret;
	if (kind != JIT_DATA) {
		want[n++] = call_ret;
		want[n++] = walk_ret;
		want[n++] = main_ret;
	}
	nr = user_stack_parse(buf, len, got, MAX_FRAMES, &ws);
	for (i = 0; i < nr && i < MAX_FRAMES; i++)
		ksft_print_msg("%s: frame %u: %#lx%s\n", what, i, got[i],
			       i >= n ? "" : got[i] == want[i] ? " (want)" :
			       " (want another)");
	for (i = 0; i < n; i++)
		ksft_print_msg("%s: want %u: %#lx\n", what, i, want[i]);
	/* Data in the register: nothing after the JIT frame. */
	if (nr < n || (kind == JIT_DATA && nr != n))
		return false;
	for (i = 0; i < n; i++)
		if (got[i] != want[i])
			return false;
	return true;
}

int main(void)
{
	unsigned char *jit;
	int fd;

	main_ret = (unsigned long)__builtin_return_address(0);
	ksft_print_header();
	ksft_set_plan(3);

	fd = open(STACK_FILE, O_RDONLY);
	if (fd < 0)
		ksft_exit_skip("%s: %s (needs CONFIG_UNWIND_TEST_CLIENT)\n",
			       STACK_FILE, strerror(errno));
	close(fd);
	/* Written, then made executable and read-only, as a JIT does. */
	jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (jit == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	memcpy(jit, jit_fp, sizeof(jit_fp));
	memcpy(jit + 64, jit_nofp, sizeof(jit_nofp));
	memcpy(jit + 128, jit_data, sizeof(jit_data));
	/* A policy may refuse executable anonymous memory: no JIT then. */
	if (mprotect(jit, 4096, PROT_READ | PROT_EXEC))
		ksft_exit_skip("mprotect(PROT_EXEC): %s\n", strerror(errno));

	/* jit_call() and main() keep frame pointers (the Makefile's CFLAGS). */
	ksft_test_result(walk("frame pointer", jit, (unsigned long)jit + JIT_FP_IP,
			      JIT_FRAME),
			 "JIT code with a frame pointer: itself, its caller at the call, and every frame above\n");
	ksft_test_result(walk("frameless", jit + 64,
			      (unsigned long)jit + 64 + JIT_NOFP_IP, JIT_FRAMELESS),
			 "frameless JIT code: itself, then its caller's caller and on (jit_call() left out, nothing made up)\n");
	ksft_test_result(walk("data in rbp", jit + 128,
			      (unsigned long)jit + 128 + JIT_DATA_IP, JIT_DATA),
			 "JIT code with data in the frame pointer register: the walk ends after it\n");

	munmap(jit, 4096);
	ksft_finished();
}

#else

int main(void)
{
	ksft_print_header();
	ksft_exit_skip("x86-64 machine code\n");
}

#endif
