// SPDX-License-Identifier: GPL-2.0
/*
 * Every allocation a program load makes, made to fail in turn
 * (/proc/thread-self/fail-nth, with failslab and fail_page_alloc armed),
 * with no room for it in the packs there are (filled first, when the
 * kernel's own programs hold one), so that the load has to create one.
 * Each failed load returns a clean errno and leaves no program, pack,
 * vmalloc area or charged JIT budget behind; the load after it works.
 * Both kinds of failure must have hit pack creation: a slab allocation,
 * seen in the fault's stack trace (verbose fault injection), and the 2M
 * page, which reports nothing (__GFP_NOWARN) but leaves a 4K pack, counted
 * as a fallback (unless booted with nohugevmalloc).
 * The console keeps its level: every line the kernel logs meanwhile is
 * read here too, and one that reports a bug (guest/log-patterns) fails the
 * test.  What the injection itself prints is no bug: the fault's notice and
 * stack trace, and the page allocator's "page allocation failure" report;
 * none of it matches a pattern unless something did go wrong.  A record
 * the ring overwrote before it was read fails the test as well: a report
 * could have been in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "../checks.h"
#include "../lib/packstats.h"
#include "../lib/progs.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define PROG_INSNS	100
#define MAX_NTH		5000
#define MAX_FILL	4096

static struct bpf_insn prog[PROG_INSNS];

/* The load itself: a raw bpf(2), so that nothing in user space allocates. */
static int load(void)
{
	union bpf_attr attr = {
		.prog_type = BPF_PROG_TYPE_SOCKET_FILTER,
		.insns = (unsigned long)prog,
		.insn_cnt = PROG_INSNS,
		.license = (unsigned long)"GPL",
	};
	int fd = syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));

	return fd < 0 ? -errno : fd;
}

static void build_prog(void)
{
	int i;

	for (i = 0; i < PROG_INSNS - 2; i++)
		prog[i] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_K,
					     .dst_reg = BPF_REG_2, .imm = i };
	prog[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
	prog[PROG_INSNS - 2] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K };
	prog[PROG_INSNS - 1] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
}

struct fault_log {
	int kmsg;
	char attr[32];		/* the attribute of the last fault seen */
	bool in_pack;		/* its stack went through the pack allocator */
	int bad;		/* lines that report a bug, all along */
	int lost;		/* times records were overwritten before they were read */
	int err;		/* the first error reading /dev/kmsg */
};

/*
 * Reads the log up to now: which fault was injected, and where; and any
 * line that reports a bug, or records lost.
 */
static void read_fault(struct fault_log *fl)
{
	char line[1024], *p;
	const char *pat;
	int n;

	fl->attr[0] = 0;
	fl->in_pack = false;
	while ((n = kmsg_next(fl->kmsg, line, sizeof(line))) != 0) {
		if (n == -EPIPE) {
			printf("kernel log: records overwritten before they were read\n");
			fl->lost++;
			continue;
		}
		if (n < 0) {
			fl->err = fl->err ?: n;
			break;
		}
		pat = kmsg_bad_pattern(line);
		if (pat && fl->bad++ < 10)
			printf("kernel log: \"%s\" in: %s\n", pat, line);
		/* "FAULT_INJECTION: forcing a failure.\x0aname failslab, ..." */
		p = strstr(line, "FAULT_INJECTION: forcing a failure");
		if (p && (p = strstr(p, "name ")))
			sscanf(p, "name %31[^,]", fl->attr);
		/* bpf_prog_pack_alloc(), or the pack_alloc() it may tail-call */
		if (fl->attr[0] && strstr(line, "pack_alloc+"))
			fl->in_pack = true;
	}
}

static bool errno_clean(int err)
{
	return err == -ENOMEM || err == -ENOTSUPP || err == -EFAULT || err == -EAGAIN;
}

static int set_nth(int fd, int nth)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d", nth);

	return pwrite(fd, buf, len, 0) == len ? 0 : -errno;
}

static int get_nth(int fd)
{
	char buf[16] = "";

	return pread(fd, buf, sizeof(buf) - 1, 0) > 0 ? atoi(buf) : -1;
}

static long long fallbacks(void)
{
	struct pack_stats st;
	long long n = -1;

	if (!packstats_read(&st))
		n = st.fallbacks;
	packstats_free(&st);
	return n;
}

static int fill[MAX_FILL];

static void sweep(void)
{
	struct fault_log fl = { .kmsg = -1 };
	int nth, nth_fd = -1, fd, err, failed = 0, recovered = 0, nfill = 0;
	int slab_in_pack = 0, page_in_pack = 0;
	long long fb, fb_now;
	bool huge = expect_huge_vmalloc(test__args());
	struct leak_state before;
	struct pack_stats st = {};
	char idle_was[16] = "";

	build_prog();
	/* a pack freed as it empties, not cached: every load must make one */
	if (HAVE_PACK_PARAMS() &&
	    !ASSERT_OK(pack_param_set("idle_secs", "0", idle_was, sizeof(idle_was)),
		       "idle_secs=0"))
		return;
	if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
	    (PATCHED_HAS(packstats_available(), PACKSTATS_PATH) &&
	     !ASSERT_OK(packstats_read(&st), "read " PACKSTATS_PATH)))
		return;
	nfill = packs_fill(&st, load, fill, MAX_FILL);
	packstats_free(&st);
	if (!ASSERT_GE(nfill, 0, "fill the packs there are") ||
	    !ASSERT_OK(leak_state_read(&before), "leak state before"))
		goto out;
	fb = fallbacks();
	fl.kmsg = kmsg_open(true);
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (!ASSERT_GE(fl.kmsg, 0, "open /dev/kmsg") ||
	    !ASSERT_GE(nth_fd, 0, "open /proc/thread-self/fail-nth"))
		goto out;
	if (!ASSERT_OK(fault_setup(FAILSLAB, FAULT_NTH, 0), "arm failslab") ||
	    !ASSERT_OK(fault_setup(FAIL_PAGE_ALLOC, FAULT_NTH, 0), "arm fail_page_alloc"))
		goto out;

	for (nth = 1; nth <= MAX_NTH; nth++) {
		if (!ASSERT_OK(set_nth(nth_fd, nth), "write fail-nth"))
			break;
		fd = load();
		err = get_nth(nth_fd);	/* 0: the fault was injected */
		set_nth(nth_fd, 0);
		read_fault(&fl);
		if (err) {		/* past the last allocation: the load ran clean */
			ASSERT_GE(fd, 0, "load with no fault injected");
			if (fd >= 0)
				close(fd);
			check_no_leak(&before, "after the sweep");
			break;
		}
		slab_in_pack += fl.in_pack && !strcmp(fl.attr, FAILSLAB);
		fb_now = fallbacks();
		page_in_pack += huge && fb_now > fb;
		fb = fb_now;
		if (fd >= 0) {		/* the kernel had a way around this one */
			recovered++;
			close(fd);
		} else {
			failed++;
			if (!ASSERT_TRUE(errno_clean(fd), "clean errno")) {
				printf("fault %d (%s%s): load returned %d (%s)\n", nth, fl.attr,
				       fl.in_pack ? ", in the pack allocator" : "", fd,
				       strerror(-fd));
				break;
			}
		}
		if (test__verbose())
			printf("fault %d: %s%s, load %d\n", nth, fl.attr[0] ? fl.attr : "silent",
			       fl.in_pack ? " in the pack allocator" : "", fd);
		if (!check_no_leak(&before, "after the fault"))
			break;
		/* and service goes on */
		fd = load();
		if (!ASSERT_GE(fd, 0, "the load after the fault"))
			break;
		close(fd);
		if (!check_no_leak(&before, "after the next load"))
			break;
	}
	test__note("%d faults: %d loads failed cleanly, %d got around it; in pack creation "
		   "%d slab, %d 2M page%s", nth - 1, failed, recovered, slab_in_pack, page_in_pack,
		   nfill ? "; the packs there were filled first" : "");
	ASSERT_LT(nth, MAX_NTH, "the sweep reached the end of the load");
	ASSERT_GT(failed, 0, "loads failed by faults");
	ASSERT_GT(slab_in_pack, 0, "slab allocations failed inside pack creation");
	/* under nohugevmalloc no 2M page is asked for: every pack is a fallback */
	if (huge)
		ASSERT_GT(page_in_pack, 0, "2M page allocations failed inside pack creation");
out:
	fault_setup(FAILSLAB, FAULT_OFF, 0);
	fault_setup(FAIL_PAGE_ALLOC, FAULT_OFF, 0);
	if (fl.kmsg >= 0) {
		/* and what the last fault left in the log */
		read_fault(&fl);
		ASSERT_OK(fl.err, "read /dev/kmsg");
		ASSERT_EQ(fl.bad, 0, "kernel log lines reporting a bug during the sweep");
		ASSERT_EQ(fl.lost, 0, "kernel log lost records during the sweep: ring overwritten");
	}
	if (idle_was[0])
		ASSERT_OK(write_file(PACK_PARAM("idle_secs"), idle_was), "idle_secs back");
	if (nth_fd >= 0)
		close(nth_fd);
	if (fl.kmsg >= 0)
		close(fl.kmsg);
	while (nfill > 0)
		close(fill[--nfill]);
	check_invariants("after the sweep");
}

void test_fault_injection(void)
{
	if (!fault_available(FAILSLAB) || !fault_available(FAIL_PAGE_ALLOC)) {
		test__skip("needs CONFIG_FAILSLAB and CONFIG_FAIL_PAGE_ALLOC");
		return;
	}
	if (access("/proc/thread-self/fail-nth", W_OK)) {
		test__skip("no /proc/thread-self/fail-nth");
		return;
	}
	if (test__start_subtest("every_allocation"))
		sweep();
}
