// SPDX-License-Identifier: GPL-2.0
/*
 * Takes all of the module range but @leave_mb MiB, as address space only
 * (vm areas with no pages), and gives it back on unload.  The module_space
 * test runs in what is left, with bpf_jit_limit scaled to half of it, the
 * proportion the kernel sets by default: filling the real 504 MiB budget
 * with unprivileged filters needs more memory than the guest has.
 *
 * __get_vm_area_caller() is not exported; the test passes its address from
 * /proc/kallsyms (get_vm_area_addr).
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

static unsigned long get_vm_area_addr;
module_param(get_vm_area_addr, ulong, 0400);
MODULE_PARM_DESC(get_vm_area_addr, "address of __get_vm_area_caller()");

static unsigned int leave_mb = 64;
module_param(leave_mb, uint, 0400);
MODULE_PARM_DESC(leave_mb, "MiB of the module range to leave free");

typedef struct vm_struct *(get_vm_area_t)(unsigned long size, unsigned long flags,
					   unsigned long start, unsigned long end,
					   const void *caller);

static struct vm_struct **areas;
static unsigned int nr_areas;

static void release(unsigned int keep)
{
	while (nr_areas > keep)
		free_vm_area(areas[--nr_areas]);
}

static int __init modspace_reserve_init(void)
{
	get_vm_area_t *get_vm_area_fn = (get_vm_area_t *)get_vm_area_addr;
	unsigned int max = MODULES_LEN / SZ_1M;
	struct vm_struct *vm;

	if (!get_vm_area_addr)
		return -EINVAL;
	areas = kvcalloc(max, sizeof(*areas), GFP_KERNEL);
	if (!areas)
		return -ENOMEM;
	/* 1 MiB at a time, lowest address first, until the range is full */
	while (nr_areas < max) {
		vm = get_vm_area_fn(SZ_1M, VM_NO_GUARD, MODULES_VADDR, MODULES_END,
				    __builtin_return_address(0));
		if (!vm)
			break;
		areas[nr_areas++] = vm;
	}
	if (nr_areas <= leave_mb) {
		release(0);
		kvfree(areas);
		return -ENOSPC;
	}
	/* the last ones taken are the highest: what is left is one piece */
	release(nr_areas - leave_mb);
	pr_info("modspace_reserve: %u MiB of the module range taken, %u MiB left\n",
		nr_areas, leave_mb);
	return 0;
}
module_init(modspace_reserve_init);

static void __exit modspace_reserve_exit(void)
{
	release(0);
	kvfree(areas);
}
module_exit(modspace_reserve_exit);

MODULE_DESCRIPTION("Take most of the module range, for tests of what is left");
MODULE_LICENSE("GPL");
