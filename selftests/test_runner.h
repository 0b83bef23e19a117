/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small test_progs-style runner: one file per test under prog_tests/ (or
 * host_tests/), each defining void test_<file>(void); subtests are plain
 * if (test__start_subtest("name")) blocks; ASSERT_*() return bool and print
 * what was expected and what was seen.  A test's output is shown only when
 * it fails (or with -v).
 */
#ifndef TEST_RUNNER_H
#define TEST_RUNNER_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

bool test__start_subtest(const char *name);
void test__fail(void);
void test__skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A short result shown on the test's (or subtest's) line, verbose or not. */
void test__note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Runner options a test may read: -a ARGS, passed through verbatim. */
const char *test__args(void);
bool test__verbose(void);

void test__report(bool ok, const char *file, int line, const char *tag,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define ASSERT_TRUE(cond, tag) ({					\
	bool ___ok = !!(cond);						\
	test__report(___ok, __FILE__, __LINE__, tag,			\
		     "expected %s", #cond);				\
	___ok;								\
})

#define ASSERT_FALSE(cond, tag) ({					\
	bool ___ok = !(cond);						\
	test__report(___ok, __FILE__, __LINE__, tag,			\
		     "expected !(%s)", #cond);				\
	___ok;								\
})

#define __ASSERT_CMP(a, op, b, tag) ({					\
	long long ___a = (a), ___b = (b);				\
	bool ___ok = ___a op ___b;					\
	test__report(___ok, __FILE__, __LINE__, tag,			\
		     "expected %s %s %s, seen %lld vs %lld",		\
		     #a, #op, #b, ___a, ___b);				\
	___ok;								\
})

#define ASSERT_EQ(a, b, tag) __ASSERT_CMP(a, ==, b, tag)
#define ASSERT_NEQ(a, b, tag) __ASSERT_CMP(a, !=, b, tag)
#define ASSERT_LT(a, b, tag) __ASSERT_CMP(a, <, b, tag)
#define ASSERT_LE(a, b, tag) __ASSERT_CMP(a, <=, b, tag)
#define ASSERT_GT(a, b, tag) __ASSERT_CMP(a, >, b, tag)
#define ASSERT_GE(a, b, tag) __ASSERT_CMP(a, >=, b, tag)

/* For functions returning 0 or a negative errno. */
#define ASSERT_OK(err, tag) ({						\
	long long ___e = (err);						\
	bool ___ok = ___e == 0;						\
	test__report(___ok, __FILE__, __LINE__, tag,			\
		     "expected success, seen %lld (%s)", ___e,		\
		     ___e < 0 ? strerror((int)-___e) : "?");		\
	___ok;								\
})

#define ASSERT_STREQ(a, b, tag) ({					\
	const char *___a = (a), *___b = (b);				\
	bool ___ok = ___a && ___b && !strcmp(___a, ___b);		\
	test__report(___ok, __FILE__, __LINE__, tag,			\
		     "expected \"%s\", seen \"%s\"",			\
		     ___b ?: "(null)", ___a ?: "(null)");		\
	___ok;								\
})

#endif
