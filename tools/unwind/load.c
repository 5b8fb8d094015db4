// SPDX-License-Identifier: GPL-2.0
/*
 * eh2sframe --load, --remove, --list: the kernel's store of SFrame tables,
 * /dev/sframe_tables (Documentation/trace/unwind_user_sframe.rst).
 *
 * A table is written as a struct sframe_table_hdr followed by the section,
 * one table per open of the device, and is keyed by the file's GNU
 * build-id: it then serves every process, now or later, that maps a file
 * with that build-id. Opening the device needs CAP_PERFMON or
 * CAP_SYS_ADMIN.
 *
 * Which files: the ones named, and with --needed their program
 * interpreter and the libraries they need (DT_NEEDED, found as ld.so finds
 * them), with --pid the files a process has mapped executable, with --all
 * those of every process.
 *
 * Trust. A table serves every process that maps a file with its build-id,
 * and the first one loaded for a build-id stays. A build-id is only a note
 * in the file: anyone can link a library that claims another's. The files
 * named on the command line (and what --needed finds for them) are the
 * invoker's own choice. The files of --pid and --all are not: they are
 * whatever other users' processes map, and perf runs this for them, as
 * root, by default. So a mapped file is converted only when nobody but
 * root or the invoking (real) user can have written it: a regular file
 * owned by uid 0 or by getuid(), not writable by its group or by others,
 * not on FUSE (whose server makes up owners and contents). Anything else
 * is skipped with one line on stderr saying why; that is not an error.
 *
 * The rule and the open are mapped.c's, which unwindprof shares: a mapped
 * file is reached as the very file the process maps, never by
 * looking its path up again as whatever it names now (another file, a
 * FIFO that blocks, a device whose open does something, a file of another
 * mount namespace): through /proc/PID/map_files/START-END, or, where that
 * is refused (it needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE), by its
 * path with O_PATH | O_NOFOLLOW, which opens nothing, and only if that is
 * the regular file of the device and inode /proc/PID/maps shows. The
 * checks are made on that descriptor, and again on the one opened from it
 * for reading, whose own /proc/self/fd link is then all the build-id and
 * the conversion ever open.
 */
#define _GNU_SOURCE		/* O_PATH */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../include/uapi/linux/sframe_table.h"
#include "eh2sframe.h"
#include "mapped.h"

/* A list of strings, each malloc()ed, without duplicates. */
struct strs {
	char	**v;
	size_t	n;
	size_t	cap;
};

static bool strs_has(const struct strs *s, const char *str)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return true;
	return false;
}

/* Add a copy of @str unless it is there. Returns -1 when out of memory. */
static int strs_add(struct strs *s, const char *str)
{
	char **v;

	if (strs_has(s, str))
		return 0;
	if (s->n == s->cap) {
		v = realloc(s->v, (s->cap * 2 + 16) * sizeof(*v));
		if (!v)
			return -1;
		s->v = v;
		s->cap = s->cap * 2 + 16;
	}
	s->v[s->n] = strdup(str);
	if (!s->v[s->n])
		return -1;
	s->n++;
	return 0;
}

static void strs_free(struct strs *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Add each @sep-separated item of @list. */
static int strs_split(struct strs *s, const char *list, const char *sep)
{
	char *copy = strdup(list), *save = NULL, *item;
	int ret = 0;

	if (!copy)
		return -1;
	for (item = strtok_r(copy, sep, &save); item && !ret;
	     item = strtok_r(NULL, sep, &save))
		ret = strs_add(s, item);
	free(copy);
	return ret;
}

static bool is_regular(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* The open file @fd is a 64-bit x86-64 ELF file, as ld.so would accept. */
static bool fd_is_x86_64_elf(int fd)
{
	unsigned char e[20];

	return pread(fd, e, sizeof(e), 0) == (ssize_t)sizeof(e) &&
	       !memcmp(e, ELFMAG, SELFMAG) && e[EI_CLASS] == ELFCLASS64 &&
	       e[EI_DATA] == ELFDATA2LSB && e[18] == EM_X86_64 && !e[19];
}

/* A 64-bit x86-64 ELF file, as ld.so would accept for this process. */
static bool is_x86_64_elf(const char *path)
{
	bool ok;
	int fd;

	if (!is_regular(path))
		return false;
	/* Not stuck if a FIFO took the regular file's place since stat(). */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = fd_is_x86_64_elf(fd);
	close(fd);
	return ok;
}

/* The canonical path of @path, or NULL. */
static char *canonical(const char *path)
{
	return realpath(path, NULL);
}

/* A program named without '/' is looked up in PATH, as a shell would. */
static char *find_program(const char *name)
{
	char *path, *dir, *save = NULL, *found = NULL;
	char buf[PATH_MAX];

	if (strchr(name, '/'))
		return canonical(name);
	path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	if (!path)
		return NULL;
	for (dir = strtok_r(path, ":", &save); dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/%s", *dir ? dir : ".", name);
		if (is_regular(buf) && !access(buf, X_OK))
			found = canonical(buf);
	}
	free(path);
	return found;
}

/* The directories of /etc/ld.so.conf and the files it includes. */
static void read_ld_so_conf(const char *conf, struct strs *dirs, int depth)
{
	char line[PATH_MAX + 16];
	FILE *f;

	if (depth > 8)
		return;
	f = fopen(conf, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		end = strchr(p, '#');
		if (end)
			*end = '\0';
		while (isspace((unsigned char)*p))
			p++;
		end = p + strlen(p);
		while (end > p && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (!*p)
			continue;
		if (!strncmp(p, "include", 7) && isspace((unsigned char)p[7])) {
			char pat[PATH_MAX];
			glob_t g;
			size_t i;

			p += 8;
			while (isspace((unsigned char)*p))
				p++;
			if (*p == '/')
				snprintf(pat, sizeof(pat), "%s", p);
			else
				snprintf(pat, sizeof(pat), "/etc/%s", p);
			if (glob(pat, 0, NULL, &g))
				continue;
			for (i = 0; i < g.gl_pathc; i++)
				read_ld_so_conf(g.gl_pathv[i], dirs, depth + 1);
			globfree(&g);
			continue;
		}
		if (*p == '/')
			strs_add(dirs, p);
	}
	fclose(f);
}

/* Where ld.so looks last, after LD_LIBRARY_PATH, RUNPATH and its cache. */
static const char *const default_dirs =
	"/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib";

/* @dir with $ORIGIN (and ${ORIGIN}) replaced by @origin. */
static void expand_origin(const char *dir, const char *origin, char *out,
			  size_t size)
{
	size_t n = 0;

	while (*dir && n + 1 < size) {
		size_t skip = !strncmp(dir, "$ORIGIN", 7) ? 7 :
			      !strncmp(dir, "${ORIGIN}", 9) ? 9 : 0;

		if (skip) {
			n += snprintf(out + n, size - n, "%s", origin);
			if (n >= size)
				n = size - 1;
			dir += skip;
		} else {
			out[n++] = *dir++;
		}
	}
	out[n] = '\0';
}

/* Look @name up in the ':'-separated @dirs; the path found, or NULL. */
static char *search_dirs(const char *name, const char *dirs,
			 const char *origin)
{
	struct strs list = { 0 };
	char dir[PATH_MAX], buf[PATH_MAX];
	char *found = NULL;
	size_t i;

	if (!dirs || strs_split(&list, dirs, ":"))
		goto out;
	for (i = 0; i < list.n && !found; i++) {
		expand_origin(list.v[i], origin, dir, sizeof(dir));
		if (snprintf(buf, sizeof(buf), "%s/%s", dir, name) >=
		    (int)sizeof(buf))
			continue;
		if (is_x86_64_elf(buf))
			found = canonical(buf);
	}
out:
	strs_free(&list);
	return found;
}

/* The dynamic section of @elf: interpreter, needed names, search paths. */
struct dyn_info {
	char		*interp;
	struct strs	needed;
	char		*rpath;
	char		*runpath;
};

static void dyn_info_free(struct dyn_info *d)
{
	free(d->interp);
	strs_free(&d->needed);
	free(d->rpath);
	free(d->runpath);
}

static int read_dyn_info(const char *path, struct dyn_info *di)
{
	Elf_Scn *scn = NULL;
	size_t i, phnum;
	GElf_Phdr ph;
	int fd, ret = -1;
	Elf *elf;

	memset(di, 0, sizeof(*di));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &phnum))
		goto out;
	for (i = 0; i < phnum; i++) {
		Elf_Data *d;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_INTERP)
			continue;
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz,
					 ELF_T_BYTE);
		if (d && d->d_size && memchr(d->d_buf, '\0', d->d_size))
			di->interp = strdup(d->d_buf);
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Dyn dyn;
		Elf_Data *d;
		size_t j;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		d = elf_getdata(scn, NULL);
		for (j = 0; d && gelf_getdyn(d, j, &dyn); j++) {
			const char *s;

			if (dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH &&
			    dyn.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_NEEDED)
				strs_add(&di->needed, s);
			else if (dyn.d_tag == DT_RPATH && !di->rpath)
				di->rpath = strdup(s);
			else if (dyn.d_tag == DT_RUNPATH && !di->runpath)
				di->runpath = strdup(s);
		}
	}
	ret = 0;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/*
 * Add to @files the interpreter and the needed libraries of each file in
 * it, and theirs, searched in ld.so's order: DT_RPATH of the object that
 * needs them (when it has no DT_RUNPATH) and of the program (the first
 * file), LD_LIBRARY_PATH, DT_RUNPATH, the directories of /etc/ld.so.conf,
 * the default ones. A name not found goes to @missing.
 */
static void add_needed(struct strs *files, struct strs *missing)
{
	const char *ld_path = getenv("LD_LIBRARY_PATH");
	char *prog_rpath = NULL;
	struct strs conf = { 0 };
	size_t i, j;

	read_ld_so_conf("/etc/ld.so.conf", &conf, 0);
	for (i = 0; i < files->n; i++) {
		char origin[PATH_MAX], *slash;
		struct dyn_info di;

		if (read_dyn_info(files->v[i], &di))
			continue;
		snprintf(origin, sizeof(origin), "%s", files->v[i]);
		slash = strrchr(origin, '/');
		if (slash)
			*slash = '\0';
		if (!i && di.rpath && !di.runpath)
			prog_rpath = strdup(di.rpath);
		if (di.interp && is_x86_64_elf(di.interp)) {
			char *c = canonical(di.interp);

			if (c)
				strs_add(files, c);
			free(c);
		}
		for (j = 0; j < di.needed.n; j++) {
			const char *name = di.needed.v[j];
			char *found = NULL;
			size_t k;

			if (strchr(name, '/')) {
				if (is_x86_64_elf(name))
					found = canonical(name);
			} else {
				if (!di.runpath)
					found = search_dirs(name, di.rpath, origin);
				if (!found && !di.runpath && i)
					found = search_dirs(name, prog_rpath, origin);
				if (!found)
					found = search_dirs(name, ld_path, origin);
				if (!found)
					found = search_dirs(name, di.runpath, origin);
				for (k = 0; k < conf.n && !found; k++)
					found = search_dirs(name, conf.v[k], origin);
				if (!found)
					found = search_dirs(name, default_dirs, origin);
			}
			if (found)
				strs_add(files, found);
			else
				strs_add(missing, name);
			free(found);
		}
		dyn_info_free(&di);
	}
	free(prog_rpath);
	strs_free(&conf);
}

struct mapped_list {
	struct mapped	*v;
	size_t		n;
	size_t		cap;
};

static void mapped_free(struct mapped_list *ml)
{
	size_t i;

	for (i = 0; i < ml->n; i++)
		free(ml->v[i].path);
	free(ml->v);
	memset(ml, 0, sizeof(*ml));
}

/* Add @m unless a file of its device and inode is there. -1: no memory. */
static int mapped_add(struct mapped_list *ml, const struct mapped *m)
{
	size_t i;

	/*
	 * One entry a file, not a path: many processes map libc, and a path
	 * may name different files in different mount namespaces.
	 */
	for (i = 0; i < ml->n; i++)
		if (ml->v[i].major == m->major && ml->v[i].minor == m->minor &&
		    ml->v[i].ino == m->ino)
			return 0;
	if (ml->n == ml->cap) {
		struct mapped *v = realloc(ml->v, (ml->cap * 2 + 16) * sizeof(*v));

		if (!v)
			return -1;
		ml->v = v;
		ml->cap = ml->cap * 2 + 16;
	}
	ml->v[ml->n] = *m;
	ml->v[ml->n].path = strdup(m->path);
	if (!ml->v[ml->n].path)
		return -1;
	ml->n++;
	return 0;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/*
 * The files that process @pid maps executable, into @ml; @self: the file
 * systems eh2sframe's own mount namespace has. Nothing is opened or
 * checked here but /proc: see open_mapped().
 */
static int add_pid(struct mapped_list *ml, const struct mnts *self,
		   const char *pid)
{
	char path[64], line[PATH_MAX + 256];
	struct mnts mnts = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	read_mounts(pid, &mnts);
	while (read_line(f, line, sizeof(line))) {
		struct maps_line l;
		struct mapped m;

		if (!parse_mapping(line, pid, &mnts, self, &m, &l) ||
		    strlen(l.perms) < 3 || l.perms[2] != 'x')
			continue;
		/*
		 * A file deleted since it was mapped: what its path names now
		 * is another file, and no process can map the old one again.
		 */
		if (ends_with(m.path, " (deleted)"))
			continue;
		if (mapped_add(ml, &m))
			break;
	}
	free(mnts.v);
	fclose(f);
	return 0;
}

static int add_all_pids(struct mapped_list *ml, const struct mnts *self)
{
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			add_pid(ml, self, de->d_name);	/* gone: nothing */
	closedir(d);
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Open the store, or say in one line why not and what to do. */
static int open_device(const char *dev, int flags)
{
	int fd = open(dev, flags | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == EPERM || errno == EACCES)
		fprintf(stderr,
			"eh2sframe: %s: %s: tables are loaded with CAP_PERFMON or CAP_SYS_ADMIN (run as root)\n",
			dev, strerror(errno));
	else if (errno == ENOENT)
		fprintf(stderr,
			"eh2sframe: %s: %s: this kernel has no SFrame table store (CONFIG_UNWIND_USER_SFRAME)\n",
			dev, strerror(errno));
	else
		fprintf(stderr, "eh2sframe: %s: %s\n", dev, strerror(errno));
	return -1;
}

/*
 * The store's list, whole, as text (malloc()ed), or NULL after saying why
 * (open_device()) or on a read error. Opening it needs the privilege that
 * loading does, so it also checks that.
 */
static char *read_device(const char *dev)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap + 1), *more;
	ssize_t n;
	int fd;

	if (!buf)
		return NULL;
	fd = open_device(dev, O_RDONLY);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len)) > 0) {
		len += n;
		if (len < cap)
			continue;
		more = realloc(buf, 2 * cap + 1);
		if (!more) {
			n = -1;
			errno = ENOMEM;
			break;
		}
		buf = more;
		cap *= 2;
	}
	if (n < 0) {
		fprintf(stderr, "eh2sframe: %s: %s\n", dev, strerror(errno));
		free(buf);
		buf = NULL;
	} else {
		buf[len] = '\0';
	}
	close(fd);
	return buf;
}

/* Write @t for its build-id: 0, or -errno (the kernel's, or ENOMEM). */
static int write_table(const char *dev, const struct table *t)
{
	struct sframe_table_hdr hdr = {
		.magic = SFRAME_TABLE_MAGIC,
		.version = SFRAME_TABLE_VERSION,
		.build_id_len = t->id_len,
		.sframe_size = t->len,
		.sframe_vaddr = t->sframe_vaddr,
		.text_vaddr = t->text_vaddr,
		.text_size = t->text_size,
	};
	size_t len = sizeof(hdr) + t->len;
	uint8_t *buf;
	ssize_t n;
	int fd, err = 0;

	if (t->len > UINT32_MAX)
		return -E2BIG;
	memcpy(hdr.build_id, t->id, t->id_len);
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), t->buf, t->len);
	fd = open(dev, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
	} else {
		/* One write: the device takes the header and section whole. */
		n = write(fd, buf, len);
		if (n < 0)
			err = -errno;
		else if ((size_t)n != len)
			err = -EIO;
		close(fd);
	}
	free(buf);
	return err;
}

/* Why a file was left out, for the summary line. */
static void note(struct strs *left, const char *name, const char *why)
{
	char buf[PATH_MAX + 64];

	snprintf(buf, sizeof(buf), "%s (%s)", base_name(name), why);
	strs_add(left, buf);
}

static void print_list(const char *what, const struct strs *s)
{
	size_t i;

	if (!s->n)
		return;
	printf("; %s %zu: ", what, s->n);
	for (i = 0; i < s->n; i++)
		printf("%s%s", i ? ", " : "", s->v[i]);
}

/*
 * The files an invocation is about, in the order given: the ones named
 * first (*@named of them), then those --needed adds; and into @ml, the
 * files that --pid and --all add.
 */
static int collect(const struct load_opts *o, char **names, int n,
		   struct strs *files, struct strs *missing, size_t *named,
		   struct mapped_list *ml)
{
	struct mnts self = { 0 };
	int i;

	for (i = 0; i < n; i++) {
		char *p = o->needed ? find_program(names[i]) : canonical(names[i]);

		if (!p) {
			fprintf(stderr, "eh2sframe: %s: %s\n", names[i],
				o->needed ? "not found" : strerror(errno));
			return -1;
		}
		strs_add(files, p);
		free(p);
	}
	*named = files->n;
	if (o->needed)
		add_needed(files, missing);
	if (o->npids || o->all)
		read_mounts("self", &self);
	for (i = 0; i < o->npids; i++)
		if (add_pid(ml, &self, o->pids[i]))
			fprintf(stderr, "eh2sframe: process %s: %s\n",
				o->pids[i], strerror(errno));
	if (o->all && add_all_pids(ml, &self))
		fprintf(stderr, "eh2sframe: /proc: %s\n", strerror(errno));
	free(self.v);
	return 0;
}

/* What one load_tables() has found and done. */
struct load_run {
	struct strs	present;	/* build-ids in the store before */
	struct strs	done;		/* build-ids seen, loaded or not */
	struct strs	left;		/* what was left out, and why */
	size_t		loaded;
	size_t		already;
	size_t		skipped;	/* mapped files refused */
	size_t		bytes;
	int		ret;
};

/*
 * Convert the file @name and load its table, into @r. @shown: the file in
 * messages (@name is a /proc/self/fd link for a mapped file); @named: it
 * was named on the command line, so no table is an error; @say: print
 * what was loaded even without -v (a file nobody named).
 */
static void load_file(const struct load_opts *o, struct load_run *r,
		      const char *name, const char *shown, bool named, bool say)
{
	struct table t;
	char hex[2 * TABLE_BUILD_ID_MAX + 1];
	uint8_t id[TABLE_BUILD_ID_MAX];
	size_t len;
	int err;

	/*
	 * The build-id first: a file whose table is loaded, or that came
	 * twice (two paths, a copy), is not converted again.
	 */
	if (!file_build_id(name, id, &len) && len &&
	    len <= SFRAME_TABLE_BUILD_ID_MAX) {
		build_id_hex(id, len, hex);
		if (strs_has(&r->done, hex))
			return;
		if (strs_has(&r->present, hex)) {
			strs_add(&r->done, hex);
			r->already++;
			if (o->verbose)
				printf("%s: loaded already for build-id %s\n",
				       shown, hex);
			return;
		}
	}
	if (make_table(name, o->verbose, &t)) {
		/* Its reasons, just printed, name it by @name. */
		if (strcmp(name, shown))
			fprintf(stderr, "eh2sframe: %s is %s above\n", shown, name);
		note(&r->left, shown, "no table made");
		/* A file named on the command line is an error. */
		if (named)
			r->ret = 1;
		return;
	}
	if (!t.id_len || t.id_len > SFRAME_TABLE_BUILD_ID_MAX) {
		note(&r->left, shown, "no build-id");
		table_free(&t);
		return;
	}
	build_id_hex(t.id, t.id_len, hex);
	/* Two paths, or a copy, of one file: one table. */
	if (strs_has(&r->done, hex)) {
		table_free(&t);
		return;
	}
	strs_add(&r->done, hex);
	if (!t.fdes) {
		note(&r->left, shown, "nothing to convert");
		table_free(&t);
		return;
	}
	err = write_table(o->device, &t);
	if (!err) {
		r->loaded++;
		r->bytes += t.len;
		if (o->verbose || (say && !o->quiet))
			printf("%s: loaded for build-id %s, %zu bytes\n",
			       shown, hex, t.len);
	} else if (err == -EEXIST) {
		r->already++;
	} else {
		fprintf(stderr, "eh2sframe: %s: the store refused its table: %s%s\n",
			shown, strerror(-err),
			err == -ENOSPC ? " (raise kernel.sframe_tables_max_bytes)" : "");
		note(&r->left, shown, strerror(-err));
		r->ret = 1;
	}
	table_free(&t);
}

/*
 * Load the table of a file that a process maps, if it may be: see "Trust"
 * at the top. A refused file is said, in one line, and is not an error.
 */
static void load_mapped(const struct load_opts *o, struct load_run *r,
			const struct mapped *m)
{
	char why[256], name[32];
	const char *how;
	int fd = open_mapped(m, &how, why, sizeof(why));

	if (fd < 0) {
		r->skipped++;
		if (!o->quiet)
			fprintf(stderr, "eh2sframe: skipping %s: %s\n", m->path,
				why);
		return;
	}
	/* Data mapped executable, a 32-bit library: not ours, as before. */
	if (fd_is_x86_64_elf(fd)) {
		snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
		if (o->verbose)
			printf("%s: mapped by process %s; opened through %s; read as %s\n",
			       m->path, m->pid, how, name);
		load_file(o, r, name, m->path, false, true);
	}
	close(fd);
}

/**
 * load_tables - convert each file and load its table into the store
 * @o:		options
 * @names:	files named on the command line
 * @n:		how many
 *
 * Prints one line: what was loaded, what was loaded already, what was
 * left out and why; before it, one line for each table loaded for a file
 * that a process maps (--pid, --all), as nobody named those, and on
 * stderr one for each such file skipped, with the reason. A file without
 * build-id or anything to convert is left out; that is not an error. A
 * file named in @names for which no table can be made (not an x86-64 ELF
 * file, no or malformed CFI) is.
 *
 * Return: 0, or 1 on such a file, or when the store refused a table or
 * could not be opened.
 */
int load_tables(const struct load_opts *o, char **names, int n)
{
	struct strs files = { 0 }, missing = { 0 };
	struct mapped_list ml = { 0 };
	struct load_run r = { 0 };
	size_t i, named;
	char *list, *line, *save = NULL;

	/* What is loaded already need not be converted again. */
	list = read_device(o->device);
	if (!list)
		return 1;
	for (line = strtok_r(list, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, " ")] = '\0';
		strs_add(&r.present, line);
	}
	free(list);
	if (collect(o, names, n, &files, &missing, &named, &ml)) {
		r.ret = 1;
		goto out;
	}
	for (i = 0; i < files.n; i++)
		load_file(o, &r, files.v[i], files.v[i], i < named, false);
	for (i = 0; i < ml.n; i++)
		load_mapped(o, &r, &ml.v[i]);
	for (i = 0; i < missing.n; i++)
		note(&r.left, missing.v[i], "needed, not found");
	if (!o->quiet) {
		printf("eh2sframe: loaded %zu table%s (%zu KiB)", r.loaded,
		       r.loaded == 1 ? "" : "s", (r.bytes + 1023) / 1024);
		if (r.already)
			printf("; %zu loaded already", r.already);
		if (r.skipped)
			printf("; %zu mapped file%s skipped (said above)",
			       r.skipped, r.skipped == 1 ? "" : "s");
		print_list("left out", &r.left);
		printf("\n");
	}
out:
	strs_free(&files);
	strs_free(&missing);
	mapped_free(&ml);
	strs_free(&r.left);
	strs_free(&r.done);
	strs_free(&r.present);
	return r.ret;
}

static unsigned int hexval(char c)
{
	return isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10);
}

/* A build-id in hex into @id; -1 when @s is not one. */
static int parse_hex(const char *s, uint8_t *id, size_t *len)
{
	size_t n = strlen(s), i;

	if (!n || n % 2 || n / 2 > SFRAME_TABLE_BUILD_ID_MAX)
		return -1;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return -1;
	for (i = 0; i < n / 2; i++)
		id[i] = hexval(s[2 * i]) << 4 | hexval(s[2 * i + 1]);
	*len = n / 2;
	return 0;
}

/**
 * remove_tables - remove the tables of files, or of hex build-ids
 * @o:		options
 * @names:	files, or build-ids in hex
 * @n:		how many
 *
 * Return: 0, or 1 when one could not be removed (none loaded is not an
 * error: the table is gone either way, and that is said).
 */
int remove_tables(const struct load_opts *o, char **names, int n)
{
	struct strs files = { 0 }, missing = { 0 };
	size_t i, removed = 0, absent = 0;
	uint8_t id[TABLE_BUILD_ID_MAX];
	size_t len;
	int fd, ret = 0;

	fd = open_device(o->device, O_WRONLY);
	if (fd < 0)
		return 1;
	close(fd);
	for (i = 0; i < (size_t)n; i++) {
		char *p;

		if (!strchr(names[i], '/') && !parse_hex(names[i], id, &len)) {
			strs_add(&files, names[i]);
			continue;
		}
		p = o->needed ? find_program(names[i]) : canonical(names[i]);
		if (!p) {
			fprintf(stderr, "eh2sframe: %s: neither a file nor a build-id\n",
				names[i]);
			ret = 1;
			goto out;
		}
		strs_add(&files, p);
		free(p);
	}
	if (o->needed)
		add_needed(&files, &missing);
	for (i = 0; i < files.n; i++) {
		char hex[2 * TABLE_BUILD_ID_MAX + 1], cmd[160];
		ssize_t w;

		if (files.v[i][0] != '/') {
			parse_hex(files.v[i], id, &len);
		} else if (file_build_id(files.v[i], id, &len) || !len) {
			if (!o->quiet)
				printf("%s: no build-id\n", files.v[i]);
			continue;
		}
		build_id_hex(id, len, hex);
		fd = open_device(o->device, O_WRONLY);
		if (fd < 0) {
			ret = 1;
			goto out;
		}
		snprintf(cmd, sizeof(cmd), "remove %s\n", hex);
		w = write(fd, cmd, strlen(cmd));
		if (w >= 0) {
			removed++;
		} else if (errno == ENOENT) {
			absent++;
		} else {
			fprintf(stderr, "eh2sframe: %s: %s\n", files.v[i],
				strerror(errno));
			ret = 1;
		}
		close(fd);
	}
	if (!o->quiet)
		printf("eh2sframe: removed %zu table%s; %zu not loaded\n",
		       removed, removed == 1 ? "" : "s", absent);
out:
	strs_free(&files);
	strs_free(&missing);
	return ret;
}

/**
 * list_tables - print the store's list: build-id, bytes, mappings using it
 * @o:	options
 *
 * Return: 0, or 1 when the store cannot be read.
 */
int list_tables(const struct load_opts *o)
{
	char *list = read_device(o->device);

	if (!list)
		return 1;
	fputs(list, stdout);
	free(list);
	return 0;
}
