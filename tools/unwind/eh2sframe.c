// SPDX-License-Identifier: GPL-2.0
/*
 * eh2sframe - write an SFrame section for an ELF file from its .eh_frame
 *
 *   eh2sframe [-q] [-v] [-o OUT] FILE...
 *   eh2sframe [-q] --elf OUT FILE
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
 * With --elf it writes a copy of FILE that carries the section itself,
 * with PT_GNU_SFRAME, for those who would rather ship the table with the
 * file than load it by build-id (elf_out.c).
 *
 * A row SFrame cannot express is written as a stop: a row whose return
 * address is undefined, so that a walk ends in that code instead of
 * guessing with frame pointers (review m10: ld.so's lazy-binding
 * trampoline keeps its CFA in rbx, and the caller's rbp says nothing about
 * it). Only signal frames are left out entirely: the kernel recognises the
 * trampoline by its code and goes on through the signal frame, and code
 * no FDE covers stays without a row, as in a file without a table. The
 * PLT's CFA expression becomes a PCMASK FDE.
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
		"       eh2sframe [-q] --elf OUT FILE\n"
		"       eh2sframe --load [-q] [-v] [--needed] [FILE...] [--pid PID]... [--all]\n"
		"       eh2sframe --remove [-q] [--needed] FILE|BUILD-ID...\n"
		"       eh2sframe --list\n"
		"  Convert each FILE's .eh_frame (and .debug_frame) to SFrame and\n"
		"  print what was converted and what was left out, and why.\n"
		"  -o OUT      write the SFrame section (version 2) to OUT (one FILE)\n"
		"  --elf OUT   write a copy of FILE with the section and PT_GNU_SFRAME\n"
		"              added, in a new segment at its end\n"
		"  -q          print only errors\n"
		"  -v          also list every FDE and row with what became of it\n"
		"  -l, --load  load each file's table into the kernel's store for its\n"
		"              build-id (needs CAP_PERFMON or CAP_SYS_ADMIN); one line\n"
		"              says what was loaded and what was left out\n"
		"  --needed    also each program's interpreter and the libraries it\n"
		"              needs; a program without '/' is looked up in PATH\n"
		"  -p, --pid PID  the files process PID maps executable\n"
		"  -a, --all   the files every process maps executable\n"
		"  --remove    remove the tables of these files (or build-ids)\n"
		"  --list      list the loaded tables: build-id, bytes, mappings\n"
		"  --device DEV  the store (default /dev/sframe_tables)\n");
}

/* A row left out for a reason other than a signal frame: a stop. */
static bool stop_row(const struct cfi_row *r)
{
	return r->kind == ROW_LEFT_OUT && r->reason != R_SIGNAL;
}

static struct sfw_rule frame_rule(const struct cfi_row *r)
{
	struct sfw_rule rule = {
		.outermost = r->kind == ROW_OUTERMOST || stop_row(r),
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

/* Runs of rows of @f, stops included, each as one PCINC FDE. */
static int add_fde(struct sfw *w, const struct cfi_fde *f)
{
	size_t i, j;

	for (i = 0; i < f->nrows; i = j) {
		const struct cfi_row *r = &f->rows[i];

		j = i + 1;
		if (r->kind == ROW_LEFT_OUT && !stop_row(r))
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

			if (s->kind != ROW_FRAME && s->kind != ROW_OUTERMOST &&
			    !stop_row(s))
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

static void report_file(const char *name, const struct cfi_file *cf,
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

/* The GNU build-id of @elf into @id (@len 0: none). */
static void elf_build_id(Elf *elf, uint8_t *id, size_t *len)
{
	size_t i, n, phnum;

	*len = 0;
	if (elf_getphdrnum(elf, &phnum))
		return;
	for (i = 0; i < phnum; i++) {
		size_t off = 0, name_off, desc_off;
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

			off = n;
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp(nm, "GNU", 4) || !nh.n_descsz ||
			    nh.n_descsz > TABLE_BUILD_ID_MAX)
				continue;
			memcpy(id, (const uint8_t *)d->d_buf + desc_off,
			       nh.n_descsz);
			*len = nh.n_descsz;
			return;
		}
	}
}

/**
 * build_id_hex - a build-id in lower-case hex, or "none"
 * @id:		the build-id
 * @len:	its bytes, at most %TABLE_BUILD_ID_MAX
 * @hex:	room for 2 * @len + 1 characters, and at least 5
 */
void build_id_hex(const uint8_t *id, size_t len, char *hex)
{
	size_t i;

	memcpy(hex, "none", sizeof("none"));
	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
}

/**
 * file_build_id - the GNU build-id of the ELF file @path
 * @path:	the file
 * @id:		room for %TABLE_BUILD_ID_MAX bytes
 * @len:	set to its length, 0 when it has none
 *
 * Return: 0, or -1 when the file cannot be read as ELF.
 */
int file_build_id(const char *path, uint8_t *id, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;

	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -1;
	}
	elf_build_id(elf, id, len);
	elf_end(elf);
	close(fd);
	return 0;
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

/**
 * make_table - make the SFrame table of the ELF file @name
 * @name:	the file
 * @report:	print its coverage and the table's figures
 * @t:		filled in; release with table_free()
 *
 * Errors (not an x86-64 ELF executable or shared object, truncated, no or
 * malformed CFI) are printed.
 *
 * Return: 0, or -1 on an error.
 */
int make_table(const char *name, bool report, struct table *t)
{
	return make_table_at(name, report, TABLE_BASE_AUTO, t);
}

/**
 * make_table_at - make_table(), with function starts relative to @base
 * @name:	the file
 * @report:	print its coverage and the table's figures
 * @base:	the address the table will be at, for a section in the file
 *		itself; %TABLE_BASE_AUTO for a table loaded into the kernel
 *		(0, or the start of the text when 0 is too far)
 * @t:		filled in; release with table_free()
 *
 * Return: 0, or -1 on an error (printed).
 */
int make_table_at(const char *name, bool report, uint64_t base,
		  struct table *t)
{
	struct plt_range plt[PLT_SECTIONS_MAX];
	struct cfi_file cf = { 0 };
	struct stats st = { 0 };
	struct sfw *w = NULL;
	char id[2 * TABLE_BUILD_ID_MAX + 1];
	size_t i, nplt;
	GElf_Ehdr eh;
	Elf *elf;
	int fd, ret = -1;

	memset(t, 0, sizeof(*t));
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", name, strerror(errno));
		return -1;
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
	nplt = plt_find(elf, &cf, plt, PLT_SECTIONS_MAX);
	for (i = 0; i < nplt; i++) {
		if (plt_add(w, &plt[i])) {
			fprintf(stderr, "%s: cannot encode %s\n", name,
				plt[i].name);
			goto out;
		}
	}
	if (base != TABLE_BASE_AUTO) {
		t->sframe_vaddr = base;
		if (sfw_write(w, base, &t->buf, &t->len)) {
			fprintf(stderr, "%s: cannot write the table\n", name);
			goto out;
		}
	} else if (sfw_write(w, 0, &t->buf, &t->len)) {
		/* Starts as the file's own addresses when they fit in 32 bits. */
		t->sframe_vaddr = cf.text_lo;
		if (sfw_write(w, t->sframe_vaddr, &t->buf, &t->len)) {
			fprintf(stderr, "%s: cannot write the table\n", name);
			goto out;
		}
	}
	t->text_vaddr = cf.text_lo;
	t->text_size = cf.text_hi - cf.text_lo;
	t->fdes = sfw_nfdes(w);
	elf_build_id(elf, t->id, &t->id_len);
	if (report) {
		build_id_hex(t->id, t->id_len, id);
		report_file(name, &cf, &st, id);
		for (i = 0; i < nplt; i++)
			printf("  %s: %" PRIu64 " bytes of PLT stubs without CFI, %s\n",
			       plt[i].name, plt[i].end - plt[i].start,
			       "described as jumps (CFA rsp+8)");
		printf("  table: version=2 size=%zu fdes=%zu fres=%zu", t->len,
		       sfw_nfdes(w), sfw_nfres(w));
		printf(" sframe_vaddr=%#" PRIx64 " text_vaddr=%#" PRIx64,
		       t->sframe_vaddr, t->text_vaddr);
		printf(" text_size=%#" PRIx64 "\n", t->text_size);
	}
	ret = 0;
	goto out;
nomem:
	fprintf(stderr, "%s: out of memory\n", name);
out:
	if (ret)
		table_free(t);
	sfw_free(w);
	cfi_free(&cf);
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/**
 * table_free - release what make_table() allocated
 * @t:	the table
 */
void table_free(struct table *t)
{
	free(t->buf);
	t->buf = NULL;
	t->len = 0;
}

static int convert(const char *name, const char *out, bool quiet)
{
	struct table t;
	int ret;

	if (make_table(name, !quiet, &t))
		return 1;
	ret = out && write_out(out, t.buf, t.len) ? 1 : 0;
	table_free(&t);
	return ret;
}

int main(int argc, char **argv)
{
	enum { OPT_NEEDED = 256, OPT_REMOVE, OPT_LIST, OPT_DEVICE, OPT_ELF };
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "load", no_argument, NULL, 'l' },
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "needed", no_argument, NULL, OPT_NEEDED },
		{ "remove", no_argument, NULL, OPT_REMOVE },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "elf", required_argument, NULL, OPT_ELF },
		{ }
	};
	struct load_opts lo = { .device = "/dev/sframe_tables" };
	int c, i, ret = 0, nfiles, mode = 0;
	const char *out = NULL, *elf_out = NULL;
	bool quiet = false;

	while ((c = getopt_long(argc, argv, "o:qvhlp:a", opts, NULL)) != -1) {
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
		case 'l':
		case OPT_REMOVE:
		case OPT_LIST:
			if (mode && mode != c)
				goto usage;
			mode = c;
			break;
		case 'p': {
			char **pids = realloc(lo.pids, (lo.npids + 1) * sizeof(*pids));

			if (!pids) {
				free(lo.pids);
				return 1;
			}
			lo.pids = pids;
			lo.pids[lo.npids++] = optarg;
			break;
		}
		case 'a':
			lo.all = true;
			break;
		case OPT_NEEDED:
			lo.needed = true;
			break;
		case OPT_DEVICE:
			lo.device = optarg;
			break;
		case OPT_ELF:
			elf_out = optarg;
			break;
		default:
			goto usage;
		}
	}
	nfiles = argc - optind;
	if (mode && (out || elf_out))
		goto usage;
	if (elf_out && (out || nfiles != 1))
		goto usage;
	if (mode != 'l' && (lo.npids || lo.all))
		goto usage;
	if (!mode && lo.needed)
		goto usage;
	if (mode == OPT_LIST ? nfiles : mode == 'l' ?
	    !nfiles && !lo.npids && !lo.all : !nfiles)
		goto usage;
	if (out && nfiles != 1)
		goto usage;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "eh2sframe: libelf is too old\n");
		return 1;
	}
	lo.quiet = quiet;
	lo.verbose = verbose;
	if (mode)
		verbose = false;	/* the per-row listing is for conversion only */
	switch (mode) {
	case 'l':
		ret = load_tables(&lo, argv + optind, nfiles);
		break;
	case OPT_REMOVE:
		ret = remove_tables(&lo, argv + optind, nfiles);
		break;
	case OPT_LIST:
		ret = list_tables(&lo);
		break;
	default:
		if (elf_out) {
			ret = write_elf(argv[optind], elf_out, !quiet) ? 1 : 0;
			break;
		}
		for (i = optind; i < argc; i++)
			ret |= convert(argv[i], out, quiet);
	}
	free(lo.pids);
	return ret;
usage:
	print_usage(stderr);
	free(lo.pids);
	return 2;
}
