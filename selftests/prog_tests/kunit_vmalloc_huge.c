// SPDX-License-Identifier: GPL-2.0
/*
 * Loads the vmalloc_huge KUnit suite (kmod/vmalloc_huge_kunit.c) and turns
 * each case of its KTAP into a subtest here.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "../lib/ktap.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define MODULE_NAME "vmalloc_huge_kunit"

void test_kunit_vmalloc_huge(void)
{
	struct ktap_suite suite;
	char line[1024], params[64];
	bool huge = expect_huge_vmalloc(test__args());
	int fd, i, err, n, lost = 0;

	fd = kmsg_open(true);
	if (!ASSERT_GE(fd, 0, "open /dev/kmsg"))
		return;
	snprintf(params, sizeof(params), "huge_expected=%d", huge);
	printf("loading %s.ko %s\n", MODULE_NAME, params);
	err = module_load(MODULE_NAME ".ko", params);
	if (!ASSERT_OK(err, "load " MODULE_NAME ".ko")) {
		close(fd);
		return;
	}
	ktap_init(&suite);
	while ((n = kmsg_next(fd, line, sizeof(line))) != 0) {
		/* lines lost: a case may go unreported (kernel_log fails the run too) */
		if (n == -EPIPE) {
			printf("kmsg: records overwritten before they were read\n");
			lost++;
			continue;
		}
		if (!ASSERT_GT(n, 0, "read /dev/kmsg"))
			break;
		if (test__verbose())
			printf("kmsg: %s\n", line);
		ktap_feed(&suite, line);
	}
	close(fd);
	if (lost)
		test__note("kernel log records lost %d time(s) while the KTAP was read", lost);
	ASSERT_OK(module_unload(MODULE_NAME), "unload " MODULE_NAME);

	ASSERT_STREQ(suite.name, "vmalloc_huge", "suite name");
	ASSERT_GT(suite.planned, 0, "cases planned");
	/* a case that never reported (the suite crashed) fails the test */
	ASSERT_TRUE(ktap_complete(&suite), "every case reported");
	for (i = 0; i < suite.ncases; i++) {
		struct ktap_case *c = &suite.cases[i];

		if (!test__start_subtest(c->name))
			continue;
		if (c->diag)
			fputs(c->diag, stdout);
		if (c->result == KTAP_SKIP)
			test__skip("%s", c->reason);
		else if (c->result != KTAP_OK)
			test__fail();
	}
	ktap_free(&suite);
}
