/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The files that processes map, reached as the very file a process maps
 * and opened only when the trust rule allows (mapped.c). Shared by
 * eh2sframe --pid/--all (load.c), which converts them, and unwindprof,
 * which symbolizes with them: both run as root for other users'
 * processes, so one rule serves both.
 */
#ifndef UNWIND_MAPPED_H
#define UNWIND_MAPPED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

/* A mounted file system: its device, and whether FUSE serves it. */
struct mnt {
	unsigned int	major;
	unsigned int	minor;
	bool		fuse;
};

struct mnts {
	struct mnt	*v;
	size_t		n;
	size_t		cap;
};

/**
 * struct mapped - a file that a process maps
 * @path:	its path, as /proc/PID/maps shows it: only a name, for
 *		messages and for the fallback open (see open_mapped())
 * @pid:	the process
 * @range:	"START-END" of one of its mappings of the file, the name of
 *		its entry in /proc/PID/map_files
 * @major:	the device /proc/PID/maps shows for it
 * @minor:	...
 * @ino:	its inode number
 * @fuse:	it is on FUSE (1), or on a file system that neither the
 *		process nor we have mounted (-1; lazily unmounted)
 */
struct mapped {
	char			*path;
	char			pid[16];
	char			range[40];
	unsigned int		major;
	unsigned int		minor;
	unsigned long long	ino;
	int			fuse;
};

/**
 * struct maps_line - the rest of a line of /proc/PID/maps
 * @start:	first address of the mapping
 * @end:	one past its last
 * @perms:	"r-xp" and the like
 */
struct maps_line {
	unsigned long long	start;
	unsigned long long	end;
	char			perms[8];
};

bool read_line(FILE *f, char *buf, size_t size);
void read_mounts(const char *pid, struct mnts *m);
bool parse_mapping(char *line, const char *pid, const struct mnts *mnts,
		   const struct mnts *self, struct mapped *m,
		   struct maps_line *l);
bool untrusted(const struct stat *st, char *why, size_t size);
int open_mapped(const struct mapped *m, const char **how, char *why,
		size_t size);

#endif /* UNWIND_MAPPED_H */
