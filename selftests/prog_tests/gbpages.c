// SPDX-License-Identifier: GPL-2.0
/*
 * 1 GiB direct-map pages (DirectMap1G in /proc/meminfo: -cpu max and 3 GiB
 * or more; make test-gbpages boots 4 GiB with vmalloc_exec_pool=16M).  A
 * huge pack's direct-map alias turns read-only, which splits the 1G entry
 * that maps its page into 2M ones, for good.  The exec pool, set aside at
 * boot below 1 GiB where the direct map has no 1G entry, gives packs their
 * pages first: every huge pack comes from it while it lasts, and filling
 * all of it splits no 1G page.  One pack beyond it comes from the page
 * allocator; what that split is noted, not asserted (its page may lie in a
 * 1G region split before).  On a kernel that collapses (patch 21) all of
 * them freed leave DirectMap1G where it was.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../checks.h"
#include "../lib/churn.h"
#include "../lib/packstats.h"
#include "../lib/progs.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define MAX_PROGS	2048

static int fds[MAX_PROGS], nfds;

/* The pool's blocks and how many are in use: 0 or -errno. */
static int pool_read(long long *blocks, long long *used)
{
	char buf[256], *b, *u;

	if (read_file(POOL_PATH, buf, sizeof(buf)) < 0)
		return -ENOENT;
	b = strstr(buf, "blocks ");
	u = strstr(buf, "used ");
	if (!b || !u)
		return -EINVAL;
	*blocks = atoll(b + 7);
	*used = atoll(u + 5);
	return 0;
}

/*
 * Loads programs until @huge huge packs are held: the statistics then in
 * @st, or false.  Each pack is checked to come from the pool on the way.
 */
static bool load_until_huge(long long huge, struct pack_stats *st, bool from_pool)
{
	long long blocks, used;

	for (;;) {
		if (!ASSERT_OK(packstats_read(st), "read " PACKSTATS_PATH) ||
		    !ASSERT_OK(pool_read(&blocks, &used), "read " POOL_PATH))
			return false;
		if (from_pool && !ASSERT_EQ(used, st->huge_packs, "every huge pack from the pool"))
			return false;
		if (!ASSERT_EQ(st->fallbacks, 0, "no 4K pack") || st->huge_packs >= huge)
			return true;
		packstats_free(st);
		if (!ASSERT_LT(nfds, MAX_PROGS, "programs within MAX_PROGS"))
			return false;
		fds[nfds] = load_fill();
		if (!ASSERT_GE(fds[nfds], 0, "load"))
			return false;
		nfds++;
	}
}

void test_gbpages(void)
{
	struct mem_snapshot before, full, beyond = {}, after;
	struct pack_stats st = {};
	long long blocks, used;
	char note[256] = "";

	if (read_meminfo_kb("DirectMap1G") <= 0) {
		test__skip("no 1G direct-map pages (make test-gbpages boots 4 GiB, -cpu max)");
		return;
	}
	if (!REQUIRE_PATCHED(packstats_available(), PACKSTATS_PATH))
		return;
	if (!expect_huge_vmalloc(test__args())) {
		test__skip("no huge packs: booted with nohugevmalloc");
		return;
	}
	if (!PATCHED_HAS(!pool_read(&blocks, &used), POOL_PATH)) {
		if (!expect_patched())
			test__skip("no " POOL_PATH ": a series without the exec pool");
		return;
	}
	if (!blocks) {
		test__skip("no exec pool: boot with vmalloc_exec_pool=");
		return;
	}
	nfds = 0;
	if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
	    !ASSERT_OK(packs_uncache(), "cache emptied") ||
	    !ASSERT_OK(snapshot_take(&before), "snapshot before"))
		return;

	/* the pool filled: every pack from it, no 1G page split */
	if (!load_until_huge(blocks, &st, true))
		goto out;
	packstats_free(&st);
	if (!ASSERT_OK(pool_read(&blocks, &used), "read " POOL_PATH) ||
	    !ASSERT_EQ(used, blocks, "the pool full") ||
	    !ASSERT_OK(snapshot_take(&full), "snapshot with the pool full"))
		goto out;
	check_direct_map(&before, &full);
	ASSERT_EQ(full.dm1g_kb, before.dm1g_kb, "DirectMap1G");

	/* one pack beyond: the page allocator's */
	if (!load_until_huge(blocks + 1, &st, false) ||
	    !ASSERT_OK(snapshot_take(&beyond), "snapshot beyond the pool"))
		goto out;
	snprintf(note, sizeof(note), "%lld packs of 2 MiB from the pool, %d programs: 1G splits "
		 "+%lld; one more from the page allocator: 1G splits +%lld, DirectMap1G %+lld kB",
		 blocks, nfds, full.l3_splits - before.l3_splits,
		 beyond.l3_splits - full.l3_splits, beyond.dm1g_kb - full.dm1g_kb);

out:
	packstats_free(&st);
	while (nfds)
		close(fds[--nfds]);
	/* the packs go back to the pool, and the pool is whole again */
	if (ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") &&
	    ASSERT_OK(packs_uncache(), "cache emptied") &&
	    ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH) &&
	    ASSERT_OK(pool_read(&blocks, &used), "read " POOL_PATH)) {
		ASSERT_EQ(used, st.huge_packs, "pool blocks back with their packs");
		packstats_free(&st);
	}
	/* the pack beyond split a 1G entry: freed, it is whole again */
	if (beyond.dm4k_kb && ASSERT_OK(snapshot_take(&after), "snapshot all freed")) {
		check_healed(&before, &after, "packs beyond the pool");
		if (HEALS_DIRECT_MAP(&after)) {
			size_t len = strlen(note);

			snprintf(note + len, sizeof(note) - len,
				 "; all freed: 1G collapses +%lld, DirectMap1G %+lld kB",
				 after.l3_collapses - before.l3_collapses,
				 after.dm1g_kb - before.dm1g_kb);
			ASSERT_EQ(after.dm1g_kb, before.dm1g_kb, "DirectMap1G back");
		}
	}
	if (note[0])
		test__note("%s", note);
}
