// SPDX-License-Identifier: GPL-2.0
/*
 * The pack allocator as the series leaves it, checked from the outside:
 * its statistics (debugfs), the page tables (ptdump), the memory itself
 * (/proc/kcore) and /proc/vmallocinfo must all tell the same story.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "../checks.h"
#include "../lib/packstats.h"
#include "../lib/progs.h"
#include "../lib/sys.h"
#include "../test_runner.h"

/* 3000 programs fill more than a 2M pack; a pack is 2M a NUMA node */
#define PROGS_PER_2M	3000
#define MAX_NODES	4
#define NPROGS		(PROGS_PER_2M * MAX_NODES)
#define HDR_SIZE	8	/* struct bpf_binary_header */
#define HOLE_SIZE	16	/* bpf_jit_binary_pack_alloc()'s trap gap */

struct loaded {
	int fd[NPROGS];
	unsigned int chunks[NPROGS];	/* chunks each program takes */
	int n;
};

/*
 * What the packs hold before a test loads anything: the kernel's own
 * programs (Debian's PTP classifier, JITed at boot), or nothing.
 */
static struct pack_stats base;

static unsigned int prog_chunks(int fd, long long chunk_size)
{
	uint64_t addr;
	uint32_t len;

	if (prog_jited_image(fd, &addr, &len))
		return 0;
	return (len + HDR_SIZE + HOLE_SIZE + chunk_size - 1) / chunk_size;
}

static bool load_many(struct loaded *l, int n, long long chunk_size)
{
	unsigned int seed = 42;

	for (l->n = 0; l->n < n; l->n++) {
		int fd = load_filter(FILTER_MIN_INSNS + rand_r(&seed) % 400, 0);

		if (!ASSERT_GE(fd, 0, "load_filter"))
			return false;
		l->fd[l->n] = fd;
		l->chunks[l->n] = prog_chunks(fd, chunk_size);
	}
	return true;
}

/* Closes every @step-th program from @first. */
static void close_some(struct loaded *l, int first, int step)
{
	int i;

	for (i = first; i < l->n; i += step) {
		if (l->fd[i] >= 0)
			close(l->fd[i]);
		l->fd[i] = -1;
		l->chunks[i] = 0;
	}
}

static int live(const struct loaded *l)
{
	int i, n = 0;

	for (i = 0; i < l->n; i++)
		n += l->fd[i] >= 0;
	return n;
}

/* Waits for freed programs to be gone from the pack statistics too. */
static bool settle_to(const struct loaded *l, long long chunks, struct pack_stats *st)
{
	double deadline = now_ms() + SETTLE_MS;

	do {
		if (count_live_progs() == live(l) && !packstats_read(st)) {
			if (st->bytes_in_use == base.bytes_in_use + chunks * st->chunk_size)
				return true;
			packstats_free(st);
		}
		usleep(50 * 1000);
	} while (now_ms() < deadline);
	return ASSERT_TRUE(false, "statistics settle to the live programs");
}

static long long live_chunks(const struct loaded *l)
{
	long long sum = 0;
	int i;

	for (i = 0; i < l->n; i++)
		sum += l->chunks[i];
	return sum;
}

static struct loaded progs;

/*
 * The nodes each pack's pages come from, as /proc/vmallocinfo counts them
 * (N<node>=<pages>): every page of the pack is counted, and the spread
 * goes in the test's note ("N0=512 | N1=1024": two packs).
 */
static void note_pack_nodes(const struct pack_stats *st)
{
	char line[512], spread[200] = "";
	size_t off = 0;
	int i;

	for (i = 0; i < st->npacks; i++) {
		long long pages = 0, n;
		const char *p;
		int node;

		if (!ASSERT_OK(vmallocinfo_line(st->pack[i].addr, line, sizeof(line)),
			       "pack in /proc/vmallocinfo"))
			return;
		if (i && off < sizeof(spread))
			off += snprintf(spread + off, sizeof(spread) - off, " |");
		for (p = line; (p = strstr(p, " N")); p++) {
			if (sscanf(p, " N%d=%lld", &node, &n) != 2)
				continue;
			pages += n;
			if (off < sizeof(spread))
				off += snprintf(spread + off, sizeof(spread) - off, " N%d=%lld", node, n);
		}
		ASSERT_EQ(pages, st->pack_size / 4096, "the pack's pages, counted by node");
	}
	test__note("%lld packs of %lld MiB (%lld already there), pages by node:%s", st->packs,
		   st->pack_size >> 20, base.packs, spread);
}

/* The statistics before the test: @base. */
static bool read_base(void)
{
	packstats_free(&base);
	return ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") &&
	       ASSERT_OK(packs_uncache(), "no pack cached") &&
	       ASSERT_OK(packstats_read(&base), "read " PACKSTATS_PATH);
}

static void test_lifecycle(void)
{
	struct pack_stats st = {};
	uint64_t addrs[PACK_MAX];
	int i, n, nprogs;

	if (!ASSERT_OK(raise_nofile(NPROGS + 256), "RLIMIT_NOFILE") || !read_base() ||
	    !ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH))
		return;
	ASSERT_EQ(st.pack_size, (2LL << 20) * possible_nodes(), "a pack is 2M a possible node");
	nprogs = PROGS_PER_2M * (st.pack_size >> 21);
	if (!ASSERT_LE(nprogs, NPROGS, "packs of at most MAX_NODES nodes") ||
	    !load_many(&progs, nprogs, st.chunk_size))
		goto out;
	packstats_free(&st);
	if (!ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH))
		goto out;
	ASSERT_EQ(st.bytes_in_use, base.bytes_in_use + live_chunks(&progs) * st.chunk_size,
		  "bytes in use = chunks of the loaded programs, and what was there");
	ASSERT_GE(st.packs, 2, "packs for 3000 programs a node");
	/* nohugevmalloc turns huge packs off too */
	ASSERT_EQ(st.huge_packs, expect_huge_vmalloc(test__args()) ? st.packs : 0,
		  "huge packs");
	check_all_packs(&st, "loaded");
	note_pack_nodes(&st);
	n = st.npacks;
	for (i = 0; i < n; i++)
		addrs[i] = st.pack[i].addr;
	packstats_free(&st);

	/* free every other program: their chunks must be traps again */
	close_some(&progs, 0, 2);
	if (!settle_to(&progs, live_chunks(&progs), &st))
		goto out;
	check_all_packs(&st, "half freed");
	packstats_free(&st);

	close_some(&progs, 0, 1);
	if (!settle_to(&progs, 0, &st))
		goto out;
	/* the huge packs left empty are kept for reuse, until reclaimed */
	if (st.cached) {
		ASSERT_EQ(st.packs - st.cached, base.packs, "cached: the packs left empty");
		check_all_packs(&st, "cached");
		packstats_free(&st);
		if (!ASSERT_OK(packs_uncache(), "cached packs reclaimed") ||
		    !ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH))
			goto out;
	}
	ASSERT_EQ(st.packs, base.packs, "no pack left but those there before");
	for (i = 0; i < n; i++)
		if (pack_of(&base, addrs[i]) < 0)
			ASSERT_FALSE(in_vmallocinfo(addrs[i]),
				     "freed pack gone from /proc/vmallocinfo");
out:
	close_some(&progs, 0, 1);
	packstats_free(&st);
}

static int load_100(void)
{
	return load_filter(100, 0);
}

/*
 * No 2M page to be had: the load still works, on a 4K pack, and is counted.
 * The packs already there are filled first, so that the load needs a pack.
 */
static void test_fallback(void)
{
	struct pack_stats st = {}, filled = {};
	uint64_t addr;
	uint32_t len;
	int i, fd = -1, nfill;

	if (!fault_available(FAIL_PAGE_ALLOC)) {
		test__skip("no " FAULT_DIR FAIL_PAGE_ALLOC " (CONFIG_FAIL_PAGE_ALLOC)");
		return;
	}
	if (!read_base())
		return;
	nfill = packs_fill(&base, load_100, progs.fd, NPROGS);
	if (!ASSERT_GE(nfill, 0, "fill the packs there are"))
		return;
	progs.n = nfill;
	for (i = 0; i < nfill; i++)
		progs.chunks[i] = prog_chunks(progs.fd[i], base.chunk_size);
	/* the fill made a pack and freed it: under nohugevmalloc, a fallback */
	if (!ASSERT_OK(packstats_read(&filled), "read " PACKSTATS_PATH))
		goto out;

	if (!ASSERT_OK(fault_setup(FAIL_PAGE_ALLOC, FAULT_ALWAYS, 9), "fail_page_alloc on"))
		goto out;
	fd = load_100();
	ASSERT_OK(fault_setup(FAIL_PAGE_ALLOC, FAULT_OFF, 0), "fail_page_alloc off");
	if (!ASSERT_GE(fd, 0, "load without 2M pages") ||
	    !ASSERT_OK(prog_jited_image(fd, &addr, &len), "its image") ||
	    !ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH))
		goto out;
	ASSERT_EQ(st.fallbacks, filled.fallbacks + 1, "fallback counted");
	ASSERT_EQ(st.packs, filled.packs + 1, "one pack more");
	ASSERT_EQ(st.huge_packs, filled.huge_packs, "and it is not huge");
	i = pack_of(&st, addr);
	if (ASSERT_GE(i, 0, "the program in a pack") &&
	    ASSERT_LT(pack_of(&filled, addr), 0, "a new one"))
		ASSERT_EQ(st.pack[i].mapped_shift, 12, "mapped by 4K pages");
	check_all_packs(&st, "fallback");
	if (base.packs)
		test__note("%d programs filled the %lld pack(s) already there first", nfill,
			   base.packs);
out:
	packstats_free(&st);
	packstats_free(&filled);
	if (fd >= 0)
		close(fd);
	close_some(&progs, 0, 1);
	if (settle_to(&progs, 0, &st))
		ASSERT_EQ(st.packs, base.packs, "fallback pack freed");
	packstats_free(&st);
}

void test_prog_pack(void)
{
	if (!REQUIRE_PATCHED(packstats_available(), PACKSTATS_PATH))
		return;
	if (test__start_subtest("lifecycle"))
		test_lifecycle();
	if (test__start_subtest("fallback"))
		test_fallback();
}
