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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <subcmd/run-command.h>

#include "debug.h"
#include "sframe-tables.h"
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
 */
void sframe_tables__load(struct target *target, const char *workload)
{
	const char *argv[3 + 2 * 64 + 1];
	struct child_process cmd;
	char *helper, *pids = NULL;
	sighandler_t old_chld;
	int fd, err;

	fd = open(SFRAME_TABLES_DEV, O_WRONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return;
	if (fd < 0) {
		/* With -p/-t/-a/-C, the workload is not (all) that is sampled. */
		if (workload && !target->pid && !target->tid &&
		    !target__has_cpu(target))
			pr_warning("perf: SFrame tables for code without frame pointers are not loaded (needs CAP_PERFMON): as root, run 'eh2sframe --load --needed %s' first\n",
				   workload);
		else
			pr_warning("perf: SFrame tables for code without frame pointers are not loaded (needs CAP_PERFMON): as root, run 'eh2sframe --load' on the files to sample first\n");
		return;
	}
	close(fd);
	if (!helper_may_load()) {
		pr_warning("perf: SFrame tables for code without frame pointers are not loaded: perf's CAP_PERFMON comes from its file, and %s would not have it: as root, run '%s --load' on the files to sample first\n",
			   SFRAME_TABLES_HELPER, SFRAME_TABLES_HELPER);
		return;
	}

	helper = find_helper();
	if (!helper) {
		pr_warning("perf: no SFrame tables loaded: %s (tools/unwind) is not next to perf or in an absolute PATH directory\n",
			   SFRAME_TABLES_HELPER);
		return;
	}
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
	free(helper);
}
