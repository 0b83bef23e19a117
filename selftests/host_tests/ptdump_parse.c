// SPDX-License-Identifier: GPL-2.0
/* The ptdump reader on a sample of x86's /sys/kernel/debug/page_tables/kernel. */
#include <errno.h>

#include "../lib/ptdump.h"
#include "../test_runner.h"

static const char sample[] =
"---[ User Space ]---\n"
"0x0000000000000000-0xffff800000000000   16777088T                               pgd\n"
"---[ Kernel Space ]---\n"
"0xffff800000000000-0xffff888000000000        8704G                               pud\n"
"---[ Low Kernel Mapping ]---\n"
"0xffff888000000000-0xffff888000001000           4K     RW                     NX pte\n"
"0xffff888000001000-0xffff888000200000        2044K     RW                 GLB NX pte\n"
"0xffff888000200000-0xffff888080000000        2046M     RW         PSE     GLB NX pmd\n"
"0xffff888080000000-0xffff888100000000           2G     RW         PSE     GLB NX pud\n"
"---[ vmalloc() Area ]---\n"
"0xffffc90000000000-0xffffc90000400000           4M     RW         PSE     GLB NX pmd\n"
"0xffffc90000400000-0xffffc90000402000           8K     RW                 GLB x  pte\n"
"---[ Modules ]---\n"
"0xffffffffa0000000-0xffffffffa0200000           2M     ro         PSE     GLB x  pmd\n"
"0xffffffffa0200000-0xffffffffa0203000          12K     ro                 GLB x  pte\n"
"0xffffffffa0203000-0xffffffffa0400000        2036K                               pte\n"
"---[ End Modules ]---\n"
"0xffffffffff600000-0xffffffffff601000           4K USR ro                     NX pte\n"
"0xffffffffff800000-0x0000000000000000";

static FILE *open_sample(void)
{
	return fmemopen((void *)sample, sizeof(sample) - 1, "r");
}

struct count {
	int ranges, present, wx;
};

static void count_range(const char *section, const struct pt_range *r, void *data)
{
	struct count *c = data;

	c->ranges++;
	c->present += r->present;
	c->wx += r->present && r->rw && r->x;
}

void test_ptdump_parse(void)
{
	struct pt_stats st;
	struct count c = {};
	FILE *f;

	if (test__start_subtest("walk")) {
		f = open_sample();
		ASSERT_OK(ptdump_walk(f, count_range, &c), "walk");
		fclose(f);
		ASSERT_EQ(c.ranges, 12, "ranges, the unfinished last line left out");
		ASSERT_EQ(c.present, 9, "present ranges");
		ASSERT_EQ(c.wx, 1, "W+X ranges");
	}
	if (test__start_subtest("section_stats")) {
		f = open_sample();
		ASSERT_OK(ptdump_stats(f, "Low Kernel Mapping", 0, 0, &st), "stats");
		fclose(f);
		ASSERT_EQ(st.bytes[PT_4K], 2048 << 10, "4K bytes");
		ASSERT_EQ(pt_entries(&st, PT_4K), 512, "4K entries");
		ASSERT_EQ(pt_entries(&st, PT_2M), 1023, "2M entries");
		ASSERT_EQ(pt_entries(&st, PT_1G), 2, "1G entries");
		ASSERT_EQ(st.wx_bytes, 0, "no W+X in the direct map");
	}
	if (test__start_subtest("modules_stats")) {
		f = open_sample();
		ASSERT_OK(ptdump_stats(f, "Modules", 0, 0, &st), "stats");
		fclose(f);
		ASSERT_EQ(pt_entries(&st, PT_2M), 1, "2M entries");
		ASSERT_EQ(pt_entries(&st, PT_4K), 3, "4K entries, not-present ones left out");
		ASSERT_EQ(pt_mapped(&st), (2048 + 12) << 10, "mapped bytes");
	}
	if (test__start_subtest("range_stats")) {
		f = open_sample();
		/* straddles the huge and the W+X 4K range of vmalloc() Area */
		ASSERT_OK(ptdump_stats(f, NULL, 0xffffc90000200000ull, 0xffffc90000401000ull, &st),
			  "stats");
		fclose(f);
		ASSERT_EQ(st.bytes[PT_2M], 2 << 20, "clipped 2M bytes");
		ASSERT_EQ(st.bytes[PT_4K], 4096, "clipped 4K bytes");
		ASSERT_EQ(st.wx_bytes, 4096, "W+X bytes");
	}
	if (test__start_subtest("garbage")) {
		static char junk[] = "---[ Modules ]---\n0xffffffffa0000000-nonsense 4K ro x pte\n";

		f = fmemopen(junk, sizeof(junk) - 1, "r");
		ASSERT_EQ(ptdump_walk(f, count_range, &c), -EINVAL, "bad line rejected");
		fclose(f);
		f = fmemopen(junk, 18, "r");	/* a marker and no range */
		ASSERT_EQ(ptdump_walk(f, count_range, &c), -ENODATA, "empty dump rejected");
		fclose(f);
	}
}
