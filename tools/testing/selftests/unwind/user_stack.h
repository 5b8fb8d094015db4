/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test client's user_stack file: reading it walks the reader's user
 * stack from inside read(). It holds "nr=N ws=W", then one hexadecimal
 * address per line, innermost first.
 */
#ifndef _SELFTESTS_UNWIND_USER_STACK_H
#define _SELFTESTS_UNWIND_USER_STACK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kselftest.h"

#define STACK_FILE	"/sys/kernel/debug/unwind_test/user_stack"

/* Keep @n bytes of stack in use, so that each frame has its own size. */
#define USE_STACK(n)							\
	do {								\
		char pad[n];						\
		pad[0] = 1;						\
		asm volatile("" : : "r" (pad) : "memory");		\
	} while (0)

/*
 * Parse what read() of STACK_FILE gave: @len bytes in @buf (which has room
 * for one more), or a negative errno. At most @max addresses go to @got;
 * *@ws is set to the word size. Returns how many frames the kernel walked.
 * Malformed output ends the test.
 */
static inline unsigned int user_stack_parse(char *buf, long len,
					    unsigned long *got,
					    unsigned int max, unsigned int *ws)
{
	char *line, *save;
	unsigned int nr, i;

	if (len <= 0)
		ksft_exit_fail_msg("read: %s\n", strerror(-len));
	buf[len] = '\0';
	line = strtok_r(buf, "\n", &save);
	if (!line || sscanf(line, "nr=%u ws=%u", &nr, ws) != 2)
		ksft_exit_fail_msg("bad header\n");
	for (i = 0; i < nr && i < max; i++) {
		line = strtok_r(NULL, "\n", &save);
		if (!line)
			ksft_exit_fail_msg("short output\n");
		got[i] = strtoul(line, NULL, 16);
	}
	return nr;
}

#endif /* _SELFTESTS_UNWIND_USER_STACK_H */
