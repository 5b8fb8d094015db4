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
 *
 * "COPY --deep" walks from c() through a deeper chain instead, main ->
 * deep_0 -> ... -> deep_47 -> c(), whose functions are large: tables that
 * are valid and give the same frames, but whose rows are many and costly to
 * scan, show that a walk bounds what it reads (contract 14).
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

/*
 * Each deep_N jumps over DEEP_PAD bytes of its own code before it calls the
 * next, so that its call returns that far into it: a table with one row per
 * byte there makes every lookup of the walk scan some 16,000 rows.
 */
#define DEEP_N		48
#define DEEP_PAD	16400
#define DEEP_FRAMES	(DEEP_N + 2)	/* c, its caller deep_47, ..., main */
#define STR_(x)		#x
#define STR(x)		STR_(x)

static unsigned long deep_ret[DEEP_N];

/* Each argument once: @name is deep_@idx. -fno-inline keeps them apart. */
#define DEEP(name, idx, next)						\
static void name(void)							\
{									\
	USE_STACK(32);							\
	deep_ret[(idx)] = (unsigned long)__builtin_return_address(0);	\
	asm volatile("jmp 1f\n\t.skip " STR(DEEP_PAD) ", 0xcc\n1:");	\
	next();								\
	asm volatile("" ::: "memory");	/* no tail call */		\
}

DEEP(deep_47, 47, c) DEEP(deep_46, 46, deep_47) DEEP(deep_45, 45, deep_46)
DEEP(deep_44, 44, deep_45) DEEP(deep_43, 43, deep_44)
DEEP(deep_42, 42, deep_43) DEEP(deep_41, 41, deep_42)
DEEP(deep_40, 40, deep_41) DEEP(deep_39, 39, deep_40)
DEEP(deep_38, 38, deep_39) DEEP(deep_37, 37, deep_38)
DEEP(deep_36, 36, deep_37) DEEP(deep_35, 35, deep_36)
DEEP(deep_34, 34, deep_35) DEEP(deep_33, 33, deep_34)
DEEP(deep_32, 32, deep_33) DEEP(deep_31, 31, deep_32)
DEEP(deep_30, 30, deep_31) DEEP(deep_29, 29, deep_30)
DEEP(deep_28, 28, deep_29) DEEP(deep_27, 27, deep_28)
DEEP(deep_26, 26, deep_27) DEEP(deep_25, 25, deep_26)
DEEP(deep_24, 24, deep_25) DEEP(deep_23, 23, deep_24)
DEEP(deep_22, 22, deep_23) DEEP(deep_21, 21, deep_22)
DEEP(deep_20, 20, deep_21) DEEP(deep_19, 19, deep_20)
DEEP(deep_18, 18, deep_19) DEEP(deep_17, 17, deep_18)
DEEP(deep_16, 16, deep_17) DEEP(deep_15, 15, deep_16)
DEEP(deep_14, 14, deep_15) DEEP(deep_13, 13, deep_14)
DEEP(deep_12, 12, deep_13) DEEP(deep_11, 11, deep_12)
DEEP(deep_10, 10, deep_11) DEEP(deep_9, 9, deep_10) DEEP(deep_8, 8, deep_9)
DEEP(deep_7, 7, deep_8) DEEP(deep_6, 6, deep_7) DEEP(deep_5, 5, deep_6)
DEEP(deep_4, 4, deep_5) DEEP(deep_3, 3, deep_4) DEEP(deep_2, 2, deep_3)
DEEP(deep_1, 1, deep_2) DEEP(deep_0, 0, deep_1)

static void (*const deep_fn[DEEP_N])(void) = {
	deep_0, deep_1, deep_2, deep_3, deep_4, deep_5, deep_6, deep_7,
	deep_8, deep_9, deep_10, deep_11, deep_12, deep_13, deep_14, deep_15,
	deep_16, deep_17, deep_18, deep_19, deep_20, deep_21, deep_22, deep_23,
	deep_24, deep_25, deep_26, deep_27, deep_28, deep_29, deep_30, deep_31,
	deep_32, deep_33, deep_34, deep_35, deep_36, deep_37, deep_38, deep_39,
	deep_40, deep_41, deep_42, deep_43, deep_44, deep_45, deep_46, deep_47,
};

/* The frames expected of a walk from c(), innermost first. */
static unsigned long chain_want(unsigned int i)
{
	return expected[i];
}

static unsigned long deep_want(unsigned int i)
{
	return i < 2 ? expected[i] : deep_ret[DEEP_FRAMES - 1 - i];
}

/*
 * One walk from c(), reached through @outer: how many of the @n frames
 * @want gives (known once the chain has run) the walk got right, in order.
 */
static int walk_from(void (*outer)(void), unsigned long (*want)(unsigned int),
		     unsigned int n)
{
	unsigned long got[DEEP_FRAMES];
	unsigned int nr, ws, i;

	fd = open(STACK_FILE, O_RDONLY);
	if (fd < 0)
		exit(100);
	outer();
	close(fd);
	nr = user_stack_parse(buf, nread, got, n, &ws);
	for (i = 0; i < nr && i < n; i++)
		if (got[i] != want(i))
			break;
	return i;
}

static int walk(void)
{
	return walk_from(a, chain_want, DEPTH);
}

static int deep_walk(void)
{
	return walk_from(deep_0, deep_want, DEEP_FRAMES);
}

static int copy_main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 1, ret = 0;
	char ch = 0;

	if (!strcmp(argv[1], "--deep"))
		return 10 + deep_walk();
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

/* Run @path @mode (--walk or --deep): how many frames matched, or -1. */
static int run_mode(const char *path, const char *mode)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		execl(path, path, mode, (char *)NULL);
		_exit(99);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) < 10)
		return -1;
	return WEXITSTATUS(status) - 10;
}

static int run(const char *path)
{
	return run_mode(path, "--walk");
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

/*
 * A build-id note that cannot be read (in a copy whose PT_NOTE says it is
 * at an address nothing maps) is no build-id: the copy's own section is
 * used all the same, and every walk of it is complete, not only a later
 * one.
 */
static int test_note_unreadable(void)
{
	static const char path[] = "/tmp/sframe_tables_farnote";
	struct elf64_phdr *ph = (struct elf64_phdr *)(image + note_phdr_off);
	struct elf64_phdr save = *ph;
	int f, ok, n1, n2;

	ph->p_vaddr = 0x1000;
	ph->p_paddr = 0x1000;
	unlink(path);
	f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ok = f >= 0 && write(f, image, image_len) == (ssize_t)image_len;
	if (f >= 0)
		close(f);
	*ph = save;
	if (!ok)
		return fail("cannot write %s\n", path);
	n1 = run(path);
	n2 = run(path);
	unlink(path);
	if (n1 != DEPTH || n2 != DEPTH)
		return fail("note unreadable: walks of %d and %d frames, want %d\n",
			    n1, n2, DEPTH);
	return 1;
}

/*
 * An unreadable note before the build-id's (the first PT_NOTE, said to be
 * at an address nothing maps) hides nothing: the copy without its own
 * section is walked with the table loaded for its build-id.
 */
static int test_note_before_unreadable(void)
{
	static const char path[] = "/tmp/sframe_tables_farnote2";
	struct elf64_hdr *eh = (struct elf64_hdr *)image;
	struct elf64_phdr *ph = (struct elf64_phdr *)(image + eh->e_phoff);
	struct elf64_phdr *first = NULL, save;
	int i, n, ok;

	for (i = 0; i < eh->e_phnum && (char *)&ph[i] < image + note_phdr_off; i++) {
		if (ph[i].p_type == PT_NOTE) {
			first = &ph[i];
			break;
		}
	}
	if (!first)
		return fail("no PT_NOTE before the build-id's in the program\n");
	save = *first;
	first->p_vaddr = 0x1000;
	first->p_paddr = 0x1000;
	ok = !write_copy(path, sframe_phdr_off, 0);
	*first = save;
	if (!ok)
		return fail("cannot write %s\n", path);
	if (load(&table, sframe_bytes, table.sframe_size)) {
		unlink(path);
		return fail("load failed\n");
	}
	n = run(path);
	unlink(path);
	ok = n == DEPTH;
	if (!ok)
		ksft_print_msg("with an unreadable note first: %d frames, want %d\n",
			       n, DEPTH);
	if (remove_table())
		ok = fail("remove failed\n");
	return ok;
}

/*
 * A table loaded under the program's own build-id, but for a text range
 * that is not the program's executable segment, was made for another file
 * that claims the build-id: the copy without PT_GNU_SFRAME is never walked
 * with it (frame pointers, one frame).
 */
static int test_other_layout(void)
{
	struct table_hdr h = table;
	int n, ok;

	h.text_size += 4096;
	if (load(&h, sframe_bytes, table.sframe_size))
		return fail("loading with another text range failed\n");
	n = run(copy_path);
	ok = n == 1;
	if (!ok)
		ksft_print_msg("copy walked %d frames with a table of another layout\n", n);
	if (remove_table())
		ok = fail("remove failed\n");
	return ok;
}

/*
 * A section being written takes memory from the write that completes its
 * header: with the cap at three times 16 MiB, two writers with 16 MiB
 * headers fit, a third is refused with ENOSPC, and once they are closed a
 * real table loads again.
 */
static int test_cap_buffered(void)
{
	struct table_hdr big = table;
	char old[64] = "", cap[32];
	int f = open(MAXBYTES, O_RDWR), fds[3], i, ret = 1, len;
	ssize_t n;

	if (f < 0)
		return fail("%s: %s\n", MAXBYTES, strerror(errno));
	n = read(f, old, sizeof(old) - 1);
	len = snprintf(cap, sizeof(cap), "%d\n", 3 << 24);
	if (n <= 0 || pwrite(f, cap, len, 0) != len)
		return close(f), fail("cannot set the cap\n");
	big.sframe_size = 16 << 20;
	for (i = 0; i < 3; i++) {
		fds[i] = open(DEV, O_WRONLY);
		errno = 0;
		if (fds[i] < 0 || write(fds[i], &big, sizeof(big)) != sizeof(big))
			n = -errno;
		else
			n = 0;
		if (n != (i < 2 ? 0 : -ENOSPC))
			ret = fail("header %d of 16 MiB: %zd, want %d\n", i, n,
				   i < 2 ? 0 : -ENOSPC);
	}
	for (i = 0; i < 3; i++)
		close(fds[i]);
	n = load(&table, sframe_bytes, table.sframe_size);
	if (n)
		ret = fail("load after the writers closed: %zd\n", n);
	remove_table();
	if (pwrite(f, old, strlen(old), 0) != (ssize_t)strlen(old))
		ret = fail("cannot restore the cap\n");
	close(f);
	return ret;
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

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* One row of the program's table, decoded. */
struct row {
	uint32_t	start;
	uint8_t		info;
	unsigned int	count;
	int32_t		word[15];
};

/* Append row @r at @start, with 2-byte start and 4-byte words, to @out. */
static uint8_t *put_row(uint8_t *out, uint32_t start, const struct row *r)
{
	unsigned int i;

	*out++ = start;
	*out++ = start >> 8;
	*out++ = (r->info & ~0x60) | 2 << 5;
	for (i = 0; i < r->count; i++, out += 4)
		put32(out, r->word[i]);
	return out;
}

/*
 * The program's table (version 1 or 2, as gas writes it), with the rows of
 * the functions @fns[0..@nfns) replaced: one row per byte for their first
 * @per_byte bytes, each with the rule the program's rows give there, then
 * the program's rows from there on. The frames are the same; a lookup in
 * one of those functions scans many more rows. Returns the new section
 * (malloc'ed), its size in *@len; NULL if the table has another layout.
 */
static uint8_t *expand_table(void (*const *fns)(void), int nfns,
			     uint32_t per_byte, size_t *len)
{
	const uint8_t *in = sframe_bytes;
	unsigned int fde_size, base, i, j, k, n;
	uint32_t num_fdes, fres_off, fre_len, extra = 0, added = 0;
	uint8_t *sec, *out, *fde;
	struct row rows[16];

	if ((in[2] != 1 && in[2] != 2) || (in[3] & ~0x7))
		return NULL;
	fde_size = in[2] == 1 ? 17 : 20;
	base = 28 + in[7];
	num_fdes = get32(in + 8);
	fre_len = get32(in + 16);
	fres_off = base + get32(in + 24);
	if (fres_off + fre_len != table.sframe_size)
		return NULL;
	/* Room for the widest rows: 3 bytes and two 4-byte words each. */
	sec = malloc(table.sframe_size + (size_t)nfns * 11 * (per_byte + 16));
	if (!sec)
		return NULL;
	memcpy(sec, in, table.sframe_size);
	out = sec + table.sframe_size;

	for (i = 0; i < num_fdes; i++) {
		uint32_t off = base + get32(in + 20) + i * fde_size;
		unsigned long func = table.sframe_vaddr + (int32_t)get32(in + off);
		const uint8_t *p;
		unsigned int asz;
		uint32_t size;

		fde = sec + off;
		if (in[3] & 0x4)	/* PC-relative start */
			func += off;
		for (k = 0; k < (unsigned int)nfns; k++)
			if (func == (unsigned long)fns[k])
				break;
		if (k == (unsigned int)nfns)
			continue;
		size = get32(fde + 4);
		n = get32(fde + 12);
		asz = 1 << (fde[16] & 0xf);
		if (n > 16 || (fde[16] & 0x10) || asz > 4)
			goto bad;
		p = in + fres_off + get32(fde + 8);
		for (j = 0; j < n; j++) {
			unsigned int wsz;

			rows[j].start = asz == 4 ? get32(p) :
					asz == 2 ? p[0] | p[1] << 8 : p[0];
			p += asz;
			rows[j].info = *p++;
			rows[j].count = rows[j].info >> 1 & 0xf;
			wsz = 1 << (rows[j].info >> 5 & 3);
			if (rows[j].count > 2 || wsz > 4)
				goto bad;
			for (k = 0; k < rows[j].count; k++, p += wsz)
				rows[j].word[k] = wsz == 1 ? (int8_t)p[0] :
						  wsz == 2 ? (int16_t)(p[0] | p[1] << 8) :
						  (int32_t)get32(p);
		}
		if (!n || rows[0].start || size > 0xffff)
			goto bad;

		put32(fde + 8, fre_len + extra);
		fde[16] = (fde[16] & ~0xf) | 1;	/* 2-byte starts */
		k = 0;
		for (j = 0; j < per_byte && j < size; j++) {
			while (k + 1 < n && rows[k + 1].start <= j)
				k++;
			out = put_row(out, j, &rows[k]);
		}
		added = j;
		for (k = 0; k < n; k++)
			if (rows[k].start >= per_byte) {
				out = put_row(out, rows[k].start, &rows[k]);
				added++;
			}
		put32(fde + 12, added);
		/* The old rows stay, unused; the header counts them as well. */
		put32(sec + 12, get32(sec + 12) + added);
		extra = out - (sec + table.sframe_size);
	}
	put32(sec + 16, fre_len + extra);
	*len = table.sframe_size + extra;
	return sec;
bad:
	free(sec);
	return NULL;
}

/* Load @sec for the copy, run it --deep, remove it: the frames matched. */
static int run_deep_with(const uint8_t *sec, size_t len)
{
	struct table_hdr h = table;
	int n, ret;

	h.sframe_size = len;
	ret = load(&h, sec, len);
	if (ret)
		return fail("load of a %zu-byte table: %d\n", len, ret), -1;
	n = run_mode(copy_path, "--deep");
	if (remove_table())
		return fail("remove failed\n"), -1;
	return n;
}

/*
 * A walk through functions of 16,300 rows each: the kernel allows one walk
 * 16,384 reads of a section, of up to 256 bytes each, and each lookup here
 * scans 16,300 rows of 7 bytes, about 446 reads, besides its search. So the
 * walk ends, with its frames so far right, after about 36 such lookups:
 * with c() and the frame the last lookup could not step from, 38 frames.
 */
static int test_deep_budget(void)
{
	uint8_t *sec;
	size_t len;
	int n, ok = 1;

	n = run_deep_with(sframe_bytes, table.sframe_size);
	if (n != DEEP_FRAMES)
		ok = fail("deep walk with the program's table: %d frames, want %d\n",
			  n, DEEP_FRAMES);
	sec = expand_table(deep_fn, DEEP_N, 16300, &len);
	if (!sec)
		return fail("cannot expand the program's table\n");
	n = run_deep_with(sec, len);
	free(sec);
	ksft_print_msg("deep walk with 16,300 rows per function: %d frames\n", n);
	if (n < 36 || n > 40)
		ok = fail("deep walk with costly rows: %d frames, want 36-40\n", n);
	return ok;
}

/*
 * A function of more rows than a lookup scans (16,384) ends the walk at its
 * frame: deep_0 gets one row per byte, for all of its 16,400-odd bytes.
 */
static int test_deep_rows_cap(void)
{
	uint8_t *sec;
	size_t len;
	int n;

	sec = expand_table(deep_fn, 1, DEEP_PAD + 100, &len);
	if (!sec)
		return fail("cannot expand the program's table\n");
	n = run_deep_with(sec, len);
	free(sec);
	if (n != DEEP_FRAMES - 1)
		return fail("deep walk with deep_0 over the cap: %d frames, want %d\n",
			    n, DEEP_FRAMES - 1);
	return 1;
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
	if (argc > 1 && (!strcmp(argv[1], "--walk") || !strcmp(argv[1], "--deep")))
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

	ksft_set_plan(16);
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
	ksft_test_result(deep_walk() == DEEP_FRAMES,
			 "the program walks its deep chain of large functions too\n");
	ksft_test_result(test_deep_budget(),
			 "a table whose rows are costly to scan ends a walk within its budget of reads\n");
	ksft_test_result(test_deep_rows_cap(),
			 "a function of more rows than a lookup scans ends the walk there\n");
	ksft_test_result(test_cap_buffered(),
			 "sections being written count in the cap from their header on\n");
	ksft_test_result(test_other_layout(),
			 "a table for the build-id but another text range is never used\n");
	ksft_test_result(test_note_unreadable(),
			 "an unreadable build-id note does not keep the own section from use\n");
	ksft_test_result(test_note_before_unreadable(),
			 "an unreadable note before the build-id's does not hide it\n");
	unlink(copy_path);
	unlink(copy2_path);
	ksft_finished();
}
