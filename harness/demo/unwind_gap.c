// SPDX-License-Identifier: GPL-2.0
/*
 * A walk from code whose CFI SFrame cannot express (review m10).
 *
 * gap() keeps its CFA in rbx while it realigns the stack, as ld.so's
 * lazy-binding trampoline _dl_runtime_resolve_xsavec does, and makes its
 * system call (a read() of the test client's user_stack file, which walks
 * the stack) with rbp pointing at a decoy frame in its caller's frame: a
 * frame-pointer guess finds the decoy's return address, which is no frame
 * of the stack. The program has neither frame pointers nor SFrame. Its
 * table from eh2sframe describes gap()'s rows up to the switch to rbx, and
 * marks the rest as a stop, where the walk must end.
 *
 *   unwind_gap		exit 0 when the walk ends in gap(): one frame, the
 *			address after its system call (a table is loaded)
 *   unwind_gap -n	exit 0 when the walk goes on to the decoy (no table:
 *			frame pointers, which the decoy fools)
 *
 * It prints the frames as "# frame N: ADDR". Exit status 1: the other
 * answer; 2: the walk could not be made.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "user_stack.h"

#define DEPTH	4

/* gap(fd, buf, len, &ip, decoy): read(fd, buf, len); *ip = after syscall */
long gap(int fd, char *buf, long len, unsigned long *ip, unsigned long *decoy);
asm(".text\n"
    ".globl gap\n"
    ".type gap, @function\n"
    "gap:\n"
    "	.cfi_startproc\n"
    "	push %rbx\n"
    "	.cfi_def_cfa_offset 16\n"
    "	.cfi_offset %rbx, -16\n"
    "	push %rbp\n"
    "	.cfi_def_cfa_offset 24\n"
    "	.cfi_offset %rbp, -24\n"
    "	mov %rsp, %rbx\n"
    "	.cfi_def_cfa_register %rbx\n"
    "	and $-64, %rsp\n"
    "	mov %r8, %rbp\n"
    "	lea 1f(%rip), %rax\n"
    "	mov %rax, (%rcx)\n"
    "	xor %eax, %eax\n"		/* SYS_read */
    "	syscall\n"
    "1:	mov %rbx, %rsp\n"
    "	.cfi_def_cfa_register %rsp\n"
    "	pop %rbp\n"
    "	.cfi_def_cfa_offset 16\n"
    "	pop %rbx\n"
    "	.cfi_def_cfa_offset 8\n"
    "	ret\n"
    "	.cfi_endproc\n"
    ".size gap, .-gap\n");

/* Its address, plus one, is the decoy's return address. */
static void __attribute__((noinline)) decoy_target(void)
{
	asm volatile("");
}

int main(int argc, char **argv)
{
	unsigned long got[DEPTH], ip = 0, decoy_ra;
	/* The decoy frame: a saved rbp of 0, then a return address. */
	volatile unsigned long decoy[2];
	bool no_table = argc > 1 && !strcmp(argv[1], "-n");
	static char buf[4096];
	unsigned int nr, ws, i;
	long len;
	int fd;

	decoy_ra = (unsigned long)decoy_target + 1;
	decoy[0] = 0;
	decoy[1] = decoy_ra;
	fd = open(STACK_FILE, O_RDONLY);
	if (fd < 0) {
		perror(STACK_FILE);
		return 2;
	}
	len = gap(fd, buf, sizeof(buf) - 1, &ip, (unsigned long *)decoy);
	close(fd);
	if (len <= 0) {
		printf("# read: %ld\n", len);
		return 2;
	}
	nr = user_stack_parse(buf, len, got, DEPTH, &ws);
	for (i = 0; i < nr && i < DEPTH; i++)
		printf("# frame %u: %#lx\n", i, got[i]);
	printf("# after the system call %#lx, decoy %#lx\n", ip, decoy_ra);
	if (!nr || got[0] != ip)
		return 2;
	if (no_table)
		return nr >= 2 && got[1] == decoy_ra ? 0 : 1;
	return nr == 1 ? 0 : 1;
}
