// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "churn.h"
#include "packstats.h"
#include "progs.h"
#include "sys.h"

#define DIRECT_MAP_SECTION "Low Kernel Mapping"
#define IMAGE_SECTION "High Kernel Mapping"
#define SETTLE_MS 20000

int snapshot_take(struct mem_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->l2_splits = read_vmstat("direct_map_level2_splits");
	s->l3_splits = read_vmstat("direct_map_level3_splits");
	s->l2_collapses = read_vmstat("direct_map_level2_collapses");
	s->l3_collapses = read_vmstat("direct_map_level3_collapses");
	s->dm4k_kb = read_meminfo_kb("DirectMap4k");
	s->dm2m_kb = read_meminfo_kb("DirectMap2M");
	s->dm1g_kb = read_meminfo_kb("DirectMap1G");
	s->have_ptdump = !ptdump_stats_kernel(DIRECT_MAP_SECTION, 0, 0, &s->direct) &&
			 !ptdump_stats_kernel(MODULES_SECTION, 0, 0, &s->modules) &&
			 !ptdump_stats_kernel(IMAGE_SECTION, 0, 0, &s->image);
	s->live_progs = count_live_progs();
	s->packs = s->cached = s->fallbacks = -1;
	if (packstats_available()) {
		struct pack_stats st;

		if (packstats_read(&st))
			return -EIO;
		s->packs = st.packs;
		s->cached = st.cached;
		s->fallbacks = st.fallbacks;
		packstats_free(&st);
	}
	if (s->l2_splits < 0 || s->dm4k_kb < 0 || s->live_progs < 0)
		return -ENOENT;
	if (s->dm1g_kb < 0)	/* no gbpages: the line is absent */
		s->dm1g_kb = 0;
	return 0;
}

int churn_prepare(const struct churn_opts *o)
{
	int err = raise_nofile(o->count + 256) ?: jit_quiesce(SETTLE_MS);

	/* the Modules area as it is without packs kept empty for reuse */
	return err ?: o->keep_cache ? 0 : packs_uncache();
}

/*
 * With the pack cache kept, the Modules area may stay larger than before
 * the round (packs made above the earlier peak, now cached): wait for the
 * programs to go and the area to stay the same instead.
 */
static int settle(const struct churn_opts *o, const struct mem_snapshot *before)
{
	double deadline = now_ms() + SETTLE_MS;

	if (!o->keep_cache)
		return jit_settle(before->live_progs, &before->modules, SETTLE_MS);
	while (count_live_progs() != before->live_progs) {
		if (now_ms() > deadline)
			return -ETIMEDOUT;
		usleep(20 * 1000);
	}
	return jit_quiesce(SETTLE_MS);
}

struct worker {
	const struct churn_opts *o;
	unsigned int first, n;		/* its slice of fds[] */
	int *fds;
	unsigned int seed;
	unsigned int loaded;
	int err;
};

static void *load_slice(void *arg)
{
	struct worker *w = arg;
	unsigned int span = w->o->max_insns - w->o->min_insns + 1, i;

	for (i = 0; i < w->n; i++) {
		unsigned int insns = w->o->min_insns + rand_r(&w->seed) % span;
		int fd = load_filter(insns, 0);

		if (fd < 0) {
			w->err = fd;
			break;
		}
		w->fds[w->first + i] = fd;
		w->loaded++;
	}
	return NULL;
}

int churn_run_round(const struct churn_opts *o, unsigned int round,
		    const struct mem_snapshot *before, struct churn_round *r)
{
	unsigned int nthreads = o->threads ?: 1, i, per = o->count / nthreads;
	struct worker *w = calloc(nthreads, sizeof(*w));
	pthread_t *tid = calloc(nthreads, sizeof(*tid));
	int *fds = calloc(o->count, sizeof(*fds));
	double start;
	int err = 0;

	memset(r, 0, sizeof(*r));
	if (!w || !tid || !fds || o->min_insns < FILTER_MIN_INSNS || o->max_insns < o->min_insns) {
		err = w && tid && fds ? -EINVAL : -ENOMEM;
		goto out;
	}
	for (i = 0; i < o->count; i++)
		fds[i] = -1;
	start = now_ms();
	for (i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ .o = o, .fds = fds, .first = i * per,
					.n = i == nthreads - 1 ? o->count - i * per : per,
					.seed = o->seed * 7919 + round * 131 + i };
		if (pthread_create(&tid[i], NULL, load_slice, &w[i])) {
			w[i].err = -EAGAIN;
			tid[i] = 0;
		}
	}
	for (i = 0; i < nthreads; i++) {
		if (tid[i])
			pthread_join(tid[i], NULL);
		r->loaded += w[i].loaded;
		if (!r->err)
			r->err = w[i].err;
	}
	r->us_per_load = r->loaded ? (now_ms() - start) * 1e3 * nthreads / r->loaded : 0;
	for (i = 0; i < o->count; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	err = r->err;
	if (settle(o, before) && !err)
		err = -ETIMEDOUT;
	if (snapshot_take(&r->after) && !err)
		err = -ENOENT;
out:
	free(fds);
	free(tid);
	free(w);
	return err;
}

/* A pack count for the table: the number, or "-" without the statistics. */
static const char *pack_count(char *buf, size_t size, long long n)
{
	if (n < 0)
		return "-";
	snprintf(buf, size, "%lld", n);
	return buf;
}

void churn_print_header(FILE *f)
{
	fprintf(f, "%-8s %9s %9s %12s %12s %10s %10s %9s %9s %6s %8s %9s\n", "", "l2_split",
		"l3_split", "DirectMap4k", "DirectMap2M", "dmap_4K", "dmap_2M",
		"mod_4K", "mod_2M", "packs", "fallback", "us/load");
}

void churn_print_row(FILE *f, const char *label, const struct mem_snapshot *s, double us)
{
	char p[24], fb[24];

	fprintf(f, "%-8s %9lld %9lld %9lld kB %9lld kB %10llu %10llu %9llu %9llu %6s %8s %9.0f\n",
		label, s->l2_splits, s->l3_splits, s->dm4k_kb, s->dm2m_kb,
		(unsigned long long)pt_entries(&s->direct, PT_4K),
		(unsigned long long)pt_entries(&s->direct, PT_2M),
		(unsigned long long)pt_entries(&s->modules, PT_4K),
		(unsigned long long)pt_entries(&s->modules, PT_2M),
		pack_count(p, sizeof(p), s->packs), pack_count(fb, sizeof(fb), s->fallbacks), us);
}

void churn_print_delta(FILE *f, const struct mem_snapshot *a, const struct mem_snapshot *b)
{
	char p[24] = "-", fb[24] = "-";

	if (a->packs >= 0 && b->packs >= 0) {
		snprintf(p, sizeof(p), "%+lld", b->packs - a->packs);
		snprintf(fb, sizeof(fb), "%+lld", b->fallbacks - a->fallbacks);
	}

	fprintf(f, "%-8s %+9lld %+9lld %+9lld kB %+9lld kB %+10lld %+10lld %+9lld %+9lld %6s %8s\n",
		"delta", b->l2_splits - a->l2_splits, b->l3_splits - a->l3_splits,
		b->dm4k_kb - a->dm4k_kb, b->dm2m_kb - a->dm2m_kb,
		(long long)(pt_entries(&b->direct, PT_4K) - pt_entries(&a->direct, PT_4K)),
		(long long)(pt_entries(&b->direct, PT_2M) - pt_entries(&a->direct, PT_2M)),
		(long long)(pt_entries(&b->modules, PT_4K) - pt_entries(&a->modules, PT_4K)),
		(long long)(pt_entries(&b->modules, PT_2M) - pt_entries(&a->modules, PT_2M)),
		p, fb);
}

void churn_print_kv(FILE *f, const char *label, const struct mem_snapshot *s, double us)
{
	fprintf(f, "churn: %s l2_splits=%lld l3_splits=%lld DirectMap4k_kB=%lld "
		"DirectMap2M_kB=%lld dmap_4K=%llu dmap_2M=%llu mod_4K=%llu mod_2M=%llu",
		label, s->l2_splits, s->l3_splits, s->dm4k_kb,
		s->dm2m_kb, (unsigned long long)pt_entries(&s->direct, PT_4K),
		(unsigned long long)pt_entries(&s->direct, PT_2M),
		(unsigned long long)pt_entries(&s->modules, PT_4K),
		(unsigned long long)pt_entries(&s->modules, PT_2M));
	if (s->packs >= 0)
		fprintf(f, " packs=%lld cached=%lld fallbacks=%lld", s->packs, s->cached,
			s->fallbacks);
	fprintf(f, " us_per_load=%.0f\n", us);
}
