// SPDX-License-Identifier: GPL-2.0
/*
 * Huge packs left empty are kept for the next programs: a workload that
 * comes back after memory has fragmented (no free 2 MiB block, proved by
 * /proc/buddyinfo) needs no new huge page while it stays under its
 * earlier peak, so it makes no 4K pack and splits nothing.  Above the
 * peak, the packs it needs are counted as fallbacks and every load still
 * works.  The cache gives its packs back under memory pressure, after
 * bpf_prog_pack.idle_secs, and keeps bpf_prog_pack.reserve of them always.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "../checks.h"
#include "../lib/churn.h"
#include "../lib/fragment.h"
#include "../lib/packstats.h"
#include "../lib/progs.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define PEAK_PACKS	3	/* packs the workload needs at its peak */
#define ABOVE_PACKS	2	/* 4K packs (fallbacks) it makes beyond that, later */
#define ABOVE_HUGE	2	/* at most so many huge ones among them (see above_peak()) */
#define MAX_PROGS	4096
#define KEEP		16	/* the fragmenter holds a page in 16 */
/*
 * How long the cache's work items and timers are given (the reserve made,
 * packs idle past idle_secs freed): far beyond what a loaded KASAN guest
 * on a busy host delays them by, so only a cache that does not act fails.
 */
#define TIMER_MS	30000

static int fill[MAX_PROGS], nfill;	/* what fills the packs there were */
static int work[MAX_PROGS], nwork;	/* the workload's programs */
/* and its trampolines: fentry programs, attached (links) and detached */
#define NTRAMP		20
static int tprog[NTRAMP], tlink[NTRAMP], ntramp;

/* Attaches every fentry program, dropping those ftrace cannot patch: how many. */
static int tramps_attach(void)
{
	int i, n = 0;

	for (i = 0; i < ntramp; i++) {
		tlink[n] = bpf_link_create(tprog[i], 0, BPF_TRACE_FENTRY, NULL);
		if (tlink[n] >= 0)
			tprog[n++] = tprog[i];
		else
			close(tprog[i]);
	}
	ntramp = n;
	return n;
}

static void tramps_detach(void)
{
	int i;

	for (i = 0; i < ntramp; i++)
		if (tlink[i] >= 0)
			close(tlink[i]);
	memset(tlink, -1, sizeof(tlink));
}

static void close_fds(int *fds, int *n, int keep)
{
	while (*n > keep)
		close(fds[--*n]);
}

/* Packs holding programs: the packs the statistics count, less the cached. */
static long long packs_in_use(const struct pack_stats *st)
{
	return st->packs - st->cached;
}

/*
 * Loads programs into work[] until @in_use packs hold programs; @max
 * loads at most (0: no bound): the statistics then in @st, or false.
 * With @frag, the blocks that came free behind it are taken before each.
 */
static bool load_until_packs(long long in_use, int max, struct pack_stats *st,
			     struct frag *frag)
{
	for (;;) {
		int fd;

		if (!ASSERT_OK(packstats_read(st), "read " PACKSTATS_PATH))
			return false;
		if (packs_in_use(st) >= in_use || (max && nwork == max))
			return true;
		packstats_free(st);
		if (!ASSERT_LT(nwork, MAX_PROGS, "programs within MAX_PROGS") ||
		    (frag && !ASSERT_OK(fragment_again(frag), "fragment again")))
			return false;
		fd = load_fill();
		if (!ASSERT_GE(fd, 0, "load"))
			return false;
		work[nwork++] = fd;
	}
}

static bool in_use_is(const struct pack_stats *st, void *in_use)
{
	return packs_in_use(st) == *(long long *)in_use;
}

/*
 * The statistics once @live programs are left and @in_use packs hold
 * anything: program frees are deferred (RCU, then a workqueue), and so
 * are trampoline images (RCU tasks).
 */
static bool read_settled(int live, long long in_use, struct pack_stats *st)
{
	return ASSERT_OK(jit_quiesce(SETTLE_MS), "frees done") &&
	       ASSERT_EQ(count_live_progs(), live, "live programs") &&
	       ASSERT_OK(packstats_wait(st, in_use_is, &in_use, SETTLE_MS), "read " PACKSTATS_PATH) &&
	       ASSERT_EQ(packs_in_use(st), in_use, "packs in use");
}

static int huge_4k(const struct pack_stats *st, int *n4k)
{
	int i, huge = 0;

	*n4k = 0;
	for (i = 0; i < st->npacks; i++) {
		huge += st->pack[i].mapped_shift == 21;
		*n4k += st->pack[i].mapped_shift == 12;
	}
	return huge;
}

/*
 * Above the peak, memory fragmented: loads until ABOVE_PACKS new packs are
 * 4K, each counted as a fallback, the statistics then in @st.  Compaction
 * is off, but a block the fragmenter left alone can still come free: most
 * likely reclaim, woken by the failed order-9 requests, freeing slab and
 * page cache (one CI run made 1 fallback and 1 huge pack).  Before each
 * load the fragmenter takes such blocks again, but one can come free in
 * between, and a pack made there is huge, as it should be.  ABOVE_HUGE of
 * them are let through; the note counts them.
 */
static bool above_peak(long long in_use, struct frag *frag, const struct pack_stats *b0,
		       struct pack_stats *st)
{
	int extra;

	for (extra = 0;; extra++) {
		if (!load_until_packs(in_use + ABOVE_PACKS + extra, 0, st, frag))
			return false;
		if (st->fallbacks - b0->fallbacks >= ABOVE_PACKS || extra == ABOVE_HUGE)
			return true;
		packstats_free(st);
	}
}

static void reuse_fragmented(enum frag_kind kind)
{
	struct pack_stats b0 = {}, st = {};
	struct compaction compaction = {};
	struct mem_snapshot mem = {}, freed;
	struct frag frag = {};
	int live0, peak_progs, huge, n4k, err;
	double t0 = now_ms(), frag_ms;
	long long fallbacks;
	long blocks;

	nwork = nfill = 0;
	memset(tlink, -1, sizeof(tlink));
	live0 = count_live_progs();
	/* the trampolines' programs first: the packs they take count as there before */
	ntramp = load_fentry_progs(tprog, NTRAMP);
	if (!ASSERT_GT(ntramp, 0, "fentry programs") ||
	    !ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
	    !ASSERT_OK(packs_uncache(), "cache emptied") ||
	    !ASSERT_OK(packstats_read(&b0), "read " PACKSTATS_PATH))
		goto out;
	nfill = packs_fill(&b0, load_fill, fill, MAX_PROGS);
	if (!ASSERT_GE(nfill, 0, "fill the packs there are"))
		goto out;

	/* the peak, on memory not yet fragmented: programs, then trampolines */
	if (!load_until_packs(b0.packs + PEAK_PACKS, 0, &st, NULL) ||
	    !ASSERT_GE(tramps_attach(), NTRAMP / 2, "trampolines attached"))
		goto out;
	packstats_free(&st);
	if (!ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH) ||
	    !ASSERT_EQ(st.packs, b0.packs + PEAK_PACKS, "peak: the trampolines in those packs") ||
	    !ASSERT_EQ(st.fallbacks, b0.fallbacks, "peak: huge packs"))
		goto out;
	peak_progs = nwork;
	packstats_free(&st);
	close_fds(work, &nwork, 0);
	tramps_detach();
	if (!read_settled(live0 + ntramp + nfill, b0.packs, &st) ||
	    !ASSERT_EQ(st.cached, PEAK_PACKS, "emptied packs cached") ||
	    !ASSERT_EQ(st.packs, b0.packs + PEAK_PACKS, "and counted"))
		goto out;
	check_all_packs(&st, "cached");
	packstats_free(&st);

	/* memory fragmented: no free 2 MiB block */
	err = compaction_off(&compaction);
	if (err != -ENOENT && !ASSERT_OK(err, "compaction off"))
		goto out;
	frag_ms = now_ms();
	if (!ASSERT_OK(fragment(&frag, kind, KEEP), "fragment"))
		goto out;
	frag_ms = now_ms() - frag_ms;
	if (!ASSERT_GT(frag.blocks, 0, "2 MiB blocks broken") ||
	    !ASSERT_EQ(free_huge_blocks(), 0, "free 2 MiB blocks left (buddyinfo)")) {
		print_buddyinfo();
		goto out;
	}
	if (test__verbose())
		print_buddyinfo();
	blocks = frag.blocks;
	if (!ASSERT_OK(snapshot_take(&mem), "direct map before"))
		goto out;

	/* the workload again, up to its peak: the cached packs, nothing new */
	if (!load_until_packs(b0.packs + PEAK_PACKS + 1, peak_progs, &st, NULL) ||
	    !ASSERT_EQ(tramps_attach(), ntramp, "trampolines attached again"))
		goto out;
	packstats_free(&st);
	if (!ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH))
		goto out;
	ASSERT_EQ(nwork, peak_progs, "the peak's programs loaded");
	ASSERT_EQ(st.packs, b0.packs + PEAK_PACKS, "no new pack");
	ASSERT_EQ(st.cached, 0, "all cached packs taken");
	ASSERT_EQ(st.fallbacks, b0.fallbacks, "no fallback");
	check_direct_map(&mem, NULL);
	packstats_free(&st);

	/* above the peak: new packs, 4K ones, counted as fallbacks */
	if (!above_peak(b0.packs + PEAK_PACKS, &frag, &b0, &st))
		goto out;
	fallbacks = st.fallbacks - b0.fallbacks;
	huge = huge_4k(&st, &n4k);
	ASSERT_EQ(n4k, fallbacks, "each 4K pack counted as a fallback");
	ASSERT_EQ(huge + n4k, st.packs, "every pack huge or 4K");
	ASSERT_EQ(fallbacks, ABOVE_PACKS, "above the peak: fallbacks");
	test__note("%s: %ld blocks broken (%.0f s), %ld more that came free later; "
		   "%d programs at the peak; above it %lld fallback(s), %lld huge; %.0f s",
		   kind == FRAG_UNMOVABLE ? "unmovable" : "movable", blocks, frag_ms / 1e3,
		   frag.blocks - blocks, peak_progs, fallbacks,
		   st.packs - b0.packs - PEAK_PACKS - fallbacks, (now_ms() - t0) / 1e3);
	packstats_free(&st);

	/* all freed: the 4K packs go, the huge ones are cached */
	close_fds(work, &nwork, 0);
	tramps_detach();
	if (read_settled(live0 + ntramp + nfill, b0.packs, &st)) {
		huge = huge_4k(&st, &n4k);
		ASSERT_EQ(n4k, 0, "4K packs freed as they empty");
		ASSERT_EQ(st.cached, st.packs - b0.packs, "the rest cached");
	}
out:
	fragment_release(&frag);
	ASSERT_OK(compaction_restore(&compaction), "compaction back");
	packstats_free(&st);
	packstats_free(&b0);
	close_fds(work, &nwork, 0);
	close_fds(fill, &nfill, 0);
	tramps_detach();
	close_fds(tprog, &ntramp, 0);
	if (ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") &&
	    ASSERT_OK(packs_uncache(), "cache emptied")) {
		check_invariants("after the fragmented reuse");
		/* the 4K packs split the direct map; everything freed, it heals */
		if (mem.dm4k_kb && ASSERT_OK(snapshot_take(&freed), "direct map freed"))
			check_healed(&mem, &freed, "fragmented reuse");
	}
}

/*
 * Makes @n packs and frees them: they are cached.  The count cached, or -1.
 * With @freed_ms, when their programs were closed goes there (now_ms()).
 */
static long long make_cached(int n, double *freed_ms)
{
	struct pack_stats st = {};
	long long cached = -1;
	int live = count_live_progs();

	long long in_use;

	nwork = 0;
	if (!load_until_packs(0, 0, &st, NULL))
		return -1;
	in_use = packs_in_use(&st);
	if (load_until_packs(in_use + n, 0, &st, NULL)) {
		packstats_free(&st);
		if (freed_ms)
			*freed_ms = now_ms();
		close_fds(work, &nwork, 0);
		if (read_settled(live, in_use, &st))
			cached = st.cached;
	}
	packstats_free(&st);
	close_fds(work, &nwork, 0);
	return cached;
}

/*
 * The min and high watermarks of every zone added up, in kB, as
 * /proc/zoneinfo gives them: with the boost that fragmentation events
 * add, which raises both for a while.  0 or -errno.
 */
static int watermarks(long long *min_kb, long long *high_kb)
{
	FILE *f = fopen("/proc/zoneinfo", "r");
	char line[256];
	long long v;

	if (!f)
		return -errno;
	*min_kb = *high_kb = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " min %lld", &v) == 1)
			*min_kb += v * 4;
		else if (sscanf(line, " high %lld", &v) == 1)
			*high_kb += v * 4;
	}
	fclose(f);
	return *min_kb && *high_kb ? 0 : -EINVAL;
}

/* What the hog did, in memory it shares with the test */
struct hog {
	size_t len, below;
	long long min_kb, high_kb, free_kb;
	int err;
};

/*
 * The hog, in a child process the OOM killer takes before anything else
 * (oom_score_adj 1000), so that the runner survives if it comes: 0 once
 * no pack is cached beyond the reserve, 1 if it gave up before that.
 */
static int hog(long long total_kb, struct hog *h)
{
	long long cached;
	struct pack_stats st;
	size_t step, i;
	char *mem;

	write_file("/proc/self/oom_score_adj", "1000");
	mem = mmap(NULL, total_kb << 10, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED) {
		h->err = -errno;
		return 1;
	}
	for (;;) {
		h->err = packstats_read(&st) ?: watermarks(&h->min_kb, &h->high_kb);
		if (h->err)
			return 1;
		cached = st.cached;
		packstats_free(&st);
		h->free_kb = read_meminfo_kb("MemFree");
		if (cached <= st.reserve)
			return 0;
		if (h->free_kb < h->min_kb) {
			if (h->below >= (size_t)h->min_kb << 10)
				return 1;
			step = 256 << 10;
			h->below += step;
			usleep(20 * 1000);
		} else {
			step = h->free_kb > 2 * h->high_kb + (32 << 10) ? 16 << 20 : 1 << 20;
		}
		if (h->len + step > (size_t)total_kb << 10)
			return 1;
		for (i = 0; i < step; i += 4096)
			mem[h->len + i] = 1;
		h->len += step;
	}
}

/*
 * A memory hog: anonymous memory, 16 MiB at a time, 1 MiB near the
 * watermarks, until the kernel takes the cached packs back (the shrinker,
 * once a zone is below its high watermark).  kswapd may do it; after
 * high-order reclaim failed for a while (the fragmenting above) it may
 * have given up on a node, and then direct reclaim does it, once every
 * zone is below its min watermark, boost included.  Below the min
 * watermarks added up, the hog goes on 256 KiB at a time, 20 ms apart, so
 * that an allocation meets them all (it stopped there and waited once, and
 * nothing reclaimed: kswapd had given up and nothing allocated); it takes
 * at most that sum again, then the test fails.  Direct reclaim must free
 * the cached packs before the OOM killer comes, and the hog stops as soon
 * as none is left.  It runs in a child the OOM killer takes first, so
 * that the runner lives on to fail the test if packs were still cached
 * when the killer came (a debug-kernel run once had the runner killed
 * there, by a hog that had held 1.3 GiB).
 */
static void reclaim(void)
{
	long long total_kb = read_meminfo_kb("MemTotal"), cached;
	struct hog *h;
	struct pack_stats st = {};
	int status = 0, fd;
	pid_t pid;

	if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
	    !ASSERT_OK(packs_uncache(), "cache emptied"))
		return;
	cached = make_cached(PEAK_PACKS, NULL);
	if (!ASSERT_EQ(cached, PEAK_PACKS, "packs cached"))
		return;
	h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(h != MAP_FAILED, "the hog's figures"))
		return;
	memset(h, 0, sizeof(*h));
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(hog(total_kb, h));
	if (!ASSERT_GT(pid, 0, "fork the hog") ||
	    !ASSERT_EQ(waitpid(pid, &status, 0), pid, "wait for the hog")) {
		munmap(h, sizeof(*h));
		return;
	}
	if (WIFSIGNALED(status))
		printf("the hog was killed by signal %d (the OOM killer)\n", WTERMSIG(status));
	if (ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH)) {
		packstats_free(&st);
		ASSERT_LE(st.cached, st.reserve, WIFSIGNALED(status) ?
			  "cached packs reclaimed before the OOM killer came" :
			  "cached packs reclaimed");
	}
	ASSERT_EQ(h->err, 0, "the hog read the counters it needs");
	test__note("reclaimed with %zu MiB hogged (%zu below the min watermarks%s), MemFree %lld kB, "
		   "watermarks min %lld high %lld kB", h->len >> 20, h->below >> 20,
		   WIFSIGNALED(status) ? ", then OOM-killed" : "", h->free_kb, h->min_kb, h->high_kb);
	munmap(h, sizeof(*h));
	fd = load_fill();
	if (ASSERT_GE(fd, 0, "a load after"))
		close(fd);
	if (ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") && ASSERT_OK(packs_uncache(), "uncache"))
		check_invariants("after reclaim");
}

static bool cached_at_most(const struct pack_stats *st, void *n)
{
	return st->cached <= *(long long *)n;
}

/*
 * Waits up to @ms for at most @n packs cached: the count then, or -1; with
 * @seen_ms, when that count was first read (now_ms()).
 */
static long long wait_cached(long long n, int ms, double *seen_ms)
{
	struct pack_stats st;

	if (packstats_wait(&st, cached_at_most, &n, ms))
		return -1;
	if (seen_ms)
		*seen_ms = now_ms();
	packstats_free(&st);
	return st.cached;
}

/*
 * Cached packs go after bpf_prog_pack.idle_secs unused; a write applies at
 * once.  With idle_secs 2 written a second or more after the packs were
 * emptied, they must go, but not before 2 s unused: their programs were
 * freed at @freed_ms, the packs emptied later still (the frees are
 * deferred), so a read that finds them gone earlier than 2 s after it
 * (less a tick of the idle timer's jiffies) caught them freed early.
 */
#define IDLE_SECS	2
#define TICK_MS		100	/* the timer's resolution, with slack: HZ is 100 at least */

static void idle(void)
{
	double freed_ms = 0, set_ms, gone_ms = 0;
	char was[16];

	if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
	    !ASSERT_OK(packs_uncache(), "cache emptied") ||
	    !ASSERT_GT(read_file(PACK_PARAM("idle_secs"), was, sizeof(was)), 0, "idle_secs"))
		return;
	ASSERT_EQ(atoi(was), 600, "default: 10 minutes");
	if (!ASSERT_EQ(make_cached(2, &freed_ms), 2, "packs cached"))
		return;
	ASSERT_EQ(wait_cached(1, 1000, NULL), 2, "kept a second later");
	if (!ASSERT_OK(write_file(PACK_PARAM("idle_secs"), "2"), "idle_secs=2"))
		return;
	set_ms = now_ms();
	ASSERT_EQ(wait_cached(0, TIMER_MS, &gone_ms), 0, "freed once 2 s unused");
	printf("idle: programs freed at 0 ms, idle_secs=2 written by %.0f ms, packs seen gone "
	       "at %.0f ms\n", set_ms - freed_ms, gone_ms - freed_ms);
	ASSERT_GE(gone_ms - freed_ms, IDLE_SECS * 1000 - TICK_MS, "not before 2 s unused, ms");
	ASSERT_EQ(write_file(PACK_PARAM("idle_secs"), "604801"), -EINVAL, "over a week refused");
	ASSERT_OK(write_file(PACK_PARAM("idle_secs"), "600"), "idle_secs=600");
}

static bool huge_at_least(const struct pack_stats *st, void *n)
{
	return st->huge_packs >= *(long long *)n;
}

/* bpf_prog_pack.reserve: huge packs made at once and kept, idle or not. */
static void reserve(void)
{
	struct pack_stats st = {};
	long long want = 2;
	double t0;

	if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
	    !ASSERT_OK(packs_uncache(), "cache emptied") ||
	    !ASSERT_OK(write_file(PACK_PARAM("reserve"), "2"), "reserve=2"))
		return;
	/* made by a work item: wait for them, as long as a loaded KASAN guest may need */
	t0 = now_ms();
	if (ASSERT_OK(packstats_wait(&st, huge_at_least, &want, TIMER_MS), "read " PACKSTATS_PATH))
		printf("reserve: %lld huge packs after %.0f ms\n", st.huge_packs, now_ms() - t0);
	packstats_free(&st);
	/* huge packs in use count: Debian's own PTP classifier holds one */
	if (ASSERT_OK(packs_uncache(), "the cache emptied (idle_secs 0)") &&
	    ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH)) {
		ASSERT_EQ(st.reserve, 2, "reserve in the statistics");
		ASSERT_EQ(st.huge_packs, 2, "two huge packs, made or in use, kept");
		ASSERT_EQ(st.cached, 2 - (st.packs - st.cached), "those made cached");
		check_all_packs(&st, "reserve");
		packstats_free(&st);
	}
	ASSERT_OK(write_file(PACK_PARAM("reserve"), "0"), "reserve=0");
	ASSERT_OK(packs_uncache(), "then reclaimed");
	ASSERT_EQ(write_file(PACK_PARAM("reserve"), "33"), -EINVAL, "over 32 refused");
}

void test_pack_cache(void)
{
	if (!REQUIRE_PATCHED(packstats_available(), PACKSTATS_PATH))
		return;
	if (!HAVE_PACK_PARAMS()) {
		if (!expect_patched())
			test__skip("no bpf_prog_pack parameters: a series without the pack cache");
		return;
	}
	if (test__start_subtest("fragmented_unmovable")) {
		if (access(FRAGMENT_KO, R_OK))
			test__skip("no " FRAGMENT_KO);
		else
			reuse_fragmented(FRAG_UNMOVABLE);
	}
	if (test__start_subtest("fragmented_movable")) {
		if (access("/sys/kernel/debug/split_huge_pages", W_OK))
			test__skip("needs CONFIG_TRANSPARENT_HUGEPAGE");
		else if (debug_kernel())
			test__skip("over 10 minutes under KASAN; make test runs it");
		else
			reuse_fragmented(FRAG_MOVABLE);
	}
	if (test__start_subtest("reclaim"))
		reclaim();
	if (test__start_subtest("idle"))
		idle();
	if (test__start_subtest("reserve"))
		reserve();
}
