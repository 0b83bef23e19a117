// SPDX-License-Identifier: GPL-2.0
/*
 * Seeded random loads and frees, with failures injected, and the
 * allocator's invariants checked after every step (the costly ones every
 * 64 and 2048 steps), and every fourth allocation checked against a best
 * fit worked out from its pack's bitmap.  Now and then memory pressure
 * (the shrinker) or time (the idle work) takes cached packs away, and
 * the reserve changes.
 * -a "steps=N seed=S";
 * make test runs a bounded 20,000 steps, make fuzz a long run.
 */
#include <stdlib.h>

#include "../lib.h"
#include "../../selftests/test_runner.h"

#define MAX_LIVE 3000

static struct prog {
	struct bpf_binary_header *hdr;
	u32 size;
} live[MAX_LIVE];
static int nlive;
static unsigned long live_chunks, live_oversized;	/* kept as programs come and go */

static void account(const struct prog *p, int sign)
{
	if (p->size > pack_size)
		live_oversized += sign;
	else
		live_chunks += sign * (long)prog_chunks(p->size);
}

static unsigned long arg(const char *name, unsigned long def)
{
	const char *p = strstr(test__args(), name);

	return p && p[strlen(name)] == '=' ? strtoul(p + strlen(name) + 1, NULL, 0) : def;
}

/* Each live program inside one pack, its chunks marked used. */
static bool check_programs(unsigned long step)
{
	struct pack_view v;
	int i, j, idx;

	for (i = 0; i < nlive; i++) {
		struct prog *p = &live[i];

		if (p->size > pack_size)
			continue;
		idx = pack_index_of(p->hdr);
		if (idx < 0 || pack_index_of((char *)p->hdr + p->size - 1) != idx) {
			printf("step %lu: program %p+%u not inside one pack\n", step, p->hdr, p->size);
			return false;
		}
		pack_get(idx, &v);
		for (j = 0; j < (int)prog_chunks(p->size); j++) {
			unsigned long c = ((char *)p->hdr - (char *)v.ptr) / BPF_PROG_CHUNK_SIZE + j;

			if (!(v.bitmap[c / BITS_PER_LONG] & BIT(c % BITS_PER_LONG))) {
				printf("step %lu: chunk %lu of a live program is free\n", step, c);
				return false;
			}
		}
	}
	return true;
}

static bool chunk_used(const struct pack_view *v, unsigned long c)
{
	return v->bitmap[c / BITS_PER_LONG] & BIT(c % BITS_PER_LONG);
}

/*
 * @p, just allocated, took the best fit of its pack: the first of the
 * shortest free runs that hold it, its own chunks counted as free.
 */
static bool check_best_fit(unsigned long step, const struct prog *p)
{
	unsigned long pos, n = prog_chunks(p->size), b, e, best = pack_chunks, best_len = ~0UL;
	struct pack_view v;

	pack_get(pack_index_of(p->hdr), &v);
	pos = ((char *)p->hdr - (char *)v.ptr) / BPF_PROG_CHUNK_SIZE;
	for (b = 0; b < pack_chunks; b = e) {
		while (b < pack_chunks && chunk_used(&v, b) && (b < pos || b >= pos + n))
			b++;
		for (e = b; e < pack_chunks && (!chunk_used(&v, e) || (e >= pos && e < pos + n)); e++)
			;
		if (e - b >= n && e - b < best_len) {
			best = b;
			best_len = e - b;
		}
	}
	if (best != pos)
		printf("step %lu: %lu chunks went to chunk %lu, the best fit is %lu (a run of %lu)\n",
		       step, n, pos, best, best_len);
	return best == pos;
}

/* @p, just allocated in a 4K pack, had no room in any huge pack. */
static bool check_prefers_huge(unsigned long step, const struct prog *p)
{
	unsigned long n = prog_chunks(p->size), b, e;
	struct pack_view v;
	int i;

	pack_get(pack_index_of(p->hdr), &v);
	if (v.huge)
		return true;
	for (i = 0; pack_get(i, &v) == 0; i++) {
		if (!v.huge)
			continue;
		for (b = 0; b < pack_chunks; b = e) {
			while (b < pack_chunks && chunk_used(&v, b))
				b++;
			for (e = b; e < pack_chunks && !chunk_used(&v, e); e++)
				;
			if (e - b >= n) {
				printf("step %lu: %lu chunks went to a 4K pack, huge pack %d had %lu free\n",
				       step, n, i, e - b);
				return false;
			}
		}
	}
	return true;
}

/* Every free chunk of every pack is traps. */
static bool check_traps(unsigned long step)
{
	struct pack_view v;
	int i, j;

	for (i = 0; pack_get(i, &v) == 0; i++)
		for (j = 0; j < (int)pack_chunks; j++)
			if (!(v.bitmap[j / BITS_PER_LONG] & BIT(j % BITS_PER_LONG)) &&
			    !all_trap((char *)v.ptr + j * BPF_PROG_CHUNK_SIZE, BPF_PROG_CHUNK_SIZE)) {
				printf("step %lu: free chunk %d of pack %d is not traps\n", step, j, i);
				return false;
			}
	return true;
}

/*
 * After every step: each pack's free count matches its bitmap, the used
 * chunks of all packs add up to the live
 * programs' (with every live chunk marked used, as check_programs() sees
 * now and then, no two programs share a chunk), the empty packs kept are
 * huge and as many as the cache counts, and no area, pack struct or
 * warning is unaccounted for.
 */
static bool check(unsigned long step)
{
	unsigned long used = 0, empty = 0;
	struct pack_view v;
	int i;

	for (i = 0; pack_get(i, &v) == 0; i++) {
		if (!v.used && !v.huge) {
			printf("step %lu: pack %d is empty, 4K, and kept\n", step, i);
			return false;
		}
		empty += !v.used;
		if (v.used + v.free != pack_chunks) {
			printf("step %lu: pack %d counts %u free, its bitmap %lu\n", step, i,
			       v.free, pack_chunks - v.used);
			return false;
		}
		used += v.used;
	}
	if (empty != pack_cached_count()) {
		printf("step %lu: %lu empty packs, %lu cached\n", step, empty, pack_cached_count());
		return false;
	}
	if (used != live_chunks || live_oversized != pack_oversized_count() ||
	    shim.areas != i + (long)live_oversized || shim.kzallocs != i || shim.warnings) {
		printf("step %lu: chunks %lu vs %lu, oversized %lu vs %lu, areas %ld, structs %ld "
		       "for %d packs, %ld warnings\n", step, live_chunks, used, live_oversized,
		       pack_oversized_count(), shim.areas, shim.kzallocs, i, shim.warnings);
		return false;
	}
	return (step % 64 || check_programs(step)) && (step % 2048 || check_traps(step));
}

void test_property(void)
{
	unsigned long steps = arg("steps", 20000), step;
	unsigned int seed = arg("seed", 1);
	int i;

	shim_reset();
	nlive = 0;
	live_chunks = live_oversized = 0;
	printf("%lu steps, seed %u\n", steps, seed);
	for (step = 0; step < steps; step++) {
		unsigned int r = rand_r(&seed) % 1000;

		if (r < 520 && nlive < MAX_LIVE) {
			u32 size = r < 2 ? pack_size + rand_r(&seed) % (3 * pack_size) :
				   8 + rand_r(&seed) % (r < 100 ? 64 * 1024 : 4096);
			bool classic = rand_r(&seed) % 4 == 0;

			/* now and then the next new pack or area cannot be had */
			if (r % 50 == 7)
				*(rand_r(&seed) % 2 ? &shim.fail_huge : &shim.fail_set_memory) = 0;
			if (r % 97 == 3)
				shim.fail_kzalloc = 0;
			if (r % 89 == 5)
				shim.fail_xa_store = 0;
			live[nlive].hdr = prog_alloc(size, classic);
			live[nlive].size = round_up(size, BPF_PROG_CHUNK_SIZE);
			if (live[nlive].hdr) {
				account(&live[nlive++], 1);
				if (size <= pack_size && step % 4 == 0 &&
				    !ASSERT_TRUE(check_best_fit(step, &live[nlive - 1]), "best fit"))
					break;
				if (size <= pack_size && step % 4 == 1 &&
				    !ASSERT_TRUE(check_prefers_huge(step, &live[nlive - 1]), "huge first"))
					break;
			}
			shim.fail_huge = shim.fail_set_memory = shim.fail_kzalloc = -1;
			shim.fail_xa_store = -1;
		} else if (r >= 995) {
			jiffies += rand_r(&seed) % (300 * HZ);
			if (r == 999) {
				shim.pages_short = rand_r(&seed) % 4;
				shrink(1 + rand_r(&seed) % (3 * pack_size / PAGE_SIZE));
			}
			else if (r == 998)
				pack_set_reserve(rand_r(&seed) % 2 ? "0" : "3");
			else
				shim_run_due_works();
		} else if (nlive) {
			i = rand_r(&seed) % nlive;
			prog_free(live[i].hdr);
			account(&live[i], -1);
			live[i] = live[--nlive];
		}
		if (!ASSERT_TRUE(check(step), "invariants"))
			break;
	}
	while (nlive)
		prog_free(live[--nlive].hdr);
	pack_set_reserve("0");
	shim_run_due_works();
	ASSERT_TRUE(pack_idle(), "nothing left after freeing all");
	ASSERT_EQ(shim.warnings, 0, "kernel warnings");
}
