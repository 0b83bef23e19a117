// SPDX-License-Identifier: GPL-2.0
/*
 * Debian's predictor-flush steering: a classic (cBPF) program placed in a
 * pack that held freed code flushes the branch predictors first; eBPF is
 * steered to such "dirty" packs and cBPF to clean ones, to flush rarely.
 */
#include "../lib.h"
#include "../../selftests/test_runner.h"

static int flushes;

static void count_flush(void)
{
	flushes++;
}

void test_pred_flush(void)
{
	struct bpf_binary_header *e1, *c1, *c2, *e2, *fill[40];
	struct pack_view v;
	int i, n = 0;

	shim_reset();
	flushes = 0;
	pack_pred_flush(count_flush);

	if (test__start_subtest("new_pack_is_dirty")) {
		/* a new pack may hold stale predictor state: cBPF in it flushes */
		c1 = prog_alloc(128, true);
		ASSERT_TRUE(c1, "alloc");
		ASSERT_EQ(flushes, 1, "cBPF into a new pack flushes");
		pack_get(0, &v);
		ASSERT_FALSE(v.flush_needed, "clean after the flush");
		c2 = prog_alloc(128, true);
		ASSERT_EQ(flushes, 1, "cBPF into a clean pack does not");
		prog_free(c1);
		prog_free(c2);
	}
	if (test__start_subtest("steering")) {
		/* pack A: clean after a cBPF flush; then dirty it with a free */
		e1 = prog_alloc(128, false);
		c1 = prog_alloc(128, true);
		prog_free(e1);
		pack_get(0, &v);
		ASSERT_TRUE(v.flush_needed, "a free dirties the pack");
		/* fill pack A so that a second pack is made, then free one to dirty B */
		for (i = 0; i < 40 && pack_nr() < 2; i++)
			fill[n++] = prog_alloc(pack_size / 32, false);
		ASSERT_EQ(pack_nr(), 2, "two packs");
		flushes = 0;
		/* eBPF goes to a dirty pack, without flushing */
		e2 = prog_alloc(128, false);
		ASSERT_EQ(flushes, 0, "eBPF never flushes");
		ASSERT_TRUE(e2 && pack_get(pack_index_of(e2), &v) == 0 && v.flush_needed,
			    "eBPF steered to a dirty pack");
		/* cBPF when every pack with room is dirty: one flush cleans them all */
		c2 = prog_alloc(128, true);
		ASSERT_EQ(flushes, 1, "cBPF into a dirty pack flushes once");
		for (i = 0; i < pack_nr(); i++) {
			pack_get(i, &v);
			ASSERT_FALSE(v.flush_needed, "every pack clean after a flush");
		}
		prog_free(c1);
		prog_free(c2);
		prog_free(e2);
		for (i = 0; i < n; i++)
			prog_free(fill[i]);
	}
	pack_pred_flush(NULL);
	ASSERT_TRUE(pack_idle(), "nothing left");
	ASSERT_EQ(shim.warnings, 0, "kernel warnings");
}
