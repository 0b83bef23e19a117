// SPDX-License-Identifier: GPL-2.0
/*
 * The executable pages that are not BPF's (patch 22): modules, kprobe
 * instruction slots and ftrace trampolines come from x86's module_alloc(),
 * 4K pages made read-only (and executable) one by one.  On the base kernel
 * each such page splits the direct-map entry around it, for as long as it
 * lives; on the patched one they come from 2M blocks whose direct map is
 * read-only already, and split nothing.
 *
 * Each workload is held, then freed: kprobes in load_module() (insn and
 * optprobe slots), ftrace_ops with their own trampolines, the function
 * profiler, modules loaded and unloaded in rounds (big_module.ko and
 * exec_pages.ko).  Where blocks are on (/sys/kernel/debug/vmalloc_ro_alias
 * says "enabled 1"), no 2M direct-map entry may be split (the split counter,
 * not the live count: nothing to collapse) and DirectMap4k must not move,
 * while the pages are held nor once they are freed; the pages must come
 * from blocks.  Everywhere: no page of module text, rodata or
 * ro_after_init, of a slot or of a trampoline has a writable direct-map
 * alias, and ptdump shows no W+X mapping.  The base kernel's splits are
 * noted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../checks.h"
#include "../lib/churn.h"
#include "../lib/progs.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define EXEC_MODULE	"exec_pages.ko"
#define BIG_MODULE	"big_module.ko"
#define PROFILER	"/sys/kernel/debug/tracing/function_profile_enabled"
#define FTRACE_FILTER	"/sys/kernel/debug/tracing/set_ftrace_filter"
#define MODULE_ROUNDS	4
#define KPROBES		600
#define FTRACE_OPS	32

static bool snap(struct mem_snapshot *s, const char *what)
{
	if (!ASSERT_OK(snapshot_take(s), what) || !ASSERT_TRUE(s->have_ptdump, "ptdump"))
		return false;
	ASSERT_EQ(s->direct.wx_bytes + s->modules.wx_bytes, 0, "no W+X mapping");
	return true;
}

/* BPF programs freed by earlier tests must not move the counters meanwhile */
static bool start(struct mem_snapshot *before)
{
	return ASSERT_OK(jit_quiesce(10000), "quiesce") && snap(before, "before");
}

/*
 * @held: with the workload's pages held; @after: once freed.  With blocks
 * on, neither may have split a 2M entry or grown DirectMap4k.
 */
static void judge(const char *what, const struct mem_snapshot *before,
		  const struct mem_snapshot *held, const struct mem_snapshot *after)
{
	printf("%s: 2M splits %lld -> %lld held -> %lld freed, DirectMap4k %lld -> %lld -> %lld kB,"
	       " 1G splits %lld -> %lld\n", what, before->l2_splits, held->l2_splits,
	       after->l2_splits, before->dm4k_kb, held->dm4k_kb, after->dm4k_kb,
	       before->l3_splits, after->l3_splits);
	test__note("%s: %+lld 2M splits, DirectMap4k %+lld kB while held", what,
		   held->l2_splits - before->l2_splits, held->dm4k_kb - before->dm4k_kb);
	if (!ro_blocks_on())
		return;
	ASSERT_EQ(held->l2_splits, before->l2_splits, "no 2M entry split while held");
	ASSERT_EQ(after->l2_splits, before->l2_splits, "none once freed");
	ASSERT_EQ(held->dm4k_kb, before->dm4k_kb, "DirectMap4k unchanged while held");
	ASSERT_EQ(after->dm4k_kb, before->dm4k_kb, "DirectMap4k unchanged once freed");
}

/* kprobes the optimizer made jumps of, with slots of their own, or -errno */
static int optimized_kprobes(void)
{
	FILE *f = fopen("/sys/kernel/debug/kprobes/list", "r");
	char line[256];
	int n = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, "[OPTIMIZED]");
	fclose(f);
	return n;
}

static long long used_pages(void)
{
	return read_key(RO_ALIAS_PATH, "pages_used");
}

static void test_modules(void)
{
	struct mem_snapshot before, held, after;
	long long used = used_pages(), used_held = -1;
	int i;

	if (!start(&before))
		return;
	for (i = 0; i < MODULE_ROUNDS; i++) {
		if (!ASSERT_OK(module_load(BIG_MODULE, NULL), "load big_module") ||
		    !ASSERT_OK(module_load(EXEC_MODULE, NULL), "load exec_pages"))
			return;
		if (!i) {
			check_exec_alias("module", 1);
			used_held = used_pages();
			if (!snap(&held, "held"))
				return;
		}
		if (!ASSERT_OK(module_unload("exec_pages"), "unload exec_pages") ||
		    !ASSERT_OK(module_unload("big_module"), "unload big_module"))
			return;
	}
	if (!snap(&after, "after"))
		return;
	judge("modules loaded and unloaded", &before, &held, &after);
	if (ro_blocks_on()) {
		/* big_module's 3 MiB array alone is 768 pages */
		ASSERT_GT(used_held - used, 768, "module pages from read-only blocks");
		ASSERT_EQ(used_pages(), used, "and back in them");
	}
}

/*
 * @cmd ("kprobes N", "ftrace N") held, checked, freed; @fresh: its pages
 * are new ones (kprobes keep slot pages with free slots for the next)
 */
static void hold_and_free(const char *cmd, const char *what, const char *alias, long long min,
			  bool fresh)
{
	struct mem_snapshot before, held, after;
	long long used = used_pages();

	if (!start(&before))
		return;
	if (!ASSERT_OK(write_file(EXEC_PAGES_CTL, cmd), cmd))
		goto out;
	printf("%s: held %lld, optimized %d, trampolines %lld\n", cmd,
	       read_key(EXEC_PAGES_CTL, "held"), optimized_kprobes(),
	       read_key(EXEC_PAGES_CTL, "trampolines"));
	check_exec_alias(alias, min);
	if (fresh && ro_blocks_on())
		ASSERT_GE(used_pages() - used, min, "their pages from read-only blocks");
	if (!snap(&held, "held"))
		goto out;
	if (!ASSERT_OK(write_file(EXEC_PAGES_CTL, "free"), "free") || !snap(&after, "after"))
		return;
	judge(what, &before, &held, &after);
	return;
out:
	write_file(EXEC_PAGES_CTL, "free");
}

static void test_kprobes(void)
{
	char cmd[32];

	snprintf(cmd, sizeof(cmd), "kprobes %d", KPROBES);
	/* 16-byte slots, 256 a page */
	hold_and_free(cmd, "kprobes registered and unregistered", "slot", KPROBES / 256, false);
}

static void test_ftrace_ops(void)
{
	char cmd[32];

	snprintf(cmd, sizeof(cmd), "ftrace %d", FTRACE_OPS);
	hold_and_free(cmd, "ftrace_ops with trampolines registered and unregistered", "tramp",
		      FTRACE_OPS, true);
}

/*
 * The function profiler gets a trampoline at its first start, kept.  It
 * profiles what set_ftrace_filter names: load_module() alone, as every
 * function under TCG would take minutes.
 */
static void test_profiler(void)
{
	struct mem_snapshot before, held, after;
	bool ok = false;

	if (access(PROFILER, W_OK)) {
		test__skip("no function profiler (CONFIG_FUNCTION_PROFILER)");
		return;
	}
	if (!start(&before) ||
	    !ASSERT_OK(write_file(FTRACE_FILTER, "load_module"), "set_ftrace_filter load_module"))
		return;
	if (ASSERT_OK(write_file(PROFILER, "1"), "profiler on")) {
		ok = snap(&held, "held");
		ASSERT_OK(write_file(PROFILER, "0"), "profiler off");
	}
	if (!ASSERT_OK(write_file(FTRACE_FILTER, "!load_module"), "set_ftrace_filter emptied") ||
	    !snap(&after, "after") || !ok)
		return;
	judge("the function profiler started and stopped", &before, &held, &after);
}

void test_exec_pages(void)
{
	/* first kprobes and ftrace, in memory modules have not split on base */
	bool up = ASSERT_OK(module_load(EXEC_MODULE, NULL), "load exec_pages.ko");

	if (test__start_subtest("kprobes") && ASSERT_TRUE(up, "exec_pages.ko loaded"))
		test_kprobes();
	if (test__start_subtest("ftrace_ops") && ASSERT_TRUE(up, "exec_pages.ko loaded"))
		test_ftrace_ops();
	if (test__start_subtest("profiler"))
		test_profiler();
	if (up)
		ASSERT_OK(module_unload("exec_pages"), "unload exec_pages.ko");
	if (test__start_subtest("modules"))
		test_modules();
}
