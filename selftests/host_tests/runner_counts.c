// SPDX-License-Identifier: GPL-2.0
/*
 * The runner's own counts, on itself: this test, run again by the host
 * runner with "-a runner-fixture", passes, fails and skips subtests (or,
 * with "-a runner-fixture,whole", skips as a test without subtests), and
 * the last line must count each leaf once: "N passed, N failed, N
 * skipped", the line CI reads.  -a given twice reaches the tests joined
 * by a comma.
 */
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test_runner.h"

/* What the runner does when it is the fixture. */
static void fixture(void)
{
	if (strstr(test__args(), "whole")) {
		test__skip("a test without subtests, skipped");
		return;
	}
	if (test__start_subtest("ok"))
		ASSERT_STREQ(test__args(), "runner-fixture,second", "-a twice, joined");
	if (test__start_subtest("fail"))
		ASSERT_TRUE(false, "a failure on purpose");
	if (test__start_subtest("skip"))
		test__skip("skipped on purpose");
	if (test__start_subtest("skip_too"))
		test__skip("skipped on purpose");
}

/* Runs the runner on this test alone with @args; its output in @out, its exit status. */
static int run_fixture(const char *args, char *out, size_t size)
{
	char self[PATH_MAX], cmd[PATH_MAX + 256], copy[8192], *line, *save;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	size_t n = 0;
	int status;
	FILE *p;

	out[0] = 0;
	if (!ASSERT_GT(len, 0, "readlink /proc/self/exe"))
		return -1;
	self[len] = 0;
	snprintf(cmd, sizeof(cmd), "%s -t runner_counts %s 2>&1", self, args);
	fflush(stdout);
	p = popen(cmd, "r");
	if (!ASSERT_TRUE(p, "popen the runner"))
		return -1;
	n = fread(out, 1, size - 1, p);
	out[n] = 0;
	snprintf(copy, sizeof(copy), "%s", out);
	status = pclose(p);
	/* indented: no line of it may pass for this runner's own */
	printf("the runner said:\n");
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		printf("  | %s\n", line);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The last line of @out, without its newline, into @line. */
static void last_line(const char *out, char *line, size_t size)
{
	size_t len = strlen(out);
	const char *p;

	while (len && out[len - 1] == '\n')
		len--;
	for (p = out + len; p > out && p[-1] != '\n'; p--)
		;
	snprintf(line, size, "%.*s", (int)(out + len - p), p);
}

static void expect(const char *args, int rc, const char *summary, const char *counts)
{
	char out[8192], line[256];

	ASSERT_EQ(run_fixture(args, out, sizeof(out)), rc, "the runner's exit status");
	last_line(out, line, sizeof(line));
	ASSERT_STREQ(line, counts, "the last line");
	ASSERT_TRUE(strstr(out, summary), summary);
}

void test_runner_counts(void)
{
	if (strstr(test__args(), "runner-fixture")) {
		fixture();
		return;
	}
	if (test__start_subtest("leaves"))
		expect("-a runner-fixture -a second", 1, "Summary: 0/1 PASSED, 2 SKIPPED, 1 FAILED",
		       "1 passed, 1 failed, 2 skipped");
	if (test__start_subtest("whole_test_skipped"))
		expect("-a runner-fixture,whole", 0, "Summary: 0/0 PASSED, 1 SKIPPED, 0 FAILED",
		       "0 passed, 0 failed, 1 skipped");
}
