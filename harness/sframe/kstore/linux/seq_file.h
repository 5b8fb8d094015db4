/* SPDX-License-Identifier: GPL-2.0 */
/* Stub for the user-space build of sframe_store.c: see ../../shim_store.h. */
#include "../../shim_store.h"
