// SPDX-License-Identifier: GPL-2.0
/* The reader of /sys/kernel/debug/bpf/prog_pack on what the series prints. */
#include <errno.h>

#include "../lib/packstats.h"
#include "../test_runner.h"

static const char sample[] =
"packs 2\n"
"huge_packs 1\n"
"fallbacks 1\n"
"oversized 0\n"
"bytes_in_use 1216\n"
"chunk_size 64\n"
"pack_size 2097152\n"
"pack 0xffffffffa0000000 mapped 2M chunks 32768 used 12 free 32756 largest_free 32740 used_list 0-3,10-17\n"
"pack 0xffffffffa0200000 mapped 4K chunks 32768 used 7 free 32761 largest_free 32761 used_list 0-6\n";

static int parse(const char *text, struct pack_stats *st)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err = packstats_parse(f, st);

	fclose(f);
	return err;
}

void test_packstats_parse(void)
{
	static struct pack_stats st;
	unsigned char map[8];

	if (test__start_subtest("cache")) {
		static const char cache[] =
			"packs 1\nhuge_packs 1\nfallbacks 0\ncached 1\nreserve 2\noversized 0\n"
			"bytes_in_use 0\nchunk_size 64\npack_size 2097152\n"
			"pack 0xffffffffa0000000 mapped 2M chunks 32768 used 0 free 32768 "
			"largest_free 32768 used_list \n";

		if (ASSERT_OK(parse(cache, &st), "parse")) {
			ASSERT_EQ(st.cached, 1, "cached");
			ASSERT_EQ(st.reserve, 2, "reserve");
			ASSERT_EQ(st.pack[0].nr_used, 0, "empty");
			packstats_free(&st);
		}
		if (ASSERT_OK(parse(sample, &st), "parse without them"))
			ASSERT_EQ(st.cached + st.reserve, 0, "none cached, no reserve");
		packstats_free(&st);
	}
	if (test__start_subtest("sample")) {
		if (ASSERT_OK(parse(sample, &st), "parse")) {
			ASSERT_EQ(st.packs, 2, "packs");
			ASSERT_EQ(st.huge_packs, 1, "huge packs");
			ASSERT_EQ(st.fallbacks, 1, "fallbacks");
			ASSERT_EQ(st.bytes_in_use, 1216, "bytes in use");
			ASSERT_EQ(st.pack[0].addr, 0xffffffffa0000000ull, "address");
			ASSERT_EQ(st.pack[0].mapped_shift, 21, "2M");
			ASSERT_EQ(st.pack[1].mapped_shift, 12, "4K");
			ASSERT_TRUE(st.pack[0].used[3] && !st.pack[0].used[4] &&
				    st.pack[0].used[10] && st.pack[0].used[17] && !st.pack[0].used[18],
				    "used chunks from the list");
			packstats_free(&st);
		}
	}
	if (test__start_subtest("pack_count_mismatch"))
		ASSERT_EQ(parse("packs 3\nhuge_packs 0\nfallbacks 0\noversized 0\n"
				"bytes_in_use 0\nchunk_size 64\npack_size 2097152\n", &st),
			  -EINVAL, "fewer pack lines than packs");
	if (test__start_subtest("missing_total"))
		ASSERT_EQ(parse("packs 0\n", &st), -EINVAL, "totals missing");
	if (test__start_subtest("bitmap_list")) {
		memset(map, 0, sizeof(map));
		ASSERT_OK(parse_bitmap_list("0,2-3,7\n", map, 8), "parse");
		ASSERT_TRUE(map[0] && !map[1] && map[2] && map[3] && !map[6] && map[7], "bits");
		ASSERT_EQ(parse_bitmap_list("6-9", map, 8), -EINVAL, "beyond the bitmap");
		ASSERT_EQ(parse_bitmap_list("3-1", map, 8), -EINVAL, "backwards range");
		ASSERT_OK(parse_bitmap_list("", map, 8), "empty list");
	}
}
