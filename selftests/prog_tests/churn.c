// SPDX-License-Identifier: GPL-2.0
/*
 * Load and free 5,000 programs of mixed sizes, 8 rounds (2 on the debug
 * kernel): every load succeeds and every byte of JIT memory comes back.
 * With huge packs (the patched kernel, which has
 * /sys/kernel/debug/bpf/prog_pack, booted without nohugevmalloc) the
 * direct map must not change at all: no split, DirectMap4k as before, as
 * many 4K direct-map entries in ptdump as before.  The table is in the log
 * (-v).
 */
#include "../checks.h"
#include "../lib/churn.h"
#include "../lib/packstats.h"
#include "../lib/sys.h"
#include "../test_runner.h"

/* rounds on the debug kernel (debug_kernel()) */
#define DEBUG_ROUNDS	2

void test_churn(void)
{
	struct churn_opts o = CHURN_OPTS_DEFAULT;
	bool huge_packs = PATCHED_HAS(packstats_available(), PACKSTATS_PATH) &&
			  expect_huge_vmalloc(test__args());
	struct mem_snapshot before;
	struct churn_round r;
	unsigned int i;
	char label[16];

	if (debug_kernel())
		o.rounds = DEBUG_ROUNDS;
	if (!ASSERT_OK(churn_prepare(&o), "RLIMIT_NOFILE, quiesce") ||
	    !ASSERT_OK(snapshot_take(&before), "snapshot before") ||
	    !ASSERT_TRUE(before.have_ptdump, "ptdump"))
		return;
	printf("%u programs x %u rounds, %u-%u insns; huge packs: %s\n", o.count, o.rounds,
	       o.min_insns, o.max_insns, huge_packs ? "yes, direct map asserted" : "no, recorded");
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
		ASSERT_EQ(pt_mapped(&r.after.modules), pt_mapped(&before.modules),
			  "Modules area back to its size");
	}
	churn_print_delta(stdout, &before, &r.after);
	check_direct_map(&before, &r.after);
}
