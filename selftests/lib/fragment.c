// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fragment.h"
#include "sys.h"

#define BLOCK		(2UL << 20)
#define BLOCK_ORDER	9
#define MAX_ORDER_SEEN	16
#define THP_ENABLED	"/sys/kernel/mm/transparent_hugepage/enabled"
#define SPLIT_THP	"/sys/kernel/debug/split_huge_pages"
#define MPOL_PREFERRED	1
#define FRAGMENT_PARAM(name)	"/sys/module/fragment/parameters/" name
#define EXTFRAG		"/proc/sys/vm/extfrag_threshold"
#define PROACTIVE	"/proc/sys/vm/compaction_proactiveness"
/*
 * Passes, PASS_WAIT_MS apart, while a free block shows: a whole block
 * can come free behind a pass, most likely through the reclaim and
 * compaction the failed order-9 requests wake (kswapd, kcompactd).
 */
#define PASSES		4
#define PASS_WAIT_MS	200
/* room in the movable mapping for blocks that come free later (fragment_again) */
#define AGAIN_BLOCKS	64

static bool kernel_zone(const char *zone)
{
	return !strcmp(zone, "DMA32") || !strcmp(zone, "Normal");
}

long free_huge_blocks(void)
{
	FILE *f = fopen("/proc/buddyinfo", "r");
	long blocks;

	if (!f)
		return -1;
	blocks = huge_blocks_in(f);
	fclose(f);
	return blocks;
}

long huge_blocks_in(FILE *f)
{
	char line[512], zone[32];
	long blocks = 0;
	int node, n, off, o;

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d, zone %31s%n", &node, zone, &off) != 2)
			continue;
		if (!kernel_zone(zone))
			continue;
		for (o = 0; o < MAX_ORDER_SEEN; o++) {
			long count;

			if (sscanf(line + off, "%ld%n", &count, &n) != 1)
				break;
			off += n;
			if (o >= BLOCK_ORDER)
				blocks += count << (o - BLOCK_ORDER);
		}
	}
	return blocks;
}

void print_buddyinfo(void)
{
	FILE *f = fopen("/proc/buddyinfo", "r");
	char line[512], zone[32];
	int node;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %d, zone %31s", &node, zone) == 2 && kernel_zone(zone))
			printf("  %s", line);
	fclose(f);
}

/* The one mode in brackets of "always [madvise] never". */
static int thp_mode(char *mode, size_t size)
{
	char buf[128], *a, *b;
	int err = read_file(THP_ENABLED, buf, sizeof(buf));

	if (err < 0)
		return err;
	a = strchr(buf, '[');
	b = a ? strchr(a, ']') : NULL;
	if (!b || (size_t)(b - a - 1) >= size)
		return -EINVAL;
	memcpy(mode, a + 1, b - a - 1);
	mode[b - a - 1] = 0;
	return 0;
}

/* Is the 2 MiB at @p (just touched) one transparent huge page? */
static bool is_thp(long long anon_huge_kb_before)
{
	return read_meminfo_kb("AnonHugePages") >= anon_huge_kb_before + (long long)(BLOCK >> 10);
}

/*
 * Takes the free 2 MiB blocks of @node as transparent huge pages of this
 * process, each split and given back but one page in f->keep, until a
 * fault gets none: the next block of @f's mapping from f->used on.
 */
static int break_node_blocks(struct frag *f, int node)
{
	unsigned long mask = 1UL << node;
	char cmd[96];
	size_t i;

	if (syscall(SYS_set_mempolicy, MPOL_PREFERRED, &mask, 8 * sizeof(mask) + 1))
		return -errno;
	for (; f->used + BLOCK <= f->len; f->used += BLOCK) {
		char *p = f->map + f->used;
		long long huge = read_meminfo_kb("AnonHugePages");

		p[0] = 1;
		if (!is_thp(huge)) {
			/* that fault took a 4K page: no block left on this node */
			munmap(p, BLOCK);
			f->used += BLOCK;
			return 0;
		}
		snprintf(cmd, sizeof(cmd), "%d,0x%lx,0x%lx", getpid(), (unsigned long)p,
			 (unsigned long)(p + BLOCK));
		if (write_file(SPLIT_THP, cmd))
			return -EIO;
		/*
		 * The first page of every f->keep stays; the rest of each run goes
		 * in one munmap (a page at a time took minutes under KASAN).
		 */
		for (i = 0; i < BLOCK / 4096; i += f->keep) {
			size_t run = BLOCK / 4096 - i < f->keep ? BLOCK / 4096 - i : f->keep;

			if (run > 1)
				munmap(p + (i + 1) * 4096, (run - 1) * 4096);
		}
		f->blocks++;
	}
	return -ENOMEM;
}

/* Maps room for every free block and, each pass, one more a node; 2 MiB aligned. */
static int movable_setup(struct frag *f)
{
	long long free_kb = read_meminfo_kb("MemFree");
	char *raw;
	int err;

	err = thp_mode(f->thp_was, sizeof(f->thp_was));
	if (err || free_kb < 0)
		return err ?: -EIO;
	err = write_file(THP_ENABLED, "always");
	if (err)
		return err;
	f->len = ((size_t)free_kb << 10) + ((PASSES + AGAIN_BLOCKS) * possible_nodes() + 1) * BLOCK;
	raw = mmap(NULL, f->len + BLOCK, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return -errno;
	f->map = (char *)(((uintptr_t)raw + BLOCK - 1) & ~(BLOCK - 1));
	if (f->map > raw)
		munmap(raw, f->map - raw);
	munmap(f->map + f->len, raw + BLOCK - f->map);
	return 0;
}

static int movable_pass(struct frag *f)
{
	int node, nodes = possible_nodes(), err = 0;

	for (node = 0; node < nodes && !err; node++)
		err = break_node_blocks(f, node);
	syscall(SYS_set_mempolicy, 0, NULL, 0);
	return err;
}

/*
 * Loads fragment.ko, which takes the blocks; later passes ask it to take
 * again.  It counts the blocks.
 */
static int unmovable_pass(struct frag *f)
{
	char buf[32];
	int err;

	if (f->loaded) {
		err = write_file(FRAGMENT_PARAM("take"), "1");
	} else {
		snprintf(buf, sizeof(buf), "keep=%u", f->keep);
		err = module_load(FRAGMENT_KO, buf);
		f->loaded = !err;
	}
	if (err)
		return err;
	err = read_file(FRAGMENT_PARAM("blocks"), buf, sizeof(buf));
	f->blocks = atol(buf);
	return err < 0 ? err : 0;
}

static int pass(struct frag *f)
{
	return f->kind == FRAG_MOVABLE ? movable_pass(f) : unmovable_pass(f);
}

int fragment(struct frag *f, enum frag_kind kind, unsigned int keep)
{
	int p, err;

	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->keep = keep;
	err = kind == FRAG_MOVABLE ? movable_setup(f) : 0;
	for (p = 0; p < PASSES && !err; p++) {
		if (p) {
			usleep(PASS_WAIT_MS * 1000);
			if (free_huge_blocks() <= 0)
				break;
		}
		err = pass(f);
	}
	if (err)
		fragment_release(f);
	return err;
}

int fragment_again(struct frag *f)
{
	long free = free_huge_blocks();

	if (free < 0)
		return -EIO;
	return free ? pass(f) : 0;
}

void fragment_release(struct frag *f)
{
	if (f->kind == FRAG_UNMOVABLE) {
		if (f->loaded)
			module_unload("fragment");
	} else {
		if (f->map)
			munmap(f->map, f->len);
		if (f->thp_was[0])
			write_file(THP_ENABLED, f->thp_was);
	}
	memset(f, 0, sizeof(*f));
}

int compaction_off(struct compaction *c)
{
	int err;

	memset(c, 0, sizeof(*c));
	if (read_file(EXTFRAG, c->threshold, sizeof(c->threshold)) < 0 ||
	    read_file(PROACTIVE, c->proactive, sizeof(c->proactive)) < 0) {
		c->threshold[0] = 0;
		return -ENOENT;
	}
	err = write_file(EXTFRAG, "1000") ?: write_file(PROACTIVE, "0");
	if (err)
		compaction_restore(c);
	return err;
}

int compaction_restore(struct compaction *c)
{
	int err;

	if (!c->threshold[0])
		return 0;
	err = write_file(EXTFRAG, c->threshold) ?: write_file(PROACTIVE, c->proactive);
	c->threshold[0] = 0;
	return err;
}
