// SPDX-License-Identifier: GPL-2.0
/* The kernel's SFrame reader, built for user space through shim.h. */
#define SFRAME_SHIM_IMPL
#include "shim.h"

const u8 *sframe_shim_buf;
size_t sframe_shim_len;
unsigned long sframe_shim_lo, sframe_shim_hi;

#include "../../kernel/unwind/sframe.c"

/*
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
