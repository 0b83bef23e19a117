// SPDX-License-Identifier: GPL-2.0
/*
 * churn: load and free BPF programs of mixed sizes in rounds and print what
 * the direct map and the Modules area look like before and after each round.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/churn.h"

static void usage(const char *prog)
{
	struct churn_opts d = CHURN_OPTS_DEFAULT;

	fprintf(stderr,
		"usage: %s [-n COUNT] [-r ROUNDS] [-s MIN-MAX] [-j THREADS] [-S SEED] [-c] [-k]\n"
		"  -n COUNT    programs per round, all live at once (%u)\n"
		"  -r ROUNDS   rounds (%u)\n"
		"  -s MIN-MAX  program size range in instructions (%u-%u)\n"
		"  -j THREADS  loading threads (%u)\n"
		"  -S SEED     seed for the sizes (%u)\n"
		"  -c          keep the packs the kernel keeps empty for reuse (by default\n"
		"              they are reclaimed first, and after each round)\n"
		"  -k          also print \"churn: key=value\" lines\n",
		prog, d.count, d.rounds, d.min_insns, d.max_insns, d.threads, d.seed);
	exit(2);
}

int main(int argc, char **argv)
{
	struct churn_opts o = CHURN_OPTS_DEFAULT;
	struct mem_snapshot before;
	struct churn_round r = {};
	double us_total = 0;
	bool kv = false;
	unsigned int i;
	int c, err;

	while ((c = getopt(argc, argv, "n:r:s:j:S:ck")) != -1) {
		switch (c) {
		case 'n': o.count = strtoul(optarg, NULL, 0); break;
		case 'r': o.rounds = strtoul(optarg, NULL, 0); break;
		case 's':
			if (sscanf(optarg, "%u-%u", &o.min_insns, &o.max_insns) != 2)
				usage(argv[0]);
			break;
		case 'j': o.threads = strtoul(optarg, NULL, 0); break;
		case 'S': o.seed = strtoul(optarg, NULL, 0); break;
		case 'c': o.keep_cache = true; break;
		case 'k': kv = true; break;
		default: usage(argv[0]);
		}
	}
	if (!o.count || !o.rounds || !o.threads || o.min_insns < 2 || o.max_insns < o.min_insns)
		usage(argv[0]);
	err = churn_prepare(&o) ?: snapshot_take(&before);
	if (err) {
		fprintf(stderr, "churn: cannot raise RLIMIT_NOFILE, quiesce or read the counters: %s\n",
			strerror(-err));
		return 1;
	}
	printf("churn: %u programs x %u rounds, %u-%u insns, %u thread(s), seed %u\n",
	       o.count, o.rounds, o.min_insns, o.max_insns, o.threads, o.seed);
	churn_print_header(stdout);
	churn_print_row(stdout, "before", &before, 0);
	for (i = 1; i <= o.rounds; i++) {
		char label[16];

		err = churn_run_round(&o, i, &before, &r);
		snprintf(label, sizeof(label), "round %u", i);
		churn_print_row(stdout, label, &r.after, r.us_per_load);
		us_total += r.us_per_load;
		if (err) {
			fprintf(stderr, "churn: round %u: %u of %u loaded: %s\n", i, r.loaded,
				o.count, strerror(-err));
			return 1;
		}
	}
	churn_print_delta(stdout, &before, &r.after);
	if (kv) {
		churn_print_kv(stdout, "before", &before, 0);
		churn_print_kv(stdout, "after", &r.after, us_total / o.rounds);
	}
	return 0;
}
