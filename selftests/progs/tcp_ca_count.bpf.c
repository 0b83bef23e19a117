// SPDX-License-Identifier: GPL-2.0
/*
 * A TCP congestion control written in BPF: Reno, through the kernel's own
 * Reno functions, counting the calls TCP makes into it.  The struct_ops
 * test registers it over and over and sends data over loopback with it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

__u64 init_calls, ssthresh_calls, cong_avoid_calls, undo_cwnd_calls;

extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

SEC("struct_ops/ca_init")
void BPF_PROG(ca_init, struct sock *sk)
{
	__sync_fetch_and_add(&init_calls, 1);
}

SEC("struct_ops/ca_ssthresh")
__u32 BPF_PROG(ca_ssthresh, struct sock *sk)
{
	__sync_fetch_and_add(&ssthresh_calls, 1);
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops/ca_cong_avoid")
void BPF_PROG(ca_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	__sync_fetch_and_add(&cong_avoid_calls, 1);
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops/ca_undo_cwnd")
__u32 BPF_PROG(ca_undo_cwnd, struct sock *sk)
{
	__sync_fetch_and_add(&undo_cwnd_calls, 1);
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ca_count = {
	.init		= (void *)ca_init,
	.ssthresh	= (void *)ca_ssthresh,
	.cong_avoid	= (void *)ca_cong_avoid,
	.undo_cwnd	= (void *)ca_undo_cwnd,
	.name		= "bpf_ca_count",
};
