/* SPDX-License-Identifier: GPL-2.0 */
/* A table of cases, each run as a subtest on a clean allocator. */
#ifndef CASES_H
#define CASES_H

#include "../lib.h"
#include "../../selftests/test_runner.h"

struct pack_case {
	const char *name;
	void (*fn)(void);
};

/*
 * Runs each selected case from a fresh shim; @cleanup (may be NULL) frees
 * what the case kept.  Then nothing may be left and nothing may have warned.
 */
static inline void run_pack_cases(const struct pack_case *cases, size_t n,
				  void (*cleanup)(void))
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!test__start_subtest(cases[i].name))
			continue;
		shim_reset();
		cases[i].fn();
		if (cleanup)
			cleanup();
		ASSERT_TRUE(pack_idle(), "nothing left");
		ASSERT_EQ(shim.warnings, 0, "kernel warnings");
	}
}

#endif
