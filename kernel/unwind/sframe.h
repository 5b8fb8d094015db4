/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SFrame reader: internal interface.
 *
 * The reader in sframe.c is plain C over one accessor, sframe_access(), so
 * the same file builds in the kernel (reading user memory) and in user space
 * (reading a buffer) for fuzzing and for tests against the real toolchain.
 * Define SFRAME_USER_SHIM, the kernel types and sframe_access() before
 * including sframe.c to get the user-space build.
 */
#ifndef _KERNEL_UNWIND_SFRAME_H
#define _KERNEL_UNWIND_SFRAME_H

#ifndef SFRAME_USER_SHIM
#include <linux/refcount.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/uaccess.h>
#include <linux/unwind_user_types.h>
#endif

/*
 * Positive return of sframe_find(): the IP is covered and its row says that
 * the return address is undefined, so this is the outermost frame and the
 * walk is complete. @frame is not filled in.
 */
#define SFRAME_OUTERMOST	1

/**
 * struct sframe_section - one .sframe section in user memory, or a table
 * loaded into the kernel for a file (see sframe_store.c)
 * @sframe_start:	user address of the first byte of the section (for a
 *			loaded table: where the file would have it)
 * @sframe_end:		user address one past its last byte
 * @text_start:		first code address the section may describe
 * @text_end:		one past the last code address it may describe
 * @version:		format version (1, 2 or 3), from the header
 * @flags:		SFRAME_F_* flags, from the header
 * @ra_off:		fixed offset of the return address from the CFA, or 0
 *			when each row gives it
 * @fp_off:		fixed offset of the saved frame pointer from the CFA,
 *			or 0 when each row gives it (or it is not saved)
 * @fde_size:		size in bytes of one FDE (V3: one index entry)
 * @num_fdes:		number of FDEs
 * @num_fres:		number of FREs in the whole section
 * @fdes_off:		offset of the FDE sub-section from @sframe_start
 * @fres_off:		offset of the FRE sub-section from @sframe_start
 * @fres_end:		offset one past the FRE sub-section from @sframe_start
 * @reads_left:		reads of the section the caller still allows, counted
 *			down by every lookup (which fails with -EAGAIN once
 *			it is 0), or NULL for no limit; all the lookups of one
 *			walk share one count
 * @kdata:		the section's bytes in kernel memory for a loaded table,
 *			else NULL (read from user memory at @sframe_start)
 *
 * The caller fills in the four addresses (and @reads_left for a budget);
 * sframe_init() fills in the rest.
 * All offsets are checked against the section at init, so later arithmetic
 * on them cannot overflow.
 */
struct sframe_section {
	unsigned long	sframe_start;
	unsigned long	sframe_end;
	unsigned long	text_start;
	unsigned long	text_end;

	u8		version;
	u8		flags;
	s8		ra_off;
	s8		fp_off;
	u32		fde_size;
	u32		num_fdes;
	u32		num_fres;
	unsigned long	fdes_off;
	unsigned long	fres_off;
	unsigned long	fres_end;
	unsigned int	*reads_left;
	const u8	*kdata;
};

/*
 * One FDE as the reader sees it, whatever the version. Filled in only by
 * sframe_read_fde() in sframe.c.
 */
struct sframe_fde {
	unsigned long	func_start;	/* user address of the function */
	u32		func_size;
	u32		num_fres;
	unsigned long	fres_pos;	/* section offset of its first FRE */
	u8		addr_size;	/* bytes of an FRE start: 1, 2 or 4 */
	u8		rep_size;	/* PCMASK block size, else 0 */
	u8		type;		/* SFRAME_FDE_TYPE_* */
	bool		pcmask;
	bool		signal;
};

/**
 * struct sframe_cache - what the lookups of one walk in one section learnt
 * @sframe_start:	the section it is about; 0 when empty
 * @fde:		the FDE of the last function found, checked
 * @have_fde:		@fde is valid
 * @ip:			the last address answered, and the answer:
 * @ret:		its return value (0 or %SFRAME_OUTERMOST)
 * @frame:		its frame description
 * @have_ip:		@ip, @ret and @frame are valid
 * @gap_start:		code the section does not cover, between functions
 *			(or before the first or after the last), as the
 *			last search that missed found it ...
 * @gap_len:		... and its length: 0 for none
 *
 * Neighbouring frames of a stack are often in one function (loops calling
 * helpers) and recursion repeats one return address: the FDE and the row are
 * then taken from here without reading the section again. Only what the
 * section said without error is kept. Zero it to empty it.
 */
struct sframe_cache {
	unsigned long			sframe_start;
	struct sframe_fde		fde;
	bool				have_fde;
	bool				have_ip;
	int				ret;
	unsigned long			ip;
	struct unwind_user_frame	frame;
	unsigned long			gap_start;
	unsigned long			gap_len;
};

int sframe_init(struct sframe_section *sec);
int sframe_find(const struct sframe_section *sec, unsigned long ip,
		struct unwind_user_frame *frame);
int sframe_find_cached(const struct sframe_section *sec,
		       struct sframe_cache *cache, unsigned long ip,
		       struct unwind_user_frame *frame);
int sframe_validate(const struct sframe_section *sec);

#ifndef SFRAME_USER_SHIM
/*
 * Copy @len bytes at offset @off of the section. The caller has already
 * checked that [off, off + len) lies inside the section; only the user
 * access itself can fail here, for instance because another thread unmapped
 * the section meanwhile.
 */
static inline int sframe_access(const struct sframe_section *sec,
				unsigned long off, void *buf, size_t len)
{
	/* The reader checked @off and @len against the section's size. */
	if (sec->kdata) {
		memcpy(buf, sec->kdata + off, len);
		return 0;
	}
	if (copy_from_user(buf, (const void __user *)(sec->sframe_start + off),
			   len))
		return -EFAULT;
	return 0;
}
#endif

#ifdef CONFIG_UNWIND_USER_SFRAME
/**
 * struct sframe_table - an SFrame section loaded for a file (sframe_store.c)
 * @node:		in the store's hash table
 * @rcu:		frees it after lookups that may still see it
 * @ref:		the store's reference, and one per mapping entry using it
 * @build_id:		the file's GNU build-id
 * @build_id_len:	its length
 * @size:		bytes of @data
 * @sframe_vaddr:	where the section's addresses are relative to, in the
 *			file's address space (load bias 0)
 * @text_vaddr:		first code address it describes, in the same space
 * @text_size:		bytes of code it describes
 * @sec:		@data as the reader sees it at load bias 0, set up
 *			before the table is added to the store
 * @data:		the section, checked in full when it was loaded
 */
struct sframe_table {
	struct hlist_node	node;
	struct rcu_head		rcu;
	refcount_t		ref;
	u8			build_id[20];
	u8			build_id_len;
	u32			size;
	unsigned long		sframe_vaddr;
	unsigned long		text_vaddr;
	unsigned long		text_size;
	struct sframe_section	sec;
	u8			data[] __aligned(8);
};

struct sframe_table *sframe_table_get(const u8 *id, unsigned int len);
u64 sframe_tables_generation(void);

#ifdef CONFIG_UNWIND_TEST_CLIENT
/*
 * Called, when set, by a walk between reading a mapping's entry and taking
 * its reference (sframe_vma.c); the test client parks the walk there.
 */
extern void (*sframe_vma_test_hook)(void);
#endif
void sframe_table_put(struct sframe_table *t);
void sframe_table_section(const struct sframe_table *t, unsigned long bias,
			  struct sframe_section *sec);
#if IS_ENABLED(CONFIG_KUNIT)
struct sframe_table_hdr;
struct sframe_table *sframe_table_alloc(const struct sframe_table_hdr *hdr);
void sframe_table_free(struct sframe_table *t);
int sframe_table_add(struct sframe_table *t);
int sframe_table_remove(const u8 *id, unsigned int len);
#endif

struct sframe_vma_info;

/*
 * Reads of SFrame sections that one walk may make: 32 a frame of the
 * walk's cap, at least 16384. A step through a function of libc takes
 * about 15 (12 rounds of search over its 3,713 FDEs, the FDE, the rows),
 * and steps in a function or at an address met before take fewer, so a
 * walk to its cap fits; a hostile section, which can make every lookup
 * cost the most it can, ends the walk after a few dozen frames instead
 * (a few hundred at kernel.unwind_max_frames' upper limit). A walk that
 * spent the budget is marked truncated.
 */
#define UNWIND_USER_SFRAME_READS	16384U
#define UNWIND_USER_SFRAME_READS_FRAME	32U

/* Rules a walk keeps by address: a power of 2. */
#define UNWIND_USER_SFRAME_MEMO	8

/**
 * struct unwind_user_sframe - what one walk knows about the mapping last met
 * @start:	start of that mapping
 * @end:	its end
 * @info:	its SFrame section, with a reference, or NULL
 * @bias:	the load bias of its file
 * @none:	the mapping has no usable section
 * @dropped:	the mapping's section turned out malformed: the walk ends there
 * @reads_left:	the walk's remaining budget of section reads, in any mapping
 * @cache:	the lookups' cache for its file's own section
 * @tcache:	the lookups' cache for the table loaded for its file
 * @memo:	the rules found during the walk, by address, in any mapping;
 *		an entry whose @ip is 0 is empty
 */
struct unwind_user_sframe {
	unsigned long		start;
	unsigned long		end;
	struct sframe_vma_info	*info;
	unsigned long		bias;
	bool			none;
	bool			dropped;
	unsigned int		reads_left;
	struct sframe_cache	cache;
	struct sframe_cache	tcache;
	struct unwind_user_sframe_memo {
		unsigned long			ip;
		struct unwind_user_frame	frame;
	} memo[UNWIND_USER_SFRAME_MEMO];
};

int unwind_user_sframe_find(struct unwind_user_sframe *w, unsigned long ip,
			    struct unwind_user_frame *frame);
void unwind_user_sframe_done(struct unwind_user_sframe *w);

/*
 * True when @ip is in the mapping the walk met last and that mapping has no
 * section: frame pointers, without a call. Code built with frame pointers
 * walks mostly through such mappings.
 */
static inline bool unwind_user_sframe_none(const struct unwind_user_sframe *w,
					   unsigned long ip)
{
	return w->none && ip >= w->start && ip < w->end;
}

/* Where the walk keeps the rule of @ip: return addresses vary in all bits. */
static inline struct unwind_user_sframe_memo *
unwind_user_sframe_memo(struct unwind_user_sframe *w, unsigned long ip)
{
	return &w->memo[(ip ^ (ip >> 7)) & (UNWIND_USER_SFRAME_MEMO - 1)];
}

/* Keep @frame as the rule of @ip for the rest of the walk. */
static inline void unwind_user_sframe_keep(struct unwind_user_sframe *w,
					   unsigned long ip,
					   const struct unwind_user_frame *frame)
{
	struct unwind_user_sframe_memo *m = unwind_user_sframe_memo(w, ip);

	m->ip = ip;
	m->frame = *frame;
}

/*
 * The rule a lookup of this walk found for @ip, if it is still kept: a
 * recursion, direct or through several functions, returns to the same
 * few addresses frame after frame. No call and no range test: one address
 * has one rule for the whole walk, whichever mapping the walk is in now.
 */
static inline const struct unwind_user_frame *
unwind_user_sframe_again(struct unwind_user_sframe *w, unsigned long ip)
{
	const struct unwind_user_sframe_memo *m = unwind_user_sframe_memo(w, ip);

	return m->ip == ip ? &m->frame : NULL;
}
#endif /* CONFIG_UNWIND_USER_SFRAME */

#endif /* _KERNEL_UNWIND_SFRAME_H */
