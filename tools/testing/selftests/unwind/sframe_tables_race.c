// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads writing one open /dev/sframe_tables at once.
 *
 * A character device gets no FMODE_ATOMIC_POS, so write()s on one file run
 * in parallel for threads that share it, or a dup()ed or inherited
 * descriptor. The device keeps the table being written in the file and
 * fills it across copies from user memory that may sleep: its write()s
 * must be serialised, or one finds another's half-done state (a table
 * freed or published under a pending copy, then a NULL table).
 *
 * Deterministically, with userfaultfd: after the header, writer B writes
 * half of the section from a page that is registered with userfaultfd and
 * not yet there, so B stops inside the kernel's copy from user memory,
 * which the fault message tells. Writer A then writes on the same file.
 * The test waits until A either returned (the writes are not serialised)
 * or sleeps in the kernel (waiting for the lock B holds: there is no event
 * for that, so its state is polled, bounded), then supplies B's page with
 * UFFDIO_COPY, and checks that the results are exactly those of the two
 * writes one after the other, B's first:
 *  - valid_rest: A writes the other half of a valid section: B's write
 *    returns its length, A's completes the table and returns its own; the
 *    table is listed once, with the section's size, and can be removed;
 *  - invalid_rest: the same with a section the kernel refuses (its magic
 *    is wrong): A's write fails with EINVAL, nothing is listed;
 *  - valid_whole, invalid_whole: A writes the whole section, more than is
 *    left after B's half: A's write fails with EINVAL, nothing is listed.
 *    Unserialised, A completes the table, which the store publishes (or
 *    frees), B's copy then lands in it (or in freed memory), and B hands
 *    the store a NULL table.
 * In every case a later write on the file fails with EINVAL. The section
 * is made up: version 2, one 16-byte function per FDE, two rows each.
 *
 * Needs root (CAP_PERFMON opens the device; faults in kernel mode need
 * CAP_SYS_PTRACE for userfaultfd) and CONFIG_USERFAULTFD.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "../kselftest.h"
#include "sframe_race_section.h"

#define DEV		"/dev/sframe_tables"

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

#define TABLE_MAGIC	0x42544653
#define B_LEN		(SEC_SIZE / 2)
/* Bounds of the waits for what the kernel does, slow as it may be in QEMU. */
#define WAIT_SECS	30

/* What a write() that did not return (an oops killed the thread) leaves. */
#define NO_RESULT	(-100000)

struct race_case {
	const char	*name;
	bool		valid;	/* else the section's magic is wrong */
	bool		whole;	/* A writes all of it, else the rest */
};

static const struct race_case cases[] = {
	{ "valid_rest",		true,	false },
	{ "invalid_rest",	false,	false },
	{ "valid_whole",	true,	true },
	{ "invalid_whole",	false,	true },
};

/* One race: the file both write, what they write and what they got. */
struct race {
	int		fd;
	const void	*b_buf;
	const void	*a_buf;
	size_t		a_len;
	ssize_t		b_ret, a_ret;	/* bytes or -errno */
	sem_t		a_ready;	/* A is about to write */
	pid_t		a_tid;
	int		a_returned;
};

static int uffd;
static long page_size;

/* A made-up build-id of its own for each case, and its hex. */
static void build_header(struct table_hdr *h, char *hex, unsigned int n)
{
	unsigned int i;

	memset(h, 0, sizeof(*h));
	h->magic = TABLE_MAGIC;
	h->version = 1;
	h->build_id_len = sizeof(h->build_id);
	for (i = 0; i < sizeof(h->build_id); i++) {
		h->build_id[i] = 0xb3 ^ (i * 7) ^ n;
		sprintf(hex + 2 * i, "%02x", h->build_id[i]);
	}
	h->sframe_size = SEC_SIZE;
	h->sframe_vaddr = SFRAME_VADDR;
	h->text_vaddr = TEXT_VADDR;
	h->text_size = NFUNCS * FUNC_SIZE;
}

static ssize_t write_ret(int fd, const void *buf, size_t len)
{
	ssize_t n = write(fd, buf, len);

	return n < 0 ? -errno : n;
}

static int remove_table(const char *hex)
{
	char cmd[64];
	int fd = open(DEV, O_WRONLY), n;
	ssize_t ret;

	if (fd < 0)
		return -errno;
	n = snprintf(cmd, sizeof(cmd), "remove %s\n", hex);
	ret = write_ret(fd, cmd, n);
	close(fd);
	return ret == n ? 0 : (int)ret;
}

/*
 * How many lines of the listing ("<hex build-id> <bytes> <mappings>") are
 * for @hex, with the bytes and mappings of the last; -1 if unreadable.
 */
static int listed(const char *hex, unsigned int *size, unsigned int *maps)
{
	char list[8192], *line, *save;
	int fd = open(DEV, O_RDONLY), n = 0;
	size_t len = 0;
	ssize_t r;

	if (fd < 0)
		return -1;
	while ((r = read(fd, list + len, sizeof(list) - 1 - len)) > 0)
		len += r;
	close(fd);
	if (r < 0)
		return -1;
	list[len] = '\0';
	for (line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t hl = strlen(hex);

		if (strncmp(line, hex, hl) || line[hl] != ' ')
			continue;
		if (sscanf(line + hl, " %u %u", size, maps) != 2)
			return -1;
		n++;
	}
	return n;
}

static void *writer_b(void *arg)
{
	struct race *r = arg;

	r->b_ret = write_ret(r->fd, r->b_buf, B_LEN);
	return NULL;
}

static void *writer_a(void *arg)
{
	struct race *r = arg;

	r->a_tid = syscall(SYS_gettid);
	sem_post(&r->a_ready);
	r->a_ret = write_ret(r->fd, r->a_buf, r->a_len);
	__atomic_store_n(&r->a_returned, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* The state letter of thread @tid, or 0. */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "tid (comm) S ...": the name may hold anything, even ')'. */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

enum a_outcome { A_RETURNED, A_SLEEPS, A_NEITHER };

/*
 * Whether A's write returned, or sleeps in the kernel, while B is stopped
 * inside its copy. A sleeps nowhere between its a_ready and its write(),
 * and an unserialised write() has nothing to sleep on: what it copies is
 * in memory and it meets no other writer. So "sleeping, and not returned
 * when looked again" means waiting for the writer's lock.
 */
static enum a_outcome wait_for_a(struct race *r)
{
	double end = now() + WAIT_SECS;

	do {
		if (__atomic_load_n(&r->a_returned, __ATOMIC_SEQ_CST))
			return A_RETURNED;
		if (thread_state(r->a_tid) == 'S' &&
		    !__atomic_load_n(&r->a_returned, __ATOMIC_SEQ_CST))
			return A_SLEEPS;
		sched_yield();
	} while (now() < end);
	return A_NEITHER;
}

/*
 * The fault that stops B in the kernel's copy of its buffer @page. The
 * descriptor is non-blocking, as poll() wants it: a read may still find
 * nothing, and then polls again.
 */
static int wait_for_fault(void *page)
{
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	double end = now() + WAIT_SECS;
	struct uffd_msg msg;
	ssize_t n;
	int ms;

	do {
		ms = (end - now()) * 1000;
		if (poll(&pfd, 1, ms > 0 ? ms : 0) < 0 && errno != EINTR)
			return -1;
		n = read(uffd, &msg, sizeof(msg));
		if (n == sizeof(msg))
			return msg.event == UFFD_EVENT_PAGEFAULT &&
			       (msg.arg.pagefault.address & ~(page_size - 1)) ==
			       (uintptr_t)page ? 0 : -1;
		if (n >= 0 || errno != EAGAIN)
			return -1;
	} while (now() < end);
	return -1;
}

static bool run_case(const struct race_case *c, unsigned int n)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_copy copy = { .mode = 0 };
	struct uffdio_range range;
	static uint8_t sec[SEC_SIZE];
	unsigned int size = 0, maps = 0;
	struct race r = { .b_ret = NO_RESULT, .a_ret = NO_RESULT };
	struct table_hdr h;
	char hex[41];
	void *page, *src;
	enum a_outcome seen;
	ssize_t want, ret;
	pthread_t a, b;
	bool ok = true;
	int lines;

	build_section(sec, c->valid);
	build_header(&h, hex, n);
	remove_table(hex);	/* from an earlier run that stopped halfway */

	/* B's half, on a page the kernel has to ask this test for. */
	page = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || src == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	memcpy(src, sec, B_LEN);
	reg.range.start = (uintptr_t)page;
	reg.range.len = page_size;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		ksft_exit_fail_msg("UFFDIO_REGISTER: %s\n", strerror(errno));

	r.b_buf = page;
	r.a_buf = c->whole ? sec : sec + B_LEN;
	r.a_len = c->whole ? SEC_SIZE : SEC_SIZE - B_LEN;
	if (sem_init(&r.a_ready, 0, 0))
		ksft_exit_fail_msg("sem_init: %s\n", strerror(errno));
	r.fd = open(DEV, O_RDWR);
	if (r.fd < 0)
		ksft_exit_fail_msg("%s: %s\n", DEV, strerror(errno));
	ret = write_ret(r.fd, &h, sizeof(h));
	if (ret != (ssize_t)sizeof(h)) {
		ksft_print_msg("%s: header write: %zd\n", c->name, ret);
		ok = false;
	}

	if (pthread_create(&b, NULL, writer_b, &r))
		ksft_exit_fail_msg("pthread_create failed\n");
	if (wait_for_fault(page))
		ksft_exit_fail_msg("%s: writer B did not fault on its buffer\n", c->name);
	if (pthread_create(&a, NULL, writer_a, &r))
		ksft_exit_fail_msg("pthread_create failed\n");
	while (sem_wait(&r.a_ready))
		;
	seen = wait_for_a(&r);

	/* Let B's copy go on: its page, with its half of the section. */
	copy.dst = (uintptr_t)page;
	copy.src = (uintptr_t)src;
	copy.len = page_size;
	if (ioctl(uffd, UFFDIO_COPY, &copy) || copy.copy != page_size)
		ksft_exit_fail_msg("UFFDIO_COPY: %s\n", strerror(errno));
	pthread_join(b, NULL);
	pthread_join(a, NULL);

	if (seen != A_SLEEPS) {
		ksft_print_msg("%s: A's write %s during B's copy: writes are not serialised\n",
			       c->name, seen == A_RETURNED ? "returned" : "did not sleep");
		ok = false;
	}
	if (r.b_ret != B_LEN) {
		ksft_print_msg("%s: B's write: %zd, want %d\n", c->name, r.b_ret, B_LEN);
		ok = false;
	}
	want = c->valid && !c->whole ? (ssize_t)r.a_len : -EINVAL;
	if (r.a_ret != want) {
		ksft_print_msg("%s: A's write: %zd, want %zd\n", c->name, r.a_ret, want);
		ok = false;
	}
	ret = write_ret(r.fd, "x", 1);
	if (ret != -EINVAL) {
		ksft_print_msg("%s: a write after the table's end: %zd, want %d\n",
			       c->name, ret, -EINVAL);
		ok = false;
	}
	close(r.fd);

	lines = listed(hex, &size, &maps);
	if (c->valid && !c->whole) {
		if (lines != 1 || size != SEC_SIZE || maps) {
			ksft_print_msg("%s: listed %d times, %u bytes, %u maps; want 1, %d, 0\n",
				       c->name, lines, size, maps, SEC_SIZE);
			ok = false;
		}
		ret = remove_table(hex);
		if (ret || listed(hex, &size, &maps)) {
			ksft_print_msg("%s: remove: %zd, or still listed\n", c->name, ret);
			ok = false;
		}
	} else if (lines) {
		ksft_print_msg("%s: listed %d times, want none\n", c->name, lines);
		remove_table(hex);
		ok = false;
	}

	range.start = (uintptr_t)page;
	range.len = page_size;
	ioctl(uffd, UFFDIO_UNREGISTER, &range);
	munmap(page, page_size);
	munmap(src, page_size);
	sem_destroy(&r.a_ready);
	return ok;
}

/* The section itself, written by one thread: the kernel takes it. */
static bool serial_load(void)
{
	static uint8_t sec[SEC_SIZE];
	struct table_hdr h;
	char hex[41];
	unsigned int size = 0, maps = 0;
	ssize_t r1, r2, r3;
	int fd;

	build_section(sec, true);
	build_header(&h, hex, ARRAY_SIZE(cases));
	remove_table(hex);
	fd = open(DEV, O_WRONLY);
	if (fd < 0)
		return false;
	r1 = write_ret(fd, &h, sizeof(h));
	r2 = write_ret(fd, sec, B_LEN);
	r3 = write_ret(fd, sec + B_LEN, SEC_SIZE - B_LEN);
	close(fd);
	if (r1 != (ssize_t)sizeof(h) || r2 != B_LEN || r3 != SEC_SIZE - B_LEN) {
		ksft_print_msg("serial load: writes gave %zd, %zd, %zd\n", r1, r2, r3);
		return false;
	}
	if (listed(hex, &size, &maps) != 1 || size != SEC_SIZE) {
		ksft_print_msg("serial load: not listed once with %d bytes\n", SEC_SIZE);
		return false;
	}
	return !remove_table(hex);
}

int main(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	unsigned int i;
	int fd;

	ksft_print_header();
	page_size = sysconf(_SC_PAGESIZE);
	fd = open(DEV, O_RDWR);
	if (fd < 0)
		ksft_exit_skip("%s: %s\n", DEV, strerror(errno));
	close(fd);
	/* Not UFFD_USER_MODE_ONLY: the faults to catch are the kernel's. */
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		ksft_exit_skip("userfaultfd: %s (CONFIG_USERFAULTFD, root)\n",
			       strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api))
		ksft_exit_fail_msg("UFFDIO_API: %s\n", strerror(errno));

	ksft_set_plan(1 + ARRAY_SIZE(cases));
	ksft_test_result(serial_load(), "serial: the section loads when written by one thread\n");
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		ksft_test_result(run_case(&cases[i], i),
				 "%s: B stopped inside its copy, A on the same file: the serial results\n",
				 cases[i].name);
	close(uffd);
	ksft_finished();
}
