/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pack allocator's statistics, /sys/kernel/debug/bpf/prog_pack (added
 * by the series; a kernel without it is not the patched kernel).
 */
#ifndef PACKSTATS_H
#define PACKSTATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PACKSTATS_PATH "/sys/kernel/debug/bpf/prog_pack"
#define PACK_MAX 512

struct pack_info {
	uint64_t addr;
	unsigned int mapped_shift;	/* 21 for 2M, 12 for 4K */
	unsigned int chunks, nr_used, nr_free, largest_free;
	unsigned char *used;		/* used[c]: chunk c is in use (malloced, chunks long) */
};

struct pack_stats {
	long long packs, huge_packs, fallbacks, oversized, bytes_in_use, chunk_size, pack_size;
	/* trampoline, struct_ops and dispatcher images: their number, their chunks' bytes */
	long long images, image_bytes;
	/* empty huge packs kept for reuse (counted in packs), and how many are kept always */
	long long cached, reserve;
	int npacks;
	struct pack_info pack[PACK_MAX];
};

bool packstats_available(void);
/* 0, or -errno when the file is missing or does not parse. */
int packstats_read(struct pack_stats *st);
int packstats_parse(FILE *f, struct pack_stats *st);
void packstats_free(struct pack_stats *st);
/*
 * Reads the statistics into @st until @done(@st, @arg) holds or @ms pass:
 * frees are deferred (RCU, a workqueue, RCU tasks).  0 with the last read
 * left in @st, done or not (the caller asserts on it), or -errno.
 */
int packstats_wait(struct pack_stats *st, bool (*done)(const struct pack_stats *st, void *arg),
		   void *arg, int ms);

/* The pack of @st that holds @addr: its index in st->pack[], or -1. */
int pack_of(const struct pack_stats *st, uint64_t addr);

/* Parses a bitmap list ("0-11,40-63") into @map of @n entries: 0 or -EINVAL. */
int parse_bitmap_list(const char *list, unsigned char *map, unsigned int n);

#endif
