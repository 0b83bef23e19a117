// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own suites, from the same tree, loaded in the guest:
 *   test_bpf     lib/test_bpf.ko, the JIT's test vectors, with the JIT on
 *                (CONFIG_BPF_JIT_ALWAYS_ON): each "Summary:" line it
 *                prints is a subtest here, with its counts.  On the debug
 *                kernel only its tail-call suite: KASAN makes the 1,026
 *                main vectors take five minutes, CI's budget, and the
 *                other kernels run them all
 *   test_vmalloc lib/test_vmalloc.ko, vmalloc stress on a few threads
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "../checks.h"
#include "../lib/sys.h"
#include "../test_runner.h"

/*
 * Loads @mod with @params and hands each new log line to @line; counts in
 * @lost the times records were overwritten before they were read (the
 * ring wrapped: lines may be missing, and kernel_log fails the run).
 */
static int run_module(const char *mod, const char *params, void (*line)(const char *, void *),
		      void *ctx, int *lost)
{
	char path[64], buf[1024];
	double t = now_ms();
	int fd, err, n;

	*lost = 0;
	fd = kmsg_open(true);
	if (fd < 0)
		return fd;
	snprintf(path, sizeof(path), "%s.ko", mod);
	printf("loading %s %s\n", path, params);
	err = module_load(path, params);
	printf("%s: %s after %.1f s\n", mod, err ? strerror(-err) : "loaded", (now_ms() - t) / 1000);
	while ((n = kmsg_next(fd, buf, sizeof(buf))) != 0) {
		if (n == -EPIPE) {
			printf("kmsg: records overwritten before they were read\n");
			++*lost;
			continue;
		}
		if (!ASSERT_GT(n, 0, "read /dev/kmsg"))
			break;
		if (test__verbose())
			printf("kmsg: %s\n", buf);
		line(buf, ctx);
	}
	close(fd);
	return err;
}

struct bpf_summary {
	char suite[32];
	int passed, failed, jited, total;	/* jited -1: the line has no JIT count */
};

struct bpf_results {
	struct bpf_summary s[8];
	int n;
};

/*
 * "test_bpf: Summary: 1026 PASSED, 0 FAILED, [1014/1014 JIT'ed]" and
 * "test_bpf: test_tail_calls: Summary: 10 PASSED, 0 FAILED, [10/10 JIT'ed]"
 */
static void bpf_line(const char *line, void *ctx)
{
	struct bpf_results *r = ctx;
	struct bpf_summary *s = &r->s[r->n];
	const char *p;

	if (strncmp(line, "test_bpf: ", 10) || !(p = strstr(line, "Summary: ")) ||
	    r->n == (int)(sizeof(r->s) / sizeof(r->s[0])))
		return;
	if (p == line + 10)
		strcpy(s->suite, "test_bpf");
	else
		sscanf(line + 10, "%31[^:]", s->suite);
	s->jited = -1;
	if (sscanf(p, "Summary: %d PASSED, %d FAILED, [%d/%d JIT'ed]", &s->passed, &s->failed,
		   &s->jited, &s->total) >= 2)
		r->n++;
}

static void test_bpf_suites(void)
{
	static const char *const suites[] = { "test_bpf", "test_tail_calls", "test_skb_segment" };
	struct bpf_results r = {};
	size_t i;
	int j, err, lost;

	err = run_module("test_bpf", debug_kernel() ? "test_suite=test_tail_calls" : "", bpf_line,
			 &r, &lost);
	if (lost)
		test__note("kernel log records lost %d time(s) while test_bpf's were read", lost);
	/* a failing case fails the module's init */
	ASSERT_OK(err, "load test_bpf.ko");
	for (i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		struct bpf_summary *s = NULL;

		for (j = 0; j < r.n; j++)
			if (!strcmp(r.s[j].suite, suites[i]))
				s = &r.s[j];
		if (!test__start_subtest(suites[i]))
			continue;
		if (debug_kernel() && strcmp(suites[i], "test_tail_calls")) {
			test__skip("under KASAN only test_tail_calls: make test runs it all");
			continue;
		}
		if (!ASSERT_TRUE(s, "a Summary: line"))
			continue;
		if (s->jited >= 0)
			test__note("%d passed, %d failed, %d/%d JITed", s->passed, s->failed,
				   s->jited, s->total);
		else
			test__note("%d passed, %d failed", s->passed, s->failed);
		ASSERT_GT(s->passed, 0, "cases passed");
		ASSERT_EQ(s->failed, 0, "cases failed");
		if (s->jited >= 0)
			ASSERT_EQ(s->jited, s->total, "every case JITed");
	}
	if (test__start_subtest("unloaded"))
		ASSERT_OK(module_unload("test_bpf"), "unload test_bpf");
	check_invariants("after test_bpf");
}

struct vmalloc_results {
	int lines, passed, failed;
};

/* "Summary: fix_size_alloc_test passed: 1 failed: 0 repeat: 1 loops: 1000 avg: 83 usec" */
static void vmalloc_line(const char *line, void *ctx)
{
	struct vmalloc_results *r = ctx;
	char name[64];
	int passed, failed;

	if (sscanf(line, "Summary: %63s passed: %d failed: %d", name, &passed, &failed) != 3)
		return;
	if (failed)
		printf("%s: %d failed\n", name, failed);
	r->lines++;
	r->passed += passed;
	r->failed += failed;
}

/*
 * Every test but align_shift_alloc_test (64), which asks for alignments up
 * to 2^63 and fails by design; three threads on two vCPUs; loops cut down
 * from a million for TCG.
 */
#define VMALLOC_PARAMS "run_test_mask=0x3bf nr_threads=3 test_loop_count=2000 test_repeat_count=1"
#define VMALLOC_TESTS 9

static void test_vmalloc_stress(void)
{
	struct vmalloc_results r = {};
	int err, lost;

	err = run_module("test_vmalloc", VMALLOC_PARAMS, vmalloc_line, &r, &lost);
	/* it always fails its init, to unload itself when done */
	ASSERT_EQ(err, -EAGAIN, "test_vmalloc ran and unloaded itself");
	test__note("%d results, %d passed, %d failed%s", r.lines, r.passed, r.failed,
		   lost ? "; kernel log records lost while they were read" : "");
	ASSERT_EQ(r.lines, 3 * VMALLOC_TESTS, "a result per test and thread");
	ASSERT_EQ(r.passed, 3 * VMALLOC_TESTS, "passed");
	ASSERT_EQ(r.failed, 0, "failed");
	check_invariants("after test_vmalloc");
}

void test_upstream(void)
{
	test_bpf_suites();
	if (test__start_subtest("test_vmalloc"))
		test_vmalloc_stress();
}
