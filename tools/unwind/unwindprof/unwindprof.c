// SPDX-License-Identifier: GPL-2.0
/*
 * unwindprof: an on-CPU and off-CPU profiler whose user stacks come from
 * the kernel's deferred unwinder (bpf_unwind_user_request() and the
 * unwind:unwind_user_stack tracepoint), so that code without frame
 * pointers is walked through its SFrame section or a table eh2sframe
 * loaded from its .eh_frame.
 *
 *   unwindprof [-F HZ] [-p PID | -a] [--off-cpu] [--kernel] [--span]
 *              [--tables] [-d SECONDS] [-o FILE] [-v] [-- COMMAND ARGS...]
 *
 * A sample (or a blocked interval) only carries the cookie of the kernel
 * entry it was taken in; the stack of that entry comes later, once, when
 * the task returns to user space. So the samples of an entry wait here,
 * by (tid, cookie), until their stack arrives. The stack is symbolized as
 * soon as it arrives, while the process still has the mappings it was
 * taken in.
 *
 * Output: collapsed stacks, "comm;outermost;...;innermost COUNT", most
 * first; COUNT is samples, or with --off-cpu microseconds blocked. A
 * summary goes to stderr.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <elfutils/libdwfl.h>

#include "../mapped.h"
#include "unwindprof.h"
#include "unwindprof.skel.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON	38
#endif
#ifndef CAP_BPF
#define CAP_BPF		39
#endif

#define KFUNC_NAME	"bpf_unwind_user_request"
#define HELPER		"eh2sframe"

static struct {
	int hz;
	pid_t pid;
	bool all;
	bool off_cpu;
	bool kernel;
	bool span;
	bool tables;
	bool verbose;
	double duration;
	const char *out;
	char **cmd;
} opt = { .hz = 99 };

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: unwindprof [-F HZ] [-p PID | -a] [--off-cpu] [--kernel] [--span]\n"
		"                  [--tables] [-d SECONDS] [-o FILE] [-v] [-- COMMAND ARGS...]\n"
		"  -F HZ        on-CPU samples per second and CPU (default 99)\n"
		"  -p PID       profile process PID\n"
		"  -a           profile every user task\n"
		"  --off-cpu    profile time blocked (microseconds) instead of samples\n"
		"  --kernel     add the kernel stack of on-CPU samples (from /proc/kallsyms)\n"
		"  --span       add the thread's OpenTelemetry span as the outermost frame\n"
		"  --tables     as root, load eh2sframe's tables for the target first, and\n"
		"               for code it maps while profiled\n"
		"  -d SECONDS   stop after SECONDS (default: when COMMAND ends, or on ^C)\n"
		"  -o FILE      write the collapsed stacks to FILE (default stdout)\n"
		"  -v           show libbpf's messages\n");
}

/* ---- strings and hash tables ---- */

static uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

#define FNV_BASIS	0xcbf29ce484222325ULL

struct sbuf {
	char *s;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *s)
{
	size_t n = strlen(s);

	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		if (!b->s) {
			perror("unwindprof");
			exit(1);
		}
	}
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

/* The output: one count per distinct folded stack. */
struct folded {
	struct folded *next;
	uint64_t count;
	char *stack;
};

#define FOLD_BUCKETS	65536
static struct folded *folds[FOLD_BUCKETS];
static size_t nr_folds;

static void fold_add(const char *stack, uint64_t w)
{
	uint64_t h = hash_bytes(stack, strlen(stack), FNV_BASIS) % FOLD_BUCKETS;
	struct folded *f;

	for (f = folds[h]; f; f = f->next)
		if (!strcmp(f->stack, stack)) {
			f->count += w;
			return;
		}
	f = calloc(1, sizeof(*f));
	if (f)
		f->stack = strdup(stack);
	if (!f || !f->stack) {
		perror("unwindprof");
		exit(1);
	}
	f->count = w;
	f->next = folds[h];
	folds[h] = f;
	nr_folds++;
}

/*
 * The samples of one kernel entry, waiting for its stack. With --kernel
 * each sample keeps its own kernel part (already symbolized: the stack may
 * come much later); without, they add up.
 */
struct ksample {
	char *kstack;		/* "outer;...;inner", or NULL */
	uint64_t weight;
};

struct pending {
	struct pending *next;
	uint32_t tid;
	uint64_t cookie;
	uint64_t samples;	/* records joined or waiting */
	struct ksample *ks;
	size_t nr_ks, cap_ks;
	char span[24];		/* "span:" and 16 hex digits, or "" */
};

#define PEND_BUCKETS	16384
static struct pending *pend[PEND_BUCKETS];

static struct pending **pend_slot(uint32_t tid, uint64_t cookie)
{
	uint64_t h = hash_bytes(&tid, sizeof(tid), FNV_BASIS);
	struct pending **pp;

	h = hash_bytes(&cookie, sizeof(cookie), h) % PEND_BUCKETS;
	for (pp = &pend[h]; *pp; pp = &(*pp)->next)
		if ((*pp)->tid == tid && (*pp)->cookie == cookie)
			break;
	return pp;
}

static struct pending *pend_get(uint32_t tid, uint64_t cookie)
{
	struct pending **pp = pend_slot(tid, cookie);

	if (!*pp) {
		*pp = calloc(1, sizeof(**pp));
		if (!*pp) {
			perror("unwindprof");
			exit(1);
		}
		(*pp)->tid = tid;
		(*pp)->cookie = cookie;
	}
	return *pp;
}

static void pend_add(struct pending *p, char *kstack, uint64_t w)
{
	size_t i;

	p->samples++;
	for (i = 0; i < p->nr_ks; i++) {
		struct ksample *k = &p->ks[i];

		if ((!k->kstack && !kstack) ||
		    (k->kstack && kstack && !strcmp(k->kstack, kstack))) {
			k->weight += w;
			free(kstack);
			return;
		}
	}
	if (p->nr_ks == p->cap_ks) {
		p->cap_ks = p->cap_ks ? 2 * p->cap_ks : 2;
		p->ks = realloc(p->ks, p->cap_ks * sizeof(*p->ks));
		if (!p->ks) {
			perror("unwindprof");
			exit(1);
		}
	}
	p->ks[p->nr_ks].kstack = kstack;
	p->ks[p->nr_ks++].weight = w;
}

static void pend_free(struct pending *p)
{
	size_t i;

	for (i = 0; i < p->nr_ks; i++)
		free(p->ks[i].kstack);
	free(p->ks);
	free(p);
}

/* ---- symbols ---- */

struct ksym {
	uint64_t addr;
	char *name;
};

static struct ksym *ksyms;
static size_t nr_ksyms;

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int load_kallsyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type;
	unsigned long long addr;
	size_t cap = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!addr || !strchr("tTwW", type))
			continue;
		if (nr_ksyms == cap) {
			cap = cap ? 2 * cap : 65536;
			ksyms = realloc(ksyms, cap * sizeof(*ksyms));
			if (!ksyms)
				return -ENOMEM;
		}
		ksyms[nr_ksyms].addr = addr;
		ksyms[nr_ksyms++].name = strdup(name);
	}
	fclose(f);
	qsort(ksyms, nr_ksyms, sizeof(*ksyms), ksym_cmp);
	/* All zero: kptr_restrict hid them. */
	return nr_ksyms ? 0 : -EPERM;
}

static const char *ksym_name(uint64_t addr)
{
	size_t lo = 0, hi = nr_ksyms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? ksyms[lo - 1].name : "[unknown]";
}

/* The kernel frames of a sample, outermost first, each marked "_[k]". */
static char *kstack_string(const unsigned long long *ips, unsigned int nr)
{
	struct sbuf b = { 0 };
	int i;

	for (i = nr - 1; i >= 0; i--) {
		if (b.len)
			sb_add(&b, ";");
		sb_add(&b, ksym_name(ips[i]));
		sb_add(&b, "_[k]");
	}
	return b.s;
}

/*
 * One libdwfl session per process, kept while it runs: reporting its
 * mappings reads /proc/PID/maps, and libdwfl opens a module's file the
 * first time an address in it is named, too much for every stack. An
 * address outside every module reported (a library dlopen()ed since)
 * makes it report them again, once per stack.
 */
struct sym {
	struct sym *next;
	uint64_t addr;
	char *name;
};

#define SYM_BUCKETS	4096

/*
 * The names of a process's addresses, as symbolized: a profile has few
 * distinct return addresses, and libdwfl's lookup is the most of our
 * time (under TCG it was slow enough to fall behind the samples).
 */
struct proc {
	struct proc *next;
	pid_t pid;
	unsigned long long exe;		/* exe_id() when the record was made */
	uint64_t maps;			/* its executable mappings, hashed */
	Dwfl *dwfl;
	struct sym *syms[SYM_BUCKETS];
};

static void syms_clear(struct proc *p)
{
	struct sym *s, *next;
	int i;

	for (i = 0; i < SYM_BUCKETS; i++) {
		for (s = p->syms[i]; s; s = next) {
			next = s->next;
			free(s->name);
			free(s);
		}
		p->syms[i] = NULL;
	}
}

static struct proc *procs;

/*
 * A set of files, told apart by device and inode (a file replaced on disk
 * is another), hashed, of at most FILE_SET_MAX: a process that maps file
 * after file costs bounded memory.
 */
#define FILE_SET_BUCKETS	1024
#define FILE_SET_MAX		16384

struct file_key {
	struct file_key *next;
	unsigned int major, minor;
	unsigned long long ino;
};

struct file_set {
	struct file_key *keys[FILE_SET_BUCKETS];
	unsigned int n;
};

static struct file_key **file_slot(struct file_set *set, const struct mapped *m)
{
	uint64_t h = FNV_BASIS;

	h = hash_bytes(&m->major, sizeof(m->major), h);
	h = hash_bytes(&m->minor, sizeof(m->minor), h);
	return &set->keys[hash_bytes(&m->ino, sizeof(m->ino), h) % FILE_SET_BUCKETS];
}

static bool file_known(struct file_set *set, const struct mapped *m)
{
	struct file_key *k;

	for (k = *file_slot(set, m); k; k = k->next)
		if (k->major == m->major && k->minor == m->minor && k->ino == m->ino)
			return true;
	return false;
}

/* Add @m's file to @set: false if it was there, or if it is full. */
static bool file_add(struct file_set *set, const struct mapped *m)
{
	struct file_key **slot = file_slot(set, m), *k;

	if (file_known(set, m) || set->n >= FILE_SET_MAX)
		return false;
	k = malloc(sizeof(*k));
	if (!k)
		return false;
	k->major = m->major;
	k->minor = m->minor;
	k->ino = m->ino;
	k->next = *slot;
	*slot = k;
	set->n++;
	return true;
}

/*
 * The files refused (see proc_find_elf()), each said once: with -a, every
 * process of a user maps that user's files.
 */
static struct file_set refused;

static void say_refused(const struct mapped *m, const char *why)
{
	static bool full;

	if (full || file_known(&refused, m))
		return;
	if (!file_add(&refused, m) && refused.n >= FILE_SET_MAX) {
		full = true;
		fprintf(stderr, "unwindprof: not symbolizing more files; not said further\n");
		return;
	}
	fprintf(stderr, "unwindprof: not symbolizing %s: %s\n", m->path, why);
}

/*
 * Our own vDSO, copied once: the kernel maps the same image into every
 * process of our ABI. A process can rewrite its copy (a write through
 * /proc/PID/mem to its private pages, as a debugger puts a breakpoint),
 * so a profiled process's vDSO is named from ours, and only while its
 * bytes are ours: libdwfl's own reading of the process's memory would have
 * root parse an ELF image that the user wrote.
 */
static char *self_vdso;
static size_t self_vdso_size;

static void copy_self_vdso(void)
{
	unsigned long long start, end;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	while (read_line(f, line, sizeof(line)))
		if (strstr(line, " [vdso]") &&
		    sscanf(line, "%llx-%llx", &start, &end) == 2 && end > start &&
		    start == getauxval(AT_SYSINFO_EHDR)) {
			self_vdso = malloc(end - start);
			if (self_vdso) {
				memcpy(self_vdso, (void *)(uintptr_t)start, end - start);
				self_vdso_size = end - start;
			}
			break;
		}
	fclose(f);
}

/* The ELF of module @mod, the vDSO of process @pid, or NULL with @why set. */
static Elf *vdso_elf(Dwfl_Module *mod, int pid, char *why, size_t size)
{
	Dwarf_Addr start, end;
	char path[64], *buf;
	ssize_t n = -1;
	int fd;

	dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
	if (!self_vdso || end - start != self_vdso_size) {
		snprintf(why, size, "not the size of ours (another ABI?)");
		return NULL;
	}
	buf = malloc(self_vdso_size);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (buf && fd >= 0)
		n = pread(fd, buf, self_vdso_size, start);
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)self_vdso_size || memcmp(buf, self_vdso, self_vdso_size)) {
		snprintf(why, size, "%s", n != (ssize_t)self_vdso_size ?
			 "unreadable" : "its bytes are not the kernel's (rewritten)");
		free(buf);
		return NULL;
	}
	free(buf);
	/* libelf reads our copy in place; it stays for the run. */
	return elf_memory(self_vdso, self_vdso_size);
}

/*
 * libdwfl's find_elf. Its own, dwfl_linux_proc_find_elf(), opens the path
 * that /proc/PID/maps shows, in our mount namespace, following links and
 * blocking on a FIFO; and it would have root parse the ELF and DWARF of
 * any file any profiled user maps (review m17). So a file is opened as
 * eh2sframe opens the files it converts for --pid and --all, under the
 * same rule: open_mapped() reaches the very file the process maps, and
 * only one that root or we own and nobody else may write; a file refused
 * is named with its addresses alone. *@file_name is never set: libdwfl
 * would open that name itself after a refusal.
 */
static int proc_find_elf(Dwfl_Module *mod, void **userdata, const char *name,
			 Dwarf_Addr base, char **file_name, Elf **elfp)
{
	const struct mapped *m = *userdata;
	const char *how;
	char why[256];
	int fd;

	/*
	 * The vDSO, "[vdso: PID]": ours, when the process maps the same
	 * bytes. A file's module without its record (report_file() could not
	 * allocate it) is refused, not left to libdwfl's lookup by path.
	 */
	if (!m) {
		int pid;

		if (sscanf(name, "[vdso: %d]", &pid) != 1)
			return -1;
		*elfp = vdso_elf(mod, pid, why, sizeof(why));
		if (!*elfp)
			fprintf(stderr, "unwindprof: not symbolizing the vDSO of %d: %s\n",
				pid, why);
		return -1;
	}
	fd = open_mapped(m, &how, why, sizeof(why));
	if (fd < 0)
		say_refused(m, why);
	return fd;
}

/*
 * Separate debuginfo by build-id in /usr/lib/debug only, a tree only root
 * writes. libdwfl's standard lookup also tries debuglink names beside the
 * file and in its .debug directory, which the file's owner chooses.
 */
static char *debuginfo_path = "/usr/lib/debug";

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = proc_find_elf,
	.find_debuginfo = dwfl_build_id_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* Our own mount namespace's file systems, for parse_mapping(). */
static struct mnts self_mnts;

/* A module's mapping (report_file()), freed with the module or an exec. */
static int forget_module(Dwfl_Module *mod, void **userdata, const char *name,
			 Dwarf_Addr base, void *arg)
{
	struct mapped *m = *userdata;

	if (m)
		free(m->path);
	free(m);
	*userdata = NULL;
	return DWARF_CB_OK;
}

/*
 * dwfl_report_end()'s callback for a module not reported again (a library
 * unloaded, an exec). Its prototype says void *userdata, but libdwfl
 * passes what it passes every module callback: the address of the
 * module's userdata. Freed as the mapping itself, that pointer was a free
 * inside libdwfl's own module: an abort whenever a module went away (a
 * library unloaded while profiled, seen as a test in bpf_prof).
 */
static uint64_t modules_dropped;	/* for -v */

static int drop_module(Dwfl_Module *mod, void *userdata, const char *name,
		       Dwarf_Addr base, void *arg)
{
	modules_dropped++;
	return forget_module(mod, userdata, name, base, arg);
}

/*
 * Report one file's run of mappings, [@low, @high), as a module, with
 * what open_mapped() needs as its userdata. A module reported before,
 * with the same name and addresses, keeps its own.
 */
static int report_file(struct proc *p, const struct mapped *m,
		       uint64_t low, uint64_t high)
{
	Dwfl_Module *mod = dwfl_report_module(p->dwfl, m->path, low, high);
	struct mapped *copy;
	void **ud;

	if (!mod)
		return -1;
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	if (*ud)
		return 0;
	copy = malloc(sizeof(*copy));
	if (!copy)
		return -1;
	*copy = *m;
	copy->path = strdup(m->path);
	if (!copy->path) {
		free(copy);
		return -1;
	}
	*ud = copy;
	return 0;
}

/*
 * --tables while profiling: code mapped after the start (what a process
 * dlopen()s, a program it executes) has no table yet. The first time a
 * process is seen to map a file executable that no process was seen to
 * map before, and that the helper would not refuse, eh2sframe --load
 * --pid PID runs for it, under the same trust rule as at the start: one
 * run at a time, at most LATE_MAX_RUNS. Files are told apart by device
 * and inode, so a file replaced on disk is looked at again. A walk of the
 * new code before its table is in stops where the frame pointers end; the
 * kernel looks for a table again once the store changed.
 */
#define LATE_MAX_RUNS	1024
#define LATE_QUEUE	64

static struct {
	char *helper;		/* set by load_tables() when it may run */
	pid_t target;		/* the process scanned, see late_scan() */
	struct timespec scanned;
	struct file_set seen;	/* files past FILE_SET_MAX get no run */
	pid_t running;		/* the helper, while it runs */
	pid_t queue[LATE_QUEUE]; /* processes waiting for a run */
	unsigned int queued;
	unsigned int runs;
	bool capped;
} late;

/*
 * True the first time the file of @m, mapped as @l says, is seen mapped
 * executable, if the helper may convert it: it is opened as the helper
 * and the symbolizer open it (open_mapped(), the trust rule, FUSE never
 * asked), so that a file it would refuse (the user's own, a memfd, one
 * deleted) costs no run. @m must come with the process's mounts.
 */
static bool late_new_file(const struct mapped *m, const struct maps_line *l)
{
	const char *how;
	char why[256];
	int fd;

	if (!late.helper || l->perms[2] != 'x' || !file_add(&late.seen, m))
		return false;
	fd = open_mapped(m, &how, why, sizeof(why));
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * The maps of process @pid, its first line read into @line: the process's,
 * or, once its leader has exited, a thread's (pthread_exit() in main()
 * leaves /proc/PID/maps empty while the other threads run on in the same
 * memory). NULL when no thread shows a mapping: the process has exited.
 */
static FILE *open_maps(pid_t pid, char *line, size_t size)
{
	char path[64];
	struct dirent *d;
	FILE *f;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (f && read_line(f, line, size))
		return f;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return NULL;
	f = NULL;
	while ((d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/maps", (int)pid,
			 d->d_name);
		f = fopen(path, "re");
		if (f && read_line(f, line, size))
			break;
		if (f)
			fclose(f);
		f = NULL;
	}
	closedir(dir);
	return f;
}

/* The executable files @pid maps now, as seen, with no run. */
static void late_seed(pid_t pid)
{
	char pidbuf[16], line[PATH_MAX + 256];
	struct mnts none = { 0 };
	struct maps_line l;
	struct mapped m;
	FILE *f;

	f = open_maps(pid, line, sizeof(line));
	if (!f)
		return;
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	do {
		if (parse_mapping(line, pidbuf, &none, &none, &m, &l) &&
		    l.perms[2] == 'x')
			file_add(&late.seen, &m);
	} while (read_line(f, line, sizeof(line)));
	fclose(f);
}

/*
 * Runs from now on, with @helper: what the start loaded is seen already.
 * A COMMAND is not running yet; it maps our own program until its exec.
 */
static void late_start(char *helper)
{
	struct mapped self = { 0 };
	struct dirent *d;
	struct stat st;
	DIR *dir;

	late.helper = helper;
	if (!stat("/proc/self/exe", &st)) {
		self.major = major(st.st_dev);
		self.minor = minor(st.st_dev);
		self.ino = st.st_ino;
		file_add(&late.seen, &self);
	}
	if (opt.pid) {
		late_seed(opt.pid);
	} else if (opt.all) {
		dir = opendir("/proc");
		while (dir && (d = readdir(dir)))
			if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
				late_seed(atoi(d->d_name));
		if (dir)
			closedir(dir);
	}
}

/*
 * Start the helper argv[0] with @argv, its stdout our stderr (stdout may be
 * the profile) and none of our descriptors (BPF maps, perf events, the
 * output) but stdin and stderr. Returns its pid, or -1 if fork() failed.
 */
static pid_t spawn_helper(const char **argv)
{
	pid_t child;
	int fd;

	fflush(stderr);
	child = fork();
	if (child)
		return child;
	dup2(2, 1);
	if (syscall(SYS_close_range, 3U, ~0U, 0U))
		for (fd = 3; fd < 1024; fd++)
			close(fd);
	execv(argv[0], (char **)argv);
	perror(argv[0]);
	_exit(127);
}

/*
 * Start the next queued run if none runs, without waiting for it: the
 * stacks keep coming meanwhile. The helper gets none of our descriptors
 * (BPF maps, perf events) but stdin and stderr, also its stdout; it is
 * quiet unless -v. Called often (late_tick()): reaps the one that ended.
 */
static void late_kick(void)
{
	const char *argv[7];
	char pidbuf[16];
	int argc = 0;
	pid_t pid, child;

	if (late.running && waitpid(late.running, NULL, WNOHANG) != 0)
		late.running = 0;
	while (!late.running && late.queued && late.helper) {
		pid = late.queue[0];
		memmove(late.queue, late.queue + 1,
			--late.queued * sizeof(late.queue[0]));
		if (late.runs >= LATE_MAX_RUNS) {
			if (!late.capped)
				fprintf(stderr,
					"unwindprof: --tables: %s ran %d times while profiling; no more runs\n",
					HELPER, LATE_MAX_RUNS);
			late.capped = true;
			late.queued = 0;
			return;
		}
		/* Gone already (a short-lived process): no maps to read. */
		if (kill(pid, 0) && errno == ESRCH)
			continue;
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
		argv[argc++] = late.helper;
		argv[argc++] = "--load";
		if (!opt.verbose)
			argv[argc++] = "-q";
		argv[argc++] = "--pid";
		argv[argc++] = pidbuf;
		argv[argc] = NULL;
		child = spawn_helper(argv);
		if (child < 0)
			return;
		late.running = child;
		late.runs++;
	}
}

/* Queue a run for @pid, @why it is needed (for -v). */
static void late_load(pid_t pid, const char *why)
{
	unsigned int i;

	if (opt.verbose)
		fprintf(stderr, "unwindprof: --tables: %s: %s --load --pid %d\n",
			why, HELPER, (int)pid);
	for (i = 0; i < late.queued; i++)
		if (late.queue[i] == pid)
			return;
	if (late.queued < LATE_QUEUE)
		late.queue[late.queued++] = pid;
	late_kick();
}

/*
 * The modules of process @p, from /proc/PID/maps, as libdwfl's
 * dwfl_linux_proc_report() makes them: one a file, from the start of its
 * first mapping to the end of its last in a row, whatever anonymous
 * mappings (.bss) lie between; and the vDSO. Here each file's module also
 * carries the mapping and inode it is to be opened by.
 */
static int proc_report(struct proc *p)
{
	char pid[16], line[PATH_MAX + 256], vdso[32];
	struct mnts mnts = { 0 };
	struct mapped m, run = { 0 };
	struct maps_line l;
	char why[PATH_MAX + 32] = "";
	uint64_t low = 0, high = 0;
	int err = 0;
	FILE *f;

	snprintf(pid, sizeof(pid), "%d", (int)p->pid);
	/*
	 * A process that has exited and is not reaped yet shows no mappings.
	 * Its stacks are still coming (the ring buffer lags behind under
	 * load): its modules are kept for them, not dropped as unmapped.
	 */
	f = open_maps(p->pid, line, sizeof(line));
	if (!f)
		return -1;
	/* Modules may have gone (dlclose()) as others came. */
	syms_clear(p);
	read_mounts(pid, &mnts);
	dwfl_report_begin(p->dwfl);
	do {
		if (!parse_mapping(line, pid, &mnts, &self_mnts, &m, &l)) {
			if (strstr(line, " [vdso]")) {
				snprintf(vdso, sizeof(vdso), "[vdso: %d]",
					 (int)p->pid);
				if (!dwfl_report_module(p->dwfl, vdso, l.start,
							l.end))
					err = -1;
			}
			continue;
		}
		if (late_new_file(&m, &l) && !why[0])
			snprintf(why, sizeof(why), "%s in a stack", m.path);
		if (run.path && m.major == run.major && m.minor == run.minor &&
		    m.ino == run.ino) {
			high = l.end;
			continue;
		}
		if (run.path)
			err = report_file(p, &run, low, high);
		free(run.path);
		run = m;
		run.path = strdup(m.path);
		if (!run.path)
			err = -1;
		low = l.start;
		high = l.end;
	} while (!err && read_line(f, line, sizeof(line)));
	if (!err && run.path)
		err = report_file(p, &run, low, high);
	free(run.path);
	free(mnts.v);
	fclose(f);
	if (dwfl_report_end(p->dwfl, drop_module, NULL))
		err = -1;
	if (why[0])
		late_load(p->pid, why);
	return err;
}

static struct proc *proc_find(pid_t pid)
{
	struct proc *p;

	for (p = procs; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

/*
 * Which program @pid runs: a hash of its executable's device and inode, as
 * its maps show them (a stat() of /proc/PID/exe would ask the file system,
 * which may be a FUSE server the process's owner runs and never answers);
 * 0 if not found, which late_scan() takes as a change.
 */
static unsigned long long exe_id(pid_t pid)
{
	char path[64], exe[PATH_MAX], line[PATH_MAX + 256];
	unsigned long long id = 0;
	struct maps_line l;
	struct mapped m;
	struct mnts none = { 0 };
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = '\0';
	f = open_maps(pid, line, sizeof(line));
	if (!f)
		return 0;
	snprintf(path, sizeof(path), "%d", (int)pid);
	do {
		if (parse_mapping(line, path, &none, &none, &m, &l) &&
		    !strcmp(m.path, exe)) {
			id = hash_bytes(&m.ino, sizeof(m.ino),
					hash_bytes(&m.major, sizeof(m.major),
						   hash_bytes(&m.minor, sizeof(m.minor),
							      FNV_BASIS)));
			break;
		}
	} while (read_line(f, line, sizeof(line)));
	fclose(f);
	return id;
}

static struct proc *proc_get(pid_t pid)
{
	struct proc *p = proc_find(pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->exe = exe_id(pid);
	p->dwfl = dwfl_begin(&proc_callbacks);
	if (!p->dwfl) {
		free(p);
		return NULL;
	}
	proc_report(p);
	p->next = procs;
	procs = p;
	return p;
}

/* After an exec, the old mappings say nothing of the new image. */
static void proc_forget(pid_t pid)
{
	struct proc **pp, *p;

	for (pp = &procs; *pp; pp = &(*pp)->next)
		if ((*pp)->pid == pid) {
			p = *pp;
			*pp = p->next;
			syms_clear(p);
			dwfl_getmodules(p->dwfl, forget_module, NULL, 0);
			dwfl_end(p->dwfl);
			free(p);
			return;
		}
}

/*
 * The target's executable mappings, looked at every LATE_SCAN_MS while it
 * runs (-p or a COMMAND), so that a library is named, and with --tables
 * its table loaded, when it is mapped, not when a stack through it is
 * read: that comes later by the ring buffer's lag, seconds under TCG, when
 * the process may have exited or closed the library already. With -a only
 * the stacks show new files.
 */
#define LATE_SCAN_MS	50

static void late_scan(pid_t pid)
{
	char pidbuf[16], line[PATH_MAX + 256];
	struct mnts none = { 0 }, mnts = { 0 };
	char why[PATH_MAX + 32] = "";
	uint64_t maps = FNV_BASIS;
	bool mounts = false;
	struct maps_line l;
	struct mapped m;
	struct proc *p;
	FILE *f;

	f = open_maps(pid, line, sizeof(line));
	if (!f)
		return;
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	do {
		if (!parse_mapping(line, pidbuf, &none, &none, &m, &l) ||
		    l.perms[2] != 'x')
			continue;
		maps = hash_bytes(&l.start, sizeof(l.start), maps);
		maps = hash_bytes(&m.ino, sizeof(m.ino), maps);
		if (!late.helper || file_known(&late.seen, &m))
			continue;
		/* A new file: with the mounts, to tell FUSE (rarely needed). */
		if (!mounts)
			read_mounts(pidbuf, &mnts);
		mounts = true;
		if (parse_mapping(line, pidbuf, &mnts, &self_mnts, &m, &l) &&
		    late_new_file(&m, &l) && !why[0])
			snprintf(why, sizeof(why), "%s mapped", m.path);
	} while (read_line(f, line, sizeof(line)));
	free(mnts.v);
	fclose(f);
	/*
	 * Name what changed now, while the process lives. Not into the
	 * modules of the image before an exec the ring buffer has not shown
	 * yet: stacks of that image may still come, and they are named when
	 * the event makes a new record (proc_forget()).
	 */
	p = proc_find(pid);
	if (!p) {
		p = proc_get(pid);
		if (p)
			p->maps = maps;
	} else if (maps != p->maps) {
		if (p->exe && exe_id(pid) == p->exe)
			proc_report(p);
		p->maps = maps;
	}
	if (why[0])
		late_load(pid, why);
}

/*
 * Called from the main loop and for each event: the ring buffer's
 * callback runs for as long as events keep coming, seconds under load.
 */
static void late_tick(void)
{
	struct timespec now;

	late_kick();
	if (!late.target)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - late.scanned.tv_sec) * 1000 +
	    (now.tv_nsec - late.scanned.tv_nsec) / 1000000 < LATE_SCAN_MS)
		return;
	late.scanned = now;
	late_scan(late.target);
}

static void user_frame_lookup(struct sbuf *b, struct proc *p, uint64_t addr,
			      bool *reported)
{
	Dwfl_Module *mod = NULL;
	const char *name, *mname;
	Dwarf_Addr start, end;
	char buf[64];

	if (p) {
		mod = dwfl_addrmodule(p->dwfl, addr);
		if (!mod && !*reported) {
			*reported = true;
			if (!proc_report(p))
				mod = dwfl_addrmodule(p->dwfl, addr);
		}
	}
	mname = mod ? dwfl_module_info(mod, NULL, &start, &end, NULL, NULL,
				       NULL, NULL) : NULL;
	if (!mod || addr < start || addr >= end) {
		sb_add(b, "[unknown]");
		return;
	}
	name = dwfl_module_addrname(mod, addr);
	if (name) {
		/* ";" separates frames in the folded format. */
		if (!strchr(name, ';')) {
			sb_add(b, name);
			return;
		}
	}
	if (mname && strrchr(mname, '/'))
		mname = strrchr(mname, '/') + 1;
	snprintf(buf, sizeof(buf), "+0x%" PRIx64, (uint64_t)(addr - start));
	sb_add(b, mname ? mname : "[unknown]");
	sb_add(b, buf);
}

/*
 * An unresolved address is not cached: it may be in a library that a
 * later report finds.
 */
static void user_frame(struct sbuf *b, struct proc *p, uint64_t addr,
		       bool *reported)
{
	uint64_t h = hash_bytes(&addr, sizeof(addr), FNV_BASIS) % SYM_BUCKETS;
	struct sbuf name = { 0 };
	struct sym *s;

	if (!p) {
		sb_add(b, "[unknown]");
		return;
	}
	for (s = p->syms[h]; s; s = s->next)
		if (s->addr == addr) {
			sb_add(b, s->name);
			return;
		}
	user_frame_lookup(&name, p, addr, reported);
	sb_add(b, name.s);
	if (!strcmp(name.s, "[unknown]")) {
		free(name.s);
		return;
	}
	s = malloc(sizeof(*s));
	if (!s) {
		free(name.s);
		return;
	}
	s->addr = addr;
	s->name = name.s;
	s->next = p->syms[h];
	p->syms[h] = s;
}

/* ---- events ---- */

static struct {
	uint64_t samples, offcpu, stacks, joined, unmatched_stacks;
	uint64_t frames, ctxs, foreign_ctxs;
} st;

static int on_event(void *ctx, void *data, size_t size)
{
	const struct up_hdr *h = data;
	struct pending **pp, *p;
	struct sbuf b = { 0 };
	bool reported = false;
	struct proc *proc;
	size_t i;
	int f;

	late_tick();

	if (size < sizeof(*h))
		return 0;
	switch (h->kind) {
	case UP_SAMPLE: {
		const struct up_sample *s = data;
		char *k = NULL;

		st.samples++;
		if (opt.kernel && h->nr && size >= sizeof(*h) + h->nr * 8)
			k = kstack_string(s->kframes, h->nr);
		pend_add(pend_get(h->tid, h->cookie), k, 1);
		break;
	}
	case UP_OFFCPU:
		st.offcpu++;
		pend_add(pend_get(h->tid, h->cookie), NULL, h->weight);
		break;
	case UP_CTX: {
		const struct up_ctx *c = data;

		st.ctxs++;
		/*
		 * The kernel sends a context for every entry walked for any
		 * tracer (perf's fp,defer, ftrace's userstacktrace_delay), and
		 * a stack here only for those in which we asked: a record
		 * made for any other would wait for good (review m18). Ours
		 * has its samples here already: they went into the ring in
		 * that entry, before its return to user space emitted this.
		 */
		p = *pend_slot(h->tid, h->cookie);
		if (!p) {
			st.foreign_ctxs++;
			break;
		}
		/* Status 0: a whole, valid record. */
		if (!h->weight)
			snprintf(p->span, sizeof(p->span),
				 "span:%02x%02x%02x%02x%02x%02x%02x%02x",
				 c->span_id[0], c->span_id[1], c->span_id[2],
				 c->span_id[3], c->span_id[4], c->span_id[5],
				 c->span_id[6], c->span_id[7]);
		break;
	}
	case UP_EXEC:
		proc_forget(h->pid);
		break;
	case UP_STACK: {
		const struct up_stack *s = data;
		unsigned int nr = h->nr;

		st.stacks++;
		st.frames += nr;
		pp = pend_slot(h->tid, h->cookie);
		p = *pp;
		/* No sample of ours: another tool's request, or a lost sample. */
		if (!p || !p->samples) {
			st.unmatched_stacks++;
			if (p) {
				*pp = p->next;
				pend_free(p);
			}
			break;
		}
		*pp = p->next;
		if (size < sizeof(*h) + (size_t)nr * 8)
			nr = 0;
		sb_add(&b, h->comm);
		if (opt.span && p->span[0]) {
			sb_add(&b, ";");
			sb_add(&b, p->span);
		}
		proc = nr ? proc_get(h->pid) : NULL;
		if (!nr)
			sb_add(&b, ";[unknown]");
		/*
		 * Frames left out, by the kernel's bound or by ours: say so
		 * where the outer frames would be, as PerfView does, rather
		 * than show a cut stack as a whole one.
		 */
		else if ((h->weight & UP_STACK_TRUNCATED) ||
			 (uint32_t)h->weight > nr)
			sb_add(&b, ";[truncated]");
		/*
		 * Outermost first. Every frame but the innermost is a return
		 * address: the call is the instruction before it, which may
		 * be the last of its function.
		 */
		for (f = nr - 1; f >= 0; f--) {
			sb_add(&b, ";");
			user_frame(&b, proc, s->frames[f] - (f > 0), &reported);
		}
		for (i = 0; i < p->nr_ks; i++) {
			size_t len = b.len;

			if (p->ks[i].kstack) {
				sb_add(&b, ";");
				sb_add(&b, p->ks[i].kstack);
			}
			fold_add(b.s, p->ks[i].weight);
			b.len = len;
			b.s[len] = '\0';
		}
		st.joined += p->samples;
		pend_free(p);
		free(b.s);
		break;
	}
	}
	return 0;
}

/* ---- setup ---- */

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !opt.verbose)
		return 0;
	if (level == LIBBPF_INFO && !opt.verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static bool cap_effective(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

static bool has_caps(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (!geteuid())
		return true;
	if (syscall(SYS_capget, &hdr, d))
		return false;
	return cap_effective(d, CAP_SYS_ADMIN) ||
	       (cap_effective(d, CAP_BPF) && cap_effective(d, CAP_PERFMON));
}

/* The kfunc is in the kernel's BTF only with the series (and BTF). */
static int check_kfunc(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int id;

	if (!btf) {
		fprintf(stderr,
			"unwindprof: kernel lacks %s (needs the deferred unwind series with BTF): no kernel BTF\n",
			KFUNC_NAME);
		return -1;
	}
	id = btf__find_by_name_kind(btf, KFUNC_NAME, BTF_KIND_FUNC);
	btf__free(btf);
	if (id < 0) {
		fprintf(stderr,
			"unwindprof: kernel lacks %s (needs the deferred unwind series with BTF)\n",
			KFUNC_NAME);
		return -1;
	}
	return 0;
}

/*
 * eh2sframe next to this binary, else in an absolute PATH directory.
 * Run as root, so only a file that root or we own and nobody else may
 * write: the rule eh2sframe applies to the files it converts.
 */
static bool helper_ok(const char *path)
{
	struct stat s;

	return !stat(path, &s) && S_ISREG(s.st_mode) && !access(path, X_OK) &&
	       (!s.st_uid || s.st_uid == getuid()) && !(s.st_mode & 0022);
}

static char *find_helper(void)
{
	char self[PATH_MAX], *slash, *path, *dir, *save = NULL, *found = NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash && asprintf(&found, "%.*s/%s", (int)(slash - self),
				      self, HELPER) > 0) {
			if (helper_ok(found))
				return found;
			free(found);
		}
	}
	found = NULL;
	path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	for (dir = path ? strtok_r(path, ":", &save) : NULL; dir;
	     dir = strtok_r(NULL, ":", &save)) {
		if (*dir != '/')
			continue;
		if (asprintf(&found, "%s/%s", dir, HELPER) < 0) {
			found = NULL;
			break;
		}
		if (helper_ok(found))
			break;
		free(found);
		found = NULL;
	}
	free(path);
	return found;
}

/*
 * --tables: what eh2sframe loads for the target, its output on stderr
 * (stdout may be the profile). A COMMAND is not running yet: its program
 * and the libraries it needs, as perf record does; -p: the files the
 * process maps; -a: those every process maps. What is mapped later is
 * loaded as it is seen (late_load()).
 */
static void load_tables(void)
{
	const char *argv[8];
	char pidbuf[16], *helper;
	int argc = 0, status;
	pid_t child;

	if (geteuid()) {
		fprintf(stderr,
			"unwindprof: --tables: SFrame tables not loaded: loading them needs root (run '%s --load' as root first)\n",
			HELPER);
		return;
	}
	helper = find_helper();
	if (!helper) {
		fprintf(stderr,
			"unwindprof: --tables: SFrame tables not loaded: no %s next to unwindprof or in an absolute PATH directory\n",
			HELPER);
		return;
	}
	argv[argc++] = helper;
	argv[argc++] = "--load";
	if (opt.pid) {
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)opt.pid);
		argv[argc++] = "--pid";
		argv[argc++] = pidbuf;
	} else if (opt.cmd) {
		argv[argc++] = "--needed";
		argv[argc++] = "--";
		argv[argc++] = opt.cmd[0];
	} else {
		argv[argc++] = "--all";
	}
	argv[argc] = NULL;
	fprintf(stderr, "unwindprof: --tables: %s --load %s%s\n", helper,
		opt.pid ? "--pid " : opt.cmd ? "--needed -- " : "--all",
		opt.pid ? pidbuf : opt.cmd ? opt.cmd[0] : "");
	child = spawn_helper(argv);
	if (child < 0) {
		perror("unwindprof: fork");
		free(helper);
		return;
	}
	if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr,
			"unwindprof: --tables: %s failed (status 0x%x): stacks may be cut where there is no table\n",
			HELPER, status);
		/* No store, or a full one: later runs would fail as well. */
		free(helper);
		return;
	}
	/* And for code mapped from now on, see late_load(). */
	late_start(helper);
}

/*
 * The COMMAND, forked now but held before its exec until the filter has
 * its pid and the programs are attached: its first instructions are
 * profiled too. It waits on a pipe; closing it without a byte cancels.
 */
static pid_t start_command(int *go)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe2(fds, O_CLOEXEC)) {
		perror("unwindprof: pipe");
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("unwindprof: fork");
		return -1;
	}
	if (!pid) {
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(opt.cmd[0], opt.cmd);
		fprintf(stderr, "unwindprof: %s: %s\n", opt.cmd[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

static int open_sampling(struct unwindprof *skel, struct bpf_link ***links, int *nr)
{
	int cpus = libbpf_num_possible_cpus(), cpu, fd, opened = 0;
	struct perf_event_attr attr;

	if (cpus <= 0)
		return -1;
	*links = calloc(cpus, sizeof(**links));
	if (!*links)
		return -1;
	*nr = cpus;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = opt.hz;
	for (cpu = 0; cpu < cpus; cpu++) {
		fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
			     PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)	/* possible, not online */
				continue;
			fprintf(stderr, "unwindprof: perf_event_open on CPU %d: %s\n",
				cpu, strerror(errno));
			return -1;
		}
		(*links)[cpu] = bpf_program__attach_perf_event(skel->progs.on_sample, fd);
		if (!(*links)[cpu]) {
			fprintf(stderr, "unwindprof: attaching to CPU %d's clock: %s\n",
				cpu, strerror(errno));
			close(fd);
			return -1;
		}
		opened++;
	}
	return opened ? 0 : -1;
}

static int parse_args(int argc, char **argv)
{
	enum { O_OFFCPU = 256, O_KERNEL, O_SPAN, O_TABLES };
	static const struct option longopts[] = {
		{ "freq",	required_argument, NULL, 'F' },
		{ "pid",	required_argument, NULL, 'p' },
		{ "all",	no_argument,	   NULL, 'a' },
		{ "duration",	required_argument, NULL, 'd' },
		{ "output",	required_argument, NULL, 'o' },
		{ "verbose",	no_argument,	   NULL, 'v' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ "off-cpu",	no_argument,	   NULL, O_OFFCPU },
		{ "kernel",	no_argument,	   NULL, O_KERNEL },
		{ "span",	no_argument,	   NULL, O_SPAN },
		{ "tables",	no_argument,	   NULL, O_TABLES },
		{ }
	};
	char *end;
	long v;
	int c;

	/* "+": options end at the COMMAND, whose own options are its own. */
	while ((c = getopt_long(argc, argv, "+F:p:ad:o:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'F':
			v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 100000) {
				fprintf(stderr,
					"unwindprof: bad -F '%s': 1 to 100000 samples a second\n",
					optarg);
				return -1;
			}
			opt.hz = v;
			break;
		case 'p':
			v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > INT_MAX) {
				fprintf(stderr, "unwindprof: bad -p '%s': a process id\n", optarg);
				return -1;
			}
			opt.pid = v;
			break;
		case 'a':
			opt.all = true;
			break;
		case 'd':
			opt.duration = strtod(optarg, &end);
			if (*end || !(opt.duration > 0)) {
				fprintf(stderr,
					"unwindprof: bad -d '%s': seconds, more than 0\n", optarg);
				return -1;
			}
			break;
		case 'o':
			opt.out = optarg;
			break;
		case 'v':
			opt.verbose = true;
			break;
		case O_OFFCPU:
			opt.off_cpu = true;
			break;
		case O_KERNEL:
			opt.kernel = true;
			break;
		case O_SPAN:
			opt.span = true;
			break;
		case O_TABLES:
			opt.tables = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc)
		opt.cmd = argv + optind;
	if (opt.pid && opt.all) {
		fprintf(stderr, "unwindprof: -p and -a exclude each other\n");
		return -1;
	}
	if (opt.pid && opt.cmd) {
		fprintf(stderr,
			"unwindprof: -p and a COMMAND exclude each other (use -d to stop)\n");
		return -1;
	}
	if (!opt.pid && !opt.all && !opt.cmd) {
		fprintf(stderr, "unwindprof: nothing to profile: give -p PID, -a or a COMMAND\n");
		usage(stderr);
		return -1;
	}
	if (opt.kernel && opt.off_cpu) {
		fprintf(stderr, "unwindprof: --kernel applies to on-CPU samples only\n");
		return -1;
	}
	if (opt.pid && kill(opt.pid, 0) && errno == ESRCH) {
		fprintf(stderr, "unwindprof: no process %d\n", (int)opt.pid);
		return -1;
	}
	return 0;
}

static int cmp_folded(const void *a, const void *b)
{
	const struct folded *x = *(struct folded * const *)a;
	const struct folded *y = *(struct folded * const *)b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->stack, y->stack);
}

static int write_output(void)
{
	struct folded **all, *f;
	FILE *out = stdout;
	size_t i, n = 0;

	if (opt.out) {
		out = fopen(opt.out, "w");
		if (!out) {
			fprintf(stderr, "unwindprof: %s: %s\n", opt.out, strerror(errno));
			return -1;
		}
	}
	all = calloc(nr_folds + 1, sizeof(*all));
	if (!all)
		return -1;
	for (i = 0; i < FOLD_BUCKETS; i++)
		for (f = folds[i]; f; f = f->next)
			all[n++] = f;
	/* Off-CPU: microseconds, rounded, from the nanoseconds added up. */
	if (opt.off_cpu)
		for (i = 0; i < n; i++)
			all[i]->count = (all[i]->count + 500) / 1000;
	qsort(all, n, sizeof(*all), cmp_folded);
	for (i = 0; i < n; i++)
		if (all[i]->count)
			fprintf(out, "%s %" PRIu64 "\n", all[i]->stack, all[i]->count);
	free(all);
	if (out != stdout && fclose(out)) {
		fprintf(stderr, "unwindprof: %s: %s\n", opt.out, strerror(errno));
		return -1;
	}
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_link **cpu_links = NULL;
	struct unwindprof *skel = NULL;
	struct ring_buffer *rb = NULL;
	uint64_t counters[UP_CNT_NR] = { 0 };
	struct up_config cfg = { 0 };
	struct timespec t0, now;
	int go = -1, nr_links = 0, i, err, status = 0, ret = 1;
	pid_t child = 0;
	uint32_t key;
	uint8_t one = 1;
	uint64_t waiting = 0, held = 0, bare = 0;
	struct pending *p;

	if (parse_args(argc, argv))
		return 2;
	libbpf_set_print(libbpf_print);
	if (!has_caps()) {
		fprintf(stderr, "unwindprof: needs root, or CAP_BPF and CAP_PERFMON\n");
		return 1;
	}
	if (check_kfunc())
		return 1;
	if (opt.kernel && load_kallsyms()) {
		fprintf(stderr,
			"unwindprof: --kernel: cannot read kernel symbols from /proc/kallsyms\n");
		return 1;
	}
	if (opt.tables)
		load_tables();
	/* For a mapped file on a device the process's namespace does not show. */
	read_mounts("self", &self_mnts);
	copy_self_vdso();

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	skel = unwindprof__open();
	if (!skel) {
		fprintf(stderr, "unwindprof: opening the BPF object: %s\n", strerror(errno));
		return 1;
	}
	bpf_program__set_autoload(skel->progs.on_sample, !opt.off_cpu);
	bpf_program__set_autoload(skel->progs.on_switch, opt.off_cpu);
	bpf_program__set_autoload(skel->progs.on_ctx, opt.span);
	err = unwindprof__load(skel);
	if (err) {
		if (err == -EPERM || err == -EACCES)
			fprintf(stderr,
				"unwindprof: loading the BPF programs: %s: needs root, or CAP_BPF and CAP_PERFMON\n",
				strerror(-err));
		else if (err == -ESRCH || err == -ENOENT)
			fprintf(stderr,
				"unwindprof: kernel lacks %s (needs the deferred unwind series with BTF)\n",
				KFUNC_NAME);
		else
			fprintf(stderr,
				"unwindprof: loading the BPF programs: %s (the kernel needs the deferred unwind series with BTF; -v shows libbpf's log)\n",
				strerror(-err));
		goto out;
	}

	key = 0;
	cfg.filter_all = opt.all;
	cfg.want_kernel = opt.kernel;
	cfg.self_tgid = getpid();
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.config), &key, &cfg, BPF_ANY)) {
		fprintf(stderr, "unwindprof: configuring: %s\n", strerror(errno));
		goto out;
	}
	if (opt.cmd) {
		child = start_command(&go);
		if (child < 0)
			goto out;
	}
	if (!opt.all) {
		key = child ? child : opt.pid;
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.targets), &key, &one, BPF_ANY)) {
			fprintf(stderr, "unwindprof: selecting %u: %s\n", key, strerror(errno));
			goto out;
		}
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.rb), on_event, NULL, NULL);
	if (!rb) {
		fprintf(stderr, "unwindprof: ring buffer: %s\n", strerror(errno));
		goto out;
	}
	/* The stack's and the context's programs first: no sample waits in vain. */
	if (unwindprof__attach(skel)) {
		fprintf(stderr, "unwindprof: attaching: %s\n", strerror(errno));
		goto out;
	}
	if (!opt.off_cpu && open_sampling(skel, &cpu_links, &nr_links))
		goto out;

	/* -p, or a COMMAND, whose mappings late_tick() looks at. */
	late.target = child ? child : opt.pid;
	if (child) {
		if (write(go, "", 1) != 1) {
			perror("unwindprof: starting the command");
			goto out;
		}
		close(go);
		go = -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop) {
		err = ring_buffer__poll(rb, LATE_SCAN_MS);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "unwindprof: ring buffer: %s\n", strerror(-err));
			break;
		}
		if (child && waitpid(child, &status, WNOHANG) == child) {
			child = 0;
			late.target = 0;
			break;
		}
		if (opt.pid && kill(opt.pid, 0) && errno == ESRCH)
			break;
		late_tick();
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (opt.duration && (now.tv_sec - t0.tv_sec) +
		    (now.tv_nsec - t0.tv_nsec) / 1e9 >= opt.duration)
			break;
	}
	/*
	 * No more helpers for what the last stacks show; one still running
	 * ends on its own (its table serves the next run).
	 */
	late.target = 0;
	late.queued = 0;
	free(late.helper);
	late.helper = NULL;
	/*
	 * Stop sampling, then take what is left: the last stacks of an
	 * exiting process are delivered as it exits, before it is reaped.
	 */
	for (i = 0; i < nr_links; i++)
		bpf_link__destroy(cpu_links[i]);
	nr_links = 0;
	bpf_link__destroy(skel->links.on_switch);
	skel->links.on_switch = NULL;
	ring_buffer__consume(rb);

	for (key = 0; key < UP_CNT_NR; key++)
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.counters), &key, &counters[key]);
	for (i = 0; i < PEND_BUCKETS; i++)
		for (p = pend[i]; p; p = p->next) {
			waiting += p->samples;
			held++;
			/* Made by a context alone: no stack will free it. */
			bare += !p->samples;
		}
	if (write_output())
		goto out;
	fprintf(stderr, "unwindprof: %" PRIu64 " %s, %" PRIu64 " stacks received, %" PRIu64
		" joined, %" PRIu64 " without a stack, %" PRIu64 " lost, mean frames %.1f\n",
		opt.off_cpu ? st.offcpu : st.samples,
		opt.off_cpu ? "off-CPU intervals" : "samples", st.stacks, st.joined,
		waiting, counters[UP_CNT_LOST],
		st.stacks ? (double)st.frames / st.stacks : 0.0);
	if (opt.verbose)
		fprintf(stderr, "unwindprof: %" PRIu64 " stacks of no sample, %" PRIu64
			" failed requests, %" PRIu64 " contexts (%" PRIu64
			" of no sample), %" PRIu64 " entries held at the end (%" PRIu64
			" of no sample)\n",
			st.unmatched_stacks, counters[UP_CNT_REQ_FAIL], st.ctxs,
			st.foreign_ctxs, held, bare);
	if (opt.verbose)
		fprintf(stderr,
			"unwindprof: %" PRIu64 " modules dropped (unmapped since they were read)\n",
			modules_dropped);
	if (late.runs)
		fprintf(stderr,
			"unwindprof: --tables: %s ran %u times for code mapped while profiling\n",
			HELPER, late.runs);
	if (!child && opt.cmd && WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "unwindprof: %s exited with status %d\n", opt.cmd[0],
			WEXITSTATUS(status));
	ret = 0;
out:
	if (go >= 0)
		close(go);	/* a command not started: it exits */
	/*
	 * A command that never started exits now that the pipe is closed;
	 * one still running after -d or ^C is left to run.
	 */
	if (child > 0 && ret)
		waitpid(child, NULL, 0);
	for (i = 0; i < nr_links; i++)
		bpf_link__destroy(cpu_links[i]);
	free(cpu_links);
	ring_buffer__free(rb);
	unwindprof__destroy(skel);
	return ret;
}
