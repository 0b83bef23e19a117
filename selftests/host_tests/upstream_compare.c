// SPDX-License-Identifier: GPL-2.0
/*
 * guest/upstream-compare.sh, the judge of upstream's test_progs on base and
 * patched, on made-up logs: the patched kernel passes only when it passes
 * every test, with every subtest base passes, and both guests ran to the end.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test_runner.h"

#define COMPARER "../guest/upstream-compare.sh"

static const char start[] = "=== GUEST START 6.1.192: test_progs ===\n";
static const char end_ok[] = "Summary: 2/5 PASSED, 0 SKIPPED, 0 FAILED\n=== GUEST END rc=0 ===\n";
static const char end_fail[] = "Summary: 1/5 PASSED, 0 SKIPPED, 1 FAILED\n=== GUEST END rc=1 ===\n";
/* two tests, one with three subtests, as test_progs prints them */
static const char all_ok[] =
	"#1       fentry_test:OK\n"
	"#2/1     bpf_tcp_ca/dctcp:OK\n#2/2     bpf_tcp_ca/cubic:OK\n"
	"#2/3     bpf_tcp_ca/rel_setsockopt:OK\n#2       bpf_tcp_ca:OK\n";

static int write_log(char *path, const char *a, const char *b, const char *c)
{
	int fd = mkstemp(path);
	char log[2048];

	if (!ASSERT_GE(fd, 0, "mkstemp"))
		return -1;
	snprintf(log, sizeof(log), "[    0.000000] Linux version 6.1.192\n%s%s%s", a, b, c);
	ASSERT_EQ(write(fd, log, strlen(log)), (long long)strlen(log), "write log");
	close(fd);
	return 0;
}

/*
 * Judges @base against @patched (test_progs' lines, between the markers),
 * or @patched alone (--one) when @base is NULL.
 */
static void expect(bool pass, const char *why, const char *base, const char *base_end,
		   const char *patched, const char *patched_end)
{
	char bpath[] = "/tmp/upstream_base.XXXXXX", ppath[] = "/tmp/upstream_patched.XXXXXX";
	char cmd[256], out[4096];
	int status;
	size_t n = 0;
	FILE *p;

	if (write_log(bpath, start, base ?: "", base_end) ||
	    write_log(ppath, start, patched, patched_end))
		return;
	snprintf(cmd, sizeof(cmd), "%s %s %s fentry_test bpf_tcp_ca 2>&1", COMPARER,
		 base ? bpath : "--one", ppath);
	p = popen(cmd, "r");
	if (!ASSERT_TRUE(p, "popen"))
		goto out;
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	status = pclose(p);
	printf("comparer said: %s", out);
	ASSERT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, pass ? 0 : 1, "comparer's verdict");
	ASSERT_TRUE(strstr(out, why), why);
out:
	unlink(bpath);
	unlink(ppath);
}

void test_upstream_compare(void)
{
	if (test__start_subtest("both_pass"))
		expect(true, "2 passed, 0 failed", all_ok, end_ok, all_ok, end_ok);
	if (test__start_subtest("patched_fails"))
		expect(false, "#2 upstream/bpf_tcp_ca: FAIL (base OK, patched FAIL", all_ok, end_ok,
		       "#1       fentry_test:OK\n#2/1     bpf_tcp_ca/dctcp:FAIL\n"
		       "#2       bpf_tcp_ca:FAIL\n", end_fail);
	if (test__start_subtest("patched_skips"))
		expect(false, "upstream/fentry_test: FAIL (base OK, patched SKIP)", all_ok, end_ok,
		       "#1       fentry_test:SKIP\n#2       bpf_tcp_ca:OK\n", end_ok);
	if (test__start_subtest("test_missing"))
		expect(false, "upstream/bpf_tcp_ca: FAIL (base OK, patched missing", all_ok, end_ok,
		       "#1       fentry_test:OK\n", end_ok);
	if (test__start_subtest("fewer_subtests"))
		expect(false, "subtests passed: base 3 of 3, patched 2 of 3", all_ok, end_ok,
		       "#1       fentry_test:OK\n#2/1     bpf_tcp_ca/dctcp:OK\n"
		       "#2/2     bpf_tcp_ca/cubic:SKIP\n#2/3     bpf_tcp_ca/rel_setsockopt:OK\n"
		       "#2       bpf_tcp_ca:OK\n", end_ok);
	if (test__start_subtest("fails_on_both"))
		expect(false, "upstream/fentry_test: FAIL (base FAIL, patched FAIL)",
		       "#1       fentry_test:FAIL\n#2       bpf_tcp_ca:OK\n", end_fail,
		       "#1       fentry_test:FAIL\n#2       bpf_tcp_ca:OK\n", end_fail);
	if (test__start_subtest("fails_only_on_base"))
		expect(true, "2 passed, 0 failed",
		       "#1       fentry_test:FAIL\n#2       bpf_tcp_ca:OK\n", end_fail, all_ok, end_ok);
	if (test__start_subtest("patched_panics"))
		expect(false, "no end marker: [    9.0] Kernel panic", all_ok, end_ok,
		       "#1       fentry_test:OK\n[    9.0] Kernel panic - not syncing: Fatal exception\n",
		       "");
	if (test__start_subtest("one_kernel_passes"))
		expect(true, "#2 upstream/bpf_tcp_ca: OK (OK; subtests passed: 3 of 3)", NULL, "",
		       all_ok, end_ok);
	if (test__start_subtest("one_kernel_fails"))
		expect(false, "#1 upstream/fentry_test: FAIL (FAIL)", NULL, "",
		       "#1       fentry_test:FAIL\n#2       bpf_tcp_ca:OK\n", end_fail);
	if (test__start_subtest("no_summary"))
		expect(false, "test_progs printed no \"Summary:\" line", all_ok, end_ok,
		       all_ok, "=== GUEST END rc=255 ===\n");
}
