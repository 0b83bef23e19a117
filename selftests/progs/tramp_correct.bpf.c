// SPDX-License-Identifier: GPL-2.0
/*
 * fentry, fexit and fmod_ret programs on the kernel's own test functions
 * (net/bpf/test_run.c), which BPF_PROG_TEST_RUN of a tracing program calls
 * with known arguments: bpf_fentry_test1(1) returns 2, bpf_fentry_test2(2, 3)
 * returns 5, bpf_fentry_test3(4, 5, 6) returns 15, bpf_fentry_test6(16,
 * (void *)17, 18, 19, (void *)20, 21) returns 111, and
 * bpf_modify_return_test(1, &b) adds 1 to b (2) and returns 1 + b.  Each
 * program records what it saw; the test checks it from user space.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

__u64 fentry_calls, fexit_calls;
int test1_a;
bool test3_args_ok, test2_seen_ok, test6_seen_ok;
/* what fmod_ret returns: 0 lets bpf_modify_return_test() run */
int fmod_ret_value;
int fmod_ret_a, modify_return_ret;
/* what the sleepable fexit saw: bpf_modify_return_test's result, its calls */
int sleepable_ret, sleepable_calls;

SEC("fentry/bpf_fentry_test1")
int BPF_PROG(fentry_test1, int a)
{
	test1_a = a;
	__sync_fetch_and_add(&fentry_calls, 1);
	return 0;
}

SEC("fentry/bpf_fentry_test3")
int BPF_PROG(fentry_test3, char a, int b, __u64 c)
{
	test3_args_ok = a == 4 && b == 5 && c == 6;
	return 0;
}

SEC("fexit/bpf_fentry_test2")
int BPF_PROG(fexit_test2, int a, __u64 b, int ret)
{
	test2_seen_ok = a == 2 && b == 3 && ret == 5;
	__sync_fetch_and_add(&fexit_calls, 1);
	return 0;
}

SEC("fexit/bpf_fentry_test6")
int BPF_PROG(fexit_test6, __u64 a, void *b, short c, int d, void *e, __u64 f, int ret)
{
	test6_seen_ok = a == 16 && b == (void *)17 && c == 18 && d == 19 &&
			e == (void *)20 && f == 21 && ret == 111;
	return 0;
}

SEC("fmod_ret/bpf_modify_return_test")
int BPF_PROG(fmod_ret_test, int a, int *b, int ret)
{
	fmod_ret_a = a;
	return fmod_ret_value;
}

SEC("fexit/bpf_modify_return_test")
int BPF_PROG(fexit_modify_return, int a, int *b, int ret)
{
	modify_return_ret = ret;
	return 0;
}

/* sleepable: runs under RCU tasks trace, may fault; on the error-injection list only */
SEC("fexit.s/bpf_modify_return_test")
int BPF_PROG(fexit_sleepable, int a, int *b, int ret)
{
	sleepable_ret = ret;
	sleepable_calls++;
	return 0;
}
