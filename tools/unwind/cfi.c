// SPDX-License-Identifier: GPL-2.0
/*
 * The call-frame information of an ELF file, row by row, through elfutils'
 * libdw: every FDE of .eh_frame (and of .debug_frame, for code .eh_frame
 * does not cover), each split into its rows, and each row classified by
 * what SFrame can say about it.
 *
 * libdw interprets the CFI: dwarf_next_cfi() lists the FDEs, and for each
 * address dwarf_cfi_addrframe() gives the row holding it, with its range
 * (dwarf_frame_info()), the CFA rule (dwarf_frame_cfa()) and the register
 * rules (dwarf_frame_register()). The only thing decoded here is where
 * each FDE starts and ends: libdw keeps that to itself, so the FDE's
 * encoded address and length are read as its CIE's augmentation says.
 *
 * A row SFrame can express (enum row_kind):
 *  - CFA = rsp + k or rbp + k, the return address saved at CFA - 8, rbp
 *    saved at CFA + k (k != 0) or not saved (same value, or undefined: the
 *    default for a register the CFI never mentions), rsp = CFA;
 *  - the return address undefined: the outermost frame, whatever the rest;
 *  - the PLT's CFA expression, rsp + k + (((rip & m) >= t) << s), which an
 *    SFrame PCMASK FDE repeats every m + 1 bytes.
 * Anything else is left out, with the first reason of enum reason that
 * applies.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eh2sframe.h"

/* PLT blocks are at most this long: SFrame's repetition size is a u8. */
#define PLT_BLOCK_MAX	128

const char *const reason_tag[R_NR] = {
	[R_SIGNAL]	= "signal",
	[R_RA_COLUMN]	= "ra-column",
	[R_RA_RULE]	= "ra-rule",
	[R_NO_CFA]	= "no-cfa",
	[R_CFA_REG]	= "cfa-reg",
	[R_CFA_EXPR]	= "cfa-expr",
	[R_PLT_BLOCK]	= "plt-block",
	[R_FP_RULE]	= "fp-rule",
	[R_SP_RULE]	= "sp-rule",
	[R_OFFSET]	= "offset",
	[R_EMPTY]	= "empty",
	[R_RANGE]	= "range",
	[R_OVERLAP]	= "overlap",
	[R_LIBDW]	= "libdw",
};

const char *const reason_text[R_NR] = {
	[R_SIGNAL]	= "signal frame",
	[R_RA_COLUMN]	= "return address column is not rip",
	[R_RA_RULE]	= "return address not at CFA-8",
	[R_NO_CFA]	= "no CFA rule",
	[R_CFA_REG]	= "CFA from a register other than rsp or rbp",
	[R_CFA_EXPR]	= "CFA by an expression other than the PLT's",
	[R_PLT_BLOCK]	= "PLT expression with a block SFrame cannot repeat",
	[R_FP_RULE]	= "rbp saved other than at CFA+k",
	[R_SP_RULE]	= "rsp is not the CFA",
	[R_OFFSET]	= "offset does not fit 32 bits",
	[R_EMPTY]	= "FDE of no address",
	[R_RANGE]	= "outside the executable segments",
	[R_OVERLAP]	= "overlaps an earlier FDE",
	[R_LIBDW]	= "libdw could not compute the row",
};

struct cfi_priv {
	Dwarf_CFI	*eh;	/* from dwarf_getcfi_elf(): freed with the file */
	Dwarf		*dw;	/* for .debug_frame */
};

/*
 * A section by name: 1 with its header and data, 0 when there is none (or
 * it has no bytes in the file), -1 after printing why it cannot be read.
 */
static int find_section(Elf *elf, const char *file, const char *want,
			GElf_Shdr *sh, Elf_Data **data)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	/*
	 * libelf keeps its last error until it is read: clear one left by an
	 * earlier file (or a probe that was allowed to fail), so that only
	 * this walk's own error is seen below.
	 */
	elf_errno();
	if (elf_getshdrstrndx(elf, &shstrndx))
		goto bad;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			goto bad;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (!name)
			goto bad;
		if (strcmp(name, want))
			continue;
		if (sh->sh_type == SHT_NOBITS)
			return 0;
		if ((sh->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			goto bad;
		*data = elf_getdata(scn, NULL);
		if (!*data)
			goto bad;
		return (*data)->d_size != 0;
	}
	if (elf_errno())
		goto bad;
	return 0;
bad:
	fprintf(stderr, "%s: truncated or malformed ELF file (%s): %s\n", file,
		want, elf_errmsg(-1));
	return -1;
}

static int read_leb(const uint8_t **p, const uint8_t *end, bool sign,
		    uint64_t *v)
{
	unsigned int shift = 0;
	uint64_t r = 0;
	uint8_t b;

	do {
		if (*p >= end || shift >= 64)
			return -1;
		b = *(*p)++;
		r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		r |= ~(uint64_t)0 << shift;
	*v = r;
	return 0;
}

/*
 * A pointer encoded as DW_EH_PE_* @enc at *@p (which lies at address
 * @vaddr), absolute or relative to its own address.
 */
static int read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc,
			uint64_t vaddr, uint64_t *v)
{
	static const uint8_t size[16] = {
		[DW_EH_PE_absptr] = 8,
		[DW_EH_PE_udata2] = 2, [DW_EH_PE_udata4] = 4,
		[DW_EH_PE_udata8] = 8, [DW_EH_PE_sdata2] = 2,
		[DW_EH_PE_sdata4] = 4, [DW_EH_PE_sdata8] = 8,
	};
	unsigned int fmt = enc & 0x0f, n = size[fmt], i;
	uint64_t r = 0;

	if (enc & DW_EH_PE_indirect)
		return -1;
	if (fmt == DW_EH_PE_uleb128 || fmt == DW_EH_PE_sleb128) {
		if (read_leb(p, end, fmt == DW_EH_PE_sleb128, &r))
			return -1;
	} else {
		if (!n || end - *p < n)
			return -1;
		for (i = 0; i < n; i++)
			r |= (uint64_t)(*p)[i] << (8 * i);
		if ((fmt & DW_EH_PE_signed) && n < 8 &&
		    (r >> (8 * n - 1)) & 1)
			r |= ~(uint64_t)0 << (8 * n);
		*p += n;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		r += vaddr;
		break;
	default:
		return -1;
	}
	*v = r;
	return 0;
}

/* How FDEs of this CIE encode their addresses ('R' augmentation). */
static int cie_fde_encoding(const Dwarf_CIE *cie, bool eh, uint8_t *enc)
{
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p + cie->augmentation_data_size;
	const char *a = cie->augmentation;
	uint64_t skip;
	uint8_t penc;

	*enc = DW_EH_PE_absptr;
	if (!eh || !a[0])
		return 0;
	if (a[0] != 'z')
		return -1;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			if (p >= end)
				return -1;
			*enc = *p;
			return 0;
		case 'P':
			/* The personality routine: skip it. */
			if (p >= end)
				return -1;
			penc = *p++;
			if (read_encoded(&p, end, penc & 0x0f, 0, &skip))
				return -1;
			break;
		case 'L':
			if (p++ >= end)
				return -1;
			break;
		case 'S':
		case 'B':
		case 'G':
			break;
		default:
			return -1;
		}
	}
	return 0;
}

/*
 * Append the FDEs of one CFI section to @cf. @eh: it is .eh_frame. Returns
 * 0, or -1 after printing why.
 */
static int list_fdes(Elf *elf, const char *name, Elf_Data *data,
		     const GElf_Shdr *sh, bool eh, Dwarf_CFI *cfi,
		     struct cfi_file *cf, size_t *cap)
{
	const char *sec = eh ? ".eh_frame" : ".debug_frame";
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	const uint8_t *base = data->d_buf;
	Dwarf_Off off = 0, next, cie_next;
	Dwarf_CFI_Entry e, c;
	int ret;

	for (;;) {
		const uint8_t *p;
		uint64_t start, len;
		uint8_t enc;
		struct cfi_fde *f;

		ret = dwarf_next_cfi(ident, data, eh, off, &next, &e);
		if (ret > 0)
			return 0;
		if (ret < 0) {
			fprintf(stderr, "%s: %s: bad entry at offset %#llx: %s\n",
				name, sec, (unsigned long long)off,
				dwarf_errmsg(-1));
			return -1;
		}
		if (dwarf_cfi_cie_p(&e)) {
			off = next;
			continue;
		}
		if (dwarf_next_cfi(ident, data, eh, e.fde.CIE_pointer,
				   &cie_next, &c) || !dwarf_cfi_cie_p(&c) ||
		    cie_fde_encoding(&c.cie, eh, &enc)) {
			fprintf(stderr, "%s: %s: FDE at offset %#llx: bad or unsupported CIE\n",
				name, sec, (unsigned long long)off);
			return -1;
		}
		p = e.fde.start;
		if (read_encoded(&p, e.fde.end, enc, sh->sh_addr + (p - base),
				 &start) ||
		    read_encoded(&p, e.fde.end, enc & 0x0f, 0, &len)) {
			fprintf(stderr,
				"%s: %s: FDE at offset %#llx: cannot decode its address range\n",
				name, sec, (unsigned long long)off);
			return -1;
		}
		if (cf->nfdes == *cap) {
			void *n;

			*cap = *cap ? *cap * 2 : 1024;
			n = realloc(cf->fdes, *cap * sizeof(*cf->fdes));
			if (!n) {
				fprintf(stderr, "%s: out of memory\n", name);
				return -1;
			}
			cf->fdes = n;
		}
		f = &cf->fdes[cf->nfdes++];
		memset(f, 0, sizeof(*f));
		f->start = start;
		f->end = start + len;
		f->offset = off;
		f->debug = !eh;
		f->cfi = cfi;
		if (f->end <= f->start) {
			f->end = f->start;
			f->left_out = true;
			f->reason = R_EMPTY;
		}
		off = next;
	}
}

static int cmp_fde(const void *a, const void *b)
{
	const struct cfi_fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->debug != y->debug)
		return x->debug ? 1 : -1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Does the .eh_frame FDE list @eh (sorted, @n long) cover any of @f? */
static bool covered_by(const struct cfi_fde *eh, size_t n,
		       const struct cfi_fde *f)
{
	size_t lo = 0, hi = n, mid;

	/* The last .eh_frame FDE that starts before @f ends. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (eh[mid].start < f->end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && eh[lo - 1].end > f->start;
}

/* Where @ops is CFA + off, or the value CFA + off: true and @off, @value. */
static bool cfa_based(const Dwarf_Op *ops, size_t nops, int64_t *off,
		      bool *value)
{
	size_t i = 1;

	if (!nops || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	*off = 0;
	if (i < nops && ops[i].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[i].number;
		i++;
	} else if (i + 1 < nops && ops[i].atom == DW_OP_consts &&
		   ops[i + 1].atom == DW_OP_plus) {
		*off = (int64_t)ops[i].number;
		i += 2;
	}
	*value = i < nops && ops[i].atom == DW_OP_stack_value;
	if (*value)
		i++;
	return i == nops;
}

/* A base register operation: true and its register and offset. */
static bool breg(const Dwarf_Op *op, unsigned int *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return true;
	}
	if (op->atom == DW_OP_bregx) {
		*reg = op->number;
		*off = (int64_t)op->number2;
		return true;
	}
	return false;
}

/* An unsigned constant operation: true and its value. */
static bool constant(const Dwarf_Op *op, uint64_t *v)
{
	if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
		*v = op->atom - DW_OP_lit0;
		return true;
	}
	switch (op->atom) {
	case DW_OP_const1u:
	case DW_OP_const2u:
	case DW_OP_const4u:
	case DW_OP_const8u:
	case DW_OP_constu:
		*v = op->number;
		return true;
	}
	return false;
}

/*
 * The CFA expression that GNU ld writes for a lazy PLT:
 *   DW_OP_breg7 (rsp) k; DW_OP_breg16 (rip) 0; m; DW_OP_and; t; DW_OP_ge;
 *   s; DW_OP_shl; DW_OP_plus
 * that is, rsp + k + (((rip & m) >= t) << s): the push in each PLT entry
 * moves the CFA by 1 << s from offset t of the entry on.
 */
static bool plt_expr(const Dwarf_Op *ops, size_t nops, struct cfi_row *r)
{
	unsigned int reg;
	uint64_t shift;
	int64_t off;

	if (nops != 9 ||
	    !breg(&ops[0], &reg, &r->cfa_off) || reg != DWARF_RSP ||
	    !breg(&ops[1], &reg, &off) || reg != DWARF_RIP || off ||
	    !constant(&ops[2], &r->plt_mask) || ops[3].atom != DW_OP_and ||
	    !constant(&ops[4], &r->plt_min) || ops[5].atom != DW_OP_ge ||
	    !constant(&ops[6], &shift) || ops[7].atom != DW_OP_shl ||
	    ops[8].atom != DW_OP_plus || shift > 16)
		return false;
	r->plt_shift = shift;
	r->cfa_fp = false;
	return true;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/*
 * What SFrame can say about the row @fr (see the comment at the top): fill
 * in @r and return R_NR, or return why it is left out.
 */
static enum reason classify(Dwarf_Frame *fr, int ra_reg, bool signal,
			    struct cfi_row *r)
{
	Dwarf_Op mem[3], *ops;
	unsigned int reg;
	size_t nops;
	int64_t off;
	bool value;

	if (signal)
		return R_SIGNAL;
	if (ra_reg != DWARF_RIP)
		return R_RA_COLUMN;

	if (dwarf_frame_register(fr, DWARF_RIP, mem, &ops, &nops))
		return R_LIBDW;
	if (!nops && ops == mem) {
		/* Undefined: the outermost frame. */
		r->kind = ROW_OUTERMOST;
		return R_NR;
	}
	if (!cfa_based(ops, nops, &off, &value) || value || off != -8)
		return R_RA_RULE;

	if (dwarf_frame_cfa(fr, &ops, &nops))
		return R_LIBDW;
	if (!nops)
		return R_NO_CFA;
	if (nops == 1 && breg(&ops[0], &reg, &r->cfa_off)) {
		if (reg != DWARF_RSP && reg != DWARF_RBP)
			return R_CFA_REG;
		r->cfa_fp = reg == DWARF_RBP;
		r->kind = ROW_FRAME;
	} else if (plt_expr(ops, nops, r)) {
		uint64_t block = r->plt_mask + 1;

		if (!r->plt_mask || block > PLT_BLOCK_MAX ||
		    (block & (block - 1)))
			return R_PLT_BLOCK;
		r->kind = ROW_PLT;
	} else {
		return R_CFA_EXPR;
	}

	/* Undefined or same value: rbp is not saved, it is the caller's. */
	if (dwarf_frame_register(fr, DWARF_RBP, mem, &ops, &nops))
		return R_LIBDW;
	r->fp_off = 0;
	if (nops) {
		if (!cfa_based(ops, nops, &off, &value) || value || !off)
			return R_FP_RULE;
		r->fp_off = off;
	}

	if (dwarf_frame_register(fr, DWARF_RSP, mem, &ops, &nops))
		return R_LIBDW;
	if (!cfa_based(ops, nops, &off, &value) || !value || off)
		return R_SP_RULE;

	if (!fits32(r->cfa_off) || !fits32(r->fp_off) ||
	    (r->kind == ROW_PLT && !fits32(r->cfa_off + (1LL << r->plt_shift))))
		return R_OFFSET;
	return R_NR;
}

static void left_out(struct cfi_row *r, enum reason why)
{
	r->kind = ROW_LEFT_OUT;
	r->reason = why;
}

/* Split @f into its rows. Returns 0, or -1 when out of memory. */
static int read_rows(struct cfi_fde *f)
{
	uint64_t addr = f->start;
	size_t cap = 0;

	while (addr < f->end) {
		Dwarf_Addr start, end;
		struct cfi_row *r;
		Dwarf_Frame *fr;
		enum reason why;
		bool signal;
		int ra;

		if (f->nrows == cap) {
			void *n;

			cap = cap ? cap * 2 : 8;
			n = realloc(f->rows, cap * sizeof(*r));
			if (!n)
				return -1;
			f->rows = n;
		}
		r = &f->rows[f->nrows++];
		memset(r, 0, sizeof(*r));
		r->start = addr;
		r->end = f->end;
		if (dwarf_cfi_addrframe(f->cfi, addr, &fr)) {
			/* The rest of the FDE, as one row. */
			left_out(r, R_LIBDW);
			break;
		}
		ra = dwarf_frame_info(fr, &start, &end, &signal);
		if (ra < 0 || start > addr || end <= addr || start < f->start) {
			left_out(r, R_LIBDW);
			free(fr);
			break;
		}
		if (end < f->end)
			r->end = end;
		why = classify(fr, ra, signal, r);
		if (why != R_NR)
			left_out(r, why);
		free(fr);
		addr = r->end;
	}
	return 0;
}

int cfi_read(void *e, const char *name, struct cfi_file *cf)
{
	Elf *elf = e;
	struct cfi_priv *priv;
	GElf_Shdr eh_sh, dbg_sh;
	Elf_Data *eh_data, *dbg_data;
	Dwarf_CFI *dbg_cfi = NULL;
	size_t i, n, cap = 0, neh, phnum;
	uint64_t max_end = 0;
	int ret;

	memset(cf, 0, sizeof(*cf));
	priv = calloc(1, sizeof(*priv));
	if (!priv)
		return -1;
	cf->priv = priv;

	/* The executable segments: the code a table may describe. */
	if (elf_getphdrnum(elf, &phnum)) {
		fprintf(stderr, "%s: no program headers: %s\n", name,
			elf_errmsg(-1));
		return -1;
	}
	cf->text_lo = UINT64_MAX;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		if (ph.p_vaddr < cf->text_lo)
			cf->text_lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > cf->text_hi)
			cf->text_hi = ph.p_vaddr + ph.p_memsz;
	}
	if (cf->text_lo >= cf->text_hi) {
		fprintf(stderr, "%s: no executable segment\n", name);
		return -1;
	}

	ret = find_section(elf, name, ".eh_frame", &eh_sh, &eh_data);
	if (ret < 0)
		return -1;
	cf->has_eh_frame = ret;
	ret = find_section(elf, name, ".debug_frame", &dbg_sh, &dbg_data);
	if (ret < 0)
		return -1;
	cf->has_debug_frame = ret;
	if (!cf->has_eh_frame && !cf->has_debug_frame) {
		fprintf(stderr, "%s: no .eh_frame or .debug_frame section\n",
			name);
		return -1;
	}
	if (cf->has_eh_frame) {
		priv->eh = dwarf_getcfi_elf(elf);
		if (!priv->eh) {
			fprintf(stderr, "%s: .eh_frame: %s\n", name,
				dwarf_errmsg(-1));
			return -1;
		}
		if (list_fdes(elf, name, eh_data, &eh_sh, true, priv->eh, cf,
			      &cap))
			return -1;
	}
	neh = cf->nfdes;
	qsort(cf->fdes, neh, sizeof(*cf->fdes), cmp_fde);
	if (cf->has_debug_frame) {
		priv->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		dbg_cfi = priv->dw ? dwarf_getcfi(priv->dw) : NULL;
		if (!dbg_cfi) {
			fprintf(stderr, "%s: .debug_frame: %s\n", name,
				dwarf_errmsg(-1));
			return -1;
		}
		if (list_fdes(elf, name, dbg_data, &dbg_sh, false, dbg_cfi, cf,
			      &cap))
			return -1;
		/* Code that .eh_frame describes is described by .eh_frame. */
		for (i = n = neh; i < cf->nfdes; i++) {
			if (covered_by(cf->fdes, neh, &cf->fdes[i]))
				cf->shadowed++;
			else
				cf->fdes[n++] = cf->fdes[i];
		}
		cf->nfdes = n;
	}
	qsort(cf->fdes, cf->nfdes, sizeof(*cf->fdes), cmp_fde);

	for (i = 0; i < cf->nfdes; i++) {
		struct cfi_fde *f = &cf->fdes[i];

		if (f->left_out)
			continue;
		if (f->start < cf->text_lo || f->end > cf->text_hi) {
			f->left_out = true;
			f->reason = R_RANGE;
			continue;
		}
		if (f->start < max_end) {
			f->left_out = true;
			f->reason = R_OVERLAP;
			continue;
		}
		max_end = f->end;
		if (read_rows(f)) {
			fprintf(stderr, "%s: out of memory\n", name);
			return -1;
		}
	}
	return 0;
}

void cfi_free(struct cfi_file *cf)
{
	struct cfi_priv *priv = cf->priv;
	size_t i;

	for (i = 0; i < cf->nfdes; i++)
		free(cf->fdes[i].rows);
	free(cf->fdes);
	if (priv) {
		if (priv->eh)
			dwarf_cfi_end(priv->eh);
		if (priv->dw)
			dwarf_end(priv->dw);
		free(priv);
	}
	memset(cf, 0, sizeof(*cf));
}
