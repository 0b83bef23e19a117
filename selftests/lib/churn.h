/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Program churn: load many socket filters of mixed sizes, free them all,
 * and record what the direct map and the Modules area look like after.
 */
#ifndef CHURN_H
#define CHURN_H

#include <stdbool.h>
#include <stdio.h>

#include "progs.h"
#include "ptdump.h"

struct churn_opts {
	unsigned int count;		/* programs per round, all live at once */
	unsigned int rounds;
	unsigned int min_insns, max_insns;
	unsigned int threads;
	unsigned int seed;
	bool keep_cache;		/* leave the packs kept empty for reuse alone */
};

#define CHURN_OPTS_DEFAULT { .count = 5000, .rounds = 8, .min_insns = FILTER_MIN_INSNS, \
			     .max_insns = 400, .threads = 1, .seed = 1 }

/* The counters a churn is judged by. */
struct mem_snapshot {
	long long l2_splits, l3_splits;		/* /proc/vmstat direct_map_level{2,3}_splits */
	/* direct_map_level{2,3}_collapses; -1 on a kernel that never collapses */
	long long l2_collapses, l3_collapses;
	long long dm4k_kb, dm2m_kb, dm1g_kb;	/* /proc/meminfo DirectMap{4k,2M,1G} */
	bool have_ptdump;
	struct pt_stats direct;			/* ptdump "Low Kernel Mapping" */
	struct pt_stats modules;		/* ptdump "Modules" */
	struct pt_stats image;			/* ptdump "High Kernel Mapping" */
	int live_progs;
	/* the pack statistics (patched kernel): packs, cached ones, 4K fallbacks; -1 without */
	long long packs, cached, fallbacks;
};

struct churn_round {
	unsigned int loaded;
	int err;			/* first load error, 0 if none */
	double us_per_load;
	struct mem_snapshot after;	/* after the round's programs were freed and settled */
};

/* 0, or -errno when the counters every churn needs are missing. */
int snapshot_take(struct mem_snapshot *s);

/* Does the kernel collapse split direct-map entries again (patch 21)? */
static inline bool heals_direct_map(const struct mem_snapshot *s)
{
	return s->l2_collapses >= 0;
}

/* Entries split and still split: splits minus collapses (splits where none) */
static inline long long live_l2(const struct mem_snapshot *s)
{
	return s->l2_splits - (heals_direct_map(s) ? s->l2_collapses : 0);
}

static inline long long live_l3(const struct mem_snapshot *s)
{
	return s->l3_splits - (heals_direct_map(s) ? s->l3_collapses : 0);
}
/*
 * Raise RLIMIT_NOFILE so that @count programs can be live at once, wait
 * for frees still in flight and, unless @o->keep_cache, reclaim the packs
 * kept for reuse: call before the "before" snapshot.
 */
int churn_prepare(const struct churn_opts *o);
/* One round; returns 0, the first load error, or -ETIMEDOUT if memory did not settle. */
int churn_run_round(const struct churn_opts *o, unsigned int round,
		    const struct mem_snapshot *before, struct churn_round *r);

/* The table: a header, a row per snapshot, and a delta row. */
void churn_print_header(FILE *f);
void churn_print_row(FILE *f, const char *label, const struct mem_snapshot *s, double us);
void churn_print_delta(FILE *f, const struct mem_snapshot *a, const struct mem_snapshot *b);
/* "churn: key=value ..." for the host to put two kernels side by side. */
void churn_print_kv(FILE *f, const char *label, const struct mem_snapshot *s, double us);

#endif
