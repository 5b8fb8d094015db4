// SPDX-License-Identifier: GPL-2.0
/*
 * Which SFrame section describes a user code address.
 *
 * Every file-backed executable mapping is examined lazily, the first time a
 * walk meets an address in it: the program headers of the mapped ELF file
 * are read, PT_GNU_SFRAME is located through the PT_LOAD that holds the
 * mapping, and the section's header is checked. The headers are read from
 * the process's own memory, where the first PT_LOAD (which starts at file
 * offset 0) maps them, or the PT_LOAD that a tool moved the program headers
 * to when it added a segment, never from the file: a walk runs in the traced
 * task's exit path and must not raise LSM or fsnotify events, read a device
 * with side effects, or wait for a network file system. A failure that may
 * pass (no memory, a fault, a fatal signal, a lock not had) is not kept:
 * the mapping is examined again by a later walk. The result, including "this
 * mapping has no section", is kept in the VMA itself (vma->sframe_info), so
 * each mapping is examined once, and the entry lives and dies with it:
 * munmap() and dlclose() free it with the VMA, fork() and VMA splits share
 * it with a reference, and new code mapped at the same address is a new VMA
 * that starts unexamined. "No section and no table" is kept with the
 * generation of the table store it was found at: a table loaded later makes
 * the answer stale, and the mapping is examined again (and an entry with
 * only its own section looks for the table again). The executable, the
 * dynamic linker, every library mapped at startup and every library
 * dlopen()ed later are covered alike, with no help from glibc, ld.so or the
 * program.
 *
 * The entry holds the text's position relative to the ELF file's load bias,
 * which is worked out again from the VMA on each lookup, so a shared entry
 * stays right for every copy of the mapping; the section is read where it
 * was found.
 *
 * Lifetime: the VMA's reference to its entry is dropped only when the VMA
 * is freed. Walks of the same mm read vma->sframe_info under the VMA's read
 * lock (or mmap_lock for reading), which other walks hold at the same time,
 * and take their own reference after reading it: so a walk that finds a
 * section malformed marks the VMA's pointer (SFRAME_VMA_DROPPED) instead of
 * releasing the reference another walk may be about to take.
 *
 * Locking: the walk holds no lock while it reads user memory, because the
 * page fault handler may need mmap_lock, and a writer queued between two
 * readers would deadlock the task. The VMA is looked up and its entry taken
 * (with a reference) under the per-VMA read lock, or failing that under
 * mmap_lock for reading, taken killable with no other lock held; both are
 * dropped before the section or the headers are read. Another thread may
 * unmap them meanwhile: the read then fails and the walk ends cleanly.
 */

#include <linux/elf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/unwind_user.h>
#include <uapi/linux/sframe_table.h>

#include "sframe.h"

/* Not in <uapi/linux/elf.h> yet: GNU's value, as in binutils' elf.h. */
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		0x6474e554
#endif

/* Cap on the program headers read; real files have about a dozen. */
#define SFRAME_MAX_PHDRS	64

/* Cap on the bytes of one PT_NOTE searched for the build-id. */
#define SFRAME_MAX_NOTES	1024

/* GNU's note type, as in binutils' elf/common.h; lib/buildid.c has its own. */
#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID		3
#endif

/*
 * Cap on the mappings looked at, going down from an executable mapping, for
 * the same file's mapping at offset 0: a file has a few PT_LOADs, and ld.so
 * leaves a PROT_NONE mapping of the file in each alignment gap.
 */
#define SFRAME_MAX_SEGMENTS	16

/**
 * struct sframe_vma_info - the SFrame tables of one executable mapping
 * @ref:	references: one per VMA that points here, one per walk using it
 * @delta:	p_vaddr - p_offset of the PT_LOAD that holds the mapping
 * @text_start:	start of the file's executable segments (all its PF_X
 *		PT_LOADs, not only the mapping), relative to the load bias
 * @text_end:	their end, relative to the load bias
 * @own:	@sec is valid: the file's own section
 * @bad:	the file's own section is malformed: a walk ends in code that
 *		@table does not describe
 * @sec:	the file's own section: where it was found, as a user address
 *		(mremap() of the text alone does not move it), and the text
 *		range relative to the load bias
 * @sec_bias:	the load bias when @sec was found: the functions' addresses
 *		that @sec gives are those of the text as it was mapped then
 * @table:	a table loaded for the file's build-id, with a reference, or
 *		NULL; set at most once, with cmpxchg()
 * @gen:	while @table is NULL: the store generation last looked in
 * @build_id_len: length of @build_id, 0 when the file has none
 * @build_id:	the file's GNU build-id, to look for a table loaded later
 *
 * An address is looked up in the file's own section first, then in the
 * loaded table: an assembler leaves some code out of the section it makes
 * (the PLT; in a static program, everything linked from objects built
 * without SFrame), and the table made from .eh_frame describes it.
 */
struct sframe_vma_info {
	refcount_t		ref;
	unsigned long		delta;
	unsigned long		text_start;
	unsigned long		text_end;
	bool			own;
	bool			bad;
	struct sframe_section	sec;
	unsigned long		sec_bias;
	struct sframe_table	*table;
	u64			gen;
	u8			build_id_len;
	u8			build_id[SFRAME_TABLE_BUILD_ID_MAX];
};

/*
 * vma->sframe_info is NULL (not examined), an entry with a reference for
 * the VMA, the same entry with SFRAME_VMA_DROPPED set (its section turned
 * out malformed in this mm: the walk ends there; the VMA keeps its
 * reference until it is freed), or sframe_vma_none(gen): examined at store
 * generation gen and found to have no section and no table. SFRAME_VMA_NEVER
 * is "none" at a generation the store never reaches: nothing a load can
 * change (not an ELF file of ours).
 */
#define SFRAME_VMA_NONE_TAG	1UL
#define SFRAME_VMA_DROPPED	2UL
#define SFRAME_VMA_NEVER	((struct sframe_vma_info *)~SFRAME_VMA_DROPPED)

static struct sframe_vma_info *sframe_vma_none(u64 gen)
{
	return (struct sframe_vma_info *)((unsigned long)gen << 2 |
					  SFRAME_VMA_NONE_TAG);
}

/* The entry a value of vma->sframe_info refers to, dropped or not, or NULL. */
static struct sframe_vma_info *sframe_vma_entry(struct sframe_vma_info *v)
{
	unsigned long x = (unsigned long)v;

	if (x & SFRAME_VMA_NONE_TAG)
		return NULL;
	return (struct sframe_vma_info *)(x & ~SFRAME_VMA_DROPPED);
}

/* A "none" found before the store reached generation @gen. */
static bool sframe_vma_stale(struct sframe_vma_info *v, u64 gen)
{
	unsigned long x = (unsigned long)v;

	return (x & SFRAME_VMA_NONE_TAG) && v != SFRAME_VMA_NEVER &&
	       x >> 2 != (unsigned long)(gen & (~0UL >> 2));
}

/* The entry of a value that is neither "none" nor dropped, or NULL. */
static struct sframe_vma_info *sframe_vma_live(struct sframe_vma_info *v)
{
	if ((unsigned long)v & (SFRAME_VMA_NONE_TAG | SFRAME_VMA_DROPPED))
		return NULL;
	return v;
}

#ifdef CONFIG_UNWIND_TEST_CLIENT
void (*sframe_vma_test_hook)(void);

/*
 * Between reading a VMA's entry and taking the walk's reference to it, with
 * the VMA read-locked: the test client parks a walk here while another
 * thread of the mm walks the same mapping (contract 22).
 */
static void sframe_vma_test_park(void)
{
	typeof(sframe_vma_test_hook) hook = READ_ONCE(sframe_vma_test_hook);

	if (hook)
		hook();
}
#else
static inline void sframe_vma_test_park(void)
{
}
#endif

static void sframe_info_put(struct sframe_vma_info *info)
{
	if (info && refcount_dec_and_test(&info->ref)) {
		sframe_table_put(info->table);
		kfree(info);
	}
}

/**
 * sframe_vma_dup - a VMA was copied (fork, split, mremap)
 * @vma: the copy, whose sframe_info came with the copied bytes
 *
 * The original still holds its reference: it is freed only after this,
 * and its pointer is never released while it lives (a drop marks it).
 *
 * Context: any; does not sleep.
 */
void sframe_vma_dup(struct vm_area_struct *vma)
{
	struct sframe_vma_info *info = sframe_vma_entry(READ_ONCE(vma->sframe_info));

	if (info)
		refcount_inc(&info->ref);
}

/**
 * sframe_vma_free - a VMA is being freed
 * @vma: the VMA
 *
 * Context: any, including the RCU callback that frees VMAs; does not sleep.
 */
void sframe_vma_free(struct vm_area_struct *vma)
{
	sframe_info_put(sframe_vma_entry(vma->sframe_info));
	vma->sframe_info = NULL;
}

/* The load bias of the ELF file mapped by a VMA, from @info's PT_LOAD. */
static unsigned long sframe_bias(unsigned long vm_start, unsigned long pgoff,
				 unsigned long delta)
{
	return vm_start - (pgoff << PAGE_SHIFT) - delta;
}

/**
 * struct sframe_vma_where - an executable mapping and its ELF headers
 * @start:	start of the executable mapping
 * @end:	its end
 * @pgoff:	its file offset, in pages
 * @hdr:	start of the same file's mapping at file offset 0
 * @hdr_len:	that mapping's length
 * @inode:	the file's inode, only compared (the walk holds the file)
 */
struct sframe_vma_where {
	unsigned long	start;
	unsigned long	end;
	unsigned long	pgoff;
	unsigned long	hdr;
	unsigned long	hdr_len;
	struct inode	*inode;
};

/* A new entry for a file whose executable mapping is held by @load. */
static struct sframe_vma_info *sframe_info_new(const struct elf64_phdr *load)
{
	struct sframe_vma_info *info = kzalloc(sizeof(*info), GFP_KERNEL_ACCOUNT);

	if (info) {
		refcount_set(&info->ref, 1);
		info->delta = load->p_vaddr - load->p_offset;
	}
	return info;
}

/*
 * Find the GNU build-id in the PT_NOTE segment @ph of a file loaded at
 * @bias, reading it from user memory. Returns its length (filling @id), 0
 * when the segment has none, or -EFAULT when it could not be read.
 */
static int sframe_build_id(const struct elf64_phdr *ph, unsigned long bias,
			   u8 *id)
{
	size_t len = min_t(u64, ph->p_filesz, SFRAME_MAX_NOTES), pos = 0;
	unsigned int align = ph->p_align == 8 ? 8 : 4;
	u8 *buf;
	int ret = 0;

	if (len < sizeof(struct elf64_note))
		return 0;
	buf = kmalloc(len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (copy_from_user(buf, (const void __user *)(bias + ph->p_vaddr), len)) {
		ret = -EFAULT;
		goto out;
	}
	while (len - pos >= sizeof(struct elf64_note)) {
		struct elf64_note n;
		size_t name, desc;

		memcpy(&n, buf + pos, sizeof(n));
		name = pos + sizeof(n);
		desc = name + ALIGN((u64)n.n_namesz, align);
		if (desc > len || ALIGN((u64)n.n_descsz, align) > len - desc)
			break;
		if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 &&
		    !memcmp(buf + name, "GNU", 4) && n.n_descsz &&
		    n.n_descsz <= SFRAME_TABLE_BUILD_ID_MAX) {
			memcpy(id, buf + desc, n.n_descsz);
			ret = n.n_descsz;
			break;
		}
		pos = desc + ALIGN((u64)n.n_descsz, align);
	}
out:
	kfree(buf);
	return ret;
}

/*
 * Give @info the table loaded for its file's build-id, if one is loaded now
 * and was made for a file of the same layout: a table whose text range is
 * not the file's executable segments belongs to another file that claims
 * the same build-id, and is never used for this one. @gen is the store's
 * generation, read before the lookup: a table added after it makes the
 * entry look again. The table is set once; a concurrent walk that set it
 * first wins.
 *
 * Context: any; does not sleep.
 */
static void sframe_info_find_table(struct sframe_vma_info *info, u64 gen)
{
	struct sframe_table *t;

	if (READ_ONCE(info->table))
		return;
	/* None for a file without a build-id. */
	t = sframe_table_get(info->build_id, info->build_id_len);
	if (t && (t->text_vaddr != info->text_start ||
		  t->text_size != info->text_end - info->text_start)) {
		sframe_table_put(t);
		t = NULL;
	}
	if (t && cmpxchg(&info->table, NULL, t))
		sframe_table_put(t);
	WRITE_ONCE(info->gen, gen);
}

/*
 * Read the build-id of the file (its ELF program headers @phdrs, loaded at
 * @bias) into @info, and look its table up. A note that cannot be read is
 * taken as no build-id: notes need not be in a loaded segment, and the
 * file's own section must not wait for them. Returns 0, or -ENOMEM, which
 * may pass.
 */
static int sframe_discover_table(const struct elf64_phdr *phdrs, int phnum,
				 unsigned long bias, struct sframe_vma_info *info,
				 u64 gen)
{
	int i, len = 0;

	/*
	 * A note that cannot be read, or holds no build-id, hides nothing:
	 * the build-id may be in a later one (a note the file's author made
	 * unreadable comes first, say).
	 */
	for (i = 0; i < phnum && len <= 0; i++) {
		if (phdrs[i].p_type != PT_NOTE)
			continue;
		len = sframe_build_id(&phdrs[i], bias, info->build_id);
		if (len == -ENOMEM)
			return len;
	}
	info->build_id_len = max(len, 0);
	sframe_info_find_table(info, gen);
	return 0;
}

/*
 * Set @info's own section from the file's PT_GNU_SFRAME @sframe, when it is
 * usable. Returns 0 (usable or not), or -EFAULT when the section could not
 * be read now: that may pass.
 */
static int sframe_discover_own(struct sframe_vma_info *info,
			       const struct elf64_phdr *sframe, unsigned long bias)
{
	struct sframe_section *sec = &info->sec;
	int ret;

	if (!sframe->p_memsz || sframe->p_vaddr + sframe->p_memsz < sframe->p_vaddr)
		return 0;
	/*
	 * p_memsz may be larger than the section (ld reserves the size before
	 * merging); the header's own counts bound it within that.
	 */
	/*
	 * The text is the file's executable segments, whatever part of them
	 * this VMA holds now: a split (madvise(), mlock(), mprotect() of part
	 * of the text) or a merge later changes the VMA, not the functions.
	 */
	sec->sframe_start = bias + sframe->p_vaddr;
	sec->sframe_end = sec->sframe_start + sframe->p_memsz;
	sec->text_start = bias + info->text_start;
	sec->text_end = bias + info->text_end;
	if (sec->sframe_end < sec->sframe_start)
		return 0;
	/*
	 * An unreadable section may be readable later. One whose header this
	 * reader does not accept (a later version, say) is as if absent.
	 */
	ret = sframe_init(sec);
	if (ret)
		return ret == -EFAULT ? -EFAULT : 0;
	/*
	 * A malformed one ends the walk (contract 14), as when a lookup finds
	 * it so without CONFIG_UNWIND_USER_SFRAME_VALIDATE.
	 */
	if (IS_ENABLED(CONFIG_UNWIND_USER_SFRAME_VALIDATE)) {
		ret = sframe_validate(sec);
		if (ret == -EFAULT)
			return ret;
		if (ret) {
			info->bad = true;
			return 0;
		}
	}
	/*
	 * The text is kept relative to the load bias, which each lookup works
	 * out from its VMA: the VMA may be copied or moved. The section stays
	 * where it was found: mremap() of the text VMA alone moves the code,
	 * not the segment that holds the section.
	 */
	sec->text_start = info->text_start;
	sec->text_end = info->text_end;
	info->sec_bias = bias;
	info->own = true;
	return 0;
}

/*
 * Where the program headers of the file mapped at @where are mapped, when
 * they are not in its mapping at offset 0: a tool that adds a segment to a
 * file (eh2sframe --elf, patchelf) moves them to a new PT_LOAD at its end,
 * where the kernel's ELF loader and ld.so find them through e_phoff. Look
 * for a readable mapping of the same file that holds file offsets [@off,
 * @off + @size), among the mappings above the headers'; the caller checks
 * that the PT_LOAD read there maps them at that address. Returns the user
 * address, 0 when no such mapping is there, or -EINTR when a fatal signal
 * came while waiting for mmap_lock.
 *
 * Context: task context, no lock held; takes mmap_lock for reading.
 */
static long sframe_find_phdrs(const struct sframe_vma_where *where, u64 off,
			      size_t size)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	struct vma_iterator vmi;
	unsigned long addr = 0;
	int n = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	vma_iter_init(&vmi, mm, where->hdr);
	for_each_vma(vmi, vma) {
		u64 start = (u64)vma->vm_pgoff << PAGE_SHIFT;
		unsigned long len = vma->vm_end - vma->vm_start;

		/* A file's segments, its gaps and its .bss: a few VMAs. */
		if (++n > 4 * SFRAME_MAX_SEGMENTS)
			break;
		if (!vma->vm_file || file_inode(vma->vm_file) != where->inode ||
		    !(vma->vm_flags & VM_READ))
			continue;
		if (off >= start && off - start < len &&
		    size <= len - (off - start)) {
			addr = vma->vm_start + (off - start);
			break;
		}
	}
	mmap_read_unlock(mm);
	return addr;
}

/*
 * Read the ELF headers of the file mapped at @where from user memory and
 * find its SFrame section and the table loaded for it. Returns a new entry,
 * sframe_vma_none(@gen) when the file has neither (SFRAME_VMA_NEVER when it
 * is not an ELF file the walk can use), or an ERR_PTR() for a failure that
 * may pass (-ENOMEM, or -EFAULT when the headers or the section could not
 * be read): then nothing is kept and the mapping is examined again next
 * time. @gen is the table store's generation, read before.
 *
 * Context: task context, no lock held; reads user memory, may fault.
 */
static struct sframe_vma_info *sframe_discover(const struct sframe_vma_where *where,
					       u64 gen)
{
	u64 off = (u64)where->pgoff << PAGE_SHIFT;
	const struct elf64_phdr *load = NULL, *sframe = NULL, *first = NULL;
	const struct elf64_phdr *phload = NULL;
	unsigned long bias, phdr_addr, text_start, text_end;
	struct sframe_vma_info *info;
	struct elf64_phdr *phdrs;
	struct elf64_hdr ehdr;
	size_t size;
	long found;
	int i, ret;

	if (where->hdr_len < sizeof(ehdr))
		return SFRAME_VMA_NEVER;
	if (copy_from_user(&ehdr, (const void __user *)where->hdr, sizeof(ehdr)))
		return ERR_PTR(-EFAULT);
	if (memcmp(ehdr.e_ident, ELFMAG, SELFMAG) ||
	    ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
	    ehdr.e_machine != EM_X86_64 ||
	    ehdr.e_phentsize != sizeof(*phdrs) ||
	    !ehdr.e_phnum || ehdr.e_phnum > SFRAME_MAX_PHDRS)
		return SFRAME_VMA_NEVER;

	/* Mapped with the ELF header, or moved to a segment of their own. */
	size = ehdr.e_phnum * sizeof(*phdrs);
	if (ehdr.e_phoff <= where->hdr_len &&
	    size <= where->hdr_len - ehdr.e_phoff) {
		phdr_addr = where->hdr + ehdr.e_phoff;
	} else {
		found = sframe_find_phdrs(where, ehdr.e_phoff, size);
		if (found < 0)
			return ERR_PTR(found);
		if (!found)
			return SFRAME_VMA_NEVER;
		phdr_addr = found;
	}
	phdrs = kmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!phdrs)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(phdrs, (const void __user *)phdr_addr, size)) {
		info = ERR_PTR(-EFAULT);
		goto out;
	}

	text_start = ULONG_MAX;
	text_end = 0;
	for (i = 0; i < ehdr.e_phnum; i++) {
		const struct elf64_phdr *ph = &phdrs[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    ph->p_vaddr + ph->p_memsz >= ph->p_vaddr) {
			text_start = min(text_start, ph->p_vaddr);
			text_end = max(text_end, ph->p_vaddr + ph->p_memsz);
		}
		if (ph->p_type == PT_GNU_SFRAME)
			sframe = ph;
		else if (ph->p_type == PT_LOAD && !ph->p_offset && !first)
			first = ph;
		if (ph->p_type == PT_LOAD && ph->p_offset <= ehdr.e_phoff &&
		    ehdr.e_phoff - ph->p_offset < ph->p_filesz)
			phload = ph;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    off >= round_down(ph->p_offset, PAGE_SIZE) &&
		    off < ph->p_offset + ph->p_filesz)
			load = ph;
	}
	info = SFRAME_VMA_NEVER;
	if (!load || !first || load->p_vaddr + load->p_memsz < load->p_vaddr)
		goto out;

	bias = sframe_bias(where->start, where->pgoff,
			   load->p_vaddr - load->p_offset);
	/*
	 * The headers read must be those of this load of the file: the
	 * mapping at offset 0 has the same load bias as the executable one,
	 * and so has the PT_LOAD that holds the program headers. lld puts a
	 * small file's executable segment in the file's first page, after the
	 * headers: the executable mapping then starts at offset 0 itself, and
	 * holds the headers of this very load.
	 */
	if (where->hdr != where->start &&
	    where->hdr != bias + round_down(first->p_vaddr, PAGE_SIZE))
		goto out;
	if (phdr_addr != where->hdr + ehdr.e_phoff &&
	    (!phload || phdr_addr != bias + phload->p_vaddr +
			 (ehdr.e_phoff - phload->p_offset)))
		goto out;

	info = sframe_info_new(load);
	if (!info) {
		info = ERR_PTR(-ENOMEM);
		goto out;
	}
	info->text_start = text_start;
	info->text_end = text_end;
	ret = sframe_discover_table(phdrs, ehdr.e_phnum, bias, info, gen);
	if (!ret && sframe)
		ret = sframe_discover_own(info, sframe, bias);
	if (ret) {
		/* Unreadable or no memory now may pass: keep nothing. */
		sframe_info_put(info);
		info = ERR_PTR(ret);
		goto out;
	}
	if (!info->own && !info->bad && !info->table) {
		sframe_info_put(info);
		info = sframe_vma_none(gen);
	}
out:
	kfree(phdrs);
	return info;
}

/*
 * Find where the ELF headers of @vma's file are mapped: @vma itself when it
 * starts at file offset 0, else the mapping of the same file at offset 0
 * just below it. Sets @where->hdr_len to 0 when there is none.
 *
 * Context: mmap_lock held for reading.
 */
static void sframe_find_headers(struct mm_struct *mm, struct vm_area_struct *vma,
				struct sframe_vma_where *where)
{
	struct inode *inode = file_inode(vma->vm_file);
	struct vm_area_struct *v = vma, *prev;
	int n;

	where->hdr = 0;
	where->hdr_len = 0;
	for (n = 0; n < SFRAME_MAX_SEGMENTS; n++) {
		/*
		 * Not readable now (mprotect()) is a failure that may pass:
		 * the read fails and nothing is kept.
		 */
		if (!v->vm_pgoff) {
			where->hdr = v->vm_start;
			where->hdr_len = v->vm_end - v->vm_start;
			return;
		}
		find_vma_prev(mm, v->vm_start, &prev);
		if (!prev || !prev->vm_file || file_inode(prev->vm_file) != inode)
			return;
		/*
		 * A gap that ld.so made inaccessible between two segments of a
		 * file aligned to more than a page keeps the file offset of its
		 * address in the first mapping, which can be above the segment
		 * after it: step over it.
		 */
		if (prev->vm_pgoff &&
		    !(prev->vm_flags & (VM_READ | VM_WRITE | VM_EXEC))) {
			v = prev;
			continue;
		}
		if (prev->vm_pgoff >= v->vm_pgoff)
			return;
		v = prev;
	}
}

/*
 * Lock the VMA holding @ip for reading: per-VMA lock, or mmap_lock, waited
 * for with no other lock held (a walk must not fall back to guessing just
 * because another thread holds the lock). Sets *@mmap_locked for
 * sframe_vma_unlock(). Returns NULL when no VMA holds @ip, or
 * ERR_PTR(-EINTR) when a fatal signal came while waiting.
 */
static struct vm_area_struct *sframe_vma_lock(struct mm_struct *mm,
					      unsigned long ip,
					      bool *mmap_locked)
{
	struct vm_area_struct *vma;

	*mmap_locked = false;
#ifdef CONFIG_PER_VMA_LOCK
	vma = lock_vma_under_rcu(mm, ip);
	if (vma)
		return vma;
#endif
	if (mmap_read_lock_killable(mm))
		return ERR_PTR(-EINTR);
	vma = vma_lookup(mm, ip);
	if (!vma) {
		mmap_read_unlock(mm);
		return NULL;
	}
	*mmap_locked = true;
	return vma;
}

static void sframe_vma_unlock(struct mm_struct *mm, struct vm_area_struct *vma,
			      bool mmap_locked)
{
	if (mmap_locked)
		mmap_read_unlock(mm);
#ifdef CONFIG_PER_VMA_LOCK
	else
		vma_end_read(vma);
#endif
}

/*
 * Attach @info, examined for the mapping at @where, to its VMA in place of
 * @old (NULL or a stale "none") if that is still the mapping examined, or
 * use what another walk attached first. Returns the value to use; an entry
 * in it carries a reference for the walk (none when it is dropped).
 */
static struct sframe_vma_info *sframe_attach(struct mm_struct *mm, unsigned long ip,
					     const struct sframe_vma_where *where,
					     struct file *file,
					     struct sframe_vma_info *old,
					     struct sframe_vma_info *info)
{
	struct sframe_vma_info *cur;
	struct vm_area_struct *vma;
	bool locked;

	vma = sframe_vma_lock(mm, ip, &locked);
	if (IS_ERR_OR_NULL(vma))
		return info;	/* Not attached: the walk's is the only reference. */
	if (vma->vm_file == file && vma->vm_start == where->start &&
	    vma->vm_pgoff == where->pgoff) {
		cur = cmpxchg(&vma->sframe_info, old, info);
		if (cur != old) {
			/* Another walk was first: use what it found. */
			sframe_info_put(sframe_vma_entry(info));
			info = cur;
		}
		/* The VMA holds it, and is read-locked: take the walk's own. */
		if (sframe_vma_live(info))
			refcount_inc(&info->ref);
	}
	sframe_vma_unlock(mm, vma, locked);
	return info;
}

/*
 * Find the entry for @ip and fill @w's cache with it. Returns 0 with
 * w->info set (a reference held) or NULL (no section); -ENOENT when no
 * mapping holds @ip; -EAGAIN when the mapping could not be examined now (no
 * VMA lock because of a fatal signal, no memory, headers or section
 * unreadable): then nothing is cached and the walk must stop rather than
 * guess.
 */
static int sframe_walk_lookup(struct unwind_user_sframe *w, unsigned long ip)
{
	struct mm_struct *mm = current->mm;
	u64 gen = sframe_tables_generation();
	struct sframe_vma_info *info, *old;
	struct sframe_vma_where where;
	struct vm_area_struct *vma;
	struct file *file;
	bool locked;

	/*
	 * The topmost frame's address is whatever the task had in its
	 * instruction pointer: no mapping holds one outside user space, and
	 * finding that out must not wait for mmap_lock (which the task's
	 * other threads may hold for as long as they like).
	 */
	if (ip >= TASK_SIZE_MAX)
		return -ENOENT;
	vma = sframe_vma_lock(mm, ip, &locked);
	if (IS_ERR(vma))
		return -EAGAIN;
	/* No mapping holds @ip: certainly no section, the frame pointer may do. */
	if (!vma)
		return -ENOENT;
	where.start = vma->vm_start;
	where.end = vma->vm_end;
	where.pgoff = vma->vm_pgoff;
	old = READ_ONCE(vma->sframe_info);
	sframe_vma_test_park();
	/* Only a regular file is ever read: nothing else holds ELF code. */
	if (!(vma->vm_flags & VM_EXEC) || !vma->vm_file ||
	    !S_ISREG(file_inode(vma->vm_file)->i_mode))
		old = SFRAME_VMA_NEVER;
	/* A table was loaded since this mapping was found to have none. */
	if (sframe_vma_stale(old, gen))
		goto examine;
	if (old) {
		info = old;
		/*
		 * The VMA's reference lasts as long as the VMA, which the
		 * lock holds: take the walk's own before letting go.
		 */
		if (sframe_vma_live(info))
			refcount_inc(&info->ref);
		sframe_vma_unlock(mm, vma, locked);
		goto found;
	}
examine:
	/*
	 * Unexamined: its headers are mapped below it, look with mmap_lock.
	 * The file reference only keeps the pointer compared in
	 * sframe_attach() from being reused; it is never read. Its last fput()
	 * is deferred to task work, so no file is released in the walk.
	 */
	file = get_file(vma->vm_file);
	where.inode = file_inode(file);
	if (!locked) {
		sframe_vma_unlock(mm, vma, locked);
		if (mmap_read_lock_killable(mm)) {
			fput(file);
			return -EAGAIN;
		}
		vma = vma_lookup(mm, ip);
		if (!vma || vma->vm_file != file || vma->vm_start != where.start ||
		    vma->vm_pgoff != where.pgoff) {
			/* Changed under us: examine whatever is there next time. */
			mmap_read_unlock(mm);
			fput(file);
			return -EAGAIN;
		}
	}
	sframe_find_headers(mm, vma, &where);
	mmap_read_unlock(mm);

	info = where.hdr_len ? sframe_discover(&where, gen) : SFRAME_VMA_NEVER;
	if (IS_ERR(info)) {
		fput(file);
		return -EAGAIN;
	}
	info = sframe_attach(mm, ip, &where, file, old, info);
	fput(file);
found:
	w->start = where.start;
	w->end = where.end;
	w->info = NULL;
	w->none = !sframe_vma_entry(info);
	w->dropped = !w->none && !sframe_vma_live(info);
	if (w->none || w->dropped)
		return 0;
	w->info = info;
	w->bias = sframe_bias(where.start, where.pgoff, info->delta);
	/* Found with its own section only: a table may have come since. */
	if (!READ_ONCE(info->table) && READ_ONCE(info->gen) != gen)
		sframe_info_find_table(info, gen);
	return 0;
}

/*
 * The section of the mapping holding @ip turned out malformed: mark that
 * mapping so that walks end there, in this mm only. The entry may be shared
 * with the copies of the mapping in other processes (fork), and what one
 * process does to its copy of the section must not turn SFrame off for
 * another. The VMA keeps its reference: other walks of this mm hold the
 * same shared lock, and one may have read the pointer without having its
 * own reference yet.
 */
static void sframe_drop(unsigned long ip, struct sframe_vma_info *info)
{
	struct sframe_vma_info *dropped;
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	bool locked;

	dropped = (struct sframe_vma_info *)((unsigned long)info | SFRAME_VMA_DROPPED);
	vma = sframe_vma_lock(mm, ip, &locked);
	if (IS_ERR_OR_NULL(vma))
		return;
	cmpxchg(&vma->sframe_info, info, dropped);
	sframe_vma_unlock(mm, vma, locked);
}

/*
 * Look @ip up in @rel, one of w->info's sections, with its cache. The
 * section is at @sframe_bias plus its addresses, and describes the text as
 * it was at @text_bias: an @ip of text moved since (mremap() of the text
 * alone) is looked up where that text was.
 */
static int sframe_vma_find_in(struct unwind_user_sframe *w,
			      const struct sframe_section *rel,
			      unsigned long sframe_bias, unsigned long text_bias,
			      struct sframe_cache *cache, unsigned long ip,
			      struct unwind_user_frame *frame)
{
	unsigned long at = ip - w->bias + text_bias;
	struct sframe_section sec;
	int ret;

	/*
	 * The return address answered last time in this mapping (recursion):
	 * its row again, before even rebuilding the section's addresses.
	 */
	if (cache->have_ip && cache->ip == at) {
		ret = cache->ret;
		if (!ret)
			*frame = cache->frame;
		goto out;
	}
	/* Code between its functions, as the last search found: none. */
	if (at - cache->gap_start < cache->gap_len)
		return -ENOENT;

	sec = *rel;
	sec.sframe_start += sframe_bias;
	sec.sframe_end += sframe_bias;
	sec.text_start += text_bias;
	sec.text_end += text_bias;
	sec.reads_left = &w->reads_left;
	ret = sframe_find_cached(&sec, cache, at, frame);
	/*
	 * A malformed section is dropped for good; what was walked stays,
	 * but no rule kept by this walk is used again.
	 */
	if (ret == -EINVAL) {
		sframe_drop(ip, w->info);
		w->dropped = true;
		memset(w->memo, 0, sizeof(w->memo));
		return ret;
	}
out:
	/* For unwind_user_sframe_again(). */
	if (!ret && ip)
		unwind_user_sframe_keep(w, ip, frame);
	return ret;
}

/**
 * unwind_user_sframe_find - the frame rule for a user address, from SFrame
 * @w: the walk's cache: zeroed, with @w->reads_left set, before the first call
 * @ip: the code address: the topmost frame's IP, or a return address - 1
 * @frame: filled in on success
 *
 * Context: task context of current, no locks held; reads user memory (never
 * a file), may fault and sleep; may wait for mmap_lock, killably.
 * Return: 0 with @frame filled in; %SFRAME_OUTERMOST when the section marks
 * the outermost frame; -EAGAIN when the mapping of @ip could not be
 * examined now (a fatal signal, no memory, its headers unreadable) or the
 * walk's budget of section reads is spent: stop the walk, since @ip's code
 * may have a section; -EINVAL or -EFAULT when its section is malformed (now
 * or before, in this mm) or cannot be read, and -EOPNOTSUPP for a rule a
 * frame cannot express: stop the walk too; -ENOENT when SFrame does not
 * cover @ip (no mapping, no section, not in the section): use frame
 * pointers.
 */
int unwind_user_sframe_find(struct unwind_user_sframe *w, unsigned long ip,
			    struct unwind_user_frame *frame)
{
	struct sframe_table *table;
	int ret;

	if (!current->mm)
		return -EINVAL;
	if (!(ip >= w->start && ip < w->end)) {
		unwind_user_sframe_done(w);
		ret = sframe_walk_lookup(w, ip);
		if (ret)
			return ret;
	}
	if (w->dropped)
		return -EINVAL;
	if (w->none)
		return -ENOENT;
	/* Set at most once, after the table's section was set up. */
	table = READ_ONCE(w->info->table);
	if (w->info->bad && !table)
		return -EINVAL;
	if (w->info->own) {
		/* Found where it was; only its text moves with the mapping. */
		ret = sframe_vma_find_in(w, &w->info->sec, 0, w->info->sec_bias,
					 &w->cache, ip, frame);
		/* Code the section leaves out may be in the loaded table. */
		if (ret != -ENOENT || !table)
			return ret;
	}
	return sframe_vma_find_in(w, &table->sec, w->bias, w->bias, &w->tcache,
				  ip, frame);
}

/**
 * unwind_user_sframe_done - drop what a walk cached about its mapping
 * @w: the walk's cache
 *
 * The rules it keeps by address (@w->memo) stay: they hold for the whole
 * walk, in any mapping.
 */
void unwind_user_sframe_done(struct unwind_user_sframe *w)
{
	sframe_info_put(w->info);
	w->info = NULL;
	w->start = 0;
	w->end = 0;
	w->none = false;
	w->dropped = false;
	memset(&w->cache, 0, sizeof(w->cache));
	memset(&w->tcache, 0, sizeof(w->tcache));
}

#ifdef CONFIG_UNWIND_DEFERRED_BENCH
/**
 * sframe_mm_usage - what the SFrame registry holds for an mm, for the bench
 * @mm: the mm
 * @u: filled in
 *
 * Counts the file-backed executable mappings of @mm, those examined, those
 * with a section, and the bytes allocated for their entries (ksize()). A
 * mapping without a section holds only the sentinel and costs nothing. An
 * entry shared by neighbouring VMAs (a split mapping) is counted once.
 *
 * Context: task context; takes mmap_lock for reading.
 * Return: 0, or -EINTR when a fatal signal came while waiting for the lock.
 */
int sframe_mm_usage(struct mm_struct *mm, struct sframe_mm_usage *u)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct sframe_vma_info *info, *last = NULL;
	struct vm_area_struct *vma;

	memset(u, 0, sizeof(*u));
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	for_each_vma(vmi, vma) {
		u->vmas++;
		if (!(vma->vm_flags & VM_EXEC) || !vma->vm_file)
			continue;
		u->exec++;
		info = READ_ONCE(vma->sframe_info);
		if (!info)
			continue;
		u->examined++;
		/* The VMA's reference lasts as long as the VMA: mmap_lock. */
		info = sframe_vma_entry(info);
		if (!info || info == last)
			continue;
		u->sections++;
		u->bytes += ksize(info);
		last = info;
	}
	mmap_read_unlock(mm);
	return 0;
}
#endif
