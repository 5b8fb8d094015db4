// SPDX-License-Identifier: GPL-2.0
/*
 * Which SFrame section describes a user code address.
 *
 * Every file-backed executable mapping is examined lazily, the first time a
 * walk meets an address in it: the program headers of the mapped ELF file
 * are read, PT_GNU_SFRAME is located through the PT_LOAD that holds the
 * mapping, and the section's header is checked. The result, including "this
 * mapping has no section", is kept in the VMA itself (vma->sframe_info), so
 * each mapping is examined once, and the entry lives and dies with it:
 * munmap() and dlclose() free it with the VMA, fork() and VMA splits share
 * it with a reference, and new code mapped at the same address is a new VMA
 * that starts unexamined. The executable, the dynamic linker, every library
 * mapped at startup and every library dlopen()ed later are covered alike,
 * with no help from glibc, ld.so or the program.
 *
 * The entry holds the section's position relative to the ELF file's load
 * bias, which is worked out again from the VMA on each lookup, so a shared
 * entry stays right for every copy of the mapping.
 *
 * Locking: the walk holds no lock while it reads user memory, because the
 * page fault handler may need mmap_lock, and a writer queued between two
 * readers would deadlock the task. The VMA is looked up and its entry taken
 * (with a reference) under the per-VMA read lock, or failing that under
 * mmap_read_trylock(); both are dropped before the section is read. Another
 * thread may unmap the section meanwhile: the read then fails and the walk
 * ends cleanly. The file's headers are read with no lock held either, with
 * a reference to the file.
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

#include "sframe.h"

/* Not in <uapi/linux/elf.h> yet: GNU's value, as in binutils' elf.h. */
#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		0x6474e554
#endif

/* Cap on the program headers read; real files have about a dozen. */
#define SFRAME_MAX_PHDRS	64

/**
 * struct sframe_vma_info - the SFrame section of one executable mapping
 * @ref:	references: one per VMA that points here, one per walk using it
 * @delta:	p_vaddr - p_offset of the PT_LOAD that holds the mapping
 * @sec:	the section, its four addresses relative to the load bias
 * @bad:	the section turned out malformed during a lookup: unused since
 */
struct sframe_vma_info {
	refcount_t		ref;
	unsigned long		delta;
	struct sframe_section	sec;
	bool			bad;
};

/* vma->sframe_info of a mapping examined and found to have no section. */
#define SFRAME_VMA_NONE		((struct sframe_vma_info *)1UL)

static bool sframe_info_real(struct sframe_vma_info *info)
{
	return info && info != SFRAME_VMA_NONE;
}

static void sframe_info_put(struct sframe_vma_info *info)
{
	if (sframe_info_real(info) && refcount_dec_and_test(&info->ref))
		kfree(info);
}

/**
 * sframe_vma_dup - a VMA was copied (fork, split, mremap)
 * @vma: the copy, whose sframe_info came with the copied bytes
 *
 * Context: any; does not sleep.
 */
void sframe_vma_dup(struct vm_area_struct *vma)
{
	if (sframe_info_real(vma->sframe_info))
		refcount_inc(&vma->sframe_info->ref);
}

/**
 * sframe_vma_free - a VMA is being freed
 * @vma: the VMA
 *
 * Context: any, including the RCU callback that frees VMAs; does not sleep.
 */
void sframe_vma_free(struct vm_area_struct *vma)
{
	sframe_info_put(vma->sframe_info);
	vma->sframe_info = NULL;
}

/* The load bias of the ELF file mapped by a VMA, from @info's PT_LOAD. */
static unsigned long sframe_bias(unsigned long vm_start, unsigned long pgoff,
				 unsigned long delta)
{
	return vm_start - (pgoff << PAGE_SHIFT) - delta;
}

/*
 * Read the ELF file mapped at [@vm_start, @vm_end) from page @pgoff and
 * find its SFrame section. Returns a new entry, SFRAME_VMA_NONE when the
 * file has no usable section, or NULL when memory ran out (then the mapping
 * is examined again next time).
 *
 * Context: task context, no lock held; reads the file and user memory.
 */
static struct sframe_vma_info *sframe_discover(struct file *file,
					       unsigned long vm_start,
					       unsigned long vm_end,
					       unsigned long pgoff)
{
	u64 off = (u64)pgoff << PAGE_SHIFT;
	const struct elf64_phdr *load = NULL, *sframe = NULL;
	struct sframe_vma_info *info;
	struct elf64_phdr *phdrs;
	struct elf64_hdr ehdr;
	unsigned long bias;
	loff_t pos = 0;
	size_t size;
	int i;

	if (kernel_read(file, &ehdr, sizeof(ehdr), &pos) != sizeof(ehdr))
		return SFRAME_VMA_NONE;
	if (memcmp(ehdr.e_ident, ELFMAG, SELFMAG) ||
	    ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
	    ehdr.e_machine != EM_X86_64 ||
	    ehdr.e_phentsize != sizeof(*phdrs) ||
	    !ehdr.e_phnum || ehdr.e_phnum > SFRAME_MAX_PHDRS)
		return SFRAME_VMA_NONE;

	size = ehdr.e_phnum * sizeof(*phdrs);
	phdrs = kmalloc(size, GFP_KERNEL);
	if (!phdrs)
		return NULL;
	pos = ehdr.e_phoff;
	if (kernel_read(file, phdrs, size, &pos) != size) {
		info = SFRAME_VMA_NONE;
		goto out;
	}

	for (i = 0; i < ehdr.e_phnum; i++) {
		const struct elf64_phdr *ph = &phdrs[i];

		if (ph->p_type == PT_GNU_SFRAME)
			sframe = ph;
		else if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
			 off >= round_down(ph->p_offset, PAGE_SIZE) &&
			 off < ph->p_offset + ph->p_filesz)
			load = ph;
	}
	info = SFRAME_VMA_NONE;
	if (!sframe || !load || !sframe->p_memsz ||
	    sframe->p_vaddr + sframe->p_memsz < sframe->p_vaddr ||
	    load->p_vaddr + load->p_memsz < load->p_vaddr)
		goto out;

	info = kzalloc(sizeof(*info), GFP_KERNEL);
	if (!info)
		goto out;
	refcount_set(&info->ref, 1);
	info->delta = load->p_vaddr - load->p_offset;
	bias = sframe_bias(vm_start, pgoff, info->delta);

	/*
	 * p_memsz may be larger than the section (ld reserves the size before
	 * merging); the header's own counts bound it within that.
	 */
	info->sec.sframe_start = bias + sframe->p_vaddr;
	info->sec.sframe_end = info->sec.sframe_start + sframe->p_memsz;
	info->sec.text_start = max(bias + load->p_vaddr, vm_start);
	info->sec.text_end = min(bias + load->p_vaddr + load->p_memsz, vm_end);
	if (info->sec.sframe_end < info->sec.sframe_start ||
	    sframe_init(&info->sec) ||
	    (IS_ENABLED(CONFIG_UNWIND_USER_SFRAME_VALIDATE) &&
	     sframe_validate(&info->sec))) {
		kfree(info);
		info = SFRAME_VMA_NONE;
		goto out;
	}
	/* Keep it relative to the load bias: the VMA may be copied or moved. */
	info->sec.sframe_start -= bias;
	info->sec.sframe_end -= bias;
	info->sec.text_start -= bias;
	info->sec.text_end -= bias;
out:
	kfree(phdrs);
	return info;
}

/*
 * Lock the VMA holding @ip for reading: per-VMA lock, or mmap_lock if that
 * can be had at once. Sets *@mmap_locked for sframe_vma_unlock().
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
	if (!mmap_read_trylock(mm))
		return NULL;
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
 * Find the entry for @ip and fill @w's cache with it. Returns 0 with
 * w->info set (a reference held) or NULL (no section), or -EAGAIN when the
 * VMA could not be locked at once (then nothing is cached).
 */
static int sframe_walk_lookup(struct unwind_user_sframe *w, unsigned long ip)
{
	struct mm_struct *mm = current->mm;
	struct sframe_vma_info *info, *old;
	unsigned long start, end, pgoff;
	struct vm_area_struct *vma;
	struct file *file;
	bool locked;

	vma = sframe_vma_lock(mm, ip, &locked);
	if (!vma)
		return -EAGAIN;
	start = vma->vm_start;
	end = vma->vm_end;
	pgoff = vma->vm_pgoff;
	info = READ_ONCE(vma->sframe_info);
	file = vma->vm_file;
	if (!(vma->vm_flags & VM_EXEC) || !file)
		info = SFRAME_VMA_NONE;
	if (info) {
		if (sframe_info_real(info))
			refcount_inc(&info->ref);
		sframe_vma_unlock(mm, vma, locked);
		goto found;
	}
	get_file(file);
	sframe_vma_unlock(mm, vma, locked);

	/* Unexamined: read the file with no lock held. */
	info = sframe_discover(file, start, end, pgoff);
	if (!info) {
		fput(file);
		return -ENOMEM;
	}

	/* Keep it only if the mapping is still the one examined. */
	vma = sframe_vma_lock(mm, ip, &locked);
	if (vma && vma->vm_file == file && vma->vm_start == start &&
	    vma->vm_pgoff == pgoff) {
		old = cmpxchg(&vma->sframe_info, NULL, info);
		if (old) {
			/* Another walk was first: use its entry. */
			sframe_info_put(info);
			info = old;
		}
		if (sframe_info_real(info))
			refcount_inc(&info->ref);
	}
	/* Not attached, the new entry's only reference is this walk's. */
	if (vma)
		sframe_vma_unlock(mm, vma, locked);
	fput(file);
found:
	w->start = start;
	w->end = end;
	w->info = NULL;
	w->none = !sframe_info_real(info);
	if (!w->none) {
		w->info = info;
		w->bias = sframe_bias(start, pgoff, info->delta);
	}
	return 0;
}

/**
 * unwind_user_sframe_find - the frame rule for a user address, from SFrame
 * @w: the walk's cache, zeroed before the first call
 * @ip: the code address: the topmost frame's IP, or a return address - 1
 * @frame: filled in on success
 *
 * Context: task context of current, no locks held; reads user memory and
 * the mapped file, may fault and sleep.
 * Return: 0 with @frame filled in; %SFRAME_OUTERMOST when the section marks
 * the outermost frame; a negative error when SFrame does not help for @ip
 * (no section, not covered, malformed, unreadable): use frame pointers.
 */
int unwind_user_sframe_find(struct unwind_user_sframe *w, unsigned long ip,
			    struct unwind_user_frame *frame)
{
	struct sframe_section sec;
	int ret;

	if (!current->mm)
		return -EINVAL;
	if (!(ip >= w->start && ip < w->end)) {
		unwind_user_sframe_done(w);
		ret = sframe_walk_lookup(w, ip);
		if (ret)
			return ret;
	}
	if (w->none || READ_ONCE(w->info->bad))
		return -ENOENT;
	/*
	 * The return address answered last time in this mapping (recursion):
	 * its row again, before even rebuilding the section's addresses.
	 */
	if (w->cache.have_ip && w->cache.ip == ip) {
		if (!w->cache.ret)
			*frame = w->cache.frame;
		return w->cache.ret;
	}

	sec = w->info->sec;
	sec.sframe_start += w->bias;
	sec.sframe_end += w->bias;
	sec.text_start += w->bias;
	sec.text_end += w->bias;
	ret = sframe_find_cached(&sec, &w->cache, ip, frame);
	/* A malformed section is dropped for good; what was walked stays. */
	if (ret == -EINVAL)
		WRITE_ONCE(w->info->bad, true);
	return ret;
}

/**
 * unwind_user_sframe_done - drop what a walk cached
 * @w: the walk's cache
 */
void unwind_user_sframe_done(struct unwind_user_sframe *w)
{
	sframe_info_put(w->info);
	w->info = NULL;
	w->start = 0;
	w->end = 0;
	w->none = false;
	memset(&w->cache, 0, sizeof(w->cache));
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
		if (!sframe_info_real(info) || info == last)
			continue;
		u->sections++;
		u->bytes += ksize(info);
		last = info;
	}
	mmap_read_unlock(mm);
	return 0;
}
#endif
