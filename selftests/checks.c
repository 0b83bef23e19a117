// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checks.h"
#include "lib/churn.h"
#include "lib/kcore.h"
#include "lib/progs.h"
#include "lib/ptdump.h"
#include "lib/sys.h"
#include "test_runner.h"

bool expect_patched(void)
{
	return strstr(test__args(), "expect-patched");
}

void patched_missing(const char *file, int line, const char *what)
{
	test__report(false, file, line, "expect-patched", "patched kernel: %s missing", what);
}

int vmallocinfo_line(uint64_t addr, char *line, size_t size)
{
	char needle[32];
	FILE *f = fopen("/proc/vmallocinfo", "r");
	int err = -ENOENT;

	if (!f)
		return -errno;
	snprintf(needle, sizeof(needle), "0x%016" PRIx64 "-", addr);
	while (err && fgets(line, size, f))
		if (!strncmp(line, needle, strlen(needle)))
			err = 0;
	fclose(f);
	return err;
}

long long vmallocinfo_size(uint64_t addr)
{
	char line[512];
	long long size;

	if (vmallocinfo_line(addr, line, sizeof(line)))
		return -1;
	return sscanf(line, "%*s %lld", &size) == 1 ? size : 0;
}

bool in_vmallocinfo(uint64_t addr)
{
	return vmallocinfo_size(addr) >= 0;
}

/* How one range is mapped: at its page size, read-only and executable, in Modules? */
struct map_check {
	uint64_t start, end;
	unsigned int shift;
	uint64_t bytes;
	bool bad;
};

/* A ptdump walk: W+X anywhere, and how each of @n ranges is mapped. */
struct map_walk {
	struct map_check *c;
	unsigned int n;
	int wx;
};

static void check_range(const char *section, const struct pt_range *r, struct map_check *c)
{
	if (r->end <= c->start || r->start >= c->end)
		return;
	if (!r->present || r->rw || !r->x || r->shift != c->shift || strcmp(section, MODULES_SECTION)) {
		printf("0x%" PRIx64 "-0x%" PRIx64 " in \"%s\": present %d rw %d x %d level %u\n",
		       r->start, r->end, section, r->present, r->rw, r->x, r->shift);
		c->bad = true;
	}
	c->bytes += (r->end < c->end ? r->end : c->end) - (r->start > c->start ? r->start : c->start);
}

static void walk_range(const char *section, const struct pt_range *r, void *data)
{
	struct map_walk *w = data;
	unsigned int i;

	if (r->present && r->rw && r->x) {
		printf("W+X: 0x%" PRIx64 "-0x%" PRIx64 " in \"%s\"\n", r->start, r->end, section);
		w->wx++;
	}
	for (i = 0; i < w->n; i++)
		check_range(section, r, &w->c[i]);
}

/* One walk of the kernel page tables: the W+X mappings found, or -errno. */
static int walk_mappings(struct map_check *c, unsigned int n)
{
	struct map_walk w = { c, n };
	FILE *f = fopen(PTDUMP_PATH, "r");
	int err;

	if (!f)
		return -errno;
	err = ptdump_walk(f, walk_range, &w);
	fclose(f);
	return err ?: w.wx;
}

void check_mapping(uint64_t start, long long size, unsigned int shift)
{
	struct map_check c = { start, start + size, shift };
	int wx = walk_mappings(&c, size ? 1 : 0);

	if (!ASSERT_GE(wx, 0, "walk " PTDUMP_PATH))
		return;
	if (size) {
		ASSERT_EQ(c.bytes, size, "whole pack mapped");
		ASSERT_FALSE(c.bad, "pack mapped ro x in Modules at its page size");
	}
	ASSERT_EQ(wx, 0, "no W+X mapping in the kernel");
}

/* Bytes of free chunks that are not the trap instruction, each of the first 5 printed; -1 if unreadable. */
static long long bad_traps(const struct pack_info *p, long long size, long long chunk_size)
{
	unsigned char *mem = malloc(size);
	long long i, bad = 0;
	unsigned int c;

	if (!mem || kcore_read(p->addr, mem, size)) {
		printf("pack 0x%" PRIx64 ": cannot read it through /proc/kcore\n", p->addr);
		free(mem);
		return -1;
	}
	for (c = 0; c < size / chunk_size; c++) {
		if (p->used[c])
			continue;
		for (i = c * chunk_size; i < (c + 1) * chunk_size; i++) {
			if (mem[i] != TRAP && bad++ < 5)
				printf("pack 0x%" PRIx64 " chunk %u: byte %lld is 0x%02x\n",
				       p->addr, c, i, mem[i]);
		}
	}
	free(mem);
	return bad;
}

/*
 * What is wrong with the pack @p, each fault printed: not a vmalloc area,
 * not mapped read-only and executable at its page size in Modules (@c, from
 * the walk), a free byte that is not int3.  0 if nothing.
 */
static int pack_faults(const struct pack_info *p, const struct map_check *c,
		       const struct pack_stats *st)
{
	long long traps;
	int faults = 0;

	if (!in_vmallocinfo(p->addr)) {
		printf("pack 0x%" PRIx64 ": not in /proc/vmallocinfo\n", p->addr);
		faults++;
	}
	if (c->bytes != (uint64_t)st->pack_size || c->bad) {
		printf("pack 0x%" PRIx64 ": %" PRIu64 " of %lld bytes mapped%s\n", p->addr,
		       c->bytes, st->pack_size, c->bad ? ", not all ro x in Modules at its page size" : "");
		faults++;
	}
	traps = bad_traps(p, st->pack_size, st->chunk_size);
	if (traps)
		printf("pack 0x%" PRIx64 ": %lld free bytes are not int3\n", p->addr, traps);
	return faults + !!traps;
}

/*
 * Is a pack still at @addr?  An empty pack the kernel keeps for reuse may
 * be freed at any time: by the idle timer, the shrinker, a vmap purge.
 */
static bool pack_still_there(uint64_t addr)
{
	struct pack_stats now;
	bool there;

	if (packstats_read(&now))
		return true;
	there = pack_of(&now, addr) >= 0;
	packstats_free(&now);
	return there;
}

void check_all_packs(const struct pack_stats *st, const char *when)
{
	struct map_check *map = calloc(st->npacks ?: 1, sizeof(*map));
	int i, wx;

	printf("%s: %lld packs (%lld huge), %lld bytes in use\n", when, st->packs,
	       st->huge_packs, st->bytes_in_use);
	if (!ASSERT_TRUE(map, "calloc"))
		return;
	/* one walk for all of them: a walk takes a second or more on a big guest under TCG */
	for (i = 0; i < st->npacks; i++)
		map[i] = (struct map_check){ st->pack[i].addr, st->pack[i].addr + st->pack_size,
					     st->pack[i].mapped_shift };
	wx = walk_mappings(map, st->npacks);
	if (!ASSERT_GE(wx, 0, "walk " PTDUMP_PATH)) {
		free(map);
		return;
	}
	ASSERT_EQ(wx, 0, "no W+X mapping in the kernel");
	for (i = 0; i < st->npacks; i++) {
		const struct pack_info *p = &st->pack[i];
		unsigned int c, used = 0;
		int faults;

		for (c = 0; c < p->chunks; c++)
			used += p->used[c];
		ASSERT_EQ(used, p->nr_used, "used chunks: count vs list");
		ASSERT_EQ(p->nr_used + p->nr_free, p->chunks, "used + free chunks");
		ASSERT_LE(p->largest_free, p->nr_free, "largest free run");
		faults = pack_faults(p, &map[i], st);
		if (faults && !p->nr_used && !pack_still_there(p->addr)) {
			printf("pack 0x%" PRIx64 ": empty, kept for reuse, and freed while it was checked\n",
			       p->addr);
			continue;
		}
		ASSERT_EQ(faults, 0, "pack in /proc/vmallocinfo, mapped ro x at its page size, "
			  "free bytes int3 (0xcc)");
	}
	free(map);
}

void check_invariants(const char *when)
{
	struct pack_stats st;

	if (!PATCHED_HAS(packstats_available(), PACKSTATS_PATH)) {
		check_mapping(0, 0, 0);
		return;
	}
	if (!ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH))
		return;
	check_all_packs(&st, when);
	packstats_free(&st);
}

/*
 * Areas in the module range, where x86 puts executable memory: packs,
 * larger programs, trampolines, modules.  The vmalloc areas above the start
 * of the kernel image's mapping are those; their callers are the callers
 * of module_alloc(), not module_alloc() itself, so the address tells.
 * Freed areas whose address space vmalloc has not purged yet are listed
 * as "unpurged vm_area": those are not counted.
 */
#define KERNEL_MAP_START 0xffffffff80000000ULL

static int count_exec_areas(bool show)
{
	FILE *f = fopen("/proc/vmallocinfo", "r");
	unsigned long long start;
	char line[512];
	int n = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* freed, its address space not yet purged (lazy TLB flush): gone */
		if (sscanf(line, "0x%llx-", &start) != 1 || start < KERNEL_MAP_START ||
		    strstr(line, "unpurged vm_area"))
			continue;
		n++;
		if (show)
			printf("module range: %s", line);
	}
	fclose(f);
	return n;
}

/* bpf_jit_current, the JIT budget charged, read through kallsyms and kcore. */
static int read_jit_charged(long long *charged)
{
	static uint64_t addr;

	if (!addr)
		addr = kallsyms_addr("bpf_jit_current");
	if (!addr)
		return -ENOENT;
	return kcore_read(addr, charged, sizeof(*charged));
}

int leak_state_read(struct leak_state *s)
{
	long long cached = 0;
	struct pack_stats st;
	int err;

	memset(s, 0, sizeof(*s));
	s->progs = count_live_progs();
	if (s->progs < 0)
		return s->progs;
	if (PATCHED_HAS(packstats_available(), PACKSTATS_PATH)) {
		err = packstats_read(&st);
		if (err)
			return err;
		/* packs kept empty for reuse are not left behind: they go under pressure */
		s->packs = st.packs - st.cached;
		cached = st.cached;
		s->bytes_in_use = st.bytes_in_use;
		s->oversized = st.oversized;
		s->images = st.images;
		packstats_free(&st);
	} else if (expect_patched()) {
		return -ENOENT;
	}
	s->exec_areas = count_exec_areas(false);
	if (s->exec_areas < 0)
		return s->exec_areas;
	s->exec_areas -= cached;
	return read_jit_charged(&s->jit_charged);
}

static bool leak_state_eq(const struct leak_state *a, const struct leak_state *b)
{
	return a->progs == b->progs && a->packs == b->packs && a->bytes_in_use == b->bytes_in_use &&
	       a->oversized == b->oversized && a->images == b->images &&
	       a->exec_areas == b->exec_areas &&
	       a->jit_charged == b->jit_charged;
}

bool check_no_leak(const struct leak_state *before, const char *when)
{
	double deadline = now_ms() + SETTLE_MS;
	struct leak_state now;
	bool ok = true;

	do {
		if (!ASSERT_OK(leak_state_read(&now), "read the leak state"))
			return false;
		if (leak_state_eq(&now, before))
			return true;
		usleep(50 * 1000);
	} while (now_ms() < deadline);
	printf("%s: state did not come back\n", when);
	ok &= ASSERT_EQ(now.progs, before->progs, "live programs");
	ok &= ASSERT_EQ(now.packs, before->packs, "packs");
	ok &= ASSERT_EQ(now.bytes_in_use, before->bytes_in_use, "bytes in packs");
	ok &= ASSERT_EQ(now.oversized, before->oversized, "programs larger than a pack");
	ok &= ASSERT_EQ(now.images, before->images, "trampoline and struct_ops images in packs");
	if (!ASSERT_EQ(now.exec_areas, before->exec_areas, "module-range areas in /proc/vmallocinfo")) {
		count_exec_areas(true);
		ok = false;
	}
	ok &= ASSERT_EQ(now.jit_charged, before->jit_charged, "JIT budget charged (bpf_jit_current)");
	return ok;
}

struct images_want {
	const struct leak_state *base;
	long long n, charged;
	int err;
};

/* @n images more than @base, and the JIT budget charged what the packs hold. */
static bool images_settled(const struct pack_stats *st, void *arg)
{
	struct images_want *w = arg;

	w->err = read_jit_charged(&w->charged);
	return !w->err && st->images == w->base->images + w->n &&
	       w->charged - w->base->jit_charged == st->bytes_in_use - w->base->bytes_in_use;
}

bool check_images(const struct leak_state *base, long long n, struct pack_stats *st,
		  const char *when)
{
	struct images_want want = { .base = base, .n = n };
	struct pack_stats own, *keep = st;
	bool ok = true;

	if (!st)
		st = &own;
	if (!ASSERT_OK(packstats_wait(st, images_settled, &want, SETTLE_MS), "pack statistics"))
		return false;
	ok &= ASSERT_EQ(st->images - base->images, n, "images in packs");
	if (ASSERT_OK(want.err, "bpf_jit_current"))
		ok &= ASSERT_EQ(want.charged - base->jit_charged,
				st->bytes_in_use - base->bytes_in_use,
				"the JIT budget charged what the packs hold");
	check_all_packs(st, when);
	if (!keep)
		packstats_free(st);
	return ok;
}

void check_direct_map(const struct mem_snapshot *before, const struct mem_snapshot *after)
{
	struct mem_snapshot now;

	if (!after) {
		if (!ASSERT_OK(snapshot_take(&now), "snapshot after"))
			return;
		after = &now;
	}
	printf("direct map: splits %lld+%lld -> %lld+%lld, DirectMap4k %lld -> %lld kB, "
	       "4K entries %llu -> %llu\n", before->l2_splits, before->l3_splits,
	       after->l2_splits, after->l3_splits, before->dm4k_kb, after->dm4k_kb,
	       (unsigned long long)pt_entries(&before->direct, PT_4K),
	       (unsigned long long)pt_entries(&after->direct, PT_4K));
	if (!PATCHED_HAS(packstats_available(), PACKSTATS_PATH) ||
	    !expect_huge_vmalloc(test__args()))
		return;
	ASSERT_EQ(after->l2_splits, before->l2_splits, "direct_map_level2_splits delta");
	ASSERT_EQ(after->l3_splits, before->l3_splits, "direct_map_level3_splits delta");
	ASSERT_LE(after->dm4k_kb, before->dm4k_kb, "DirectMap4k");
	ASSERT_LE(pt_entries(&after->direct, PT_4K), pt_entries(&before->direct, PT_4K),
		  "4K direct-map entries (ptdump)");
}

void check_healed(const struct mem_snapshot *before, const struct mem_snapshot *after,
		  const char *what)
{
	long long image_4k = (long long)pt_entries(&after->image, PT_4K) -
			     (long long)pt_entries(&before->image, PT_4K);

	printf("%s, all freed: DirectMap4k %lld -> %lld kB, live splits 2M %lld -> %lld, "
	       "1G %lld -> %lld, 4K entries %llu -> %llu (kernel image's alias %+lld)\n", what,
	       before->dm4k_kb, after->dm4k_kb, live_l2(before), live_l2(after), live_l3(before),
	       live_l3(after), (unsigned long long)pt_entries(&before->direct, PT_4K),
	       (unsigned long long)pt_entries(&after->direct, PT_4K), image_4k);
	if (!HEALS_DIRECT_MAP(after))
		return;
	ASSERT_LE(pt_entries(&after->direct, PT_4K), pt_entries(&before->direct, PT_4K),
		  "ptdump's 4K direct-map entries back where they began");
	ASSERT_LE(live_l3(after), live_l3(before), "live 1G splits back where they began");
	/*
	 * The counters count the kernel image's high mapping too, which is not
	 * healed: a page of the image's physical range (freed init memory) in
	 * a read-only area has its alias there made read-only as well, and
	 * the reset on free leaves that alias alone.  Only that may grow.
	 */
	if (image_4k < 0)
		image_4k = 0;
	ASSERT_LE(after->dm4k_kb - before->dm4k_kb, image_4k * 4,
		  "DirectMap4k back where it began, but for the kernel image's alias");
	ASSERT_LE(live_l2(after) - live_l2(before), image_4k / 512,
		  "live 2M splits back where they began, but for the kernel image's alias");
}

bool fault_available(const char *attr)
{
	char path[128];

	snprintf(path, sizeof(path), FAULT_DIR "%s/probability", attr);
	return !access(path, W_OK);
}

int fault_setup(const char *attr, enum fault_mode mode, int min_order)
{
	char order[16], path[128];
	const char *const knobs[][2] = {
		{ "ignore-gfp-wait", mode == FAULT_OFF ? "Y" : "N" },
		{ "ignore-gfp-highmem", mode == FAULT_OFF ? "Y" : "N" },	/* vmalloc asks for highmem */
		{ "min-order", mode == FAULT_OFF ? "1" : order },
		/*
		 * FAULT_NTH: every slab fault's stack trace, for the test to
		 * read; a page fault's notice alone (the fallback count tells
		 * where it hit), which keeps the console quieter
		 */
		{ "verbose", mode == FAULT_ALWAYS ? "0" : strcmp(attr, FAIL_PAGE_ALLOC) ? "2" : "1" },
		{ "verbose_ratelimit_interval_ms", mode == FAULT_NTH ? "0" : "5000" },
		{ "interval", "1" },
		{ "times", mode == FAULT_OFF ? "1" : "-1" },
		{ "probability", mode == FAULT_ALWAYS ? "100" : "0" },
	};
	size_t i;
	int err;

	snprintf(order, sizeof(order), "%d", min_order);
	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		snprintf(path, sizeof(path), FAULT_DIR "%s/%s", attr, knobs[i][0]);
		if (access(path, F_OK))	/* failslab has no highmem or order knobs */
			continue;
		err = write_file(path, knobs[i][1]);
		if (err)
			return err;
	}
	return 0;
}

int run_as_nobody(void (*fn)(void *res), void *res, size_t len, pid_t *keep)
{
	int p[2], err = -EIO;
	pid_t pid;

	if (pipe(p))
		return -errno;
	pid = fork();
	if (!pid) {
		close(p[0]);
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(1);
		fn(res);
		if (write(p[1], res, len) != (ssize_t)len)
			_exit(1);
		while (keep)
			pause();
		_exit(0);
	}
	close(p[1]);
	if (pid > 0 && read(p[0], res, len) == (ssize_t)len)
		err = 0;
	close(p[0]);
	if (pid > 0 && keep && !err)
		*keep = pid;
	else if (pid > 0)
		waitpid(pid, NULL, 0);
	return err;
}

bool ro_blocks_on(void)
{
	bool there = PATCHED_HAS(!access(RO_ALIAS_PATH, R_OK), RO_ALIAS_PATH);

	return there && read_key(RO_ALIAS_PATH, "enabled") == 1;
}

void check_exec_alias(const char *what, long long min)
{
	long long pages, rw, large, unmapped;
	char key[32];

	if (!ASSERT_OK(write_file(EXEC_PAGES_CTL, "alias"), "exec_pages alias"))
		return;
	snprintf(key, sizeof(key), "%s_pages", what);
	pages = read_key(EXEC_PAGES_CTL, key);
	snprintf(key, sizeof(key), "%s_rw", what);
	rw = read_key(EXEC_PAGES_CTL, key);
	snprintf(key, sizeof(key), "%s_large", what);
	large = read_key(EXEC_PAGES_CTL, key);
	snprintf(key, sizeof(key), "%s_unmapped", what);
	unmapped = read_key(EXEC_PAGES_CTL, key);
	printf("%s pages %lld: writable alias %lld, on a 2M/1G entry %lld, unmapped %lld\n",
	       what, pages, rw, large, unmapped);
	ASSERT_GE(pages, min, "pages looked at");
	ASSERT_EQ(rw, 0, "no writable direct-map alias");
	ASSERT_EQ(unmapped, 0, "every alias mapped");
}
