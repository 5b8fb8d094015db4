/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Frames for the SFrame fixtures (harness/sframe/fixtures/) that compiled C
 * does not give: an outermost frame (undefined RA), a signal frame, the
 * return address saved away from the CFA's fixed slot (a V3 flexible FDE),
 * FRE start addresses of 2 and 4 bytes and data words of 2 and 4 bytes.
 * Never run: only their CFI matters.
 */
	.text

	.globl	sf_outermost
	.type	sf_outermost, @function
sf_outermost:
	.cfi_startproc
	.cfi_undefined rip
	xor	%ebp, %ebp
	call	sf_long
	hlt
	.cfi_endproc
	.size	sf_outermost, .-sf_outermost

	.globl	sf_signal
	.type	sf_signal, @function
	nop
sf_signal:
	.cfi_startproc simple
	.cfi_signal_frame
	.cfi_def_cfa rsp, 8
	.cfi_offset rip, -8
	mov	$15, %eax
	syscall
	.cfi_endproc
	.size	sf_signal, .-sf_signal

	/* Rows past offset 255: 2-byte FRE starts; CFA offsets of 2 bytes. */
	.globl	sf_mid
	.type	sf_mid, @function
sf_mid:
	.cfi_startproc
	sub	$0x400, %rsp
	.cfi_def_cfa_offset 0x408
	.skip	300, 0x90
	push	%rbx
	.cfi_def_cfa_offset 0x410
	.cfi_offset rbx, -0x410
	pop	%rbx
	.cfi_restore rbx
	.cfi_def_cfa_offset 0x408
	add	$0x400, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	sf_mid, .-sf_mid

	/* A frame-pointer frame over 64 KiB long: 4-byte FRE starts. */
	.globl	sf_long
	.type	sf_long, @function
sf_long:
	.cfi_startproc
	push	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset rbp, -16
	mov	%rsp, %rbp
	.cfi_def_cfa_register rbp
	sub	$0x12000, %rsp
	call	sf_mid
	.skip	70000, 0x90
	leave
	.cfi_def_cfa rsp, 8
	ret
	.cfi_endproc
	.size	sf_long, .-sf_long

	/* CFA offsets of 4 bytes. */
	.globl	sf_big_cfa
	.type	sf_big_cfa, @function
sf_big_cfa:
	.cfi_startproc
	sub	$0x20000, %rsp
	.cfi_def_cfa_offset 0x20008
	push	%rbp
	.cfi_def_cfa_offset 0x20010
	.cfi_offset rbp, -0x20010
	pop	%rbp
	.cfi_restore rbp
	.cfi_def_cfa_offset 0x20008
	add	$0x20000, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	sf_big_cfa, .-sf_big_cfa

	/*
	 * The return address moved to CFA-16, then the frame pointer saved
	 * while the return address is back in its fixed slot: V3 writes a
	 * flexible FDE.
	 */
	.globl	sf_ra_moved
	.type	sf_ra_moved, @function
sf_ra_moved:
	.cfi_startproc
	pop	%rax
	.cfi_def_cfa_offset 0
	.cfi_register rip, rax
	sub	$8, %rsp
	.cfi_def_cfa_offset 8
	push	%rax
	.cfi_def_cfa_offset 16
	.cfi_offset rip, -16
	pop	%rax
	.cfi_def_cfa_offset 8
	.cfi_register rip, rax
	push	%rax
	.cfi_def_cfa_offset 16
	.cfi_offset rip, -16
	add	$8, %rsp
	.cfi_def_cfa_offset 8
	.cfi_offset rip, -8
	push	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset rbp, -16
	pop	%rbp
	.cfi_restore rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	sf_ra_moved, .-sf_ra_moved

	.section .note.GNU-stack, "", @progbits
