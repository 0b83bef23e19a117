// SPDX-License-Identifier: GPL-2.0
/*
 * Load and free rounds of programs of mixed sizes, and check that every load
 * succeeds and every byte of JIT memory comes back.  The direct-map counters
 * are recorded around it (the table is in the log: -v shows it).
 */
#include "../lib/churn.h"
#include "../test_runner.h"

void test_churn(void)
{
	struct churn_opts o = CHURN_OPTS_DEFAULT;
	struct mem_snapshot before;
	struct churn_round r;
	unsigned int i;
	char label[16];

	o.count = 2000;
	o.rounds = 3;
	if (!ASSERT_OK(churn_prepare(&o), "RLIMIT_NOFILE, quiesce") ||
	    !ASSERT_OK(snapshot_take(&before), "snapshot before") ||
	    !ASSERT_TRUE(before.have_ptdump, "ptdump"))
		return;
	churn_print_header(stdout);
	churn_print_row(stdout, "before", &before, 0);
	for (i = 1; i <= o.rounds; i++) {
		int err = churn_run_round(&o, i, &before, &r);

		snprintf(label, sizeof(label), "round %u", i);
		churn_print_row(stdout, label, &r.after, r.us_per_load);
		if (!ASSERT_OK(r.err, "every load succeeds") ||
		    !ASSERT_EQ(r.loaded, o.count, "programs loaded") ||
		    !ASSERT_OK(err, "JIT memory given back"))
			return;
		ASSERT_EQ(r.after.live_progs, before.live_progs, "no program left");
		ASSERT_GE(r.after.l2_splits, before.l2_splits, "split counter monotonic");
		ASSERT_EQ(pt_mapped(&r.after.modules), pt_mapped(&before.modules),
			  "Modules area back to its size");
	}
	churn_print_delta(stdout, &before, &r.after);
}
