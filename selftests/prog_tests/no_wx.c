// SPDX-License-Identifier: GPL-2.0
/* Nothing in the kernel page tables is writable and executable at once. */
#include <inttypes.h>

#include "../lib/ptdump.h"
#include "../test_runner.h"

static void report_wx(const char *section, const struct pt_range *r, void *data)
{
	int *n = data;

	if (!r->present || !r->rw || !r->x)
		return;
	printf("W+X: 0x%" PRIx64 "-0x%" PRIx64 " in \"%s\"\n", r->start, r->end, section);
	(*n)++;
}

void test_no_wx(void)
{
	FILE *f = fopen(PTDUMP_PATH, "r");
	int wx = 0;

	if (!ASSERT_TRUE(f, "open " PTDUMP_PATH))
		return;
	ASSERT_OK(ptdump_walk(f, report_wx, &wx), "ptdump_walk");
	fclose(f);
	ASSERT_EQ(wx, 0, "W+X ranges");
}
