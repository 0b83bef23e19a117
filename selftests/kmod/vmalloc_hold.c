// SPDX-License-Identifier: GPL-2.0
/*
 * Holds a few vmalloc areas while loaded and lists them in
 * /sys/kernel/debug/vmalloc_hold/areas as "name start end", so that a test
 * in user space can find them in /sys/kernel/debug/page_tables/kernel and
 * check how each is mapped.
 */
#include <linux/debugfs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

static unsigned long size_mb = 4;
module_param(size_mb, ulong, 0444);
MODULE_PARM_DESC(size_mb, "size of each vmalloc area, in MiB");

static struct {
	const char *name;
	void *addr;
	size_t size;
} areas[] = {
	{ "vmalloc_huge" },
	{ "vmalloc" },
	{ "kvmalloc" },
};

static struct dentry *dir;

static int areas_show(struct seq_file *m, void *v)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(areas); i++)
		seq_printf(m, "%s 0x%px 0x%px\n", areas[i].name, areas[i].addr,
			   areas[i].addr + areas[i].size);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(areas);

static void free_areas(void)
{
	kvfree(areas[2].addr);
	vfree(areas[1].addr);
	vfree(areas[0].addr);
}

static int __init vmalloc_hold_init(void)
{
	size_t size = size_mb << 20;
	int i;

	/* kvmalloc() goes to vmalloc only beyond what kmalloc serves. */
	if (size <= KMALLOC_MAX_SIZE)
		return -EINVAL;
	areas[0].addr = vmalloc_huge(size, GFP_KERNEL);
	areas[1].addr = vmalloc(size);
	areas[2].addr = kvmalloc(size, GFP_KERNEL);
	for (i = 0; i < ARRAY_SIZE(areas); i++) {
		areas[i].size = size;
		if (!areas[i].addr) {
			free_areas();
			return -ENOMEM;
		}
	}
	dir = debugfs_create_dir("vmalloc_hold", NULL);
	debugfs_create_file("areas", 0400, dir, NULL, &areas_fops);
	return 0;
}
module_init(vmalloc_hold_init);

static void __exit vmalloc_hold_exit(void)
{
	debugfs_remove_recursive(dir);
	free_areas();
}
module_exit(vmalloc_hold_exit);

MODULE_DESCRIPTION("Hold vmalloc areas for page-table tests from user space");
MODULE_LICENSE("GPL");
