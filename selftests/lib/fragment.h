/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Free memory broken up so that no 2 MiB block is left free, as on a
 * machine that has run for weeks, in two kinds:
 *   FRAG_UNMOVABLE  kmod/fragment.ko holds a kernel page in every block:
 *                   nothing can put the blocks back together.
 *   FRAG_MOVABLE    this process holds a user page in every block: what
 *                   compaction, where the kernel has it, can move away.
 * Either takes every free 2 MiB block it can get, then gives back all
 * but one page in @keep of each, so that most memory stays free.
 */
#ifndef FRAGMENT_H
#define FRAGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum frag_kind { FRAG_UNMOVABLE, FRAG_MOVABLE };

struct frag {
	enum frag_kind kind;
	long blocks;		/* 2 MiB blocks taken and broken */
	bool loaded;		/* FRAG_UNMOVABLE: fragment.ko is in */
	char *map;		/* FRAG_MOVABLE: the pages held */
	size_t len, used;	/* its length, and how much of it the passes went through */
	char thp_was[32];	/* FRAG_MOVABLE: the THP mode to put back */
	unsigned int keep;	/* one page held in every @keep */
};

/* vm.extfrag_threshold and vm.compaction_proactiveness as they were */
struct compaction {
	char threshold[16], proactive[16];
};

#define FRAGMENT_KO "/selftests/fragment.ko"

/*
 * Free 2 MiB blocks (order 9 and up, counted in 2 MiB) in the zones a
 * kernel allocation takes from, all nodes (/proc/buddyinfo, DMA32 and
 * Normal): -1 when it cannot be read.
 */
long free_huge_blocks(void);
/* The same, counted in /proc/buddyinfo's text read from @f. */
long huge_blocks_in(FILE *f);
/* /proc/buddyinfo's lines for DMA32 and Normal, "  " before each, to stdout. */
void print_buddyinfo(void);

/* 0 or -errno; on an error nothing is held. */
int fragment(struct frag *f, enum frag_kind kind, unsigned int keep);
/*
 * Takes, the same way, the blocks that have come free since (reclaim
 * woken by failed order-9 requests frees slab and page cache, and can
 * complete a block the passes left alone): 0 or -errno.
 */
int fragment_again(struct frag *f);
/* Gives it all back; safe on a struct fragment() failed on. */
void fragment_release(struct frag *f);

/*
 * Direct compaction off for costly orders (vm.extfrag_threshold 1000) and
 * proactive compaction off, the values before saved in @c: memory stays as
 * fragmented as a kernel without CONFIG_COMPACTION sees it.  With it on,
 * compaction moves the pages the movable fragmenter holds, and either
 * kind's neighbours, and makes blocks as fast as they are taken.
 * 0, -ENOENT without CONFIG_COMPACTION (nothing changed), or -errno.
 */
int compaction_off(struct compaction *c);
/* Puts back what compaction_off() saved, once: 0 or -errno. */
int compaction_restore(struct compaction *c);

#endif
