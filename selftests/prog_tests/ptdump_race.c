// SPDX-License-Identifier: GPL-2.0
/*
 * Packs created while another thread reads the kernel page tables
 * (/sys/kernel/debug/page_tables/kernel), where 4K packs were mapped
 * before.  A ptdump walk holds init_mm's mmap lock; a huge area mapped
 * meanwhile over a PMD that still holds the page table of an earlier 4K
 * mapping could not free it, and got 4K PTEs while its pages were huge.
 * Every pack the statistics call huge must be mapped by 2M entries
 * (check_all_packs()), and creating them must not split the direct map.
 * At least two walks must end while the packs are made, so that one ran
 * from start to end among the creations: else nothing raced.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "../checks.h"
#include "../lib/churn.h"
#include "../lib/packstats.h"
#include "../lib/progs.h"
#include "../lib/ptdump.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define FALLBACK_PACKS	4	/* 4K packs made, then freed, first */
#define NEW_PACKS	4	/* huge packs made while ptdump is read, */
#define MAX_NEW_PACKS	16	/* or more, until MIN_WALKS walks ended meanwhile */
#define MIN_WALKS	2
#define MAX_PROGS	4096
#define PMD_SHIFT	21

static int fds[MAX_PROGS];
static int nfds;
static atomic_bool stop;
static atomic_int walks;

/* Reads the kernel page tables again and again until told to stop. */
static void *reader(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		if (drain_file(PTDUMP_PATH)) {
			atomic_store(&walks, -1);
			break;
		}
		atomic_fetch_add(&walks, 1);
	}
	return NULL;
}

/* Loads big programs until the statistics count @huge huge packs and @fallbacks fallbacks. */
static bool load_until(long long huge, long long fallbacks, struct pack_stats *st)
{
	while (nfds < MAX_PROGS) {
		int fd = load_fill();

		if (!ASSERT_GE(fd, 0, "load"))
			return false;
		fds[nfds++] = fd;
		if (!ASSERT_OK(packstats_read(st), "read " PACKSTATS_PATH))
			return false;
		if (st->huge_packs >= huge && st->fallbacks >= fallbacks)
			return true;
		packstats_free(st);
	}
	return ASSERT_TRUE(false, "packs made within MAX_PROGS loads");
}

static void close_all(void)
{
	while (nfds)
		close(fds[--nfds]);
}

static void race(void)
{
	struct pack_stats base = {}, st = {};
	unsigned long long pmds4k[64];	/* the PMDs the 4K packs touched */
	int i, j, n4k = 0, reused = 0, nfill, walks0, walks1;
	long long want;
	struct mem_snapshot mem;
	pthread_t thread;

	if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
	    !ASSERT_OK(packstats_read(&base), "read " PACKSTATS_PATH))
		return;
	/* room in the packs there are would take the programs */
	nfill = packs_fill(&base, load_fill, fds, MAX_PROGS);
	if (!ASSERT_GE(nfill, 0, "fill the packs there are"))
		goto out;
	nfds = nfill;

	/* 4K packs, then freed: their PMDs keep the page tables */
	if (!ASSERT_OK(fault_setup(FAIL_PAGE_ALLOC, FAULT_ALWAYS, 9), "fail_page_alloc on"))
		goto out;
	i = load_until(base.huge_packs, base.fallbacks + FALLBACK_PACKS, &st);
	fault_setup(FAIL_PAGE_ALLOC, FAULT_OFF, 0);
	if (!i)
		goto out;
	for (i = 0; i < st.npacks; i++) {
		uint64_t a = st.pack[i].addr, pmd;

		if (st.pack[i].mapped_shift != 12 || pack_of(&base, a) >= 0)
			continue;
		for (pmd = a >> PMD_SHIFT; pmd <= (a + st.pack_size - 1) >> PMD_SHIFT; pmd++)
			if (n4k < (int)(sizeof(pmds4k) / sizeof(pmds4k[0])))
				pmds4k[n4k++] = pmd;
	}
	packstats_free(&st);
	while (nfds > nfill)
		close(fds[--nfds]);
	if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "the 4K packs freed") ||
	    !ASSERT_OK(snapshot_take(&mem), "direct map before"))
		goto out;

	/* huge packs, while ptdump walks */
	atomic_store(&stop, false);
	atomic_store(&walks, 0);
	if (!ASSERT_OK(-pthread_create(&thread, NULL, reader, NULL), "pthread_create"))
		goto out;
	while (!atomic_load(&walks))
		usleep(1000);
	/*
	 * Walks ended before the first pack and after the last: their
	 * difference ran among the creations.  A walk may take longer than
	 * NEW_PACKS creations; then more are made, up to MAX_NEW_PACKS.
	 */
	walks0 = atomic_load(&walks);
	want = base.huge_packs + NEW_PACKS;
	do {
		packstats_free(&st);
		i = walks0 > 0 && load_until(want++, base.fallbacks + FALLBACK_PACKS, &st);
		walks1 = atomic_load(&walks);
	} while (i && walks1 >= 0 && walks1 - walks0 < MIN_WALKS &&
		 want <= base.huge_packs + MAX_NEW_PACKS);
	atomic_store(&stop, true);
	pthread_join(thread, NULL);
	if (!ASSERT_GT(atomic_load(&walks), 0, "ptdump read meanwhile") || !i)
		goto out;
	ASSERT_GE(walks1 - walks0, MIN_WALKS, "ptdump walks that ended while packs were made");

	ASSERT_EQ(st.fallbacks, base.fallbacks + FALLBACK_PACKS, "no fallback while ptdump runs");
	for (i = 0; i < st.npacks; i++) {
		uint64_t a = st.pack[i].addr, pmd;

		if (st.pack[i].mapped_shift != PMD_SHIFT || pack_of(&base, a) >= 0)
			continue;
		for (pmd = a >> PMD_SHIFT; pmd < (a + st.pack_size) >> PMD_SHIFT; pmd++)
			for (j = 0; j < n4k; j++)
				reused += pmd == pmds4k[j];
	}
	/* else the test proves nothing: no PMD held a page table */
	ASSERT_GT(reused, 0, "huge packs where 4K packs were");
	/* huge in the statistics: mapped by 2M entries in ptdump */
	check_all_packs(&st, "made while ptdump ran");
	check_direct_map(&mem, NULL);
	test__note("%d ptdump walks, %d while %lld huge packs were made; %d of the new packs' "
		   "PMDs held 4K packs before", atomic_load(&walks), walks1 - walks0,
		   st.huge_packs - base.huge_packs, reused);
out:
	fault_setup(FAIL_PAGE_ALLOC, FAULT_OFF, 0);
	packstats_free(&st);
	packstats_free(&base);
	close_all();
	if (ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce"))
		check_invariants("after the race");
}

void test_ptdump_race(void)
{
	if (!REQUIRE_PATCHED(packstats_available(), PACKSTATS_PATH))
		return;
	if (!fault_available(FAIL_PAGE_ALLOC) || access(PTDUMP_PATH, R_OK)) {
		test__skip("needs CONFIG_FAIL_PAGE_ALLOC and CONFIG_PTDUMP_DEBUGFS");
		return;
	}
	if (!expect_huge_vmalloc(test__args())) {
		test__skip("booted with nohugevmalloc: no huge pack to make");
		return;
	}
	if (test__start_subtest("packs_while_ptdump_reads"))
		race();
}
