/* SPDX-License-Identifier: GPL-2.0 */
/* Reads /sys/kernel/debug/page_tables/kernel (x86 ptdump). */
#ifndef PTDUMP_H
#define PTDUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PTDUMP_PATH "/sys/kernel/debug/page_tables/kernel"

/* One line: a run of entries of one level with the same protections. */
struct pt_range {
	uint64_t start, end;
	unsigned int shift;	/* 12 pte, 21 pmd, 30 pud, 39 p4d/pgd */
	bool present, rw, x;
};

enum pt_size { PT_4K, PT_2M, PT_1G, PT_NR_SIZES };

/* Present bytes mapped by each entry size, and how many of them are W+X. */
struct pt_stats {
	uint64_t bytes[PT_NR_SIZES];
	uint64_t wx_bytes;
};

typedef void (*pt_range_fn)(const char *section, const struct pt_range *r, void *ctx);

/* Calls @fn for every range line; returns 0, or -errno when unreadable or unparsable. */
int ptdump_walk(FILE *f, pt_range_fn fn, void *ctx);

/* Stats for one "---[ name ]---" section, or for [start, end) when section is NULL. */
int ptdump_stats(FILE *f, const char *section, uint64_t start, uint64_t end,
		 struct pt_stats *st);
/* Same, reading PTDUMP_PATH. */
int ptdump_stats_kernel(const char *section, uint64_t start, uint64_t end,
			struct pt_stats *st);

static inline uint64_t pt_entries(const struct pt_stats *st, enum pt_size sz)
{
	return st->bytes[sz] >> (12 + 9 * sz);
}

static inline uint64_t pt_mapped(const struct pt_stats *st)
{
	return st->bytes[PT_4K] + st->bytes[PT_2M] + st->bytes[PT_1G];
}

#endif
