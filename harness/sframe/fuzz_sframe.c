// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the kernel's SFrame reader (user-space build).
 *
 * Input: 16 bytes of parameters, then the section.
 *   0  u64 lookup address offset from the section start (also used for
 *      three neighbours)
 *   8  u32 text window size below and above the section, 0: everything
 *   12 u32 unused
 * The section bytes are the tail of the input, so ASan sees any read past
 * them, and the shim aborts on a read outside them. Besides "no crash", it
 * checks one property: a section that sframe_validate() accepts never
 * makes sframe_find() report it malformed.
 */
#include <stdio.h>
#include <stdlib.h>
#include "shim.h"
#include "../../kernel/unwind/sframe.h"

#define PARAMS		16
#define SEC_ADDR	0x7f0000000000UL

static u64 get64(const u8 *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static u32 get32(const u8 *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Field by field: the padding of the frame description is not set. */
static bool same_frame(const struct unwind_user_frame *a,
		       const struct unwind_user_frame *b)
{
	return a->cfa_off == b->cfa_off && a->ra_off == b->ra_off &&
	       a->fp_off == b->fp_off && a->use_fp == b->use_fp;
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct sframe_section sec = { 0 };
	struct unwind_user_frame frame, cframe;
	struct sframe_cache cache = { 0 };
	unsigned long ip;
	u32 window;
	int valid, ret, cret, i, j;

	if (size < PARAMS + 1)
		return 0;
	ip = SEC_ADDR + get64(data);
	window = get32(data + 8);

	sframe_shim_buf = data + PARAMS;
	sframe_shim_len = size - PARAMS;
	sec.sframe_start = SEC_ADDR;
	sec.sframe_end = SEC_ADDR + sframe_shim_len;
	if (window) {
		sec.text_start = SEC_ADDR - window;
		sec.text_end = SEC_ADDR + window;
	} else {
		sec.text_start = 0;
		sec.text_end = ~0UL;
	}

	if (sframe_init(&sec))
		return 0;
	valid = sframe_validate(&sec);
	if (valid != 0 && valid != -EINVAL)
		abort();

	for (i = -1; i <= 2; i++) {
		ret = sframe_find(&sec, ip + i, &frame);
		if (ret != 0 && ret != SFRAME_OUTERMOST && ret != -ENOENT &&
		    ret != -EINVAL && ret != -EOPNOTSUPP)
			abort();
		if (!valid && ret == -EINVAL) {
			fprintf(stderr, "validated section malformed at %#lx\n",
				ip + i);
			abort();
		}
		/*
		 * On a section that passes validation (sorted FDEs that do not
		 * overlap), the cached lookup, fed the addresses in the order
		 * a walk could meet them (each twice), must answer exactly as
		 * the uncached one. On a malformed section that the lookup did
		 * not catch, both answers are made-up rows of that section.
		 */
		for (j = 0; !valid && j < 2; j++) {
			cret = sframe_find_cached(&sec, &cache, ip + i, &cframe);
			if (cret != ret ||
			    (!ret && !same_frame(&cframe, &frame))) {
				fprintf(stderr, "cached lookup of %#lx: %d, uncached %d\n",
					ip + i, cret, ret);
				abort();
			}
		}
	}
	return 0;
}
