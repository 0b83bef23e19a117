// SPDX-License-Identifier: GPL-2.0
/*
 * A module whose core takes a little over 3 MiB of the module range, for a
 * 3 MiB array in .bss: it loads only where the range still has that much
 * room in one piece (the module_space test, with the JIT budget used up).
 */
#include <linux/module.h>
#include <linux/sizes.h>

static char big_array[3 * SZ_1M];

static int __init big_module_init(void)
{
	/* used, so that the array stays */
	WRITE_ONCE(big_array[sizeof(big_array) - 1], 1);
	return 0;
}
module_init(big_module_init);

static void __exit big_module_exit(void)
{
}
module_exit(big_module_exit);

MODULE_DESCRIPTION("A 3 MiB module, to find room in the module range");
MODULE_LICENSE("GPL");
