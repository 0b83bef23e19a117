// SPDX-License-Identifier: GPL-2.0
/*
 * guest/check-log.sh, the judge of every guest run, on made-up serial logs:
 * it must pass a good run and fail each way a run can go wrong, saying why.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test_runner.h"

#define CHECKER "../guest/check-log.sh"

static const char boot[] = "[    0.000000] Linux version 6.1.192\n";
static const char start[] = "=== GUEST START 6.1.192: runner ===\n";
static const char results[] =
	"#1 bpf_jit: OK\n#2 churn: OK\nSummary: 2/4 PASSED, 0 SKIPPED, 0 FAILED\n"
	"4 passed, 0 failed, 0 skipped\n";
static const char end[] = "=== GUEST END rc=0 ===\n";

/* Runs the checker on @log; returns its exit status, its output in @out. */
static int check(const char *log, const char *mode, char *out, size_t size)
{
	char path[] = "/tmp/check_log.XXXXXX", cmd[256];
	int fd = mkstemp(path), status;
	size_t n = 0;
	FILE *p;

	out[0] = 0;
	if (!ASSERT_GE(fd, 0, "mkstemp"))
		return -1;
	ASSERT_EQ(write(fd, log, strlen(log)), (long long)strlen(log), "write log");
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s %s %s 2>&1", CHECKER, path, mode);
	p = popen(cmd, "r");
	if (p) {
		n = fread(out, 1, size - 1, p);
		status = pclose(p);
	} else {
		status = -1;
	}
	out[n] = 0;
	unlink(path);
	printf("checker said: %s", out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void expect(const char *mode, bool pass, const char *why, const char *part, ...)
{
	char log[4096] = "", out[2048];
	const char *p;
	va_list ap;

	va_start(ap, part);
	for (p = part; p; p = va_arg(ap, const char *))
		strncat(log, p, sizeof(log) - strlen(log) - 1);
	va_end(ap);
	if (pass) {
		ASSERT_EQ(check(log, mode, out, sizeof(out)), 0, "checker passes");
	} else {
		ASSERT_EQ(check(log, mode, out, sizeof(out)), 1, "checker fails");
		ASSERT_TRUE(strstr(out, why), why);
	}
}

void test_check_log(void)
{
	if (test__start_subtest("good_run"))
		expect("runner", true, NULL, boot, start, results, end, NULL);
	if (test__start_subtest("no_init"))
		expect("runner", false, "never reached /init", boot,
		       "[    1.0] Kernel panic - not syncing: VFS: Unable to mount root fs\n", NULL);
	if (test__start_subtest("panic_mid_run"))
		expect("runner", false, "no end marker: [    2.0] Kernel panic - not syncing: sysrq",
		       boot, start, "#1 bpf_jit: OK\n",
		       "[    2.0] Kernel panic - not syncing: sysrq triggered crash\n", NULL);
	if (test__start_subtest("timeout"))
		expect("runner", false, "no end marker: launcher: timeout", boot, start,
		       "launcher: timeout: the guest ran past 600 s and was killed\n", NULL);
	if (test__start_subtest("kernel_warning"))
		expect("runner", false, "kernel log reports a bug", boot, start,
		       "[    3.0] WARNING: CPU: 1 PID: 7 at mm/vmalloc.c:2716 vm_reset_perms\n",
		       results, end, NULL);
	/* What a kernel with CONFIG_BUG and the hang detectors prints. */
	if (test__start_subtest("bug_without_bugverbose"))
		expect("runner", false, "invalid opcode: 0000", boot, start,
		       "[    3.0] invalid opcode: 0000 [#1] PREEMPT SMP\n", results, end, NULL);
	if (test__start_subtest("int3"))
		expect("runner", false, "int3: 0000", boot, start,
		       "[    3.0] int3: 0000 [#1] PREEMPT SMP\n", results, end, NULL);
	if (test__start_subtest("end_trace"))
		expect("runner", false, "---[ end trace", boot, start,
		       "[    3.0] ---[ end trace 0000000000000000 ]---\n", results, end, NULL);
	if (test__start_subtest("rcu_stall"))
		expect("runner", false, "detected stalls", boot, start,
		       "[   30.0] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n",
		       results, end, NULL);
	if (test__start_subtest("hung_task"))
		expect("runner", false, "blocked for more than", boot, start,
		       "[  130.0] INFO: task kworker/0:1:31 blocked for more than 120 seconds.\n",
		       results, end, NULL);
	if (test__start_subtest("soft_lockup"))
		expect("runner", false, "soft lockup", boot, start,
		       "[   30.0] watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [runner:70]\n",
		       results, end, NULL);
	/* Boot and shutdown messages are judged too. */
	if (test__start_subtest("warning_at_boot"))
		expect("runner", false, "kernel log reports a bug", boot,
		       "[    0.5] WARNING: CPU: 0 PID: 0 at arch/x86/mm/init_64.c:1 x\n",
		       start, results, end, NULL);
	if (test__start_subtest("warning_at_shutdown"))
		expect("runner", false, "kernel log reports a bug", boot, start, results, end,
		       "[    9.0] WARNING: CPU: 0 PID: 1 at kernel/reboot.c:1 x\n", NULL);
	if (test__start_subtest("allowed_line"))
		expect("runner", true, NULL, boot,
		       "[    0.1] Speculative Return Stack Overflow: WARNING: See https://x\n",
		       start, results, end, NULL);
	if (test__start_subtest("failed_test"))
		expect("runner", false, "1 failed: #2 churn: FAIL", boot, start,
		       "#1 bpf_jit: OK\n#2 churn: FAIL\n1 passed, 1 failed, 0 skipped\n",
		       "=== GUEST END rc=1 ===\n", NULL);
	if (test__start_subtest("no_result_line"))
		expect("runner", false, "no \"N passed, N failed\" line", boot, start, end, NULL);
	if (test__start_subtest("nothing_passed"))
		expect("runner", false, "no test passed", boot, start,
		       "0 passed, 0 failed, 2 skipped\n", end, NULL);
	/*
	 * The console prints a kernel line into the middle of a result: the
	 * result still counts, and a kernel bug reported so still fails.
	 */
	if (test__start_subtest("spliced_result")) {
		char out[2048];

		ASSERT_EQ(check("=== GUEST START\n#1 bad_input: O[    4.5] CONFIG_BPF_JIT_ALWAYS_ON "
				"is enabled\nK\n#2 churn: OK\n=== GUEST END rc=0 ===\n", "results",
				out, sizeof(out)), 0, "checker runs");
		ASSERT_STREQ(out, "bad_input: OK\nchurn: OK\n", "both results");
	}
	if (test__start_subtest("spliced_warning"))
		expect("runner", false, "kernel log reports a bug", boot, start,
		       "#1 bpf_jit: O[    3.0] WARNING: CPU: 1 PID: 7 at mm/vmalloc.c:2716 x\nK\n",
		       "#2 churn: OK\n4 passed, 0 failed, 0 skipped\n", end, NULL);
	if (test__start_subtest("command_rc"))
		expect("command", false, "exited 1", boot, start, "=== GUEST END rc=1 ===\n", NULL);
}
