// SPDX-License-Identifier: GPL-2.0
/*
 * The direct map's collapse (patch 21) on memory that was hot-added, and
 * above a hole of more than 512 GiB.  make test-hotplug boots 2 GiB and two
 * pc-dimms of 512 MiB at 1 TiB, one aligned 1 GiB, that the guest adds
 * through ACPI at boot (they are not in its firmware memory map) and onlines
 * movable (memhp_default_state=online_movable).  Between 2 GiB and 1 TiB
 * nothing is mapped: no PGD entry maps [512 GiB, 1 TiB).
 *
 *   above_hole     a two-page area, a page of boot memory and a page of a
 *                  DIMM, made read-only and freed (VM_FLUSH_RESET_PERMS):
 *                  both 2M entries collapse again.  A collapse that walked
 *                  the span between the pages would cross the PGD entry
 *                  that maps nothing and read physical page 0 as a PUD table.
 *   one_gib_blocks a page of the first DIMM made read-only, then read-write:
 *                  its 2M entry comes back, never a 1G entry over the two
 *                  DIMMs.  Memory is removed a block (128 MiB) at a time;
 *                  remove_pud_table() clears a 1G entry only when the range
 *                  covers it whole, and would take the first page of its
 *                  data for a PMD table.
 *   eject          the second DIMM ejected (ACPI, as a hypervisor's unplug
 *                  request ends): its direct map goes, the first DIMM's
 *                  stays mapped.
 *
 * The same boot has a virtio-mem device of 1 GiB at 1 TiB + 1 GiB, plugged
 * at boot.  Its driver adds memory a block at a time and plugs 2 MiB
 * sub-blocks; the guest asks for a new size on its console and the launcher
 * (guest/run-qemu.sh, VMEM=) passes it to QEMU's monitor, as a hypervisor
 * resizes a VM:
 *   virtio_mem_plugged   its blocks online, mapped 2M; a page of its first
 *                        block made read-only, then read-write: a 2M entry
 *                        again, never a 1G entry over its eight blocks.
 *   virtio_mem_unplug    half of it unplugged: the driver offlines and
 *                        removes four blocks; their direct map goes, the
 *                        other four stay mapped 2M, first MiB to last.
 *   virtio_mem_replug    all of it plugged again: every block back, mapped
 *                        2M, and a page of the re-plugged half collapses
 *                        back to 2M, not 1G.
 *
 * On a guest of 16 GiB or more without DIMMs (make measure-collapse boots
 * 64 GiB, without 1G pages):
 *   span_cost      the same two-page area with a page in the first and one in
 *                  the last GiB of memory: notes how long its vfree() took,
 *                  the reset and the collapse, with cpa_lock and pgd_lock
 *                  held for most of it.  A time, not asserted.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../checks.h"
#include "../lib/dmap_heal.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define ACPI_DEVICES	"/sys/bus/acpi/devices"
#define MEMORY_DIR	"/sys/devices/system/memory"
#define MAX_DIMMS	4
#define MAX_BLOCKS	64
#define GIB_MIB		1024ULL
#define TIB_MIB		(1024 * GIB_MIB)
#define EJECT_WAIT_S	120
/* virtio-mem's resize, within this, asked again every VMEM_ASK_S */
#define VMEM_WAIT_S	300
#define VMEM_ASK_S	30

struct dimm {
	char acpi[NAME_MAX + 1];		/* PNP0C80:NN */
	unsigned long long start_mib, size_mib;
	int blocks[MAX_BLOCKS], nr_blocks;
};

static unsigned long long block_mib;

/* The DIMMs ACPI added, by their memory blocks, lowest first: how many, or -errno */
static int dimms_find(struct dimm *d, int max)
{
	char path[PATH_MAX], link[PATH_MAX], buf[64];
	struct dirent *e;
	int n = 0, i, j;
	DIR *dir;

	if (read_file(MEMORY_DIR "/block_size_bytes", buf, sizeof(buf)) < 0)
		return -ENOENT;
	block_mib = strtoull(buf, NULL, 16) >> 20;
	if (!block_mib)
		return -EINVAL;
	dir = opendir(ACPI_DEVICES);
	if (!dir)
		return -errno;
	while ((e = readdir(dir)) && n < max) {
		struct dimm *m = &d[n];

		if (strncmp(e->d_name, "PNP0C80:", 8))
			continue;
		memset(m, 0, sizeof(*m));
		snprintf(m->acpi, sizeof(m->acpi), "%s", e->d_name);
		m->start_mib = ULLONG_MAX;
		for (i = 0; i < MAX_BLOCKS; i++) {
			const char *base;
			ssize_t len;
			int id;

			if (i)
				snprintf(path, sizeof(path), ACPI_DEVICES "/%s/physical_node%d", m->acpi, i);
			else
				snprintf(path, sizeof(path), ACPI_DEVICES "/%s/physical_node", m->acpi);
			len = readlink(path, link, sizeof(link) - 1);
			if (len < 0)
				break;
			link[len] = '\0';
			base = strrchr(link, '/');
			if (!base || sscanf(base, "/memory%d", &id) != 1)
				continue;
			m->blocks[m->nr_blocks++] = id;
			if (id * block_mib < m->start_mib)
				m->start_mib = id * block_mib;
		}
		if (!m->nr_blocks)
			continue;
		m->size_mib = m->nr_blocks * block_mib;
		n++;
	}
	closedir(dir);
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && d[j].start_mib < d[j - 1].start_mib; j--) {
			struct dimm t = d[j];

			d[j] = d[j - 1];
			d[j - 1] = t;
		}
	return n;
}

static bool block_present(int id)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), MEMORY_DIR "/memory%d", id);
	return !stat(path, &st);
}

static bool block_online(int id)
{
	char path[PATH_MAX], buf[32];

	snprintf(path, sizeof(path), MEMORY_DIR "/memory%d/online", id);
	return read_file(path, buf, sizeof(buf)) > 0 && buf[0] == '1';
}

/* The level and presence of the direct map at @mib MiB */
static bool mapped_at(unsigned long long mib, long long *level)
{
	if (!ASSERT_OK(dmap_heal_cmd("mapped %llu", mib), "dmap_heal mapped"))
		return false;
	*level = dmap_heal_result("level");
	return dmap_heal_result("present") == 1;
}

static void above_hole(const struct dimm *d)
{
	long long level, low, high;

	/* the shape: nothing mapped between boot memory and the DIMMs */
	ASSERT_FALSE(mapped_at(768 * GIB_MIB, &level), "nothing mapped at 768 GiB");
	if (!ASSERT_GE(d->start_mib, TIB_MIB, "a DIMM at 1 TiB or above") ||
	    !ASSERT_OK(dmap_heal_cmd("span %llu", d->start_mib), "dmap_heal span"))
		return;
	low = dmap_heal_result("low_mib");
	high = dmap_heal_result("high_mib");
	ASSERT_LT(low, 2 * GIB_MIB, "one page in boot memory");
	ASSERT_GE(high, (long long)d->start_mib, "one page in the DIMM");
	ASSERT_EQ(dmap_heal_result("low_ro"), 1, "boot page split read-only");
	ASSERT_EQ(dmap_heal_result("high_ro"), 1, "DIMM page split read-only");
	ASSERT_EQ(dmap_heal_result("low_after"), 2, "boot page's 2M entry back");
	ASSERT_EQ(dmap_heal_result("high_after"), 2, "DIMM page's 2M entry back");
	test__note("pages at %lld MiB and %lld MiB: split and collapsed, nothing between walked",
		   low, high);
}

/* A page of hot-added memory at @mib made read-only, then read-write: 2M again, not 1G */
static void touch(unsigned long long mib)
{
	long long l3 = read_vmstat("direct_map_level3_collapses");

	if (!ASSERT_OK(dmap_heal_cmd("touch %llu", mib), "dmap_heal touch"))
		return;
	ASSERT_EQ(dmap_heal_result("before"), 2, "hot-added memory mapped 2M");
	ASSERT_EQ(dmap_heal_result("ro"), 1, "read-only: split to 4K");
	ASSERT_EQ(dmap_heal_result("after"), 2, "read-write: a 2M entry again, not 1G");
	ASSERT_EQ(dmap_heal_result("gb_first"), 2, "the 1 GiB's first page: 2M");
	ASSERT_EQ(read_vmstat("direct_map_level3_collapses"), l3, "no 1G collapse");
}

static void one_gib_blocks(const struct dimm *d)
{
	if (ASSERT_EQ(d[0].start_mib % GIB_MIB, 0, "first DIMM 1 GiB aligned") &&
	    ASSERT_EQ(d[1].start_mib, d[0].start_mib + d[0].size_mib, "second DIMM next to it") &&
	    ASSERT_EQ(d[0].size_mib + d[1].size_mib, GIB_MIB, "the two make 1 GiB"))
		touch(d[0].start_mib);
}

static void eject(const struct dimm *d)
{
	char path[PATH_MAX];
	long long level;
	int i, waited;

	snprintf(path, sizeof(path), ACPI_DEVICES "/%s/eject", d[1].acpi);
	if (!ASSERT_OK(write_file(path, "1"), "eject the second DIMM"))
		return;
	/* the blocks' devices go first, then the memory and its direct map */
	for (waited = 0; waited < EJECT_WAIT_S; waited++) {
		for (i = 0; i < d[1].nr_blocks && !block_present(d[1].blocks[i]); i++)
			;
		if (i == d[1].nr_blocks && !mapped_at(d[1].start_mib, &level))
			break;
		sleep(1);
	}
	if (!ASSERT_LT(waited, EJECT_WAIT_S, "its memory blocks removed, its direct map gone"))
		return;
	ASSERT_TRUE(mapped_at(d[0].start_mib, &level), "the first DIMM mapped");
	ASSERT_EQ(level, 2, "the first DIMM: 2M entries");
	ASSERT_TRUE(mapped_at(d[0].start_mib + d[0].size_mib - 1, &level),
		    "the first DIMM's last MiB mapped");
	for (i = 0; i < d[0].nr_blocks; i++)
		ASSERT_TRUE(block_online(d[0].blocks[i]), "the first DIMM's blocks online");
	test__note("ejected %s (%llu MiB at %llu MiB) in %d s", d[1].acpi, d[1].size_mib,
		   d[1].start_mib, waited);
}

struct vmem {
	unsigned long long start_mib, size_mib;
	int first_block, nr_blocks;
};

/*
 * The virtio-mem device's region: the driver reserves all of it as a
 * top-level resource named after the device ("START-END : virtioN"), and
 * adds its memory blocks inside.  False if there is none.
 */
static bool vmem_find(struct vmem *v)
{
	unsigned long long start, end;
	char line[256];
	bool found = false;
	FILE *f = fopen("/proc/iomem", "r");
	int id;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = line[0] != ' ' &&
			sscanf(line, "%llx-%llx : virtio%d", &start, &end, &id) == 3;
	fclose(f);
	if (!found || !block_mib)
		return false;
	v->start_mib = start >> 20;
	v->size_mib = (end + 1 - start) >> 20;
	v->first_block = v->start_mib / block_mib;
	v->nr_blocks = v->size_mib / block_mib;
	return true;
}

/*
 * Asks the host for a new size: the launcher passes this line to QEMU.  On
 * the console, not stdout, which the runner holds until the subtest ends.
 */
static int vmem_request(unsigned long long mib)
{
	char line[64];

	snprintf(line, sizeof(line), "=== VMEM REQUEST %lluM ===\n", mib);
	return write_file("/dev/console", line);
}

/* How many of the region's blocks are online; *absent: how many are gone */
static int vmem_online(const struct vmem *v, int *absent)
{
	int i, online = 0;

	*absent = 0;
	for (i = 0; i < v->nr_blocks; i++) {
		if (!block_present(v->first_block + i))
			(*absent)++;
		else if (block_online(v->first_block + i))
			online++;
	}
	return online;
}

/*
 * Waits until @want of the region's blocks are online and the others gone,
 * asking for @want blocks' worth again now and then (a kernel line printed
 * into the request cuts it): the seconds it took, or -1.
 */
static int vmem_resize(const struct vmem *v, int want)
{
	int waited, online, absent;

	for (waited = 0; waited < VMEM_WAIT_S; waited++) {
		if (waited % VMEM_ASK_S == 0 &&
		    !ASSERT_OK(vmem_request(want * block_mib), "ask on /dev/console"))
			return -1;
		online = vmem_online(v, &absent);
		if (online == want && absent == v->nr_blocks - want)
			return waited;
		sleep(1);
	}
	test__note("after %d s: %d blocks online, %d gone, of %d", waited, online, absent,
		   v->nr_blocks);
	return -1;
}

/* Every block present is mapped 2M, first MiB to last; every one gone, not mapped */
static void vmem_mapped(const struct vmem *v)
{
	unsigned long long mib;
	long long level;
	int i, absent;

	for (i = 0; i < v->nr_blocks; i++) {
		mib = (v->first_block + i) * block_mib;
		if (!block_present(v->first_block + i)) {
			ASSERT_FALSE(mapped_at(mib, &level), "a block gone: not mapped");
			continue;
		}
		ASSERT_TRUE(mapped_at(mib, &level) && level == 2, "a block's first MiB mapped 2M");
		ASSERT_TRUE(mapped_at(mib + block_mib - 1, &level) && level == 2,
			    "a block's last MiB mapped 2M");
	}
	vmem_online(v, &absent);
	test__note("%d of %d blocks mapped 2M, %d gone", v->nr_blocks - absent, v->nr_blocks,
		   absent);
}

static void vmem_plugged(const struct vmem *v)
{
	int waited;

	if (!ASSERT_EQ(v->start_mib % GIB_MIB, 0, "virtio-mem region 1 GiB aligned") ||
	    !ASSERT_EQ(v->size_mib, GIB_MIB, "virtio-mem region of 1 GiB"))
		return;
	waited = vmem_resize(v, v->nr_blocks);
	if (!ASSERT_GE(waited, 0, "all its blocks plugged and online"))
		return;
	vmem_mapped(v);
	touch(v->start_mib);
}

static void vmem_unplug(const struct vmem *v)
{
	int waited = vmem_resize(v, v->nr_blocks / 2);

	if (!ASSERT_GE(waited, 0, "half its blocks unplugged and removed"))
		return;
	vmem_mapped(v);
	test__note("unplugged %llu MiB in %d s", v->size_mib / 2, waited);
}

static void vmem_replug(const struct vmem *v)
{
	int waited = vmem_resize(v, v->nr_blocks);

	if (!ASSERT_GE(waited, 0, "all its blocks plugged and online again"))
		return;
	vmem_mapped(v);
	touch(v->start_mib + v->size_mib / 2);
	test__note("plugged %llu MiB again in %d s", v->size_mib / 2, waited);
}

/* The end of the highest System RAM range in /proc/iomem, in MiB, or 0 */
static unsigned long long ram_top_mib(void)
{
	unsigned long long start, end, top = 0;
	char line[256];
	FILE *f = fopen("/proc/iomem", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (line[0] != ' ' && strstr(line, ": System RAM") &&
		    sscanf(line, "%llx-%llx", &start, &end) == 2 && end + 1 > top)
			top = end + 1;
	fclose(f);
	return top >> 20;
}

static void span_cost(unsigned long long top_mib)
{
	unsigned long long last = (top_mib - GIB_MIB) & ~(GIB_MIB - 1);

	if (!ASSERT_OK(dmap_heal_cmd("span %llu", last), "dmap_heal span"))
		return;
	ASSERT_EQ(dmap_heal_result("low_after"), 2, "first page's 2M entry back");
	ASSERT_EQ(dmap_heal_result("high_after"), 2, "last page's 2M entry back");
	test__note("%llu GiB: vfree() of pages at %lld and %lld MiB took %lld us",
		   top_mib / GIB_MIB, dmap_heal_result("low_mib"), dmap_heal_result("high_mib"),
		   dmap_heal_result("vfree_ns") / 1000);
}

void test_memory_hotplug(void)
{
	unsigned long long top = ram_top_mib();
	struct dimm d[MAX_DIMMS];
	int n = dimms_find(d, MAX_DIMMS);
	struct vmem v;
	bool vm = vmem_find(&v);

	if (n <= 0 && !vm && top < 16 * GIB_MIB) {
		test__skip("no hot-added DIMM or virtio-mem (make test-hotplug boots them), under 16 GiB");
		return;
	}
	if (!REQUIRE_PATCHED(read_vmstat("direct_map_level3_collapses") >= 0,
			     "/proc/vmstat direct_map_level3_collapses") ||
	    !ASSERT_OK(dmap_heal_load(), "load dmap_heal"))
		return;
	if (n > 0 && ASSERT_EQ(n, 2, "two DIMMs")) {
		if (test__start_subtest("above_hole"))
			above_hole(&d[0]);
		if (test__start_subtest("one_gib_blocks"))
			one_gib_blocks(d);
		if (test__start_subtest("eject"))
			eject(d);
	}
	if (vm) {
		if (test__start_subtest("virtio_mem_plugged"))
			vmem_plugged(&v);
		if (test__start_subtest("virtio_mem_unplug"))
			vmem_unplug(&v);
		if (test__start_subtest("virtio_mem_replug"))
			vmem_replug(&v);
	}
	if (n <= 0 && !vm && test__start_subtest("span_cost"))
		span_cost(top);
	ASSERT_OK(dmap_heal_unload(), "unload dmap_heal");
}
