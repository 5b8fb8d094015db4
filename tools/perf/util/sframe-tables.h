/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_SFRAME_TABLES_H
#define __PERF_SFRAME_TABLES_H

#include <sys/types.h>

struct sframe_tables;
struct target;

struct sframe_tables *sframe_tables__load(struct target *target,
					  const char *workload);
int sframe_tables__watch(struct sframe_tables *st, struct target *target,
			 pid_t workload);
void sframe_tables__stop(struct sframe_tables *st);
void sframe_tables__delete(struct sframe_tables *st);

#endif /* __PERF_SFRAME_TABLES_H */
