// SPDX-License-Identifier: GPL-2.0
/*
 * A small SFrame writer: version 2 for x86-64, function starts relative to
 * the section (flag SFRAME_F_FDE_FUNC_START_PCREL not set), FDEs sorted.
 *
 * Layout written (binutils "The SFrame Format", little endian, unaligned):
 *   header (28 bytes): u16 magic 0xdee2, u8 version 2, u8 flags (1: sorted),
 *     u8 ABI (3: AMD64 little endian), s8 fixed FP offset (0: none), s8
 *     fixed RA offset (-8), u8 aux header length (0), u32 number of FDEs,
 *     u32 number of FREs, u32 FRE bytes, u32 FDE offset (0), u32 FRE offset;
 *     both offsets count from the end of the header;
 *   FDE (20 bytes): s32 function start (from the start of the section),
 *     u32 size, u32 offset of its first FRE in the FRE bytes, u32 number of
 *     FREs, u8 info (bits 0-3: FRE start size 1, 2 or 4 bytes as 0, 1, 2;
 *     bit 4: PCMASK), u8 repetition size (PCMASK), u16 padding;
 *   FRE: start offset (1, 2 or 4 bytes), u8 info (bit 0: CFA from rsp,
 *     else rbp; bits 1-4: number of offsets; bits 5-6: offset size 1, 2 or
 *     4 bytes as 0, 1, 2), then the offsets: the CFA's, and where rbp is
 *     saved when it is. The return address is always at the header's
 *     fixed offset, CFA - 8. An FRE with no offsets says the return
 *     address is undefined: the outermost frame (the V2 errata form).
 */
#include <stdlib.h>
#include <string.h>

#include "eh2sframe.h"

#define SFRAME_MAGIC			0xdee2
#define SFRAME_VERSION_2		2
#define SFRAME_F_FDE_SORTED		0x1
#define SFRAME_ABI_AMD64_ENDIAN_LITTLE	3
#define SFRAME_AMD64_RA_OFFSET		(-8)
#define SFRAME_HDR_SIZE			28
#define SFRAME_V2_FDE_SIZE		20

#define SFRAME_FRE_TYPE_ADDR1		0
#define SFRAME_FRE_TYPE_ADDR2		1
#define SFRAME_FRE_TYPE_ADDR4		2
#define SFRAME_FDE_PCMASK		0x10

#define SFRAME_FRE_BASE_SP		0x1
#define SFRAME_FRE_OFFSET_1B		0
#define SFRAME_FRE_OFFSET_2B		1
#define SFRAME_FRE_OFFSET_4B		2

struct sfw_fde {
	uint64_t	start;
	uint32_t	size;
	unsigned int	rep;
	size_t		first_fre;
	size_t		nfres;
};

struct sfw_fre {
	uint32_t	off;
	struct sfw_rule	rule;
};

struct sfw {
	struct sfw_fde	*fdes;
	size_t		nfdes;
	size_t		fdes_cap;
	struct sfw_fre	*fres;
	size_t		nfres;
	size_t		fres_cap;
	bool		open;
};

struct sfw *sfw_new(void)
{
	return calloc(1, sizeof(struct sfw));
}

void sfw_free(struct sfw *w)
{
	if (!w)
		return;
	free(w->fdes);
	free(w->fres);
	free(w);
}

size_t sfw_nfdes(const struct sfw *w)
{
	return w->nfdes;
}

size_t sfw_nfres(const struct sfw *w)
{
	return w->nfres;
}

/* Make room for one more element of @size bytes in *@arr. */
static int grow(void **arr, size_t n, size_t *cap, size_t size)
{
	void *p;

	if (n < *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 256;
	p = realloc(*arr, *cap * size);
	if (!p)
		return -1;
	*arr = p;
	return 0;
}

int sfw_begin_fde(struct sfw *w, uint64_t start, unsigned int rep)
{
	struct sfw_fde *f;

	if (w->open || rep > 255 ||
	    grow((void **)&w->fdes, w->nfdes, &w->fdes_cap, sizeof(*f)))
		return -1;
	f = &w->fdes[w->nfdes];
	memset(f, 0, sizeof(*f));
	f->start = start;
	f->rep = rep;
	f->first_fre = w->nfres;
	w->open = true;
	return 0;
}

static bool same_rule(const struct sfw_rule *a, const struct sfw_rule *b)
{
	if (a->outermost || b->outermost)
		return a->outermost == b->outermost;
	return a->cfa_fp == b->cfa_fp && a->cfa_off == b->cfa_off &&
	       a->fp_off == b->fp_off;
}

/* A row that says what the one before it says is not written. */
int sfw_add_fre(struct sfw *w, uint32_t off, const struct sfw_rule *rule)
{
	struct sfw_fde *f;
	struct sfw_fre *last;

	if (!w->open)
		return -1;
	f = &w->fdes[w->nfdes];
	last = f->nfres ? &w->fres[w->nfres - 1] : NULL;
	if (last && off <= last->off)
		return -1;
	if (last && same_rule(&last->rule, rule))
		return 0;
	if (grow((void **)&w->fres, w->nfres, &w->fres_cap, sizeof(*last)))
		return -1;
	w->fres[w->nfres].off = off;
	w->fres[w->nfres].rule = *rule;
	w->nfres++;
	f->nfres++;
	return 0;
}

int sfw_end_fde(struct sfw *w, uint64_t end)
{
	struct sfw_fde *f;
	uint64_t limit;

	if (!w->open)
		return -1;
	f = &w->fdes[w->nfdes];
	if (end <= f->start || end - f->start > UINT32_MAX || !f->nfres)
		return -1;
	f->size = end - f->start;
	/* Every row must start inside the function, or the repeated block. */
	limit = f->rep ? f->rep : f->size;
	if (w->fres[w->nfres - 1].off >= limit)
		return -1;
	w->nfdes++;
	w->open = false;
	return 0;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct sfw_fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

static uint8_t *put(uint8_t *p, uint64_t v, unsigned int bytes)
{
	unsigned int i;

	for (i = 0; i < bytes; i++)
		*p++ = v >> (8 * i);
	return p;
}

static bool fits(int64_t v, unsigned int bytes)
{
	int64_t lim = (int64_t)1 << (8 * bytes - 1);

	return v >= -lim && v < lim;
}

/* Bytes, and their size code, of the FRE start offsets of @f. */
static unsigned int fre_addr_size(const struct sfw *w,
				  const struct sfw_fde *f, uint8_t *type)
{
	uint32_t max = w->fres[f->first_fre + f->nfres - 1].off;

	if (max <= 0xff) {
		*type = SFRAME_FRE_TYPE_ADDR1;
		return 1;
	}
	if (max <= 0xffff) {
		*type = SFRAME_FRE_TYPE_ADDR2;
		return 2;
	}
	*type = SFRAME_FRE_TYPE_ADDR4;
	return 4;
}

/* Bytes of each offset of @r, and their size code. */
static unsigned int fre_offset_size(const struct sfw_rule *r, uint8_t *code)
{
	if (fits(r->cfa_off, 1) && fits(r->fp_off, 1)) {
		*code = SFRAME_FRE_OFFSET_1B;
		return 1;
	}
	if (fits(r->cfa_off, 2) && fits(r->fp_off, 2)) {
		*code = SFRAME_FRE_OFFSET_2B;
		return 2;
	}
	*code = SFRAME_FRE_OFFSET_4B;
	return 4;
}

/* Encode one FRE at @p (NULL: only count its bytes); returns its size. */
static size_t encode_fre(uint8_t *p, const struct sfw_fre *fre,
			 unsigned int addr_size)
{
	const struct sfw_rule *r = &fre->rule;
	unsigned int count, size;
	uint8_t code = 0, info;

	if (r->outermost) {
		count = 0;
		size = 1;
		info = SFRAME_FRE_BASE_SP;
	} else {
		count = r->fp_off ? 2 : 1;
		size = fre_offset_size(r, &code);
		info = r->cfa_fp ? 0 : SFRAME_FRE_BASE_SP;
	}
	info |= count << 1 | code << 5;
	if (p) {
		p = put(p, fre->off, addr_size);
		*p++ = info;
		if (count)
			p = put(p, (uint32_t)r->cfa_off, size);
		if (count > 1)
			put(p, (uint32_t)r->fp_off, size);
	}
	return addr_size + 1 + count * size;
}

int sfw_write(struct sfw *w, uint64_t base, uint8_t **buf, size_t *len)
{
	size_t i, j, fre_bytes = 0, fdes_bytes, total;
	uint8_t *out, *p, *q, type;
	unsigned int asz;

	if (w->open)
		return -1;
	qsort(w->fdes, w->nfdes, sizeof(*w->fdes), cmp_fde);
	for (i = 0; i < w->nfdes; i++) {
		const struct sfw_fde *f = &w->fdes[i];
		int64_t rel = f->start - base;

		/* Signed: a section in the file lies above its code. */
		if (!fits(rel, 4))
			return -1;
		if (i && f->start < w->fdes[i - 1].start + w->fdes[i - 1].size)
			return -1;
		asz = fre_addr_size(w, f, &type);
		for (j = 0; j < f->nfres; j++)
			fre_bytes += encode_fre(NULL, &w->fres[f->first_fre + j],
						asz);
	}
	fdes_bytes = w->nfdes * SFRAME_V2_FDE_SIZE;
	if (w->nfdes > UINT32_MAX || w->nfres > UINT32_MAX ||
	    fre_bytes > UINT32_MAX || fdes_bytes > UINT32_MAX)
		return -1;
	total = SFRAME_HDR_SIZE + fdes_bytes + fre_bytes;
	out = calloc(1, total);
	if (!out)
		return -1;

	p = put(out, SFRAME_MAGIC, 2);
	*p++ = SFRAME_VERSION_2;
	*p++ = SFRAME_F_FDE_SORTED;
	*p++ = SFRAME_ABI_AMD64_ENDIAN_LITTLE;
	*p++ = 0;
	*p++ = (uint8_t)SFRAME_AMD64_RA_OFFSET;
	*p++ = 0;
	p = put(p, w->nfdes, 4);
	p = put(p, w->nfres, 4);
	p = put(p, fre_bytes, 4);
	p = put(p, 0, 4);
	put(p, fdes_bytes, 4);

	p = out + SFRAME_HDR_SIZE;		/* FDEs */
	q = p + fdes_bytes;			/* FREs */
	for (i = 0; i < w->nfdes; i++) {
		const struct sfw_fde *f = &w->fdes[i];

		asz = fre_addr_size(w, f, &type);
		p = put(p, (uint32_t)(f->start - base), 4);
		p = put(p, f->size, 4);
		p = put(p, q - (out + SFRAME_HDR_SIZE + fdes_bytes), 4);
		p = put(p, f->nfres, 4);
		*p++ = type | (f->rep ? SFRAME_FDE_PCMASK : 0);
		*p++ = f->rep;
		p = put(p, 0, 2);
		for (j = 0; j < f->nfres; j++)
			q += encode_fre(q, &w->fres[f->first_fre + j], asz);
	}
	*buf = out;
	*len = total;
	return 0;
}
