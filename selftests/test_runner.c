// SPDX-License-Identifier: GPL-2.0
/*
 * The runner: runs the tests listed in the generated tests.h, in order,
 * filtered by -t, and prints
 *
 *   #N name: OK|FAIL|SKIP        (and #N/M name/sub: ... for subtests)
 *   Summary: P/S PASSED, K SKIPPED, F FAILED
 *   N passed, N failed, N skipped
 *
 * as test_progs does: P counts tests, S subtests, K skipped tests and
 * subtests, F failed tests.  The last line counts leaves (a subtest, or a
 * test without subtests), the skipped ones too, and is the line CI reads.
 * Exit status is 1 when anything failed.
 */
#include <fnmatch.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/sys.h"
#include "test_runner.h"

#define DEFINE_TEST(name) void test_##name(void);
#include "tests.h"
#undef DEFINE_TEST

static const struct test_def {
	const char *name;
	void (*run)(void);
} tests[] = {
#define DEFINE_TEST(name) { #name, test_##name },
#include "tests.h"
#undef DEFINE_TEST
};

enum result { RES_OK, RES_FAIL, RES_SKIP };
static const char *const res_name[] = { "OK", "FAIL", "SKIP" };

static struct {
	const char *filters[16];	/* -t: globs on "test" or "test/subtest" */
	int nfilters;
	char args[512];		/* -a, each one after a comma */
	bool verbose;
	bool list;
} opt;

static struct {
	int tests_ok, subtests_ok, skipped, tests_failed;
	int leaves_ok, leaves_failed, leaves_skipped;
} stats;

/* The test or subtest running now, and where its output goes. */
static struct {
	const struct test_def *test;
	int num, sub_num, sub_count;
	bool failed, skipped;		/* outside any subtest */
	bool any_sub_ok, any_sub_failed;
	bool in_sub, sub_failed, sub_skipped;
	char sub_name[128];
	char note[320], sub_note[320];	/* skip reasons, test__note() */
	char *log;
	size_t log_len;
	FILE *real_stdout;
} cur;

static void log_begin(void)
{
	fflush(stdout);
	stdout = open_memstream(&cur.log, &cur.log_len);
	if (!stdout) {
		stdout = cur.real_stdout;
		perror("open_memstream");
		exit(2);
	}
	stderr = stdout;
}

/* Ends the current output capture; prints it when @show. */
static void log_end(bool show)
{
	fclose(stdout);
	stdout = stderr = cur.real_stdout;
	if ((show || opt.verbose) && cur.log_len) {
		fputs(cur.log, stdout);
		if (cur.log[cur.log_len - 1] != '\n')
			putchar('\n');
	}
	free(cur.log);
	cur.log = NULL;
	cur.log_len = 0;
}

/* " (why it was skipped)", or " (what it measured)" */
static const char *note_suffix(const char *note)
{
	static char buf[sizeof(cur.note) + 4];

	if (!note[0])
		return "";
	snprintf(buf, sizeof(buf), " (%s)", note);
	return buf;
}

static char *cur_note(void)
{
	return cur.in_sub ? cur.sub_note : cur.note;
}

static void end_subtest(void)
{
	enum result res;

	if (!cur.in_sub)
		return;
	cur.in_sub = false;
	res = cur.sub_failed ? RES_FAIL : cur.sub_skipped ? RES_SKIP : RES_OK;
	log_end(res == RES_FAIL);
	printf("#%d/%d %s/%s: %s%s\n", cur.num, cur.sub_num, cur.test->name,
	       cur.sub_name, res_name[res], note_suffix(cur.sub_note));
	cur.sub_note[0] = 0;
	switch (res) {
	case RES_OK:
		stats.subtests_ok++;
		stats.leaves_ok++;
		cur.any_sub_ok = true;
		break;
	case RES_FAIL:
		stats.leaves_failed++;
		cur.any_sub_failed = true;
		break;
	case RES_SKIP:
		stats.skipped++;
		stats.leaves_skipped++;
		break;
	}
	log_begin();
}

static bool selected_by(const char *glob, const char *test, const char *sub)
{
	char full[256];
	size_t len = strlen(test);

	if (!fnmatch(glob, test, 0))
		return true;
	if (!sub)
		return !strncmp(glob, test, len) && glob[len] == '/';
	snprintf(full, sizeof(full), "%s/%s", test, sub);
	return !fnmatch(glob, full, 0);
}

/*
 * -t GLOB selects whole tests ("churn", "kunit*") or subtests
 * ("kunit/vmalloc_*"); given more than once, any of them.
 */
static bool selected(const char *test, const char *sub)
{
	int i;

	for (i = 0; i < opt.nfilters; i++)
		if (selected_by(opt.filters[i], test, sub))
			return true;
	return !opt.nfilters;
}

bool test__start_subtest(const char *name)
{
	end_subtest();
	cur.sub_num++;
	if (!selected(cur.test->name, name))
		return false;
	cur.sub_count++;
	cur.in_sub = true;
	cur.sub_failed = cur.sub_skipped = false;
	snprintf(cur.sub_name, sizeof(cur.sub_name), "%s", name);
	return true;
}

void test__fail(void)
{
	if (cur.in_sub)
		cur.sub_failed = true;
	else
		cur.failed = true;
}

void test__note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cur_note(), sizeof(cur.note), fmt, ap);
	va_end(ap);
}

void test__skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cur_note(), sizeof(cur.note), fmt, ap);
	va_end(ap);
	if (cur.in_sub)
		cur.sub_skipped = true;
	else
		cur.skipped = true;
}

void test__report(bool ok, const char *file, int line, const char *tag,
		  const char *fmt, ...)
{
	va_list ap;

	if (ok && !opt.verbose)
		return;
	printf("%s:%d: %s: %s: ", file, line, tag, ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!ok)
		test__fail();
}

const char *test__args(void)
{
	return opt.args;
}

bool test__verbose(void)
{
	return opt.verbose;
}

static void run_test(const struct test_def *t, int num)
{
	enum result res;

	memset(&cur, 0, sizeof(cur));
	cur.real_stdout = stdout;
	cur.test = t;
	cur.num = num;
	log_begin();
	t->run();
	end_subtest();
	if (cur.failed || cur.any_sub_failed)
		res = RES_FAIL;
	else if (cur.skipped || (cur.sub_count && !cur.any_sub_ok))
		res = RES_SKIP;
	else
		res = RES_OK;
	log_end(res == RES_FAIL);
	printf("#%d %s: %s%s\n", num, t->name, res_name[res], note_suffix(cur.note));
	fflush(stdout);

	if (res == RES_OK)
		stats.tests_ok++;
	else if (res == RES_SKIP)
		stats.skipped++;
	else
		stats.tests_failed++;
	/* A test with subtests counts as leaves through them, plus one if it failed outside them. */
	if (!cur.sub_count && res == RES_OK)
		stats.leaves_ok++;
	else if ((!cur.sub_count && res == RES_FAIL) || cur.failed)
		stats.leaves_failed++;
	else if (!cur.sub_count && res == RES_SKIP)
		stats.leaves_skipped++;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-l] [-v] [-t GLOB] [-a ARGS]\n"
		"  -l       list tests and exit\n"
		"  -v       show every test's output, not only failures'\n"
		"  -t GLOB  run tests (or test/subtest) matching GLOB; repeatable\n"
		"  -a ARGS  options for the tests, e.g. \"expect-nohuge\"; repeatable\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	double secs[sizeof(tests) / sizeof(tests[0])], t0;
	size_t len;
	int c, i;

	while ((c = getopt(argc, argv, "lvt:a:")) != -1) {
		switch (c) {
		case 'l': opt.list = true; break;
		case 'v': opt.verbose = true; break;
		case 't':
			if (opt.nfilters == (int)(sizeof(opt.filters) / sizeof(opt.filters[0]))) {
				fprintf(stderr, "%s: too many -t\n", argv[0]);
				return 2;
			}
			opt.filters[opt.nfilters++] = optarg;
			break;
		case 'a':
			/* -a A -a B is -a A,B: the tests look for their word in it */
			len = strlen(opt.args);
			if ((size_t)snprintf(opt.args + len, sizeof(opt.args) - len, "%s%s",
					     len ? "," : "", optarg) >= sizeof(opt.args) - len) {
				fprintf(stderr, "%s: -a: too long\n", argv[0]);
				return 2;
			}
			break;
		default: usage(argv[0]);
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < (int)(sizeof(tests) / sizeof(tests[0])); i++) {
		if (!selected(tests[i].name, NULL))
			continue;
		if (opt.list) {
			puts(tests[i].name);
			continue;
		}
		t0 = now_ms();
		run_test(&tests[i], i + 1);
		secs[i] = (now_ms() - t0) / 1e3;
	}
	if (opt.list)
		return 0;
	/* where the time went, for whoever has to fit a run in a budget */
	printf("Time:");
	for (i = 0; i < (int)(sizeof(tests) / sizeof(tests[0])); i++)
		if (selected(tests[i].name, NULL))
			printf(" %s %.0fs", tests[i].name, secs[i]);
	printf("\n");
	printf("Summary: %d/%d PASSED, %d SKIPPED, %d FAILED\n", stats.tests_ok,
	       stats.subtests_ok, stats.skipped, stats.tests_failed);
	printf("%d passed, %d failed, %d skipped\n", stats.leaves_ok, stats.leaves_failed,
	       stats.leaves_skipped);
	return stats.tests_failed || stats.leaves_failed ? 1 : 0;
}
