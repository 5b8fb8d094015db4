/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The made-up SFrame section that both tests of concurrent writers to
 * /dev/sframe_tables load: sframe_tables_race.c in the guest, and
 * harness/sframe/store_race.c against the kernel's sframe_store.c built in
 * user space. Version 2, one function of 16 bytes per FDE, each with two
 * rows (CFA = SP + 8 from its first byte; CFA = SP + 16 and FP saved at
 * CFA - 16 from its fifth), all in the text that the tests' headers give.
 */
#ifndef SFRAME_RACE_SECTION_H
#define SFRAME_RACE_SECTION_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define NFUNCS		64
#define FUNC_SIZE	16
#define SEC_HDR		28
#define FDE_SIZE	20
#define FRES_SIZE	7	/* the two rows of a function: 3 + 4 bytes */
#define SEC_SIZE	(SEC_HDR + NFUNCS * (FDE_SIZE + FRES_SIZE))
#define TEXT_VADDR	0x401000UL
#define SFRAME_VADDR	0x480000UL

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	put16(p, v);
	put16(p + 2, v >> 16);
}

/* The section into @sec (SEC_SIZE bytes); !@valid: its magic is wrong. */
static inline void build_section(uint8_t *sec, bool valid)
{
	uint8_t *fde, *fre;
	unsigned int i;

	memset(sec, 0, SEC_SIZE);
	put16(sec, 0xdee2);
	sec[2] = 2;			/* version */
	sec[3] = 0x1;			/* FDEs sorted */
	sec[4] = 3;			/* AMD64, little endian */
	sec[6] = (uint8_t)-8;		/* RA at CFA - 8 */
	put32(sec + 8, NFUNCS);
	put32(sec + 12, 2 * NFUNCS);
	put32(sec + 16, NFUNCS * FRES_SIZE);
	put32(sec + 24, NFUNCS * FDE_SIZE);
	for (i = 0; i < NFUNCS; i++) {
		fde = sec + SEC_HDR + i * FDE_SIZE;
		fre = sec + SEC_HDR + NFUNCS * FDE_SIZE + i * FRES_SIZE;
		put32(fde, TEXT_VADDR + i * FUNC_SIZE - SFRAME_VADDR);
		put32(fde + 4, FUNC_SIZE);
		put32(fde + 8, i * FRES_SIZE);
		put32(fde + 12, 2);
		fde[16] = 0;		/* 1-byte row starts, PCINC */
		fre[0] = 0;
		fre[1] = 0x03;		/* SP-based, one 1-byte word */
		fre[2] = 8;
		fre[3] = 4;
		fre[4] = 0x05;		/* SP-based, two 1-byte words */
		fre[5] = 16;
		fre[6] = (uint8_t)-16;
	}
	if (!valid)
		sec[0] ^= 0xff;
}

#endif /* SFRAME_RACE_SECTION_H */
