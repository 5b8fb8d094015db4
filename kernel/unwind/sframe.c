// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame reader for user-space stacks (x86-64).
 *
 * A .sframe section (GNU as --gsframe, binutils "The SFrame Format") tells,
 * for each function (FDE) and each range of instructions in it (FRE), where
 * the canonical frame address (CFA) is relative to SP or FP, and where the
 * caller's return address (RA) and frame pointer (FP) were saved relative to
 * the CFA. Everything is little endian on x86-64, and nothing is aligned.
 *
 * The section is untrusted user memory. Every read goes through sframe_get(),
 * which checks it against the section (or the FRE sub-section) first and
 * charges it to the caller's budget of reads, if it gave one; every loop is
 * bounded by a count that sframe_init() checked against the section size;
 * and no input leads to a WARN. A malformed section gives -EINVAL, and the
 * caller drops it.
 *
 * Layout, by version (offsets in bytes):
 *
 * Header, all versions (28 bytes, then sfh_auxhdr_len bytes of aux header):
 *   0 u16 magic 0xdee2, 2 u8 version, 3 u8 flags, 4 u8 ABI (3: AMD64 LE),
 *   5 s8 fixed FP offset (0: none), 6 s8 fixed RA offset (-8 on AMD64),
 *   7 u8 aux header length, 8 u32 number of FDEs, 12 u32 number of FREs,
 *   16 u32 length of the FRE sub-section, 20 u32 FDE sub-section offset,
 *   24 u32 FRE sub-section offset; both offsets count from the end of the
 *   header including the aux header.
 *   Flags: 0x1 FDEs sorted by address (required here), 0x2 frame pointers
 *   kept (V1/V2 only), 0x4 function start is PC-relative (V2 from 2.45,
 *   and V3).
 *
 * V1 FDE (17 bytes, binutils 2.40):
 *   0 s32 function start, 4 u32 function size, 8 u32 offset of its first FRE
 *   in the FRE sub-section, 12 u32 number of FREs, 16 u8 info.
 *   The function start counts from the start of the section. There is no
 *   repetition size: a PCMASK FDE on AMD64 describes 16-byte PLT entries.
 *
 * V2 FDE (20 bytes, binutils 2.41-2.45):
 *   V1's 17 bytes, then 17 u8 repetition size (PCMASK), 18 u16 padding.
 *   With flag 0x4 the function start counts from the FDE's own start field,
 *   otherwise from the start of the section.
 *
 * V3 (binutils 2.46): a 16-byte index entry per function,
 *   0 s64 function start, 8 u32 function size, 12 u32 offset of the
 *   function's data in the FRE sub-section,
 *   and at that offset 5 bytes of attributes, followed by the FREs:
 *   0 u16 number of FREs, 2 u8 info, 3 u8 info2, 4 u8 repetition size.
 *   The function start is PC-relative (flag 0x4, always set by gas) or
 *   section-relative, as in V2.
 *
 * FDE info byte: bits 0-3 FRE type (start address of 1, 2 or 4 bytes),
 *   bit 4 PC type (0: PCINC, rows start at function offsets; 1: PCMASK, rows
 *   start at offsets into a repeated block of rep-size bytes), bit 5 aarch64
 *   pauth key, bit 7 (V3 only) signal frame.
 * V3 info2 byte: bits 0-4 FDE type: 0 default, 1 flexible.
 *
 * FRE: u8/u16/u32 start offset, u8 info, then N data words of S bytes each.
 *   info: bit 0 CFA base (1: SP, 0: FP), bits 1-4 N, bits 5-6 S (0: 1 byte,
 *   1: 2 bytes, 2: 4 bytes), bit 7 mangled RA (aarch64 only).
 *   Default FDE on AMD64: word 0 is the CFA offset from the base register;
 *   word 1, if present, the saved FP's offset from the CFA. The RA is
 *   always at the header's fixed offset, so no word carries it.
 *   An FRE with no data words (V2 errata, V3) marks an undefined RA: the
 *   outermost frame.
 *   Flexible FDE (V3): pairs of (control word, offset) in the order CFA, RA,
 *   FP; an RA that is not tracked but followed by an FP takes one zero
 *   padding word instead of a pair. Control word: bit 0 reg_p (base is the
 *   DWARF register in bits 3 and up, else the CFA), bit 1 deref_p, bit 2
 *   reserved. Only the rules the walker's frame description can express are
 *   accepted: CFA = RSP or RBP + offset, RA and FP = *(CFA + offset). Other
 *   rules give -EOPNOTSUPP (the section is fine, this frame is not ours).
 */

#ifndef SFRAME_USER_SHIM
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <kunit/visibility.h>
#endif

#include "sframe.h"

#define SFRAME_MAGIC			0xdee2
#define SFRAME_HDR_SIZE			28
#define SFRAME_ABI_AMD64_ENDIAN_LITTLE	3

#define SFRAME_F_FDE_SORTED		0x1
#define SFRAME_F_FRAME_POINTER		0x2
#define SFRAME_F_FDE_FUNC_START_PCREL	0x4

#define SFRAME_V1_FDE_SIZE		17
#define SFRAME_V2_FDE_SIZE		20
#define SFRAME_V3_FDE_SIZE		16
#define SFRAME_V3_ATTR_SIZE		5
#define SFRAME_FDE_MAX_SIZE		SFRAME_V2_FDE_SIZE

/* V1 has no repetition size; the only PCMASK user on AMD64 is the PLT. */
#define SFRAME_V1_AMD64_PLT_SIZE	16

/*
 * Rows of one function that a lookup scans at most, so that one frame costs
 * little whatever the section says. Real code stays far below: the largest
 * function in the .eh_frame of 2,900 binaries and libraries of Debian 12 has
 * 6,678 rows (in GCC's cc1). A function with more rows is not malformed,
 * only not walked through: its lookups give -EOPNOTSUPP.
 */
#define SFRAME_MAX_FDE_FRES		16384

#define SFRAME_FDE_INFO_FRE_TYPE(i)	((i) & 0xf)
#define SFRAME_FDE_INFO_PCMASK(i)	(((i) >> 4) & 0x1)
#define SFRAME_FDE_INFO_SIGNAL(i)	(((i) >> 7) & 0x1)
#define SFRAME_FDE_INFO2_TYPE(i)	((i) & 0x1f)

#define SFRAME_FDE_TYPE_DEFAULT		0
#define SFRAME_FDE_TYPE_FLEX		1

#define SFRAME_FRE_INFO_BASE_SP(i)	((i) & 0x1)
#define SFRAME_FRE_INFO_COUNT(i)	(((i) >> 1) & 0xf)
#define SFRAME_FRE_INFO_SIZE(i)		(((i) >> 5) & 0x3)
#define SFRAME_FRE_INFO_MANGLED_RA(i)	(((i) >> 7) & 0x1)

/* Data word sizes are 1 << code; code 3 is undefined. */
#define SFRAME_FRE_SIZE_CODE_MAX	2
/* Flexible FREs use at most three (control, offset) pairs. */
#define SFRAME_FRE_MAX_WORDS		6

#define SFRAME_CTRL_REG_P(c)		((c) & 0x1)
#define SFRAME_CTRL_REGNUM(c)		((c) >> 3)
/* reg_p = 0, deref_p = 1, regnum = 0: the value is saved at CFA + offset. */
#define SFRAME_CTRL_CFA_SLOT		0x2

#define SFRAME_DWARF_RBP		6
#define SFRAME_DWARF_RSP		7

/* One FRE's fixed part, and where its data words are. */
struct sframe_fre {
	u32		start;
	u8		info;
	unsigned long	data_pos;	/* section offset of its data words */
	unsigned int	data_len;
};

static u16 sframe_le16(const u8 *p)
{
	return p[0] | (u16)p[1] << 8;
}

static u32 sframe_le32(const u8 *p)
{
	return p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

static u64 sframe_le64(const u8 *p)
{
	return sframe_le32(p) | (u64)sframe_le32(p + 4) << 32;
}

/*
 * One read of the section, charged to the budget the caller may have set
 * in @sec->reads_left: it fails with -EAGAIN, reading nothing, once that is
 * spent. The budget is what bounds a whole walk, whose lookups each stay
 * within their own bounds but may number hundreds.
 */
static int sframe_read(const struct sframe_section *sec, unsigned long off,
		       void *buf, size_t len)
{
	if (sec->reads_left) {
		if (!*sec->reads_left)
			return -EAGAIN;
		(*sec->reads_left)--;
	}
	return sframe_access(sec, off, buf, len);
}

/*
 * Read @len bytes at section offset @off, which must lie below @limit (the
 * section size, or the end of the FRE sub-section). Reading past the limit
 * means the section is malformed, not that the memory is missing.
 */
static bool sframe_in_bounds(unsigned long off, unsigned long limit,
			     size_t len)
{
	return off <= limit && len <= limit - off;
}

static int sframe_get(const struct sframe_section *sec, unsigned long off,
		      unsigned long limit, void *buf, size_t len)
{
	if (!sframe_in_bounds(off, limit, len))
		return -EINVAL;
	return sframe_read(sec, off, buf, len);
}

/*
 * The FREs of a function, read in chunks: a first one of 64 bytes, which
 * holds the rows of most functions, then chunks of 256 bytes, so that a scan
 * of a long function costs one read per 256 bytes instead of one per row.
 * The first is small because a copy also costs by the byte, and most
 * lookups need no more. @len is 0 when nothing is buffered.
 */
#define SFRAME_FREBUF_FIRST	64
#define SFRAME_FREBUF_SIZE	256

struct sframe_frebuf {
	unsigned long	pos;
	unsigned int	len;
	bool		filled;		/* a chunk was read before */
	u8		data[SFRAME_FREBUF_SIZE];
};

/*
 * Buffer the section from @pos on, up to @limit. A failed read (a page of
 * the section unmapped meanwhile, maybe past the bytes wanted) leaves the
 * buffer empty, for an exact read to say what can be read; only a spent
 * budget is returned.
 */
static int sframe_frebuf_fill(const struct sframe_section *sec,
			      struct sframe_frebuf *fb, unsigned long pos,
			      unsigned long limit)
{
	int ret;

	fb->pos = pos;
	fb->len = fb->filled ? SFRAME_FREBUF_SIZE : SFRAME_FREBUF_FIRST;
	fb->filled = true;
	if (limit - pos < fb->len)
		fb->len = limit - pos;
	ret = sframe_read(sec, pos, fb->data, fb->len);
	if (ret)
		fb->len = 0;
	return ret == -EAGAIN ? ret : 0;
}

/*
 * sframe_get() through @fb: bytes it does not hold refill it from @off on,
 * so a scan reads each chunk of the rows once. @fb may be NULL: exact reads.
 */
static int sframe_get_fre(const struct sframe_section *sec,
			  struct sframe_frebuf *fb, unsigned long off,
			  unsigned long limit, void *buf, size_t len)
{
	int ret;

	if (!sframe_in_bounds(off, limit, len))
		return -EINVAL;
	if (fb && !(off >= fb->pos && len <= fb->len &&
		    off - fb->pos <= fb->len - len)) {
		ret = sframe_frebuf_fill(sec, fb, off, limit);
		if (ret)
			return ret;
	}
	if (!fb || len > fb->len)
		return sframe_read(sec, off, buf, len);
	memcpy(buf, fb->data + (off - fb->pos), len);
	return 0;
}

static unsigned long sframe_size(const struct sframe_section *sec)
{
	return sec->sframe_end - sec->sframe_start;
}

/**
 * sframe_init() - read and check the header of a section
 * @sec: section with its four addresses filled in
 *
 * Checks the magic, version, ABI and flags, and that the FDE and FRE
 * sub-sections lie inside the section, in that order, with counts that fit
 * them. Fills in the rest of @sec.
 *
 * Return: 0, -EINVAL if the section is not one this reader accepts, or
 * -EFAULT if it could not be read.
 */
int sframe_init(struct sframe_section *sec)
{
	u8 h[SFRAME_HDR_SIZE];
	u64 size, hdr_len, fdes, fdes_len, fres, fre_len, min_fre_len;
	u32 num_fdes, num_fres;
	u8 allowed;
	int ret;

	if (sec->sframe_end <= sec->sframe_start ||
	    sec->text_end <= sec->text_start)
		return -EINVAL;
	size = sframe_size(sec);

	ret = sframe_get(sec, 0, size, h, sizeof(h));
	if (ret)
		return ret;

	if (sframe_le16(h) != SFRAME_MAGIC)
		return -EINVAL;

	sec->version = h[2];
	sec->flags = h[3];
	switch (sec->version) {
	case 1:
		sec->fde_size = SFRAME_V1_FDE_SIZE;
		allowed = SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER;
		break;
	case 2:
		sec->fde_size = SFRAME_V2_FDE_SIZE;
		allowed = SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER |
			  SFRAME_F_FDE_FUNC_START_PCREL;
		break;
	case 3:
		sec->fde_size = SFRAME_V3_FDE_SIZE;
		allowed = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL;
		break;
	default:
		return -EINVAL;
	}
	/* An unknown flag may change the meaning of what follows. */
	if (sec->flags & ~allowed)
		return -EINVAL;
	/* The lookup is a binary search. */
	if (!(sec->flags & SFRAME_F_FDE_SORTED))
		return -EINVAL;

	if (h[4] != SFRAME_ABI_AMD64_ENDIAN_LITTLE)
		return -EINVAL;
	sec->fp_off = (s8)h[5];
	sec->ra_off = (s8)h[6];
	/* On AMD64 no row carries the RA: the header must say where it is. */
	if (!sec->ra_off)
		return -EINVAL;

	hdr_len = SFRAME_HDR_SIZE + (u64)h[7];
	num_fdes = sframe_le32(h + 8);
	num_fres = sframe_le32(h + 12);
	fre_len = sframe_le32(h + 16);
	fdes = hdr_len + sframe_le32(h + 20);
	fres = hdr_len + sframe_le32(h + 24);

	/* All in 64 bits, from 32-bit values: nothing here can overflow. */
	fdes_len = (u64)num_fdes * sec->fde_size;
	if (fdes > size || fdes_len > size - fdes)
		return -EINVAL;
	if (fres > size || fre_len > size - fres)
		return -EINVAL;
	/* The FDEs come first, and the FREs must not overlap them. */
	if (fres < fdes + fdes_len)
		return -EINVAL;
	/*
	 * Every FRE takes at least two bytes and every V3 function five bytes
	 * of attributes, so the counts cannot claim more than the FRE
	 * sub-section holds: this bounds every loop over them.
	 */
	min_fre_len = (u64)num_fres * 2;
	if (sec->version == 3)
		min_fre_len += (u64)num_fdes * SFRAME_V3_ATTR_SIZE;
	if (min_fre_len > fre_len)
		return -EINVAL;

	sec->num_fdes = num_fdes;
	sec->num_fres = num_fres;
	sec->fdes_off = fdes;
	sec->fres_off = fres;
	sec->fres_end = fres + fre_len;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_init);

/*
 * Read FDE number @i into the common shape. This is the only place that
 * knows how the versions differ. With @attrs false only func_start is
 * needed (binary search), which spares V3 the read of the attributes.
 */
static int sframe_read_fde(const struct sframe_section *sec, u32 i,
			   struct sframe_fde *fde, bool attrs)
{
	unsigned long off, base, fre_rel;
	u8 b[SFRAME_FDE_MAX_SIZE], a[SFRAME_V3_ATTR_SIZE];
	u8 info, info2 = 0, rep = 0, fre_type;
	u32 num;
	s64 start;
	int ret;

	if (i >= sec->num_fdes)
		return -EINVAL;
	off = sec->fdes_off + (unsigned long)i * sec->fde_size;
	ret = sframe_get(sec, off, sframe_size(sec), b, sec->fde_size);
	if (ret)
		return ret;

	if (sec->version == 3)
		start = (s64)sframe_le64(b);
	else
		start = (s32)sframe_le32(b);
	/* PC-relative starts count from the start field, which opens the FDE. */
	base = sec->sframe_start;
	if (sec->flags & SFRAME_F_FDE_FUNC_START_PCREL)
		base += off;
	/* Unsigned wrap is harmless: the result is checked against the text. */
	fde->func_start = base + (unsigned long)start;
	if (!attrs)
		return 0;

	if (sec->version == 3) {
		fde->func_size = sframe_le32(b + 8);
		fre_rel = sframe_le32(b + 12);
		if (fre_rel > sec->fres_end - sec->fres_off)
			return -EINVAL;
		ret = sframe_get(sec, sec->fres_off + fre_rel, sec->fres_end,
				 a, sizeof(a));
		if (ret)
			return ret;
		num = sframe_le16(a);
		info = a[2];
		info2 = a[3];
		rep = a[4];
		fre_rel += SFRAME_V3_ATTR_SIZE;
	} else {
		fde->func_size = sframe_le32(b + 4);
		fre_rel = sframe_le32(b + 8);
		num = sframe_le32(b + 12);
		info = b[16];
		if (sec->version == 2)
			rep = b[17];
	}

	if (fre_rel > sec->fres_end - sec->fres_off)
		return -EINVAL;
	fde->fres_pos = sec->fres_off + fre_rel;

	if (num > sec->num_fres)
		return -EINVAL;
	fde->num_fres = num;

	fre_type = SFRAME_FDE_INFO_FRE_TYPE(info);
	if (fre_type > 2)
		return -EINVAL;
	fde->addr_size = 1 << fre_type;

	fde->pcmask = SFRAME_FDE_INFO_PCMASK(info);
	if (fde->pcmask && sec->version == 1)
		rep = SFRAME_V1_AMD64_PLT_SIZE;
	/* A mask lookup divides by the block size. */
	if (fde->pcmask && !rep)
		return -EINVAL;
	fde->rep_size = fde->pcmask ? rep : 0;

	fde->signal = sec->version == 3 && SFRAME_FDE_INFO_SIGNAL(info);
	fde->type = SFRAME_FDE_INFO2_TYPE(info2);
	return 0;
}

/* The function must lie wholly inside the text the section describes. */
static int sframe_check_fde_range(const struct sframe_section *sec,
				  const struct sframe_fde *fde)
{
	if (fde->func_start < sec->text_start ||
	    fde->func_start >= sec->text_end ||
	    fde->func_size > sec->text_end - fde->func_start)
		return -EINVAL;
	return 0;
}

/*
 * Read the fixed part of the FRE at section offset @pos. On success @pos
 * moves past the whole FRE, data words included.
 */
static int sframe_read_fre(const struct sframe_section *sec,
			   struct sframe_frebuf *fb,
			   const struct sframe_fde *fde, unsigned long *pos,
			   struct sframe_fre *fre)
{
	u8 b[5];
	unsigned int size_code;
	int ret;

	ret = sframe_get_fre(sec, fb, *pos, sec->fres_end, b,
			     fde->addr_size + 1);
	if (ret)
		return ret;

	switch (fde->addr_size) {
	case 1:
		fre->start = b[0];
		break;
	case 2:
		fre->start = sframe_le16(b);
		break;
	default:
		fre->start = sframe_le32(b);
		break;
	}
	fre->info = b[fde->addr_size];

	size_code = SFRAME_FRE_INFO_SIZE(fre->info);
	if (size_code > SFRAME_FRE_SIZE_CODE_MAX)
		return -EINVAL;
	fre->data_pos = *pos + fde->addr_size + 1;
	fre->data_len = SFRAME_FRE_INFO_COUNT(fre->info) << size_code;
	if (fre->data_len > sec->fres_end - fre->data_pos)
		return -EINVAL;
	*pos = fre->data_pos + fre->data_len;
	return 0;
}

/*
 * Find the row covering offset @ip_off into the function: the last FRE whose
 * start is at or below it. The scan is bounded by the FDE's FRE count, which
 * sframe_read_fde() bounded by the section.
 */
static int sframe_find_fre(const struct sframe_section *sec,
			   struct sframe_frebuf *fb,
			   const struct sframe_fde *fde, u32 ip_off,
			   struct sframe_fre *found)
{
	unsigned long pos = fde->fres_pos;
	struct sframe_fre fre;
	bool have = false;
	u32 i, prev = 0;
	int ret;

	if (fde->pcmask)
		ip_off %= fde->rep_size;

	for (i = 0; i < fde->num_fres; i++) {
		ret = sframe_read_fre(sec, fb, fde, &pos, &fre);
		if (ret)
			return ret;
		/* Rows are sorted; a step back means the data is corrupt. */
		if (i && fre.start < prev)
			return -EINVAL;
		if (fre.start > ip_off)
			break;
		*found = fre;
		have = true;
		prev = fre.start;
	}
	return have ? 0 : -ENOENT;
}

/*
 * A (control, offset) pair for the RA or FP of a flexible FRE. Only "saved
 * at CFA + offset" fits struct unwind_user_frame.
 */
static int sframe_flex_saved(u32 ctrl, s32 off, s32 *out)
{
	/* A zero control word is padding, never the start of a pair. */
	if (!ctrl)
		return -EINVAL;
	if (ctrl != SFRAME_CTRL_CFA_SLOT)
		return -EOPNOTSUPP;
	*out = off;
	return 0;
}

static int sframe_decode_flex(const struct sframe_section *sec,
			      unsigned int count, const u32 *raw,
			      const s32 *word, struct unwind_user_frame *frame)
{
	unsigned int fp_idx = 0;
	int ret;

	/*
	 * CFA pair; then an RA pair or, when only an FP follows, one padding
	 * word; then an FP pair. Nothing else is a valid shape.
	 */
	switch (count) {
	case 2:
		break;
	case 4:
		break;
	case 5:
		if (raw[2])
			return -EINVAL;
		fp_idx = 3;
		break;
	case 6:
		fp_idx = 4;
		break;
	default:
		return -EINVAL;
	}

	/* The CFA cannot be described relative to itself. */
	if (!SFRAME_CTRL_REG_P(raw[0]))
		return -EINVAL;
	if (raw[0] == (SFRAME_DWARF_RSP << 3 | 1))
		frame->use_fp = false;
	else if (raw[0] == (SFRAME_DWARF_RBP << 3 | 1))
		frame->use_fp = true;
	else
		return -EOPNOTSUPP;	/* another register, or dereferenced */
	frame->cfa_off = word[1];

	frame->ra_off = sec->ra_off;
	if (count == 4 || count == 6) {
		ret = sframe_flex_saved(raw[2], word[3], &frame->ra_off);
		if (ret)
			return ret;
	}

	frame->fp_off = 0;
	if (fp_idx) {
		ret = sframe_flex_saved(raw[fp_idx], word[fp_idx + 1],
					&frame->fp_off);
		if (ret)
			return ret;
		if (!frame->fp_off)
			return -EINVAL;
	}
	return 0;
}

/* Turn the FRE @fre of @fde into the walker's frame description. */
static int sframe_decode_fre(const struct sframe_section *sec,
			     struct sframe_frebuf *fb,
			     const struct sframe_fde *fde,
			     const struct sframe_fre *fre,
			     struct unwind_user_frame *frame)
{
	unsigned int count = SFRAME_FRE_INFO_COUNT(fre->info);
	unsigned int wsize = 1 << SFRAME_FRE_INFO_SIZE(fre->info);
	u8 b[SFRAME_FRE_MAX_WORDS * 4];
	u32 raw[SFRAME_FRE_MAX_WORDS];
	s32 word[SFRAME_FRE_MAX_WORDS];
	unsigned int i;
	int ret;

	/* Pointer authentication does not exist on x86-64. */
	if (SFRAME_FRE_INFO_MANGLED_RA(fre->info))
		return -EINVAL;

	if (!count) {
		/* Undefined RA: added by the V2 errata, used by V3. */
		if (sec->version == 1)
			return -EINVAL;
		return SFRAME_OUTERMOST;
	}
	if (count > SFRAME_FRE_MAX_WORDS)
		return -EINVAL;

	ret = sframe_get_fre(sec, fb, fre->data_pos, sec->fres_end, b,
			     count * wsize);
	if (ret)
		return ret;
	for (i = 0; i < count; i++) {
		const u8 *p = b + i * wsize;

		/* Control words are unsigned, offsets signed. */
		switch (wsize) {
		case 1:
			raw[i] = p[0];
			word[i] = (s8)p[0];
			break;
		case 2:
			raw[i] = sframe_le16(p);
			word[i] = (s16)raw[i];
			break;
		default:
			raw[i] = sframe_le32(p);
			word[i] = (s32)raw[i];
			break;
		}
	}

	switch (fde->type) {
	case SFRAME_FDE_TYPE_DEFAULT:
		break;
	case SFRAME_FDE_TYPE_FLEX:
		if (sec->version != 3)
			return -EINVAL;
		return sframe_decode_flex(sec, count, raw, word, frame);
	default:
		/* A future FDE type: not malformed, just not ours. */
		return -EOPNOTSUPP;
	}

	/* Default FDE on AMD64: CFA offset, then the saved FP if any. */
	if (count > 2)
		return -EINVAL;
	frame->use_fp = !SFRAME_FRE_INFO_BASE_SP(fre->info);
	frame->cfa_off = word[0];
	frame->ra_off = sec->ra_off;
	if (count == 2) {
		/* 0 would read as "not saved" to the walker. */
		if (!word[1])
			return -EINVAL;
		frame->fp_off = word[1];
	} else {
		frame->fp_off = sec->fp_off;
	}
	return 0;
}

/**
 * sframe_find() - describe the frame of the function that holds @ip
 * @sec: section set up by sframe_init()
 * @ip: user instruction address
 * @frame: filled in on success
 *
 * Binary search over the sorted FDEs, then a linear scan of the function's
 * FREs, of which there are at most %SFRAME_MAX_FDE_FRES. The work per call
 * is at most about log2(number of FDEs) FDE reads, and one read per chunk of
 * up to %SFRAME_FREBUF_SIZE bytes of the rows scanned. Each read is charged
 * to @sec->reads_left when that is set.
 *
 * Return:
 * * 0 - @frame describes the frame;
 * * %SFRAME_OUTERMOST - the section marks this as the outermost frame
 *   (undefined RA); @frame is not filled in;
 * * -ENOENT - the section does not cover @ip: try frame pointers;
 * * -EOPNOTSUPP - covered, but by a rule the walker's frame description
 *   cannot express (signal frames, flexible rules through other registers
 *   or dereferenced CFAs, future FDE types), or a function of more rows
 *   than a lookup scans; the section stays valid;
 * * -EINVAL - the section is malformed: drop it;
 * * -EFAULT - the section could not be read;
 * * -EAGAIN - the budget in @sec->reads_left is spent.
 */
int sframe_find(const struct sframe_section *sec, unsigned long ip,
		struct unwind_user_frame *frame)
{
	return sframe_find_cached(sec, NULL, ip, frame);
}
EXPORT_SYMBOL_IF_KUNIT(sframe_find);

/*
 * Last FDE starting at or below @ip, or -ENOENT; *@next is set to where the
 * code after @ip's gap starts (see below), for a caller that misses.
 */
static int sframe_search_fde(const struct sframe_section *sec,
			     unsigned long ip, struct sframe_fde *fde,
			     unsigned long *next)
{
	u32 lo = 0, hi = sec->num_fdes, mid;
	s64 found = -1;
	int ret;

	/*
	 * [lo, hi) halves every round whatever the data says, so this takes
	 * at most 33 rounds. The start of the function found at hi, the
	 * first one after @ip in a sorted section, ends the gap @ip may be
	 * in; *@next is 0 when no gap is known.
	 */
	*next = sec->text_end;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		ret = sframe_read_fde(sec, mid, fde, false);
		if (ret)
			return ret;
		if (fde->func_start <= ip) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid;
			*next = fde->func_start;
		}
	}
	if (found < 0)
		return -ENOENT;

	ret = sframe_read_fde(sec, found, fde, true);
	if (ret)
		return ret;
	/*
	 * A function outside the text is not this text's: not covered, not
	 * malformed (validation, which sees the whole section, refuses it).
	 */
	if (sframe_check_fde_range(sec, fde)) {
		*next = 0;
		return -ENOENT;
	}
	return 0;
}

/*
 * Keep [@start, @end) as code the section does not cover: no function of a
 * sorted section starts or ends in it. A section that is not sorted may
 * have one there that a search for another address would find; such a
 * section is malformed, and what a lookup answers for it only has to be
 * safe, not right.
 */
static void sframe_cache_gap(struct sframe_cache *cache, unsigned long start,
			     unsigned long end)
{
	if (!cache || end <= start)
		return;
	cache->gap_start = start;
	cache->gap_len = end - start;
}

/**
 * sframe_find_cached() - sframe_find(), helped by what earlier lookups learnt
 * @sec: section set up by sframe_init()
 * @cache: the caller's cache, zeroed before its first use, or NULL
 * @ip: user instruction address
 * @frame: filled in on success
 *
 * As sframe_find(). An address answered last time is answered again from
 * @cache, one inside the function found last time skips the search for
 * its FDE, and one in the gap between functions that the last search
 * found around its address is not covered without a search. A cache that
 * was filled for another section is emptied first.
 *
 * Return: as sframe_find().
 */
int sframe_find_cached(const struct sframe_section *sec,
		       struct sframe_cache *cache, unsigned long ip,
		       struct unwind_user_frame *frame)
{
	struct sframe_frebuf fb;
	struct sframe_fde fde;
	struct sframe_fre fre;
	int ret;

	if (ip < sec->text_start || ip >= sec->text_end)
		return -ENOENT;

	if (cache && cache->sframe_start != sec->sframe_start) {
		cache->have_fde = false;
		cache->have_ip = false;
		cache->gap_len = 0;
		cache->sframe_start = sec->sframe_start;
	}
	if (cache && cache->have_ip && cache->ip == ip) {
		if (!cache->ret)
			*frame = cache->frame;
		return cache->ret;
	}
	/* Code the section leaves out, as the last search found. */
	if (cache && ip - cache->gap_start < cache->gap_len)
		return -ENOENT;

	if (cache && cache->have_fde && ip >= cache->fde.func_start &&
	    ip - cache->fde.func_start < cache->fde.func_size) {
		fde = cache->fde;
	} else {
		unsigned long next;

		ret = sframe_search_fde(sec, ip, &fde, &next);
		if (ret == -ENOENT && next)
			/* Before the first function. */
			sframe_cache_gap(cache, sec->text_start, next);
		if (ret)
			return ret;
		/* Between functions: not covered. */
		if (ip - fde.func_start >= fde.func_size) {
			sframe_cache_gap(cache, fde.func_start + fde.func_size,
					 next);
			return -ENOENT;
		}
		if (cache) {
			cache->fde = fde;
			cache->have_fde = true;
		}
	}
	/* A signal frame's caller state is in the signal frame, not at CFA. */
	if (fde.signal)
		return -EOPNOTSUPP;
	if (fde.num_fres > SFRAME_MAX_FDE_FRES)
		return -EOPNOTSUPP;

	fb.len = 0;
	fb.filled = false;
	ret = sframe_find_fre(sec, &fb, &fde, ip - fde.func_start, &fre);
	if (ret)
		return ret;
	ret = sframe_decode_fre(sec, &fb, &fde, &fre, frame);
	if (cache && ret >= 0) {
		cache->ip = ip;
		cache->ret = ret;
		if (!ret)
			cache->frame = *frame;
		cache->have_ip = true;
	}
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_find_cached);

/* Check every FRE of @fde; count them into @total. */
static int sframe_validate_fres(const struct sframe_section *sec,
				const struct sframe_fde *fde, u64 *total)
{
	unsigned long pos = fde->fres_pos;
	struct unwind_user_frame frame;
	struct sframe_fre fre;
	u32 i, limit, prev = 0;
	int ret;

	*total += fde->num_fres;
	if (*total > sec->num_fres)
		return -EINVAL;

	/* Row starts index the function, or the repeated block for PCMASK. */
	limit = fde->pcmask ? fde->rep_size : fde->func_size;
	for (i = 0; i < fde->num_fres; i++) {
		ret = sframe_read_fre(sec, NULL, fde, &pos, &fre);
		if (ret)
			return ret;
		if (i && fre.start <= prev)
			return -EINVAL;
		if (fre.start >= limit)
			return -EINVAL;
		prev = fre.start;
		ret = sframe_decode_fre(sec, NULL, fde, &fre, &frame);
		if (ret < 0 && ret != -EOPNOTSUPP)
			return ret;
	}
	return 0;
}

/**
 * sframe_validate() - check a whole section
 * @sec: section set up by sframe_init()
 *
 * Checks that every FDE lies inside the section and its function inside the
 * text, with a non-zero size; that the functions are sorted and do not
 * overlap; that every FDE's FREs lie inside the FRE sub-section, start in
 * strictly increasing order inside the function (or the repeated block) and
 * decode. The work is linear in the section size. Meant for registration
 * time behind a debug option: sframe_find() does not need it to be safe.
 *
 * Return: 0, -EINVAL if the section is malformed, or -EFAULT if it could
 * not be read.
 */
int sframe_validate(const struct sframe_section *sec)
{
	struct sframe_fde fde;
	unsigned long prev_end = 0;
	u64 total = 0;
	u32 i;
	int ret;

	for (i = 0; i < sec->num_fdes; i++) {
		ret = sframe_read_fde(sec, i, &fde, true);
		if (ret)
			return ret;
		ret = sframe_check_fde_range(sec, &fde);
		if (ret)
			return ret;
		if (!fde.func_size)
			return -EINVAL;
		if (i && fde.func_start < prev_end)
			return -EINVAL;
		prev_end = fde.func_start + fde.func_size;

		ret = sframe_validate_fres(sec, &fde, &total);
		if (ret)
			return ret;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_validate);
