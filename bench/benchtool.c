// SPDX-License-Identifier: GPL-2.0
/*
 * The guest side of `make bench`: five workloads on whatever kernel booted,
 * each bracketed by snapshots of the direct map, printed as "B <kind> k=v ..."
 * lines for bench/report.py.  A value the kernel cannot give is -1 (n/a).
 *
 *   benchtool [-n churn count] [-r rounds] [-S scale target] [-L live target]
 *             [-T random steps] [-s seed] [-F traced functions]
 *             [-w workloads: c,r,m,s,t,f,g]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "churn.h"
#include "fragment.h"
#include "packstats.h"
#include "progs.h"
#include "ptdump.h"
#include "sys.h"

static double t0;
static const char *tracing = "/sys/kernel/debug/tracing";
/* the function profiler is set up (prof_warm()) */
static bool prof;

static void progress(const char *wl, const char *what)
{
	fprintf(stderr, "[bench %6.1fs] %s: %s\n", (now_ms() - t0) / 1e3, wl, what);
}

struct packs {
	long long packs;	/* held */
	long long cached;	/* of them, kept empty for reuse (the series' cache) */
	long long fallbacks;	/* 4K packs made since boot, -1: unknown */
	long long bytes;	/* the bytes they span */
	const char *src;
};

/* Packs held: the series' statistics, else /proc/vmallocinfo. */
static int packs_held(struct packs *p)
{
	static struct pack_stats st;
	char line[512];
	FILE *f;

	p->cached = 0;
	p->fallbacks = -1;
	if (packstats_available() && !packstats_read(&st)) {
		p->packs = st.packs;
		p->cached = st.cached;
		p->fallbacks = st.fallbacks;
		p->bytes = st.packs * st.pack_size;
		packstats_free(&st);
		p->src = "prog_pack";
		return 0;
	}
	/* 6.1 without the series: a pack is a module_alloc() of 2 MiB (plus a guard page) */
	f = fopen("/proc/vmallocinfo", "r");
	if (!f)
		return -errno;
	p->packs = p->bytes = 0;
	while (fgets(line, sizeof(line), f)) {
		long long sz;

		if (sscanf(line, "%*s %lld", &sz) != 1 || sz < (2 << 20))
			continue;
		if (strstr(line, "module_alloc") || strstr(line, "bpf_prog_pack") ||
		    strstr(line, "bpf_jit_alloc_exec")) {
			p->packs++;
			p->bytes += sz - 4096;
		}
	}
	fclose(f);
	p->src = "vmallocinfo";
	return 0;
}

static void snap(const char *wl, const char *tag, long live)
{
	struct packs p = { -1, -1, -1, -1, "none" };
	struct mem_snapshot s;

	snapshot_take(&s);
	packs_held(&p);
	printf("B snap wl=%s tag=%s live=%ld l2=%lld l3=%lld c2=%lld c3=%lld dm4k=%lld dm2m=%lld "
	       "dmap4k=%lld dmap2m=%lld mod4k=%lld mod2m=%lld packs=%lld cached=%lld "
	       "fallbacks=%lld pack_bytes=%lld src=%s\n",
	       wl, tag, live, s.l2_splits, s.l3_splits, s.l2_collapses, s.l3_collapses, s.dm4k_kb,
	       s.dm2m_kb,
	       s.have_ptdump ? (long long)pt_entries(&s.direct, PT_4K) : -1,
	       s.have_ptdump ? (long long)pt_entries(&s.direct, PT_2M) : -1,
	       s.have_ptdump ? (long long)pt_entries(&s.modules, PT_4K) : -1,
	       s.have_ptdump ? (long long)pt_entries(&s.modules, PT_2M) : -1,
	       p.packs, p.cached, p.fallbacks, p.bytes, p.src);
	fflush(stdout);
}

/*
 * Frees are deferred (RCU, then a workqueue): wait until @live programs are
 * left and the count of packs in use (not cached) is stable, or, with
 * @max_packs >= 0, down to it.
 */
static void settle_to(long live, long long max_packs, int timeout_ms)
{
	double deadline = now_ms() + timeout_ms;
	long long in_use, last = -2;
	struct packs p;
	int stable = 0;

	while (now_ms() < deadline) {
		if (count_live_progs() == live && !packs_held(&p)) {
			in_use = p.packs - p.cached;
			stable = in_use == last ? stable + 1 : 0;
			last = in_use;
			if (max_packs >= 0 ? in_use <= max_packs : stable == 3)
				return;
		}
		usleep(100 * 1000);
	}
	progress("settle", "timed out");
}

static void settle(long live, int timeout_ms)
{
	settle_to(live, -1, timeout_ms);
}

/*
 * A workload over: its programs freed, the direct map as it left it, to set
 * against the one before the first workload ("boot").
 */
static void workload_end(const char *wl, long live)
{
	settle(live, 20000);
	snap(wl, "end", live);
}

/* Packs in use (held, not cached) now, -1 if unknown. */
static long long packs_now(void)
{
	struct packs p;

	return packs_held(&p) ? -1 : p.packs - p.cached;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* CPU time this thread has used, in us: a syscall's work without its waits. */
static double cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void pctl(double *v, size_t n, double *p50, double *p99)
{
	qsort(v, n, sizeof(*v), cmp_double);
	*p50 = n ? v[n / 2] : 0;
	*p99 = n ? v[(size_t)(n * 0.99)] : 0;
}

/* One timed load; *us gets its cost. */
static int timed_load(unsigned int insns, double *us)
{
	double s = now_us();
	int fd = load_filter(insns, 0);

	*us = now_us() - s;
	return fd;
}

/* --- churn --------------------------------------------------------------- */
static int churn(const char *wl, unsigned int n, unsigned int rounds, unsigned int seed)
{
	double *lat = calloc((size_t)n * rounds, sizeof(*lat)), p50, p99;
	int *fds = calloc(n, sizeof(*fds));
	unsigned int r, i, k = 0;
	long base_live = count_live_progs();
	char tag[32];

	if (!lat || !fds)
		return -ENOMEM;
	long long base_packs = packs_now();

	snap(wl, "before", base_live);
	for (r = 1; r <= rounds; r++) {
		double sum = 0;

		for (i = 0; i < n; i++) {
			fds[i] = timed_load(2 + rand_r(&seed) % 399, &lat[k]);
			if (fds[i] < 0) {
				printf("B error wl=%s round=%u err=%d\n", wl, r, fds[i]);
				return fds[i];
			}
			sum += lat[k++];
		}
		for (i = 0; i < n; i++)
			close(fds[i]);
		settle_to(base_live, base_packs, 20000);
		snprintf(tag, sizeof(tag), "round%u", r);
		snap(wl, tag, base_live);
		printf("B %s round=%u us_avg=%.1f\n", wl, r, sum / n);
		snprintf(tag, sizeof(tag), "round %u/%u done", r, rounds);
		progress(wl, tag);
	}
	pctl(lat, k, &p50, &p99);
	printf("B lat wl=%s n=%u p50=%.1f p99=%.1f\n", wl, k, p50, p99);
	free(lat);
	free(fds);
	return 0;
}

/* --- random churn around a live-set target ------------------------------- */
#define RANDOM_SAMPLES 20

/*
 * Seeded loads and frees around @target live programs, sampled
 * RANDOM_SAMPLES times.  Sizes are 2-400 insns; with @large, one program
 * in @large is 400-2400 insns instead (up to about 16 KiB of JIT code):
 * a few big programs among many small ones, whose frees leave holes too
 * short for the next big one, so that placement can change the packs held.
 */
static int random_churn(const char *wl, unsigned int target, unsigned int steps,
			unsigned int seed, unsigned int large)
{
	double *lat = calloc(steps + target, sizeof(*lat)), p50, p99;
	int *fds = calloc(target * 2, sizeof(*fds));
	uint32_t *len = calloc(target * 2, sizeof(*len));
	unsigned int live = 0, s, k = 0, sample = steps / RANDOM_SAMPLES;
	long base_live = count_live_progs();
	long long jbytes = 0;

	if (!lat || !fds || !len)
		return -ENOMEM;
	long long base_packs = packs_now();

	snap(wl, "before", base_live);
	for (s = 0; s < steps; s++) {
		unsigned int pct = rand_r(&seed) % 100;
		bool load = live < target * 9 / 10 || (live < target * 11 / 10 && pct < 50);

		if (s < target || load) {
			unsigned int insns = large && rand_r(&seed) % large == 0 ?
					     400 + rand_r(&seed) % 2001 : 2 + rand_r(&seed) % 399;
			uint64_t addr;
			int fd = timed_load(insns, &lat[k++]);

			if (fd < 0) {
				printf("B error wl=%s step=%u err=%d\n", wl, s, fd);
				return fd;
			}
			prog_jited_image(fd, &addr, &len[live]);
			jbytes += len[live];
			fds[live++] = fd;
		} else {
			unsigned int v = rand_r(&seed) % live;

			close(fds[v]);
			jbytes -= len[v];
			fds[v] = fds[--live];
			len[v] = len[live];
		}
		if ((s + 1) % sample == 0) {
			struct packs p;
			struct pt_stats mod;
			int pt;

			settle(base_live + live, 5000);
			pt = ptdump_stats_kernel(MODULES_SECTION, 0, 0, &mod);
			if (packs_held(&p))
				p.packs = p.bytes = -1;
			printf("B %s step=%u live=%u jit_bytes=%lld packs=%lld pack_bytes=%lld "
			       "mod4k=%lld mod2m=%lld\n", wl, s + 1, live, jbytes, p.packs, p.bytes,
			       pt ? -1 : (long long)pt_entries(&mod, PT_4K),
			       pt ? -1 : (long long)pt_entries(&mod, PT_2M));
			fflush(stdout);
		}
	}
	pctl(lat, k, &p50, &p99);
	printf("B lat wl=%s n=%u p50=%.1f p99=%.1f\n", wl, k, p50, p99);
	snap(wl, "peak", base_live + live);
	while (live)
		close(fds[--live]);
	settle_to(base_live, base_packs, 30000);
	snap(wl, "after", base_live);
	progress(wl, "done");
	free(lat);
	free(fds);
	free(len);
	return 0;
}

/* --- scale, with ftrace's function profiler at each mark ------------------- */
static const char *const prof_funcs[] = {
	"__sys_bpf", "bpf_prog_load", "bpf_check", "bpf_prog_select_runtime",
	"bpf_int_jit_compile", "bpf_jit_binary_pack_alloc", "bpf_prog_pack_alloc",
	"bpf_jit_binary_pack_finalize", "bpf_arch_text_copy", "bpf_prog_alloc",
	"bpf_prog_alloc_no_stats", "__vmalloc_node_range", "alloc_vmap_area",
	"bpf_prog_alloc_id", "idr_alloc_cyclic", "bpf_prog_kallsyms_add", "bpf_ksym_add",
	"bpf_prog_new_fd", "anon_inode_getfd", "security_bpf_prog_alloc",
	"perf_event_bpf_event", "bpf_jit_charge_modmem", "bpf_prog_calc_tag",
	"module_alloc", "bpf_jit_alloc_exec", "bpf_audit_prog", "bpf_prog_kallsyms_find",
	"vmap_pages_range_noflush", "set_memory_rox", "set_memory_ro", "set_memory_x",
	"alloc_new_pack", "text_poke_copy",
};

static bool prof_setup(void)
{
	char path[256];
	size_t i;

	snprintf(path, sizeof(path), "%s/function_profile_enabled", tracing);
	if (access(path, W_OK)) {
		mkdir("/sys/kernel/tracing", 0755);
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
		tracing = "/sys/kernel/tracing";
		snprintf(path, sizeof(path), "%s/function_profile_enabled", tracing);
		if (access(path, W_OK))
			return false;
	}
	/* a function's time without the time its task spent scheduled out */
	snprintf(path, sizeof(path), "%s/options/sleep-time", tracing);
	write_file(path, "0");
	snprintf(path, sizeof(path), "%s/set_ftrace_filter", tracing);
	write_file(path, "");
	for (i = 0; i < sizeof(prof_funcs) / sizeof(prof_funcs[0]); i++) {
		int fd = open(path, O_WRONLY | O_APPEND);

		if (fd >= 0) {
			/* fails for what this kernel cannot trace (inlined, notrace): skipped */
			if (write(fd, prof_funcs[i], strlen(prof_funcs[i])) < 0)
				errno = 0;
			close(fd);
		}
	}
	return true;
}

static void prof_enable(bool on)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/function_profile_enabled", tracing);
	write_file(path, on ? "1" : "0");
}

/*
 * The profiler's first enable makes ftrace's trampoline (module_alloc(),
 * set_memory_ro() and set_memory_x(): a split of its own), which ftrace
 * keeps as long as the kernel runs: made once, before the first workload.
 */
static bool prof_warm(long live)
{
	int fd;

	if (!prof_setup())
		return false;
	prof_enable(true);
	fd = load_filter(2, 0);
	prof_enable(false);
	if (fd >= 0)
		close(fd);
	settle(live, 5000);
	return true;
}

/* Prints "B prof mark=M win=W fn=F hits=H us=T" summed over the CPUs. */
static void prof_dump(unsigned int mark, unsigned int win)
{
	char path[256], line[512], name[128], unit[16];
	unsigned long hits[64] = {}, h;
	double us[64] = {}, t;
	size_t i, nf = sizeof(prof_funcs) / sizeof(prof_funcs[0]);
	int cpu;

	for (cpu = 0; cpu < 64; cpu++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/trace_stat/function%d", tracing, cpu);
		f = fopen(path, "r");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%127s %lu %lf %15s", name, &h, &t, unit) != 4)
				continue;
			for (i = 0; i < nf; i++)
				if (!strcmp(name, prof_funcs[i])) {
					hits[i] += h;
					us[i] += !strcmp(unit, "ms") ? t * 1e3 : t;
				}
		}
		fclose(f);
	}
	for (i = 0; i < nf; i++)
		if (hits[i])
			printf("B prof mark=%u win=%u fn=%s hits=%lu us=%.1f\n", mark, win,
			       prof_funcs[i], hits[i], us[i]);
	fflush(stdout);
}

static int scale(unsigned int target, unsigned int seed)
{
	static const unsigned int marks[] = { 1000, 10000, 50000, 100000 };
	const unsigned int win = 500, prof_n = 300, prof_wins = 3, step = 1000;
	unsigned int n = 0, m = 0, cap = target + 4 * prof_n + 16;
	int *fds = calloc(cap, sizeof(*fds));
	double *lat = calloc(cap, sizeof(*lat)), *tmp = calloc(cap, sizeof(*tmp)), p50, p99;
	long base_live = count_live_progs();
	long long base_packs;
	char msg[64];

	if (!fds || !lat || !tmp)
		return -ENOMEM;
	raise_nofile(cap + 256);
	/* root bypasses the limit, but raise it as a user would: the largest value taken */
	for (long long lim = 1LL << 40; lim >= 1 << 26; lim >>= 1) {
		snprintf(msg, sizeof(msg), "%lld", lim);
		if (!write_file("/proc/sys/net/core/bpf_jit_limit", msg))
			break;
	}
	printf("B profiler available=%d windows=%u loads=%u\n", prof, prof_wins, prof_n);
	base_packs = packs_now();
	snap("scale", "before", base_live);
	while (n < target) {
		int fd = timed_load(2 + rand_r(&seed) % 59, &lat[n]);

		if (fd < 0) {
			printf("B error wl=scale live=%u err=%d\n", n, fd);
			break;
		}
		fds[n++] = fd;
		if (n % step == 0) {
			double sum = 0;

			for (unsigned int i = n - step; i < n; i++)
				sum += lat[i];
			printf("B scale live=%u us_avg=%.1f\n", n, sum / step);
		}
		if (m < 4 && n == marks[m] && marks[m] <= target) {
			memcpy(tmp, lat + n - win, win * sizeof(*tmp));
			pctl(tmp, win, &p50, &p99);
			printf("B mark live=%u p50=%.1f p99=%.1f\n", n, p50, p99);
			/* the same loads in load order: kernels compared load by load */
			printf("B marklat live=%u us=", n);
			for (unsigned int i = n - win; i < n; i++)
				printf("%s%.2f", i > n - win ? "," : "", lat[i]);
			printf("\n");
			/*
			 * A few profiled windows at the mark; the report takes each
			 * function's least time per call, as interference only adds.
			 * The programs of all but the last window are freed again, so
			 * that every window starts from the same live count.
			 */
			for (unsigned int w = 0; prof && w < prof_wins; w++) {
				unsigned int start = n;

				prof_enable(true);
				for (unsigned int i = 0; i < prof_n && n < cap; i++) {
					double us;

					fd = timed_load(2 + rand_r(&seed) % 59, &us);
					if (fd < 0)
						break;
					fds[n] = fd;
					lat[n++] = us;
				}
				prof_enable(false);
				prof_dump(marks[m], w);
				if (w + 1 == prof_wins)
					break;
				while (n > start)
					close(fds[--n]);
				settle(base_live + n, 10000);
			}
			snprintf(msg, sizeof(msg), "%u live programs", n);
			progress("scale", msg);
			m++;
		}
	}
	snap("scale", "peak", base_live + n);
	while (n)
		close(fds[--n]);
	settle_to(base_live, base_packs, 90000);
	snap("scale", "after", base_live);
	progress("scale", "done");
	free(fds);
	free(lat);
	free(tmp);
	return 0;
}

/* --- trampolines: attach/detach churn ------------------------------------ */
/*
 * @nfuncs fentry programs ("r0 = 0; exit"), one on each of the first
 * syscall entry points, by name, that the kernel lets one attach to; then
 * @rounds rounds of attaching and detaching each, each timed: an attach
 * builds a trampoline (sizes, allocates, writes and protects its image)
 * and has ftrace call it; a detach has ftrace stop calling it, and waits
 * for what ftrace waits for.  The image is freed later, after RCU.  Both
 * wait for timer ticks (ftrace's and RCU's grace periods), which the
 * instruction clock skips to, so an attach is also timed by the CPU time
 * it takes: its work without the waits.
 */
static int tramp(const char *wl, unsigned int nfuncs, unsigned int rounds)
{
	unsigned int i, r, k = 0, n;
	size_t cap = (size_t)nfuncs * rounds;
	double *att = calloc(cap, sizeof(*att)), *det = calloc(cap, sizeof(*det));
	double *cpu = calloc(cap, sizeof(*cpu)), *tot = calloc(cap, sizeof(*tot)), p50, p99, s, c;
	int *progs = calloc(nfuncs, sizeof(*progs)), link, err = 0, loaded;
	long base_live = count_live_progs();
	char tag[32];

	if (!att || !det || !cpu || !tot || !progs)
		return -ENOMEM;
	loaded = load_fentry_progs(progs, nfuncs);
	if (loaded < 0) {
		printf("B error wl=%s load err=%d\n", wl, loaded);
		return loaded;
	}
	n = loaded;
	settle(base_live + n, 20000);
	/* from here on, only trampolines come and go */
	snap(wl, "before", base_live + n);
	for (r = 1; r <= rounds && !err; r++) {
		for (i = 0; i < n; i++) {
			s = now_us();
			c = cpu_us();
			link = bpf_link_create(progs[i], 0, BPF_TRACE_FENTRY, NULL);
			if (link < 0 && r == 1) {	/* a function ftrace cannot patch */
				close(progs[i]);
				progs[i--] = progs[--n];
				continue;
			}
			if (link < 0) {
				err = -errno;
				printf("B error wl=%s round=%u err=%d\n", wl, r, err);
				break;
			}
			cpu[k] = cpu_us() - c;
			att[k] = now_us() - s;
			s = now_us();
			close(link);
			det[k] = now_us() - s;
			tot[k] = att[k] + det[k];
			k++;
		}
		snprintf(tag, sizeof(tag), "round %u/%u done", r, rounds);
		progress(wl, tag);
	}
	printf("B %s functions=%u candidates=%d\n", wl, n, loaded);
	settle(base_live + n, 20000);
	snap(wl, "after", base_live + n);
	for (i = 0; i < n; i++)
		close(progs[i]);
	pctl(att, k, &p50, &p99);
	printf("B lat wl=%s_attach n=%u p50=%.1f p99=%.1f\n", wl, k, p50, p99);
	pctl(cpu, k, &p50, &p99);
	printf("B lat wl=%s_attach_cpu n=%u p50=%.1f p99=%.1f\n", wl, k, p50, p99);
	pctl(det, k, &p50, &p99);
	printf("B lat wl=%s_detach n=%u p50=%.1f p99=%.1f\n", wl, k, p50, p99);
	pctl(tot, k, &p50, &p99);
	printf("B lat wl=%s n=%u p50=%.1f p99=%.1f\n", wl, k, p50, p99);
	free(att);
	free(cpu);
	free(tot);
	free(det);
	free(progs);
	return err;
}

/* --- the same on fragmented memory --------------------------------------- */
/*
 * A peak on memory as it is after boot: @peak programs of 2-400 insns
 * loaded, all live, and freed.  Then free memory is broken up so that no
 * 2 MiB block is left (selftests/lib/fragment.c, movable: this process's
 * pages), and churn, random churn and trampolines run again, under that
 * peak: a kernel that keeps the packs it made needs no new 2 MiB block for
 * them, one that frees them does.  Compaction is off (compaction_off())
 * while the fragmenter runs.  Without @compaction it stays off for the
 * workloads, as on a kernel without CONFIG_COMPACTION; with it, it is back
 * on, and the kernel may move the fragmenter's pages to make a 2 MiB block
 * for a pack.  Workloads are named @wl_churn, @wl_random, @wl_tramp.
 */
static int fragmented(const char *wl, bool compaction, unsigned int peak, unsigned int n,
		      unsigned int rounds, unsigned int target, unsigned int steps,
		      unsigned int nfuncs, unsigned int seed)
{
	int *fds = calloc(peak, sizeof(*fds)), err = 0;
	long base_live = count_live_progs();
	long long base_packs = packs_now(), before;
	char name[32], name2[32], name3[32];
	struct compaction cmp;
	struct frag f;
	unsigned int i;

	if (!fds)
		return -ENOMEM;
	snap(wl, "before", base_live);
	for (i = 0; i < peak && !err; i++) {
		fds[i] = load_filter(2 + rand_r(&seed) % 399, 0);
		if (fds[i] < 0)
			err = fds[i];
	}
	snap(wl, "peak", base_live + i - !!err);
	while (i)
		if (fds[--i] >= 0)
			close(fds[i]);
	free(fds);
	settle_to(base_live, base_packs, 30000);
	snap(wl, "freed", base_live);
	if (err) {
		printf("B error wl=%s peak err=%d\n", wl, err);
		return err;
	}
	compaction_off(&cmp);
	progress(wl, "peak done, fragmenting");
	before = free_huge_blocks();
	err = fragment(&f, FRAG_MOVABLE, 16);
	printf("B frag wl=%s compaction=%d err=%d blocks=%ld free_2m_before=%lld free_2m_after=%ld\n",
	       wl, compaction, err, f.blocks, before, free_huge_blocks());
	if (compaction)
		compaction_restore(&cmp);
	if (!err) {
		snap(wl, "fragmented", base_live);
		snprintf(name, sizeof(name), "%s_churn", wl);
		snprintf(name2, sizeof(name2), "%s_random", wl);
		snprintf(name3, sizeof(name3), "%s_tramp", wl);
		err = churn(name, n, rounds, seed) ?: random_churn(name2, target, steps, seed, 0) ?:
		      tramp(name3, nfuncs, rounds);
		snap(wl, "after", base_live);
		fragment_release(&f);
	}
	compaction_restore(&cmp);
	return err;
}

int main(int argc, char **argv)
{
	unsigned int n = 5000, rounds = 8, starget = 100000, ltarget = 10000, steps = 30000;
	unsigned int seed = 1, nfuncs = 200;
	const char *wls = "c,r,m,s,t,f,g";
	int c, err = 0;
	long boot_live;

	while ((c = getopt(argc, argv, "n:r:S:L:T:s:F:w:h")) != -1) {
		switch (c) {
		case 'n': n = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 'S': starget = atoi(optarg); break;
		case 'L': ltarget = atoi(optarg); break;
		case 'T': steps = atoi(optarg); break;
		case 's': seed = atoi(optarg); break;
		case 'F': nfuncs = atoi(optarg); break;
		case 'w': wls = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-n churn programs] [-r rounds] [-S scale target] "
				"[-L random live target] [-T random steps] [-s seed] "
				"[-F traced functions] [-w c,r,m,s,t,f,g]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	t0 = now_ms();
	setvbuf(stdout, NULL, _IOLBF, 0);
	raise_nofile(2 * (n > ltarget ? n : ltarget) + 256);
	printf("B config n=%u rounds=%u scale=%u live=%u steps=%u seed=%u functions=%u\n", n,
	       rounds, starget, ltarget, steps, seed, nfuncs);
	jit_quiesce(5000);
	boot_live = count_live_progs();
	snap("boot", "booted", boot_live);
	if (strchr(wls, 's'))
		prof = prof_warm(boot_live);
	snap("boot", "start", boot_live);
	if (strchr(wls, 'c')) {
		progress("churn", "start");
		err = churn("churn", n, rounds, seed) ?: err;
		workload_end("churn", boot_live);
	}
	if (strchr(wls, 'r')) {
		progress("random", "start");
		err = random_churn("random", ltarget, steps, seed, 0) ?: err;
		workload_end("random", boot_live);
	}
	if (strchr(wls, 'm')) {
		progress("mixed", "start");
		err = random_churn("mixed", ltarget, steps, seed, 8) ?: err;
		workload_end("mixed", boot_live);
	}
	if (strchr(wls, 's')) {
		progress("scale", "start");
		err = scale(starget, seed) ?: err;
		workload_end("scale", boot_live);
	}
	if (strchr(wls, 't')) {
		progress("tramp", "start");
		err = tramp("tramp", nfuncs, rounds) ?: err;
		workload_end("tramp", boot_live);
	}
	/* fragmented, without and with compaction: a peak above what each workload keeps */
	for (const char *w = "fg"; *w; w++) {
		unsigned int peak = ltarget * 11 / 10 > n ? ltarget * 11 / 10 : n;
		const char *wl = *w == 'f' ? "frag" : "fragc";

		if (!strchr(wls, *w))
			continue;
		progress(wl, "start");
		err = fragmented(wl, *w == 'g', peak, n, (rounds + 1) / 2, ltarget, steps / 2,
				 nfuncs, seed) ?: err;
		workload_end(wl, boot_live);
	}
	printf("B done err=%d elapsed_s=%.0f\n", err, (now_ms() - t0) / 1e3);
	return err ? 1 : 0;
}
