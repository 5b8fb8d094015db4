// SPDX-License-Identifier: GPL-2.0
/*
 * Load SFrame tables for the files that a recording with --call-graph
 * fp,defer will sample, so that the kernel's deferred walk goes through
 * code that has neither frame pointers nor an SFrame section: on a
 * distribution, every library and almost every program.
 *
 * eh2sframe (tools/unwind) converts a file's .eh_frame to SFrame in user
 * space and loads the table into /dev/sframe_tables for the file's
 * build-id; see Documentation/trace/unwind_user_sframe.rst. perf runs it as
 * a helper, as it runs objdump: the converter stays one tool that can also
 * load tables once at boot, and perf links no new library for it. Tables
 * stay loaded after perf exits; they serve every process mapping the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <perf/event.h>
#include <subcmd/run-command.h>

#include "debug.h"
#include "evlist.h"
#include "sframe-tables.h"
#include "strlist.h"
#include "target.h"

#define SFRAME_TABLES_DEV	"/dev/sframe_tables"
#define SFRAME_TABLES_HELPER	"eh2sframe"

#ifndef CAP_PERFMON
#define CAP_PERFMON		38
#endif
#ifndef CAP_SYS_ADMIN
#define CAP_SYS_ADMIN		21
#endif

/*
 * May perf run @path? perf is often run as root: it must not run, as
 * root, a program that another user could have written (the rule
 * eh2sframe applies to the files it converts). So: an executable regular
 * file owned by root, by the user running perf, or by @owner (the owner of
 * perf's own binary, who decides what runs anyway), and writable by
 * nobody else.
 */
static bool helper_ok(const char *path, uid_t owner)
{
	struct stat st;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || access(path, X_OK))
		return false;
	if ((st.st_uid && st.st_uid != getuid() && st.st_uid != owner) ||
	    (st.st_mode & 0022)) {	/* writable by group or others */
		pr_warning("perf: not running %s: owned by uid %u, mode %04o: others could have written it\n",
			   path, (unsigned int)st.st_uid,
			   (unsigned int)(st.st_mode & 07777));
		return false;
	}
	return true;
}

/*
 * eh2sframe next to perf's own binary, else in the first absolute PATH
 * entry that has it. A relative entry (".", "bin") is skipped: it names a
 * directory under wherever perf was started, for root perhaps a user's
 * directory. strtok_r() never returns the empty entry, which a shell
 * takes as ".".
 */
static char *find_helper(void)
{
	char self[PATH_MAX], *slash, *path, *dir, *save = NULL, *found = NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct stat st;

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash && !stat("/proc/self/exe", &st) &&
		    asprintf(&found, "%.*s/%s", (int)(slash - self), self,
			     SFRAME_TABLES_HELPER) > 0) {
			if (helper_ok(found, st.st_uid))
				return found;
			zfree(&found);
		}
	}
	path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	for (dir = path ? strtok_r(path, ":", &save) : NULL; dir;
	     dir = strtok_r(NULL, ":", &save)) {
		if (*dir != '/')
			continue;
		if (asprintf(&found, "%s/%s", dir, SFRAME_TABLES_HELPER) < 0) {
			found = NULL;
			break;
		}
		if (helper_ok(found, 0))
			break;
		zfree(&found);
	}
	free(path);
	return found;
}

/*
 * The helper's arguments for @target and @workload (NULL when perf starts
 * none). Returns the number set in @argv (at most @max - 1;
 * NULL-terminated), 0 for nothing to load.
 *
 *  - -p/-t: the files those processes map (--pid). Not the workload: with
 *    -p/-t perf samples only those processes, and a workload only says
 *    when to stop ("-p 1234 -- sleep 10").
 *  - -a/-C: the files every process maps (--all), and the workload's
 *    program with the libraries it needs (--needed): it is sampled too,
 *    and --all cannot see it, as it does not run yet.
 *  - otherwise: the workload's program and the libraries it needs.
 *
 * eh2sframe loads a table for a file of --pid or --all only if no user
 * but root or the one running perf can have written it, and says which
 * it loaded and which it skipped, and why (tools/unwind/load.c).
 */
static int helper_args(struct target *target, const char *workload,
		       const char **argv, int max, char **pids)
{
	const char *list = target->pid ? target->pid : target->tid;
	int argc = 0;
	char *p;

	argv[argc++] = SFRAME_TABLES_HELPER;
	argv[argc++] = "--load";
	if (quiet)
		argv[argc++] = "-q";
	if (list) {
		*pids = strdup(list);
		if (!*pids)
			return 0;
		for (p = *pids; p && argc < max - 2; ) {
			char *comma = strchr(p, ',');

			if (comma)
				*comma = '\0';
			argv[argc++] = "--pid";
			argv[argc++] = p;
			p = comma ? comma + 1 : NULL;
		}
		pr_info("perf: SFrame tables: loading those of the files mapped by %s %s, if only root or you can write them (--no-sframe-tables: none)\n",
			strchr(list, ',') ? "processes" : "process", list);
	} else if (target__has_cpu(target)) {
		argv[argc++] = "--all";
		if (workload) {
			argv[argc++] = "--needed";
			argv[argc++] = "--";
			argv[argc++] = workload;
		}
		pr_info("perf: SFrame tables: loading those of the files mapped by every process, if only root or you can write them%s%s%s (--no-sframe-tables: none)\n",
			workload ? ", and of " : "", workload ?: "",
			workload ? " and the libraries it needs" : "");
	} else if (workload) {
		argv[argc++] = "--needed";
		argv[argc++] = "--";
		argv[argc++] = workload;
	} else {
		return 0;
	}
	argv[argc] = NULL;
	return argc;
}

/*
 * Whether a program perf runs may load tables too: root's does, and so does
 * one that inherits an ambient CAP_PERFMON or CAP_SYS_ADMIN. Capabilities
 * perf has from its own file (setcap cap_perfmon=ep perf) are not passed
 * on by execve().
 */
static bool helper_may_load(void)
{
	return !geteuid() ||
	       prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_PERFMON, 0, 0) == 1 ||
	       prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_SYS_ADMIN, 0, 0) == 1;
}

/**
 * struct sframe_tables - what one recording does with SFrame tables
 * @helper:	the path of eh2sframe, checked by find_helper()
 * @evlist:	the side-band events that watch for code mapped while
 *		recording, or NULL
 * @seen:	the files the helper ran for, by build-id and path (or device,
 *		inode and path where the kernel gave no build-id)
 * @loaded:	the build-ids the store had when last read
 * @runs:	how many times the helper ran for code mapped while recording
 * @found:	build-ids that appeared in the store after those runs
 * @stopping:	the recording ends: run the helper no more
 *
 * @seen, @loaded and the counts are only used by the side-band thread
 * while it runs, and read after it was joined.
 */
struct sframe_tables {
	char		*helper;
	struct evlist	*evlist;
	struct strlist	*seen;
	struct strlist	*loaded;
	unsigned int	runs;
	unsigned int	found;
	bool		stopping;
};

/*
 * Bound on the helper's runs for code mapped while recording: one per new
 * file, so a workload that maps file after file of its own making (each is
 * looked at, and a file others could write is refused) cannot keep perf's
 * side-band thread busy for the whole recording.
 */
#define SFRAME_TABLES_MAX_RUNS	1024U

/**
 * sframe_tables__load - load SFrame tables for what will be sampled
 * @target: what the recording samples
 * @workload: the program the recording starts, or NULL
 *
 * Prints one line: what the helper loaded and left out, or why nothing
 * was loaded and how to load the tables; with -p/-t/-a/-C, first what it
 * loads, then each file it loaded and each it skipped, as nobody named
 * them (see helper_args()). Says nothing on a kernel without
 * /dev/sframe_tables, where fp,defer has no tables to use. A failure never
 * stops the recording: without tables, stacks are cut where frame pointers
 * end, as they are with fp.
 *
 * Return: the state to watch for code mapped later with
 * sframe_tables__watch(), free with sframe_tables__delete(); NULL when no
 * table can be loaded (said why, but for a kernel without the store).
 */
struct sframe_tables *sframe_tables__load(struct target *target,
					  const char *workload)
{
	const char *argv[3 + 2 * 64 + 1];
	struct sframe_tables *st;
	struct child_process cmd;
	char *helper, *pids = NULL;
	sighandler_t old_chld;
	int fd, err;

	fd = open(SFRAME_TABLES_DEV, O_WRONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return NULL;
	if (fd < 0) {
		/* With -p/-t/-a/-C, the workload is not (all) that is sampled. */
		if (workload && !target->pid && !target->tid &&
		    !target__has_cpu(target))
			pr_warning("perf: SFrame tables for code without frame pointers are not loaded (needs CAP_PERFMON): as root, run 'eh2sframe --load --needed %s' first\n",
				   workload);
		else
			pr_warning("perf: SFrame tables for code without frame pointers are not loaded (needs CAP_PERFMON): as root, run 'eh2sframe --load' on the files to sample first\n");
		return NULL;
	}
	close(fd);
	if (!helper_may_load()) {
		pr_warning("perf: SFrame tables for code without frame pointers are not loaded: perf's CAP_PERFMON comes from its file, and %s would not have it: as root, run '%s --load' on the files to sample first\n",
			   SFRAME_TABLES_HELPER, SFRAME_TABLES_HELPER);
		return NULL;
	}

	helper = find_helper();
	if (!helper) {
		pr_warning("perf: no SFrame tables loaded: %s (tools/unwind) is not next to perf or in an absolute PATH directory\n",
			   SFRAME_TABLES_HELPER);
		return NULL;
	}
	st = zalloc(sizeof(*st));
	if (!st) {
		free(helper);
		return NULL;
	}
	st->helper = helper;
	if (!helper_args(target, workload, argv, ARRAY_SIZE(argv), &pids))
		goto out;
	argv[0] = helper;

	memset(&cmd, 0, sizeof(cmd));
	cmd.argv = argv;
	cmd.no_stdin = 1;
	cmd.stdout_to_stderr = 1;
	/*
	 * perf record takes SIGCHLD as the end of its workload: the helper's
	 * exit must not end the recording before it starts.
	 */
	old_chld = signal(SIGCHLD, SIG_DFL);
	err = run_command(&cmd);
	signal(SIGCHLD, old_chld);
	if (err)
		pr_warning("perf: %s failed (%d): some SFrame tables may be missing\n",
			   SFRAME_TABLES_HELPER, err);
out:
	free(pids);
	return st;
}

/* Read the store's build-ids into @st->loaded; false if it cannot be read. */
static bool read_loaded(struct sframe_tables *st)
{
	char *line = NULL, *space;
	size_t size = 0;
	FILE *f;

	f = fopen(SFRAME_TABLES_DEV, "re");
	if (!f)
		return false;
	while (getline(&line, &size, f) > 0) {
		space = strchr(line, ' ');
		if (!space)
			continue;
		*space = '\0';
		if (!strlist__has_entry(st->loaded, line) &&
		    strlist__add(st->loaded, line) == 0 && st->runs)
			st->found++;
	}
	free(line);
	fclose(f);
	return true;
}

struct helper_cmd {
	const char	*path;
	char		**argv;
	sigset_t	mask;
};

/*
 * The helper's parent, made by clone() with CLONE_VM | CLONE_VFORK and no
 * exit signal from the side-band thread. execve() makes a process's exit
 * signal SIGCHLD again, and perf record takes any SIGCHLD as its
 * workload's end: so this child never executes anything itself. It
 * vfork()s the helper and waits for it, and exits with its status,
 * unnoticed but by the thread that waits for it with __WALL. It shares
 * perf's memory, so it only makes system calls; the signals were blocked
 * around clone() so that none runs one of perf's handlers here, and with
 * the handlers reset to the default (so the helper's SIGCHLD is ignored
 * here), perf's mask is restored for the helper.
 */
static int helper_parent(void *arg)
{
	struct helper_cmd *hc = arg;
	int sig, fd, status;
	pid_t pid;

	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigprocmask(SIG_SETMASK, &hc->mask, NULL);
	pid = vfork();
	if (pid == 0) {
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0 && fd != STDIN_FILENO) {
			dup2(fd, STDIN_FILENO);
			close(fd);
		}
		dup2(STDERR_FILENO, STDOUT_FILENO);
		/* Not perf's event and data descriptors (own table: no CLONE_FILES). */
		close_range(3, ~0U, 0);
		execv(hc->path, hc->argv);
		_exit(127);
	}
	if (pid < 0)
		_exit(126);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			_exit(126);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 125);
}

/*
 * Run the helper for the files process @pid maps: "eh2sframe --load
 * --pid PID", so that eh2sframe's rule on who could have written a file
 * applies as at the start (a path from the event would be a file nobody
 * checked, named by a user). Returns the helper's exit status, or -1.
 * Called from the side-band thread while perf records: see
 * helper_parent() for why the helper is a grandchild.
 */
static int run_helper(struct sframe_tables *st, pid_t pid)
{
	char pidstr[16], *argv[6];
	struct helper_cmd hc;
	size_t stack_size = 64 * 1024;
	sigset_t all;
	char *stack;
	int status, argc = 0;
	pid_t child;

	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	argv[argc++] = st->helper;
	argv[argc++] = (char *)"--load";
	if (quiet)
		argv[argc++] = (char *)"-q";
	argv[argc++] = (char *)"--pid";
	argv[argc++] = pidstr;
	argv[argc] = NULL;
	hc.path = st->helper;
	hc.argv = argv;

	stack = malloc(stack_size);
	if (!stack)
		return -1;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &hc.mask);
	/* The stack grows down on x86-64 and arm64, where this runs. */
	child = clone(helper_parent, stack + stack_size,
		      CLONE_VM | CLONE_VFORK, &hc);
	pthread_sigmask(SIG_SETMASK, &hc.mask, NULL);
	free(stack);
	if (child < 0)
		return -1;
	while (waitpid(child, &status, __WALL) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* @pid is gone: it has no mappings for the helper to read. */
static bool process_gone(pid_t pid)
{
	return kill(pid, 0) && errno == ESRCH;
}

/*
 * One executable mapping made while recording (PERF_RECORD_MMAP2; a
 * dummy event with mmap set reports executable mappings only). A file
 * whose build-id has a table is done. Any other file is looked at once:
 * the helper runs for the process that mapped it, and loads what that
 * process maps and the store lacks. A process that was gone before the
 * helper read its mappings did not get its files looked at: they are
 * looked at again when mapped next.
 */
static int sframe_tables__mmap(union perf_event *event, void *data)
{
	struct perf_record_mmap2 *m = &event->mmap2;
	struct sframe_tables *st = data;
	char key[2 * 20 + 64 + PATH_MAX], id[2 * 20 + 1] = "";
	size_t i;

	if (event->header.type != PERF_RECORD_MMAP2 || READ_ONCE(st->stopping))
		return 0;
	/* Not a file: anonymous memory, [vdso], [stack]... ("//anon" too). */
	if (m->filename[0] != '/' || m->filename[1] == '/')
		return 0;
	if (event->header.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		for (i = 0; i < m->build_id_size && i < sizeof(m->build_id); i++)
			sprintf(id + 2 * i, "%02x", m->build_id[i]);
		if (strlist__has_entry(st->loaded, id))
			return 0;
		snprintf(key, sizeof(key), "%s %.*s", id, PATH_MAX - 1,
			 m->filename);
	} else {
		snprintf(key, sizeof(key), "%x:%x:%llu:%llu %.*s", m->maj,
			 m->min, (unsigned long long)m->ino,
			 (unsigned long long)m->ino_generation, PATH_MAX - 1,
			 m->filename);
	}
	if (strlist__has_entry(st->seen, key))
		return 0;
	/*
	 * A process already gone has nothing for the helper to read (with
	 * -a, the helper's own mappings are seen after it exited): its file
	 * is looked at when mapped next, and this costs no run. Nor is perf
	 * itself looked at.
	 */
	if (!m->pid || m->pid == (u32)getpid() || process_gone(m->pid))
		return 0;
	if (st->runs == SFRAME_TABLES_MAX_RUNS) {
		pr_warning("perf: SFrame tables: %u files mapped while recording were looked at, no more will be\n",
			   st->runs);
		st->runs++;
	}
	if (st->runs > SFRAME_TABLES_MAX_RUNS)
		return 0;
	st->runs++;
	strlist__add(st->seen, key);
	run_helper(st, m->pid);
	read_loaded(st);
	if (!(*id && strlist__has_entry(st->loaded, id)) &&
	    process_gone(m->pid)) {
		struct str_node *sn = strlist__find(st->seen, key);

		if (sn)
			strlist__remove(st->seen, sn);
	}
	return 0;
}

/**
 * sframe_tables__watch - load tables for code mapped while recording
 * @st: from sframe_tables__load()
 * @target: what the recording samples
 * @workload: the process of the workload perf started (not running yet),
 *	      or -1
 *
 * What a program dlopen()s (Python's extension modules, a JVM's libjvm.so,
 * plugins, NSS modules) and every program the workload executes ("perf
 * record -- sh -c ...") are mapped after sframe_tables__load() ran. A
 * thread watches the sampled processes' executable mappings, and runs the
 * helper for the process when a file without a table is mapped. Its first
 * walks may come before the table is in and stop where the frame pointers
 * end; the next ones use it (the kernel looks again for a table when the
 * store changed).
 *
 * Return: 0, or -1 if the watch could not start (said why).
 */
int sframe_tables__watch(struct sframe_tables *st, struct target *target,
			 pid_t workload)
{
	struct perf_event_attr attr = {
		.type		= PERF_TYPE_SOFTWARE,
		.config		= PERF_COUNT_SW_DUMMY,
		.size		= sizeof(attr),
		.mmap		= 1,
		.mmap2		= 1,
		.build_id	= 1,
		.sample_id_all	= 1,
		.watermark	= 1,
		.wakeup_watermark = 1,
		.exclude_kernel	= 1,
		.exclude_hv	= 1,
	};
	struct target t = *target;
	char pidstr[16];

	if (!st)
		return 0;
	st->seen = strlist__new(NULL, NULL);
	st->loaded = strlist__new(NULL, NULL);
	if (!st->seen || !st->loaded)
		goto fail;
	read_loaded(st);
	if (workload > 0 && !target->pid && !target->tid &&
	    !target__has_cpu(target)) {
		snprintf(pidstr, sizeof(pidstr), "%d", (int)workload);
		t.pid = pidstr;
	}
	/*
	 * A task's events on each CPU, inherited by the children it makes:
	 * a per-task inherited event on every CPU at once cannot be mmap()ed.
	 */
	t.default_per_cpu = true;
	t.per_thread = false;
	attr.inherit = !target__has_cpu(&t);
	st->evlist = evlist__new();
	if (!st->evlist ||
	    evlist__add_sb_event(st->evlist, &attr, sframe_tables__mmap, st))
		goto fail;
	/* evlist__start_sb_thread() deletes the evlist if it fails. */
	if (evlist__start_sb_thread(st->evlist, &t)) {
		st->evlist = NULL;
		goto fail;
	}
	return 0;
fail:
	evlist__delete(st->evlist);
	st->evlist = NULL;
	pr_warning("perf: SFrame tables: cannot watch for code mapped while recording: only the tables loaded at the start are used\n");
	return -1;
}

/**
 * sframe_tables__stop - end the watch, when the recording ends
 * @st: from sframe_tables__load(), or NULL
 *
 * Disables the watch's events first, so that the side-band thread's last
 * pass over its buffers ends whatever the watched processes still map,
 * and runs the helper no more; then waits for the thread (and a helper
 * run in progress). Says how many times the helper ran for code mapped
 * while recording and how many tables the store gained then, if it ran.
 * Calling it again does nothing.
 */
void sframe_tables__stop(struct sframe_tables *st)
{
	if (!st || !st->evlist)
		return;
	WRITE_ONCE(st->stopping, true);
	evlist__disable(st->evlist);
	evlist__stop_sb_thread(st->evlist);
	st->evlist = NULL;
	if (st->runs)
		pr_info("perf: SFrame tables: %u more loaded while recording, for code mapped after the start (%s ran %u %s)\n",
			st->found, SFRAME_TABLES_HELPER,
			min(st->runs, SFRAME_TABLES_MAX_RUNS),
			st->runs == 1 ? "time" : "times");
}

/**
 * sframe_tables__delete - end the watch if it still runs, and free @st
 * @st: from sframe_tables__load(), or NULL
 */
void sframe_tables__delete(struct sframe_tables *st)
{
	if (!st)
		return;
	sframe_tables__stop(st);
	strlist__delete(st->seen);
	strlist__delete(st->loaded);
	free(st->helper);
	free(st);
}
