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
 * Direct mode (the KUnit cases built for user space): sframe_start is a
 * real address in this process, and [lo, hi) the memory standing for the
 * mapped user pages; a read anywhere else is a fault, as in the kernel.
 */
extern unsigned long sframe_shim_lo, sframe_shim_hi;

/* Print the whole section as the reader decodes it (sframe_user.c). */
int sframe_user_dump(const struct sframe_section *sec);
/* Function start and size of FDE @i (sframe_user.c): 0 or -errno. */
int sframe_user_fde(const struct sframe_section *sec, u32 i,
		    unsigned long *start, u32 *size);

#ifdef SFRAME_SHIM_IMPL
/* Defined in sframe_user.c, once struct sframe_section is complete. */
static int sframe_access(const struct sframe_section *sec, unsigned long off,
			 void *buf, size_t len);
#endif

#endif
