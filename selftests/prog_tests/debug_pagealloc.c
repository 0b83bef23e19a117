// SPDX-License-Identifier: GPL-2.0
/*
 * debug_pagealloc (make test-pagealloc boots with debug_pagealloc=on):
 * every free page is unmapped from the direct map and mapped again as it
 * is handed out.  The unmap flushes only the freeing CPU's TLB, so an
 * entry another CPU still holds for the page dies at that CPU's next
 * address-space switch only if it is not global.  Patch 20 gives pages
 * made present again their global bit back, and must not here: pages
 * handed out must not be global, where the direct map mapped at boot is
 * (with PTI none of it is, and there is nothing to tell: skipped).  And
 * the collapse is off: the direct map stays 4K, whatever is freed.
 */
#include "../checks.h"
#include "../lib/dmap_heal.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define PAGES		64
#define ROX_AREAS	64

static void test_not_global(void)
{
	if (!ASSERT_OK(dmap_heal_cmd("alloc %d", PAGES), "dmap_heal alloc"))
		return;
	test__note("%lld pages handed out: %lld present, %lld global; the boot direct map global: %lld",
		   dmap_heal_result("pages"), dmap_heal_result("present"),
		   dmap_heal_result("global"), dmap_heal_result("boot_global"));
	if (!ASSERT_EQ(dmap_heal_result("debug_pagealloc"), 1, "debug_pagealloc enabled"))
		return;
	if (!dmap_heal_result("boot_global")) {
		test__skip("the direct map is not global (PTI): nothing to tell");
		return;
	}
	ASSERT_EQ(dmap_heal_result("pages"), PAGES, "pages");
	ASSERT_EQ(dmap_heal_result("present"), PAGES, "each present once handed out");
	ASSERT_EQ(dmap_heal_result("global"), 0, "none global");
}

/* RO+X areas made and freed: their split direct map is not put back together. */
static void test_no_collapse(void)
{
	long long before = read_vmstat("direct_map_level2_collapses");

	if (!REQUIRE_PATCHED(before >= 0, VMSTAT_L2_COLLAPSES))
		return;
	if (!ASSERT_OK(dmap_heal_cmd("rox %d", ROX_AREAS), "RO+X areas made") ||
	    !ASSERT_OK(dmap_heal_cmd("free"), "and freed"))
		return;
	ASSERT_EQ(read_vmstat("direct_map_level2_collapses"), before, "no collapse");
	ASSERT_EQ(read_meminfo_kb("DirectMap2M"), 0, "no 2M entry in the direct map");
	ASSERT_LE(read_meminfo_kb("DirectMap1G"), 0, "nor 1G (-1: no 1G pages to count)");
}

void test_debug_pagealloc(void)
{
	bool up;

	if (!cmdline_has("debug_pagealloc=on")) {
		test__skip("booted without debug_pagealloc=on (make test-pagealloc)");
		return;
	}
	up = ASSERT_OK(dmap_heal_load(), "load dmap_heal.ko");
	if (test__start_subtest("not_global") && ASSERT_TRUE(up, "dmap_heal.ko loaded"))
		test_not_global();
	if (test__start_subtest("no_collapse") && ASSERT_TRUE(up, "dmap_heal.ko loaded"))
		test_no_collapse();
	if (up)
		ASSERT_OK(dmap_heal_unload(), "unload dmap_heal.ko");
}
