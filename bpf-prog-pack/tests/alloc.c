// SPDX-License-Identifier: GPL-2.0
/* Placement, reuse and release of programs in packs. */
#include <errno.h>

#include "cases.h"

#define N 256

static struct bpf_binary_header *progs[N];

static void free_all(void)
{
	int i;

	for (i = 0; i < N; i++) {
		if (progs[i])
			prog_free(progs[i]);
		progs[i] = NULL;
	}
}

/* Chunk aligned, inside a pack, and no two programs overlap. */
static void test_alignment_no_overlap(void)
{
	unsigned int seed = 7;
	int i, j;

	for (i = 0; i < N; i++) {
		progs[i] = prog_alloc(64 + rand_r(&seed) % 4000, false);
		if (!ASSERT_TRUE(progs[i], "alloc"))
			return;
		ASSERT_EQ((uintptr_t)progs[i] % BPF_PROG_CHUNK_SIZE, 0, "chunk aligned");
		ASSERT_GE(pack_index_of(progs[i]), 0, "inside a pack");
		ASSERT_GE(pack_index_of((char *)progs[i] + progs[i]->size - 1), 0, "end inside");
		ASSERT_EQ(pack_index_of(progs[i]),
			  pack_index_of((char *)progs[i] + progs[i]->size - 1), "one pack");
	}
	for (i = 0; i < N; i++)
		for (j = i + 1; j < N; j++) {
			char *a = (char *)progs[i], *b = (char *)progs[j];

			if (a < b + progs[j]->size && b < a + progs[i]->size) {
				ASSERT_TRUE(false, "programs overlap");
				return;
			}
		}
}

/* What fits in one pack lands in one pack. */
static void test_one_pack(void)
{
	int i;

	for (i = 0; i < N; i++)	/* 256 x 4K = 1M: half a pack */
		progs[i] = prog_alloc(4096, false);
	ASSERT_EQ(pack_nr(), 1, "packs");
}

/* Freed chunks are handed out again, and are traps in between. */
static void test_free_returns_chunks(void)
{
	struct bpf_binary_header *a = prog_alloc(1000, false), *b = prog_alloc(1000, false);
	struct pack_view v;
	unsigned int used;

	if (!ASSERT_TRUE(a && b, "alloc") || !ASSERT_OK(pack_get(0, &v), "pack"))
		return;
	used = v.used;
	ASSERT_EQ(used, 2 * prog_chunks(1000), "chunks used");
	prog_free(a);
	pack_get(0, &v);
	ASSERT_EQ(v.used, used - prog_chunks(1000), "chunks returned");
	ASSERT_TRUE(all_trap(a, 1000), "freed program is traps");
	progs[0] = prog_alloc(1000, false);
	ASSERT_TRUE(progs[0] == a, "freed chunks reused first");
	progs[1] = b;
}

#define BIG (64 * 1024)	/* pack_size / BIG programs fill a pack */

/*
 * Allocates programs of BIG bytes until @n packs are full, and the one
 * that opened pack n + 1 is freed, leaving it empty: how many, or -1.
 */
static int fill_packs(int n)
{
	int i;

	for (i = 0; i < N && pack_nr() < n + 1; i++) {
		progs[i] = prog_alloc(BIG, false);
		if (!progs[i])
			return -1;
	}
	/* the program that opened pack n + 1 */
	prog_free(progs[--i]);
	progs[i] = NULL;
	return pack_nr() == n + 1 ? i : -1;
}

/*
 * Huge packs left empty are kept, all traps and still read-only and
 * executable, and the next programs go to them: no new area.
 */
static void test_empty_huge_pack_cached(void)
{
	long areas;
	struct pack_view v;
	int i, n = fill_packs(2);

	if (!ASSERT_GE(n, 1, "fill two packs"))
		return;
	free_all();
	areas = shim.areas;
	ASSERT_EQ(pack_nr(), 3, "packs after the last free");
	ASSERT_EQ(pack_cached_count(), 3, "cached");
	for (i = 0; pack_get(i, &v) == 0; i++) {
		ASSERT_TRUE(v.huge && !v.used, "empty huge pack");
		ASSERT_TRUE(all_trap(v.ptr, pack_size), "all traps");
		ASSERT_TRUE(shim_area_of(v.ptr)->ro && shim_area_of(v.ptr)->x, "ro, x");
	}
	for (i = 0; i < n; i++)
		progs[i] = prog_alloc(BIG, false);
	ASSERT_EQ(shim.areas, areas, "no new area for the same load");
	ASSERT_EQ(pack_cached_count(), 1, "two taken from the cache");
}

/* A 4K pack is freed as it empties: the next pack is tried huge again. */
static void test_empty_fallback_pack_freed(void)
{
	struct pack_view v;

	shim.fail_huge = 0;
	progs[0] = prog_alloc(64, false);
	if (!ASSERT_OK(pack_get(0, &v), "pack") || !ASSERT_FALSE(v.huge, "4K pack"))
		return;
	free_all();
	ASSERT_EQ(pack_nr(), 0, "4K pack freed");
	ASSERT_EQ(pack_cached_count(), 0, "not cached");
	progs[0] = prog_alloc(64, false);
	ASSERT_TRUE(!pack_get(0, &v) && v.huge, "next pack huge");
}

/*
 * Cached packs go after idle_secs unused, one run of the work for each
 * time one is due; a pack taken again meanwhile stays.  With idle_secs 0
 * nothing is cached, and a write applies to the packs already cached
 * before it returns.
 */
static void test_idle_packs_released(void)
{
	unsigned long t0 = jiffies;

	progs[0] = prog_alloc(64, false);
	free_all();
	jiffies += 100 * HZ;
	progs[1] = prog_alloc(pack_size, false);	/* the cached pack, full */
	progs[0] = prog_alloc(64, false);			/* a second pack */
	prog_free(progs[1]);
	progs[1] = NULL;
	ASSERT_EQ(pack_cached_count(), 1, "first pack cached again");
	ASSERT_TRUE(shim_run_work(), "idle work queued");
	ASSERT_EQ(jiffies - t0, 600 * HZ, "ran 600 s after the first pack emptied");
	ASSERT_EQ(pack_cached_count(), 1, "the pack emptied later stays");
	ASSERT_TRUE(shim_run_work(), "requeued for it");
	ASSERT_EQ(jiffies - t0, 700 * HZ, "600 s after it emptied");
	ASSERT_EQ(pack_nr(), 1, "the pack in use stays");
	ASSERT_EQ(pack_cached_count(), 0, "cache empty");
	ASSERT_FALSE(shim_run_work(), "nothing queued");

	free_all();
	ASSERT_EQ(pack_cached_count(), 1, "cached");
	ASSERT_EQ(pack_set_idle_secs("0"), 0, "idle_secs=0");
	ASSERT_EQ(pack_nr(), 0, "the cached pack goes before the write returns");
	progs[0] = prog_alloc(64, false);
	free_all();
	ASSERT_EQ(pack_nr(), 0, "with idle_secs 0 a pack is freed as it empties");
	ASSERT_EQ(pack_set_idle_secs("604801"), -EINVAL, "more than a week refused");
	ASSERT_EQ(pack_set_idle_secs("600"), 0, "idle_secs=600");
	shim_run_work();
}

/*
 * While pages are short the shrinker counts the cached packs' pages and
 * frees a pack for each 512 pages asked, whatever their age; packs with
 * programs stay.  It gives up at once when pack_mutex is taken: the
 * holder may be reclaiming.  With pages plenty (reclaim for high orders
 * only) it counts nothing and frees nothing.
 */
static void test_shrinker(void)
{
	int i, n = fill_packs(3);

	if (!ASSERT_GE(n, 1, "fill three packs"))
		return;
	/* the first pack keeps its programs, the next two empty */
	for (i = pack_size / BIG; i < n; i++) {
		prog_free(progs[i]);
		progs[i] = NULL;
	}
	ASSERT_EQ(pack_cached_count(), 3, "three packs cached");
	ASSERT_EQ(shrink(0), 0, "pages plenty: nothing freed");
	ASSERT_EQ(pack_cached_count(), 3, "all kept");
	shim.pages_short = true;
	pack_mutex_hold(true);
	ASSERT_EQ(shrink(1), SHRINK_STOP, "pack_mutex held: stop");
	pack_mutex_hold(false);
	ASSERT_EQ(shrink(1), pack_size / PAGE_SIZE, "one page asked: one pack freed");
	ASSERT_EQ(shrink(0), 2 * pack_size / PAGE_SIZE, "then the other two");
	ASSERT_EQ(shrink(0), 0, "nothing left to free");
	ASSERT_EQ(pack_nr(), 1, "the pack with programs stays");
	ASSERT_EQ(pack_index_of(progs[0]), 0, "its programs with it");
}

/*
 * Packs whose pages are the exec pool's: freeing one gives reclaim
 * nothing, its blocks go back to the pool.  The shrinker neither counts
 * nor frees them; it frees the others.  Idle time still frees them.
 */
static void test_shrinker_pool(void)
{
	struct pack_view v;
	int i, n;

	shim.pool_areas = 2;
	n = fill_packs(3);
	if (!ASSERT_GE(n, 1, "fill three packs"))
		return;
	for (i = 0; i < n; i++) {
		prog_free(progs[i]);
		progs[i] = NULL;
	}
	ASSERT_EQ(pack_cached_count(), 4, "four packs cached, two on the pool");
	shim.pages_short = true;
	ASSERT_EQ(shrink(0), 2 * pack_size / PAGE_SIZE, "the two off the pool freed");
	ASSERT_EQ(shrink(0), 0, "the pool's counted as nothing");
	ASSERT_EQ(pack_cached_count(), 2, "the pool's kept");
	for (i = 0; pack_get(i, &v) == 0; i++)
		ASSERT_TRUE(shim_area_of(v.ptr)->pool, "a pack on the pool");
	shim.pages_short = false;
	while (shim_run_work())
		;
	ASSERT_EQ(pack_nr(), 0, "idle time frees them");
}

/*
 * A load that finds no room while another load makes a pack waits for it
 * (here, one thread: the wait times out at once), then makes its own:
 * the first load then takes room in that one, and its own pack goes.
 */
static void load_meanwhile(void)
{
	progs[1] = prog_alloc(64, false);
}

static void test_wait_for_making(void)
{
	shim.on_alloc_huge = load_meanwhile;
	progs[0] = prog_alloc(64, false);
	ASSERT_TRUE(progs[0] && progs[1], "both loaded");
	ASSERT_EQ(shim.waits, 1, "the second load waited for the first's pack");
	ASSERT_EQ(pack_nr(), 1, "one pack kept");
	ASSERT_EQ(shim.areas, 1, "the other freed");
	ASSERT_EQ(pack_index_of(progs[0]), pack_index_of(progs[1]), "both in it");
}

/* A new pack is all traps, read-only, executable, and huge. */
static void test_new_pack(void)
{
	const struct shim_area *a;
	struct pack_view v;

	progs[0] = prog_alloc(64, false);
	if (!ASSERT_TRUE(progs[0], "alloc") || !ASSERT_OK(pack_get(0, &v), "pack"))
		return;
	a = shim_area_of(v.ptr);
	if (!ASSERT_TRUE(a, "area"))
		return;
	ASSERT_TRUE(a->ro && a->x && a->reset_perms, "ro, x, VM_FLUSH_RESET_PERMS");
	ASSERT_TRUE(a->huge && v.huge, "huge");
	ASSERT_EQ((uintptr_t)v.ptr % PMD_SIZE, 0, "PMD aligned");
	ASSERT_TRUE(all_trap((char *)v.ptr + 64, pack_size - 64), "rest of the pack is traps");
}

/*
 * vmalloc out of address space calls its purge notifier: the cached packs
 * go, the reserve aside, whatever their age; the pages freed are added up.
 */
static void test_vmap_purge(void)
{
	unsigned long freed = 7;
	int n = fill_packs(1);

	if (!ASSERT_GE(n, 1, "fill a pack"))
		return;
	prog_free(progs[n - 1]);	/* a program left in the first pack */
	progs[n - 1] = NULL;
	ASSERT_EQ(pack_cached_count(), 1, "one cached");
	ASSERT_EQ(shim.vmap_purge->notifier_call(shim.vmap_purge, 0, &freed), NOTIFY_OK, "ok");
	ASSERT_EQ(freed, 7 + pack_size / PAGE_SIZE, "its pages added to what was freed");
	ASSERT_EQ(pack_nr(), 1, "the pack in use stays");
	ASSERT_EQ(shim.vmap_purge->notifier_call(shim.vmap_purge, 0, &freed), NOTIFY_DONE,
		  "nothing more: done");
}

/* The packs on the list all huge, empty, traps, read-only and executable: how many. */
static int empty_huge_packs(void)
{
	struct pack_view v;
	int i;

	for (i = 0; pack_get(i, &v) == 0; i++)
		if (!v.huge || v.used || !all_trap(v.ptr, pack_size) ||
		    !shim_area_of(v.ptr)->ro || !shim_area_of(v.ptr)->x)
			return -1;
	return i;
}

/*
 * The reserve: made by a work as soon as the arch's trap fill is known,
 * kept whatever the idle time and the pressure; a surplus goes as usual,
 * and a smaller reserve lets the rest go by idle time.
 */
static void test_reserve(void)
{
	int i, n;

	pack_forget_fill();
	ASSERT_EQ(pack_set_reserve("2"), 0, "reserve=2 at boot");
	shim_run_due_works();
	ASSERT_EQ(pack_nr(), 0, "no pack before the first program");
	progs[0] = prog_alloc(64, false);
	free_all();
	ASSERT_EQ(shim_run_due_works(), 1, "the first program queues the reserve");
	ASSERT_EQ(empty_huge_packs(), 2, "two packs made, cached");
	ASSERT_EQ(pack_cached_count(), 2, "counted as cached");
	shim.pages_short = true;
	ASSERT_EQ(shrink(0), 0, "the shrinker leaves them");
	while (shim_run_work())
		;
	ASSERT_EQ(pack_nr(), 2, "idle time leaves them");

	n = fill_packs(2);		/* a third pack, emptied */
	if (!ASSERT_GE(n, 1, "fill"))
		return;
	free_all();
	ASSERT_EQ(shrink(0), pack_size / PAGE_SIZE, "the surplus pack goes");
	shim.pages_short = false;
	ASSERT_EQ(pack_set_reserve("3"), 0, "reserve=3");
	ASSERT_EQ(shim_run_due_works(), 2, "reserve and idle works");
	ASSERT_EQ(empty_huge_packs(), 3, "a third made at once");
	ASSERT_EQ(pack_set_idle_secs("0"), 0, "idle_secs=0");
	shim_run_due_works();
	progs[0] = prog_alloc(64, false);
	free_all();
	ASSERT_EQ(empty_huge_packs(), 3, "with idle_secs 0 too, the reserve stays");
	ASSERT_EQ(pack_set_idle_secs("600"), 0, "idle_secs=600");
	ASSERT_EQ(pack_set_reserve("0"), 0, "reserve=0");
	for (i = 0; i < 4 && pack_nr(); i++)
		shim_run_work();
	ASSERT_EQ(pack_nr(), 0, "then idle time frees them");
	ASSERT_EQ(pack_set_reserve("33"), -EINVAL, "a reserve over 32 refused");
}

/* No huge page for the reserve: a warning, and no 4K pack kept instead. */
static void test_reserve_no_huge_page(void)
{
	progs[0] = prog_alloc(64, false);	/* the fill known */
	free_all();
	ASSERT_TRUE(pack_idle(), "no pack");
	shim.fail_huge = 0;
	ASSERT_EQ(pack_set_reserve("1"), 0, "reserve=1");
	ASSERT_EQ(shim_run_due_works(), 2, "reserve and idle works");
	ASSERT_EQ(pack_nr(), 0, "no pack kept");
	ASSERT_EQ(shim.warnings, 1, "warned");
	shim.warnings = 0;
	ASSERT_EQ(pack_set_reserve("0"), 0, "reserve=0");
	while (shim_run_work())
		;
}

void test_alloc(void)
{
	static const struct pack_case cases[] = {
		{ "alignment_no_overlap", test_alignment_no_overlap },
		{ "one_pack", test_one_pack },
		{ "free_returns_chunks", test_free_returns_chunks },
		{ "empty_huge_pack_cached", test_empty_huge_pack_cached },
		{ "empty_fallback_pack_freed", test_empty_fallback_pack_freed },
		{ "idle_packs_released", test_idle_packs_released },
		{ "shrinker", test_shrinker },
		{ "vmap_purge", test_vmap_purge },
		{ "reserve", test_reserve },
		{ "reserve_no_huge_page", test_reserve_no_huge_page },
		{ "new_pack", test_new_pack },
		{ "shrinker_pool", test_shrinker_pool },
		{ "wait_for_making", test_wait_for_making },
	};
	run_pack_cases(cases, sizeof(cases) / sizeof(cases[0]), free_all);
}
