// SPDX-License-Identifier: GPL-2.0
/* The kernel's SFrame reader, built for user space through shim.h. */
#include "shim.h"

const u8 *sframe_shim_buf;
size_t sframe_shim_len;

#include "../../kernel/unwind/sframe.c"
