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
 * The programs come from progs/tramp_churn.bpf.c.  A skeleton's load
 * parses the kernel's BTF each time, which a thousand loads cannot afford
 * under TCG: the test takes the instructions from the skeleton once and
 * loads them with bpf_prog_load() for each target, whose BTF id it looks
 * up in one parse of the kernel's BTF.
 */
#include <errno.h>
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
#include "../lib/packstats.h"
#include "../lib/progs.h"
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

	if (!packstats_available() || !check_images(base, ntramp, &st, when))
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
 * The first fexit or fmod_ret on a function makes ftrace allocate a
 * trampoline of its own (arch_ftrace_update_trampoline) that it keeps, a
 * 4K page made read-only on the unpatched kernel as on ours: ftrace's,
 * not BPF's.  Have it made before the baselines.
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
	struct mem_snapshot snap;
	struct leak_state before;
	size_t i;

	if (!ASSERT_OK(kinds_init(&skel), "open tramp_churn.bpf.o, parse the kernel's BTF") ||
	    !ASSERT_OK(write_file(BPF_STATS, "1"), "enable bpf_stats"))
		goto out;
	warm_up(func_btf_id("bpf_modify_return_test"));
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
	write_file(BPF_STATS, "0");
out:
	btf__free(vmlinux);
	tramp_churn__destroy(skel);
}
