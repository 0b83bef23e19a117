// SPDX-License-Identifier: GPL-2.0
/*
 * A load must not wait for the pack allocator's slow work: making a pack
 * (a 2M allocation, which may reclaim and compact on a fragmented
 * machine), freeing one (a direct-map reset and a TLB flush), printing
 * the statistics.  How long those take depends on the machine, so the
 * test makes them long on purpose: progs/pack_delay.bpf.c burns DELAY_MS
 * on entry to module_alloc_huge() and module_memfree(), and to the
 * seq_printf() of the statistics' first line.
 * Beside a thread that makes and frees packs and one that reads the
 * statistics, the test loads and frees a small program that always has
 * room, for RUN_MS: no load may take DELAY_MS / 2 longer than the slowest
 * load alone, and every slow path must have been delayed meanwhile.  Were any of them done under
 * pack_mutex, the loads would wait DELAY_MS for it.  The delays spin, and
 * the kernel may not preempt them: the loads run on CPU 0, the slow work
 * on CPU 1 (a pack's free too, from the workqueue of the CPU that freed
 * its last program).  Load times, alone and beside the delays, go in the
 * note.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "../checks.h"
#include "../lib/packstats.h"
#include "../lib/progs.h"
#include "../lib/sys.h"
#include "../test_runner.h"
#include "pack_delay.skel.h"

#define DELAY_MS	200
#define RUN_MS		4000
#define MAX_LOADS	100000
#define MAX_FILL	1024
#define HOLES		64	/* small programs freed to make room for the small loads */

static int fill[MAX_FILL];
static int nfill;
static atomic_bool stop;
/* what stopped a side thread early: -errno, or 0 */
static atomic_int side_err;

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* a side thread's error: the first one is kept, 0 never overwrites it */
static bool side_fail(int err)
{
	int none = 0;

	if (err)
		atomic_compare_exchange_strong(&side_err, &none, err);
	return err;
}

static int load_small(void)
{
	return load_filter(FILTER_MIN_INSNS, 0);
}

/*
 * Loads and frees a program no pack has room for, and lets the free
 * finish: a pack made and freed each time.
 */
static void *pack_maker(void *arg)
{
	int fd, live = count_live_progs();

	if (side_fail(pin(1)))
		return arg;
	while (!atomic_load(&side_err) && !atomic_load(&stop)) {
		fd = load_fill();
		if (fd < 0) {
			side_fail(fd);
			break;
		}
		close(fd);
		while (count_live_progs() > live && !atomic_load(&stop))
			usleep(1000);
		usleep(2 * DELAY_MS * 1000);
	}
	return arg;
}

static void *stats_reader(void *arg)
{
	if (side_fail(pin(1)))
		return arg;
	while (!atomic_load(&side_err) && !atomic_load(&stop)) {
		if (side_fail(drain_file(PACKSTATS_PATH)))
			break;
		/* the CPU is the pack maker's too */
		usleep(DELAY_MS * 1000);
	}
	return arg;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct times {
	int n;
	double p50, p99, max;
};

/* Loads and frees the small program for RUN_MS; its load times in @t. */
static bool load_for(struct times *t)
{
	static double ms[MAX_LOADS];
	double end = now_ms() + RUN_MS;
	int fd;

	for (t->n = 0; t->n < MAX_LOADS && now_ms() < end; t->n++) {
		double t0 = now_ms();

		fd = load_small();
		ms[t->n] = now_ms() - t0;
		if (!ASSERT_GE(fd, 0, "load"))
			return false;
		close(fd);
	}
	qsort(ms, t->n, sizeof(ms[0]), cmp_double);
	t->p50 = ms[t->n / 2];
	t->p99 = ms[t->n * 99 / 100];
	t->max = ms[t->n - 1];
	return true;
}

static void latency(void)
{
	struct pack_delay *skel = NULL;
	struct pack_stats st = {};
	pthread_t maker, reader;
	struct times alone, beside;
	bool threads = false;
	char idle_was[16] = "";
	cpu_set_t all;
	int i, n;

	/*
	 * Small programs, then big ones until no pack has room for another,
	 * then every other small one freed: the small loads fit in the
	 * holes, and each big load needs a pack of its own.
	 */
	if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") || !ASSERT_OK(pin(0), "run on CPU 0"))
		return;
	/* a pack freed as it empties, not cached: each big load makes one */
	if (!access(PACK_PARAM("idle_secs"), W_OK) &&
	    !ASSERT_OK(pack_param_set("idle_secs", "0", idle_was, sizeof(idle_was)),
		       "idle_secs=0"))
		return;
	for (nfill = 0; nfill < HOLES * 2; nfill++) {
		fill[nfill] = load_small();
		if (!ASSERT_GE(fill[nfill], 0, "load"))
			goto out;
	}
	if (!ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH))
		goto out;
	n = packs_fill(&st, load_fill, fill + nfill, MAX_FILL - nfill);
	if (!ASSERT_GE(n, 0, "fill the packs"))
		goto out;
	nfill += n;
	for (i = n = 0; i < nfill; i++) {
		if (i < 2 * HOLES && !(i % 2))
			close(fill[i]);
		else
			fill[n++] = fill[i];
	}
	nfill = n;
	if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce"))
		goto out;

	skel = pack_delay__open();
	if (!ASSERT_TRUE(skel, "open pack_delay"))
		goto out;
	skel->rodata->tgid = getpid();
	if (!ASSERT_OK(pack_delay__load(skel), "load pack_delay") ||
	    !ASSERT_OK(pack_delay__attach(skel), "attach pack_delay") ||
	    !load_for(&alone))
		goto out;

	skel->bss->delay_ns = DELAY_MS * 1000000ULL;
	atomic_store(&stop, false);
	if (!ASSERT_OK(-pthread_create(&maker, NULL, pack_maker, NULL), "pthread_create"))
		goto out;
	if (!ASSERT_OK(-pthread_create(&reader, NULL, stats_reader, NULL), "pthread_create")) {
		atomic_store(&stop, true);
		pthread_join(maker, NULL);
		goto out;
	}
	threads = true;
	if (!load_for(&beside))
		goto out;
	atomic_store(&stop, true);
	pthread_join(maker, NULL);
	pthread_join(reader, NULL);
	threads = false;
	skel->bss->delay_ns = 0;

	ASSERT_OK(atomic_load(&side_err), "the threads beside");
	ASSERT_GT(skel->bss->delays_alloc, 0, "packs made meanwhile, each delayed");
	ASSERT_GT(skel->bss->delays_free, 0, "packs freed meanwhile, each delayed");
	ASSERT_GT(skel->bss->delays_print, 0, "statistics printed meanwhile, delayed");
	/* a load that waited for one of them took DELAY_MS more than any alone */
	ASSERT_LT(beside.max, alone.max + DELAY_MS / 2.0, "the slowest load beside them, ms");
	test__note("load ms p50/p99/max: alone %.2f/%.2f/%.2f (%d loads); beside %llu pack "
		   "makes, %llu frees and %llu prints of %d ms each %.2f/%.2f/%.2f (%d loads)",
		   alone.p50, alone.p99, alone.max, alone.n, skel->bss->delays_alloc,
		   skel->bss->delays_free, skel->bss->delays_print, DELAY_MS, beside.p50,
		   beside.p99, beside.max, beside.n);
out:
	if (threads) {
		atomic_store(&stop, true);
		pthread_join(maker, NULL);
		pthread_join(reader, NULL);
	}
	if (skel)
		skel->bss->delay_ns = 0;
	pack_delay__destroy(skel);
	packstats_free(&st);
	while (nfill)
		close(fill[--nfill]);
	if (idle_was[0])
		ASSERT_OK(write_file(PACK_PARAM("idle_secs"), idle_was), "idle_secs back");
	if (ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce"))
		check_invariants("after the latency test");
	CPU_ZERO(&all);
	for (n = 0; n < CPU_SETSIZE; n++)
		CPU_SET(n, &all);
	sched_setaffinity(0, sizeof(all), &all);
}

void test_pack_latency(void)
{
	if (!packstats_available()) {
		test__skip("no " PACKSTATS_PATH ": not the patched kernel");
		return;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		test__skip("one CPU: the delays would stop the loads too");
		return;
	}
	if (test__start_subtest("load_beside_slow_work"))
		latency();
}
