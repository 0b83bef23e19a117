// SPDX-License-Identifier: GPL-2.0
/*
 * Drives the direct-map changes whose undoing must heal the direct map, and
 * the ones that must not, for the direct_map_heal test.  Commands, written
 * to /sys/kernel/debug/dmap_heal, one at a time; the result of the last one
 * is read back from the same file as "key value" lines:
 *
 *   rox N      N one-page vmalloc areas made read-only and executable, the
 *              way 6.1 makes modules and BPF images (VM_FLUSH_RESET_PERMS),
 *              held until "free"
 *   rox_undo N the same without VM_FLUSH_RESET_PERMS: "free" puts them
 *              back with set_memory_nx() and set_memory_rw() (the alias
 *              path) before vfree()
 *   free       frees what "rox" or "rox_undo" holds: vfree() resets their
 *              direct map, or set_memory_rw() did
 *   keep4k     in a 2 MiB block of its own: set_memory_4k() on one page,
 *              set_memory_ro() then set_memory_rw() on another; and the
 *              same without set_memory_4k() (the control)
 *   race N     two threads, N rounds each, set_memory_ro()/set_memory_rw()
 *              on two pages of one 2 MiB block, each checking after its
 *              set_memory_ro() that its page is read-only
 *   walk N     a thread makes a page of a 2 MiB block read-only and read-write
 *              again, N rounds (a split and a collapse each), while this one
 *              walks to the block's PTE table under rcu_read_lock(), waits
 *              20 us there and reads it: how many walks found a table, how
 *              many found it freed meanwhile
 *   touch M    a movable page in the 1 GiB from M MiB of physical memory
 *              (hot-added memory, onlined movable) made read-only, then
 *              read-write: the level of its direct map before, read-only
 *              and after, and of the first page of its 1 GiB
 *   span M     a two-page area, VM_FLUSH_RESET_PERMS, of the first page of
 *              a 2 MiB block of boot memory and a movable page in the 1 GiB from M MiB, made
 *              read-only and freed: the levels of their direct map after,
 *              how long vfree() took (its reset and collapse)
 *   mapped M   the level of the direct map at M MiB, and whether present
 *   alloc N    N pages from the page allocator, held, then freed: how many
 *              the direct map has present and how many global, and
 *              whether the direct map of empty_zero_page, mapped at boot
 *              and never freed, is global (not with PTI); under
 *              debug_pagealloc every free page was unmapped, and is mapped
 *              again as it is handed out
 *
 * Levels are lookup_address()'s: 1 = 4K, 2 = 2M, 3 = 1G.  The set_memory_*
 * functions and find_vm_area() are not exported; the test passes their
 * addresses from /proc/kallsyms.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/io.h>
#include <asm/pgtable.h>

#include "testmod.h"

typedef int (set_memory_t)(unsigned long addr, int numpages);
typedef struct vm_struct *(find_vm_area_t)(const void *addr);

static unsigned long ro_addr, rw_addr, x_addr, nx_addr, k4_addr, area_addr;
module_param(ro_addr, ulong, 0400);
module_param(rw_addr, ulong, 0400);
module_param(x_addr, ulong, 0400);
module_param(nx_addr, ulong, 0400);
module_param(k4_addr, ulong, 0400);
module_param(area_addr, ulong, 0400);
MODULE_PARM_DESC(ro_addr, "address of set_memory_ro()");
MODULE_PARM_DESC(rw_addr, "address of set_memory_rw()");
MODULE_PARM_DESC(x_addr, "address of set_memory_x()");
MODULE_PARM_DESC(nx_addr, "address of set_memory_nx()");
MODULE_PARM_DESC(k4_addr, "address of set_memory_4k()");
MODULE_PARM_DESC(area_addr, "address of find_vm_area()");

static set_memory_t *mem_ro, *mem_rw, *mem_x, *mem_nx, *mem_4k;
static find_vm_area_t *vm_area_of;

#define BLOCK_ORDER (PMD_SHIFT - PAGE_SHIFT)

static void **held;
static unsigned int nr_held;
static bool held_reset;		/* held areas are VM_FLUSH_RESET_PERMS */

/* Without VM_FLUSH_RESET_PERMS the owner puts the permissions back */
static int undo(void *p)
{
	return mem_nx((unsigned long)p, 1) ?: mem_rw((unsigned long)p, 1);
}

static int free_held(void)
{
	int err = 0;

	while (nr_held) {
		void *p = held[--nr_held];

		if (!held_reset && undo(p)) {
			err = -EIO;
			continue;	/* still read-only: leaked, not freed */
		}
		vfree(p);
	}
	kvfree(held);
	held = NULL;
	return err;
}

/* One page of vmalloc, RO+X as module_alloc()'s users make it */
static void *rox_area(bool reset)
{
	void *p = vmalloc(PAGE_SIZE);

	if (!p)
		return NULL;
	/* set_vm_flush_reset_perms(), whose find_vm_area() is not exported */
	if (reset)
		vm_area_of(p)->flags |= VM_FLUSH_RESET_PERMS;
	if (mem_ro((unsigned long)p, 1) || mem_x((unsigned long)p, 1)) {
		if (reset || !undo(p))
			vfree(p);
		return NULL;
	}
	return p;
}

static int cmd_rox(unsigned int n, bool reset)
{
	int err = free_held();

	if (err)
		return err;
	held = kvcalloc(n, sizeof(*held), GFP_KERNEL);
	if (!held)
		return -ENOMEM;
	held_reset = reset;
	while (nr_held < n) {
		held[nr_held] = rox_area(reset);
		if (!held[nr_held])
			return -ENOMEM;
		nr_held++;
	}
	report("held %u\n", nr_held);
	return 0;
}

/* A 2 MiB block: its direct map is a 2M (or 1G) entry no one else changes */
static unsigned long block_alloc(void)
{
	struct page *page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, BLOCK_ORDER);

	return page ? (unsigned long)page_address(page) : 0;
}

static void block_free(unsigned long block)
{
	free_pages(block, BLOCK_ORDER);
}

/*
 * A block whose direct map is one large entry: not a block set_memory_4k()
 * marked (keep4k's stays split for good) or split by someone else.
 */
static unsigned long block_alloc_large(void)
{
	unsigned long tried[8], block = 0;
	unsigned int n = 0;

	while (n < ARRAY_SIZE(tried)) {
		block = block_alloc();
		if (!block || direct_map_level(block, NULL) > 1)
			break;
		tried[n++] = block;
		block = 0;
	}
	while (n)
		block_free(tried[--n]);
	return block;
}

/* Frees a block split_page() split, from its page @first on */
static void block_free_split(unsigned long block, unsigned int first)
{
	unsigned int i;

	for (i = first; block && i < 1U << BLOCK_ORDER; i++)
		free_page(block + i * PAGE_SIZE);
}

static int cmd_keep4k(unsigned int unused)
{
	unsigned long block, p;
	int before, err = 0;

	/* the control: RO then RW again; a healing kernel maps it large again */
	block = block_alloc();
	if (!block)
		return -ENOMEM;
	p = block + 5 * PAGE_SIZE;
	before = direct_map_level(p, NULL);
	err = mem_ro(p, 1);
	report("control_before %d\ncontrol_ro %d\n", before, direct_map_level(p, NULL));
	err = err ?: mem_rw(p, 1);
	report("control_after %d\n", direct_map_level(p, NULL));
	block_free(block);
	if (err)
		return err;

	/* the same after set_memory_4k() on another page: it must stay 4K */
	block = block_alloc();
	if (!block)
		return -ENOMEM;
	p = block + 5 * PAGE_SIZE;
	before = direct_map_level(p, NULL);
	err = mem_4k(block, 1);
	err = err ?: mem_ro(p, 1);
	err = err ?: mem_rw(p, 1);
	report("kept_before %d\nkept_after %d\nkept_first %d\n", before,
	       direct_map_level(p, NULL), direct_map_level(block, NULL));
	block_free(block);
	return err;
}

struct racer {
	unsigned long page;
	unsigned int rounds, lost;
	int err;
	struct completion done;
};

static int race_fn(void *data)
{
	struct racer *r = data;
	unsigned int i;
	bool rw;

	for (i = 0; i < r->rounds && !r->err; i++) {
		r->err = mem_ro(r->page, 1);
		if (r->err)
			break;
		if (!direct_map_level(r->page, &rw) || rw)
			r->lost++;
		r->err = mem_rw(r->page, 1);
		if (!direct_map_level(r->page, &rw) || !rw)
			r->lost++;
		cond_resched();
	}
	complete(&r->done);
	return 0;
}

static int cmd_race(unsigned int rounds)
{
	struct racer r[2] = {};
	struct task_struct *t;
	unsigned long block;
	int before, i, err = 0;

	block = block_alloc();
	if (!block)
		return -ENOMEM;
	before = direct_map_level(block, NULL);
	for (i = 0; i < 2; i++) {
		r[i].page = block + (7 + 300 * i) * PAGE_SIZE;
		r[i].rounds = rounds;
		init_completion(&r[i].done);
		t = kthread_run(race_fn, &r[i], "dmap_heal/%d", i);
		if (IS_ERR(t)) {
			err = PTR_ERR(t);
			complete(&r[i].done);
		}
	}
	for (i = 0; i < 2; i++)
		wait_for_completion(&r[i].done);
	report("rounds %u\nlost %u\nerr %d\nrace_before %d\nrace_after %d\n", rounds,
	       r[0].lost + r[1].lost, r[0].err ?: r[1].err, before, direct_map_level(block, NULL));
	block_free(block);
	return err ?: r[0].err ?: r[1].err;
}

/*
 * A page in the 1 GiB from @mib MiB, allocated as user pages are, or NULL.
 * It takes MAX_ORDER - 1 blocks while there are some, then pages: the
 * memory added last is free in such blocks at the tail of the free lists,
 * behind every other free block of its zone (a GiB of DIMM, say).
 */
static struct page *page_in(unsigned int mib)
{
	phys_addr_t floor = (phys_addr_t)mib << 20;
	struct page *page, *tmp, *found = NULL;
	unsigned int tries, order = MAX_ORDER - 1, i;
	LIST_HEAD(misses);

	for (tries = 0; tries < 65536 && !found; tries++) {
		page = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_NOWARN | __GFP_NORETRY, order);
		if (!page && order) {
			order = 0;
			continue;
		}
		if (!page)
			break;
		if (page_to_phys(page) >= floor &&
		    page_to_phys(page) < floor + PUD_SIZE) {
			split_page(page, order);
			for (i = 1; i < 1U << order; i++)
				__free_page(page + i);
			found = page;
		} else {
			set_page_private(page, order);
			list_add(&page->lru, &misses);
		}
	}
	list_for_each_entry_safe(page, tmp, &misses, lru) {
		list_del(&page->lru);
		order = page_private(page);
		set_page_private(page, 0);
		__free_pages(page, order);
	}
	return found;
}

static int cmd_touch(unsigned int mib)
{
	struct page *page = page_in(mib);
	unsigned long addr;
	phys_addr_t phys;
	int err;

	if (!page)
		return -ENOMEM;
	addr = (unsigned long)page_address(page);
	phys = page_to_phys(page);
	report("phys_mib %llu\nbefore %d\n", (u64)phys >> 20, direct_map_level(addr, NULL));
	err = mem_ro(addr, 1);
	report("ro %d\n", direct_map_level(addr, NULL));
	err = err ?: mem_rw(addr, 1);
	report("after %d\ngb_first %d\n", direct_map_level(addr, NULL),
	       direct_map_level((unsigned long)__va(phys & PUD_MASK), NULL));
	__free_page(page);
	return err;
}

static int cmd_span(unsigned int mib)
{
	unsigned long block, low, high;
	struct page **pages = NULL;
	u64 t0;
	void *p;
	int err;

	/* the low page: the first of a 2 MiB block no one else changes */
	block = block_alloc_large();
	pages = kvcalloc(2, sizeof(*pages), GFP_KERNEL);
	if (block)
		split_page(virt_to_page(block), BLOCK_ORDER);
	if (pages && block) {
		pages[0] = virt_to_page(block);
		pages[1] = page_in(mib);
	}
	p = pages && pages[1] ? vmap(pages, 2, VM_MAP | VM_MAP_PUT_PAGES |
				     VM_FLUSH_RESET_PERMS, PAGE_KERNEL) : NULL;
	if (!p) {
		if (pages && pages[1])
			__free_page(pages[1]);
		kvfree(pages);
		block_free_split(block, 0);
		return -ENOMEM;
	}
	low = block;
	high = (unsigned long)page_address(pages[1]);
	report("low_mib %llu\nhigh_mib %llu\n", (u64)__pa(low) >> 20, (u64)__pa(high) >> 20);
	err = mem_ro((unsigned long)p, 2);
	report("low_ro %d\nhigh_ro %d\n", direct_map_level(low, NULL),
	       direct_map_level(high, NULL));
	/* frees the pages and the array: VM_MAP_PUT_PAGES; resets, collapses */
	t0 = local_clock();
	vfree(p);
	report("vfree_ns %llu\n", local_clock() - t0);
	report("low_after %d\nhigh_after %d\n", direct_map_level(low, NULL),
	       direct_map_level(high, NULL));
	block_free_split(block, 1);
	return err;
}

static int cmd_mapped(unsigned int mib)
{
	pteval_t flags;
	int level = direct_map_entry((unsigned long)__va((phys_addr_t)mib << 20), &flags);

	report("level %d\npresent %d\n", level, !!(flags & _PAGE_PRESENT));
	return 0;
}

static int cmd_alloc(unsigned int n)
{
	unsigned int i, got, present = 0, global = 0;
	struct page **pages;
	pteval_t flags;

	pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	for (got = 0; got < n; got++) {
		pages[got] = alloc_page(GFP_KERNEL);
		if (!pages[got])
			break;
		direct_map_entry((unsigned long)page_address(pages[got]), &flags);
		present += !!(flags & _PAGE_PRESENT);
		global += (flags & (_PAGE_PRESENT | _PAGE_GLOBAL)) == (_PAGE_PRESENT | _PAGE_GLOBAL);
	}
	/* the kernel image's data in the direct map: mapped at boot, never freed */
	direct_map_entry((unsigned long)lm_alias(empty_zero_page), &flags);
	report("pages %u\npresent %u\nglobal %u\nboot_global %d\ndebug_pagealloc %d\n",
	       got, present, global, !!(flags & _PAGE_GLOBAL), debug_pagealloc_enabled());
	for (i = 0; i < got; i++)
		__free_page(pages[i]);
	kvfree(pages);
	return got == n ? 0 : -ENOMEM;
}

/*
 * A lockless walker with interrupts on, as kernel_page_present() and a
 * CPA's cache flush walk: under rcu_read_lock(), the PTE table it found
 * must not be freed before it is done, however long it takes.
 */
static int cmd_walk(unsigned int rounds)
{
	struct racer w = { .rounds = rounds };
	unsigned long block, walks = 0, freed = 0;
	struct task_struct *t;
	unsigned int level;
	pte_t *ptep, pte;

	block = block_alloc();
	if (!block)
		return -ENOMEM;
	/* the writer: race's, a split and a collapse a round */
	w.page = block + 9 * PAGE_SIZE;
	init_completion(&w.done);
	t = kthread_run(race_fn, &w, "dmap_heal/walk");
	if (IS_ERR(t)) {
		block_free(block);
		return PTR_ERR(t);
	}
	while (!completion_done(&w.done)) {
		rcu_read_lock();
		ptep = lookup_address(w.page, &level);
		if (ptep && level == PG_LEVEL_4K) {
			walks++;
			udelay(20);
			if (!page_ref_count(virt_to_page(ptep)))
				freed++;
			pte = READ_ONCE(*ptep);
			(void)pte;
		}
		rcu_read_unlock();
		cond_resched();
	}
	report("walks %lu\nfreed %lu\nwalk_err %d\nlost %u\n", walks, freed, w.err, w.lost);
	block_free(block);
	return w.err;
}

static int cmd_rox_reset(unsigned int n)
{
	return cmd_rox(n, true);
}

static int cmd_rox_undo(unsigned int n)
{
	return cmd_rox(n, false);
}

static int cmd_free(unsigned int unused)
{
	return free_held();
}

static const struct testmod_cmd cmds[] = {
	{ "rox", cmd_rox_reset, true },
	{ "rox_undo", cmd_rox_undo, true },
	{ "free", cmd_free },
	{ "keep4k", cmd_keep4k },
	{ "race", cmd_race, true },
	{ "touch", cmd_touch },
	{ "walk", cmd_walk, true },
	{ "span", cmd_span },
	{ "mapped", cmd_mapped },
	{ "alloc", cmd_alloc, true },
	{}
};

static int __init dmap_heal_init(void)
{
	if (!ro_addr || !rw_addr || !x_addr || !nx_addr || !k4_addr || !area_addr)
		return -EINVAL;
	mem_ro = (set_memory_t *)ro_addr;
	mem_rw = (set_memory_t *)rw_addr;
	mem_x = (set_memory_t *)x_addr;
	mem_nx = (set_memory_t *)nx_addr;
	mem_4k = (set_memory_t *)k4_addr;
	vm_area_of = (find_vm_area_t *)area_addr;
	testmod_create("dmap_heal", cmds);
	return 0;
}
module_init(dmap_heal_init);

static void __exit dmap_heal_exit(void)
{
	testmod_remove();
	free_held();
}
module_exit(dmap_heal_exit);

MODULE_DESCRIPTION("Split and heal the direct map, for the direct_map_heal test");
MODULE_LICENSE("GPL");
