// SPDX-License-Identifier: GPL-2.0
/*
 * Makes the pack allocator's slow paths slower, on purpose and by a known
 * time: while delay_ns is set, each of these burns that long on entry, on
 * slow_cpu only (the CPU the test's side threads run on, never the one it
 * loads on):
 *   module_alloc_huge()  a pack being made: a 2M allocation (called from
 *                        the process tgid, the test)
 *   module_memfree()     a pack being freed (from the deferred free's
 *                        workqueue)
 *   seq_printf()         the statistics being printed, at their first
 *                        line, "packs %lu" (a kprobe: fentry cannot take
 *                        a variadic function, and what seq_printf() calls
 *                        may be inlined or, in lib/, not traceable)
 * Each logs its delays, by kind (enum delay_kind, the test's too): how
 * many, and when the first MAX_DELAYS began and ended (bpf_ktime_get_ns(),
 * CLOCK_MONOTONIC as the test reads it).  And every module_alloc_huge()
 * of the test's, on any CPU, is counted in made: a pack being made.
 * pack_latency checks that loads do not wait for them: none of them may
 * run under pack_mutex.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define MAX_DELAYS	64
/* bpf_loop() stops after 1 << 23 calls: so many of them at most, for delays of seconds */
#define BURN_LOOPS	32

enum delay_kind { DELAY_ALLOC, DELAY_FREE, DELAY_PRINT, DELAY_KINDS };

char _license[] SEC("license") = "GPL";

const volatile __u32 tgid;
const volatile __u32 slow_cpu;
__u64 delay_ns;

__u64 delays[DELAY_KINDS];
__u64 made;
__u64 delay_start[DELAY_KINDS][MAX_DELAYS], delay_end[DELAY_KINDS][MAX_DELAYS];

static int spin(__u32 i, void *until)
{
	return bpf_ktime_get_ns() >= *(__u64 *)until;
}

static void burn(enum delay_kind kind)
{
	__u64 start = bpf_ktime_get_ns(), until = start + delay_ns;
	__u64 n = __sync_fetch_and_add(&delays[kind], 1);
	int i;

	if (n < MAX_DELAYS)
		delay_start[kind][n] = start;
	for (i = 0; i < BURN_LOOPS && bpf_ktime_get_ns() < until; i++)
		bpf_loop(1 << 23, spin, &until, 0);
	if (n < MAX_DELAYS)
		delay_end[kind][n] = bpf_ktime_get_ns();
}

static bool on_slow_cpu(void)
{
	return delay_ns && bpf_get_smp_processor_id() == slow_cpu;
}

static bool from_test(void)
{
	return on_slow_cpu() && bpf_get_current_pid_tgid() >> 32 == tgid;
}

SEC("fentry/module_alloc_huge")
int BPF_PROG(slow_alloc, unsigned long size)
{
	if (bpf_get_current_pid_tgid() >> 32 == tgid)
		__sync_fetch_and_add(&made, 1);
	if (from_test())
		burn(DELAY_ALLOC);
	return 0;
}

SEC("fentry/module_memfree")
int BPF_PROG(slow_free, void *ptr)
{
	if (on_slow_cpu())
		burn(DELAY_FREE);
	return 0;
}

SEC("kprobe/seq_printf")
int BPF_KPROBE(slow_print, struct seq_file *m, const char *fmt)
{
	char head[6] = {};

	if (!from_test() || bpf_probe_read_kernel(head, 5, fmt))
		return 0;
	if (head[0] == 'p' && head[1] == 'a' && head[2] == 'c' && head[3] == 'k' && head[4] == 's')
		burn(DELAY_PRINT);
	return 0;
}
