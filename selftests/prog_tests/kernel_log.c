// SPDX-License-Identifier: GPL-2.0
/*
 * Runs last: the kernel log since boot holds no warning, BUG, oops, lockdep
 * or leak report (the patterns of guest/log-patterns).
 */
#include <unistd.h>

#include "../lib/sys.h"
#include "../test_runner.h"

void test_kernel_log(void)
{
	char line[1024];
	int fd = kmsg_open(false), bad = 0, lines = 0;
	const char *pat;

	if (!ASSERT_GE(fd, 0, "open /dev/kmsg"))
		return;
	while (kmsg_next(fd, line, sizeof(line)) > 0) {
		lines++;
		pat = kmsg_bad_pattern(line);
		if (pat) {
			printf("kernel log: \"%s\" in: %s\n", pat, line);
			bad++;
		}
	}
	close(fd);
	ASSERT_GT(lines, 0, "kernel log readable");
	ASSERT_EQ(bad, 0, "bad kernel log lines");
}
