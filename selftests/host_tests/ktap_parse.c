// SPDX-License-Identifier: GPL-2.0
/* The KTAP parser on what a 6.1 KUnit module prints, good and bad. */
#include "../lib/ktap.h"
#include "../test_runner.h"

static void feed_all(struct ktap_suite *s, const char *const *lines)
{
	ktap_init(s);
	while (*lines)
		ktap_feed(s, *lines++);
}

static const char *const passing[] = {
	"    KTAP version 1",
	"    # Subtest: vmalloc_huge",
	"    1..3",
	"    ok 1 vmalloc_huge_pmd_mapped",
	"    # vmalloc_huge_pfn_contiguous: huge vmalloc is off",
	"    ok 2 vmalloc_huge_pfn_contiguous # SKIP huge vmalloc is off (nohugevmalloc)",
	"    ok 3 kvmalloc_small_kmalloc",
	"# vmalloc_huge: pass:2 fail:0 skip:1 total:3",
	"# Totals: pass:2 fail:0 skip:1 total:3",
	"ok 1 vmalloc_huge",
	NULL,
};

static const char *const failing[] = {
	"unrelated kernel message",
	"    KTAP version 1",
	"    # Subtest: vmalloc_huge",
	"    1..2",
	"    # vmalloc_huge_pmd_mapped: EXPECTATION FAILED at vmalloc_huge_kunit.c:49",
	"    not ok 1 vmalloc_huge_pmd_mapped",
	"        ok 1 param-0",	/* a parameterised case's own cases */
	"    ok 2 vmalloc_huge_rw",
	"not ok 1 vmalloc_huge",
	NULL,
};

/* The suite crashed after its first case: the plan is not met. */
static const char *const truncated[] = {
	"    # Subtest: vmalloc_huge",
	"    1..9",
	"    ok 1 vmalloc_huge_pmd_mapped",
	NULL,
};

void test_ktap_parse(void)
{
	struct ktap_suite s;

	if (test__start_subtest("passing")) {
		feed_all(&s, passing);
		ASSERT_STREQ(s.name, "vmalloc_huge", "suite name");
		ASSERT_EQ(s.planned, 3, "plan");
		ASSERT_EQ(s.ncases, 3, "cases");
		ASSERT_EQ(s.result, KTAP_OK, "suite result");
		ASSERT_TRUE(ktap_complete(&s), "complete");
		ASSERT_EQ(s.cases[0].result, KTAP_OK, "case 1");
		ASSERT_EQ(s.cases[1].result, KTAP_SKIP, "case 2 skipped");
		ASSERT_STREQ(s.cases[1].reason, "huge vmalloc is off (nohugevmalloc)", "skip reason");
		ASSERT_STREQ(s.cases[1].name, "vmalloc_huge_pfn_contiguous", "name without directive");
		ASSERT_TRUE(s.cases[1].diag && strstr(s.cases[1].diag, "huge vmalloc is off"),
			    "diagnostic kept with its case");
		ktap_free(&s);
	}
	if (test__start_subtest("failing")) {
		feed_all(&s, failing);
		ASSERT_EQ(s.ncases, 2, "nested results not counted");
		ASSERT_EQ(s.cases[0].result, KTAP_FAIL, "case 1 failed");
		ASSERT_TRUE(s.cases[0].diag && strstr(s.cases[0].diag, "EXPECTATION FAILED"),
			    "failure diagnostic");
		ASSERT_EQ(s.cases[1].result, KTAP_OK, "case 2");
		ASSERT_EQ(s.result, KTAP_FAIL, "suite result");
		ktap_free(&s);
	}
	if (test__start_subtest("truncated")) {
		feed_all(&s, truncated);
		ASSERT_EQ(s.ncases, 1, "cases");
		ASSERT_FALSE(ktap_complete(&s), "incomplete suite detected");
		ktap_free(&s);
	}
}
