/* SPDX-License-Identifier: GPL-2.0 */
/* copy_to_user() comes from kinc/kunit/test.h in the user-space build. */
