// SPDX-License-Identifier: GPL-2.0
/*
 * PLT stubs that no CFI describes.
 *
 * ld writes .eh_frame for the lazy-binding .plt of a dynamic file (the CFA
 * expression that cfi.c turns into a PCMASK FDE), but in a static program
 * the .plt that holds the stubs of glibc's IFUNCs (strlen, memcpy, ...) has
 * none, and neither does the assembler's .sframe. A walk that starts in
 * such a stub (a sample, a uprobe) then has nothing to go on.
 *
 * Each of those stubs is a single "jmp *GOT(%rip)" padded with a NOP to
 * the entry size; the padding never runs. At the jump, the caller's return
 * address is at the top of the stack: CFA = RSP + 8, RA at CFA - 8, RBP
 * untouched. That is a fact of the code, not a guess, so it is written
 * only for a PLT section that no FDE covers and whose every entry has
 * exactly those bytes.
 */
#include <gelf.h>
#include <string.h>

#include "eh2sframe.h"

/*
 * The stub: jmp *rel32(%rip), then xchg %ax,%ax to fill its 8 bytes. This
 * is what ld 2.40 writes for x86-64 (.plt of a static program, .plt.got);
 * sections of another layout are left alone.
 */
#define PLT_ENTRY	8
static const unsigned char plt_stub_pad[] = { 0x66, 0x90 };

static bool plt_entries_match(const unsigned char *p, size_t len)
{
	size_t off;

	if (!len || len % PLT_ENTRY)
		return false;
	for (off = 0; off < len; off += PLT_ENTRY)
		if (p[off] != 0xff || p[off + 1] != 0x25 ||
		    memcmp(p + off + 6, plt_stub_pad, sizeof(plt_stub_pad)))
			return false;
	return true;
}

static bool covered(const struct cfi_file *cf, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < cf->nfdes; i++)
		if (cf->fdes[i].start < hi && cf->fdes[i].end > lo)
			return true;
	return false;
}

/**
 * plt_find - find the PLT sections of @elf that no FDE of @cf covers
 * @elf:	the file (an Elf *)
 * @cf:		its CFI
 * @out:	filled with up to @max ranges, each a section of stubs
 * @max:	room in @out
 *
 * Return: how many ranges were found.
 */
size_t plt_find(void *elf, const struct cfi_file *cf, struct plt_range *out,
		size_t max)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, n = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while (n < max && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strcmp(name, ".plt") && strcmp(name, ".plt.got") &&
			      strcmp(name, ".plt.sec") && strcmp(name, ".iplt")))
			continue;
		if (sh.sh_addr < cf->text_lo || sh.sh_addr + sh.sh_size > cf->text_hi ||
		    covered(cf, sh.sh_addr, sh.sh_addr + sh.sh_size))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			continue;
		if (!plt_entries_match(d->d_buf, d->d_size))
			continue;
		out[n].start = sh.sh_addr;
		out[n].end = sh.sh_addr + sh.sh_size;
		out[n].name = name;
		n++;
	}
	return n;
}

/**
 * plt_add - write the rows of the stubs in @r: one FDE, one row
 * @w:	the writer
 * @r:	a range from plt_find()
 *
 * Return: 0, or -1 when the writer failed.
 */
int plt_add(struct sfw *w, const struct plt_range *r)
{
	static const struct sfw_rule at_jump = { .cfa_off = 8 };

	if (sfw_begin_fde(w, r->start, 0) || sfw_add_fre(w, 0, &at_jump))
		return -1;
	return sfw_end_fde(w, r->end);
}
