// SPDX-License-Identifier: GPL-2.0
/*
 * Hibernation, for real: the guest writes an image to its swap disk and
 * powers off, and make test-hibernate boots it again from that image,
 * once per cycle.  This process is in the image, so each write of "disk"
 * to /sys/power/state returns here, in the resumed kernel, and the test
 * goes on checking what came back.
 *
 * What is live at each snapshot: NPROGS programs, among them one in a 4K
 * fallback pack (fault injection), trampolines with fentry and fexit
 * programs, and a batch of programs closed just before hibernating, whose
 * frees (chunks, and whole packs when the batch had its own) are still in
 * flight.  hibernate_probe.ko checks the kernel mappings hibernation cannot
 * save, at the snapshot, with interrupts off (see its comment).  Before each
 * cycle dmap_heal.ko makes and frees 4K RO+X areas, so that the image is
 * taken with direct-map tables just collapsed (patch 21) and their page
 * tables freed.
 *
 * After each resume: the probe ran once more and found nothing; every
 * program still runs and returns what it returned before; the trampolines
 * still call their programs; once the batch's frees are done, programs,
 * packs, bytes in packs, module areas and the JIT budget are what they were
 * before the batch; packs are still mapped read-only and executable at
 * their page size, with traps in every free byte, and nothing is W+X; the
 * direct map was not split by the cycle (asserted where packs are huge).
 * The next cycle's batch shows that loads and frees still work.  Kprobes
 * and ftrace_ops with trampolines (exec_pages.ko) live through every cycle:
 * after each, no page of theirs nor of the module's text has a writable
 * direct-map alias.
 *
 * The kernel log gets "hibernation test: cycle N: ..." lines, so that
 * make test-hibernate can tell from each boot's log which cycle it saw.
 * Without a swap disk (/dev/vda) the test is skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../checks.h"
#include "../lib/churn.h"
#include "../lib/dmap_heal.h"
#include "../lib/packstats.h"
#include "../lib/progs.h"
#include "../lib/sys.h"
#include "../test_runner.h"
#include "tramp_correct.skel.h"

/* enough for the fallback pack and two huge ones: about 6 MiB of code */
#define NPROGS		1500
#define PROG_INSNS(i)	(200 + (i) * 7 % 1200)
#define BATCH_MAX	6000
#define CYCLES		3		/* -a hibernate-cycles=N */
#define SWAP_DEV	"/dev/vda"
#define PROBE		"/sys/kernel/debug/hibernate_probe"
#define FALLBACK_RET	4242
#define HEAL_AREAS	512
/* held by exec_pages.ko through every cycle */
#define KPROBES		300
#define FTRACE_OPS	8

struct probe {
	long long suspend_runs;
	/* per walk: snapshot (the last .suspend), now (the last write) */
	long long large_not_present, alias_not_present, first_bad, module_4k, module_2m,
		  direct_2m;
};

/* The value on the line "@walk @key N" (or "@key N" for a NULL walk), or -1. */
static long long probe_value(const char *text, const char *walk, const char *key)
{
	char prefix[64];
	const char *p = text;
	size_t n;

	n = snprintf(prefix, sizeof(prefix), "%s%s%s ", walk ?: "", walk ? " " : "", key);
	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, prefix, n))
			return strtoll(p + n, NULL, 0);
	return -1;
}

static int probe_read(const char *walk, struct probe *pr)
{
	char buf[2048];
	int err = read_file(PROBE, buf, sizeof(buf));

	if (err < 0)
		return err;
	pr->suspend_runs = probe_value(buf, NULL, "suspend_runs");
	pr->large_not_present = probe_value(buf, walk, "large_not_present");
	pr->alias_not_present = probe_value(buf, walk, "alias_not_present");
	pr->first_bad = probe_value(buf, walk, "first_bad");
	pr->module_4k = probe_value(buf, walk, "module_4k");
	pr->module_2m = probe_value(buf, walk, "module_2m");
	pr->direct_2m = probe_value(buf, walk, "direct_2m");
	return pr->module_2m < 0 ? -EINVAL : 0;
}

/* The walk's violations are none, and it saw the direct map at all. */
static void check_walk(const struct probe *pr, const char *when)
{
	printf("%s: probe: large not present %lld, aliases not present %lld, "
	       "module area %lld 2M + %lld 4K entries, direct map %lld 2M entries\n", when,
	       pr->large_not_present, pr->alias_not_present, pr->module_2m, pr->module_4k,
	       pr->direct_2m);
	if (!ASSERT_EQ(pr->large_not_present, 0, "2M/1G direct-map entries not present"))
		printf("%s: first at 0x%llx\n", when, (unsigned long long)pr->first_bad);
	if (!ASSERT_EQ(pr->alias_not_present, 0, "module-area pages whose direct map is not present"))
		printf("%s: first at 0x%llx\n", when, (unsigned long long)pr->first_bad);
	ASSERT_GT(pr->direct_2m, 0, "the walk saw the direct map's 2M entries");
	ASSERT_GT(pr->module_4k, 0, "the walk saw the module area (4K: the fallback pack, modules)");
}

/* PMDs the huge packs in @st map. */
static long long huge_pmds(const struct pack_stats *st)
{
	long long n = 0;
	int i;

	for (i = 0; i < st->npacks; i++)
		if (st->pack[i].mapped_shift == 21)
			n += st->pack_size >> 21;
	return n;
}

static int run_filter(int fd, __u32 *retval)
{
	char data[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = data, .data_size_in = sizeof(data));
	int err = bpf_prog_test_run_opts(fd, &opts);

	*retval = opts.retval;
	return err < 0 ? -errno : 0;
}

static int fds[NPROGS + 1], batch[BATCH_MAX];
/* the fewest 2M entries the probe saw in the module area at a snapshot */
static long long snapshot_pmds = -1;

/* Every program runs and returns what it was built to: i + 1, or FALLBACK_RET. */
static void check_programs_run(const char *when)
{
	int i, bad = 0;
	__u32 ret;

	for (i = 0; i <= NPROGS; i++) {
		__u32 want = i < NPROGS ? i + 1 : FALLBACK_RET;

		if (run_filter(fds[i], &ret) || ret != want) {
			if (!bad++)
				printf("%s: program %d returned %u, not %u\n", when, i, ret, want);
		}
	}
	ASSERT_EQ(bad, 0, "programs that no longer run or return something else");
}

/* The trampolines call their programs: one more fentry and fexit call. */
static void check_trampolines(struct tramp_correct *skel, const char *when)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	__u64 fentry = skel->bss->fentry_calls, fexit = skel->bss->fexit_calls;

	if (!ASSERT_OK(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.fentry_test1), &opts) ?
		       -errno : 0, "test run through the trampolines"))
		return;
	if (!ASSERT_EQ(skel->bss->fentry_calls, fentry + 1, "fentry ran") ||
	    !ASSERT_EQ(skel->bss->fexit_calls, fexit + 1, "fexit ran"))
		printf("%s: trampolines no longer call their programs\n", when);
}

/* A line in the kernel log, so that each boot's log shows where it is. */
static void log_kernel(int cycle, const char *what)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "hibernation test: cycle %d: %s\n", cycle, what);
	write_file("/dev/kmsg", msg);
}

/*
 * Loads programs until one needs a new pack, or takes a cached one (or
 * BATCH_MAX): until more than @packs_before packs are in use.  Returns
 * how many it loaded, stopping at the first that fails.
 */
static int load_batch(long long packs_before, bool stats)
{
	struct pack_stats st;
	int n;

	for (n = 0; n < BATCH_MAX; n++) {
		batch[n] = load_filter(FILTER_MIN_INSNS + n % 400, 1);
		if (batch[n] < 0) {
			ASSERT_GE(batch[n], 0, "load a batch program");
			return n;
		}
		if (n >= 100 && stats && !(n % 50) && !packstats_read(&st)) {
			bool new_pack = st.packs - st.cached > packs_before;

			packstats_free(&st);
			if (new_pack)
				return n + 1;
		}
		if (n >= 300 && !stats)
			return n + 1;
	}
	return n;
}

/* Splits the direct map and heals it, just before the cycle */
static void heal_before(const char *when)
{
	struct mem_snapshot a, b;

	if (!ASSERT_OK(snapshot_take(&a), "before the RO+X areas") ||
	    !ASSERT_OK(dmap_heal_areas("rox", HEAL_AREAS, NULL, &b), "RO+X areas made and freed"))
		return;
	printf("%s: %d RO+X areas made and freed: 2M splits %+lld, collapses %+lld\n", when,
	       HEAL_AREAS, b.l2_splits - a.l2_splits,
	       heals_direct_map(&b) ? b.l2_collapses - a.l2_collapses : 0);
	/* where nothing heals, this cycle's areas may land in blocks an earlier one split */
	if (HEALS_DIRECT_MAP(&b)) {
		ASSERT_GT(b.l2_splits, a.l2_splits, "the areas split the direct map");
		ASSERT_GT(b.l2_collapses, a.l2_collapses, "collapses just before the image");
	}
}

static void one_cycle(int cycle, struct tramp_correct *skel)
{
	struct leak_state before;
	struct mem_snapshot mem;
	struct pack_stats st = { 0 }, st_batch = { 0 };
	struct probe pr;
	bool stats = PATCHED_HAS(packstats_available(), PACKSTATS_PATH);
	char when[32];
	int i, n, err;

	snprintf(when, sizeof(when), "cycle %d", cycle);
	heal_before(when);
	if (!ASSERT_OK(leak_state_read(&before), "state before the cycle") ||
	    !ASSERT_OK(snapshot_take(&mem), "direct map before the cycle") ||
	    (stats && !ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH)))
		return;

	if (stats && expect_huge_vmalloc(test__args()))
		ASSERT_GE(st.huge_packs, 2, "huge packs live through the cycle");

	/* loads and frees work; the frees are in flight at the snapshot */
	n = load_batch(st.packs - st.cached, stats);
	if (stats && ASSERT_OK(packstats_read(&st_batch), "statistics with the batch"))
		printf("%s: batch of %d programs: %lld -> %lld packs\n", when, n, st.packs,
		       st_batch.packs);
	if (ASSERT_OK(write_file(PROBE, "walk"), "probe walk, running") &&
	    ASSERT_OK(probe_read("now", &pr), "read " PROBE)) {
		check_walk(&pr, "running");
		if (stats)
			ASSERT_EQ(pr.module_2m, huge_pmds(&st_batch),
				  "2M entries in the module area = huge packs' PMDs");
	}
	for (i = 0; i < n; i++)
		close(batch[i]);

	log_kernel(cycle, "hibernating");
	err = write_file("/sys/power/state", "disk");
	log_kernel(cycle, err ? "hibernation failed" : "resumed");
	if (!ASSERT_OK(err, "echo disk > /sys/power/state"))
		goto out;

	if (ASSERT_OK(probe_read("snapshot", &pr), "read " PROBE)) {
		ASSERT_EQ(pr.suspend_runs, cycle, "the probe ran at this cycle's snapshot");
		check_walk(&pr, "at the snapshot");
		if (snapshot_pmds < 0 || pr.module_2m < snapshot_pmds)
			snapshot_pmds = pr.module_2m;
		if (stats) {
			ASSERT_GE(pr.module_2m, huge_pmds(&st),
				  "2M entries at the snapshot >= without the batch");
			ASSERT_LE(pr.module_2m, huge_pmds(&st_batch), "and <= with it");
		} else {
			ASSERT_EQ(pr.module_2m, 0, "no 2M entry in the module area on this kernel");
		}
	}
	check_programs_run(when);
	check_trampolines(skel, when);
	check_no_leak(&before, "after resume, the batch freed");
	if (stats) {
		struct pack_stats after;

		if (ASSERT_OK(packstats_read(&after), "read " PACKSTATS_PATH)) {
			/* the batch's pack may be cached now */
			ASSERT_EQ(after.huge_packs - after.cached, st.huge_packs - st.cached,
				  "huge packs in use as before");
			ASSERT_EQ(after.fallbacks, st.fallbacks, "no new fallback pack");
			packstats_free(&after);
		}
	}
	check_invariants(when);
	check_direct_map(&mem, NULL);
	check_exec_alias("module", 1);
	check_exec_alias("slot", 1);
	check_exec_alias("tramp", FTRACE_OPS);
out:
	packstats_free(&st);
	packstats_free(&st_batch);
}

/* exec_pages.ko loaded, holding KPROBES kprobes and FTRACE_OPS ftrace_ops: 0 or -errno */
static int exec_pages_hold(void)
{
	char cmd[32];
	int err = module_load("exec_pages.ko", NULL);

	if (err)
		return err;
	snprintf(cmd, sizeof(cmd), "kprobes %d", KPROBES);
	err = write_file(EXEC_PAGES_CTL, cmd);
	if (err)
		return err;
	snprintf(cmd, sizeof(cmd), "ftrace %d", FTRACE_OPS);
	return write_file(EXEC_PAGES_CTL, cmd);
}

static int cycles_wanted(void)
{
	const char *a = strstr(test__args(), "hibernate-cycles=");

	return a ? atoi(a + strlen("hibernate-cycles=")) : CYCLES;
}

void test_hibernation(void)
{
	struct tramp_correct *skel = NULL;
	struct bpf_link *fentry = NULL, *fexit = NULL;
	struct pack_stats st;
	long long fallbacks = 0;
	bool stats;
	char state[128];
	int i, cycle, cycles = cycles_wanted();

	for (i = 0; i <= NPROGS; i++)
		fds[i] = -1;
	if (access(SWAP_DEV, F_OK)) {
		test__skip("no swap disk " SWAP_DEV ": make test-hibernate boots with one");
		return;
	}
	if (!ASSERT_GT(read_file("/sys/power/state", state, sizeof(state)), 0, "read /sys/power/state") ||
	    !ASSERT_TRUE(strstr(state, "disk"), "the kernel can hibernate (CONFIG_HIBERNATION)") ||
	    !ASSERT_OK(system("mkswap " SWAP_DEV " > /dev/null && swapon " SWAP_DEV), "mkswap, swapon") ||
	    !ASSERT_OK(module_load("hibernate_probe.ko", ""), "load hibernate_probe.ko") ||
	    !ASSERT_OK(dmap_heal_load(), "load dmap_heal.ko") ||
	    !ASSERT_OK(exec_pages_hold(), "exec_pages.ko holds kprobes and ftrace_ops") ||
	    !ASSERT_OK(write_file("/sys/power/disk", "shutdown"), "hibernation powers off") ||
	    !ASSERT_OK(raise_nofile(NPROGS + BATCH_MAX + 256), "RLIMIT_NOFILE") ||
	    !ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce"))
		goto out;

	/*
	 * First a 4K fallback pack (fault injection), live through every
	 * cycle: with no pack to reuse, the first program needs a new one.
	 */
	stats = PATCHED_HAS(packstats_available(), PACKSTATS_PATH);
	if (stats) {
		if (!ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH))
			goto out;
		fallbacks = st.fallbacks;
		ASSERT_EQ(st.packs, 0, "no pack to reuse");
		packstats_free(&st);
	}
	if (!ASSERT_OK(fault_setup(FAIL_PAGE_ALLOC, FAULT_ALWAYS, 9), "fail_page_alloc on"))
		goto out;
	fds[NPROGS] = load_filter(100, FALLBACK_RET);
	ASSERT_OK(fault_setup(FAIL_PAGE_ALLOC, FAULT_OFF, 0), "fail_page_alloc off");
	if (!ASSERT_GE(fds[NPROGS], 0, "load without 2M pages"))
		goto out;
	if (stats) {
		if (!ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH))
			goto out;
		ASSERT_EQ(st.fallbacks, fallbacks + 1, "a fallback pack");
		packstats_free(&st);
	}
	for (i = 0; i < NPROGS; i++) {
		fds[i] = load_filter(PROG_INSNS(i), i + 1);
		if (fds[i] < 0) {
			ASSERT_GE(fds[i], 0, "load a program");
			goto out;
		}
	}

	skel = tramp_correct__open_and_load();
	if (!ASSERT_TRUE(skel, "open and load tramp_correct.bpf.o"))
		goto out;
	fentry = bpf_program__attach(skel->progs.fentry_test1);
	fexit = bpf_program__attach(skel->progs.fexit_test2);
	if (!ASSERT_TRUE(fentry && fexit, "attach fentry and fexit"))
		goto out;
	check_programs_run("before hibernating");
	check_trampolines(skel, "before hibernating");

	for (cycle = 1; cycle <= cycles; cycle++)
		one_cycle(cycle, skel);
	test__note("%d cycles, %d programs, a fallback pack and 2 trampoline programs live; "
		   "at each snapshot >= %lld 2M pack entries, no large direct-map entry not present",
		   cycles, NPROGS + 1, snapshot_pmds);
out:
	bpf_link__destroy(fexit);
	bpf_link__destroy(fentry);
	tramp_correct__destroy(skel);
	for (i = 0; i <= NPROGS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	module_unload("hibernate_probe");
	module_unload("exec_pages");
	dmap_heal_unload();
}
