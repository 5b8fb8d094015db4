// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the load path of SFrame tables: what a privileged
 * process writes to /dev/sframe_tables, run through the kernel's own
 * kernel/unwind/sframe_store.c (built in user space by store_user.c) and
 * sframe.c (sframe_user.c).
 *
 * Why: a table is untrusted input that the kernel keeps in its own memory
 * and reads, under RCU, for every process that maps the file, long after
 * the load. fuzz_sframe covers the reader; this covers what stands in front
 * of it and around it: the header checks, the check in full before a table
 * is accepted, the store's hash table and reference counts, and the
 * device's write(), which assembles a table from any split into writes.
 *
 * Input: a struct sframe_table_hdr, then hdr.sframe_size bytes of section,
 * then optional bytes that are the sizes of the writes to the device (0:
 * the rest of the table at once; none: the whole table at once). A header
 * that claims more section than the input holds is still checked, and
 * written to the device, where the table then stays incomplete; an input
 * shorter than a header is only written (a command such as "remove ...").
 *
 * Besides "no crash, no leak" (ASan, UBSan, LSan), it checks:
 *  - sframe_table_alloc() and sframe_table_add() as the device calls them:
 *    add accepts exactly what the reader accepts on the same bytes
 *    (sframe_init() and sframe_validate() in buffer mode); an accepted
 *    table is found by its build-id only, with the same bytes; loading it
 *    again gives -EEXIST; a second table under another build-id fits
 *    under kernel.sframe_tables_max_bytes exactly (-ENOSPC a byte below)
 *    and leaves it alone; lookups in it never find it malformed and
 *    answer the same at another load bias; sframe_table_remove() gives 0
 *    and then -ENOENT, and the table stays readable through a reference
 *    held;
 *  - the device: every write answers as the interface says (the write
 *    that completes the header refuses a bad one with alloc's errno, the
 *    one that completes the table gives add's verdict, a write past the
 *    table -EINVAL, and after an error every write -EINVAL); read() lists
 *    the tables with their mapping counts; "remove <hex>\n" removes one;
 *  - after each input the store is empty, unlocked and owes no RCU
 *    callback.
 */
#include <stdio.h>
#include <stdlib.h>
#include "shim_store.h"
#include "../../kernel/unwind/sframe.h"
#include <uapi/linux/sframe_table.h>

#define HLEN		sizeof(struct sframe_table_hdr)

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: failed: %s\n",		\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

/* One input, and what the direct load learnt about it. */
struct input {
	const u8			*data;
	size_t				size;
	struct sframe_table_hdr		hdr;
	const u8			*sec;		/* the section */
	size_t				sec_len;
	bool				complete;	/* sec_len == sframe_size */
	const u8			*chunks;	/* sizes of the writes */
	size_t				nchunks;
	long				alloc_err;	/* of sframe_table_alloc() */
	int				add_ret;	/* of sframe_table_add() */
};

static const struct file_operations *fops;

/* Field by field: the padding of the frame description is not set. */
static bool same_frame(const struct unwind_user_frame *a,
		       const struct unwind_user_frame *b)
{
	return a->cfa_off == b->cfa_off && a->ra_off == b->ra_off &&
	       a->fp_off == b->fp_off && a->use_fp == b->use_fp;
}

/* What the reader says of the section in buffer mode: 0 or -EINVAL. */
static int reader_verdict(const struct input *in)
{
	struct sframe_section sec = { 0 };
	int ret;

	sframe_shim_buf = in->sec;
	sframe_shim_len = in->sec_len;
	sec.sframe_start = in->hdr.sframe_vaddr;
	sec.sframe_end = in->hdr.sframe_vaddr + in->hdr.sframe_size;
	sec.text_start = in->hdr.text_vaddr;
	sec.text_end = in->hdr.text_vaddr + in->hdr.text_size;
	ret = sframe_init(&sec);
	if (!ret)
		ret = sframe_validate(&sec);
	CHECK(!ret || ret == -EINVAL);
	return ret;
}

/* Load @sec under @hdr as the device does: 0 or -errno. */
static int load(const struct sframe_table_hdr *hdr, const u8 *sec,
		struct sframe_table **tp)
{
	struct sframe_table *t = sframe_table_alloc(hdr);

	if (IS_ERR(t))
		return PTR_ERR(t);
	memcpy(t->data, sec, hdr->sframe_size);
	*tp = t;
	return sframe_table_add(t);
}

/*
 * Look up addresses of @t's text (its ends and middle, and the start,
 * middle and end of its first, middle and last function): never
 * malformed, since it was checked in full, and the same answers at load
 * bias 0 and at another bias.
 */
static void lookups(const struct sframe_table *t)
{
	struct unwind_user_frame f0, fb;
	struct sframe_section s0, sb;
	unsigned long bias, end, ips[12], start;
	unsigned int n = 0, i;
	u32 size, fdes[3];
	int r0, rb;

	sframe_table_section(t, 0, &s0);
	CHECK(!sframe_init(&s0));
	end = t->text_vaddr + t->text_size;
	if (end < t->sframe_vaddr + t->size)
		end = t->sframe_vaddr + t->size;
	/* The header checks keep the file below TASK_SIZE_MAX. */
	bias = ((TASK_SIZE_MAX - end) / 2) & ~(PAGE_SIZE - 1);
	sframe_table_section(t, bias, &sb);
	CHECK(!sframe_init(&sb));

	ips[n++] = t->text_vaddr;
	ips[n++] = t->text_vaddr + t->text_size / 2;
	ips[n++] = t->text_vaddr + t->text_size - 1;
	fdes[0] = 0;
	fdes[1] = s0.num_fdes / 2;
	fdes[2] = s0.num_fdes - 1;
	for (i = 0; s0.num_fdes && i < 3; i++) {
		CHECK(!sframe_user_fde(&s0, fdes[i], &start, &size));
		ips[n++] = start;
		ips[n++] = start + size / 2;
		ips[n++] = start + size - 1;
	}
	for (i = 0; i < n; i++) {
		r0 = sframe_find(&s0, ips[i], &f0);
		CHECK(r0 == 0 || r0 == SFRAME_OUTERMOST || r0 == -ENOENT ||
		      r0 == -EOPNOTSUPP);
		rb = sframe_find(&sb, ips[i] + bias, &fb);
		CHECK(rb == r0 && (r0 || same_frame(&f0, &fb)));
	}
}

/* Open the device as misc_open() does. */
static void dev_open(struct file *f)
{
	f->private_data = sframe_shim_misc;
	CHECK(!fops->open(NULL, f));
}

/* One write() of @len bytes from a buffer of exactly that size. */
static ssize_t dev_write(struct file *f, const void *data, size_t len)
{
	loff_t pos = 0;
	ssize_t ret;
	void *buf;

	buf = malloc(len ?: 1);
	CHECK(buf);
	memcpy(buf, data, len);
	ret = fops->write(f, buf, len, &pos);
	free(buf);
	return ret;
}

/* "remove <hex build-id>\n" on a file of its own. */
static ssize_t dev_remove(const u8 *id, unsigned int len)
{
	char cmd[8 + 2 * SFRAME_TABLE_BUILD_ID_MAX + 2];
	struct file f;
	ssize_t ret;
	unsigned int i;
	int n;

	n = sprintf(cmd, "remove ");
	for (i = 0; i < len; i++)
		n += sprintf(cmd + n, "%02x", id[i]);
	n += sprintf(cmd + n, "\n");
	dev_open(&f);
	ret = dev_write(&f, cmd, n);
	CHECK(!fops->release(NULL, &f));
	CHECK(ret == n || ret < 0);
	return ret;
}

/* read() of the device: how many tables it lists, and their mappings. */
static void dev_list(unsigned int *tables, unsigned int *maps)
{
	char buf[4096], *line, *nl;
	unsigned int size, m;
	struct file f;
	loff_t pos = 0;
	ssize_t n;

	dev_open(&f);
	n = fops->read(&f, buf, sizeof(buf) - 1, &pos);
	CHECK(n >= 0);
	buf[n] = '\0';
	CHECK(!fops->read(&f, buf + n, 1, &pos));
	CHECK(!fops->release(NULL, &f));
	*tables = *maps = 0;
	for (line = buf; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		CHECK(nl);
		*nl = '\0';
		CHECK(sscanf(line, "%*s %u %u", &size, &m) == 2);
		(*tables)++;
		*maps += m;
	}
}

/* The direct load of the table, with everything the store promises. */
static void direct(struct input *in)
{
	const struct sframe_table_hdr *h = &in->hdr;
	struct sframe_table_hdr h2, flip;
	struct sframe_table *t, *t2 = NULL, *tmp;
	unsigned int tables, maps;
	unsigned long max_bytes;

	t = sframe_table_alloc(h);
	if (IS_ERR(t)) {
		in->alloc_err = PTR_ERR(t);
		CHECK(in->alloc_err == -EINVAL || in->alloc_err == -E2BIG);
		return;
	}
	CHECK(t->size == h->sframe_size && t->build_id_len == h->build_id_len &&
	      !memcmp(t->build_id, h->build_id, h->build_id_len) &&
	      t->sframe_vaddr == h->sframe_vaddr &&
	      t->text_vaddr == h->text_vaddr && t->text_size == h->text_size);
	if (!in->complete) {
		sframe_table_free(t);
		return;
	}
	memcpy(t->data, in->sec, in->sec_len);
	in->add_ret = sframe_table_add(t);
	CHECK(in->add_ret == reader_verdict(in));
	if (in->add_ret) {
		CHECK(!sframe_table_get(h->build_id, h->build_id_len));
		CHECK(sframe_table_remove(h->build_id, h->build_id_len) == -ENOENT);
		return;
	}

	/* Loaded once, found by its build-id only, with its own bytes. */
	CHECK(load(h, in->sec, &tmp) == -EEXIST);
	CHECK(sframe_table_get(h->build_id, h->build_id_len) == t);
	CHECK(refcount_read(&t->ref) == 2);
	CHECK(!memcmp(t->data, in->sec, in->sec_len));
	if (h->build_id_len > 1)
		CHECK(!sframe_table_get(h->build_id, h->build_id_len - 1));
	flip = *h;
	flip.build_id[0] ^= 1;
	CHECK(!sframe_table_get(flip.build_id, flip.build_id_len));

	/*
	 * Another build-id: one byte longer, or the last byte changed. It
	 * fits under kernel.sframe_tables_max_bytes exactly, not a byte less.
	 */
	h2 = *h;
	if (h2.build_id_len < SFRAME_TABLE_BUILD_ID_MAX)
		h2.build_id_len++;
	else
		h2.build_id[h2.build_id_len - 1] ^= 0x80;
	max_bytes = *sframe_shim_max_bytes;
	*sframe_shim_max_bytes = 2 * (sizeof(*t) + in->sec_len) - 1;
	CHECK(load(&h2, in->sec, &t2) == -ENOSPC);
	*sframe_shim_max_bytes = 2 * (sizeof(*t) + in->sec_len);
	CHECK(!load(&h2, in->sec, &t2));
	*sframe_shim_max_bytes = max_bytes;
	CHECK(t2 != t);
	CHECK(sframe_table_get(h2.build_id, h2.build_id_len) == t2);
	sframe_table_put(t2);
	CHECK(sframe_table_get(h->build_id, h->build_id_len) == t);
	sframe_table_put(t);
	/* Both listed; ours is the only mapping reference. */
	dev_list(&tables, &maps);
	CHECK(tables == 2 && maps == 1);

	/* Removed while held: gone from the store, still readable. */
	CHECK(!sframe_table_remove(h->build_id, h->build_id_len));
	CHECK(sframe_table_remove(h->build_id, h->build_id_len) == -ENOENT);
	CHECK(!sframe_table_get(h->build_id, h->build_id_len));
	CHECK(refcount_read(&t->ref) == 1);
	lookups(t);
	sframe_table_put(t);

	CHECK(sframe_table_get(h2.build_id, h2.build_id_len) == t2);
	sframe_table_put(t2);
	CHECK(!sframe_table_remove(h2.build_id, h2.build_id_len));
	dev_list(&tables, &maps);
	CHECK(!tables);
}

/*
 * The same bytes written to the device in the chunks the input gives; the
 * answer expected of each write follows the interface's description in
 * sframe_store.c, and the direct load's results.
 */
static void device(const struct input *in)
{
	const struct sframe_table_hdr *h = &in->hdr;
	size_t total = HLEN + (size_t)h->sframe_size;
	size_t limit = in->complete ? total : in->size;
	size_t pos = 0, e, len, i = 0;
	bool done = false, loaded = false, cmd;
	unsigned int tables, maps;
	struct sframe_table *t;
	ssize_t ret, exp;
	struct file f;

	dev_open(&f);
	CHECK(!dev_write(&f, in->data, 0));
	while (pos < limit) {
		len = i < in->nchunks ? in->chunks[i++] : 0;
		e = len ? min(pos + len, in->size) : limit;
		ret = dev_write(&f, in->data + pos, e - pos);
		cmd = false;
		if (done) {
			exp = -EINVAL;
		} else if (!pos && e >= 7 && !memcmp(in->data, "remove ", 7)) {
			/* A command, and the store is empty. */
			cmd = true;
			done = true;
			CHECK(ret == -EINVAL || ret == -ENOENT);
			exp = ret;
		} else if (e < HLEN) {
			exp = e - pos;
		} else if (pos < HLEN && in->alloc_err) {
			exp = in->alloc_err;
			done = true;
		} else if (e == HLEN) {
			exp = e - pos;
		} else if (e > total) {
			exp = -EINVAL;	/* more than the header said */
			done = true;
		} else if (e == total) {
			exp = in->add_ret ?: (ssize_t)(e - pos);
			loaded = !in->add_ret;
			done = true;
		} else {
			exp = e - pos;
		}
		if (ret != exp) {
			fprintf(stderr, "write [%zu, %zu) of %zu: %zd, expected %zd%s\n",
				pos, e, limit, ret, exp, cmd ? " (command)" : "");
			abort();
		}
		pos = e;
	}
	CHECK(!fops->release(NULL, &f));

	t = sframe_table_get(h->build_id, h->build_id_len);
	if (!loaded) {
		CHECK(!t);
		return;
	}
	CHECK(t && t->size == h->sframe_size &&
	      !memcmp(t->data, in->sec, in->sec_len));
	dev_list(&tables, &maps);
	CHECK(tables == 1 && maps == 1);
	sframe_table_put(t);
	CHECK(dev_remove(h->build_id, h->build_id_len) > 0);
	CHECK(dev_remove(h->build_id, h->build_id_len) == -ENOENT);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	CHECK(!sframe_shim_initcall());
	CHECK(sframe_shim_misc);
	fops = sframe_shim_misc->fops;
	return 0;
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct input in = { .data = data, .size = size };

	/* Shorter than a header: only written, all at once. */
	if (size >= HLEN) {
		memcpy(&in.hdr, data, HLEN);
		in.sec = data + HLEN;
		in.sec_len = size - HLEN;
		if (in.sec_len >= in.hdr.sframe_size) {
			in.complete = true;
			in.chunks = in.sec + in.hdr.sframe_size;
			in.nchunks = in.sec_len - in.hdr.sframe_size;
			in.sec_len = in.hdr.sframe_size;
		}
		direct(&in);
		CHECK(sframe_user_store_empty());
	}
	device(&in);
	CHECK(sframe_user_store_empty());
	return 0;
}
