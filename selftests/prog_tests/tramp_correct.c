// SPDX-License-Identifier: GPL-2.0
/*
 * BPF trampolines do what they are for: programs written in C
 * (progs/tramp_correct.bpf.c, loaded through its libbpf skeleton) on the
 * kernel's test functions, which BPF_PROG_TEST_RUN of a tracing program
 * calls with known arguments.
 *   args                 fentry sees the arguments, fexit the arguments
 *                        and the return value
 *   fmod_ret             fmod_ret leaves the function alone when it
 *                        returns 0, and replaces its result otherwise
 *   sleepable            a sleepable fexit (fexit.s) sees the result
 *   attach_while_called  threads call the traced functions while the main
 *                        thread attaches and detaches programs on them:
 *                        every call returns what it should, none crashes.
 *                        Not under QEMU's multi-threaded TCG, which does
 *                        not make one vCPU see code another rewrote (the
 *                        unpatched 6.1 oopses in int3 there too): make
 *                        test-tramp boots single-threaded TCG for it.
 * Each ends with nothing left behind: no program, no trampoline's charge
 * to the JIT budget, no W+X mapping.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../checks.h"
#include "../lib/progs.h"
#include "../lib/sys.h"
#include "../test_runner.h"
#include "tramp_correct.skel.h"

#define CALLERS		2
#define ROUNDS		100
/* bpf_modify_return_test(1, &b), b = 2: the side effect (b != 2) in bit 16, then 1 + 3 */
#define MODIFY_RETURN_UNTOUCHED	((1 << 16) | 4)
#define FMOD_RET_VALUE		77

/* BPF_PROG_TEST_RUN of @prog: 0 or -errno, and what the run returned. */
static int test_run(const struct bpf_program *prog, __u32 *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);

	*retval = opts.retval;
	return err < 0 ? -errno : 0;
}

static struct bpf_link *attach(struct bpf_program *prog, const char *tag)
{
	struct bpf_link *link = bpf_program__attach(prog);

	ASSERT_TRUE(link, tag);
	return link;
}

static void test_args(struct tramp_correct *skel)
{
	struct bpf_link *links[4] = {
		attach(skel->progs.fentry_test1, "attach fentry to bpf_fentry_test1"),
		attach(skel->progs.fentry_test3, "attach fentry to bpf_fentry_test3"),
		attach(skel->progs.fexit_test2, "attach fexit to bpf_fentry_test2"),
		attach(skel->progs.fexit_test6, "attach fexit to bpf_fentry_test6"),
	};
	__u32 retval = ~0U;
	int i;

	/* the test run of an fentry program calls bpf_fentry_test1..8 */
	ASSERT_OK(test_run(skel->progs.fentry_test1, &retval), "test run");
	ASSERT_EQ(retval, 0, "every traced function returned what it should");
	ASSERT_EQ(skel->bss->test1_a, 1, "fentry: bpf_fentry_test1's argument");
	ASSERT_TRUE(skel->bss->test3_args_ok, "fentry: bpf_fentry_test3's three arguments");
	ASSERT_TRUE(skel->bss->test2_seen_ok, "fexit: bpf_fentry_test2's arguments and result");
	ASSERT_TRUE(skel->bss->test6_seen_ok, "fexit: bpf_fentry_test6's six arguments and result");
	ASSERT_EQ(skel->bss->fentry_calls, 1, "fentry ran once");
	ASSERT_EQ(skel->bss->fexit_calls, 1, "fexit ran once");
	for (i = 0; i < 4; i++)
		bpf_link__destroy(links[i]);
}

static void test_fmod_ret(struct tramp_correct *skel)
{
	struct bpf_link *fmod = attach(skel->progs.fmod_ret_test, "attach fmod_ret");
	struct bpf_link *fexit = attach(skel->progs.fexit_modify_return, "attach fexit");
	__u32 retval = 0;

	skel->bss->fmod_ret_value = 0;
	ASSERT_OK(test_run(skel->progs.fmod_ret_test, &retval), "test run, fmod_ret returns 0");
	ASSERT_EQ(retval, MODIFY_RETURN_UNTOUCHED, "the function ran, with its side effect");
	ASSERT_EQ(skel->bss->fmod_ret_a, 1, "fmod_ret saw the argument");
	ASSERT_EQ(skel->bss->modify_return_ret, 4, "fexit saw the function's result");

	skel->bss->fmod_ret_value = FMOD_RET_VALUE;
	ASSERT_OK(test_run(skel->progs.fmod_ret_test, &retval), "test run, fmod_ret returns 77");
	ASSERT_EQ(retval, FMOD_RET_VALUE, "the function was skipped, its result replaced");
	ASSERT_EQ(skel->bss->modify_return_ret, FMOD_RET_VALUE, "fexit saw the replaced result");
	bpf_link__destroy(fexit);
	bpf_link__destroy(fmod);
}

static void test_sleepable(struct tramp_correct *skel)
{
	struct bpf_link *fexit = attach(skel->progs.fexit_sleepable, "attach fexit.s");
	__u32 retval = 0;

	/* the fmod_ret program's test run calls bpf_modify_return_test; it is not attached */
	ASSERT_OK(test_run(skel->progs.fmod_ret_test, &retval), "test run");
	ASSERT_EQ(retval, MODIFY_RETURN_UNTOUCHED, "the function ran, untouched");
	ASSERT_EQ(skel->bss->sleepable_calls, 1, "the sleepable fexit ran once");
	ASSERT_EQ(skel->bss->sleepable_ret, 4, "and saw the function's result");
	bpf_link__destroy(fexit);
}

struct callers {
	const struct bpf_program *prog;
	atomic_bool stop;
	atomic_long calls, bad;
};

/* Calls bpf_fentry_test1..8 through test runs until told to stop. */
static void *caller(void *arg)
{
	struct callers *c = arg;
	__u32 retval;
	int err;

	while (!atomic_load(&c->stop)) {
		err = test_run(c->prog, &retval);
		atomic_fetch_add(&c->calls, 1);
		if (err || retval)
			atomic_fetch_add(&c->bad, 1);
	}
	return NULL;
}

static void test_attach_while_called(struct tramp_correct *skel)
{
	struct callers c = { .prog = skel->progs.fentry_test1 };
	pthread_t threads[CALLERS];
	struct bpf_link *fentry, *fexit;
	int i, n = 0, rounds = 0, failed = 0;
	double t = now_ms();

	if (cmdline_has("guest_accel=tcg-multi")) {
		test__skip("multi-threaded TCG does not honour cross-modifying code; "
			   "make test-tramp runs this single-threaded");
		return;
	}
	for (; n < CALLERS; n++)
		if (!ASSERT_OK(-pthread_create(&threads[n], NULL, caller, &c), "pthread_create"))
			break;
	for (; rounds < ROUNDS && !failed; rounds++) {
		fentry = bpf_program__attach(skel->progs.fentry_test1);
		fexit = bpf_program__attach(skel->progs.fexit_test2);
		failed = !fentry || !fexit;
		bpf_link__destroy(fexit);
		bpf_link__destroy(fentry);
	}
	atomic_store(&c.stop, true);
	for (i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	test__note("%d attach/detach rounds, %ld calls from %d threads, %.0f s", rounds,
		   atomic_load(&c.calls), n, (now_ms() - t) / 1000);
	ASSERT_EQ(failed, 0, "every attach worked");
	ASSERT_GT(atomic_load(&c.calls), 0, "the traced functions were called");
	ASSERT_EQ(atomic_load(&c.bad), 0, "every call returned what it should");
	ASSERT_GT(skel->bss->fentry_calls + skel->bss->fexit_calls, 0,
		  "the programs ran while attached");
}

static const struct {
	const char *name;
	void (*run)(struct tramp_correct *skel);
} subtests[] = {
	{ "args", test_args },
	{ "fmod_ret", test_fmod_ret },
	{ "sleepable", test_sleepable },
	{ "attach_while_called", test_attach_while_called },
};

/*
 * The first run of the fmod_ret subtest makes ftrace allocate a trampoline
 * (arch_ftrace_update_trampoline) that it keeps: one area in the module
 * range, on the unpatched kernel too, and no more for a second or third
 * run.  Do it once before any baseline, so that the checks see growth,
 * not that first use.
 */
static void warm_up(void)
{
	struct tramp_correct *skel = tramp_correct__open_and_load();
	struct bpf_link *fmod, *fexit;
	__u32 retval;

	if (!skel)
		return;
	fmod = bpf_program__attach(skel->progs.fmod_ret_test);
	fexit = bpf_program__attach(skel->progs.fexit_modify_return);
	test_run(skel->progs.fmod_ret_test, &retval);
	bpf_link__destroy(fexit);
	bpf_link__destroy(fmod);
	tramp_correct__destroy(skel);
}

void test_tramp_correct(void)
{
	struct leak_state before;
	struct tramp_correct *skel;
	size_t i;

	warm_up();
	for (i = 0; i < sizeof(subtests) / sizeof(subtests[0]); i++) {
		if (!test__start_subtest(subtests[i].name))
			continue;
		if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
		    !ASSERT_OK(leak_state_read(&before), "leak state before"))
			continue;
		skel = tramp_correct__open_and_load();
		if (ASSERT_TRUE(skel, "open and load tramp_correct.bpf.o"))
			subtests[i].run(skel);
		tramp_correct__destroy(skel);
		check_no_leak(&before, "after the programs are gone");
		check_invariants("after the programs are gone");
	}
}
