// SPDX-License-Identifier: GPL-2.0
/*
 * Runs last:
 *   kmemleak  on a kernel with CONFIG_DEBUG_KMEMLEAK (make test-debug),
 *             scans, KMEMLEAK_SCANS of them KMEMLEAK_MIN_AGE_S apart, find
 *             no unreferenced object
 *   log       the kernel log since boot holds no warning, BUG, oops,
 *             KASAN, lockdep or leak report (guest/log-patterns), and all
 *             of it was there to read: its first record is the boot's
 *             first (sequence number 0), and no record was overwritten
 *             while it was read (EPIPE from /dev/kmsg)
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "../lib/sys.h"
#include "../test_runner.h"

#define KMEMLEAK "/sys/kernel/debug/kmemleak"
/* kmemleak reports only objects older than 5 s (jiffies_min_age) */
#define KMEMLEAK_MIN_AGE_S 6
/*
 * A scan reports only what was unreferenced at the scan before as well
 * (an object whose checksum changed since, as every new one's has, is
 * left gray): a leak younger than the last scan needs two more.  The third
 * is for an object that was still changing at the second.
 */
#define KMEMLEAK_SCANS 3

static void check_kmemleak(void)
{
	char line[512];
	int leaks = 0, shown = 0, i;
	FILE *f;

	if (access(KMEMLEAK, W_OK)) {
		test__skip("no " KMEMLEAK " (CONFIG_DEBUG_KMEMLEAK): make test-debug runs it");
		return;
	}
	for (i = 0; i < KMEMLEAK_SCANS; i++) {
		sleep(KMEMLEAK_MIN_AGE_S);
		if (!ASSERT_OK(write_file(KMEMLEAK, "scan"), "kmemleak scan"))
			return;
	}
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
	int fd = kmsg_open(false), bad = 0, lines = 0, lost = 0, n;
	unsigned long long seq, first = 0;
	const char *pat;

	if (!ASSERT_GE(fd, 0, "open /dev/kmsg"))
		return;
	while ((n = kmsg_next_seq(fd, line, sizeof(line), &seq)) != 0) {
		if (n == -EPIPE) {
			printf("kernel log: records overwritten before they were read\n");
			lost++;
			continue;
		}
		if (n < 0)
			break;
		if (!lines++)
			first = seq;
		pat = kmsg_bad_pattern(line);
		if (pat) {
			printf("kernel log: \"%s\" in: %s\n", pat, line);
			bad++;
		}
	}
	close(fd);
	ASSERT_OK(n, "read /dev/kmsg to its end");
	ASSERT_GT(lines, 0, "kernel log readable");
	ASSERT_EQ(lost, 0, "kernel log lost records: ring overwritten");
	if (!ASSERT_EQ(first, 0, "kernel log lost records from boot: first seq"))
		printf("the ring had overwritten %llu records from boot before it was read: "
		       "boot with a larger log_buf_len=\n", first);
	ASSERT_EQ(bad, 0, "bad kernel log lines");
	test__note("%d records from seq %llu", lines, first);
}

void test_kernel_log(void)
{
	if (test__start_subtest("kmemleak"))
		check_kmemleak();
	if (test__start_subtest("log"))
		check_log();
}
