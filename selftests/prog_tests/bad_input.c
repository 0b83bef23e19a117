// SPDX-License-Identifier: GPL-2.0
/*
 * Loads that must fail, and a load too big for a pack: each failure is a
 * clean errno that leaves nothing behind, and service goes on after it.
 *   invalid    programs the verifier (or the cBPF checker) rejects
 *   jit_limit  bpf_jit_limit lowered below what an unprivileged load
 *              needs: the JIT fails late, after the verifier passed
 *   oversized  a program whose image is larger than a pack: whole huge
 *              pages of its own, read-only and executable, charged to
 *              the JIT budget in full, freed whole
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <linux/filter.h>

#include "../checks.h"
#include "../lib/packstats.h"
#include "../lib/progs.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define UNPRIV		"/proc/sys/kernel/unprivileged_bpf_disabled"
/*
 * r2 /= 7 is 22 bytes of x86 (a div, with rax and rdx saved around it):
 * one for every 16 bytes of a pack makes an image larger than the pack,
 * which is 2M for each NUMA node (8M, 0.5M instructions, on four nodes)
 */
#define BYTES_PER_BIG_INSN 16
#define SZ_2M		(2ULL << 20)
#define PAGE_4K		4096ULL

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
						 .off = (o), .imm = (i) })
#define MOV_IMM(d, i)	INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define EXIT		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static int load_insns(const struct bpf_insn *insns, size_t n)
{
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns, n, NULL);

	return fd < 0 ? -errno : fd;
}

/* Service after a failure: a normal load works, and frees. */
static void check_service(const char *when)
{
	int fd = load_filter(50, 0);

	if (ASSERT_GE(fd, 0, when))
		close(fd);
}

static void test_invalid(void)
{
	static const struct bpf_insn no_exit[] = { MOV_IMM(0, 0) };
	static const struct bpf_insn bad_opcode[] = { INSN(0xff, 0, 0, 0, 0), MOV_IMM(0, 0), EXIT };
	static const struct bpf_insn uninit[] = { INSN(BPF_ALU64 | BPF_MOV | BPF_X, 0, 3, 0, 0), EXIT };
	static const struct bpf_insn jump_out[] = { INSN(BPF_JMP | BPF_JA, 0, 0, 5, 0),
						    MOV_IMM(0, 0), EXIT };
	static const struct bpf_insn no_ret_value[] = { EXIT };
	static const struct {
		const char *name;
		const struct bpf_insn *insns;
		size_t n;
		int err;
	} cases[] = {
		{ "no exit", no_exit, 1, -EINVAL },
		{ "unknown opcode", bad_opcode, 3, -EINVAL },
		{ "uninitialized register", uninit, 2, -EACCES },
		{ "jump out of the program", jump_out, 3, -EINVAL },
		{ "r0 never set", no_ret_value, 1, -EACCES },
		{ "no instructions", no_exit, 0, -E2BIG },
	};
	static const struct sock_filter cbpf_jump_out[] = {
		BPF_JUMP(BPF_JMP | BPF_JA, 10, 0, 0), BPF_STMT(BPF_RET | BPF_K, 0),
	};
	static const struct sock_filter cbpf_no_ret[] = { BPF_STMT(BPF_LD | BPF_W | BPF_IMM, 1) };
	struct leak_state before;
	size_t i;
	int fd;

	if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
	    !ASSERT_OK(leak_state_read(&before), "leak state before"))
		return;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fd = load_insns(cases[i].insns, cases[i].n);
		printf("%s: %d (%s)\n", cases[i].name, fd, fd < 0 ? strerror(-fd) : "loaded");
		if (fd >= 0)
			close(fd);
		ASSERT_EQ(fd, cases[i].err, cases[i].name);
	}
	fd = attach_classic(cbpf_jump_out, 2);
	ASSERT_EQ(fd, -EINVAL, "cBPF jump out of the program");
	fd = attach_classic(cbpf_no_ret, 1);
	ASSERT_EQ(fd, -EINVAL, "cBPF without ret");
	check_no_leak(&before, "after the rejected loads");
	check_service("a load after the rejected ones");
	check_no_leak(&before, "after the next load");
	check_invariants("after the rejected loads");
}

static void load_classic(void *res)
{
	static const struct sock_filter ret0[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_IMM, 1), BPF_STMT(BPF_RET | BPF_K, 0),
	};
	int fd = attach_classic(ret0, 2);

	*(int *)res = fd < 0 ? fd : 0;
}

static void load_ebpf(void *res)
{
	int fd = load_filter(50, 0);

	*(int *)res = fd < 0 ? fd : 0;
}

/* What an unprivileged load gives: 0 loaded, -errno, or -EIO for no child. */
static int unprivileged_load(bool classic)
{
	int res, err = run_as_nobody(classic ? load_classic : load_ebpf, &res, sizeof(res), NULL);

	return err ?: res;
}

static void test_jit_limit(void)
{
	char limit[64] = "", unpriv[16] = "";
	struct leak_state before;
	bool ebpf;
	int err;

	if (!ASSERT_GT(read_file(JIT_LIMIT, limit, sizeof(limit)), 0, "read " JIT_LIMIT) ||
	    !ASSERT_GT(read_file(UNPRIV, unpriv, sizeof(unpriv)), 0, "read " UNPRIV))
		return;
	/* unprivileged eBPF, if the sysctl lets us (1 is for good) */
	ebpf = !write_file(UNPRIV, "0");
	if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
	    !ASSERT_OK(leak_state_read(&before), "leak state before"))
		goto out;

	ASSERT_OK(unprivileged_load(true), "unprivileged cBPF under the normal limit");
	if (ebpf)
		ASSERT_OK(unprivileged_load(false), "unprivileged eBPF under the normal limit");
	check_no_leak(&before, "after the unprivileged loads");

	if (!ASSERT_OK(write_file(JIT_LIMIT, "1"), "lower " JIT_LIMIT))
		goto out;
	err = unprivileged_load(true);
	ASSERT_EQ(err, -ENOTSUPP, "cBPF over bpf_jit_limit: the JIT fails");
	if (ebpf) {
		err = unprivileged_load(false);
		ASSERT_EQ(err, -ENOTSUPP, "eBPF over bpf_jit_limit: the JIT fails");
	}
	check_service("a privileged load over bpf_jit_limit");
	ASSERT_OK(write_file(JIT_LIMIT, limit), "restore " JIT_LIMIT);
	check_no_leak(&before, "after the loads over the limit");
	ASSERT_OK(unprivileged_load(true), "unprivileged cBPF after the limit is back");
	check_no_leak(&before, "after the limit is back");
	check_invariants("after the JIT limit");
out:
	write_file(JIT_LIMIT, limit);
	write_file(UNPRIV, unpriv);
}

/* A pack's size: 2M for each possible NUMA node (the statistics say it too). */
static long long pack_size(void)
{
	struct pack_stats st;
	long long size = SZ_2M * possible_nodes();

	if (packstats_available() && !packstats_read(&st)) {
		size = st.pack_size;
		packstats_free(&st);
	}
	return size;
}

static void test_oversized(void)
{
	long long pack = pack_size();
	int n = pack / BYTES_PER_BIG_INSN;
	struct bpf_insn *insns = calloc(n, sizeof(*insns));
	struct leak_state before, loaded;
	bool huge = expect_huge_vmalloc(test__args());
	uint64_t page = huge ? SZ_2M : PAGE_4K, addr, start;
	uint32_t len;
	double t;
	int i, fd;

	if (!ASSERT_TRUE(insns, "calloc"))
		return;
	for (i = 0; i < n - 2; i++)
		insns[i] = INSN(BPF_ALU64 | BPF_DIV | BPF_K, 2, 0, 0, 7);
	insns[0] = MOV_IMM(2, 0);
	insns[n - 2] = MOV_IMM(0, 0);
	insns[n - 1] = EXIT;
	if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
	    !ASSERT_OK(leak_state_read(&before), "leak state before"))
		goto out;
	t = now_ms();
	fd = load_insns(insns, n);
	if (!ASSERT_GE(fd, 0, "load a program larger than a pack"))
		goto out;
	if (ASSERT_OK(prog_jited_image(fd, &addr, &len), "JITed image")) {
		test__note("%d instructions, %u bytes of image, %.0f s", n, len,
			   (now_ms() - t) / 1000);
		ASSERT_GT(len, pack, "image larger than a pack");
		/*
		 * Its own area from module_alloc_huge(), the header a few bytes
		 * before the image: whole 2M pages, or 4K ones under nohugevmalloc.
		 */
		start = addr & ~(PAGE_4K - 1);
		check_mapping(start, (addr + len - start + page - 1) & ~(page - 1), huge ? 21 : 12);
		ASSERT_TRUE(in_vmallocinfo(start), "its area in /proc/vmallocinfo");
	}
	if (PATCHED_HAS(packstats_available(), PACKSTATS_PATH) &&
	    ASSERT_OK(leak_state_read(&loaded), "leak state loaded")) {
		ASSERT_EQ(loaded.oversized, before.oversized + 1, "counted as larger than a pack");
		ASSERT_EQ(loaded.packs, before.packs, "no pack for it");
		ASSERT_GE(loaded.bytes_in_use - before.bytes_in_use, (len + page - 1) & ~(page - 1),
			  "bytes in use: the image in whole pages");
		/* the budget pays for the whole area, not the image rounded to chunks */
		ASSERT_EQ(loaded.jit_charged - before.jit_charged,
			  loaded.bytes_in_use - before.bytes_in_use, "JIT budget charged what it takes");
		if (prog_jited_image(fd, &addr, &len) == 0)
			ASSERT_EQ(loaded.jit_charged - before.jit_charged,
				  vmallocinfo_size(addr & ~(PAGE_4K - 1)),
				  "JIT budget charged its area in /proc/vmallocinfo");
	}
	check_invariants("with the oversized program");
	close(fd);
	check_no_leak(&before, "after the oversized program");
	check_invariants("after the oversized program");
out:
	free(insns);
}

void test_bad_input(void)
{
	if (test__start_subtest("invalid"))
		test_invalid();
	if (test__start_subtest("jit_limit"))
		test_jit_limit();
	if (test__start_subtest("oversized"))
		test_oversized();
}
