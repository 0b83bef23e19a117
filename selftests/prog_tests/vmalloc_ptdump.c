// SPDX-License-Identifier: GPL-2.0
/*
 * The same facts as the KUnit suite, seen from user space: the areas that
 * kmod/vmalloc_hold.ko holds, looked up in ptdump.
 */
#include <inttypes.h>
#include <unistd.h>

#include "../lib/ptdump.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define MODULE_NAME "vmalloc_hold"
#define AREAS "/sys/kernel/debug/vmalloc_hold/areas"

struct area {
	char name[32];
	uint64_t start, end;
};

static int read_areas(struct area *a, int max)
{
	FILE *f = fopen(AREAS, "r");
	int n = 0;

	if (!f)
		return -1;
	while (n < max && fscanf(f, "%31s %" SCNx64 " %" SCNx64, a[n].name,
				 &a[n].start, &a[n].end) == 3)
		n++;
	fclose(f);
	return n;
}

/* Bytes of [start, end) mapped at each size. */
static bool range_stats(const struct area *a, struct pt_stats *st)
{
	int err = ptdump_stats_kernel(NULL, a->start, a->end, st);

	printf("%-13s 0x%" PRIx64 "-0x%" PRIx64 ": 4K %" PRIu64 " kB, 2M %" PRIu64 " kB\n",
	       a->name, a->start, a->end, st->bytes[PT_4K] >> 10, st->bytes[PT_2M] >> 10);
	return ASSERT_OK(err, "ptdump");
}

static void expect_mapping(const struct area *a, bool huge)
{
	struct pt_stats st;

	if (!range_stats(a, &st))
		return;
	ASSERT_EQ(pt_mapped(&st), a->end - a->start, "whole area mapped");
	ASSERT_EQ(st.bytes[huge ? PT_2M : PT_4K], a->end - a->start,
		  huge ? "mapped by PMDs" : "mapped by PTEs");
	ASSERT_EQ(st.wx_bytes, 0, "no W+X");
}

void test_vmalloc_ptdump(void)
{
	bool huge = expect_huge_vmalloc(test__args());
	struct area areas[3];
	struct pt_stats st;
	int n, i, err;

	err = module_load(MODULE_NAME ".ko", "size_mb=8");
	if (!ASSERT_OK(err, "load " MODULE_NAME ".ko"))
		return;
	n = read_areas(areas, 3);
	ASSERT_EQ(n, 3, "areas listed in " AREAS);
	for (i = 0; i < n; i++) {
		if (!test__start_subtest(areas[i].name))
			continue;
		/* only the opted-in areas map huge: vmalloc_huge() and kvmalloc() */
		expect_mapping(&areas[i], huge && strcmp(areas[i].name, "vmalloc"));
	}
	if (!ASSERT_OK(module_unload(MODULE_NAME), "unload " MODULE_NAME))
		return;
	if (test__start_subtest("unmapped_after_free")) {
		for (i = 0; i < n; i++)
			if (range_stats(&areas[i], &st))
				ASSERT_EQ(pt_mapped(&st), 0, "nothing mapped after vfree");
	}
}
