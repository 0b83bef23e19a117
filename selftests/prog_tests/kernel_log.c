// SPDX-License-Identifier: GPL-2.0
/*
 * Runs last:
 *   kmemleak  on a kernel with CONFIG_DEBUG_KMEMLEAK, an explicit scan
 *             finds no unreferenced object
 *   log       the kernel log since boot holds no warning, BUG, oops,
 *             KASAN, lockdep or leak report (guest/log-patterns)
 */
#include <stdlib.h>
#include <unistd.h>

#include "../lib/sys.h"
#include "../test_runner.h"

#define KMEMLEAK "/sys/kernel/debug/kmemleak"
/* kmemleak reports only objects older than 5 s (jiffies_min_age) */
#define KMEMLEAK_MIN_AGE_S 6

static void check_kmemleak(void)
{
	char line[512];
	int leaks = 0, shown = 0;
	FILE *f;

	if (access(KMEMLEAK, W_OK)) {
		test__skip("no " KMEMLEAK " (CONFIG_DEBUG_KMEMLEAK)");
		return;
	}
	sleep(KMEMLEAK_MIN_AGE_S);
	if (!ASSERT_OK(write_file(KMEMLEAK, "scan"), "kmemleak scan"))
		return;
	f = fopen(KMEMLEAK, "r");
	if (!ASSERT_TRUE(f, "open " KMEMLEAK))
		return;
	while (fgets(line, sizeof(line), f)) {
		leaks += !strncmp(line, "unreferenced object", 19);
		if (shown++ < 60)
			fputs(line, stdout);
	}
	fclose(f);
	ASSERT_EQ(leaks, 0, "objects kmemleak found unreferenced");
}

static void check_log(void)
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

void test_kernel_log(void)
{
	if (test__start_subtest("kmemleak"))
		check_kmemleak();
	if (test__start_subtest("log"))
		check_log();
}
