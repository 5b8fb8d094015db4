/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space shim for kernel/unwind/sframe.c: the kernel types and macros it
 * uses, and sframe_access() reading from a buffer in this process instead of
 * user memory. The buffer stands for the section; sframe_start is the
 * address the section would have, so PC-relative starts come out as in the
 * program.
 */
#ifndef SFRAME_SHIM_H
#define SFRAME_SHIM_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SFRAME_USER_SHIM 1

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#define EXPORT_SYMBOL_IF_KUNIT(sym)

/* The walker's frame description, from the series' own header. */
#include <linux/unwind_user_types.h>

struct sframe_section;

/* The bytes sframe_access() reads: set by the tool before each use. */
extern const u8 *sframe_shim_buf;
extern size_t sframe_shim_len;

/*
 * The reader must have checked [off, off + len) against the section already
 * (the kernel's accessor would read whatever user memory lies there). A
 * read outside the buffer is therefore a reader bug: abort, so that the
 * fuzzer reports it as a crash instead of it passing as a fault.
 */
static inline int sframe_access(const struct sframe_section *sec,
				unsigned long off, void *buf, size_t len)
{
	(void)sec;
	if (off > sframe_shim_len || len > sframe_shim_len - off)
		abort();
	memcpy(buf, sframe_shim_buf + off, len);
	return 0;
}

#endif
