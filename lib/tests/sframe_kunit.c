// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the SFrame reader (kernel/unwind/sframe.c).
 *
 * Each case builds a .sframe section byte by byte, in version 1, 2 or 3
 * layout, copies it into user memory mapped into the test thread's own mm
 * (the reader only ever reads user memory) and asserts the exact frame
 * sframe_find() gives at chosen addresses, or the exact error a malformed
 * section gives. The same function table is encoded in every version, so
 * the cases also check that all versions give the same frames.
 */

#include <kunit/test.h>
#include <linux/mman.h>
#include <linux/uaccess.h>
#ifndef SFRAME_USER_SHIM
#include <uapi/linux/sframe_table.h>
#endif

#include "../../kernel/unwind/sframe.h"

#define SF_PAGES	4
#define SF_MAX		(2 * PAGE_SIZE)
/* Fake text: never dereferenced, only compared. */
#define SF_TEXT_OFF	0x100000UL
#define SF_TEXT_SIZE	0x100000UL

#define SF_HDR		28
#define SF_SORTED	0x1
#define SF_FP_FLAG	0x2
#define SF_PCREL	0x4

/* FRE info byte: CFA base (1: SP, 0: FP), data word count, size code. */
#define SP		1
#define FP		0
#define INFO(base, n, sz)	((base) | (n) << 1 | (sz) << 5)
#define MANGLED_RA	0x80

/* V3 flexible control words (DWARF RSP 7, RBP 6). */
#define CTRL_RSP	(7 << 3 | 1)
#define CTRL_RBP	(6 << 3 | 1)
#define CTRL_SAVED	0x2		/* *(CFA + offset) */

#define RA_FIXED	(-8)

struct sf_fre {
	u32	start;
	u8	info;
	s32	w[6];
};

struct sf_func {
	u32			off;		/* start, from the text base */
	u32			size;
	u8			fre_type;	/* FRE start of 1 << fre_type bytes */
	bool			pcmask;
	u8			rep_size;	/* V2/V3 */
	u8			info_extra;	/* or'd into the FDE info byte */
	u8			info2;		/* V3 */
	const struct sf_fre	*fres;
	unsigned int		nfres;
};

#define FUNC(o, s, t, f, n)							\
	{ .off = (o), .size = (s), .fre_type = (t), .fres = (f), .nfres = (n) }

struct sf_test {
	unsigned long		base;		/* user address of the section */
	unsigned long		text;		/* fake text base */
	u8			*buf;		/* kernel copy being built */
	size_t			len;
	u8			version;
	u8			flags;
	/* byte offsets of things cases want to corrupt */
	size_t			fde0;		/* first FDE */
	size_t			last_fre;	/* last FRE written */
	struct sframe_section	sec;
};

/* A case's state, with @pages pages of user memory for its section. */
static struct sf_test *sf_setup_pages(struct kunit *test, unsigned int pages)
{
	struct sf_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->buf = kunit_kzalloc(test, SF_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->buf);
	t->base = kunit_vm_mmap(test, NULL, 0, pages * PAGE_SIZE,
				PROT_READ | PROT_WRITE,
				MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, t->base, 0, "could not map user memory");
	t->text = t->base + SF_TEXT_OFF;
	return t;
}

static struct sf_test *sf_setup(struct kunit *test)
{
	return sf_setup_pages(test, SF_PAGES);
}

static void sf_put(struct sf_test *t, size_t *pos, u64 val, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n && *pos < SF_MAX; i++, (*pos)++)
		t->buf[*pos] = val >> (8 * i);
}

static void sf_poke32(struct sf_test *t, size_t pos, u32 val)
{
	sf_put(t, &pos, val, 4);
}

/* (Re)describe the t->len bytes in user memory as the section. */
static int sf_describe(struct sf_test *t)
{
	memset(&t->sec, 0, sizeof(t->sec));
	t->sec.sframe_start = t->base;
	t->sec.sframe_end = t->base + t->len;
	t->sec.text_start = t->text;
	t->sec.text_end = t->text + SF_TEXT_SIZE;
	return sframe_init(&t->sec);
}

/* Copy the bytes to user memory and (re)describe the section. */
static int sf_upload(struct kunit *test, struct sf_test *t)
{
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)t->base, t->buf,
					   t->len), 0);
	return sf_describe(t);
}

/*
 * The header of a section of t->len bytes, @nfdes FDEs right after it and
 * @nfres FREs from offset @fres on.
 */
static void sf_put_header(struct sf_test *t, u8 version, u8 flags,
			  u32 nfdes, u32 nfres, size_t fres)
{
	size_t pos = 0;

	t->version = version;
	t->flags = flags;
	sf_put(t, &pos, 0xdee2, 2);
	sf_put(t, &pos, version, 1);
	sf_put(t, &pos, flags, 1);
	sf_put(t, &pos, 3, 1);			/* AMD64, little endian */
	sf_put(t, &pos, 0, 1);			/* no fixed FP offset */
	sf_put(t, &pos, (u8)RA_FIXED, 1);
	sf_put(t, &pos, 0, 1);			/* no aux header */
	sf_put(t, &pos, nfdes, 4);
	sf_put(t, &pos, nfres, 4);
	sf_put(t, &pos, t->len - fres, 4);
	sf_put(t, &pos, 0, 4);			/* FDEs right after the header */
	sf_put(t, &pos, fres - SF_HDR, 4);
}

/* Encode @funcs as a section of @version with @flags; returns sframe_init(). */
static int sf_build(struct kunit *test, struct sf_test *t, u8 version,
		    u8 flags, const struct sf_func *funcs, unsigned int n)
{
	unsigned int fde_size = version == 1 ? 17 : version == 2 ? 20 : 16;
	size_t fres = SF_HDR + n * fde_size, pos = fres, fde;
	u32 fre_off[16], total = 0;
	unsigned int i, j, k;

	KUNIT_ASSERT_LE(test, n, ARRAY_SIZE(fre_off));
	memset(t->buf, 0, SF_MAX);

	/* FRE sub-section first: the FDEs need the offsets. */
	for (i = 0; i < n; i++) {
		const struct sf_func *f = &funcs[i];

		fre_off[i] = pos - fres;
		if (version == 3) {
			sf_put(t, &pos, f->nfres, 2);
			sf_put(t, &pos, f->fre_type | f->pcmask << 4 |
				   f->info_extra, 1);
			sf_put(t, &pos, f->info2, 1);
			sf_put(t, &pos, f->rep_size, 1);
		}
		for (j = 0; j < f->nfres; j++) {
			const struct sf_fre *r = &f->fres[j];
			unsigned int cnt = (r->info >> 1) & 0xf;
			unsigned int code = (r->info >> 5) & 0x3;

			t->last_fre = pos;
			sf_put(t, &pos, r->start, 1 << (f->fre_type & 3));
			sf_put(t, &pos, r->info, 1);
			/* Counts past six write only six words: truncated. */
			for (k = 0; k < cnt && k < 6; k++)
				sf_put(t, &pos, r->w[k], code == 3 ? 4 : 1 << code);
		}
		total += f->nfres;
	}
	t->len = pos;
	sf_put_header(t, version, flags, n, total, fres);

	t->fde0 = SF_HDR;
	for (i = 0, fde = SF_HDR; i < n; i++, fde += fde_size) {
		const struct sf_func *f = &funcs[i];
		unsigned long func = t->text + f->off;
		unsigned long from = flags & SF_PCREL ? t->base + fde : t->base;
		s64 start = (s64)(func - from);
		u8 info = f->fre_type | f->pcmask << 4 | f->info_extra;

		pos = fde;
		if (version == 3) {
			sf_put(t, &pos, start, 8);
			sf_put(t, &pos, f->size, 4);
			sf_put(t, &pos, fre_off[i], 4);
			continue;
		}
		sf_put(t, &pos, (s32)start, 4);
		sf_put(t, &pos, f->size, 4);
		sf_put(t, &pos, fre_off[i], 4);
		sf_put(t, &pos, f->nfres, 4);
		sf_put(t, &pos, info, 1);
		if (version == 2)
			sf_put(t, &pos, f->rep_size, 1);
	}
	return sf_upload(test, t);
}

static void sf_expect(struct kunit *test, struct sf_test *t, u32 off,
		      bool use_fp, s32 cfa, s32 ra, s32 fp)
{
	struct unwind_user_frame f = { .cfa_off = 0x5a5a };
	int ret = sframe_find(&t->sec, t->text + off, &f);

	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "V%u flags %#x: text+%#x",
			    t->version, t->flags, off);
	if (ret)
		return;
	KUNIT_EXPECT_EQ_MSG(test, f.use_fp, use_fp, "V%u text+%#x",
			    t->version, off);
	KUNIT_EXPECT_EQ_MSG(test, f.cfa_off, cfa, "V%u text+%#x", t->version,
			    off);
	KUNIT_EXPECT_EQ_MSG(test, f.ra_off, ra, "V%u text+%#x", t->version,
			    off);
	KUNIT_EXPECT_EQ_MSG(test, f.fp_off, fp, "V%u text+%#x", t->version,
			    off);
}

#define SF_SP(test, t, off, cfa, fp)	\
	sf_expect(test, t, off, false, cfa, RA_FIXED, fp)
#define SF_FP(test, t, off, cfa, fp)	\
	sf_expect(test, t, off, true, cfa, RA_FIXED, fp)

static void sf_expect_ret(struct kunit *test, struct sf_test *t,
			  unsigned long ip, int want)
{
	struct unwind_user_frame f;

	KUNIT_EXPECT_EQ_MSG(test, sframe_find(&t->sec, ip, &f), want,
			    "V%u flags %#x: ip text%+ld", t->version, t->flags,
			    (long)(ip - t->text));
}

/*
 * The common table: a function that saves and sets up RBP (SP-based, then
 * FP-based CFA, FP saved and then restored), a small one after a gap, and a
 * PLT-like PCMASK function with 16-byte blocks.
 */
static const struct sf_fre basic_f0[] = {
	{ 0x00, INFO(SP, 1, 0), { 8 } },
	{ 0x01, INFO(SP, 2, 0), { 16, -16 } },
	{ 0x04, INFO(FP, 2, 0), { 16, -16 } },
	{ 0x30, INFO(SP, 1, 0), { 8 } },
};

static const struct sf_fre basic_f1[] = {
	{ 0x00, INFO(SP, 1, 0), { 8 } },
	{ 0x05, INFO(SP, 1, 0), { 32 } },
};

static const struct sf_fre basic_plt[] = {
	{ 0x00, INFO(SP, 1, 0), { 8 } },
	{ 0x0b, INFO(SP, 1, 0), { 16 } },
};

static const struct sf_func basic_funcs[] = {
	FUNC(0x100, 0x40, 0, basic_f0, ARRAY_SIZE(basic_f0)),
	FUNC(0x180, 0x10, 0, basic_f1, ARRAY_SIZE(basic_f1)),
	{ .off = 0x200, .size = 0x40, .pcmask = true, .rep_size = 16,
	  .fres = basic_plt, .nfres = ARRAY_SIZE(basic_plt) },
};

static void sf_check_basic(struct kunit *test, u8 version, u8 flags)
{
	struct sf_test *t = sf_setup(test);

	KUNIT_ASSERT_EQ(test, sf_build(test, t, version, flags, basic_funcs,
				       ARRAY_SIZE(basic_funcs)), 0);
	KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), 0);

	/* Every row, at its first and last byte. */
	SF_SP(test, t, 0x100, 8, 0);
	SF_SP(test, t, 0x101, 16, -16);
	SF_SP(test, t, 0x103, 16, -16);
	SF_FP(test, t, 0x104, 16, -16);
	SF_FP(test, t, 0x12f, 16, -16);
	SF_SP(test, t, 0x130, 8, 0);
	SF_SP(test, t, 0x13f, 8, 0);
	SF_SP(test, t, 0x180, 8, 0);
	SF_SP(test, t, 0x184, 8, 0);
	SF_SP(test, t, 0x185, 32, 0);
	SF_SP(test, t, 0x18f, 32, 0);

	/* PCMASK: the row is chosen by the offset into the 16-byte block. */
	SF_SP(test, t, 0x200, 8, 0);
	SF_SP(test, t, 0x20a, 8, 0);
	SF_SP(test, t, 0x20b, 16, 0);
	SF_SP(test, t, 0x20f, 16, 0);
	SF_SP(test, t, 0x210, 8, 0);
	SF_SP(test, t, 0x225, 8, 0);
	SF_SP(test, t, 0x22c, 16, 0);
	SF_SP(test, t, 0x23f, 16, 0);

	/* Before, between and after the functions, and outside the text. */
	sf_expect_ret(test, t, t->text + 0xff, -ENOENT);
	sf_expect_ret(test, t, t->text + 0x140, -ENOENT);
	sf_expect_ret(test, t, t->text + 0x17f, -ENOENT);
	sf_expect_ret(test, t, t->text + 0x190, -ENOENT);
	sf_expect_ret(test, t, t->text + 0x240, -ENOENT);
	sf_expect_ret(test, t, t->text - 1, -ENOENT);
	sf_expect_ret(test, t, t->text + SF_TEXT_SIZE, -ENOENT);
	sf_expect_ret(test, t, 0, -ENOENT);
	sf_expect_ret(test, t, ~0UL, -ENOENT);
}

static void sf_v1(struct kunit *test)
{
	sf_check_basic(test, 1, SF_SORTED);
}

static void sf_v2(struct kunit *test)
{
	sf_check_basic(test, 2, SF_SORTED);
}

static void sf_v2_pcrel(struct kunit *test)
{
	sf_check_basic(test, 2, SF_SORTED | SF_PCREL);
}

static void sf_v3(struct kunit *test)
{
	sf_check_basic(test, 3, SF_SORTED | SF_PCREL);
}

static void sf_v3_secrel(struct kunit *test)
{
	sf_check_basic(test, 3, SF_SORTED);
}

/*
 * sframe_find_cached() with a budget of @budget reads, and without a cache
 * for a NULL @cache; the reads left after it.
 */
static int sf_find_cached_budget(struct sframe_section *sec,
				 struct sframe_cache *cache, unsigned long ip,
				 unsigned int budget, unsigned int *left,
				 struct unwind_user_frame *f)
{
	int ret;

	*left = budget;
	sec->reads_left = left;
	ret = sframe_find_cached(sec, cache, ip, f);
	sec->reads_left = NULL;
	return ret;
}

static int sf_find_budget(struct sframe_section *sec, unsigned long ip,
			  unsigned int budget, unsigned int *left,
			  struct unwind_user_frame *f)
{
	/* sframe_find() is the lookup without a cache. */
	return sf_find_cached_budget(sec, NULL, ip, budget, left, f);
}

/*
 * A budget of reads bounds what lookups cost together (one walk): each read
 * of the section is charged, a spent budget gives -EAGAIN and reads nothing,
 * and a lookup that fits in its budget answers as without one.
 */
static void sf_budget(struct kunit *test)
{
	struct sf_test *t = sf_setup(test);
	struct unwind_user_frame f;
	unsigned int v, left, cost;

	for (v = 1; v <= 3; v++) {
		KUNIT_ASSERT_EQ(test, sf_build(test, t, v, SF_SORTED,
					       basic_funcs,
					       ARRAY_SIZE(basic_funcs)), 0);
		/*
		 * The last row of the PLT function: two rounds of search over
		 * three FDEs, the FDE (and V3's attributes), one chunk of rows.
		 */
		cost = v == 3 ? 5 : 4;
		KUNIT_EXPECT_EQ_MSG(test, sf_find_budget(&t->sec, t->text + 0x23f,
							 100, &left, &f), 0,
				    "V%u", v);
		KUNIT_EXPECT_EQ_MSG(test, 100 - left, cost, "V%u", v);
		KUNIT_EXPECT_EQ_MSG(test, f.cfa_off, 16, "V%u", v);

		KUNIT_EXPECT_EQ_MSG(test, sf_find_budget(&t->sec, t->text + 0x23f,
							 cost, &left, &f), 0,
				    "V%u", v);
		KUNIT_EXPECT_EQ_MSG(test, left, 0, "V%u", v);
		KUNIT_EXPECT_EQ_MSG(test, sf_find_budget(&t->sec, t->text + 0x23f,
							 cost - 1, &left, &f),
				    -EAGAIN, "V%u", v);
		KUNIT_EXPECT_EQ_MSG(test, left, 0, "V%u", v);
		KUNIT_EXPECT_EQ_MSG(test, sf_find_budget(&t->sec, t->text + 0x100,
							 0, &left, &f),
				    -EAGAIN, "V%u", v);
		KUNIT_EXPECT_EQ_MSG(test, left, 0, "V%u", v);
		/* Outside the text nothing is read. */
		KUNIT_EXPECT_EQ_MSG(test, sf_find_budget(&t->sec, t->text - 1,
							 0, &left, &f),
				    -ENOENT, "V%u", v);
	}
}

/*
 * A search that misses keeps the gap its address is in, between two
 * functions, before the first or after the last: another address in it is
 * not covered without a read (a budget of 0 would give -EAGAIN for any),
 * and the gap ends exactly where the functions around it do.
 */
static void sf_gap_cached(struct kunit *test)
{
	static const struct {
		unsigned long	miss, again, edge_below, edge_above;
	} gaps[] = {
		{ 0x150, 0x17f, 0x13f, 0x180 },		/* between f0 and f1 */
		{ 0x1a0, 0x1ff, 0x18f, 0x200 },		/* between f1 and the PLT */
		{ 0x010, 0x0ff, 0, 0x100 },		/* before f0 */
		{ 0x300, SF_TEXT_SIZE - 1, 0x23f, 0 },	/* after the PLT */
	};
	struct sf_test *t = sf_setup(test);
	struct unwind_user_frame f, want;
	struct sframe_cache cache;
	unsigned int v, i, left;
	int ret;

	for (v = 1; v <= 3; v++) {
		KUNIT_ASSERT_EQ(test, sf_build(test, t, v, SF_SORTED,
					       basic_funcs,
					       ARRAY_SIZE(basic_funcs)), 0);
		for (i = 0; i < ARRAY_SIZE(gaps); i++) {
			unsigned long miss = t->text + gaps[i].miss;
			unsigned long again = t->text + gaps[i].again;
			unsigned long above = t->text + gaps[i].edge_above;
			unsigned long below = t->text + gaps[i].edge_below;

			memset(&cache, 0, sizeof(cache));
			ret = sf_find_cached_budget(&t->sec, &cache, miss, 100,
						    &left, &f);
			KUNIT_EXPECT_EQ_MSG(test, ret, -ENOENT, "V%u gap %u", v, i);
			KUNIT_EXPECT_NE_MSG(test, left, 100, "V%u gap %u", v, i);
			ret = sf_find_cached_budget(&t->sec, &cache, again, 0,
						    &left, &f);
			KUNIT_EXPECT_EQ_MSG(test, ret, -ENOENT, "V%u gap %u", v, i);
			/* The functions around it are still found. */
			if (gaps[i].edge_above) {
				ret = sframe_find_cached(&t->sec, &cache, above,
							 &f);
				KUNIT_EXPECT_EQ_MSG(test, ret, 0, "V%u gap %u",
						    v, i);
				ret = sframe_find(&t->sec, above, &want);
				KUNIT_EXPECT_EQ(test, ret, 0);
				KUNIT_EXPECT_EQ(test, f.cfa_off, want.cfa_off);
			}
			if (gaps[i].edge_below) {
				memset(&cache, 0, sizeof(cache));
				ret = sframe_find_cached(&t->sec, &cache, miss,
							 &f);
				KUNIT_EXPECT_EQ(test, ret, -ENOENT);
				ret = sframe_find_cached(&t->sec, &cache, below,
							 &f);
				KUNIT_EXPECT_EQ_MSG(test, ret, 0, "V%u gap %u",
						    v, i);
			}
		}
	}
}

#define SF_CAP_ROWS	16384

/*
 * A V2 section whose first function has @rows rows, one per byte, each four
 * bytes (2-byte start, info, 1-byte CFA offset), and whose second function
 * has one: written straight to user memory, too large for sf_build().
 */
static void sf_build_rows(struct kunit *test, struct sf_test *t, u32 rows)
{
	u32 fres = SF_HDR + 2 * 20, i;
	u8 *chunk = t->buf;
	size_t pos = SF_HDR;

	memset(t->buf, 0, SF_MAX);
	t->len = fres + 4 * rows + 3;
	sf_put_header(t, 2, SF_SORTED, 2, rows + 1, fres);
	/* Function 0 at the text's start, 64 KiB; function 1 right after. */
	sf_put(t, &pos, t->text - t->base, 4);
	sf_put(t, &pos, 0x10000, 4);
	sf_put(t, &pos, 0, 4);
	sf_put(t, &pos, rows, 4);
	sf_put(t, &pos, 1, 1);			/* 2-byte starts */
	pos += 3;
	sf_put(t, &pos, t->text + 0x10000 - t->base, 4);
	sf_put(t, &pos, 0x10, 4);
	sf_put(t, &pos, 4 * rows, 4);
	sf_put(t, &pos, 1, 4);
	sf_put(t, &pos, 0, 1);
	pos += 3;
	KUNIT_ASSERT_EQ(test, pos, fres);
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)t->base, t->buf,
					   pos), 0);

	/* Row i: CFA at SP + 8 * (1 + i % 15), so each row can be told apart. */
	for (i = 0; i < rows; i++) {
		chunk[4 * (i % 512)] = i;
		chunk[4 * (i % 512) + 1] = i >> 8;
		chunk[4 * (i % 512) + 2] = INFO(SP, 1, 0);
		chunk[4 * (i % 512) + 3] = 8 * (1 + i % 15);
		if (i % 512 == 511 || i == rows - 1)
			KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)
					(t->base + fres + 4 * (i - i % 512)),
					chunk, 4 * (i % 512 + 1)), 0);
	}
	chunk[0] = 0;
	chunk[1] = INFO(SP, 1, 0);
	chunk[2] = 24;
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)
					   (t->base + fres + 4 * rows), chunk,
					   3), 0);
	KUNIT_ASSERT_EQ(test, sf_describe(t), 0);
}

/*
 * A lookup scans at most SF_CAP_ROWS rows of one function, reading them in
 * chunks: a function with more is not walked through (-EOPNOTSUPP) but
 * leaves the section valid and its other functions found.
 */
static void sf_rows_cap(struct kunit *test)
{
	struct sf_test *t = sf_setup_pages(test, 40);
	struct unwind_user_frame f;
	unsigned int left;

	sf_build_rows(test, t, SF_CAP_ROWS);
	KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), 0);
	/*
	 * Two rounds of search, the FDE, and the rows: their first 64 bytes,
	 * then 256-byte chunks (the last one partly).
	 */
	KUNIT_EXPECT_EQ(test, sf_find_budget(&t->sec, t->text + SF_CAP_ROWS - 1,
					     100000, &left, &f), 0);
	KUNIT_EXPECT_EQ(test, 100000 - left, 3 + 1 + 256);
	KUNIT_EXPECT_EQ(test, f.cfa_off, 8 * (1 + (SF_CAP_ROWS - 1) % 15));
	KUNIT_EXPECT_EQ(test, sf_find_budget(&t->sec, t->text + 0x10, 100000,
					     &left, &f), 0);
	/* Row 0x10 starts right after the first 64 bytes. */
	KUNIT_EXPECT_EQ(test, 100000 - left, 3 + 2);
	KUNIT_EXPECT_EQ(test, f.cfa_off, 8 * (1 + 0x10 % 15));
	SF_SP(test, t, 0x10000, 24, 0);

	sf_build_rows(test, t, SF_CAP_ROWS + 1);
	KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), 0);
	KUNIT_EXPECT_EQ(test, sf_find_budget(&t->sec, t->text, 100000, &left,
					     &f), -EOPNOTSUPP);
	/* The search and the FDE; not one row. */
	KUNIT_EXPECT_EQ(test, 100000 - left, 3);
	sf_expect_ret(test, t, t->text + SF_CAP_ROWS, -EOPNOTSUPP);
	SF_SP(test, t, 0x10000, 24, 0);
}

/* FRE start addresses of 1, 2 and 4 bytes; data words of 1, 2 and 4. */
static const struct sf_fre wide_f0[] = {
	{ 0x0000, INFO(SP, 1, 0), { 8 } },
	{ 0x1234, INFO(SP, 2, 1), { 0x1000, -0x200 } },
	{ 0x2345, INFO(FP, 2, 2), { 0x20000, -0x10000 } },
};

static const struct sf_fre wide_f1[] = {
	{ 0x00000, INFO(SP, 1, 0), { 127 } },
	{ 0x12345, INFO(SP, 1, 2), { 0x7fffffff } },
	{ 0x1fff0, INFO(FP, 2, 1), { 0x7ff0, -0x7ff0 } },
};

static const struct sf_fre wide_f2[] = {
	{ 0x00, INFO(SP, 2, 0), { -128, -1 } },
};

static const struct sf_func wide_funcs[] = {
	FUNC(0x1000, 0x3000, 1, wide_f0, ARRAY_SIZE(wide_f0)),
	FUNC(0x10000, 0x20000, 2, wide_f1, ARRAY_SIZE(wide_f1)),
	FUNC(0x40000, 0x10, 0, wide_f2, ARRAY_SIZE(wide_f2)),
};

static void sf_widths(struct kunit *test)
{
	static const u8 vers[][2] = {
		{ 1, SF_SORTED }, { 2, SF_SORTED }, { 2, SF_SORTED | SF_PCREL },
		{ 3, SF_SORTED | SF_PCREL }, { 3, SF_SORTED },
	};
	struct sf_test *t = sf_setup(test);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vers); i++) {
		KUNIT_ASSERT_EQ(test, sf_build(test, t, vers[i][0], vers[i][1],
					       wide_funcs,
					       ARRAY_SIZE(wide_funcs)), 0);
		KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), 0);
		SF_SP(test, t, 0x1000, 8, 0);
		SF_SP(test, t, 0x2233, 8, 0);
		SF_SP(test, t, 0x2234, 0x1000, -0x200);
		SF_SP(test, t, 0x3344, 0x1000, -0x200);
		SF_FP(test, t, 0x3345, 0x20000, -0x10000);
		SF_FP(test, t, 0x3fff, 0x20000, -0x10000);
		sf_expect_ret(test, t, t->text + 0x4000, -ENOENT);
		SF_SP(test, t, 0x10000, 127, 0);
		SF_SP(test, t, 0x22344, 127, 0);
		SF_SP(test, t, 0x22345, 0x7fffffff, 0);
		SF_FP(test, t, 0x2fff0, 0x7ff0, -0x7ff0);
		SF_FP(test, t, 0x2ffff, 0x7ff0, -0x7ff0);
		sf_expect_ret(test, t, t->text + 0x30000, -ENOENT);
		/* Sign extension of 1-byte words. */
		SF_SP(test, t, 0x40000, -128, -1);
	}
}

/* V1 has no repetition size: PCMASK blocks are AMD64's 16-byte PLT entries. */
static void sf_v1_pcmask(struct kunit *test)
{
	static const struct sf_func f[] = {
		{ .off = 0x0, .size = 0x30, .pcmask = true, .rep_size = 99,
		  .fres = basic_plt, .nfres = ARRAY_SIZE(basic_plt) },
	};
	struct sf_test *t = sf_setup(test);

	KUNIT_ASSERT_EQ(test, sf_build(test, t, 1, SF_SORTED, f, 1), 0);
	SF_SP(test, t, 0x1a, 8, 0);
	SF_SP(test, t, 0x1b, 16, 0);
	SF_SP(test, t, 0x2f, 16, 0);
}

/* An FRE with no data words: undefined RA, the outermost frame. */
static void sf_outermost(struct kunit *test)
{
	static const struct sf_fre fres[] = {
		{ 0x0, INFO(SP, 1, 0), { 8 } },
		{ 0x4, 0 },
		{ 0x8, INFO(SP, 1, 0), { 16 } },
	};
	static const struct sf_func f[] = {
		FUNC(0x10, 0x20, 0, fres, ARRAY_SIZE(fres)),
	};
	struct sf_test *t = sf_setup(test);

	KUNIT_ASSERT_EQ(test, sf_build(test, t, 3, SF_SORTED | SF_PCREL, f, 1),
			0);
	KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), 0);
	SF_SP(test, t, 0x13, 8, 0);
	sf_expect_ret(test, t, t->text + 0x14, SFRAME_OUTERMOST);
	sf_expect_ret(test, t, t->text + 0x17, SFRAME_OUTERMOST);
	SF_SP(test, t, 0x18, 16, 0);

	KUNIT_ASSERT_EQ(test, sf_build(test, t, 2, SF_SORTED, f, 1), 0);
	sf_expect_ret(test, t, t->text + 0x14, SFRAME_OUTERMOST);

	/* V1 predates the marker: a row without a CFA is malformed. */
	KUNIT_ASSERT_EQ(test, sf_build(test, t, 1, SF_SORTED, f, 1), 0);
	sf_expect_ret(test, t, t->text + 0x14, -EINVAL);
	KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), -EINVAL);
}

/* V3 flexible FDEs: the shapes the frame description can hold, exactly. */
static void sf_v3_flex(struct kunit *test)
{
	static const struct sf_fre fres[] = {
		{ 0x00, INFO(0, 2, 0), { CTRL_RSP, 8 } },
		{ 0x04, INFO(0, 6, 1), { CTRL_RBP, 16, CTRL_SAVED, -8,
					  CTRL_SAVED, -16 } },
		{ 0x08, INFO(0, 5, 0), { CTRL_RSP, 24, 0, CTRL_SAVED, -24 } },
		{ 0x0c, INFO(0, 4, 2), { CTRL_RSP, 32, CTRL_SAVED, -16 } },
		/* CFA = *(RBP - 8): DRAP; not expressible. */
		{ 0x10, INFO(0, 2, 0), { CTRL_RBP | 0x2, -8 } },
		/* CFA based on another register. */
		{ 0x14, INFO(0, 2, 0), { 3 << 3 | 1, 8 } },
		/* RA kept in a register. */
		{ 0x18, INFO(0, 4, 0), { CTRL_RSP, 8, 3 << 3 | 1, 0 } },
	};
	static const struct sf_func f[] = {
		{ .off = 0x100, .size = 0x20, .info2 = 1, .fres = fres,
		  .nfres = ARRAY_SIZE(fres) },
	};
	struct sf_test *t = sf_setup(test);

	KUNIT_ASSERT_EQ(test, sf_build(test, t, 3, SF_SORTED | SF_PCREL, f, 1),
			0);
	KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), 0);
	sf_expect(test, t, 0x100, false, 8, RA_FIXED, 0);
	sf_expect(test, t, 0x104, true, 16, -8, -16);
	sf_expect(test, t, 0x108, false, 24, RA_FIXED, -24);
	sf_expect(test, t, 0x10c, false, 32, -16, 0);
	sf_expect_ret(test, t, t->text + 0x110, -EOPNOTSUPP);
	sf_expect_ret(test, t, t->text + 0x114, -EOPNOTSUPP);
	sf_expect_ret(test, t, t->text + 0x118, -EOPNOTSUPP);
}

static void sf_v3_flex_malformed(struct kunit *test)
{
	static const struct sf_fre bad[][1] = {
		{ { 0, INFO(0, 3, 0), { CTRL_RSP, 8, 0 } } },	/* trailing pad */
		{ { 0, INFO(0, 1, 0), { CTRL_RSP } } },		/* half a pair */
		{ { 0, INFO(0, 2, 0), { CTRL_SAVED, 8 } } },	/* CFA from CFA */
		{ { 0, INFO(0, 5, 0), { CTRL_RSP, 8, 1, 2, -16 } } }, /* bad pad */
		{ { 0, INFO(0, 4, 0), { CTRL_RSP, 8, 0, -8 } } },	/* pad pair */
		{ { 0, INFO(0, 6, 0), { CTRL_RSP, 8, 2, -8, 2, 0 } } }, /* FP at 0 */
	};
	struct sf_test *t = sf_setup(test);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct sf_func f = { .off = 0, .size = 0x10, .info2 = 1,
				     .fres = bad[i], .nfres = 1 };

		KUNIT_ASSERT_EQ(test, sf_build(test, t, 3, SF_SORTED, &f, 1), 0);
		sf_expect_ret(test, t, t->text, -EINVAL);
		KUNIT_EXPECT_EQ_MSG(test, sframe_validate(&t->sec), -EINVAL,
				    "case %u", i);
	}
}

/* Signal frames and unknown FDE types are refused, not taken as malformed. */
static void sf_v3_unsupported(struct kunit *test)
{
	static const struct sf_fre fres[] = { { 0, INFO(SP, 1, 0), { 8 } } };
	struct sf_func f[] = {
		{ .off = 0x0, .size = 0x10, .info_extra = 0x80, .fres = fres,
		  .nfres = 1 },
		{ .off = 0x10, .size = 0x10, .info2 = 7, .fres = fres,
		  .nfres = 1 },
	};
	struct sf_test *t = sf_setup(test);

	KUNIT_ASSERT_EQ(test, sf_build(test, t, 3, SF_SORTED | SF_PCREL, f, 2),
			0);
	KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), 0);
	sf_expect_ret(test, t, t->text, -EOPNOTSUPP);
	sf_expect_ret(test, t, t->text + 0x10, -EOPNOTSUPP);
}

/* Header problems: sframe_init() refuses each one. */
static void sf_bad_header(struct kunit *test)
{
	static const struct {
		size_t	pos;
		u32	val;
		u8	size;
	} pokes[] = {
		{ 0, 0xdee3, 2 },	/* magic */
		{ 0, 0xe2de, 2 },	/* big endian */
		{ 2, 0, 1 },		/* version */
		{ 2, 4, 1 },
		{ 3, 0, 1 },		/* not sorted */
		{ 3, SF_SORTED | 0x8, 1 },	/* unknown flag */
		{ 3, SF_SORTED | SF_FP_FLAG, 1 },	/* gone in V3 */
		{ 4, 2, 1 },		/* aarch64 */
		{ 4, 4, 1 },		/* s390x */
		{ 6, 0, 1 },		/* no fixed RA */
		{ 7, 255, 1 },		/* aux header past the end */
		{ 8, 0xffffffff, 4 },	/* FDE count */
		{ 8, 4, 4 },		/* FDEs run into the FREs */
		{ 12, 0xffffffff, 4 },	/* FRE count */
		{ 12, 100, 4 },		/* more FREs than bytes */
		{ 16, 0xffffffff, 4 },	/* FRE length */
		{ 16, 0x1000, 4 },
		{ 20, 0xfffffff0, 4 },	/* FDE offset */
		{ 20, 1, 4 },		/* FDEs overlap the FREs */
		{ 24, 0xfffffff0, 4 },	/* FRE offset */
		{ 24, 0, 4 },		/* FREs overlap the FDEs */
	};
	struct sf_test *t = sf_setup(test);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pokes); i++) {
		size_t pos = pokes[i].pos;

		KUNIT_ASSERT_EQ(test, sf_build(test, t, 3, SF_SORTED | SF_PCREL,
					       basic_funcs,
					       ARRAY_SIZE(basic_funcs)), 0);
		sf_put(t, &pos, pokes[i].val, pokes[i].size);
		KUNIT_EXPECT_EQ_MSG(test, sf_upload(test, t), -EINVAL,
				    "poke %u", i);
	}

	/* V1 does not know the PC-relative flag. */
	KUNIT_ASSERT_EQ(test, sf_build(test, t, 1, SF_SORTED | SF_PCREL,
				       basic_funcs, ARRAY_SIZE(basic_funcs)),
			-EINVAL);
}

/* Every truncation of a valid section is refused at init. */
static void sf_truncated(struct kunit *test)
{
	struct sf_test *t = sf_setup(test);
	size_t full, len;

	KUNIT_ASSERT_EQ(test, sf_build(test, t, 2, SF_SORTED, basic_funcs,
				       ARRAY_SIZE(basic_funcs)), 0);
	full = t->len;
	for (len = 0; len < full; len++) {
		t->sec.sframe_end = t->sec.sframe_start + len;
		KUNIT_EXPECT_EQ_MSG(test, sframe_init(&t->sec), -EINVAL,
				    "length %zu", len);
	}
	t->sec.sframe_end = t->sec.sframe_start + full;
	KUNIT_EXPECT_EQ(test, sframe_init(&t->sec), 0);

	/* No text, or an empty one. */
	t->sec.text_end = t->sec.text_start;
	KUNIT_EXPECT_EQ(test, sframe_init(&t->sec), -EINVAL);
}

/* A section that is not mapped gives -EFAULT, not a crash. */
static void sf_unmapped(struct kunit *test)
{
	struct sframe_section sec = {
		/* Below mmap_min_addr: never mapped. */
		.sframe_start = PAGE_SIZE, .sframe_end = 2 * PAGE_SIZE,
		.text_start = 0x400000, .text_end = 0x500000,
	};

	KUNIT_EXPECT_EQ(test, sframe_init(&sec), -EFAULT);
}

/* FDE and FRE contents that point outside their sub-section, or lie. */
static void sf_bad_fde(struct kunit *test)
{
	struct sf_test *t = sf_setup(test);
	unsigned int v;

	for (v = 1; v <= 3; v++) {
		u8 flags = SF_SORTED | (v > 1 ? SF_PCREL : 0);
		size_t size_pos = SF_HDR + (v == 3 ? 8 : 4);
		size_t fre_pos = SF_HDR + (v == 3 ? 12 : 8);

		/* FRE offset past the FRE sub-section. */
		KUNIT_ASSERT_EQ(test, sf_build(test, t, v, flags, basic_funcs,
					       ARRAY_SIZE(basic_funcs)), 0);
		sf_poke32(t, fre_pos, 0xffff0);
		KUNIT_ASSERT_EQ(test, sf_upload(test, t), 0);
		sf_expect_ret(test, t, t->text + 0x100, -EINVAL);
		KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), -EINVAL);

		/* FRE offset at the very end: the rows would lie outside. */
		KUNIT_ASSERT_EQ(test, sf_build(test, t, v, flags, basic_funcs,
					       ARRAY_SIZE(basic_funcs)), 0);
		sf_poke32(t, fre_pos, t->len - (SF_HDR + 3 * t->sec.fde_size)
			  - 1);
		KUNIT_ASSERT_EQ(test, sf_upload(test, t), 0);
		sf_expect_ret(test, t, t->text + 0x100, -EINVAL);

		/*
		 * A function reaching past the end of the text: not this
		 * text's function, so not covered, for a lookup; malformed
		 * for validation, which sees the whole section.
		 */
		KUNIT_ASSERT_EQ(test, sf_build(test, t, v, flags, basic_funcs,
					       ARRAY_SIZE(basic_funcs)), 0);
		sf_poke32(t, size_pos, 0xfffffff0);
		KUNIT_ASSERT_EQ(test, sf_upload(test, t), 0);
		sf_expect_ret(test, t, t->text + 0x100, -ENOENT);
		KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), -EINVAL);

		/* A last FRE whose data words run past the sub-section. */
		KUNIT_ASSERT_EQ(test, sf_build(test, t, v, flags, basic_funcs,
					       ARRAY_SIZE(basic_funcs)), 0);
		t->buf[t->last_fre + 1] = INFO(SP, 15, 2);
		KUNIT_ASSERT_EQ(test, sf_upload(test, t), 0);
		sf_expect_ret(test, t, t->text + 0x23f, -EINVAL);
		KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), -EINVAL);
	}

	/* V1/V2: an FDE claiming more rows than the whole section. */
	KUNIT_ASSERT_EQ(test, sf_build(test, t, 2, SF_SORTED, basic_funcs,
				       ARRAY_SIZE(basic_funcs)), 0);
	sf_poke32(t, SF_HDR + 12, 0x10000);
	KUNIT_ASSERT_EQ(test, sf_upload(test, t), 0);
	sf_expect_ret(test, t, t->text + 0x100, -EINVAL);
	KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), -EINVAL);

	/* V3: attributes starting two bytes before the end. */
	KUNIT_ASSERT_EQ(test, sf_build(test, t, 3, SF_SORTED, basic_funcs,
				       ARRAY_SIZE(basic_funcs)), 0);
	sf_poke32(t, SF_HDR + 12, t->len - (SF_HDR + 3 * 16) - 2);
	KUNIT_ASSERT_EQ(test, sf_upload(test, t), 0);
	sf_expect_ret(test, t, t->text + 0x100, -EINVAL);
}

/* Rows that cannot be decoded. */
static void sf_bad_fre(struct kunit *test)
{
	static const struct sf_fre bad[][1] = {
		{ { 0, INFO(SP, 1, 3), { 8 } } },		/* size code 3 */
		{ { 0, INFO(SP, 1, 0) | MANGLED_RA, { 8 } } },
		{ { 0, INFO(SP, 3, 0), { 8, -16, -24 } } },	/* 3 words */
		{ { 0, INFO(SP, 2, 0), { 8, 0 } } },		/* FP at CFA */
		{ { 0, INFO(SP, 7, 0), { 8 } } },		/* 7 words */
	};
	struct sf_test *t = sf_setup(test);
	unsigned int i, v;

	for (v = 1; v <= 3; v++) {
		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			struct sf_func f = { .off = 0, .size = 0x10,
					     .fres = bad[i], .nfres = 1 };

			KUNIT_ASSERT_EQ(test, sf_build(test, t, v, SF_SORTED,
						       &f, 1), 0);
			sf_expect_ret(test, t, t->text, -EINVAL);
			KUNIT_EXPECT_EQ_MSG(test, sframe_validate(&t->sec),
					    -EINVAL, "V%u case %u", v, i);
		}

		/* FRE type 3 does not exist. */
		{
			struct sf_func f = FUNC(0, 0x10, 3, basic_f1,
						  ARRAY_SIZE(basic_f1));

			KUNIT_ASSERT_EQ(test, sf_build(test, t, v, SF_SORTED,
						       &f, 1), 0);
			sf_expect_ret(test, t, t->text, -EINVAL);
		}
	}

	/* PCMASK without a block size (V2, V3). */
	for (v = 2; v <= 3; v++) {
		struct sf_func f = { .off = 0, .size = 0x20, .pcmask = true,
				     .fres = basic_plt, .nfres = 2 };

		KUNIT_ASSERT_EQ(test, sf_build(test, t, v, SF_SORTED, &f, 1), 0);
		sf_expect_ret(test, t, t->text + 0x11, -EINVAL);
		KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), -EINVAL);
	}
}

/* Order and overlap problems only full validation sees. */
static void sf_bad_layout(struct kunit *test)
{
	static const struct sf_fre one[] = { { 0, INFO(SP, 1, 0), { 8 } } };
	static const struct sf_fre unsorted_fres[] = {
		{ 0x0, INFO(SP, 1, 0), { 8 } },
		{ 0x8, INFO(SP, 1, 0), { 16 } },
		{ 0x4, INFO(SP, 1, 0), { 24 } },
	};
	static const struct sf_fre late_fre[] = {
		{ 0x0, INFO(SP, 1, 0), { 8 } },
		{ 0x10, INFO(SP, 1, 0), { 16 } },
	};
	static const struct sf_func unsorted[] = {
		FUNC(0x200, 0x10, 0, one, 1),
		FUNC(0x100, 0x10, 0, one, 1),
	};
	static const struct sf_func overlap[] = {
		FUNC(0x100, 0x40, 0, one, 1),
		FUNC(0x120, 0x10, 0, one, 1),
	};
	static const struct sf_func zero[] = {
		FUNC(0x100, 0, 0, one, 1),
		FUNC(0x120, 0x10, 0, one, 1),
	};
	static const struct sf_func rows[] = {
		FUNC(0x100, 0x10, 0, unsorted_fres, ARRAY_SIZE(unsorted_fres)),
	};
	static const struct sf_func late[] = {
		FUNC(0x100, 0x10, 0, late_fre, ARRAY_SIZE(late_fre)),
	};
	struct sf_test *t = sf_setup(test);
	unsigned int v;

	for (v = 1; v <= 3; v++) {
		KUNIT_ASSERT_EQ(test, sf_build(test, t, v, SF_SORTED, unsorted, 2),
				0);
		KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), -EINVAL);

		KUNIT_ASSERT_EQ(test, sf_build(test, t, v, SF_SORTED, overlap, 2),
				0);
		KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), -EINVAL);

		KUNIT_ASSERT_EQ(test, sf_build(test, t, v, SF_SORTED, zero, 2), 0);
		KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), -EINVAL);
		/* An empty function covers nothing. */
		sf_expect_ret(test, t, t->text + 0x100, -ENOENT);
		SF_SP(test, t, 0x120, 8, 0);

		KUNIT_ASSERT_EQ(test, sf_build(test, t, v, SF_SORTED, rows, 1), 0);
		KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), -EINVAL);
		/* The lookup sees the step back too. */
		sf_expect_ret(test, t, t->text + 0x10c, -EINVAL);

		KUNIT_ASSERT_EQ(test, sf_build(test, t, v, SF_SORTED, late, 1), 0);
		KUNIT_EXPECT_EQ(test, sframe_validate(&t->sec), -EINVAL);
	}
}

/* Look up @ip in a corrupted section; @valid is what validation said. */
static void sf_corrupt_lookup(struct kunit *test, struct sf_test *t, u32 off,
			      int valid, unsigned int i, u8 val)
{
	struct unwind_user_frame f;
	int ret = sframe_find(&t->sec, t->text + off, &f);

	KUNIT_EXPECT_TRUE_MSG(test, ret == 0 || ret == SFRAME_OUTERMOST ||
			      ret == -ENOENT || ret == -EINVAL ||
			      ret == -EOPNOTSUPP,
			      "V%u byte %u = %#x: %d", t->version, i, val, ret);
	if (!valid)
		KUNIT_EXPECT_NE_MSG(test, ret, -EINVAL, "V%u byte %u = %#x",
				    t->version, i, val);
}

/*
 * Corrupt every byte of a valid section in a few ways: the reader must only
 * ever answer with one of its documented codes, and a section it validated
 * must never turn out malformed at lookup.
 */
static void sf_corrupt_every_byte(struct kunit *test)
{
	static const u8 vals[] = { 0x00, 0xff, 0x80, 0x7f, 0x01 };
	static const u32 ips[] = {
		0x0, 0xff, 0x100, 0x104, 0x130, 0x185, 0x20b, 0x225, 0x240,
	};
	struct sf_test *t = sf_setup(test);
	unsigned int v, i, j, k;

	for (v = 1; v <= 3; v++) {
		u8 flags = SF_SORTED | (v > 1 ? SF_PCREL : 0);
		size_t len;

		KUNIT_ASSERT_EQ(test, sf_build(test, t, v, flags, basic_funcs,
					       ARRAY_SIZE(basic_funcs)), 0);
		len = t->len;
		for (i = 0; i < len; i++) {
			u8 orig = t->buf[i];

			for (j = 0; j < ARRAY_SIZE(vals); j++) {
				int valid;

				if (vals[j] == orig)
					continue;
				t->buf[i] = vals[j];
				if (sf_upload(test, t))
					continue;
				valid = sframe_validate(&t->sec);
				KUNIT_EXPECT_TRUE(test, !valid || valid == -EINVAL);
				for (k = 0; k < ARRAY_SIZE(ips); k++)
					sf_corrupt_lookup(test, t, ips[k], valid,
							  i, vals[j]);
			}
			t->buf[i] = orig;
		}
	}
}

#ifndef SFRAME_USER_SHIM	/* the store is kernel code: not in the user-space run */
/* Load @data as the section of a table with header @h: 0 or -errno. */
static int sf_table_load(const struct sframe_table_hdr *h, const void *data)
{
	struct sframe_table *t = sframe_table_alloc(h);

	if (IS_ERR(t))
		return PTR_ERR(t);
	memcpy(t->data, data, h->sframe_size);
	return sframe_table_add(t);
}

/* The same rule from a loaded table as from the section in user memory. */
static void sf_expect_same(struct kunit *test, const struct sframe_section *tab,
			   struct sf_test *t, unsigned long ip)
{
	struct unwind_user_frame a = { }, b = { };

	KUNIT_EXPECT_EQ(test, sframe_find(tab, ip, &a), sframe_find(&t->sec, ip, &b));
	KUNIT_EXPECT_EQ(test, a.cfa_off, b.cfa_off);
	KUNIT_EXPECT_EQ(test, a.ra_off, b.ra_off);
	KUNIT_EXPECT_EQ(test, a.fp_off, b.fp_off);
	KUNIT_EXPECT_EQ(test, a.use_fp, b.use_fp);
}

/*
 * Tables loaded for a build-id (sframe_store.c): load, look up, read through
 * the same reader from kernel memory, refuse what is bad with the right
 * errno, and remove without freeing a table still in use.
 */
static void sf_table_store(struct kunit *test)
{
	static const u8 other[] = { 0x5f, 0x4b, 0x55, 0x4e, 0x49, 0x54, 0x00 };
	struct sf_test *t = sf_setup(test);
	struct sframe_table_hdr h = {
		.magic = SFRAME_TABLE_MAGIC, .version = SFRAME_TABLE_VERSION,
		.build_id_len = 6, .build_id = { 0x5f, 0x4b, 0x55, 0x4e, 0x49, 0x54 },
	}, bad;
	struct sframe_section tab;
	struct sframe_table *tb;
	u8 *corrupt;

	KUNIT_ASSERT_EQ(test, sf_build(test, t, 2, SF_SORTED, basic_funcs,
				       ARRAY_SIZE(basic_funcs)), 0);
	h.sframe_size = t->len;
	h.sframe_vaddr = t->base;	/* the file "at" load bias 0 */
	h.text_vaddr = t->text;
	h.text_size = SF_TEXT_SIZE;

	/* Refused, changing nothing. */
	bad = h;
	bad.version = 2;
	KUNIT_EXPECT_EQ(test, sf_table_load(&bad, t->buf), -EINVAL);
	bad = h;
	bad.build_id_len = SFRAME_TABLE_BUILD_ID_MAX + 1;
	KUNIT_EXPECT_EQ(test, sf_table_load(&bad, t->buf), -EINVAL);
	bad = h;
	bad.sframe_size = 17 << 20;
	KUNIT_EXPECT_EQ(test, sf_table_load(&bad, t->buf), -E2BIG);
	corrupt = kunit_kmalloc(test, t->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, corrupt);
	memcpy(corrupt, t->buf, t->len);
	corrupt[0] ^= 0xff;
	KUNIT_EXPECT_EQ(test, sf_table_load(&h, corrupt), -EINVAL);
	memcpy(corrupt, t->buf, t->len);
	sf_poke32(t, t->fde0 + 4, 0x7fffffff);	/* a function past the text */
	KUNIT_EXPECT_EQ(test, sf_table_load(&h, t->buf), -EINVAL);
	memcpy(t->buf, corrupt, t->len);
	KUNIT_EXPECT_NULL(test, sframe_table_get(h.build_id, h.build_id_len));

	/* Loaded once, found by its build-id only. */
	KUNIT_ASSERT_EQ(test, sf_table_load(&h, t->buf), 0);
	KUNIT_EXPECT_EQ(test, sf_table_load(&h, t->buf), -EEXIST);
	KUNIT_EXPECT_NULL(test, sframe_table_get(other, sizeof(other)));
	KUNIT_EXPECT_NULL(test, sframe_table_get(h.build_id, h.build_id_len - 1));
	tb = sframe_table_get(h.build_id, h.build_id_len);
	KUNIT_ASSERT_NOT_NULL(test, tb);

	/* Removed while held: gone from the store, still readable. */
	KUNIT_EXPECT_EQ(test, sframe_table_remove(h.build_id, h.build_id_len), 0);
	KUNIT_EXPECT_EQ(test, sframe_table_remove(h.build_id, h.build_id_len), -ENOENT);
	KUNIT_EXPECT_NULL(test, sframe_table_get(h.build_id, h.build_id_len));
	sframe_table_section(tb, 0, &tab);
	KUNIT_ASSERT_EQ(test, sframe_init(&tab), 0);
	KUNIT_EXPECT_EQ(test, sframe_validate(&tab), 0);
	sf_expect_same(test, &tab, t, t->text + 0x100);
	sf_expect_same(test, &tab, t, t->text + 0x104);
	sf_expect_same(test, &tab, t, t->text + 0x185);
	sf_expect_same(test, &tab, t, t->text + 0x20b);
	sf_expect_same(test, &tab, t, t->text + 0x140);
	sframe_table_put(tb);
}
#endif

static struct kunit_case sframe_test_cases[] = {
	KUNIT_CASE(sf_v1),
	KUNIT_CASE(sf_v2),
	KUNIT_CASE(sf_v2_pcrel),
	KUNIT_CASE(sf_v3),
	KUNIT_CASE(sf_v3_secrel),
	KUNIT_CASE(sf_budget),
	KUNIT_CASE(sf_gap_cached),
	KUNIT_CASE(sf_rows_cap),
	KUNIT_CASE(sf_widths),
	KUNIT_CASE(sf_v1_pcmask),
	KUNIT_CASE(sf_outermost),
	KUNIT_CASE(sf_v3_flex),
	KUNIT_CASE(sf_v3_flex_malformed),
	KUNIT_CASE(sf_v3_unsupported),
	KUNIT_CASE(sf_bad_header),
	KUNIT_CASE(sf_truncated),
	KUNIT_CASE(sf_unmapped),
	KUNIT_CASE(sf_bad_fde),
	KUNIT_CASE(sf_bad_fre),
	KUNIT_CASE(sf_bad_layout),
	KUNIT_CASE(sf_corrupt_every_byte),
#ifndef SFRAME_USER_SHIM
	KUNIT_CASE(sf_table_store),
#endif
	{}
};

static struct kunit_suite sframe_test_suite = {
	.name = "sframe",
	.test_cases = sframe_test_cases,
};

kunit_test_suite(sframe_test_suite);

MODULE_DESCRIPTION("KUnit tests for the SFrame reader");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
