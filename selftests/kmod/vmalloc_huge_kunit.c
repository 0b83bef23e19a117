// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for opt-in huge vmalloc, the base the huge BPF program packs
 * stand on.  It checks the facts mm/vmalloc.c promises rather than assuming
 * them: only VM_ALLOW_HUGE_VMAP areas get PMD mappings, their backing memory
 * is split into order-0 pages, kvmalloc() opts in, and nohugevmalloc turns
 * it all off.
 *
 * huge_expected=0 says the kernel was booted with nohugevmalloc, so every
 * case that expects a PMD mapping expects PTEs instead.
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <asm/pgtable.h>

static bool huge_expected = true;
module_param(huge_expected, bool, 0444);
MODULE_PARM_DESC(huge_expected, "huge vmalloc is enabled (boot without nohugevmalloc)");

/*
 * vmalloc maps an area huge only when each online node's share of it is a
 * PMD or more (__vmalloc_node_range()): two PMDs a node.
 */
#define HUGE_SIZE	(2 * PMD_SIZE * num_online_nodes())

/* Page-table level that maps @addr in the kernel page tables. */
static int map_level(struct kunit *test, unsigned long addr)
{
	unsigned int level;
	pte_t *pte = lookup_address(addr, &level);

	KUNIT_ASSERT_NOT_NULL_MSG(test, pte, "no mapping at %lx", addr);
	KUNIT_ASSERT_TRUE_MSG(test, pte_present(*pte), "not present at %lx", addr);
	return level;
}

/* Every PAGE_SIZE step of [addr, addr + size) is mapped at @level. */
static void expect_mapped_at(struct kunit *test, const void *p, size_t size, int level)
{
	unsigned long addr = (unsigned long)p, off;

	for (off = 0; off < size; off += PAGE_SIZE) {
		int seen = map_level(test, addr + off);

		if (seen != level) {
			KUNIT_FAIL(test, "%lx (+%lx of %zx): level %d, expected %d",
				   addr + off, off, size, seen, level);
			return;
		}
	}
}

static int huge_level(void)
{
	return huge_expected ? PG_LEVEL_2M : PG_LEVEL_4K;
}

static void *alloc_huge(struct kunit *test, size_t size)
{
	void *p = vmalloc_huge(size, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	return p;
}

static void vmalloc_huge_pmd_mapped(struct kunit *test)
{
	void *p = alloc_huge(test, HUGE_SIZE);

	if (huge_expected)
		KUNIT_EXPECT_TRUE_MSG(test, IS_ALIGNED((unsigned long)p, PMD_SIZE),
				      "huge area %px not PMD aligned", p);
	expect_mapped_at(test, p, HUGE_SIZE, huge_level());
	vfree(p);
}

/* A size that is not a multiple of PMD_SIZE is rounded up, never split. */
static void vmalloc_huge_odd_size(struct kunit *test)
{
	size_t size = PMD_SIZE * num_online_nodes() + PMD_SIZE / 2 + PAGE_SIZE;
	void *p = alloc_huge(test, size);

	expect_mapped_at(test, p, size, huge_level());
	vfree(p);
}

/* Without VM_ALLOW_HUGE_VMAP nothing is mapped huge: the opt-in. */
static void vmalloc_plain_pte_mapped(struct kunit *test)
{
	void *p = vmalloc(HUGE_SIZE);

	KUNIT_ASSERT_NOT_NULL(test, p);
	expect_mapped_at(test, p, HUGE_SIZE, PG_LEVEL_4K);
	vfree(p);
}

/* Below PMD_SIZE even an opted-in area uses PTEs. */
static void vmalloc_huge_small_pte_mapped(struct kunit *test)
{
	size_t size = PMD_SIZE / 2;
	void *p = alloc_huge(test, size);

	expect_mapped_at(test, p, size, PG_LEVEL_4K);
	vfree(p);
}

/*
 * The huge pages behind the area are split into order-0 pages, so that
 * vmalloc_to_page() users and vfree() see ordinary pages: none compound,
 * each with one reference.
 */
static void vmalloc_huge_pages_order0(struct kunit *test)
{
	void *p = alloc_huge(test, HUGE_SIZE);
	size_t off;

	for (off = 0; off < HUGE_SIZE; off += PAGE_SIZE) {
		struct page *page = vmalloc_to_page(p + off);

		KUNIT_ASSERT_NOT_NULL(test, page);
		if (PageCompound(page) || page_count(page) != 1) {
			KUNIT_FAIL(test, "+%zx: pfn %lx compound %d count %d",
				   off, page_to_pfn(page), PageCompound(page),
				   page_count(page));
			break;
		}
	}
	vfree(p);
}

/* Each PMD is backed by one naturally aligned, physically contiguous run. */
static void vmalloc_huge_pfn_contiguous(struct kunit *test)
{
	void *p;
	unsigned long head = 0;
	size_t off;

	if (!huge_expected)
		kunit_skip(test, "huge vmalloc is off (nohugevmalloc)");
	p = alloc_huge(test, HUGE_SIZE);
	for (off = 0; off < HUGE_SIZE; off += PAGE_SIZE) {
		unsigned long pfn = vmalloc_to_pfn(p + off);

		if (IS_ALIGNED(off, PMD_SIZE))
			head = pfn;
		if (!IS_ALIGNED(head, PTRS_PER_PMD) ||
		    pfn != head + (off % PMD_SIZE) / PAGE_SIZE) {
			KUNIT_FAIL(test, "+%zx: pfn %lx, PMD head pfn %lx", off, pfn, head);
			break;
		}
	}
	vfree(p);
}

/* The whole area is usable memory: write a pattern, read it back. */
static void vmalloc_huge_rw(struct kunit *test)
{
	u64 *p = alloc_huge(test, HUGE_SIZE);
	size_t i, n = HUGE_SIZE / sizeof(*p);

	for (i = 0; i < n; i++)
		p[i] = i * 0x9e3779b97f4a7c15ull;
	for (i = 0; i < n; i++) {
		if (p[i] != i * 0x9e3779b97f4a7c15ull) {
			KUNIT_FAIL(test, "word %zu reads %llx", i, p[i]);
			break;
		}
	}
	vfree(p);
}

/*
 * Beyond KMALLOC_MAX_SIZE kvmalloc() must fall back to vmalloc, and that
 * fallback opts into huge mappings.
 */
static void kvmalloc_large_huge(struct kunit *test)
{
	size_t size = 2 * KMALLOC_MAX_SIZE;
	void *p = kvmalloc(size, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_TRUE(test, is_vmalloc_addr(p));
	expect_mapped_at(test, p, size, huge_level());
	kvfree(p);
}

/* And small kvmalloc() requests are still served by kmalloc. */
static void kvmalloc_small_kmalloc(struct kunit *test)
{
	void *p = kvmalloc(PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_FALSE(test, is_vmalloc_addr(p));
	kvfree(p);
}

static struct kunit_case vmalloc_huge_cases[] = {
	KUNIT_CASE(vmalloc_huge_pmd_mapped),
	KUNIT_CASE(vmalloc_huge_odd_size),
	KUNIT_CASE(vmalloc_plain_pte_mapped),
	KUNIT_CASE(vmalloc_huge_small_pte_mapped),
	KUNIT_CASE(vmalloc_huge_pages_order0),
	KUNIT_CASE(vmalloc_huge_pfn_contiguous),
	KUNIT_CASE(vmalloc_huge_rw),
	KUNIT_CASE(kvmalloc_large_huge),
	KUNIT_CASE(kvmalloc_small_kmalloc),
	{}
};

static struct kunit_suite vmalloc_huge_suite = {
	.name = "vmalloc_huge",
	.test_cases = vmalloc_huge_cases,
};

/*
 * Not kunit_test_suite(): 6.1 runs a module's suites from its
 * MODULE_STATE_COMING notifier, before parse_args(), so the suite would
 * never see huge_expected.  module_init runs after the parameters are set.
 */
static struct kunit_suite *suites[] = { &vmalloc_huge_suite };

static int __init vmalloc_huge_kunit_init(void)
{
	return __kunit_test_suites_init(suites, ARRAY_SIZE(suites));
}
module_init(vmalloc_huge_kunit_init);

static void __exit vmalloc_huge_kunit_exit(void)
{
	__kunit_test_suites_exit(suites, ARRAY_SIZE(suites));
}
module_exit(vmalloc_huge_kunit_exit);

MODULE_DESCRIPTION("KUnit tests for opt-in huge vmalloc");
MODULE_LICENSE("GPL");
