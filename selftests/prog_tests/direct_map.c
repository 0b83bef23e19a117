// SPDX-License-Identifier: GPL-2.0
/*
 * The evidence every direct-map claim rests on is there and consistent:
 * the split counters (and, on the patched kernel, -a expect-patched, the
 * collapse counters), DirectMap* in /proc/meminfo, and ptdump, whose
 * "Low Kernel Mapping" must map exactly what DirectMap* says.
 */
#include "../checks.h"
#include "../lib/churn.h"
#include "../lib/sys.h"
#include "../test_runner.h"

static void test_counters(void)
{
	ASSERT_GE(read_vmstat("direct_map_level2_splits"), 0, "direct_map_level2_splits");
	ASSERT_GE(read_vmstat("direct_map_level3_splits"), 0, "direct_map_level3_splits");
	ASSERT_GT(read_meminfo_kb("DirectMap4k"), 0, "DirectMap4k");
	ASSERT_GT(read_meminfo_kb("DirectMap2M"), 0, "DirectMap2M");
	/* patch 21's: required under expect-patched, absent elsewhere */
	PATCHED_HAS(read_vmstat("direct_map_level2_collapses") >= 0, VMSTAT_L2_COLLAPSES);
	PATCHED_HAS(read_vmstat("direct_map_level3_collapses") >= 0,
		    "/proc/vmstat direct_map_level3_collapses");
}

struct sections {
	int seen;
};

static const char *const wanted[] = {
	"Low Kernel Mapping", "vmalloc() Area", "Modules", "End Modules",
};

static void note_section(const char *section, const struct pt_range *r, void *data)
{
	struct sections *s = data;
	size_t i;

	(void)r;
	for (i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		if (!strcmp(section, wanted[i]))
			s->seen |= 1 << i;
}

static void test_ptdump_sections(void)
{
	struct sections s = {};
	FILE *f = fopen(PTDUMP_PATH, "r");
	size_t i;

	if (!ASSERT_TRUE(f, "open " PTDUMP_PATH))
		return;
	ASSERT_OK(ptdump_walk(f, note_section, &s), "ptdump_walk");
	fclose(f);
	for (i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		if (!ASSERT_TRUE(s.seen & (1 << i), "section"))
			printf("missing section \"%s\"\n", wanted[i]);
}

/*
 * DirectMap* counts what x86's CPA has split anywhere, the kernel image's
 * high mapping too, so it is not the direct map's own shape: ptdump is.
 * Both must agree on how much memory the direct map covers, and ptdump can
 * never see more 4K entries than the counter.
 */
static void test_ptdump_matches_meminfo(void)
{
	struct mem_snapshot s;

	if (!ASSERT_OK(snapshot_take(&s), "snapshot") || !ASSERT_TRUE(s.have_ptdump, "ptdump"))
		return;
	printf("ptdump: 4K %llu kB, 2M %llu kB, 1G %llu kB; meminfo: %lld, %lld, %lld kB\n",
	       (unsigned long long)s.direct.bytes[PT_4K] >> 10,
	       (unsigned long long)s.direct.bytes[PT_2M] >> 10,
	       (unsigned long long)s.direct.bytes[PT_1G] >> 10, s.dm4k_kb, s.dm2m_kb, s.dm1g_kb);
	ASSERT_EQ(pt_mapped(&s.direct) >> 10, s.dm4k_kb + s.dm2m_kb + s.dm1g_kb,
		  "direct map size: ptdump vs DirectMap*");
	ASSERT_LE(s.direct.bytes[PT_4K] >> 10, s.dm4k_kb, "4K entries: ptdump <= DirectMap4k");
}

void test_direct_map(void)
{
	if (test__start_subtest("counters"))
		test_counters();
	if (test__start_subtest("ptdump_sections"))
		test_ptdump_sections();
	if (test__start_subtest("ptdump_matches_meminfo"))
		test_ptdump_matches_meminfo();
}
