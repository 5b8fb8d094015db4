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

/* Is @path an executable regular file? */
static bool is_exec(const char *path)
{
	return !access(path, X_OK);
}

/* eh2sframe next to perf's own binary, else the first one in PATH. */
static char *find_helper(void)
{
	char self[PATH_MAX], *slash, *path, *dir, *save = NULL, *found = NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash && asprintf(&found, "%.*s/%s", (int)(slash - self), self,
				      SFRAME_TABLES_HELPER) > 0) {
			if (is_exec(found))
				return found;
			zfree(&found);
		}
	}
	path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	for (dir = path ? strtok_r(path, ":", &save) : NULL; dir;
	     dir = strtok_r(NULL, ":", &save)) {
		if (asprintf(&found, "%s/%s", *dir ? dir : ".",
			     SFRAME_TABLES_HELPER) < 0) {
			found = NULL;
			break;
		}
		if (is_exec(found))
			break;
		zfree(&found);
	}
	free(path);
	return found;
}

/*
 * The helper's arguments for @target: the workload's program with the
 * libraries it needs, or the mappings of the processes to be sampled, or
 * of every process for a CPU-wide recording. Returns the number set in
 * @argv (at most @max - 1; NULL-terminated), 0 for nothing to load.
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
	if (workload) {
		argv[argc++] = "--needed";
		argv[argc++] = workload;
	} else if (list) {
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
	} else if (target__has_cpu(target)) {
		argv[argc++] = "--all";
	} else {
		return 0;
	}
	argv[argc] = NULL;
	return argc;
}

/**
 * sframe_tables__load - load SFrame tables for what will be sampled
 * @target: what the recording samples
 * @workload: the program the recording starts, or NULL
 *
 * Prints one line: what the helper loaded and left out, or why nothing
 * was loaded and how to load the tables. Says nothing on a kernel without
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
		if (workload)
			pr_warning("perf: SFrame tables for code without frame pointers are not loaded (needs CAP_PERFMON): as root, run 'eh2sframe --load --needed %s' first\n",
				   workload);
		else
			pr_warning("perf: SFrame tables for code without frame pointers are not loaded (needs CAP_PERFMON): as root, run 'eh2sframe --load' on the files to sample first\n");
		return;
	}
	close(fd);

	helper = find_helper();
	if (!helper) {
		pr_warning("perf: no SFrame tables loaded: %s (tools/unwind) is not next to perf or in PATH\n",
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
