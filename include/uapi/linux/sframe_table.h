/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * SFrame tables loaded by user space for one ELF file, identified by its
 * GNU build-id, through /dev/sframe_tables. See
 * Documentation/trace/unwind_user_sframe.rst.
 */
#ifndef _UAPI_LINUX_SFRAME_TABLE_H
#define _UAPI_LINUX_SFRAME_TABLE_H

#include <linux/types.h>

#define SFRAME_TABLE_MAGIC		0x42544653	/* "SFTB" */
#define SFRAME_TABLE_VERSION		1
#define SFRAME_TABLE_BUILD_ID_MAX	20

/**
 * struct sframe_table_hdr - what precedes an SFrame section written to
 * /dev/sframe_tables
 * @magic:		%SFRAME_TABLE_MAGIC
 * @version:		%SFRAME_TABLE_VERSION
 * @build_id_len:	bytes of @build_id in use, 1 to
 *			%SFRAME_TABLE_BUILD_ID_MAX
 * @flags:		0
 * @build_id:		the GNU build-id (NT_GNU_BUILD_ID) of the file
 * @sframe_size:	bytes of the SFrame section that follow this header
 * @sframe_vaddr:	the virtual address, in the file's own address space
 *			(load bias 0), that the section's addresses are
 *			relative to, as if the file had the section there
 * @text_vaddr:		first code address, in the same space, that the
 *			section describes
 * @text_size:		bytes of code from @text_vaddr that it describes
 *
 * All fields are in the host's byte order. The section must be an SFrame
 * section for x86-64 that the kernel reads (versions 1, 2 or 3), sorted,
 * and valid as a whole: it is checked in full before it is accepted.
 */
struct sframe_table_hdr {
	__u32	magic;
	__u16	version;
	__u8	build_id_len;
	__u8	flags;
	__u8	build_id[SFRAME_TABLE_BUILD_ID_MAX];
	__u32	sframe_size;
	__u64	sframe_vaddr;
	__u64	text_vaddr;
	__u64	text_size;
};

#endif /* _UAPI_LINUX_SFRAME_TABLE_H */
