// SPDX-License-Identifier: GPL-2.0
/* The kernel's SFrame reader, built for user space through shim.h. */
#define SFRAME_SHIM_IMPL
#include <stdio.h>
#include "shim.h"

const u8 *sframe_shim_buf;
size_t sframe_shim_len;
unsigned long sframe_shim_lo, sframe_shim_hi;

#include "../../kernel/unwind/sframe.c"

/*
 * A table loaded into the kernel (sframe_store.c) has its bytes at ->kdata,
 * read as the kernel's accessor reads them; a read outside them is a reader
 * bug, as in buffer mode.
 *
 * Buffer mode (tools, fuzzer): the section is sframe_shim_buf. The reader
 * must have checked [off, off + len) against the section already (the
 * kernel's accessor would read whatever user memory lies there), so a read
 * outside the buffer is a reader bug: abort, so that the fuzzer reports it
 * as a crash instead of it passing as a fault.
 *
 * Direct mode (the KUnit cases built for user space): sframe_start is a
 * real address in this process and [sframe_shim_lo, sframe_shim_hi) the
 * memory standing for the mapped user pages; a read anywhere else is a
 * fault, as in the kernel.
 */
static int sframe_access(const struct sframe_section *sec, unsigned long off,
			 void *buf, size_t len)
{
	unsigned long addr = sec->sframe_start + off;

	if (sec->kdata) {
		if (off > sframe_size(sec) || len > sframe_size(sec) - off)
			abort();
		memcpy(buf, sec->kdata + off, len);
		return 0;
	}
	if (sframe_shim_hi) {
		if (addr < sframe_shim_lo || addr > sframe_shim_hi ||
		    len > sframe_shim_hi - addr)
			return -EFAULT;
		memcpy(buf, (const void *)addr, len);
		return 0;
	}
	if (off > sframe_shim_len || len > sframe_shim_len - off)
		abort();
	memcpy(buf, sframe_shim_buf + off, len);
	return 0;
}

/*
 * Print every FDE and FRE as the reader itself decodes them, for the
 * comparison with readelf --sframe (fixtures.sh). One line each:
 *   header VERSION FLAGS NUM_FDES NUM_FRES
 *   fde FUNC_START FUNC_SIZE NUM_FRES PCMASK REP_SIZE SIGNAL TYPE
 *   fre START ok BASE CFA_OFF RA_OFF FP_OFF | fre START outermost |
 *   fre START err ERRNO
 * where an FRE's START is its offset into the function (or into the
 * repeated block of a PCMASK FDE). A failure to read an FDE or FRE prints
 * "fde err ERRNO" or "fre err ERRNO" and ends that FDE, or the dump.
 * Returns 0, or the first error.
 */
int sframe_user_dump(const struct sframe_section *sec)
{
	struct unwind_user_frame frame;
	struct sframe_fde fde;
	struct sframe_fre fre;
	unsigned long pos;
	int ret, err = 0;
	u32 i, j;

	printf("header %u %#x %u %u\n", sec->version, sec->flags,
	       sec->num_fdes, sec->num_fres);
	for (i = 0; i < sec->num_fdes; i++) {
		ret = sframe_read_fde(sec, i, &fde, true);
		if (ret) {
			printf("fde err %d\n", ret);
			return ret;
		}
		printf("fde %#lx %u %u %d %u %d %u\n", fde.func_start,
		       fde.func_size, fde.num_fres, fde.pcmask, fde.rep_size,
		       fde.signal, fde.type);
		pos = fde.fres_pos;
		for (j = 0; j < fde.num_fres; j++) {
			ret = sframe_read_fre(sec, NULL, &fde, &pos, &fre);
			if (ret) {
				printf("fre err %d\n", ret);
				err = err ?: ret;
				break;
			}
			ret = sframe_decode_fre(sec, NULL, &fde, &fre, &frame);
			if (ret == SFRAME_OUTERMOST)
				printf("fre %#x outermost\n", fre.start);
			else if (ret)
				printf("fre %#x err %d\n", fre.start, ret);
			else
				printf("fre %#x ok %s %d %d %d\n", fre.start,
				       frame.use_fp ? "fp" : "sp",
				       frame.cfa_off, frame.ra_off,
				       frame.fp_off);
		}
	}
	return err;
}

/* Where FDE @i's function lies, as the reader decodes it: 0 or -errno. */
int sframe_user_fde(const struct sframe_section *sec, u32 i,
		    unsigned long *start, u32 *size)
{
	struct sframe_fde fde;
	int ret;

	ret = sframe_read_fde(sec, i, &fde, true);
	if (ret)
		return ret;
	*start = fde.func_start;
	*size = fde.func_size;
	return 0;
}
