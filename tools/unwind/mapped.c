// SPDX-License-Identifier: GPL-2.0
/*
 * The files that processes map, for root's tools that read them on other
 * users' behalf: eh2sframe --pid/--all converts them and loads the table
 * for every process that maps a file of that build-id (load.c), unwindprof
 * parses their ELF and DWARF to name the frames of every process it
 * profiles. Neither may be made to read a file another user controls, nor
 * to open whatever a mapped file's path names by now.
 *
 * Trust: a mapped file is read only when nobody but root or the invoking
 * (real) user can have written it: a regular file owned by uid 0 or by
 * getuid(), not writable by its group or by others, not on FUSE (whose
 * server makes up owners and contents).
 *
 * A mapped file is reached as the very file the process maps, never by
 * looking its path up again as whatever it names now (another file, a
 * FIFO that blocks, a device whose open does something, a file of another
 * mount namespace): through /proc/PID/map_files/START-END, or, where that
 * is refused (it needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE), by its
 * path with O_PATH | O_NOFOLLOW, which opens nothing, and only if that is
 * the regular file of the device and inode /proc/PID/maps shows. The
 * checks are made on that descriptor, and again on the one opened from it
 * for reading.
 */
#define _GNU_SOURCE		/* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mapped.h"

/*
 * One line of @f into @buf, without its newline. A line longer than @buf
 * is skipped whole: its tail must not be read as a line of its own (a
 * path in /proc/PID/maps is the mapping process's to choose).
 */
bool read_line(FILE *f, char *buf, size_t size)
{
	size_t len;

	while (fgets(buf, size, f)) {
		len = strlen(buf);
		if (len && buf[len - 1] == '\n') {
			buf[len - 1] = '\0';
			return true;
		}
		if (feof(f))
			return true;
		while (fgets(buf, size, f) && !strchr(buf, '\n'))
			;
	}
	return false;
}

/* The file systems /proc/@pid/mountinfo lists ("self": ours), into @m. */
void read_mounts(const char *pid, struct mnts *m)
{
	char path[64], line[2 * PATH_MAX + 256];
	FILE *f;

	m->n = 0;
	snprintf(path, sizeof(path), "/proc/%s/mountinfo", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (read_line(f, line, sizeof(line))) {
		/* The type follows the optional fields' end, " - ". */
		char *type = strstr(line, " - ");
		unsigned int maj, min;

		if (!type || sscanf(line, "%*u %*u %u:%u", &maj, &min) != 2)
			continue;
		if (m->n == m->cap) {
			struct mnt *v = realloc(m->v, (m->cap * 2 + 16) * sizeof(*v));

			if (!v)
				break;
			m->v = v;
			m->cap = m->cap * 2 + 16;
		}
		m->v[m->n].major = maj;
		m->v[m->n].minor = min;
		/* "fuse", "fuseblk", "fuse.sshfs", ... */
		m->v[m->n].fuse = !strncmp(type + 3, "fuse", 4);
		m->n++;
	}
	fclose(f);
}

/* Is device @maj:@min in @m FUSE (1), another file system (0), absent (-1)? */
static int mnt_fuse(const struct mnts *m, unsigned int maj, unsigned int min)
{
	size_t i;
	int ret = -1;

	/* One device may be mounted many times; FUSE on any of them counts. */
	for (i = 0; i < m->n && ret < 1; i++)
		if (m->v[i].major == maj && m->v[i].minor == min)
			ret = m->v[i].fuse;
	return ret;
}

/**
 * parse_mapping - read a line of /proc/PID/maps as a mapping of a file
 * @line:	the line (read_line()); @m->path is left pointing into it
 * @pid:	whose maps it is
 * @mnts:	the file systems @pid has mounted (read_mounts())
 * @self:	those we have mounted, for a device @mnts lacks
 * @m:		set to the file
 * @l:		set to the mapping's addresses and permissions
 *
 * Nothing is opened or checked here: see open_mapped().
 *
 * Return: true for a mapping of a file, false for anything else
 * (anonymous memory, [stack], [vdso], a line that does not parse).
 */
bool parse_mapping(char *line, const char *pid, const struct mnts *mnts,
		   const struct mnts *self, struct mapped *m,
		   struct maps_line *l)
{
	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%llx-%llx %7s %*s %x:%x %llu", &l->start, &l->end,
		   l->perms, &m->major, &m->minor, &m->ino) != 6 || !m->ino)
		return false;
	m->path = strchr(line, '/');
	if (!m->path)
		return false;
	snprintf(m->pid, sizeof(m->pid), "%s", pid);
	/* As map_files names it: maps pads addresses to 8 digits. */
	snprintf(m->range, sizeof(m->range), "%llx-%llx", l->start, l->end);
	m->fuse = mnt_fuse(mnts, m->major, m->minor);
	if (m->fuse < 0)
		m->fuse = mnt_fuse(self, m->major, m->minor);
	return true;
}

/*
 * Why the file @st describes is not to be read for anyone but its owner,
 * into @why; or false when it may be. See the top of this file.
 */
bool untrusted(const struct stat *st, char *why, size_t size)
{
	mode_t w = st->st_mode & 0022;	/* write for group, for others */

	if (!S_ISREG(st->st_mode)) {
		snprintf(why, size, "not a regular file (%s)",
			 S_ISFIFO(st->st_mode) ? "a FIFO" :
			 S_ISLNK(st->st_mode) ? "a symbolic link" :
			 S_ISCHR(st->st_mode) ? "a character device" :
			 S_ISBLK(st->st_mode) ? "a block device" :
			 S_ISDIR(st->st_mode) ? "a directory" :
			 S_ISSOCK(st->st_mode) ? "a socket" : "of unknown type");
		return true;
	}
	if (st->st_uid != 0 && st->st_uid != getuid()) {
		snprintf(why, size, "owned by uid %u", (unsigned int)st->st_uid);
		return true;
	}
	if (w) {
		snprintf(why, size, "writable by %s (mode %04o)",
			 w == 0020 ? "its group" :
			 w == 0002 ? "others" : "its group and others",
			 (unsigned int)(st->st_mode & 07777));
		return true;
	}
	return false;
}

/**
 * open_mapped - open the file that a process maps, if it may be read
 * @m:		the file, as /proc/PID/maps showed it
 * @how:	set to how it was reached, for -v
 * @why:	set to why not, when it is not opened
 * @size:	room in @why
 *
 * Nothing but an O_PATH descriptor is made until the file is known to be
 * the regular file @m describes and passes untrusted(): a FIFO, a device,
 * another user's file are never opened. The descriptor returned is opened
 * from that one, through its /proc/self/fd link (the same file, whatever
 * its path names now), with O_NONBLOCK (a lease its owner holds cannot
 * stall us), and checked again.
 *
 * Return: a descriptor open for reading, or -1.
 */
int open_mapped(const struct mapped *m, const char **how, char *why,
		size_t size)
{
	char p[64 + sizeof(m->range)];
	struct stat st;
	bool by_path = false;
	int pfd, fd;

	if (m->fuse) {
		snprintf(why, size, "%s", m->fuse > 0 ?
			 "on FUSE, whose server decides its owner and contents" :
			 "on a file system that is not mounted");
		return -1;
	}
	/*
	 * map_files gives the mapped file itself, whatever the maps line
	 * says about it and in whichever mount namespace it lives: even if
	 * the range was mapped again since, it is a file the process maps.
	 */
	snprintf(p, sizeof(p), "/proc/%s/map_files/%s", m->pid, m->range);
	*how = "/proc/PID/map_files";
	pfd = open(p, O_PATH | O_CLOEXEC);
	if (pfd < 0) {
		/*
		 * Without CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE, or once the
		 * process has gone: by path, only if the path still names the
		 * mapped file. A symbolic link is not followed (O_NOFOLLOW
		 * gives the link itself, refused below), and one in a
		 * directory above is caught by the inode check.
		 */
		*how = "its path, checked against the device and inode in maps";
		by_path = true;
		pfd = open(m->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (pfd < 0) {
			snprintf(why, size, "%s", strerror(errno));
			return -1;
		}
	}
	if (fstat(pfd, &st)) {
		snprintf(why, size, "%s", strerror(errno));
		goto fail;
	}
	/*
	 * The type first: a FIFO or device at the path is reported as what it
	 * is. stat()'s device may differ from the one maps shows for a file
	 * that is the mapped one (btrfs subvolumes, overlayfs): then it is
	 * refused too, which can cost a table, never load a wrong one.
	 */
	if (S_ISREG(st.st_mode) && by_path &&
	    (major(st.st_dev) != m->major || minor(st.st_dev) != m->minor ||
	     st.st_ino != m->ino)) {
		snprintf(why, size,
			 "not the file process %s maps (its path names another now, or in another mount namespace)",
			 m->pid);
		goto fail;
	}
	if (untrusted(&st, why, size))
		goto fail;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", pfd);
	fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, size, "%s", strerror(errno));
		goto fail;
	}
	close(pfd);
	/* The descriptor that is read: its own checks, not the path's. */
	if (fstat(fd, &st)) {
		snprintf(why, size, "%s", strerror(errno));
		close(fd);
		return -1;
	}
	if (untrusted(&st, why, size)) {
		close(fd);
		return -1;
	}
	return fd;
fail:
	close(pfd);
	return -1;
}
