// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame tables loaded for a file by build-id, through /dev/sframe_tables.
 *
 * Built like unwind_user_sframe (-O2 -fomit-frame-pointer -Wa,--gsframe,
 * static): main -> a -> b -> c, where c() reads the test client's
 * user_stack file with RBP set to 1, so only SFrame can walk past c().
 * The test writes a copy of itself whose PT_GNU_SFRAME program header is
 * turned into PT_NULL: the kernel cannot find the copy's section, and
 * walks it with frame pointers (one frame) unless a table is loaded for the
 * copy's build-id. The table is the program's own .sframe section, which
 * is what a converter from .eh_frame would produce for it.
 *
 * The copy is run as "COPY --walk [N]": it walks N times (default 1), and
 * between two walks tells its parent on fd 3 and waits for a byte on fd 4;
 * its exit status is 10 + the number of frames of the last walk that match
 * its call chain (a failure of the walk itself exits with 1).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/elf.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest.h"
#include "sframe_chain.h"

#define DEV		"/dev/sframe_tables"
#define MAXBYTES	"/proc/sys/kernel/sframe_tables_max_bytes"
#define PT_GNU_SFRAME_	0x6474e554
#define NT_GNU_BUILD_ID_	3

/* struct sframe_table_hdr of <linux/sframe_table.h>. */
struct table_hdr {
	uint32_t	magic;
	uint16_t	version;
	uint8_t		build_id_len;
	uint8_t		flags;
	uint8_t		build_id[20];
	uint32_t	sframe_size;
	uint64_t	sframe_vaddr;
	uint64_t	text_vaddr;
	uint64_t	text_size;
};

/* Report a failed check; returns 0 for the test's result. */
static int __printf(1, 2) fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	va_end(ap);
	return 0;
}

/* One walk from c(): how many frames match the chain from the innermost. */
static int walk(void)
{
	unsigned long got[DEPTH];
	unsigned int nr, ws, i;

	fd = open(STACK_FILE, O_RDONLY);
	if (fd < 0)
		exit(100);
	a();
	close(fd);
	nr = user_stack_parse(buf, nread, got, DEPTH, &ws);
	for (i = 0; i < nr && i < DEPTH; i++)
		if (got[i] != expected[i])
			break;
	return i;
}

static int copy_main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 1, ret = 0;
	char ch = 0;

	while (n-- > 0) {
		ret = walk();
		if (n && write(3, "w", 1) != 1)
			return 101;
		if (n && read(4, &ch, 1) != 1)
			return 102;
	}
	return 10 + ret;
}

/* The program's file, and what the test needs from it. */
static char *image;
static size_t image_len;
static struct table_hdr table;
static const void *sframe_bytes;
static off_t sframe_phdr_off, note_phdr_off;
static const char copy_path[] = "/tmp/sframe_tables_copy";
static const char copy2_path[] = "/tmp/sframe_tables_nobuildid";

static int load_image(void)
{
	struct elf64_hdr *eh;
	struct elf64_phdr *ph;
	struct elf64_shdr *sh;
	const char *names;
	int f = open("/proc/self/exe", O_RDONLY), i;
	struct stat st;

	if (f < 0 || fstat(f, &st))
		return -1;
	image_len = st.st_size;
	image = malloc(image_len);
	if (!image || read(f, image, image_len) != (ssize_t)image_len)
		return -1;
	close(f);
	eh = (struct elf64_hdr *)image;
	ph = (struct elf64_phdr *)(image + eh->e_phoff);
	sh = (struct elf64_shdr *)(image + eh->e_shoff);
	names = image + sh[eh->e_shstrndx].sh_offset;
	table.magic = 0x42544653;
	table.version = 1;
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_GNU_SFRAME_)
			sframe_phdr_off = (char *)&ph[i] - image;
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			table.text_vaddr = ph[i].p_vaddr;
			table.text_size = ph[i].p_memsz;
		}
		if (ph[i].p_type == PT_NOTE && !table.build_id_len) {
			const char *n = image + ph[i].p_offset, *end = n + ph[i].p_filesz;

			while (n + sizeof(struct elf64_note) <= end) {
				const struct elf64_note *nh = (const struct elf64_note *)n;
				const char *desc = n + sizeof(*nh) + ((nh->n_namesz + 3) & ~3);

				if (nh->n_type == NT_GNU_BUILD_ID_ && nh->n_descsz <= 20) {
					table.build_id_len = nh->n_descsz;
					memcpy(table.build_id, desc, nh->n_descsz);
					note_phdr_off = (char *)&ph[i] - image;
					break;
				}
				n = desc + ((nh->n_descsz + 3) & ~3);
			}
		}
	}
	/* The section's own extent (p_memsz may be larger). */
	for (i = 0; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, ".sframe")) {
			table.sframe_vaddr = sh[i].sh_addr;
			table.sframe_size = sh[i].sh_size;
			sframe_bytes = image + sh[i].sh_offset;
		}
	return sframe_phdr_off && note_phdr_off && sframe_bytes ? 0 : -1;
}

/* Write the program with the program headers at @off... turned into PT_NULL. */
static int write_copy(const char *path, off_t off1, off_t off2)
{
	struct elf64_phdr save1 = *(struct elf64_phdr *)(image + off1), save2;
	int f, ok;

	save2 = *(struct elf64_phdr *)(image + (off2 ? off2 : off1));
	((struct elf64_phdr *)(image + off1))->p_type = PT_NULL;
	if (off2)
		((struct elf64_phdr *)(image + off2))->p_type = PT_NULL;
	unlink(path);
	f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ok = f >= 0 && write(f, image, image_len) == (ssize_t)image_len;
	if (f >= 0)
		close(f);
	*(struct elf64_phdr *)(image + off1) = save1;
	if (off2)
		*(struct elf64_phdr *)(image + off2) = save2;
	return ok ? 0 : -1;
}

/* Load a table: 0 or -errno. */
static int load(const struct table_hdr *h, const void *data, size_t len)
{
	int f = open(DEV, O_WRONLY), ret = 0;

	if (f < 0)
		return -errno;
	if (write(f, h, sizeof(*h)) != sizeof(*h) ||
	    write(f, data, len) != (ssize_t)len)
		ret = -errno;
	close(f);
	return ret;
}

static int cmd(const char *s)
{
	int f = open(DEV, O_WRONLY), ret = 0;

	if (f < 0)
		return -errno;
	if (write(f, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -errno;
	close(f);
	return ret;
}

static char idhex[41];

static int remove_table(void)
{
	char s[64];

	snprintf(s, sizeof(s), "remove %s\n", idhex);
	return cmd(s);
}

/* The listing's line for the table: its mapping count, or -1 if absent. */
static int listed(void)
{
	char list[4096], *line, *save;
	int f = open(DEV, O_RDONLY), n = -1;
	ssize_t len;
	unsigned int size, maps;

	if (f < 0)
		return -2;
	len = read(f, list, sizeof(list) - 1);
	close(f);
	if (len < 0)
		return -2;
	list[len] = '\0';
	for (line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, idhex, strlen(idhex)) &&
		    sscanf(line + strlen(idhex), " %u %u", &size, &maps) == 2 &&
		    size == table.sframe_size)
			n = maps;
	return n;
}

/* Run @path --walk: how many frames matched, or -1. */
static int run(const char *path)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		execl(path, path, "--walk", (char *)NULL);
		_exit(99);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) < 10)
		return -1;
	return WEXITSTATUS(status) - 10;
}

static int test_unprivileged(void)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		_exit(open(DEV, O_RDONLY) < 0 && errno == EPERM ? 0 : 1);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       !WEXITSTATUS(status);
}

static int test_bad_tables(void)
{
	struct table_hdr h = table;
	char *bad = malloc(table.sframe_size);
	int ret, ok = 1;

	memcpy(bad, sframe_bytes, table.sframe_size);
	bad[0] ^= 0xff;			/* not the SFrame magic */
	ret = load(&h, bad, table.sframe_size);
	if (ret != -EINVAL)
		ok = fail("corrupt section: %d, want %d\n", ret, -EINVAL);
	memcpy(bad, sframe_bytes, table.sframe_size);
	bad[table.sframe_size / 2] ^= 0x5a;	/* somewhere in the FDEs or FREs */
	ret = load(&h, bad, table.sframe_size);
	if (ret != -EINVAL && ret != 0)
		ok = fail("damaged section: %d\n", ret);
	if (!ret)
		remove_table();		/* damage the reader tolerates */
	h.version = 2;
	ret = load(&h, sframe_bytes, table.sframe_size);
	if (ret != -EINVAL)
		ok = fail("bad version: %d, want %d\n", ret, -EINVAL);
	h = table;
	h.build_id_len = 21;
	ret = load(&h, sframe_bytes, table.sframe_size);
	if (ret != -EINVAL)
		ok = fail("bad build-id length: %d, want %d\n", ret, -EINVAL);
	ret = cmd("remove 00112233\n");
	if (ret != -ENOENT)
		ok = fail("remove unknown: %d, want %d\n", ret, -ENOENT);
	if (listed() != -1)
		ok = fail("a refused table is listed\n");
	free(bad);
	return ok;
}

static int test_other_build_id(void)
{
	struct table_hdr h = table;
	int n, ok;

	h.build_id[0] ^= 1;
	if (load(&h, sframe_bytes, table.sframe_size))
		return fail("loading for another build-id failed\n");
	n = run(copy_path);
	ok = n == 1;
	if (!ok)
		ksft_print_msg("copy walked %d frames with another file's table\n", n);
	snprintf(idhex, sizeof(idhex), "%02x", h.build_id[0]);
	for (n = 1; n < h.build_id_len; n++)
		snprintf(idhex + 2 * n, sizeof(idhex) - 2 * n, "%02x", h.build_id[n]);
	if (remove_table())
		ok = fail("remove failed\n");
	for (n = 0; n < table.build_id_len; n++)
		snprintf(idhex + 2 * n, sizeof(idhex) - 2 * n, "%02x", table.build_id[n]);
	return ok;
}

static int test_cap(void)
{
	char old[64] = "";
	int f = open(MAXBYTES, O_RDWR), ret;
	ssize_t n;

	if (f < 0)
		return fail("%s: %s\n", MAXBYTES, strerror(errno));
	n = read(f, old, sizeof(old) - 1);
	if (n <= 0 || pwrite(f, "100\n", 4, 0) != 4)
		return close(f), 0;
	ret = load(&table, sframe_bytes, table.sframe_size);
	if (pwrite(f, old, n, 0) != n)
		ret = -1000;
	close(f);
	if (ret != -ENOSPC)
		return fail("over the cap: %d, want %d\n", ret, -ENOSPC);
	return listed() == -1;
}

static int test_load_and_walk(void)
{
	int n, ret;

	ret = load(&table, sframe_bytes, table.sframe_size);
	if (ret)
		return fail("load: %d\n", ret);
	if (listed() != 0)
		return fail("not listed with 0 mappings: %d\n", listed());
	ret = load(&table, sframe_bytes, table.sframe_size);
	if (ret != -EEXIST)
		return fail("second load: %d, want %d\n", ret, -EEXIST);
	n = run(copy_path);
	if (n != DEPTH)
		return fail("copy walked %d frames with its table, want %d\n",
				      n, DEPTH);
	return 1;
}

/* The copy keeps the table it uses after its removal; a new run does not. */
static int test_remove_in_use(void)
{
	int to[2], from[2], status, ok = 1, maps;
	char ch;
	pid_t pid;

	if (pipe(to) || pipe(from))
		return 0;
	pid = fork();
	if (!pid) {
		/* The pipes may be on fds 3 and 4 themselves: move them first. */
		int w = fcntl(from[1], F_DUPFD, 10), r = fcntl(to[0], F_DUPFD, 10);

		if (w < 0 || r < 0 || dup2(w, 3) != 3 || dup2(r, 4) != 4)
			_exit(98);
		execl(copy_path, copy_path, "--walk", "2", (char *)NULL);
		_exit(99);
	}
	if (read(from[0], &ch, 1) != 1)
		return fail("copy did not walk\n");
	/* Mappings of runs that ended may be freed after an RCU grace period. */
	maps = listed();
	if (maps < 1)
		ok = fail("table used by %d mappings, want at least 1\n", maps);
	if (remove_table())
		ok = fail("remove in use failed\n");
	if (listed() != -1)
		ok = fail("removed table still listed\n");
	if (write(to[1], "g", 1) != 1 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status) != 10 + DEPTH)
		ok = fail("walk after remove: status %#x\n", status);
	if (run(copy_path) != 1)
		ok = fail("a new run still used the removed table\n");
	return ok;
}

/* The copy without its build-id note: nothing to look up, frame pointers. */
static int test_no_build_id(void)
{
	int n, ok;

	if (load(&table, sframe_bytes, table.sframe_size))
		return 0;
	n = run(copy2_path);
	ok = n == 1;
	if (!ok)
		ksft_print_msg("copy without build-id walked %d frames, want 1\n", n);
	if (remove_table())
		ok = 0;
	return ok;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--walk"))
		return copy_main(argc, argv);

	ksft_print_header();
	if (access(DEV, F_OK))
		ksft_exit_skip("%s: %s\n", DEV, strerror(errno));
	if (load_image())
		ksft_exit_fail_msg("no PT_GNU_SFRAME, build-id or .sframe in the program\n");
	if (write_copy(copy_path, sframe_phdr_off, 0) ||
	    write_copy(copy2_path, sframe_phdr_off, note_phdr_off))
		ksft_exit_fail_msg("cannot write the copies\n");
	for (int i = 0; i < table.build_id_len; i++)
		snprintf(idhex + 2 * i, sizeof(idhex) - 2 * i, "%02x", table.build_id[i]);
	remove_table();

	ksft_set_plan(9);
	ksft_test_result(walk() == DEPTH, "the program itself walks through its own section\n");
	ksft_test_result(run(copy_path) == 1,
			 "its copy without PT_GNU_SFRAME and no table: frame pointers, one frame\n");
	ksft_test_result(test_unprivileged(), "an unprivileged open is refused with EPERM\n");
	ksft_test_result(test_bad_tables(),
			 "bad tables and headers are refused with EINVAL, unknown removal with ENOENT\n");
	ksft_test_result(test_other_build_id(), "a table for another build-id is never used\n");
	ksft_test_result(test_cap(), "a load beyond the total cap fails with ENOSPC\n");
	ksft_test_result(test_load_and_walk(),
			 "with its table loaded the copy walks completely; a second load is EEXIST\n");
	ksft_test_result(test_remove_in_use(),
			 "removing a table in use: the mapping keeps it, a new run does not get it\n");
	ksft_test_result(test_no_build_id(),
			 "a mapping without build-id is left to frame pointers\n");
	unlink(copy_path);
	unlink(copy2_path);
	ksft_finished();
}
