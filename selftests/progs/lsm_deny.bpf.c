// SPDX-License-Identifier: GPL-2.0
/*
 * A BPF LSM program (lsm/file_open, attached through a BPF trampoline):
 * refuses one file, by inode and device, to one process, and counts what it
 * refused.  The loader (lsm_deny.c) sets the three before loading.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define EPERM 1

char LICENSE[] SEC("license") = "GPL";

const volatile __u64 deny_ino;
const volatile __u32 deny_dev;
const volatile __u32 deny_tgid;
__u64 denied;

SEC("lsm/file_open")
int BPF_PROG(deny_open, struct file *file, int ret)
{
	if (ret)
		return ret;
	if (bpf_get_current_pid_tgid() >> 32 != deny_tgid)
		return 0;
	if (BPF_CORE_READ(file, f_inode, i_ino) != deny_ino ||
	    BPF_CORE_READ(file, f_inode, i_sb, s_dev) != deny_dev)
		return 0;
	__sync_fetch_and_add(&denied, 1);
	return -EPERM;
}
