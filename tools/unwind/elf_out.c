// SPDX-License-Identifier: GPL-2.0
/*
 * eh2sframe --elf OUT FILE: a copy of FILE that carries its SFrame table.
 *
 * The table goes into a new read-only PT_LOAD at the end of the copy,
 * above every other segment, with PT_GNU_SFRAME pointing at it and a
 * .sframe section header for the tools that read sections. The program
 * header table has no spare entry, and the sections after it are code and
 * data at fixed addresses, so the longer table moves into the new segment
 * as well (as patchelf does when it adds a segment): e_phoff and PT_PHDR
 * point there. The kernel's ELF loader (AT_PHDR comes from the PT_LOAD
 * that holds e_phoff), ld.so and the kernel's SFrame discovery all find it
 * there. Nothing else of the file moves, so its code and data, its
 * build-id and its debug information stay as they were; the old program
 * header table stays in place, unused.
 *
 * The copy is written next to OUT and renamed over it, with FILE's mode,
 * so a failure leaves OUT as it was.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eh2sframe.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif

#define PAGE		0x1000ULL

/* A piece of the copy: @len bytes of @buf, or of zeros when @buf is NULL. */
struct part {
	const void	*buf;
	size_t		len;
};

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Read all of @name into a new buffer. */
static int read_all(const char *name, uint8_t **buf, size_t *len, mode_t *mode)
{
	struct stat st;
	size_t done = 0;
	ssize_t n;
	int fd;

	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "%s: %s\n", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: not a regular file\n", name);
		close(fd);
		return -1;
	}
	*buf = malloc(st.st_size ? st.st_size : 1);
	if (!*buf) {
		fprintf(stderr, "%s: out of memory\n", name);
		close(fd);
		return -1;
	}
	while (done < (size_t)st.st_size) {
		n = read(fd, *buf + done, st.st_size - done);
		if (n <= 0) {
			fprintf(stderr, "%s: %s\n", name,
				n ? strerror(errno) : "file shrank while read");
			free(*buf);
			close(fd);
			return -1;
		}
		done += n;
	}
	close(fd);
	*len = done;
	*mode = st.st_mode & 07777;
	return 0;
}

/* Write the pieces of the copy to a temporary file, then rename it to @out. */
static int write_copy(const char *out, mode_t mode, const struct part *parts,
		      int nparts)
{
	size_t tlen = strlen(out) + 16;
	char *tmp = malloc(tlen);
	int fd, i, ret = -1;
	FILE *f;

	if (!tmp)
		return -1;
	snprintf(tmp, tlen, "%s.XXXXXX", out);
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", out, strerror(errno));
		free(tmp);
		return -1;
	}
	f = fdopen(fd, "wb");
	if (!f) {
		close(fd);
		goto fail;
	}
	for (i = 0; i < nparts; i++) {
		if (parts[i].buf) {
			if (fwrite(parts[i].buf, 1, parts[i].len, f) != parts[i].len)
				break;
		} else if (fseeko(f, parts[i].len, SEEK_CUR)) {
			/* Zeros, as a hole: the last part is always data. */
			break;
		}
	}
	if (i < nparts || fchmod(fd, mode) || fclose(f)) {
		if (i < nparts)
			fclose(f);
		goto fail;
	}
	if (rename(tmp, out))
		goto fail;
	ret = 0;
	goto done;
fail:
	fprintf(stderr, "%s: %s\n", out, strerror(errno ? errno : EIO));
	unlink(tmp);
done:
	free(tmp);
	return ret;
}

/**
 * write_elf - write a copy of @name with its SFrame table to @out
 * @name:	the ELF file
 * @out:	the copy
 * @report:	print the table's coverage and where it went
 *
 * Return: 0, or -1 on an error (printed); @out is then left as it was.
 */
int write_elf(const char *name, const char *out, bool report)
{
	uint8_t *in = NULL, *str = NULL;
	Elf64_Phdr *ph, *nph = NULL;
	Elf64_Shdr *sh = NULL, *nsh = NULL;
	uint64_t max_end = 0, seg_off, seg_vaddr, tab_off, tab_vaddr;
	uint64_t ph_bytes, str_off = 0, str_len = 0, sh_off = 0;
	size_t len, i, j, nphnum, last_load = 0, nload = 0;
	struct part parts[8];
	struct table t = { 0 };
	Elf64_Ehdr eh;
	mode_t mode;
	int np = 0, ret = -1;

	if (read_all(name, &in, &len, &mode))
		return -1;
	if (len < sizeof(eh) || memcmp(in, ELFMAG, SELFMAG) ||
	    in[EI_CLASS] != ELFCLASS64 || in[EI_DATA] != ELFDATA2LSB) {
		fprintf(stderr, "%s: not a 64-bit little-endian ELF file\n", name);
		goto out;
	}
	memcpy(&eh, in, sizeof(eh));
	if (eh.e_machine != EM_X86_64 ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		fprintf(stderr, "%s: not an x86-64 executable or shared object\n",
			name);
		goto out;
	}
	if (eh.e_phentsize != sizeof(*ph) || !eh.e_phnum ||
	    eh.e_phnum > PN_XNUM - 3 || eh.e_phoff > len ||
	    (uint64_t)eh.e_phnum * sizeof(*ph) > len - eh.e_phoff ||
	    eh.e_phoff % 8) {
		fprintf(stderr, "%s: bad program header table\n", name);
		goto out;
	}
	ph = (Elf64_Phdr *)(in + eh.e_phoff);
	for (i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_GNU_SFRAME) {
			fprintf(stderr, "%s: has an SFrame section already (PT_GNU_SFRAME)\n",
				name);
			goto out;
		}
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_vaddr + ph[i].p_memsz < ph[i].p_vaddr) {
			fprintf(stderr, "%s: bad PT_LOAD\n", name);
			goto out;
		}
		if (ph[i].p_vaddr + ph[i].p_memsz > max_end)
			max_end = ph[i].p_vaddr + ph[i].p_memsz;
		last_load = i;
		nload++;
	}
	if (!nload) {
		fprintf(stderr, "%s: no PT_LOAD\n", name);
		goto out;
	}
	if (eh.e_shoff) {
		if (eh.e_shentsize != sizeof(*sh) || !eh.e_shnum ||
		    eh.e_shnum >= SHN_LORESERVE - 1 ||
		    eh.e_shstrndx == SHN_XINDEX || eh.e_shstrndx >= eh.e_shnum ||
		    eh.e_shoff > len || eh.e_shoff % 8 ||
		    (uint64_t)eh.e_shnum * sizeof(*sh) > len - eh.e_shoff) {
			fprintf(stderr, "%s: bad section header table\n", name);
			goto out;
		}
		sh = (Elf64_Shdr *)(in + eh.e_shoff);
		if (sh[eh.e_shstrndx].sh_type != SHT_STRTAB ||
		    sh[eh.e_shstrndx].sh_offset > len ||
		    sh[eh.e_shstrndx].sh_size > len - sh[eh.e_shstrndx].sh_offset) {
			fprintf(stderr, "%s: bad section name table\n", name);
			goto out;
		}
	}

	/*
	 * The new segment: right after the file's end, at the first page
	 * above every segment's memory, congruent to its offset modulo the
	 * page size as mmap() needs. The program headers first, then the
	 * table, 8-byte aligned.
	 */
	nphnum = eh.e_phnum + 2;
	ph_bytes = nphnum * sizeof(*ph);
	seg_off = align_up(len, 8);
	seg_vaddr = align_up(max_end, PAGE) + (seg_off & (PAGE - 1));
	tab_off = seg_off + align_up(ph_bytes, 8);
	tab_vaddr = seg_vaddr + align_up(ph_bytes, 8);
	if (make_table_at(name, report, tab_vaddr, &t))
		goto out;

	nph = calloc(nphnum, sizeof(*nph));
	if (!nph)
		goto nomem;
	for (i = 0, j = 0; i < eh.e_phnum; i++) {
		nph[j] = ph[i];
		if (ph[i].p_type == PT_PHDR) {
			nph[j].p_offset = seg_off;
			nph[j].p_vaddr = seg_vaddr;
			nph[j].p_paddr = seg_vaddr;
			nph[j].p_filesz = ph_bytes;
			nph[j].p_memsz = ph_bytes;
		}
		j++;
		/* PT_LOADs stay sorted by address: the new one is the last. */
		if (i == last_load) {
			nph[j].p_type = PT_LOAD;
			nph[j].p_flags = PF_R;
			nph[j].p_offset = seg_off;
			nph[j].p_vaddr = seg_vaddr;
			nph[j].p_paddr = seg_vaddr;
			nph[j].p_filesz = tab_off - seg_off + t.len;
			nph[j].p_memsz = nph[j].p_filesz;
			nph[j].p_align = PAGE;
			j++;
		}
	}
	nph[j].p_type = PT_GNU_SFRAME;
	nph[j].p_flags = PF_R;
	nph[j].p_offset = tab_off;
	nph[j].p_vaddr = tab_vaddr;
	nph[j].p_paddr = tab_vaddr;
	nph[j].p_filesz = t.len;
	nph[j].p_memsz = t.len;
	nph[j].p_align = 8;

	eh.e_phoff = seg_off;
	eh.e_phnum = nphnum;

	/* The section name table and the section headers, with .sframe, last. */
	if (sh) {
		const Elf64_Shdr *ss = &sh[eh.e_shstrndx];
		static const char sname[] = ".sframe";

		str_off = tab_off + t.len;
		str_len = ss->sh_size + sizeof(sname);
		sh_off = align_up(str_off + str_len, 8);
		str = malloc(str_len);
		nsh = calloc(eh.e_shnum + 1, sizeof(*nsh));
		if (!str || !nsh)
			goto nomem;
		memcpy(str, in + ss->sh_offset, ss->sh_size);
		memcpy(str + ss->sh_size, sname, sizeof(sname));
		memcpy(nsh, sh, eh.e_shnum * sizeof(*sh));
		nsh[eh.e_shstrndx].sh_offset = str_off;
		nsh[eh.e_shstrndx].sh_size = str_len;
		nsh[eh.e_shnum].sh_name = ss->sh_size;
		nsh[eh.e_shnum].sh_type = SHT_PROGBITS;
		nsh[eh.e_shnum].sh_flags = SHF_ALLOC;
		nsh[eh.e_shnum].sh_addr = tab_vaddr;
		nsh[eh.e_shnum].sh_offset = tab_off;
		nsh[eh.e_shnum].sh_size = t.len;
		nsh[eh.e_shnum].sh_addralign = 8;
		eh.e_shoff = sh_off;
		eh.e_shnum++;
	}

	memcpy(in, &eh, sizeof(eh));
	parts[np++] = (struct part){  in, len };
	parts[np++] = (struct part){  NULL, seg_off - len };
	parts[np++] = (struct part){  nph, ph_bytes };
	parts[np++] = (struct part){  NULL, tab_off - seg_off - ph_bytes };
	parts[np++] = (struct part){  t.buf, t.len };
	if (sh) {
		parts[np++] = (struct part){  str, str_len };
		parts[np++] = (struct part){  NULL, sh_off - str_off - str_len };
		parts[np++] = (struct part){  nsh, eh.e_shnum * sizeof(*nsh) };
	}
	if (write_copy(out, mode, parts, np))
		goto out;
	if (report) {
		printf("  %s: PT_GNU_SFRAME at %#" PRIx64 " (%zu bytes)",
		       out, tab_vaddr, t.len);
		printf(" in a new PT_LOAD at %#" PRIx64 " with the program headers\n",
		       seg_vaddr);
	}
	ret = 0;
	goto out;
nomem:
	fprintf(stderr, "%s: out of memory\n", name);
out:
	table_free(&t);
	free(nsh);
	free(str);
	free(nph);
	free(in);
	return ret;
}
