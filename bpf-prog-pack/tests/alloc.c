// SPDX-License-Identifier: GPL-2.0
/* Placement, reuse and release of programs in packs. */
#include "cases.h"

#define N 256

static struct bpf_binary_header *progs[N];

static void free_all(void)
{
	int i;

	for (i = 0; i < N; i++) {
		if (progs[i])
			prog_free(progs[i]);
		progs[i] = NULL;
	}
}

/* Chunk aligned, inside a pack, and no two programs overlap. */
static void test_alignment_no_overlap(void)
{
	unsigned int seed = 7;
	int i, j;

	for (i = 0; i < N; i++) {
		progs[i] = prog_alloc(64 + rand_r(&seed) % 4000, false);
		if (!ASSERT_TRUE(progs[i], "alloc"))
			return;
		ASSERT_EQ((uintptr_t)progs[i] % BPF_PROG_CHUNK_SIZE, 0, "chunk aligned");
		ASSERT_GE(pack_index_of(progs[i]), 0, "inside a pack");
		ASSERT_GE(pack_index_of((char *)progs[i] + progs[i]->size - 1), 0, "end inside");
		ASSERT_EQ(pack_index_of(progs[i]),
			  pack_index_of((char *)progs[i] + progs[i]->size - 1), "one pack");
	}
	for (i = 0; i < N; i++)
		for (j = i + 1; j < N; j++) {
			char *a = (char *)progs[i], *b = (char *)progs[j];

			if (a < b + progs[j]->size && b < a + progs[i]->size) {
				ASSERT_TRUE(false, "programs overlap");
				return;
			}
		}
}

/* What fits in one pack lands in one pack. */
static void test_one_pack(void)
{
	int i;

	for (i = 0; i < N; i++)	/* 256 x 4K = 1M: half a pack */
		progs[i] = prog_alloc(4096, false);
	ASSERT_EQ(pack_nr(), 1, "packs");
}

/* Freed chunks are handed out again, and are traps in between. */
static void test_free_returns_chunks(void)
{
	struct bpf_binary_header *a = prog_alloc(1000, false), *b = prog_alloc(1000, false);
	struct pack_view v;
	unsigned int used;

	if (!ASSERT_TRUE(a && b, "alloc") || !ASSERT_OK(pack_get(0, &v), "pack"))
		return;
	used = v.used;
	ASSERT_EQ(used, 2 * prog_chunks(1000), "chunks used");
	prog_free(a);
	pack_get(0, &v);
	ASSERT_EQ(v.used, used - prog_chunks(1000), "chunks returned");
	ASSERT_TRUE(all_trap(a, 1000), "freed program is traps");
	progs[0] = prog_alloc(1000, false);
	ASSERT_TRUE(progs[0] == a, "freed chunks reused first");
	progs[1] = b;
}

/* The last free releases the pack and its memory. */
static void test_empty_pack_released(void)
{
	int i;

	for (i = 0; i < N; i++)
		progs[i] = prog_alloc(16 * 1024, false);	/* 4M: more than one pack */
	ASSERT_GE(pack_nr(), 2, "packs");
	free_all();
	ASSERT_EQ(pack_nr(), 0, "packs after the last free");
	ASSERT_EQ(shim.areas, 0, "areas after the last free");
}

/* A new pack is all traps, read-only, executable, and huge. */
static void test_new_pack(void)
{
	const struct shim_area *a;
	struct pack_view v;

	progs[0] = prog_alloc(64, false);
	if (!ASSERT_TRUE(progs[0], "alloc") || !ASSERT_OK(pack_get(0, &v), "pack"))
		return;
	a = shim_area_of(v.ptr);
	if (!ASSERT_TRUE(a, "area"))
		return;
	ASSERT_TRUE(a->ro && a->x && a->reset_perms, "ro, x, VM_FLUSH_RESET_PERMS");
	ASSERT_TRUE(a->huge && v.huge, "huge");
	ASSERT_EQ((uintptr_t)v.ptr % PMD_SIZE, 0, "PMD aligned");
	ASSERT_TRUE(all_trap((char *)v.ptr + 64, pack_size - 64), "rest of the pack is traps");
}

void test_alloc(void)
{
	static const struct pack_case cases[] = {
		{ "alignment_no_overlap", test_alignment_no_overlap },
		{ "one_pack", test_one_pack },
		{ "free_returns_chunks", test_free_returns_chunks },
		{ "empty_pack_released", test_empty_pack_released },
		{ "new_pack", test_new_pack },
	};
	run_pack_cases(cases, sizeof(cases) / sizeof(cases[0]), free_all);
}
