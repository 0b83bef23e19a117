// SPDX-License-Identifier: GPL-2.0
/*
 * pack_bench: the cost of an alloc+free as live programs grow, and the
 * packs a seeded random churn holds against the bytes it keeps live.
 * Sizes are what JITed socket filters and small eBPF programs take.
 *
 *   pack_bench [-s SEED] [-n MAX_LIVE] [-c CHURN_STEPS]
 */
#include <getopt.h>
#include <time.h>

#include "lib.h"

static struct bpf_binary_header **live;
static u32 *live_size;
static unsigned long nlive, nbytes;	/* live programs, their chunk bytes */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static u32 prog_size(unsigned int *seed)
{
	/* mostly small, a tail up to 16K */
	return rand_r(seed) % 8 ? 64 + rand_r(seed) % 1500 : 64 + rand_r(seed) % 16384;
}

static bool add(unsigned int *seed)
{
	u32 size = prog_size(seed);

	live[nlive] = prog_alloc(size, false);
	live_size[nlive] = round_up(size, BPF_PROG_CHUNK_SIZE);
	if (!live[nlive])
		return false;
	nbytes += live_size[nlive++];
	return true;
}

static void drop(unsigned long i)
{
	prog_free(live[i]);
	nbytes -= live_size[i];
	live[i] = live[--nlive];
	live_size[i] = live_size[nlive];
}

/* live bytes over the bytes of the packs that hold them */
static double occupancy(void)
{
	return (double)nbytes / ((double)pack_nr() * pack_size);
}

int main(int argc, char **argv)
{
	static const unsigned long marks[] = { 1000, 10000, 50000, 100000 };
	unsigned long max_live = 100000, churn_steps = 400000, target, i, step, m;
	unsigned int seed = 1, s;
	double first = 0;
	int c;

	while ((c = getopt(argc, argv, "s:n:c:")) != -1) {
		switch (c) {
		case 's': seed = strtoul(optarg, NULL, 0); break;
		case 'n': max_live = strtoul(optarg, NULL, 0); break;
		case 'c': churn_steps = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: %s [-s SEED] [-n MAX_LIVE] [-c CHURN_STEPS]\n", argv[0]);
			return 2;
		}
	}
	target = 20000 < max_live ? 20000 : max_live;
	/* the churn never goes past 2 * target: there, every step frees */
	if (!max_live || churn_steps < 8) {
		fprintf(stderr, "%s: -n must be at least 1 and -c at least 8\n", argv[0]);
		return 2;
	}
	live = calloc(max(max_live, 2 * target) + 1, sizeof(*live));
	live_size = calloc(max(max_live, 2 * target) + 1, sizeof(*live_size));
	if (!live || !live_size)
		return 1;
	shim_reset();
	shim.no_mprotect = true;	/* measure the allocator, not mprotect() */
	s = seed;

	printf("alloc+free cost against live programs, best of 7 runs of 20,000 (seed %u)\n", seed);
	printf("%10s %8s %12s %10s\n", "live", "packs", "ns/op", "vs first");
	for (m = 0; m < sizeof(marks) / sizeof(marks[0]) && marks[m] <= max_live; m++) {
		const int ops = 20000, reps = 7;
		struct bpf_binary_header *p;
		double t, best = 0;
		int r;

		while (nlive < marks[m])
			if (!add(&s))
				return 1;
		/* the best of a few runs: the machine's other work only ever adds */
		for (r = 0; r < reps; r++) {
			unsigned int rs = s;

			t = now_ns();
			for (i = 0; i < (unsigned long)ops; i++) {
				p = prog_alloc(prog_size(&rs), false);
				prog_free(p);
			}
			t = (now_ns() - t) / ops;
			if (!best || t < best)
				best = t;
		}
		t = best;
		if (!first)
			first = t;
		printf("%10lu %8d %12.0f %9.2fx\n", nlive, pack_nr(), t, t / first);
	}
	while (nlive)
		drop(nlive - 1);

	/*
	 * Placement alone: a pack that empties goes at once, as before the
	 * cache (patch 16), which would otherwise keep every pack the scale
	 * run above left empty.
	 */
	if (pack_set_idle_secs("0"))
		return 1;
	printf("\nrandom churn around %lu live programs, %lu steps (seed %u, empty packs freed)\n",
	       target, churn_steps, seed);
	printf("%10s %8s %14s %10s\n", "step", "packs", "live bytes", "occupancy");
	{
		unsigned long sum_packs = 0, samples = 0;
		double sum_occ = 0;

		s = seed;
		for (step = 1; step <= churn_steps; step++) {
			/* above the target, frees win; below it, loads */
			if (nlive && rand_r(&s) % (2 * target) < nlive)
				drop(rand_r(&s) % nlive);
			else if (!add(&s))
				return 1;
			if (step % (churn_steps / 8) == 0)
				printf("%10lu %8d %14lu %9.1f%%\n", step, pack_nr(), nbytes,
				       occupancy() * 100);
			/* the mean leaves out the first eighth, the climb to the target */
			if (step > churn_steps / 8 && step % 100 == 0) {
				sum_packs += pack_nr();
				sum_occ += occupancy();
				samples++;
			}
		}
		printf("%10s %8.2f %14s %9.1f%%\n", "mean", (double)sum_packs / samples, "",
		       sum_occ / samples * 100);
	}
	while (nlive)
		drop(nlive - 1);
	return pack_idle() && !shim.warnings ? 0 : 1;
}
