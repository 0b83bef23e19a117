// SPDX-License-Identifier: GPL-2.0
/*
 * A load must not wait for the pack allocator's slow work: making a pack
 * (a 2M allocation, which may reclaim and compact on a fragmented
 * machine), freeing one (a direct-map reset and a TLB flush), printing
 * the statistics.  How long those take depends on the machine, so the
 * test makes them long on purpose: progs/pack_delay.bpf.c burns DELAY_MS
 * on entry to module_alloc_huge() and module_memfree(), and to the
 * seq_printf() of the statistics' first line, and logs when each delay
 * began and ended.  Beside a thread that makes and frees packs and one
 * that reads the statistics, the test loads and frees a small program
 * that always has room, until each slow path has been delayed at least
 * once (BESIDE_MAX_MS at most).  Were any of them done under pack_mutex,
 * the first load to come during a delay would wait for its end, and no
 * load would begin and end within it.  So every delay the loads ran
 * through must have had a load begin and end within it: DELAY_MS is two
 * seconds, against loads of a millisecond and host stalls of a fraction
 * of a second, and the test asks for no bound on a load's time.  The
 * delays spin, and the kernel may not preempt them: the loads run on CPU
 * 0, the slow work on CPU 1, and only there is it delayed (a pack's free
 * runs on the workqueue of the CPU that freed its last program).  Load
 * times, alone and beside the delays, go in the note, with the loads that
 * took 0.9 DELAY_MS or more.
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

#define DELAY_MS	2000	/* each slow path's delay */
#define SLOW_MS		(DELAY_MS * 9 / 10)	/* a load this slow may have waited, noted */
#define ALONE_MS	2000	/* loads alone, for the note */
#define BESIDE_MIN_MS	4000	/* loads beside the slow work: at least, */
#define BESIDE_MAX_MS	60000	/* and at most, until every kind was delayed */
#define MAX_LOADS	400000
#define MAX_FILL	1024
#define HOLES		64	/* small programs freed to make room for the small loads */
#define LOAD_CPU	0
#define SLOW_CPU	1

/* progs/pack_delay.bpf.c's */
enum delay_kind { DELAY_ALLOC, DELAY_FREE, DELAY_PRINT, DELAY_KINDS };
static const char *const delay_name[] = { "pack make", "pack free", "print" };

/* Its log of one kind of delay: how many, when the first MAX_DELAYS began and ended. */
struct delay_log {
	unsigned long long count;
	const __u64 *start, *end;
};

#define MAX_DELAYS (sizeof(((struct pack_delay__bss *)0)->delay_start[0]) / sizeof(__u64))

static struct delay_log delay_log(const struct pack_delay *skel, enum delay_kind kind)
{
	return (struct delay_log){ skel->bss->delays[kind], skel->bss->delay_start[kind],
				   skel->bss->delay_end[kind] };
}

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

/* Lets this thread run on every CPU again. */
static void unpin(void)
{
	cpu_set_t all;
	int n;

	CPU_ZERO(&all);
	for (n = 0; n < CPU_SETSIZE; n++)
		CPU_SET(n, &all);
	sched_setaffinity(0, sizeof(all), &all);
}

/*
 * The JIT quiet, this thread on LOAD_CPU, and idle_secs 0 (the value it
 * had in @idle_was): a pack is freed as it empties, not cached, so that
 * a load with no room makes one.
 */
static bool begin(char *idle_was, size_t size)
{
	return ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") &&
	       ASSERT_OK(pin(LOAD_CPU), "run on CPU 0") &&
	       (!HAVE_PACK_PARAMS() ||
		ASSERT_OK(pack_param_set("idle_secs", "0", idle_was, size), "idle_secs=0"));
}

/* The fill closed, and what begin() changed put back. */
static void end(const char *idle_was)
{
	while (nfill)
		close(fill[--nfill]);
	if (idle_was[0])
		ASSERT_OK(write_file(PACK_PARAM("idle_secs"), idle_was), "idle_secs back");
	unpin();
}

/* progs/pack_delay.bpf.c, loaded and attached for this process: NULL on failure. */
static struct pack_delay *delay_attach(void)
{
	struct pack_delay *skel = pack_delay__open();

	if (!ASSERT_TRUE(skel, "open pack_delay"))
		return NULL;
	skel->rodata->tgid = getpid();
	skel->rodata->slow_cpu = SLOW_CPU;
	if (!ASSERT_OK(pack_delay__load(skel), "load pack_delay") ||
	    !ASSERT_OK(pack_delay__attach(skel), "attach pack_delay")) {
		pack_delay__destroy(skel);
		return NULL;
	}
	return skel;
}

/* a side thread's error: the first one is kept, 0 never overwrites it */
static bool side_fail(int err)
{
	int none = 0;

	if (err)
		atomic_compare_exchange_strong(&side_err, &none, err);
	return err;
}

/* Sleeps @ms, or less when told to stop. */
static void nap(int ms)
{
	double end = now_ms() + ms;

	while (!atomic_load(&stop) && now_ms() < end)
		usleep(10 * 1000);
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

	if (side_fail(pin(SLOW_CPU)))
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
		nap(DELAY_MS);
	}
	return arg;
}

static void *stats_reader(void *arg)
{
	if (side_fail(pin(SLOW_CPU)))
		return arg;
	while (!atomic_load(&side_err) && !atomic_load(&stop)) {
		if (side_fail(drain_file(PACKSTATS_PATH)))
			break;
		/* the CPU is the pack maker's too */
		nap(2 * DELAY_MS);
	}
	return arg;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Each load: when it began and how long it took, in ms. */
static double load_t0[MAX_LOADS], load_ms[MAX_LOADS], sorted[MAX_LOADS];

struct times {
	int n;
	double p50, p99, max;
};

/*
 * Every kind of slow work delayed at least once within the loads: a delay
 * that began at @from_ms or later and ended before @last_ms, when the last
 * load began, so that judge() counts it.  (A delay that began before the
 * loads did, as the first pack's free may on a slow kernel, says nothing.)
 */
static bool all_delayed(const struct pack_delay *skel, double from_ms, double last_ms)
{
	int kind, k, n;

	for (kind = 0; kind < DELAY_KINDS; kind++) {
		n = skel->bss->delays[kind] < MAX_DELAYS ? skel->bss->delays[kind] : MAX_DELAYS;
		for (k = 0; k < n; k++)
			if (skel->bss->delay_start[kind][k] / 1e6 >= from_ms &&
			    skel->bss->delay_end[kind][k] &&
			    skel->bss->delay_end[kind][k] / 1e6 < last_ms)
				break;
		if (k == n)
			return false;
	}
	return true;
}

/*
 * Loads and frees the small program for @min_ms, then, with @skel, on
 * until all_delayed() or @max_ms; its load times in load_t0[], load_ms[]
 * and @t.
 */
static bool load_for(struct times *t, int min_ms, int max_ms, const struct pack_delay *skel)
{
	double start = now_ms(), t0, now;
	int fd;

	for (t->n = 0; t->n < MAX_LOADS; t->n++) {
		t0 = now_ms();
		if (t0 - start >= max_ms ||
		    (t0 - start >= min_ms &&
		     (!skel || (t->n && all_delayed(skel, load_t0[0], load_t0[t->n - 1])))))
			break;
		fd = load_small();
		now = now_ms();
		load_t0[t->n] = t0;
		load_ms[t->n] = now - t0;
		if (!ASSERT_GE(fd, 0, "load"))
			return false;
		close(fd);
	}
	if (!ASSERT_GT(t->n, 0, "loads"))
		return false;
	memcpy(sorted, load_ms, t->n * sizeof(sorted[0]));
	qsort(sorted, t->n, sizeof(sorted[0]), cmp_double);
	t->p50 = sorted[t->n / 2];
	t->p99 = sorted[t->n * 99 / 100];
	t->max = sorted[t->n - 1];
	return true;
}

/* What the loads did beside one kind of delay. */
struct judged {
	int delays;	/* delays that began and ended while the loads ran */
	int waited;	/* of those, the ones no load ran through: a load waited */
	int during;	/* loads that ran while one of them did */
	double shortest;	/* the shortest delay that ended, ms (0: none) */
};

/* The first load of @t that began at @ms or later (t->n if none). */
static int first_load_from(const struct times *t, double ms)
{
	int lo = 0, hi = t->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (load_t0[mid] < ms)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Judges @log's delays by the loads of @t.  The loads run one after the
 * other, and a load takes a millisecond: beside a delay that holds
 * nothing they need, many begin and end within it.  Were the delay done
 * under pack_mutex, the first load to come after it began would wait for
 * its end, and none would end within it.  That takes no bound on how long
 * a load may take: only that, in DELAY_MS, a load is not held up all along
 * by anything else, host stalls included (the slowest seen on a host
 * building a kernel meanwhile took 0.7 s).
 */
static void judge(const struct times *t, const char *what, const struct delay_log *log,
		  struct judged *j)
{
	double loads_end = load_t0[t->n - 1] + load_ms[t->n - 1];
	int i, k, through;

	memset(j, 0, sizeof(*j));
	for (k = 0; k < (int)MAX_DELAYS && k < (int)log->count; k++) {
		double s = log->start[k] / 1e6, e = log->end[k] ? log->end[k] / 1e6 : 1e300;

		if (log->end[k] && (!j->shortest || e - s < j->shortest))
			j->shortest = e - s;
		/* from the load that may run over s */
		i = first_load_from(t, s);
		for (i = i ? i - 1 : 0, through = 0; i < t->n && load_t0[i] < e; i++) {
			j->during += load_t0[i] + load_ms[i] > s;
			through += load_t0[i] >= s && load_t0[i] + load_ms[i] <= e;
		}
		/* one the loads did not see to its end (or start) says nothing */
		if (!log->end[k] || e > loads_end || s < load_t0[0])
			continue;
		j->delays++;
		if (!through) {
			printf("%s delay %d, %.0f to %.0f ms: no load began and ended in it\n", what,
			       k, s, e);
			j->waited++;
		}
	}
}

/* The loads of @t that took SLOW_MS or more, the first 5 printed. */
static int slow_loads(const struct times *t)
{
	int i, n = 0;

	for (i = 0; i < t->n; i++) {
		if (load_ms[i] < SLOW_MS)
			continue;
		if (n++ < 5)
			printf("load %d, at %.0f ms: %.1f ms\n", i, load_t0[i], load_ms[i]);
	}
	return n;
}

static void print_delays(const char *what, const struct delay_log *log)
{
	int k;

	for (k = 0; k < (int)MAX_DELAYS && k < (int)log->count; k++)
		printf("%s delay %d: %.0f to %.0f ms\n", what, k, log->start[k] / 1e6,
		       log->end[k] / 1e6);
}

static void latency(void)
{
	struct pack_delay *skel = NULL;
	struct pack_stats st = {};
	pthread_t maker, reader;
	struct times alone, beside;
	bool threads = false;
	char idle_was[16] = "";
	struct delay_log log[DELAY_KINDS];
	struct judged j[DELAY_KINDS];
	int kind;
	int i, n;

	/*
	 * Small programs, then big ones until no pack has room for another,
	 * then every other small one freed: the small loads fit in the
	 * holes, and each big load needs a pack of its own.
	 */
	if (!begin(idle_was, sizeof(idle_was)))
		goto out;
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

	skel = delay_attach();
	if (!skel || !load_for(&alone, ALONE_MS, ALONE_MS, NULL))
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
	if (!load_for(&beside, BESIDE_MIN_MS, BESIDE_MAX_MS, skel))
		goto out;
	atomic_store(&stop, true);
	pthread_join(maker, NULL);
	pthread_join(reader, NULL);
	threads = false;
	skel->bss->delay_ns = 0;

	ASSERT_OK(atomic_load(&side_err), "the threads beside");
	for (kind = 0; kind < DELAY_KINDS; kind++) {
		log[kind] = delay_log(skel, kind);
		print_delays(delay_name[kind], &log[kind]);
		judge(&beside, delay_name[kind], &log[kind], &j[kind]);
	}
	ASSERT_GT(log[DELAY_ALLOC].count, 0, "packs made meanwhile, each delayed");
	ASSERT_GT(log[DELAY_FREE].count, 0, "packs freed meanwhile, each delayed");
	ASSERT_GT(log[DELAY_PRINT].count, 0, "statistics printed meanwhile, delayed");
	/* the delays were what they say: a bound of bpf_loop() cut none short */
	ASSERT_GE(j[DELAY_ALLOC].shortest, DELAY_MS, "a pack make's delay, ms");
	ASSERT_GE(j[DELAY_FREE].shortest, DELAY_MS, "a pack free's delay, ms");
	ASSERT_GE(j[DELAY_PRINT].shortest, DELAY_MS, "a print's delay, ms");
	/* the loads ran from before to after one of each */
	ASSERT_GT(j[DELAY_ALLOC].delays, 0, "pack makes the loads ran through");
	ASSERT_GT(j[DELAY_FREE].delays, 0, "pack frees the loads ran through");
	ASSERT_GT(j[DELAY_PRINT].delays, 0, "prints the loads ran through");
	/* and none held them up: loads began and ended within each */
	ASSERT_EQ(j[DELAY_ALLOC].waited, 0, "pack makes a load waited for");
	ASSERT_EQ(j[DELAY_FREE].waited, 0, "pack frees a load waited for");
	ASSERT_EQ(j[DELAY_PRINT].waited, 0, "prints a load waited for");
	test__note("load ms p50/p99/max: alone %.2f/%.2f/%.2f (%d loads); beside %llu pack "
		   "makes, %llu frees and %llu prints of %d ms each %.2f/%.2f/%.2f (%d loads, "
		   "%d/%d/%d during them, %d of 0.9 delay or more)",
		   alone.p50, alone.p99, alone.max, alone.n, log[DELAY_ALLOC].count,
		   log[DELAY_FREE].count, log[DELAY_PRINT].count, DELAY_MS, beside.p50,
		   beside.p99, beside.max, beside.n, j[DELAY_ALLOC].during, j[DELAY_FREE].during,
		   j[DELAY_PRINT].during, slow_loads(&beside));
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
	end(idle_was);
	if (ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce"))
		check_invariants("after the latency test");
}

/*
 * A burst of loads that all find no room makes one pack, not one each
 * (patch 24): every pack is filled for programs of BURST_INSNS, then a
 * load of one on the slow CPU makes a pack there, delayed BURST_DELAY_MS,
 * and a load of another on CPU 0 comes while that delay runs.  It must
 * wait for that pack and take room in it: one pack made for the two.
 * The wait is bounded (a second); the delay is well within it.
 */
#define BURST_INSNS	100
#define BURST_DELAY_MS	200

static int load_burst(void)
{
	return load_filter(BURST_INSNS, 0);
}

static void *burst_loader(void *arg)
{
	int *fd = arg;

	*fd = side_fail(pin(SLOW_CPU)) ? -1 : load_burst();
	return NULL;
}

static void burst(void)
{
	struct pack_delay *skel = NULL;
	struct pack_stats st = {};
	char idle_was[16] = "";
	int fd[2] = { -1, -1 };
	struct pack_stats after = {};
	uint64_t addr[2];
	uint32_t len[2];
	__u64 made;
	pthread_t slow;
	double until;
	int i, n;

	atomic_store(&side_err, 0);
	if (!begin(idle_was, sizeof(idle_was)))
		goto out;
	/* attached first: its trampolines take room in the packs filled next */
	skel = delay_attach();
	if (!skel || !ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH))
		goto out;
	n = packs_fill(&st, load_burst, fill, MAX_FILL);
	if (!ASSERT_GE(n, 0, "fill the packs"))
		goto out;
	nfill = n;

	made = skel->bss->made;
	skel->bss->delay_ns = BURST_DELAY_MS * 1000000ULL;
	if (!ASSERT_OK(-pthread_create(&slow, NULL, burst_loader, &fd[1]), "pthread_create"))
		goto out;
	for (until = now_ms() + SETTLE_MS; !skel->bss->delays[DELAY_ALLOC] && now_ms() < until;)
		usleep(1000);
	fd[0] = skel->bss->delays[DELAY_ALLOC] ? load_burst() : -ETIMEDOUT;
	pthread_join(slow, NULL);
	skel->bss->delay_ns = 0;
	ASSERT_OK(atomic_load(&side_err), "the slow CPU's loader");
	if (!ASSERT_GE(fd[0], 0, "the load during the pack's making") ||
	    !ASSERT_GE(fd[1], 0, "the load that made the pack"))
		goto out;
	made = skel->bss->made - made;
	for (i = 0; i < 2; i++)
		if (!ASSERT_OK(prog_jited_image(fd[i], &addr[i], &len[i]), "jited image"))
			goto out;
	test__note("two loads, no room: %llu pack(s) made; images at %#llx and %#llx", made,
		   (unsigned long long)addr[0], (unsigned long long)addr[1]);
	ASSERT_EQ(made, 1, "one pack made for the two loads");
	if (ASSERT_OK(packstats_read(&after), "read " PACKSTATS_PATH))
		ASSERT_TRUE(pack_of(&after, addr[0]) >= 0 &&
			    pack_of(&after, addr[0]) == pack_of(&after, addr[1]), "both in it");
	packstats_free(&after);
out:
	if (skel)
		skel->bss->delay_ns = 0;
	pack_delay__destroy(skel);
	packstats_free(&st);
	for (i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	end(idle_was);
}

void test_pack_latency(void)
{
	if (!REQUIRE_PATCHED(packstats_available(), PACKSTATS_PATH))
		return;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		test__skip("one CPU: the delays would stop the loads too");
		return;
	}
	if (test__start_subtest("load_beside_slow_work"))
		latency();
	if (test__start_subtest("burst"))
		burst();
}
