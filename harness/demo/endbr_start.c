// SPDX-License-Identifier: GPL-2.0
/*
 * A program whose entry point begins with ENDBR64, as a CET-enabled crt1.o
 * does, and that exits at once: after execve() the walk of its stack
 * starts there, with argc at the stack pointer and a zero frame pointer.
 * Built with -nostdlib -static (see harness/build-progs.sh).
 */
asm(".globl _start\n"
    "_start:\n\t"
    "endbr64\n\t"
    "xor %ebp, %ebp\n\t"
    "mov $60, %eax\n\t"		/* exit(0) */
    "xor %edi, %edi\n\t"
    "syscall\n");
