// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads writing one open /dev/sframe_tables at once (review
 * 2026-11-26, B3), run through the kernel's own sframe_store.c (built in
 * user space by store_user.c) under ASan and UBSan.
 *
 * Why: a character device gets no FMODE_ATOMIC_POS, so the kernel lets
 * write()s on one file run in parallel, for threads that share the file
 * or a dup()ed or inherited descriptor. Each write() reads and changes the
 * file's writer state across copies from user memory that may sleep; they
 * must be serialised, or a write finds another's half-done state: the
 * table freed or published under a pending copy, then a NULL table. The
 * fuzz target writes from one thread only and cannot see this.
 *
 * How, deterministically: writer B writes the header, then half of the
 * section from a buffer whose copy (copy_from_user(), through the shim's
 * hook) stops until the test lets it go, as a page fault on a
 * userfaultfd page stops it in the kernel. While B is stopped inside its
 * copy, writer A writes on the same file, and the test waits for one of
 * two events: A's write returned (the writes are not serialised), or A
 * waits for a mutex that B holds (the shim's mutex says so). Then B goes
 * on, both are joined, and the results must be exactly what the two
 * writes give one after the other, B's first:
 *  - valid_rest: A writes the other half of a valid section: B's write
 *    returns its length, A's completes the table and returns its own; the
 *    store then holds the table once, with the section's size and bytes,
 *    and "remove <hex>\n" removes it;
 *  - invalid_rest: the same with a section the reader refuses (its magic
 *    is wrong): A's write returns -EINVAL and the store stays empty;
 *  - valid_whole, invalid_whole: A writes the whole section, more than is
 *    left after B's half: A's write returns -EINVAL, nothing is loaded.
 *    These are the review's scenarios: without serialisation A completes
 *    the table and hands it to the store, which publishes it (valid) or
 *    frees it (invalid), while B's copy is pending; B's copy then writes
 *    into the published table or freed memory, and B completes a table
 *    that is NULL by then.
 * In every case a later write on the file returns -EINVAL, its release
 * frees what it held (LSan), and the store is empty and unlocked at the
 * end.
 *
 * Each case runs in a child process of its own, so that one that crashes
 * (ASan, UBSan, a failed check) does not hide the others. Output: TAP, one
 * result per case; the children's reports go to stderr.
 * Usage: sframe-store-race [CASE...]
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "shim_store.h"
#include "../../kernel/unwind/sframe.h"
#include <uapi/linux/sframe_table.h>

#define HLEN		sizeof(struct sframe_table_hdr)

/* The section, the same as the guest's test loads. */
#include "../../tools/testing/selftests/unwind/sframe_race_section.h"

struct race_case {
	const char	*name;
	bool		valid;		/* else its magic is wrong */
	bool		whole;		/* A writes all of it, else the rest */
};

static const struct race_case cases[] = {
	{ "valid_rest",		true,	false },
	{ "invalid_rest",	false,	false },
	{ "valid_whole",	true,	true },
	{ "invalid_whole",	false,	true },
};

static const struct file_operations *fops;
static unsigned int failures;

/* Report a failed check and go on: the later checks tell more. */
#define CHECK(cond, fmt, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: " fmt "\n", __FILE__,	\
				__LINE__, ##__VA_ARGS__);		\
			failures++;					\
		}							\
	} while (0)

static void build_header(struct sframe_table_hdr *h, unsigned int n)
{
	unsigned int i;

	memset(h, 0, sizeof(*h));
	h->magic = SFRAME_TABLE_MAGIC;
	h->version = SFRAME_TABLE_VERSION;
	h->build_id_len = SFRAME_TABLE_BUILD_ID_MAX;
	for (i = 0; i < SFRAME_TABLE_BUILD_ID_MAX; i++)
		h->build_id[i] = 0xb3 ^ (i * 7) ^ n;
	h->sframe_size = SEC_SIZE;
	h->sframe_vaddr = SFRAME_VADDR;
	h->text_vaddr = TEXT_VADDR;
	h->text_size = NFUNCS * FUNC_SIZE;
}

/* Open the device as misc_open() does. */
static bool dev_open(struct file *f)
{
	f->private_data = sframe_shim_misc;
	return !fops->open(NULL, f);
}

static ssize_t dev_write(struct file *f, const void *buf, size_t len)
{
	loff_t pos = 0;

	return fops->write(f, buf, len, &pos);
}

/*
 * read() of the device, to its end: how many tables it lists, and the
 * size and mapping count of the last. The shim prints no build-id (see
 * seq_printf() in shim_store.h); the internal lookup checks that instead.
 */
static unsigned int dev_list(unsigned int *size, unsigned int *maps)
{
	char buf[4096], *line, *nl;
	unsigned int n = 0;
	size_t len = 0;
	struct file f;
	loff_t pos = 0;
	ssize_t r;

	if (!dev_open(&f))
		return ~0U;
	while ((r = fops->read(&f, buf + len, sizeof(buf) - 1 - len, &pos)) > 0)
		len += r;
	fops->release(NULL, &f);
	if (r < 0)
		return ~0U;
	buf[len] = '\0';
	for (line = buf; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl || sscanf(line, "%*s %u %u", size, maps) != 2)
			return ~0U;
		n++;
	}
	return n;
}

/* "remove <hex build-id>\n" on a file of its own: the write's result. */
static ssize_t dev_remove(const struct sframe_table_hdr *h)
{
	char cmd[8 + 2 * SFRAME_TABLE_BUILD_ID_MAX + 2];
	struct file f;
	ssize_t ret;
	int n, i;

	n = sprintf(cmd, "remove ");
	for (i = 0; i < h->build_id_len; i++)
		n += sprintf(cmd + n, "%02x", h->build_id[i]);
	n += sprintf(cmd + n, "\n");
	if (!dev_open(&f))
		return -ENODEV;
	ret = dev_write(&f, cmd, n);
	fops->release(NULL, &f);
	return ret == n ? 0 : ret;
}

/* One race: the file both write, their buffers, results and events. */
struct race {
	struct file		file;
	const struct sframe_table_hdr *hdr;
	u8			*b_buf;		/* B's half, exactly */
	u8			*a_buf;		/* A's bytes, exactly */
	size_t			b_len, a_len;
	ssize_t			b_hdr_ret, b_ret, a_ret;
	sem_t			b_in_copy;	/* B is inside its section copy */
	sem_t			b_go;		/* B may finish its copy */
	sem_t			a_event;	/* A returned or waits for a lock */
	bool			a_waits;	/* A found a mutex held */
	bool			a_done;		/* A's write returned */
};

static struct race *race;
static __thread bool is_writer_a;

/* The shim's copy_from_user(): B's copy of its half stops here. */
static void copy_hook(void *to, const void *from, unsigned long n)
{
	(void)to;
	(void)n;
	if (from != race->b_buf)
		return;
	sem_post(&race->b_in_copy);
	while (sem_wait(&race->b_go))
		;
}

/* The shim's mutex_lock() found the mutex held: A is about to wait. */
static void contended_hook(struct mutex *m)
{
	(void)m;
	if (!is_writer_a)
		return;
	__atomic_store_n(&race->a_waits, true, __ATOMIC_SEQ_CST);
	sem_post(&race->a_event);
}

static void *writer_b(void *arg)
{
	struct race *r = arg;

	r->b_hdr_ret = dev_write(&r->file, r->hdr, HLEN);
	r->b_ret = dev_write(&r->file, r->b_buf, r->b_len);
	return NULL;
}

static void *writer_a(void *arg)
{
	struct race *r = arg;

	is_writer_a = true;
	r->a_ret = dev_write(&r->file, r->a_buf, r->a_len);
	__atomic_store_n(&r->a_done, true, __ATOMIC_SEQ_CST);
	sem_post(&r->a_event);
	return NULL;
}

static void run_case(const struct race_case *c, unsigned int n)
{
	struct sframe_table_hdr h;
	unsigned int tables, size = 0, maps = 0;
	struct sframe_table *t;
	u8 sec[SEC_SIZE], one = 0;
	pthread_t a, b;
	bool waited, done_early;
	ssize_t a_want;
	struct race r;

	build_section(sec, c->valid);
	build_header(&h, n);
	memset(&r, 0, sizeof(r));
	r.hdr = &h;
	r.b_len = SEC_SIZE / 2;
	r.a_len = c->whole ? SEC_SIZE : SEC_SIZE - r.b_len;
	/* Exactly as large as written, for ASan to see any read past them. */
	r.b_buf = malloc(r.b_len);
	r.a_buf = malloc(r.a_len);
	if (!r.b_buf || !r.a_buf || sem_init(&r.b_in_copy, 0, 0) ||
	    sem_init(&r.b_go, 0, 0) || sem_init(&r.a_event, 0, 0) ||
	    !dev_open(&r.file)) {
		fprintf(stderr, "%s: setup failed\n", c->name);
		exit(2);
	}
	memcpy(r.b_buf, sec, r.b_len);
	memcpy(r.a_buf, c->whole ? sec : sec + r.b_len, r.a_len);
	race = &r;
	sframe_shim_copy_hook = copy_hook;
	sframe_shim_mutex_contended = contended_hook;

	if (pthread_create(&b, NULL, writer_b, &r))
		exit(2);
	while (sem_wait(&r.b_in_copy))
		;
	if (pthread_create(&a, NULL, writer_a, &r))
		exit(2);
	/* A returned, or waits for the lock B holds: both post a_event. */
	while (sem_wait(&r.a_event))
		;
	waited = __atomic_load_n(&r.a_waits, __ATOMIC_SEQ_CST);
	done_early = __atomic_load_n(&r.a_done, __ATOMIC_SEQ_CST);
	sem_post(&r.b_go);
	pthread_join(b, NULL);
	pthread_join(a, NULL);
	sframe_shim_copy_hook = NULL;
	sframe_shim_mutex_contended = NULL;

	CHECK(waited && !done_early,
	      "A's write %s while B was inside its copy: writes to one file are not serialised",
	      done_early ? "returned" : "neither returned nor waited");
	CHECK(r.b_hdr_ret == (ssize_t)HLEN, "B's header write: %zd, want %zu",
	      r.b_hdr_ret, HLEN);
	CHECK(r.b_ret == (ssize_t)r.b_len, "B's write: %zd, want %zu",
	      r.b_ret, r.b_len);
	a_want = c->valid && !c->whole ? (ssize_t)r.a_len : -EINVAL;
	CHECK(r.a_ret == a_want, "A's write: %zd, want %zd", r.a_ret, a_want);
	/* Either way the file's one table is settled. */
	CHECK(dev_write(&r.file, &one, 1) == -EINVAL,
	      "a write after the table's end was accepted");
	CHECK(!fops->release(NULL, &r.file), "release failed");

	tables = dev_list(&size, &maps);
	t = sframe_table_get(h.build_id, h.build_id_len);
	if (c->valid && !c->whole) {
		CHECK(tables == 1 && size == SEC_SIZE && !maps,
		      "listing: %u tables, last %u bytes %u mappings; want 1, %u bytes, 0 mappings",
		      tables, size, maps, SEC_SIZE);
		CHECK(t && t->size == SEC_SIZE && !memcmp(t->data, sec, SEC_SIZE),
		      "the table loaded is not the section written");
		sframe_table_put(t);
		CHECK(!dev_remove(&h), "remove failed");
		CHECK(dev_remove(&h) == -ENOENT, "second remove did not give ENOENT");
	} else {
		CHECK(!tables, "listing: %u tables, want none", tables);
		CHECK(!t, "a table is loaded for the build-id");
		sframe_table_put(t);
	}
	CHECK(sframe_user_store_empty(), "the store is not empty at the end");

	free(r.a_buf);
	free(r.b_buf);
	sem_destroy(&r.a_event);
	sem_destroy(&r.b_go);
	sem_destroy(&r.b_in_copy);
}

int main(int argc, char **argv)
{
	unsigned int i, n = 0, bad = 0;
	int j, status;
	bool all = argc < 2, want;
	pid_t pid;

	if (sframe_shim_initcall() || !sframe_shim_misc)
		return 2;
	fops = sframe_shim_misc->fops;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		for (want = all, j = 1; j < argc; j++)
			want |= !strcmp(argv[j], cases[i].name);
		n += want;
	}
	printf("1..%u\n", n);
	for (i = 0, n = 0; i < ARRAY_SIZE(cases); i++) {
		for (want = all, j = 1; j < argc; j++)
			want |= !strcmp(argv[j], cases[i].name);
		if (!want)
			continue;
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (!pid) {
			/* What follows on stderr, reports of ASan too, is this case's. */
			fprintf(stderr, "# %s\n", cases[i].name);
			run_case(&cases[i], i);
			exit(failures ? 1 : 0);
		}
		n++;
		if (pid < 0 || waitpid(pid, &status, 0) != pid) {
			printf("not ok %u - %s: fork or wait failed\n", n, cases[i].name);
			bad++;
		} else if (WIFSIGNALED(status)) {
			printf("not ok %u - %s: killed by signal %d\n", n,
			       cases[i].name, WTERMSIG(status));
			bad++;
		} else if (WEXITSTATUS(status)) {
			printf("not ok %u - %s: exit status %d\n", n,
			       cases[i].name, WEXITSTATUS(status));
			bad++;
		} else {
			printf("ok %u - %s\n", n, cases[i].name);
		}
	}
	return bad ? 1 : 0;
}
