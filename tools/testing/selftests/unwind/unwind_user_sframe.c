// SPDX-License-Identifier: GPL-2.0
/*
 * Walk the user stack of a program built without frame pointers, through
 * its SFrame section, and compare it with the program's own call chain,
 * main -> a -> b -> c.
 *
 * Built with -O2 -fomit-frame-pointer -Wa,--gsframe: no function keeps a
 * frame pointer, and each keeps some stack of its own, so the CFA of every
 * frame is the stack pointer plus a function-specific offset that only the
 * SFrame section knows. c() makes a read() of the test client's user_stack
 * file with an inline system call instruction and, for that instruction
 * only, sets RBP to 1: a frame-pointer walk would stop at the first frame,
 * so only an SFrame walk can find the callers. Each function records its
 * own return address, so the expected trace is exact.
 */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest.h"
#include "sframe_chain.h"

/* Walk from c(); the number of frames matching the chain from the innermost. */
static int walk(void)
{
	unsigned long got[DEPTH];
	unsigned int nr, ws, i;

	fd = open(STACK_FILE, O_RDONLY);
	if (fd < 0)
		ksft_exit_skip("%s: %s (needs CONFIG_UNWIND_TEST_CLIENT)\n",
			       STACK_FILE, strerror(errno));
	a();
	close(fd);
	nr = user_stack_parse(buf, nread, got, DEPTH, &ws);
	for (i = 0; i < DEPTH; i++)
		ksft_print_msg("pid %d frame %u: %#lx%s, expected %#lx\n", getpid(), i,
			       i < nr ? got[i] : 0,
			       i < nr && got[i] == expected[i] ? "" : " (mismatch)",
			       expected[i]);
	for (i = 0; i < nr && i < DEPTH; i++)
		if (got[i] != expected[i])
			break;
	return i;
}

/* The same walk in a child: after fork(), or after it exec()s this program. */
static int in_child(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 0;
	if (!pid) {
		if (argv) {
			execv("/proc/self/exe", argv);
			_exit(99);
		}
		_exit(walk() == DEPTH ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
	char *const exec_argv[] = { argv[0], "--walk", NULL };

	/* The exec'd program: only the walk, its result as exit status. */
	if (argc > 1 && !strcmp(argv[1], "--walk"))
		return walk() == DEPTH ? 0 : 1;

	ksft_print_header();
	ksft_set_plan(3);
	ksft_test_result(walk() == DEPTH,
			 "no frame pointers: the SFrame walk matches the call chain exactly\n");
	/* A fork child shares the parent's mappings and their sections. */
	ksft_test_result(in_child(NULL), "the same in a fork child\n");
	ksft_test_result(in_child(exec_argv), "the same in an exec'd program\n");
	ksft_finished();
}
