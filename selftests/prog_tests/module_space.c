// SPDX-License-Identifier: GPL-2.0
/*
 * BPF and modules share the module range (1008 MiB on x86-64 with KASLR),
 * and bpf_jit_limit, half of it by default, is what keeps unprivileged
 * users from taking it all.  That holds only if a pack takes no more of
 * the range than its size: a 2M pack with a guard page after it, at 2M
 * alignment, would take 4M, and filters up to the limit would fill the
 * range.
 *
 * The same proportion, scaled down to what the guest's memory can fill:
 * modspace_reserve.ko takes all of the range but LEAVE_MB, bpf_jit_limit
 * is set to half of that above what is charged already, and nobody
 * attaches classic socket filters until the JIT refuses one.  Then a
 * module with a 3 MiB array (big_module.ko) must still load, as it does on
 * the unpatched kernel.  Also checked: each pack area in /proc/vmallocinfo
 * is exactly the pack size, and packs sit a pack size apart.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/filter.h>

#include "../checks.h"
#include "../lib/packstats.h"
#include "../lib/progs.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define OPTMEM_MAX	"/proc/sys/net/core/optmem_max"
#define BIG_MODULE	"big_module.ko"
#define RESERVE_MODULE	"modspace_reserve.ko"
#define LEAVE_MB	64
#define MAX_FILTERS	60000
/* the longest classic filter: BPF_MAXINSNS */
#define FILTER_LEN	4096

struct fill_result {
	int filters;	/* filters attached before the budget refused one */
	int err;	/* what the first refused one gave */
};

/* A classic filter that JITs to as much code as its length allows. */
static struct sock_filter *big_filter(void)
{
	struct sock_filter *f = calloc(FILTER_LEN, sizeof(*f));
	int i;

	if (!f)
		return NULL;
	/* A /= X: a division-by-zero check and a div, some 22 bytes of x86 each */
	f[0] = (struct sock_filter)BPF_STMT(BPF_LDX | BPF_W | BPF_IMM, 3);
	f[1] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_IMM, 1000);
	for (i = 2; i < FILTER_LEN - 1; i++)
		f[i] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0);
	f[FILTER_LEN - 1] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	return f;
}

/* As nobody: attaches filters until one is refused; they stay while the child lives. */
static void fill(void *res)
{
	struct sock_filter *f = big_filter();
	struct fill_result *r = res;
	int fd;

	r->filters = 0;
	r->err = -ENOMEM;
	while (f && r->filters < MAX_FILTERS) {
		fd = attach_classic(f, FILTER_LEN);
		if (fd < 0) {
			r->err = fd;
			break;
		}
		r->filters++;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Areas of the pack size, and the commonest distance between neighbours. */
static void check_pack_areas(const struct pack_stats *st)
{
	uint64_t *addr = calloc(st->npacks, sizeof(*addr)), stride = 0;
	int i, wrong = 0, same, best = 0, run = 0;
	long long size;

	if (!ASSERT_TRUE(addr, "calloc") || !ASSERT_GT(st->npacks, 1, "packs"))
		goto out;
	for (i = 0; i < st->npacks; i++) {
		addr[i] = st->pack[i].addr;
		size = vmallocinfo_size(addr[i]);
		if (size != st->pack_size && wrong++ < 3)
			printf("pack 0x%" PRIx64 ": area of %lld bytes in /proc/vmallocinfo\n",
			       addr[i], size);
	}
	ASSERT_EQ(wrong, 0, "pack areas of exactly the pack size (no guard page)");
	qsort(addr, st->npacks, sizeof(*addr), cmp_u64);
	/* the most frequent gap between consecutive packs, in a sorted list of gaps */
	for (i = 1; i < st->npacks; i++)
		addr[i - 1] = addr[i] - addr[i - 1];
	qsort(addr, st->npacks - 1, sizeof(*addr), cmp_u64);
	for (i = 0; i < st->npacks - 1; i++) {
		same = i && addr[i] == addr[i - 1];
		run = same ? run + 1 : 1;
		if (run > best) {
			best = run;
			stride = addr[i];
		}
	}
	printf("%d packs; the commonest stride is %" PRIu64 " kB (%d times)\n", st->npacks,
	       stride >> 10, best);
	test__note("%d packs %" PRIu64 " kB apart", st->npacks, stride >> 10);
	ASSERT_EQ(stride, st->pack_size, "packs sit a pack size apart");
out:
	free(addr);
}

static void test_full_budget(void)
{
	char limit[64] = "", optmem[64] = "", text[64];
	struct leak_state before;
	struct fill_result r;
	struct pack_stats *st = calloc(1, sizeof(*st));
	uint64_t get_vm_area = kallsyms_addr("__get_vm_area_caller");
	bool reserved = false;
	int err;
	pid_t pid = -1;
	double t;

	if (!ASSERT_TRUE(st, "calloc") ||
	    !ASSERT_NEQ(get_vm_area, 0, "__get_vm_area_caller in /proc/kallsyms") ||
	    !ASSERT_GT(read_file(JIT_LIMIT, limit, sizeof(limit)), 0, "read " JIT_LIMIT) ||
	    !ASSERT_GT(read_file(OPTMEM_MAX, optmem, sizeof(optmem)), 0, "read " OPTMEM_MAX))
		goto out;
	/* a socket may hold a filter of 4,096 instructions; nobody keeps one per socket */
	if (!ASSERT_OK(write_file(OPTMEM_MAX, "1048576"), "raise " OPTMEM_MAX) ||
	    !ASSERT_OK(raise_nofile(MAX_FILTERS + 100), "raise RLIMIT_NOFILE") ||
	    !ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
	    !ASSERT_OK(leak_state_read(&before), "leak state before"))
		goto out;

	snprintf(text, sizeof(text), "get_vm_area_addr=%" PRIu64 " leave_mb=%d", get_vm_area,
		 LEAVE_MB);
	err = module_load(RESERVE_MODULE, text);
	if (!ASSERT_OK(err, "take all of the module range but LEAVE_MB"))
		goto out;
	reserved = true;
	snprintf(text, sizeof(text), "%lld", before.jit_charged + (LEAVE_MB << 20) / 2);
	if (!ASSERT_OK(write_file(JIT_LIMIT, text), "bpf_jit_limit: half of what is left"))
		goto out;

	t = now_ms();
	err = run_as_nobody(fill, &r, sizeof(r), &pid);
	if (!ASSERT_OK(err, "the filling child reports"))
		goto out;
	printf("nobody attached %d filters of %d instructions in %.0f s; the next gave %d (%s)\n",
	       r.filters, FILTER_LEN, (now_ms() - t) / 1000, r.err, strerror(-r.err));
	if (!ASSERT_EQ(r.err, -ENOTSUPP, "the JIT refused the last filter"))
		goto out;

	if (PATCHED_HAS(packstats_available(), PACKSTATS_PATH) &&
	    ASSERT_OK(packstats_read(st), "pack statistics")) {
		printf("packs %lld (%lld huge), %lld bytes in use, limit %s\n", st->packs,
		       st->huge_packs, st->bytes_in_use, text);
		check_pack_areas(st);
		packstats_free(st);
	}
	err = module_load(BIG_MODULE, NULL);
	ASSERT_OK(err, "load a module with a 3 MiB array, the JIT budget used up");
	if (!err)
		ASSERT_OK(module_unload("big_module"), "unload it");
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (limit[0])
		write_file(JIT_LIMIT, limit);
	if (optmem[0])
		write_file(OPTMEM_MAX, optmem);
	if (reserved)
		ASSERT_OK(module_unload("modspace_reserve"), "give the module range back");
	if (pid > 0) {
		check_no_leak(&before, "after the filters are gone");
		check_invariants("after the filters are gone");
	}
	free(st);
}

void test_module_space(void)
{
	if (test__start_subtest("full_budget"))
		test_full_budget();
}
