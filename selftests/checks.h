/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checks the guest tests share: the packs as the page tables, /proc/kcore
 * and /proc/vmallocinfo see them, and what a load may leave behind.
 * Failures are reported through the runner's ASSERT_*().
 */
#ifndef CHECKS_H
#define CHECKS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "lib/packstats.h"

#define TRAP		0xcc	/* x86 int3 */
#define ENOTSUPP	524	/* the kernel's, when a JIT-always-on JIT fails */
#define SETTLE_MS	20000
#define JIT_LIMIT	"/proc/sys/net/core/bpf_jit_limit"
#define NOBODY		65534	/* uid and gid of a user with no capability */

/*
 * -a expect-patched: the runner runs on a kernel with the series, so the
 * files and counters it adds must be there: the pack statistics
 * (PACKSTATS_PATH), the pack cache's parameters (PACK_PARAM()), the exec
 * pool's debugfs file, the direct map's collapse counters in /proc/vmstat.
 * There, a test that would skip, or leave an assertion out, because one of
 * them is missing FAILs instead: "patched kernel: <what> missing".  Without
 * it (the base kernel, Debian's own) a missing one only turns off what
 * depends on it, as a kernel without the series has none of them.
 */
bool expect_patched(void);
void patched_missing(const char *file, int line, const char *what);

/* @present (is @what there?), after a FAIL under expect-patched if it is not. */
#define PATCHED_HAS(present, what) ({					\
	bool ___present = !!(present);					\
	if (!___present && expect_patched())				\
		patched_missing(__FILE__, __LINE__, what);		\
	___present;							\
})

/*
 * For a test of the series' own code: @present (is @what there?); if not,
 * the test or subtest is skipped as run on a kernel without the series,
 * or FAILs under expect-patched.
 */
#define REQUIRE_PATCHED(present, what) ({				\
	bool ___there = PATCHED_HAS(present, what);			\
	if (!___there && !expect_patched())				\
		test__skip("no %s: not the patched kernel", what);	\
	___there;							\
})

/* The pack cache's parameters (bpf_prog_pack.idle_secs, .reserve) are there. */
#define HAVE_PACK_PARAMS() \
	PATCHED_HAS(!access(PACK_PARAM("idle_secs"), W_OK), PACK_PARAM("idle_secs"))

#define VMSTAT_L2_COLLAPSES "/proc/vmstat direct_map_level2_collapses"
/* heals_direct_map(@s): the kernel counts collapses (patch 21), which it must under expect-patched. */
#define HEALS_DIRECT_MAP(s) PATCHED_HAS(heals_direct_map(s), VMSTAT_L2_COLLAPSES)

#define RO_ALIAS_PATH	"/sys/kernel/debug/vmalloc_ro_alias"
#define POOL_PATH	"/sys/kernel/debug/vmalloc_exec_pool"
#define EXEC_PAGES_CTL	"/sys/kernel/debug/exec_pages"

/*
 * Do module_alloc() pages come from blocks whose direct map is read-only
 * (patch 22)?  Its debugfs file says "enabled 1" (not under debug_pagealloc
 * nor vmalloc_ro_alias=off); under expect-patched a FAIL if it is missing.
 */
bool ro_blocks_on(void);

/*
 * exec_pages.ko's "alias" on @what's pages ("module": its own text, rodata
 * and ro_after_init; "slot": the kprobe slots it holds; "tramp": its ftrace
 * trampolines): at least @min pages, none with a writable direct-map alias,
 * every alias mapped.  How many sit on a 2M or 1G entry is printed: with
 * ro_blocks_on() most do, but a block may lie where the direct map was
 * split before, as set_memory_4k() leaves it.
 */
void check_exec_alias(const char *what, long long min);

/*
 * [start, start + size) is mapped read-only, executable, in Modules, by
 * entries of 1 << @shift bytes, and nothing is W+X.  @size 0: only W+X.
 */
void check_mapping(uint64_t start, long long size, unsigned int shift);

/* The /proc/vmallocinfo line of the area starting at @addr: 0, or -errno. */
int vmallocinfo_line(uint64_t addr, char *line, size_t size);
/* Is there a /proc/vmallocinfo area starting at @addr? */
bool in_vmallocinfo(uint64_t addr);
/* The size /proc/vmallocinfo gives the area at @addr (guard page included), or -1. */
long long vmallocinfo_size(uint64_t addr);

/*
 * Every pack in @st: its chunk counts agree, it is a vmalloc area, it is
 * mapped read-only and executable at its page size in Modules, and every
 * byte of every free chunk is int3.  Also: no W+X mapping anywhere.  An
 * empty pack (kept for reuse) that the kernel frees while it is checked is
 * said so and passes.
 */
void check_all_packs(const struct pack_stats *st, const char *when);

/*
 * check_all_packs() on the packs there are now (none on a kernel without
 * stats; under expect-patched a FAIL there).
 */
void check_invariants(const char *when);

/*
 * What a failed or finished load must give back: live programs, packs,
 * bytes in packs, programs larger than a pack, images (trampolines,
 * struct_ops) in packs, areas in the module range in /proc/vmallocinfo,
 * and the JIT budget charged (bpf_jit_current).
 */
struct leak_state {
	int progs;
	long long packs, bytes_in_use, oversized, images;
	int exec_areas;
	long long jit_charged;
};

/*
 * 0, or -errno: -ENOENT (and a FAIL saying why) under expect-patched
 * when the pack statistics are missing.
 */
int leak_state_read(struct leak_state *s);

/*
 * Waits (up to SETTLE_MS, for the deferred frees) until the state is
 * @before again, then asserts every field equal.  @when names the check.
 */
bool check_no_leak(const struct leak_state *before, const char *when);

/*
 * With @n images (trampolines, struct_ops) live beyond @base: waits (up to
 * SETTLE_MS, for deferred frees of earlier ones) until the packs count
 * that many and the JIT budget charged beyond @base is what the packs hold
 * beyond it (read one after the other: both settled), then asserts both,
 * and check_all_packs().  With @st, the
 * statistics are left there for the caller, who frees them, unless it
 * returns false before reading them.  Only on a kernel with pack statistics.
 */
bool check_images(const struct leak_state *base, long long n, struct pack_stats *st,
		  const char *when);

struct mem_snapshot;
/*
 * From @before to @after (NULL: now): no direct-map split, DirectMap4k and
 * ptdump's 4K direct-map entries no higher (a collapse may lower them),
 * asserted where packs are huge (the patched kernel booted without
 * nohugevmalloc: with the pack statistics, which under expect-patched
 * must be there), printed everywhere.
 */
void check_direct_map(const struct mem_snapshot *before, const struct mem_snapshot *after);

/*
 * Once everything that split the direct map since @before is freed, at
 * @after: ptdump's 4K direct-map entries and the live 1G split count no
 * higher than at @before, and DirectMap4k and the live 2M split count no
 * higher but for what the kernel image's high mapping gained, asserted on
 * a kernel that collapses (patch 21; under expect-patched a kernel without
 * the collapse counters FAILs), printed everywhere.  @what names the
 * workload.
 */
void check_healed(const struct mem_snapshot *before, const struct mem_snapshot *after,
		  const char *what);

/*
 * Runs @fn in a child that is nobody, with no capability (bpf_jit_limit
 * binds only there); @fn leaves its result in @res, @len bytes, which the
 * child sends back.  0 with @res filled, or -EIO when the child could not
 * get that far.  With @keep, the child then stays, holding what it made,
 * and its pid goes to *@keep for the caller to kill; else it is reaped.
 */
int run_as_nobody(void (*fn)(void *res), void *res, size_t len, pid_t *keep);

/* Fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS): the attributes */
#define FAULT_DIR	"/sys/kernel/debug/"
#define FAIL_PAGE_ALLOC	"fail_page_alloc"
#define FAILSLAB	"failslab"

enum fault_mode {
	FAULT_OFF,	/* the boot defaults: nothing fails */
	FAULT_NTH,	/* only what /proc/thread-self/fail-nth picks fails, with
			 * a notice in the log, not rate limited, and for
			 * failslab its stack trace */
	FAULT_ALWAYS,	/* every call fails */
};

bool fault_available(const char *attr);
/*
 * Sets @attr up for @mode; page allocations fail from order @min_order.
 * Sleeping (GFP_KERNEL) and highmem calls can fail except in FAULT_OFF.
 */
int fault_setup(const char *attr, enum fault_mode mode, int min_order);

#endif
