// SPDX-License-Identifier: GPL-2.0
/*
 * Trampolines churned as tracing tools churn them, and the direct map must
 * not notice.
 *   syscalls   a trampoline on each of 200 syscall entry points
 *              (__x64_sys_*): fentry on all, fexit and fmod_ret as well on
 *              ten that return at once; attached, checked, detached, 2
 *              rounds (1 where the direct map is not judged: ROUNDS).
 *              While attached: each trampoline's symbol lies in a pack,
 *              the packs count one image a trampoline, what is charged
 *              to the JIT budget is what the packs hold, the programs run
 *              (umask's three, by the kernel's run counts) and umask
 *              still returns the mask.
 *   max_links  one function (bpf_modify_return_test) grown to 38 programs,
 *              BPF_MAX_TRAMP_LINKS, its trampoline rebuilt at each step;
 *              all 38 run; the 39th attach fails with E2BIG and leaves
 *              nothing behind; then back down to none.
 * After each round and each subtest: nothing left (programs, images,
 * packs, the JIT budget), no W+X, every free pack byte int3.  With huge
 * packs: no direct-map split, DirectMap4k and ptdump's 4K direct-map
 * entries as before.
 *
 * Those baselines are taken after a warm-up (warm_up()), which hides what
 * the first attaches cost a user.  The test's first snapshot is taken
 * before anything of its own reaches the kernel: with -t tramp_churn the
 * first thing the guest does after booting.
 *   first_attach  what the warm-up cost, from that snapshot: 2M and 1G
 *                 splits, DirectMap4k, the new 4K RO+X pages in Modules
 *                 and whose they are by /proc/vmallocinfo.  With huge
 *                 packs, every split is ftrace's trampoline's (see
 *                 warm_up()): no more splits, nor 2M of DirectMap4k, than
 *                 pages ftrace made, and each 2M block of the direct map
 *                 split since holds the alias of one of them and no other
 *                 read-only page; none is BPF's.  With read-only blocks
 *                 (patch 22), no 2M split and no DirectMap4k at all.
 *   since_start   after the subtests: every split since the first
 *                 snapshot is the warm-up's, the gaps between the
 *                 subtests' baselines included.
 *
 * The programs come from progs/tramp_churn.bpf.c.  A skeleton's load
 * parses the kernel's BTF each time, which a thousand loads cannot afford
 * under TCG: the test takes the instructions from the skeleton once and
 * loads them with bpf_prog_load() for each target, whose BTF id it looks
 * up in one parse of the kernel's BTF.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "../checks.h"
#include "../lib/churn.h"
#include "../lib/kcore.h"
#include "../lib/packstats.h"
#include "../lib/progs.h"
#include "../lib/ptdump.h"
#include "../lib/sys.h"
#include "../test_runner.h"
#include "tramp_churn.skel.h"

#define NFUNCS		200
/*
 * Rounds where the direct map is judged (huge packs, no debug kernel).  A
 * nohugevmalloc boot or the debug kernel (kmemleak on) runs one: it takes
 * the same paths, and KASAN makes a round ten times slower.
 */
#define ROUNDS		2
#define MAX_LINKS	38	/* BPF_MAX_TRAMP_LINKS, x86 */
#define MODIFY_RETURN_UNTOUCHED	((1 << 16) | 4)	/* see tramp_correct */
#define FTRACE_FUNCS	"/sys/kernel/debug/tracing/available_filter_functions"
#define BPF_STATS	"/proc/sys/kernel/bpf_stats_enabled"

/*
 * Syscalls that return at once get fexit and fmod_ret too: those hold
 * their trampoline until the traced call returns, and a syscall that
 * sleeps (wait4 in init) would hold it for good.  (Syscalls without
 * arguments, getpid and the like, have no BTF: they cannot be traced.)
 */
static const char *const quick[] = {
	"__x64_sys_umask", "__x64_sys_getsid", "__x64_sys_getpgid", "__x64_sys_getpriority",
	"__x64_sys_getrlimit", "__x64_sys_newuname", "__x64_sys_sysinfo", "__x64_sys_times",
	"__x64_sys_getresuid", "__x64_sys_getresgid",
};
#define NQUICK (sizeof(quick) / sizeof(quick[0]))

struct kind {
	const char *name;
	enum bpf_attach_type type;
	const struct bpf_insn *insns;
	size_t cnt;
};

enum { FENTRY, FEXIT, FMOD_RET, NKINDS };

struct attached {
	int prog, link;
};

static struct kind kinds[NKINDS];
static struct btf *vmlinux;

/* The programs' instructions, from the skeleton; 0 or -errno. */
static int kinds_init(struct tramp_churn **skel)
{
	*skel = tramp_churn__open();
	if (!*skel)
		return -errno;
	kinds[FENTRY] = (struct kind){ "fentry", BPF_TRACE_FENTRY,
		bpf_program__insns((*skel)->progs.churn_fentry),
		bpf_program__insn_cnt((*skel)->progs.churn_fentry) };
	kinds[FEXIT] = (struct kind){ "fexit", BPF_TRACE_FEXIT,
		bpf_program__insns((*skel)->progs.churn_fexit),
		bpf_program__insn_cnt((*skel)->progs.churn_fexit) };
	kinds[FMOD_RET] = (struct kind){ "fmod_ret", BPF_MODIFY_RETURN,
		bpf_program__insns((*skel)->progs.churn_fmod_ret),
		bpf_program__insn_cnt((*skel)->progs.churn_fmod_ret) };
	vmlinux = btf__load_vmlinux_btf();
	return vmlinux ? 0 : -errno;
}

static int func_btf_id(const char *name)
{
	return btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC);
}

/* A program of @k loaded for @btf_id and attached: 0, or -errno with nothing left. */
static int attach_one(const struct kind *k, int btf_id, struct attached *a)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = k->type,
		    .attach_btf_id = btf_id);
	int err;

	a->prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, k->name, "GPL", k->insns, k->cnt, &o);
	if (a->prog < 0)
		return -errno;
	a->link = bpf_link_create(a->prog, 0, k->type, NULL);
	if (a->link >= 0)
		return 0;
	err = -errno;
	close(a->prog);
	return err;
}

static void detach(struct attached *a, int n)
{
	while (n--) {
		close(a[n].link);
		close(a[n].prog);
	}
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The targets: the quick syscalls, then other syscall entry points that
 * ftrace can patch and BTF describes, by name, up to NFUNCS.  Their number.
 */
static int pick_targets(char **names)
{
	FILE *f = fopen(FTRACE_FUNCS, "r");
	char line[256], **all = NULL;
	int nall = 0, n = 0, i;
	size_t q;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, " \n")] = 0;
		if (strncmp(line, "__x64_sys_", 10) || func_btf_id(line) <= 0)
			continue;
		all = realloc(all, (nall + 1) * sizeof(*all));
		all[nall++] = strdup(line);
	}
	fclose(f);
	qsort(all, nall, sizeof(*all), compare_names);
	for (q = 0; q < NQUICK; q++)
		for (i = 0; i < nall; i++)
			if (all[i] && !strcmp(all[i], quick[q])) {
				names[n++] = all[i];
				all[i] = NULL;
				break;
			}
	for (i = 0; i < nall; i++) {
		if (all[i] && n < NFUNCS && (!n || strcmp(all[i], names[n - 1])))
			names[n++] = all[i];
		else
			free(all[i]);
	}
	free(all);
	return n;
}

static bool is_quick(const char *name)
{
	size_t q;

	for (q = 0; q < NQUICK; q++)
		if (!strcmp(name, quick[q]))
			return true;
	return false;
}

/*
 * How many trampoline images there are, by their bpf_trampoline_<key>
 * symbols (gone when the image is freed, on any kernel), and, with @st,
 * how many lie in no pack of @st.
 */
static int count_trampolines(const struct pack_stats *st, int *outside)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long long addr;
	char type, name[256];
	int n = 0, i;

	*outside = 0;
	if (!f)
		return -errno;
	while (fscanf(f, "%llx %c %255s%*[^\n]", &addr, &type, name) == 3) {
		bool in = false;

		/* bpf_trampoline_<key>, not the kernel's bpf_trampoline_link_prog() */
		if (strncmp(name, "bpf_trampoline_", 15) || strspn(name + 15, "0123456789") !=
		    strlen(name + 15))
			continue;
		n++;
		for (i = 0; st && i < st->npacks; i++)
			in |= addr >= st->pack[i].addr && addr < st->pack[i].addr + st->pack_size;
		if (st && !in) {
			printf("trampoline %s at 0x%llx is in no pack\n", name, addr);
			(*outside)++;
		}
	}
	fclose(f);
	return n;
}

static long long run_cnt(int prog_fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(prog_fd, &info, &len) ? -errno : (long long)info.run_cnt;
}

/*
 * While @ntramp trampolines are attached beyond @base: as many images in
 * packs, each trampoline's symbol in one, charged what they take.  The
 * bytes the images take beyond @base, or -1 without pack statistics.
 */
static long long check_attached(const struct leak_state *base, int ntramp, const char *when)
{
	struct pack_stats st;
	long long bytes;
	int outside, n;

	if (!PATCHED_HAS(packstats_available(), PACKSTATS_PATH) ||
	    !check_images(base, ntramp, &st, when))
		return -1;
	n = count_trampolines(&st, &outside);
	ASSERT_GE(n, ntramp, "a bpf_trampoline_* symbol per trampoline");
	ASSERT_EQ(outside, 0, "every trampoline lies in a pack");
	bytes = st.image_bytes;
	packstats_free(&st);
	return bytes;
}

static void test_syscalls(const struct leak_state *before)
{
	char *names[NFUNCS];
	struct attached *a;
	int n = pick_targets(names), i, round, na = 0, err = 0, rounds = ROUNDS;
	long long bytes = -1;
	mode_t mask = umask(022);

	umask(mask);
	if (!ASSERT_EQ(n, NFUNCS, "syscall entry points to trace") ||
	    !ASSERT_STREQ(names[0], quick[0], "umask first"))
		goto out;
	if (!expect_huge_vmalloc(test__args()) || debug_kernel())
		rounds = 1;
	a = calloc(NFUNCS * NKINDS, sizeof(*a));
	for (round = 1; round <= rounds && !err; round++) {
		double t = now_ms();
		char when[48];

		for (na = 0, i = 0; i < n && !err; i++) {
			int id = func_btf_id(names[i]), k;

			for (k = FENTRY; k <= (is_quick(names[i]) ? FMOD_RET : FENTRY) && !err; k++) {
				err = attach_one(&kinds[k], id, &a[na]);
				if (!ASSERT_OK(err, names[i]))
					printf("%s on %s failed\n", kinds[k].name, names[i]);
				else
					na++;
			}
		}
		snprintf(when, sizeof(when), "round %d, attached", round);
		if (!err) {
			/* umask's fentry, fexit and fmod_ret: a[0..2] */
			ASSERT_EQ(syscall(SYS_umask, mask), mask, "umask under three programs");
			for (i = 0; i < NKINDS; i++)
				ASSERT_GE(run_cnt(a[i].prog), 1, "umask's programs ran");
			bytes = check_attached(before, n, when);
		}
		detach(a, na);
		when[0] = 0;
		if (bytes >= 0)
			snprintf(when, sizeof(when), ", images %lld bytes", bytes);
		test__note("%d rounds; round %d: %d programs on %d functions, attach and detach "
			   "%.0f ms%s", rounds, round, na, n, now_ms() - t, when);
		snprintf(when, sizeof(when), "round %d, detached", round);
		check_no_leak(before, when);
	}
	free(a);
out:
	for (i = 0; i < n; i++)
		free(names[i]);
}

static void test_max_links(const struct leak_state *before)
{
	struct attached a[MAX_LINKS + 1];
	struct leak_state full;
	int id = func_btf_id("bpf_modify_return_test"), n, i;
	long long bytes = -1;
	double deadline;
	LIBBPF_OPTS(bpf_test_run_opts, run);

	if (!ASSERT_GT(id, 0, "bpf_modify_return_test in BTF"))
		return;
	for (n = 0; n < MAX_LINKS; n++)
		if (!ASSERT_OK(attach_one(&kinds[n % NKINDS], id, &a[n]), "attach up to 38"))
			break;
	if (n == MAX_LINKS) {
		/* the test run of an fmod_ret program calls bpf_modify_return_test */
		ASSERT_OK(bpf_prog_test_run_opts(a[FMOD_RET].prog, &run), "test run");
		ASSERT_EQ(run.retval, MODIFY_RETURN_UNTOUCHED, "the function ran, untouched");
		for (i = 0; i < MAX_LINKS; i++)
			ASSERT_EQ(run_cnt(a[i].prog), 1, "each of the 38 programs ran once");
		bytes = check_attached(before, 1, "38 links");
		/* the 37 images before this one go after RCU grace periods */
		for (deadline = now_ms() + SETTLE_MS;
		     count_trampolines(NULL, &i) > 1 && now_ms() < deadline;)
			usleep(50 * 1000);
		if (ASSERT_OK(leak_state_read(&full), "state with 38 links")) {
			ASSERT_EQ(attach_one(&kinds[FENTRY], id, &a[n]), -E2BIG,
				  "the 39th attach fails with E2BIG");
			check_no_leak(&full, "after the 39th attach failed");
		}
	}
	/* back down, one program at a time: a new image each time */
	while (n--) {
		detach(&a[n], 1);
		if (n)
			check_attached(before, 1, "shrinking");
	}
	check_no_leak(before, "after the last detach");
	if (bytes >= 0)
		test__note("a trampoline for 38 programs: %lld bytes", bytes);
}

/*
 * The first time since boot that a live BPF trampoline gives way to a new
 * image (modify_ftrace_direct_multi(): here the fexit joining the fentry
 * on bpf_modify_return_test; a fentry alone on a function registers its
 * direct call and modifies nothing), ftrace's __modify_ftrace_direct_multi()
 * registers its own ftrace_ops, the static tmp_ops, on the function
 * meanwhile, and ftrace gives that ops a trampoline:
 * arch_ftrace_update_trampoline() -> create_trampoline(), a 4K
 * module_alloc() page made RO+X with set_memory_ro() and set_memory_x(),
 * which splits the 2M direct-map entry holding the page's alias.  tmp_ops
 * is core kernel data, not FTRACE_OPS_FL_DYNAMIC: ftrace_shutdown() never
 * frees its trampoline, and every later replacement reuses it.  So ftrace
 * keeps that page, and the split, for as long as the kernel runs, on the
 * unpatched kernel, and on ours without patch 22, which gives that page
 * from a block whose direct map is read-only already, so that it splits
 * nothing.  Have it made before the baselines; first_attach checks that it
 * is all the warm-up costs.
 */
static void warm_up(int id)
{
	struct attached a[NKINDS];
	LIBBPF_OPTS(bpf_test_run_opts, run);
	int n;

	for (n = 0; n < NKINDS; n++)
		if (attach_one(&kinds[n], id, &a[n]))
			break;
	if (n == NKINDS)
		bpf_prog_test_run_opts(a[FMOD_RET].prog, &run);
	detach(a, n);
}

/*
 * module_alloc() names its own caller in /proc/vmallocinfo: for ftrace's
 * trampolines alloc_tramp(), in create_trampoline(), in
 * arch_ftrace_update_trampoline(), whichever the compiler kept.
 */
static const char *const ftrace_callers[] = {
	"arch_ftrace_update_trampoline+", "create_trampoline+", "alloc_tramp+",
};

#define DIRECT_MAP_SECTION	"Low Kernel Mapping"	/* ptdump's name for the direct map */
#define PAGE_4K			4096ULL
#define BLOCK_2M		(512 * PAGE_4K)

/* Addresses, in the order ptdump walks them: ascending. */
struct addr_set {
	uint64_t *addr;
	int n, cap;
	bool nomem;
};

static void addr_set_add(struct addr_set *s, uint64_t addr)
{
	uint64_t *more;

	if (s->nomem || (s->n && s->addr[s->n - 1] == addr))
		return;
	if (s->n == s->cap) {
		more = realloc(s->addr, (s->cap + 256) * sizeof(*more));
		if (!more) {
			s->nomem = true;
			return;
		}
		s->addr = more;
		s->cap += 256;
	}
	s->addr[s->n++] = addr;
}

static bool addr_set_has(const struct addr_set *s, uint64_t addr)
{
	int lo = 0, hi = s->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (s->addr[mid] == addr)
			return true;
		if (s->addr[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* What a split of the direct map leaves in ptdump, and what executable pages cause one. */
struct pt_pages {
	struct addr_set rox;	/* 4K pages read-only and executable in Modules */
	struct addr_set ro;	/* 4K pages read-only in the direct map */
	struct addr_set split;	/* 2M blocks of the direct map mapped (partly) by 4K entries */
};

static void pt_pages_add(const char *section, const struct pt_range *r, void *ctx)
{
	struct pt_pages *p = ctx;
	uint64_t a;

	if (r->shift != 12)
		return;
	if (!strcmp(section, MODULES_SECTION) && r->present && !r->rw && r->x) {
		for (a = r->start; a < r->end; a += PAGE_4K)
			addr_set_add(&p->rox, a);
	} else if (!strcmp(section, DIRECT_MAP_SECTION)) {
		for (a = r->start & ~(BLOCK_2M - 1); a < r->end; a += BLOCK_2M)
			addr_set_add(&p->split, a);
		for (a = r->start; r->present && !r->rw && a < r->end; a += PAGE_4K)
			addr_set_add(&p->ro, a);
	}
}

static void pt_pages_free(struct pt_pages *p)
{
	free(p->rox.addr);
	free(p->ro.addr);
	free(p->split.addr);
	memset(p, 0, sizeof(*p));
}

static int pt_pages_read(struct pt_pages *p)
{
	FILE *f = fopen(PTDUMP_PATH, "r");
	int err;

	memset(p, 0, sizeof(*p));
	if (!f)
		return -errno;
	err = ptdump_walk(f, pt_pages_add, p);
	fclose(f);
	if (!err && (p->rox.nomem || p->ro.nomem || p->split.nomem))
		err = -ENOMEM;
	if (err)
		pt_pages_free(p);
	return err;
}

/* The /proc/vmallocinfo line of the area holding @addr (freed ones aside), or "?". */
static void vmalloc_area_of(uint64_t addr, char *line, size_t size)
{
	FILE *f = fopen("/proc/vmallocinfo", "r");
	unsigned long long start, end;

	if (f) {
		while (fgets(line, size, f)) {
			line[strcspn(line, "\n")] = 0;
			if (sscanf(line, "0x%llx-0x%llx", &start, &end) == 2 && addr >= start &&
			    addr < end && !strstr(line, "unpurged vm_area")) {
				fclose(f);
				return;
			}
		}
		fclose(f);
	}
	snprintf(line, size, "?");
}

/* The caller in a /proc/vmallocinfo line: its third field. */
static const char *vmalloc_caller(const char *line)
{
	const char *c = line + strcspn(line, " ");

	c += strspn(c, " ");
	c += strcspn(c, " ");
	return c + strspn(c, " ");
}

/* Adds the function of @caller ("fn+0x1/0x2 ...") to @list once. */
static void add_owner(char *list, size_t size, const char *caller)
{
	char fn[64];
	size_t len = strlen(list);

	snprintf(fn, sizeof(fn), "%.*s", (int)strcspn(caller, "+ "), caller);
	if (!strstr(list, fn) && len + strlen(fn) + 3 < size)
		snprintf(list + len, size - len, "%s%s", len ? ", " : "", fn);
}

/* Where check_direct_map() asserts: huge packs on the patched kernel. */
static bool judge_direct_map(void)
{
	return PATCHED_HAS(packstats_available(), PACKSTATS_PATH) &&
	       expect_huge_vmalloc(test__args());
}

#define MAX_TRAMPS 8	/* ftrace trampoline pages whose aliases are looked for */

/*
 * The warm-up's cost, from @start (the test's first snapshot, @pt_start its
 * pages) to @warm.  Every 2M or 1G split counted, and every 2M of
 * DirectMap4k, is a page ftrace made for a trampoline (a 4K RO+X area in
 * Modules whose vmallocinfo caller is ftrace's): no more of them than of
 * those pages.  Every 2M block of the direct map split since holds the
 * alias of such a page, and no other read-only page: no RO+X page of
 * anyone else (BPF's images are in packs) shares the block that ftrace's
 * page split.  An alias is found by its bytes, read through /proc/kcore:
 * the same page twice.  (A pack may take a 2M block split before the start
 * and make it read-only: that block is not counted, nor is it a split.)
 */
static void check_first_attach(const struct mem_snapshot *start,
			       const struct pt_pages *pt_start, const struct mem_snapshot *warm)
{
	long long l2 = warm->l2_splits - start->l2_splits, l3 = warm->l3_splits - start->l3_splits;
	long long dm4k = warm->dm4k_kb - start->dm4k_kb;
	static unsigned char tramp[MAX_TRAMPS][PAGE_4K], page[PAGE_4K];
	char line[512], ftrace_own[96] = "", other_own[96] = "";
	int i, k, ftrace = 0, read = 0, other = 0, aliases = 0, stray = 0, lone = 0;
	struct addr_set blocks = {}, alias_blocks = {};
	struct pt_pages now;
	size_t c;

	if (!ASSERT_OK(pt_pages_read(&now), "ptdump after the warm-up"))
		return;
	for (i = 0; i < now.rox.n; i++) {
		uint64_t addr = now.rox.addr[i];
		const char *caller;
		bool theirs = false;

		if (addr_set_has(&pt_start->rox, addr))
			continue;
		vmalloc_area_of(addr, line, sizeof(line));
		caller = vmalloc_caller(line);
		for (c = 0; c < sizeof(ftrace_callers) / sizeof(ftrace_callers[0]); c++)
			theirs |= !strncmp(caller, ftrace_callers[c], strlen(ftrace_callers[c]));
		printf("new 4K RO+X page in Modules at 0x%" PRIx64 ", %s: %s\n", addr,
		       theirs ? "ftrace's" : "not ftrace's", line);
		if (!theirs) {
			other++;
			add_owner(other_own, sizeof(other_own), caller);
			continue;
		}
		ftrace++;
		add_owner(ftrace_own, sizeof(ftrace_own), caller);
		if (read < MAX_TRAMPS && !kcore_read(addr, tramp[read], PAGE_4K))
			read++;
	}
	/* the 2M blocks of the direct map split since the start */
	for (i = 0; i < now.split.n; i++)
		if (!addr_set_has(&pt_start->split, now.split.addr[i]))
			addr_set_add(&blocks, now.split.addr[i]);
	/* the read-only 4K pages in them: each the alias of one of those trampoline pages */
	for (i = 0; i < now.ro.n; i++) {
		uint64_t addr = now.ro.addr[i], block = addr & ~(BLOCK_2M - 1);
		bool alias = false;

		if (!addr_set_has(&blocks, block))
			continue;
		if (read && !kcore_read(addr, page, PAGE_4K))
			for (k = 0; k < read && !alias; k++)
				alias = !memcmp(page, tramp[k], PAGE_4K);
		if (alias || stray < 8)
			printf("read-only 4K page in the direct map at 0x%" PRIx64 ": %s\n", addr,
			       alias ? "the alias of a ftrace trampoline page" :
			       "no ftrace trampoline page's alias");
		if (alias) {
			aliases++;
			addr_set_add(&alias_blocks, block);
		} else {
			stray++;
		}
	}
	if (stray > 8)
		printf("... and %d more that are no ftrace trampoline page's alias\n", stray - 8);
	for (i = 0; i < blocks.n; i++) {
		bool held = addr_set_has(&alias_blocks, blocks.addr[i]);

		printf("2M block of the direct map at 0x%" PRIx64 " split since the start: %s\n",
		       blocks.addr[i], held ? "holds a ftrace trampoline page's alias" :
		       "holds no ftrace trampoline page's alias");
		lone += !held;
	}
	free(blocks.addr);
	free(alias_blocks.addr);
	pt_pages_free(&now);
	printf("first attaches: splits %lld+%lld -> %lld+%lld, DirectMap4k %lld -> %lld kB, "
	       "4K entries %llu -> %llu; 2M blocks split %d, %d holding a ftrace trampoline "
	       "page's alias; read-only 4K pages in them %d, %d of them aliases\n",
	       start->l2_splits, start->l3_splits, warm->l2_splits, warm->l3_splits,
	       start->dm4k_kb, warm->dm4k_kb,
	       (unsigned long long)pt_entries(&start->direct, PT_4K),
	       (unsigned long long)pt_entries(&warm->direct, PT_4K), blocks.n, blocks.n - lone,
	       aliases + stray, aliases);
	test__note("the warm-up: 2M splits %+lld, 1G %+lld, DirectMap4k %+lld kB, new 4K RO+X in "
		   "Modules: %d ftrace's%s%s%s, %d others%s%s%s: ftrace's trampoline for the first "
		   "trampoline replacement's ops, not BPF's", l2, l3, dm4k, ftrace, ftrace ? " (" : "",
		   ftrace_own, ftrace ? ")" : "", other, other ? " (" : "", other_own,
		   other ? ")" : "");
	if (!judge_direct_map())
		return;
	/* patch 22: ftrace's page comes from a block whose direct map is read-only already */
	if (ro_blocks_on()) {
		ASSERT_EQ(l2, 0, "2M splits by the first attaches");
		ASSERT_EQ(dm4k, 0, "DirectMap4k by the first attaches");
	}
	ASSERT_LE(l2, ftrace, "2M splits by the first attaches: ftrace's trampoline pages' alone");
	ASSERT_LE(l3, ftrace, "1G splits by the first attaches: ftrace's trampoline pages' alone");
	ASSERT_LE(dm4k, 2048LL * ftrace,
		  "DirectMap4k by the first attaches: at most 2M a ftrace trampoline page");
	ASSERT_EQ(lone, 0, "2M blocks split by the first attaches: each holds a ftrace "
		  "trampoline page's alias");
	ASSERT_EQ(stray, 0, "read-only 4K pages in the 2M blocks split by the first attaches: "
		  "ftrace trampoline pages' aliases alone");
}

/* After the subtests: every split since @start is the warm-up's (@warm). */
static void check_since_start(const struct mem_snapshot *start, const struct mem_snapshot *warm)
{
	struct mem_snapshot end;

	if (!ASSERT_OK(snapshot_take(&end), "snapshot at the end"))
		return;
	printf("since the start: splits %lld+%lld -> %lld+%lld (%lld+%lld after the warm-up), "
	       "DirectMap4k %lld -> %lld kB (%lld)\n", start->l2_splits, start->l3_splits,
	       end.l2_splits, end.l3_splits, warm->l2_splits, warm->l3_splits,
	       start->dm4k_kb, end.dm4k_kb, warm->dm4k_kb);
	test__note("since the start: 2M splits %+lld, 1G %+lld, DirectMap4k %+lld kB; the "
		   "warm-up's %+lld, %+lld, %+lld kB", end.l2_splits - start->l2_splits,
		   end.l3_splits - start->l3_splits, end.dm4k_kb - start->dm4k_kb,
		   warm->l2_splits - start->l2_splits, warm->l3_splits - start->l3_splits,
		   warm->dm4k_kb - start->dm4k_kb);
	if (!judge_direct_map())
		return;
	ASSERT_EQ(end.l2_splits - start->l2_splits, warm->l2_splits - start->l2_splits,
		  "2M splits since the start: the warm-up's alone");
	ASSERT_EQ(end.l3_splits - start->l3_splits, warm->l3_splits - start->l3_splits,
		  "1G splits since the start: the warm-up's alone");
	ASSERT_LE(end.dm4k_kb, warm->dm4k_kb, "DirectMap4k since the warm-up");
}

void test_tramp_churn(void)
{
	static const struct {
		const char *name;
		void (*run)(const struct leak_state *before);
	} subtests[] = {
		{ "syscalls", test_syscalls },
		{ "max_links", test_max_links },
	};
	struct tramp_churn *skel = NULL;
	struct mem_snapshot start, warm, snap;
	struct pt_pages pt_start = {};
	struct leak_state before;
	bool measured;
	size_t i;

	/* before the test's first attach: with -t tramp_churn, as close to boot as can be */
	measured = ASSERT_OK(snapshot_take(&start), "snapshot at the start") &&
		   ASSERT_OK(pt_pages_read(&pt_start), "ptdump at the start");
	if (!ASSERT_OK(kinds_init(&skel), "open tramp_churn.bpf.o, parse the kernel's BTF") ||
	    !ASSERT_OK(write_file(BPF_STATS, "1"), "enable bpf_stats"))
		goto out;
	warm_up(func_btf_id("bpf_modify_return_test"));
	measured = measured && ASSERT_OK(snapshot_take(&warm), "snapshot after the warm-up");
	if (test__start_subtest("first_attach") &&
	    ASSERT_TRUE(measured, "snapshots before and after the warm-up"))
		check_first_attach(&start, &pt_start, &warm);
	for (i = 0; i < sizeof(subtests) / sizeof(subtests[0]); i++) {
		if (!test__start_subtest(subtests[i].name))
			continue;
		if (!ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
		    !ASSERT_OK(leak_state_read(&before), "leak state before") ||
		    !ASSERT_OK(snapshot_take(&snap), "snapshot before"))
			continue;
		subtests[i].run(&before);
		check_invariants(subtests[i].name);
		check_direct_map(&snap, NULL);
	}
	if (test__start_subtest("since_start") &&
	    ASSERT_TRUE(measured, "snapshots before and after the warm-up"))
		check_since_start(&start, &warm);
	write_file(BPF_STATS, "0");
out:
	pt_pages_free(&pt_start);
	btf__free(vmlinux);
	tramp_churn__destroy(skel);
}
