// SPDX-License-Identifier: GPL-2.0
/*
 * Checks, at the moment hibernation takes its snapshot, the kernel mappings
 * the snapshot code cannot handle.  A syscore .suspend callback runs on the
 * last CPU with interrupts off, right before the copy (create_image()):
 *
 * - The direct map over System RAM must have no large (2M or 1G) entry
 *   that is not present.  safe_copy_page() copies a not-present page by
 *   mapping it with set_direct_map_default_noflush(); inside a not-present
 *   large entry that splits the entry, allocating with interrupts off, and
 *   a page table allocated then is not in the image's page set.
 * - Every page mapped in the module area, where BPF's packs, trampolines
 *   and modules live, must have a present direct-map alias.
 *
 * The same walk runs in process context on a write to the debugfs file, so
 * that a test can compare the snapshot with the running system.  What the
 * walks saw stays in this module's memory, which is in the image, and is
 * read after resume from /sys/kernel/debug/hibernate_probe:
 *
 *   suspend_runs N           syscore .suspend calls so far
 *   <walk> large_not_present N   the violations: must be 0
 *   <walk> alias_not_present N   must be 0
 *   <walk> first_bad ADDR        the first violation's address, or 0
 *   <walk> not_present_4k N      harmless: hibernation maps these itself
 *   <walk> direct_4k|2m|1g N     direct-map entries over System RAM
 *   <walk> module_4k|2m N        present entries in the module area
 *
 * where <walk> is "snapshot" (the last .suspend) or "now" (the last write).
 */
#include <linux/debugfs.h>
#include <linux/ioport.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/syscore_ops.h>
#include <linux/vmalloc.h>
#include <asm/pgtable.h>

struct walk {
	unsigned long large_not_present, alias_not_present, first_bad;
	unsigned long not_present_4k, direct[PG_LEVEL_1G + 1], module[PG_LEVEL_2M + 1];
};

static struct walk snapshot, now;
static unsigned long suspend_runs;
static struct dentry *file;

static void bad(struct walk *w, unsigned long addr)
{
	if (!w->first_bad)
		w->first_bad = addr;
}

static bool entry_present(const pte_t *pte)
{
	return pte && (pte_flags(*pte) & _PAGE_PRESENT);
}

/*
 * The size of what lookup_address() found at @addr: the entry it returns,
 * or, when it returns NULL, the empty entry below @level it stopped at.
 */
static unsigned long entry_size(const pte_t *pte, unsigned int level)
{
	if (pte)
		return page_level_size(level);
	switch (level) {
	case PG_LEVEL_NONE:
		return PGDIR_SIZE;
	case PG_LEVEL_512G:
		return PUD_SIZE;
	default:
		return PMD_SIZE;
	}
}

/* One System RAM resource: its direct map, an entry at a time. */
static int walk_ram(struct resource *res, void *arg)
{
	struct walk *w = arg;
	unsigned long addr = (unsigned long)__va(res->start);
	unsigned long end = (unsigned long)__va(res->end) + 1;
	unsigned int level;

	while (addr < end) {
		pte_t *pte = lookup_address(addr, &level);
		unsigned long size = entry_size(pte, level);

		if (!entry_present(pte)) {
			if (pte && level == PG_LEVEL_4K) {
				w->not_present_4k++;
			} else {
				w->large_not_present++;
				bad(w, addr);
			}
		} else if (level <= PG_LEVEL_1G) {
			w->direct[level]++;
		}
		addr = (addr & ~(size - 1)) + size;
	}
	return 0;
}

/* Every present page in the module area has a present direct-map alias. */
static void walk_modules(struct walk *w)
{
	unsigned long addr = MODULES_VADDR;
	unsigned int level, alias_level;

	while (addr < MODULES_END) {
		pte_t *pte = lookup_address(addr, &level);
		unsigned long size = entry_size(pte, level);
		unsigned long va;

		if (entry_present(pte) && level <= PG_LEVEL_2M) {
			w->module[level]++;
			for (va = addr; va < addr + size; va += PAGE_SIZE) {
				struct page *page = vmalloc_to_page((void *)va);

				if (!page || !page_address(page))
					continue;	/* not RAM: nothing to copy */
				if (!entry_present(lookup_address((unsigned long)page_address(page),
								  &alias_level))) {
					w->alias_not_present++;
					bad(w, va);
				}
			}
		}
		addr = (addr & ~(size - 1)) + size;
	}
}

static void walk_all(struct walk *w)
{
	memset(w, 0, sizeof(*w));
	walk_iomem_res_desc(IORES_DESC_NONE, IORESOURCE_SYSTEM_RAM | IORESOURCE_BUSY,
			    0, -1, w, walk_ram);
	walk_modules(w);
}

static int probe_suspend(void)
{
	suspend_runs++;
	walk_all(&snapshot);
	return 0;
}

static struct syscore_ops probe_ops = {
	.suspend = probe_suspend,
};

static void show_walk(struct seq_file *m, const char *name, const struct walk *w)
{
	seq_printf(m, "%s large_not_present %lu\n", name, w->large_not_present);
	seq_printf(m, "%s alias_not_present %lu\n", name, w->alias_not_present);
	seq_printf(m, "%s first_bad 0x%lx\n", name, w->first_bad);
	seq_printf(m, "%s not_present_4k %lu\n", name, w->not_present_4k);
	seq_printf(m, "%s direct_4k %lu\n", name, w->direct[PG_LEVEL_4K]);
	seq_printf(m, "%s direct_2m %lu\n", name, w->direct[PG_LEVEL_2M]);
	seq_printf(m, "%s direct_1g %lu\n", name, w->direct[PG_LEVEL_1G]);
	seq_printf(m, "%s module_4k %lu\n", name, w->module[PG_LEVEL_4K]);
	seq_printf(m, "%s module_2m %lu\n", name, w->module[PG_LEVEL_2M]);
}

static int probe_show(struct seq_file *m, void *v)
{
	seq_printf(m, "suspend_runs %lu\n", suspend_runs);
	show_walk(m, "snapshot", &snapshot);
	show_walk(m, "now", &now);
	return 0;
}

static int probe_open(struct inode *inode, struct file *f)
{
	return single_open(f, probe_show, NULL);
}

/* Any write walks the mappings now, in process context. */
static ssize_t probe_write(struct file *f, const char __user *buf, size_t len, loff_t *pos)
{
	walk_all(&now);
	return len;
}

static const struct file_operations probe_fops = {
	.owner = THIS_MODULE,
	.open = probe_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = probe_write,
};

static int __init probe_init(void)
{
	file = debugfs_create_file("hibernate_probe", 0600, NULL, NULL, &probe_fops);
	register_syscore_ops(&probe_ops);
	return 0;
}

static void __exit probe_exit(void)
{
	unregister_syscore_ops(&probe_ops);
	debugfs_remove(file);
}

module_init(probe_init);
module_exit(probe_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Checks at hibernation's snapshot that the kernel mappings can be saved");
