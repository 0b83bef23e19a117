// SPDX-License-Identifier: GPL-2.0
/*
 * A direct map that heals (patches 20-21): once the attributes of split pages
 * are back to the default, their tables collapse into large entries again.
 * The dmap_heal module makes the changes: 4K RO+X vmalloc areas freed with
 * VM_FLUSH_RESET_PERMS, as 6.1 makes modules and BPF images, and areas
 * whose owner puts them back with set_memory_nx()/set_memory_rw(); and real
 * modules are loaded and unloaded.
 *
 * Judged by DirectMap4k, the live split count (direct_map_level2_splits
 * minus direct_map_level2_collapses) and ptdump's 4K entries in the direct
 * map: on a kernel that heals each workload must split while it holds its
 * areas and leave all three no higher than they were before it.  The base
 * kernel, which has no collapse counter, only has its numbers noted; under
 * -a expect-patched a kernel without it fails.
 * Ranges made 4K on purpose (set_memory_4k()) must stay 4K; a collapse
 * racing with set_memory_ro() on a neighbouring page must not lose it, nor
 * must one that runs while ptdump walks the tables; a table is never freed
 * under a walker in rcu_read_lock(); no mapping is ever writable and
 * executable.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../checks.h"
#include "../lib/churn.h"
#include "../lib/dmap_heal.h"
#include "../lib/progs.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define BIG_MODULE	"big_module.ko"

/* every snapshot: ptdump read, no mapping writable and executable */
static bool point_check(const struct mem_snapshot *s)
{
	if (!ASSERT_TRUE(s->have_ptdump, "ptdump"))
		return false;
	ASSERT_EQ(s->direct.wx_bytes + s->modules.wx_bytes, 0, "no W+X mapping");
	return true;
}

static bool point_take(struct mem_snapshot *s, const char *what)
{
	return ASSERT_OK(snapshot_take(s), what) && point_check(s);
}

/*
 * With its areas held (@held), the workload must have split something, on
 * a kernel that heals; once they are freed (@after), such a kernel is back
 * where @before was.
 */
static void judge(const char *what, const struct mem_snapshot *before,
		  const struct mem_snapshot *held, const struct mem_snapshot *after)
{
	if (held) {
		printf("%s, held: 2M splits %lld -> %lld, DirectMap4k %lld -> %lld kB\n", what,
		       before->l2_splits, held->l2_splits, before->dm4k_kb, held->dm4k_kb);
		/* where nothing heals, a later round may land in what an earlier split */
		if (HEALS_DIRECT_MAP(held))
			ASSERT_GT(held->l2_splits, before->l2_splits, "the workload splits 2M entries");
	}
	check_healed(before, after, what);
	test__note("%s: DirectMap4k %+lld kB, live 2M splits %+lld once freed", what,
		   after->dm4k_kb - before->dm4k_kb, live_l2(after) - live_l2(before));
}

/* BPF programs freed by earlier tests must not move the counters meanwhile */
static bool quiet(void)
{
	return ASSERT_OK(jit_quiesce(10000), "quiesce");
}

#define ROX_AREAS	1024
#define ROX_ROUNDS	3

/* @cmd's areas held, then freed, ROX_ROUNDS times */
static void rox_rounds(const char *cmd, const char *what)
{
	struct mem_snapshot before, held, after;
	int round;

	if (!quiet() || !point_take(&before, "before"))
		return;
	for (round = 0; round < ROX_ROUNDS; round++) {
		if (!ASSERT_OK(dmap_heal_areas(cmd, ROX_AREAS, &held, &after),
			       "RO+X areas made, held and freed") ||
		    !point_check(&held) || !point_check(&after))
			return;
		printf("round %d of %d:\n", round + 1, ROX_ROUNDS);
		judge(what, &before, &held, &after);
		if (HEALS_DIRECT_MAP(&after))
			ASSERT_GT(after.l2_collapses, held.l2_collapses, "collapses counted");
	}
}

static void test_rox_areas(void)
{
	rox_rounds("rox", "4K RO+X areas freed with VM_FLUSH_RESET_PERMS");
}

static void test_set_memory_undo(void)
{
	rox_rounds("rox_undo", "4K RO+X areas put back by set_memory_nx()+set_memory_rw()");
}

/* Reads ptdump over and over, holding init_mm's mmap_lock most of the time */
static void __attribute__((noreturn)) ptdump_reader(void)
{
	static char buf[1 << 16];

	for (;;) {
		int fd = open(PTDUMP_PATH, O_RDONLY);

		if (fd < 0)
			_exit(1);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
}

/*
 * A collapse that finds init_mm's mmap_lock taken (ptdump walks holding it
 * for writing) happens once it is free: on a kernel that collapses, wait up
 * to SETTLE_MS for ptdump's 4K direct-map entries to drop back to @before's.
 */
static bool settle(const struct mem_snapshot *before, struct mem_snapshot *after)
{
	double t0 = now_ms();

	for (;;) {
		if (!point_take(after, "after"))
			return false;
		if (!HEALS_DIRECT_MAP(after) || now_ms() - t0 > SETTLE_MS ||
		    pt_entries(&after->direct, PT_4K) <= pt_entries(&before->direct, PT_4K))
			break;
		usleep(100 * 1000);
	}
	printf("settled after %.0f ms\n", now_ms() - t0);
	return true;
}

/* A round of rox_areas while another process reads ptdump all the time */
static void test_ptdump_reader(void)
{
	struct mem_snapshot before, after;
	pid_t reader;
	int status;
	bool ok;

	if (!quiet() || !point_take(&before, "before"))
		return;
	fflush(stdout);
	reader = fork();
	if (reader == 0)
		ptdump_reader();
	if (!ASSERT_GT(reader, 0, "fork the ptdump reader"))
		return;
	ok = ASSERT_OK(dmap_heal_cmd("rox %d", ROX_AREAS), "RO+X areas made") &&
	     ASSERT_EQ(dmap_heal_result("held"), ROX_AREAS, "all held") &&
	     ASSERT_OK(dmap_heal_cmd("free"), "and freed, ptdump read meanwhile");
	kill(reader, SIGKILL);
	if (!ASSERT_EQ(waitpid(reader, &status, 0), reader, "wait for the reader") ||
	    !ASSERT_TRUE(WIFSIGNALED(status), "the reader read ptdump until stopped") || !ok ||
	    !settle(&before, &after))
		return;
	judge("4K RO+X areas freed while ptdump is read", &before, NULL, &after);
	if (HEALS_DIRECT_MAP(&after))
		ASSERT_GT(after.l2_collapses, before.l2_collapses, "collapses counted");
}

#define MODULE_ROUNDS	4

static void test_modules(void)
{
	struct mem_snapshot before, after;
	int i;

	if (!quiet() || !point_take(&before, "before"))
		return;
	for (i = 0; i < MODULE_ROUNDS; i++)
		if (!ASSERT_OK(module_load(BIG_MODULE, NULL), "load big_module") ||
		    !ASSERT_OK(module_unload("big_module"), "unload it"))
			return;
	if (!point_take(&after, "after"))
		return;
	judge("big_module loaded and unloaded", &before, NULL, &after);
}

#define RACE_ROUNDS	2000

static void test_race(void)
{
	int err = dmap_heal_cmd("race %d", debug_kernel() ? RACE_ROUNDS / 4 : RACE_ROUNDS);
	struct mem_snapshot p;

	printf("rounds %lld, lost %lld, err %lld, block level %lld before, %lld after\n",
	       dmap_heal_result("rounds"), dmap_heal_result("lost"), dmap_heal_result("err"),
	       dmap_heal_result("race_before"), dmap_heal_result("race_after"));
	if (!ASSERT_OK(err, "race") || !ASSERT_EQ(dmap_heal_result("lost"), 0, "no permission lost") ||
	    !point_take(&p, "after"))
		return;
	if (HEALS_DIRECT_MAP(&p))
		ASSERT_EQ(dmap_heal_result("race_after"), dmap_heal_result("race_before"),
			  "the block mapped as large as before");
}

#define WALK_ROUNDS	500

/*
 * The walkers that hold no lock and keep interrupts on (kernel_page_present(),
 * a CPA's cache flush) walk under rcu_read_lock(): a table a collapse replaced
 * is freed only after a grace period, never under them.
 */
static void test_walker(void)
{
	int err = dmap_heal_cmd("walk %d", debug_kernel() ? WALK_ROUNDS / 4 : WALK_ROUNDS);

	printf("walks that found a PTE table %lld, that found it freed meanwhile %lld\n",
	       dmap_heal_result("walks"), dmap_heal_result("freed"));
	if (!ASSERT_OK(err, "walk"))
		return;
	ASSERT_GT(dmap_heal_result("walks"), 0, "walks found the PTE table");
	ASSERT_EQ(dmap_heal_result("freed"), 0, "no table freed under a walker");
}

static void test_keep_4k(void)
{
	struct mem_snapshot p;

	if (!ASSERT_OK(dmap_heal_cmd("keep4k"), "keep4k"))
		return;
	printf("control: level %lld, %lld read-only, %lld after; set_memory_4k(): level %lld,"
	       " %lld after (first page %lld)\n", dmap_heal_result("control_before"),
	       dmap_heal_result("control_ro"), dmap_heal_result("control_after"),
	       dmap_heal_result("kept_before"), dmap_heal_result("kept_after"),
	       dmap_heal_result("kept_first"));
	ASSERT_EQ(dmap_heal_result("control_ro"), 1, "set_memory_ro() splits to 4K");
	ASSERT_EQ(dmap_heal_result("kept_after"), 1, "a set_memory_4k() range stays 4K");
	ASSERT_EQ(dmap_heal_result("kept_first"), 1, "its marked page too");
	if (!point_take(&p, "after"))
		return;
	if (HEALS_DIRECT_MAP(&p))
		ASSERT_EQ(dmap_heal_result("control_after"), dmap_heal_result("control_before"),
			  "without set_memory_4k() it is mapped large again");
	else
		test__note("base: the control stays at level %lld", dmap_heal_result("control_after"));
}

void test_direct_map_heal(void)
{
	bool up = ASSERT_OK(dmap_heal_load(), "load dmap_heal.ko");

	if (test__start_subtest("rox_areas") && ASSERT_TRUE(up, "dmap_heal.ko loaded"))
		test_rox_areas();
	if (test__start_subtest("set_memory_undo") && ASSERT_TRUE(up, "dmap_heal.ko loaded"))
		test_set_memory_undo();
	if (test__start_subtest("ptdump_reader") && ASSERT_TRUE(up, "dmap_heal.ko loaded"))
		test_ptdump_reader();
	if (test__start_subtest("modules"))
		test_modules();
	if (test__start_subtest("race") && ASSERT_TRUE(up, "dmap_heal.ko loaded"))
		test_race();
	if (test__start_subtest("walker") && ASSERT_TRUE(up, "dmap_heal.ko loaded"))
		test_walker();
	/* last: the block it marks 4K stays split for good */
	if (test__start_subtest("keep_4k") && ASSERT_TRUE(up, "dmap_heal.ko loaded"))
		test_keep_4k();
	if (up)
		ASSERT_OK(dmap_heal_unload(), "unload dmap_heal.ko");
}
