// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-lookup: run the kernel's SFrame reader over the .sframe section of
 * an ELF file and print the frame it gives for each address.
 *
 *   sframe-lookup [-v] [-d] FILE ADDR...
 *   sframe-lookup [-v] [-d] -r RAW SECADDR TEXT_START TEXT_END ADDR...
 *
 * The second form reads a raw section (for instance one convert.py or
 * tools/unwind/eh2sframe wrote) that the program would have at SECADDR,
 * covering [TEXT_START, TEXT_END). An ADDR of "-" reads addresses from
 * standard input, one per line.
 *
 * One line per address: "ADDR ok BASE CFA_OFF RA_OFF FP_OFF" (BASE is sp or
 * fp, FP_OFF 0 when the frame pointer is not saved), "ADDR outermost", or
 * "ADDR err ERRNO". With -v the whole section is validated first and
 * "validate RET" printed. With -d every FDE and FRE is then printed as the
 * reader decodes it (sframe_user_dump() in sframe_user.c). Addresses are
 * virtual addresses in the file, as readelf prints them.
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "shim.h"
#include "../../kernel/unwind/sframe.h"

static u8 *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	u8 *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc(n);
		if (buf && fread(buf, 1, n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = n;
	}
	fclose(f);
	return buf;
}

/* Find .sframe and the range of executable segments; 0 on success. */
static int find_sframe(const u8 *elf, size_t len, struct sframe_section *sec,
		       size_t *file_off)
{
	const Elf64_Ehdr *eh = (const void *)elf;
	const Elf64_Shdr *sh, *strtab;
	const Elf64_Phdr *ph;
	unsigned long lo = ~0UL, hi = 0;
	int i;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -1;
	if (eh->e_shoff + (u64)eh->e_shnum * sizeof(*sh) > len ||
	    eh->e_shstrndx >= eh->e_shnum ||
	    eh->e_phoff + (u64)eh->e_phnum * sizeof(*ph) > len)
		return -1;
	sh = (const void *)(elf + eh->e_shoff);
	strtab = &sh[eh->e_shstrndx];
	ph = (const void *)(elf + eh->e_phoff);

	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		if (ph[i].p_vaddr < lo)
			lo = ph[i].p_vaddr;
		if (ph[i].p_vaddr + ph[i].p_memsz > hi)
			hi = ph[i].p_vaddr + ph[i].p_memsz;
	}
	/* Relocatable objects have no segments: accept any address. */
	if (lo >= hi) {
		lo = 0;
		hi = ~0UL;
	}

	for (i = 0; i < eh->e_shnum; i++) {
		const char *name;

		if (strtab->sh_offset + sh[i].sh_name >= len)
			continue;
		name = (const char *)elf + strtab->sh_offset + sh[i].sh_name;
		if (strncmp(name, ".sframe", 8))
			continue;
		if (sh[i].sh_offset + sh[i].sh_size > len)
			return -1;
		sec->sframe_start = sh[i].sh_addr;
		sec->sframe_end = sh[i].sh_addr + sh[i].sh_size;
		sec->text_start = lo;
		sec->text_end = hi;
		*file_off = sh[i].sh_offset;
		return 0;
	}
	return -1;
}

/* Field by field: the padding of the frame description is not set. */
static bool same_frame(const struct unwind_user_frame *a,
		       const struct unwind_user_frame *b)
{
	return a->cfa_off == b->cfa_off && a->ra_off == b->ra_off &&
	       a->fp_off == b->fp_off && a->use_fp == b->use_fp;
}

/*
 * Print the frame for @ip. The addresses come in section order, as
 * neighbouring frames of one function would: the cached lookup must agree
 * with the uncached one, else this prints both and returns 1.
 */
static int lookup(const struct sframe_section *sec, struct sframe_cache *cache,
		  unsigned long ip)
{
	struct unwind_user_frame frame, cframe;
	int ret, cret;

	ret = sframe_find(sec, ip, &frame);
	cret = sframe_find_cached(sec, cache, ip, &cframe);
	if (cret != ret || (!ret && !same_frame(&cframe, &frame))) {
		printf("%#lx cached %d, uncached %d\n", ip, cret, ret);
		return 1;
	}
	if (ret == SFRAME_OUTERMOST)
		printf("%#lx outermost\n", ip);
	else if (ret)
		printf("%#lx err %d\n", ip, ret);
	else
		printf("%#lx ok %s %d %d %d\n", ip, frame.use_fp ? "fp" : "sp",
		       frame.cfa_off, frame.ra_off, frame.fp_off);
	return 0;
}

int main(int argc, char **argv)
{
	struct sframe_section sec = { 0 };
	struct sframe_cache cache = { 0 };
	bool validate = false, dump = false;
	char line[64];
	size_t len, off;
	u8 *elf;
	int i = 1, ret;

	for (; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			validate = true;
		else if (!strcmp(argv[i], "-d"))
			dump = true;
		else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: %s [-v] [-d] FILE ADDR...\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[i], "-r")) {
		if (i + 4 >= argc) {
			fprintf(stderr, "-r RAW SECADDR TEXT_START TEXT_END\n");
			return 2;
		}
		elf = read_file(argv[i + 1], &len);
		if (!elf)
			return 1;
		off = 0;
		sec.sframe_start = strtoul(argv[i + 2], NULL, 0);
		sec.sframe_end = sec.sframe_start + len;
		sec.text_start = strtoul(argv[i + 3], NULL, 0);
		sec.text_end = strtoul(argv[i + 4], NULL, 0);
		i += 4;
	} else {
		elf = read_file(argv[i], &len);
		if (!elf || find_sframe(elf, len, &sec, &off)) {
			fprintf(stderr, "%s: no readable .sframe section\n",
				argv[i]);
			return 1;
		}
	}
	/* The shim reads a private copy of exactly the section's bytes. */
	sframe_shim_len = sec.sframe_end - sec.sframe_start;
	sframe_shim_buf = malloc(sframe_shim_len);
	memcpy((void *)sframe_shim_buf, elf + off, sframe_shim_len);

	ret = sframe_init(&sec);
	if (ret) {
		printf("init %d\n", ret);
		return 1;
	}
	if (validate)
		printf("validate %d\n", sframe_validate(&sec));
	if (dump)
		sframe_user_dump(&sec);

	for (i++; i < argc; i++) {
		if (strcmp(argv[i], "-")) {
			if (lookup(&sec, &cache, strtoul(argv[i], NULL, 0)))
				return 1;
			continue;
		}
		while (fgets(line, sizeof(line), stdin))
			if (lookup(&sec, &cache, strtoul(line, NULL, 0)))
				return 1;
	}
	return 0;
}
