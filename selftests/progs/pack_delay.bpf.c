// SPDX-License-Identifier: GPL-2.0
/*
 * Makes the pack allocator's slow paths slower, on purpose and by a known
 * time: while delay_ns is set, each of these burns that long on entry.
 *   module_alloc_huge()  a pack being made: a 2M allocation (called from
 *                        the process tgid, the test)
 *   module_memfree()     a pack being freed (from the deferred free's
 *                        workqueue)
 *   seq_printf()         the statistics being printed, at their first
 *                        line, "packs %lu" (a kprobe: fentry cannot take
 *                        a variadic function, and what seq_printf() calls
 *                        may be inlined or, in lib/, not traceable)
 * Each counts its delays.  pack_latency checks that loads do not wait
 * for them: none of them may run under pack_mutex.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

const volatile __u32 tgid;
__u64 delay_ns;
__u64 delays_alloc, delays_free, delays_print;

static int spin(__u32 i, void *until)
{
	return bpf_ktime_get_ns() >= *(__u64 *)until;
}

static void burn(__u64 *count)
{
	__u64 until = bpf_ktime_get_ns() + delay_ns;

	__sync_fetch_and_add(count, 1);
	bpf_loop(1 << 23, spin, &until, 0);
}

static bool from_test(void)
{
	return delay_ns && bpf_get_current_pid_tgid() >> 32 == tgid;
}

SEC("fentry/module_alloc_huge")
int BPF_PROG(slow_alloc, unsigned long size)
{
	if (from_test())
		burn(&delays_alloc);
	return 0;
}

SEC("fentry/module_memfree")
int BPF_PROG(slow_free, void *ptr)
{
	if (delay_ns)
		burn(&delays_free);
	return 0;
}

SEC("kprobe/seq_printf")
int BPF_KPROBE(slow_print, struct seq_file *m, const char *fmt)
{
	char head[6] = {};

	if (!from_test() || bpf_probe_read_kernel(head, 5, fmt))
		return 0;
	if (head[0] == 'p' && head[1] == 'a' && head[2] == 'c' && head[3] == 'k' && head[4] == 's')
		burn(&delays_print);
	return 0;
}
