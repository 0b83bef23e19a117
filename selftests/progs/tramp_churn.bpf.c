// SPDX-License-Identifier: GPL-2.0
/*
 * The programs tramp_churn attaches, one of each kind, to any function:
 * they only return (fmod_ret's 0 leaves the function's result alone).  The
 * test loads each many times over, one load per target function, from the
 * instructions clang made here: none touches a map, so no load needs
 * relocating, and the run counts the kernel keeps (bpf_stats) show that
 * they run.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char _license[] SEC("license") = "GPL";

SEC("fentry")
int churn_fentry(void *ctx)
{
	return 0;
}

SEC("fexit")
int churn_fexit(void *ctx)
{
	return 0;
}

SEC("fmod_ret")
int churn_fmod_ret(void *ctx)
{
	return 0;
}
