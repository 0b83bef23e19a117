// SPDX-License-Identifier: GPL-2.0
/*
 * Fragments free memory with pages nothing can move: takes every free
 * 2 MiB block the page allocator gives (order 9, GFP_KERNEL, no retry),
 * gives back all but one page in every @keep of each, and holds those
 * until unloaded.  The blocks cannot be put back together, compaction or
 * not: a kernel page sits in each.  This is what slab, page tables and
 * socket buffers do to a machine over weeks, done in a second.
 *
 * /sys/module/fragment/parameters/blocks: the blocks taken.  Writing 1 to
 * .../take takes again what has come free since: reclaim and compaction
 * woken by the failed order-9 requests can put a block together behind
 * the first pass, out of other memory.
 */
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>

#define BLOCK_ORDER	(PMD_SHIFT - PAGE_SHIFT)

static unsigned int keep = 16;
module_param(keep, uint, 0444);
MODULE_PARM_DESC(keep, "hold one page in every KEEP of each 2 MiB block (16)");

static unsigned long blocks;
module_param(blocks, ulong, 0444);
MODULE_PARM_DESC(blocks, "2 MiB blocks taken and broken (read only)");

static LIST_HEAD(held);
static DEFINE_MUTEX(take_mutex);

static void release(void)
{
	struct page *page, *tmp;

	list_for_each_entry_safe(page, tmp, &held, lru) {
		list_del(&page->lru);
		__free_page(page);
	}
}

/* Takes every free 2 MiB block there is now: 0, or -EINTR. */
static int take_blocks(void)
{
	const gfp_t gfp = GFP_KERNEL | __GFP_NORETRY | __GFP_NOWARN;
	struct page *page;
	unsigned int i;

	mutex_lock(&take_mutex);
	while ((page = alloc_pages(gfp, BLOCK_ORDER))) {
		split_page(page, BLOCK_ORDER);
		for (i = 0; i < 1U << BLOCK_ORDER; i++) {
			if (i % keep)
				__free_page(page + i);
			else
				list_add(&page[i].lru, &held);
		}
		blocks++;
		cond_resched();
		if (fatal_signal_pending(current)) {
			mutex_unlock(&take_mutex);
			return -EINTR;
		}
	}
	mutex_unlock(&take_mutex);
	return 0;
}

static int take_set(const char *val, const struct kernel_param *kp)
{
	bool again;
	int err = kstrtobool(val, &again);

	return err ?: again ? take_blocks() : 0;
}

static const struct kernel_param_ops take_ops = {
	.set = take_set,
};
module_param_cb(take, &take_ops, NULL, 0200);
MODULE_PARM_DESC(take, "write 1: take the blocks that have come free since");

/*
 * Not __init: an init section is freed after the load, later, and its
 * direct-map reset would split a 2M page while a test counts the splits.
 */
static int fragment_init(void)
{
	int err;

	if (!keep || keep > 1U << BLOCK_ORDER)
		return -EINVAL;
	err = take_blocks();
	if (err) {
		release();
		return err;
	}
	pr_info("fragment: %lu blocks of 2 MiB broken, %lu pages held\n", blocks,
		blocks * DIV_ROUND_UP(1U << BLOCK_ORDER, keep));
	return 0;
}
module_init(fragment_init);

static void __exit fragment_exit(void)
{
	release();
}
module_exit(fragment_exit);

MODULE_DESCRIPTION("Fragment free memory with unmovable pages, for the pack cache tests");
MODULE_LICENSE("GPL");
