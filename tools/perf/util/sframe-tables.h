/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_SFRAME_TABLES_H
#define __PERF_SFRAME_TABLES_H

struct target;

void sframe_tables__load(struct target *target, const char *workload);

#endif /* __PERF_SFRAME_TABLES_H */
