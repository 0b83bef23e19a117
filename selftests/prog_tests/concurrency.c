// SPDX-License-Identifier: GPL-2.0
/*
 * Threads that load and free programs as fast as they can, more threads
 * than vCPUs: eBPF socket filters through bpf(2) and classic filters
 * through SO_ATTACH_FILTER (the path that steers between clean and dirty
 * packs for the predictor flush), of mixed sizes, so that packs are
 * created, shared, emptied and released under contention: 200,000 loads
 * and frees, a quarter of that on the debug kernel.  The kernel gave an id
 * to as many eBPF programs as the threads loaded (ids are allocated one
 * after the other: a marker program's id before and after tells), and at
 * the end nothing is left: no program, pack, vmalloc area or JIT budget.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <linux/filter.h>

#include <bpf/bpf.h>

#include "../checks.h"
#include "../lib/progs.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define THREADS		4
#define OPS		200000	/* loads and frees, all threads together */
#define DEBUG_OPS	(OPS / 4)	/* on the debug kernel (debug_kernel()) */
#define LIVE_MAX	48	/* programs a thread holds at most */
#define CLASSIC_MAX	300	/* cBPF instructions at most */
#define EBPF_MAX	400

struct worker {
	pthread_t thread;
	unsigned int seed;
	long ops;		/* loads and frees to do */
	long loads, classic, frees;
	int err;		/* the first failure: -errno */
	int fd[LIVE_MAX];
	bool is_classic[LIVE_MAX];
	int live;
};

/* A socket with a classic filter of @len instructions: ld #k ...; ret #0. */
static int load_classic(unsigned int len)
{
	struct sock_filter f[CLASSIC_MAX];
	unsigned int i;

	for (i = 0; i < len - 1; i++)
		f[i] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_IMM, i);
	f[len - 1] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	return attach_classic(f, len);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	long ops = w->ops, done;

	for (done = 0; done < ops && !w->err; done++) {
		bool load = !w->live || (w->live < LIVE_MAX && rand_r(&w->seed) % 2);
		bool classic = rand_r(&w->seed) % 4 == 0;
		int fd, i;

		/* the last ops drain what is live */
		if (ops - done <= w->live)
			load = false;
		if (!load) {
			i = rand_r(&w->seed) % w->live;
			close(w->fd[i]);
			w->fd[i] = w->fd[--w->live];
			w->is_classic[i] = w->is_classic[w->live];
			w->frees++;
			continue;
		}
		fd = classic ? load_classic(1 + rand_r(&w->seed) % CLASSIC_MAX) :
			       load_filter(FILTER_MIN_INSNS + rand_r(&w->seed) % EBPF_MAX, 0);
		if (fd < 0) {
			w->err = fd;
			break;
		}
		w->fd[w->live] = fd;
		w->is_classic[w->live++] = classic;
		w->loads++;
		w->classic += classic;
	}
	while (w->live)
		close(w->fd[--w->live]);
	return NULL;
}

/* The id the kernel gives a program loaded now (ids go up by one a load), or -errno. */
static long long next_prog_id(void)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = load_filter(FILTER_MIN_INSNS, 0), err = 0;

	if (fd < 0)
		return fd;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		err = -errno;
	close(fd);
	return err ?: (long long)info.id;
}

void test_concurrency(void)
{
	struct worker w[THREADS] = {};
	struct leak_state before;
	long loads = 0, classic = 0, frees = 0, ops = debug_kernel() ? DEBUG_OPS : OPS;
	long long id0, id1;
	double t;
	int i;

	if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
	    !ASSERT_OK(leak_state_read(&before), "leak state before"))
		return;
	id0 = next_prog_id();
	if (!ASSERT_GT(id0, 0, "a marker program's id"))
		return;
	t = now_ms();
	for (i = 0; i < THREADS; i++) {
		w[i].seed = i + 1;
		w[i].ops = ops / THREADS;
		if (!ASSERT_OK(-pthread_create(&w[i].thread, NULL, work, &w[i]), "pthread_create"))
			return;
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(w[i].thread, NULL);
		if (w[i].err)
			printf("thread %d: load failed: %s\n", i, strerror(-w[i].err));
		ASSERT_OK(w[i].err, "loads in every thread");
		loads += w[i].loads;
		classic += w[i].classic;
		frees += w[i].frees;
	}
	id1 = next_prog_id();
	test__note("%d threads: %ld loads (%ld classic), %ld frees, %.0f s", THREADS, loads,
		   classic, frees, (now_ms() - t) / 1000);
	/* classic filters get no id; every eBPF load that succeeded got one */
	if (ASSERT_GT(id1, 0, "a marker program's id after"))
		ASSERT_EQ(id1 - id0 - 1, loads - classic, "eBPF programs the kernel loaded");
	ASSERT_GT(classic, 0, "classic filters among them");
	/* and the kernel agrees: programs, packs, bytes in use, JIT budget as before */
	check_no_leak(&before, "after the threads");
	check_invariants("after the threads");
}
