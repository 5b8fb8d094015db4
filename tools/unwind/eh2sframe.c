// SPDX-License-Identifier: GPL-2.0
/*
 * eh2sframe - write an SFrame section for an ELF file from its .eh_frame
 *
 *   eh2sframe [-q] [-v] [-o OUT] FILE...
 *
 * For code that has only DWARF call-frame information (.eh_frame, and
 * .debug_frame where .eh_frame says nothing), such as every library of a
 * distribution, this makes the SFrame table the kernel's user-stack walker
 * reads: libdw interprets the CFI row by row (cfi.c), every row SFrame can
 * express becomes an SFrame row, and the rest is left out and counted by
 * reason. The kernel never interprets DWARF.
 *
 * Per file it prints how much was converted and what was left out, and
 * why. With -o (one FILE) it writes the raw section (SFrame version 2) for
 * the file at load bias 0: function starts are relative to the address
 * printed as sframe_vaddr (0 when they fit, so that they are the file's own
 * virtual addresses), and the section describes the code between
 * text_vaddr and text_vaddr + text_size, the file's executable segments.
 *
 * An FDE with rows SFrame cannot express becomes one SFrame FDE per run of
 * rows it can: the reader finds no function for the rows left out, which
 * is what it finds for code without any table, instead of the rule of a
 * neighbouring row. The PLT's CFA expression becomes a PCMASK FDE.
 *
 * Exit status: 0 on success, 1 on an error (not an x86-64 ELF file, no
 * CFI, malformed CFI), 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eh2sframe.h"

struct stats {
	size_t		fdes;
	size_t		fdes_whole;
	size_t		fdes_part;
	size_t		fdes_none;
	size_t		rows;
	size_t		rows_conv;
	size_t		rows_outermost;
	size_t		rows_plt;
	uint64_t	bytes;
	uint64_t	bytes_conv;
	size_t		r_fdes[R_NR];
	size_t		r_rows[R_NR];
	uint64_t	r_bytes[R_NR];
};

static bool verbose;

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: eh2sframe [-q] [-v] [-o OUT] FILE...\n"
		"  Convert each FILE's .eh_frame (and .debug_frame) to SFrame and\n"
		"  print what was converted and what was left out, and why.\n"
		"  -o OUT   write the SFrame section (version 2) to OUT (one FILE)\n"
		"  -q       print only errors\n"
		"  -v       also list every FDE and row with what became of it\n");
}

static struct sfw_rule frame_rule(const struct cfi_row *r)
{
	struct sfw_rule rule = {
		.outermost = r->kind == ROW_OUTERMOST,
		.cfa_fp = r->cfa_fp,
		.cfa_off = r->cfa_off,
		.fp_off = r->fp_off,
	};

	return rule;
}

/*
 * A PLT row: one PCMASK FDE over the row, whose rows repeat every
 * mask + 1 bytes. Its rows follow rip & mask, so they are laid out from
 * the block position of the row's first address.
 */
static int add_plt(struct sfw *w, const struct cfi_row *r)
{
	uint64_t block = r->plt_mask + 1, k;
	struct sfw_rule rule = frame_rule(r);

	if (sfw_begin_fde(w, r->start, block))
		return -1;
	for (k = 0; k < block; k++) {
		bool moved = ((r->start + k) & r->plt_mask) >= r->plt_min;

		rule.cfa_off = r->cfa_off + (moved ? 1LL << r->plt_shift : 0);
		if (sfw_add_fre(w, k, &rule))
			return -1;
	}
	return sfw_end_fde(w, r->end);
}

/* Runs of expressible rows of @f, each as one PCINC FDE. */
static int add_fde(struct sfw *w, const struct cfi_fde *f)
{
	size_t i, j;

	for (i = 0; i < f->nrows; i = j) {
		const struct cfi_row *r = &f->rows[i];

		j = i + 1;
		if (r->kind == ROW_LEFT_OUT)
			continue;
		if (r->kind == ROW_PLT) {
			if (add_plt(w, r))
				return -1;
			continue;
		}
		if (sfw_begin_fde(w, r->start, 0))
			return -1;
		for (j = i; j < f->nrows; j++) {
			const struct cfi_row *s = &f->rows[j];
			struct sfw_rule rule = frame_rule(s);

			if (s->kind != ROW_FRAME && s->kind != ROW_OUTERMOST)
				break;
			if (sfw_add_fre(w, s->start - r->start, &rule))
				return -1;
		}
		if (sfw_end_fde(w, f->rows[j - 1].end))
			return -1;
	}
	return 0;
}

static void list_row(const struct cfi_row *r)
{
	printf("  row %#" PRIx64 " %#" PRIx64 " ", r->start, r->end);
	switch (r->kind) {
	case ROW_FRAME:
		printf("frame %s%+" PRId64, r->cfa_fp ? "rbp" : "rsp",
		       r->cfa_off);
		break;
	case ROW_OUTERMOST:
		printf("outermost\n");
		return;
	case ROW_PLT:
		printf("plt rsp%+" PRId64 " mask %#" PRIx64 " min %" PRIu64
		       " shift %u", r->cfa_off, r->plt_mask, r->plt_min,
		       r->plt_shift);
		break;
	default:
		printf("left-out %s\n", reason_tag[r->reason]);
		return;
	}
	if (r->fp_off)
		printf(" rbp c%+" PRId64 "\n", r->fp_off);
	else
		printf(" rbp unsaved\n");
}

/* Count @f into @st, and list it with -v. */
static void count_fde(struct stats *st, const struct cfi_fde *f)
{
	bool seen[R_NR] = { false };
	size_t i, good = 0;

	st->fdes++;
	st->bytes += f->end - f->start;
	if (verbose)
		printf("fde %#" PRIx64 " %#" PRIx64 " %s%s%s\n", f->start,
		       f->end, f->debug ? ".debug_frame" : ".eh_frame",
		       f->left_out ? " left-out " : "",
		       f->left_out ? reason_tag[f->reason] : "");
	if (f->left_out) {
		st->fdes_none++;
		st->r_fdes[f->reason]++;
		st->r_bytes[f->reason] += f->end - f->start;
		return;
	}
	for (i = 0; i < f->nrows; i++) {
		const struct cfi_row *r = &f->rows[i];
		uint64_t len = r->end - r->start;

		if (verbose)
			list_row(r);
		st->rows++;
		if (r->kind == ROW_LEFT_OUT) {
			st->r_rows[r->reason]++;
			st->r_bytes[r->reason] += len;
			if (!seen[r->reason])
				st->r_fdes[r->reason]++;
			seen[r->reason] = true;
			continue;
		}
		good++;
		st->rows_conv++;
		st->bytes_conv += len;
		if (r->kind == ROW_OUTERMOST)
			st->rows_outermost++;
		if (r->kind == ROW_PLT)
			st->rows_plt++;
	}
	if (good == f->nrows)
		st->fdes_whole++;
	else if (good)
		st->fdes_part++;
	else
		st->fdes_none++;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * a / b : 100.0;
}

static void report(const char *name, const struct cfi_file *cf,
		   const struct stats *st, const char *build_id)
{
	size_t left_rows = st->rows - st->rows_conv;
	int i;

	printf("%s: build-id %s, executable segments %#" PRIx64 "-%#" PRIx64 "\n",
	       name, build_id, cf->text_lo, cf->text_hi);
	printf("  cfi: %zu FDEs (%s%s), %zu rows, %" PRIu64 " bytes of code",
	       st->fdes, cf->has_eh_frame ? ".eh_frame" : "",
	       cf->has_debug_frame ?
	       (cf->has_eh_frame ? " and .debug_frame" : ".debug_frame") : "",
	       st->rows, st->bytes);
	if (cf->shadowed)
		printf("; %zu .debug_frame FDEs for code .eh_frame covers",
		       cf->shadowed);
	printf("\n");
	printf("  converted: %zu FDEs whole (%.2f%%), %zu in part; "
	       "%zu rows (%zu outermost, %zu PLT); %" PRIu64 " bytes (%.2f%%)\n",
	       st->fdes_whole, pct(st->fdes_whole, st->fdes), st->fdes_part,
	       st->rows_conv, st->rows_outermost, st->rows_plt,
	       st->bytes_conv, pct(st->bytes_conv, st->bytes));
	printf("  left out: %zu FDEs whole, %zu rows, %" PRIu64 " bytes\n",
	       st->fdes_none, left_rows, st->bytes - st->bytes_conv);
	for (i = 0; i < R_NR; i++) {
		if (!st->r_fdes[i])
			continue;
		printf("    %s: %zu FDEs, %zu rows, %" PRIu64 " bytes (%s)\n",
		       reason_tag[i], st->r_fdes[i], st->r_rows[i],
		       st->r_bytes[i], reason_text[i]);
	}
}

/* The GNU build-id as hex, or "none". */
static void build_id(Elf *elf, char *out, size_t size)
{
	size_t i, n, phnum;

	snprintf(out, size, "none");
	if (elf_getphdrnum(elf, &phnum))
		return;
	for (i = 0; i < phnum; i++) {
		size_t off = 0, name_off, desc_off, j;
		GElf_Nhdr nh;
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz,
					 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (!d)
			continue;
		while ((n = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
			const char *nm = (const char *)d->d_buf + name_off;
			const uint8_t *desc = (const uint8_t *)d->d_buf + desc_off;

			off = n;
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp(nm, "GNU", 4) || !nh.n_descsz ||
			    nh.n_descsz * 2 + 1 > size)
				continue;
			for (j = 0; j < nh.n_descsz; j++)
				snprintf(out + 2 * j, 3, "%02x", desc[j]);
			return;
		}
	}
}

/*
 * libelf reads a file cut short as one with fewer sections: check that the
 * header tables and every section with bytes in the file lie inside it.
 */
static int check_size(Elf *elf, const GElf_Ehdr *eh, const char *name,
		      int fd)
{
	Elf_Scn *scn = NULL;
	uint64_t size;
	struct stat st;
	GElf_Shdr sh;

	if (fstat(fd, &st)) {
		fprintf(stderr, "%s: %s\n", name, strerror(errno));
		return -1;
	}
	size = st.st_size;
	if (eh->e_phoff > size ||
	    (uint64_t)eh->e_phnum * eh->e_phentsize > size - eh->e_phoff ||
	    eh->e_shoff > size ||
	    (uint64_t)eh->e_shnum * eh->e_shentsize > size - eh->e_shoff)
		goto cut;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh)) {
			fprintf(stderr, "%s: bad section header: %s\n", name,
				elf_errmsg(-1));
			return -1;
		}
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset))
			goto cut;
	}
	return 0;
cut:
	fprintf(stderr,
		"%s: truncated: its headers or sections end past its %" PRIu64 " bytes\n",
		name, size);
	return -1;
}

static int write_out(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int convert(const char *name, const char *out, bool quiet)
{
	struct cfi_file cf = { 0 };
	struct stats st = { 0 };
	struct sfw *w = NULL;
	uint8_t *buf = NULL;
	uint64_t base = 0;
	char id[2 * 64 + 1];
	GElf_Ehdr eh;
	size_t len, i;
	Elf *elf;
	int fd, ret = 1;

	fd = open(name, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", name, strerror(errno));
		return 1;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		fprintf(stderr, "%s: not an ELF file\n", name);
		goto out;
	}
	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64) {
		fprintf(stderr, "%s: not a 64-bit x86-64 ELF file\n", name);
		goto out;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		fprintf(stderr, "%s: not an executable or shared object\n",
			name);
		goto out;
	}
	if (check_size(elf, &eh, name, fd) || cfi_read(elf, name, &cf))
		goto out;

	w = sfw_new();
	if (!w)
		goto nomem;
	for (i = 0; i < cf.nfdes; i++) {
		count_fde(&st, &cf.fdes[i]);
		if (!cf.fdes[i].left_out && add_fde(w, &cf.fdes[i])) {
			fprintf(stderr, "%s: cannot encode the FDE at %#" PRIx64 "\n",
				name, cf.fdes[i].start);
			goto out;
		}
	}
	/* Starts as the file's own addresses when they fit in 32 bits. */
	if (sfw_write(w, 0, &buf, &len)) {
		base = cf.text_lo;
		if (sfw_write(w, base, &buf, &len)) {
			fprintf(stderr, "%s: cannot write the table\n", name);
			goto out;
		}
	}
	if (!quiet) {
		build_id(elf, id, sizeof(id));
		report(name, &cf, &st, id);
		printf("  table: version=2 size=%zu fdes=%zu fres=%zu", len,
		       sfw_nfdes(w), sfw_nfres(w));
		printf(" sframe_vaddr=%#" PRIx64 " text_vaddr=%#" PRIx64,
		       base, cf.text_lo);
		printf(" text_size=%#" PRIx64 "\n", cf.text_hi - cf.text_lo);
	}
	if (out && write_out(out, buf, len))
		goto out;
	ret = 0;
	goto out;
nomem:
	fprintf(stderr, "%s: out of memory\n", name);
out:
	free(buf);
	sfw_free(w);
	cfi_free(&cf);
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const char *out = NULL;
	bool quiet = false;
	int c, i, ret = 0;

	while ((c = getopt_long(argc, argv, "o:qvh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc || (out && argc - optind != 1)) {
		print_usage(stderr);
		return 2;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "eh2sframe: libelf is too old\n");
		return 1;
	}
	for (i = optind; i < argc; i++)
		ret |= convert(argv[i], out, quiet);
	return ret;
}
