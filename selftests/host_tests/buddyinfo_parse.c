// SPDX-License-Identifier: GPL-2.0
/*
 * The fragmenter's proof, free 2 MiB blocks counted in /proc/buddyinfo:
 * orders 9 and up, in 2 MiB, of the zones a kernel allocation takes from.
 */
#include "../lib/fragment.h"
#include "../test_runner.h"

static long count(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	long n = huge_blocks_in(f);

	fclose(f);
	return n;
}

void test_buddyinfo_parse(void)
{
	/* orders 0..10: DMA is left out, an order-10 block is two 2 MiB blocks */
	static const char two_nodes[] =
		"Node 0, zone      DMA      1      0      1      0      2      1      1      0      1      1      3 \n"
		"Node 0, zone    DMA32    164     92     40     21     10      6      4      3      2      2      1 \n"
		"Node 1, zone   Normal   3000   1500    700    300     90     20      4      1      0      5      0 \n";
	static const char fragmented[] =
		"Node 0, zone      DMA      1      0      1      0      2      1      1      0      1      1      3 \n"
		"Node 0, zone    DMA32  12000  11800  11700  11600      0      0      0      0      0      0      0 \n"
		"Node 0, zone   Normal    400    350    300    290      1      0      0      0      0      0      0 \n";

	if (test__start_subtest("orders_9_and_10"))
		ASSERT_EQ(count(two_nodes), 2 + 2 * 1 + 5, "2 MiB blocks free");
	if (test__start_subtest("none_left"))
		ASSERT_EQ(count(fragmented), 0, "2 MiB blocks free");
	if (test__start_subtest("empty"))
		ASSERT_EQ(count(""), 0, "no zone");
}
