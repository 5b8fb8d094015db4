/* SPDX-License-Identifier: GPL-2.0 */
/*
 * eh2sframe: SFrame tables made from a file's DWARF call-frame information.
 * Shared by the CFI reader (cfi.c), the SFrame writer (sframe_write.c) and
 * the command (eh2sframe.c).
 */
#ifndef EH2SFRAME_H
#define EH2SFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DWARF register numbers on x86-64. */
#define DWARF_RBP	6
#define DWARF_RSP	7
#define DWARF_RIP	16

/* What one row of the CFI, a range of addresses with one rule, became. */
enum row_kind {
	ROW_FRAME,	/* CFA = rsp/rbp + k, RA at CFA - 8, rbp saved or not */
	ROW_OUTERMOST,	/* the return address is undefined: end of the stack */
	ROW_PLT,	/* CFA = rsp + k + ((rip & mask) >= min) << shift */
	ROW_LEFT_OUT,	/* nothing SFrame can say: see enum reason */
};

/*
 * Why a row or a whole FDE was left out. The first matching reason counts,
 * in this order; cfi.c has the exact rules.
 */
enum reason {
	R_SIGNAL,	/* signal frame (CIE augmentation "S") */
	R_RA_COLUMN,	/* the return address column is not rip */
	R_RA_RULE,	/* RA neither at CFA - 8 nor undefined */
	R_NO_CFA,	/* no CFA rule */
	R_CFA_REG,	/* CFA from a register other than rsp and rbp */
	R_CFA_EXPR,	/* CFA by an expression that is not the PLT's */
	R_PLT_BLOCK,	/* a PLT expression whose block SFrame cannot repeat */
	R_FP_RULE,	/* rbp neither saved at CFA + k (k != 0) nor unsaved */
	R_SP_RULE,	/* rsp is not the CFA */
	R_OFFSET,	/* an offset that does not fit 32 bits */
	R_EMPTY,	/* the FDE covers no address */
	R_RANGE,	/* outside the executable segments */
	R_OVERLAP,	/* overlaps an FDE that comes earlier */
	R_LIBDW,	/* libdw could not compute the row */
	R_NR
};

extern const char *const reason_tag[R_NR];
extern const char *const reason_text[R_NR];

/**
 * struct cfi_row - one row of an FDE, as libdw computes it
 * @start:	first address of the row
 * @end:	one past its last address
 * @kind:	what it becomes
 * @reason:	why it was left out (ROW_LEFT_OUT only)
 * @cfa_fp:	the CFA is rbp + @cfa_off, else rsp + @cfa_off
 * @cfa_off:	CFA offset from its base register
 * @fp_off:	where rbp is saved, from the CFA; 0 when it is not saved
 * @plt_mask:	ROW_PLT: the low bits of rip that select the rule
 * @plt_min:	ROW_PLT: from this value of (rip & @plt_mask) on ...
 * @plt_shift:	ROW_PLT: ... the CFA is 1 << @plt_shift further up
 */
struct cfi_row {
	uint64_t	start;
	uint64_t	end;
	enum row_kind	kind;
	enum reason	reason;
	bool		cfa_fp;
	int64_t		cfa_off;
	int64_t		fp_off;
	uint64_t	plt_mask;
	uint64_t	plt_min;
	unsigned int	plt_shift;
};

/**
 * struct cfi_fde - one FDE of .eh_frame or .debug_frame
 * @start:	first address it describes
 * @end:	one past the last
 * @offset:	its offset in its section
 * @debug:	it comes from .debug_frame
 * @cfi:	libdw's handle for its section (a Dwarf_CFI)
 * @left_out:	the whole FDE was left out for @reason before its rows were
 *		read
 * @reason:	see @left_out
 * @rows:	its rows, in address order, covering [@start, @end)
 * @nrows:	how many
 */
struct cfi_fde {
	uint64_t	start;
	uint64_t	end;
	uint64_t	offset;
	bool		debug;
	void		*cfi;
	bool		left_out;
	enum reason	reason;
	struct cfi_row	*rows;
	size_t		nrows;
};

/**
 * struct cfi_file - the CFI of one ELF file
 * @fdes:		all FDEs, sorted by start address
 * @nfdes:		how many
 * @shadowed:		.debug_frame FDEs ignored because .eh_frame covers
 *			their code
 * @has_eh_frame:	the file has .eh_frame
 * @has_debug_frame:	the file has .debug_frame
 * @text_lo:		start of the executable segments (lowest vaddr)
 * @text_hi:		end of the executable segments
 * @priv:		the reader's own state (cfi.c)
 */
struct cfi_file {
	struct cfi_fde	*fdes;
	size_t		nfdes;
	size_t		shadowed;
	bool		has_eh_frame;
	bool		has_debug_frame;
	uint64_t	text_lo;
	uint64_t	text_hi;
	void		*priv;
};

/* cfi.c: read every FDE and row of the open ELF @elf (an Elf *). */
int cfi_read(void *elf, const char *name, struct cfi_file *cf);
void cfi_free(struct cfi_file *cf);

/* sframe_write.c: the SFrame V2 writer. */

/**
 * struct sfw_rule - what one SFrame row (FRE) says
 * @outermost:	the return address is undefined (an FRE with no offsets)
 * @cfa_fp:	the CFA is rbp + @cfa_off, else rsp + @cfa_off
 * @cfa_off:	CFA offset from its base register
 * @fp_off:	where rbp is saved, from the CFA; 0 when it is not saved
 */
struct sfw_rule {
	bool		outermost;
	bool		cfa_fp;
	int32_t		cfa_off;
	int32_t		fp_off;
};

struct sfw;

struct sfw *sfw_new(void);
void sfw_free(struct sfw *w);
/*
 * One SFrame FDE at a time: begin, add its rows in address order (@off from
 * @start, or from the start of the repeated block when @rep is not 0), end.
 */
int sfw_begin_fde(struct sfw *w, uint64_t start, unsigned int rep);
int sfw_add_fre(struct sfw *w, uint32_t off, const struct sfw_rule *rule);
int sfw_end_fde(struct sfw *w, uint64_t end);
/*
 * The section, for a file that has it at @base: function starts are
 * written relative to @base. Returns 0 and a malloc()ed buffer, or -1 when
 * a start does not fit.
 */
int sfw_write(struct sfw *w, uint64_t base, uint8_t **buf, size_t *len);
size_t sfw_nfdes(const struct sfw *w);
size_t sfw_nfres(const struct sfw *w);

/* plt.c: PLT stubs that no CFI describes. */

/**
 * struct plt_range - a section of PLT stubs without CFI
 * @start:	its first address
 * @end:	one past its last
 * @name:	the section's name
 */
struct plt_range {
	uint64_t	start;
	uint64_t	end;
	const char	*name;
};

/* .plt, .plt.got, .plt.sec, .iplt: at most that many sections. */
#define PLT_SECTIONS_MAX	4

size_t plt_find(void *elf, const struct cfi_file *cf, struct plt_range *out,
		size_t max);
int plt_add(struct sfw *w, const struct plt_range *r);

/* eh2sframe.c: one file's table, as the store takes it. */

#define TABLE_BUILD_ID_MAX	64

/**
 * struct table - the SFrame table made for one file
 * @buf:		the section (malloc()ed)
 * @len:		its bytes
 * @sframe_vaddr:	the address its function starts are relative to
 * @text_vaddr:		first code address it describes (load bias 0)
 * @text_size:		bytes of code it describes
 * @fdes:		SFrame FDEs in it
 * @id:			the file's GNU build-id
 * @id_len:		its bytes; 0 when the file has none
 */
struct table {
	uint8_t		*buf;
	size_t		len;
	uint64_t	sframe_vaddr;
	uint64_t	text_vaddr;
	uint64_t	text_size;
	size_t		fdes;
	uint8_t		id[TABLE_BUILD_ID_MAX];
	size_t		id_len;
};

/* make_table_at()'s @base for a table loaded into the kernel. */
#define TABLE_BASE_AUTO		UINT64_MAX

int make_table(const char *name, bool report, struct table *t);
int make_table_at(const char *name, bool report, uint64_t base,
		  struct table *t);
int write_elf(const char *name, const char *out, bool report);
void table_free(struct table *t);
int file_build_id(const char *path, uint8_t *id, size_t *len);
void build_id_hex(const uint8_t *id, size_t len, char *hex);

/* load.c: the kernel's store of tables, /dev/sframe_tables. */

/**
 * struct load_opts - what --load, --remove and --list work on
 * @device:	the store's device
 * @needed:	add each program's interpreter and needed libraries
 * @all:	add the executable mappings of every process
 * @quiet:	print errors only
 * @verbose:	print each file's coverage and what became of it
 * @pids:	add the executable mappings of these processes
 * @npids:	how many
 */
struct load_opts {
	const char	*device;
	bool		needed;
	bool		all;
	bool		quiet;
	bool		verbose;
	char		**pids;
	int		npids;
};

int load_tables(const struct load_opts *o, char **names, int n);
int remove_tables(const struct load_opts *o, char **names, int n);
int list_tables(const struct load_opts *o);

#endif /* EH2SFRAME_H */
