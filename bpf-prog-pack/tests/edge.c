// SPDX-License-Identifier: GPL-2.0
/*
 * Programs larger than a pack, no huge page to be had, and every failure
 * the allocator can meet: a clean NULL, nothing leaked, and service after.
 */
#include <string.h>

#include "cases.h"

static void test_oversized(void)
{
	u32 size = pack_size + 100 * 1024;
	struct bpf_binary_header *big = prog_alloc(size, false);
	const struct shim_area *a;

	if (!ASSERT_TRUE(big, "alloc"))
		return;
	a = shim_area_of(big);
	ASSERT_EQ(pack_nr(), 0, "no pack for it");
	ASSERT_TRUE(a && a->huge && a->ro && a->x && a->reset_perms, "huge, ro, x, reset");
	ASSERT_EQ(a ? a->size : 0, round_up((unsigned long)size, PMD_SIZE), "whole huge pages");
	ASSERT_EQ(pack_oversized_count(), 1, "oversized count");
	ASSERT_EQ(pack_oversized_bytes(), round_up((unsigned long)size, PMD_SIZE), "oversized bytes");
	ASSERT_TRUE(all_trap(big->image, size - sizeof(*big)), "filled with traps");
	prog_free(big);
}

static void test_fallback(void)
{
	unsigned long before = pack_fallback_count();
	struct bpf_binary_header *p;
	struct pack_view v;

	shim.fail_huge = 0;
	p = prog_alloc(512, false);
	if (!ASSERT_TRUE(p, "alloc without huge pages") || !ASSERT_OK(pack_get(0, &v), "pack"))
		return;
	ASSERT_FALSE(v.huge, "4K pack");
	ASSERT_EQ(pack_fallback_count(), before + 1, "fallback counted");
	ASSERT_TRUE(shim_area_of(v.ptr)->ro, "still read-only");
	prog_free(p);
}

/*
 * A program goes to a huge pack with room before a 4K one, even an older
 * one: the 4K pack then empties and is freed, not cached.
 */
static void test_prefer_huge(void)
{
	enum { BIG = 64 * 1024 };
	struct bpf_binary_header *p[2 * 2 * 1024 * 1024 / BIG + 1] = {}, *small;
	unsigned long fallbacks = pack_fallback_count();
	struct pack_view v;
	int i, n = 0;

	shim.fail_huge = 0;
	do {		/* a 4K pack, full */
		p[n] = prog_alloc(BIG, false);
	} while (p[n] && pack_nr() == 1 && ++n < (int)(sizeof(p) / sizeof(p[0])));
	if (!ASSERT_TRUE(p[n] && pack_nr() == 2, "4K pack full, a huge one made") ||
	    !ASSERT_OK(pack_get(0, &v), "pack") || !ASSERT_FALSE(v.huge, "4K first"))
		goto out;
	n++;
	prog_free(p[0]);	/* room in the older 4K pack */
	p[0] = NULL;
	small = prog_alloc(64, false);
	ASSERT_EQ(pack_index_of(small), 1, "went to the huge pack");
	prog_free(small);
	for (i = 0; i < n; i++)
		if (p[i] && pack_index_of(p[i]) == 0) {
			prog_free(p[i]);
			p[i] = NULL;
		}
	ASSERT_EQ(pack_nr(), 1, "the 4K pack freed as it emptied");
	ASSERT_EQ(pack_fallback_count(), fallbacks + 1, "one fallback");
out:
	for (i = 0; i < n; i++)
		if (p[i])
			prog_free(p[i]);
}

/* Each failure point of a new pack: NULL, and no pack, area or struct left. */
static void test_failures(void)
{
	static const struct { const char *what; long *hook; long when; } points[] = {
		{ "kzalloc", &shim.fail_kzalloc, 0 },
		{ "module_alloc_huge", &shim.fail_module_alloc, 0 },
		{ "set_memory_ro", &shim.fail_set_memory, 0 },
		{ "set_memory_x", &shim.fail_set_memory, 1 },
		{ "xa_store", &shim.fail_xa_store, 0 },
	};
	struct bpf_binary_header *p;
	size_t i;

	for (i = 0; i < sizeof(points) / sizeof(points[0]); i++) {
		/* the last round's pack is cached: without it, this load needs a new one */
		ASSERT_TRUE(pack_idle(), "no pack");
		shim_reset();
		*points[i].hook = points[i].when;
		p = prog_alloc(256, false);
		if (!ASSERT_FALSE(p, points[i].what)) {
			prog_free(p);
			continue;
		}
		if (!ASSERT_TRUE(pack_idle(), "nothing left after the failure"))
			printf("after %s failed: %d packs, %ld areas, %ld structs\n",
			       points[i].what, pack_nr(), shim.areas, shim.kzallocs);
		p = prog_alloc(256, false);
		ASSERT_TRUE(p, "the next load works");
		prog_free(p);
	}
	/* and for a program larger than a pack */
	ASSERT_TRUE(pack_idle(), "no pack");
	shim_reset();
	shim.fail_set_memory = 1;
	p = prog_alloc(pack_size + 4096, false);
	ASSERT_FALSE(p, "oversized with set_memory_x failing");
	ASSERT_TRUE(pack_idle(), "nothing left");
}

/*
 * Trampoline and struct_ops images: chunks of the packs programs use,
 * counted apart from programs, freed by address and size back to traps;
 * one larger than a page is refused with a warning.
 */
static void test_images(void)
{
	struct bpf_binary_header *p = prog_alloc(256, false);
	void *img = bpf_image_pack_alloc(200, shim_fill_trap);

	if (!ASSERT_TRUE(p && img, "a program and an image")) {
		prog_free(p);
		return;
	}
	ASSERT_EQ(pack_nr(), 1, "in one pack");
	ASSERT_EQ(pack_image_count(), 1, "one image counted");
	ASSERT_EQ(pack_image_bytes(), 256, "its whole chunks");
	shim_text_copy(img, "\x90\x90\xc3", 3);	/* written as the JIT writes */
	bpf_image_pack_free(img, 200);
	ASSERT_TRUE(all_trap(img, 256), "traps again");
	ASSERT_EQ(pack_image_count(), 0, "no image counted");
	ASSERT_EQ(pack_image_bytes(), 0, "no image bytes");
	ASSERT_EQ(pack_nr(), 1, "the program's pack stays");
	ASSERT_FALSE(bpf_image_pack_alloc(PAGE_SIZE + 1, shim_fill_trap), "larger than a page");
	ASSERT_EQ(shim.warnings, 1, "warned");
	shim.warnings = 0;
	prog_free(p);
}

/*
 * A free of what is not allocated chunks, a bug of the caller's: it warns
 * and leaves everything as it was.  No trap goes over the live programs
 * around, and no chunk is taken from them, whether the pointer is off a
 * chunk, on free chunks, in no pack, or was freed already.
 */
static void test_bad_free(void)
{
	struct bpf_binary_header *a = prog_alloc(256, false), *b = prog_alloc(256, false);
	static const u8 code[256 - sizeof(*a)] = { [0 ... 255 - sizeof(*a)] = 0x90 };
	u8 text_a[256], text_b[256];
	struct pack_view v;
	unsigned int used;
	long warned = 0;
	char other[64];

	if (!ASSERT_TRUE(a && b, "two programs") || !ASSERT_OK(pack_get(0, &v), "pack"))
		goto out;
	shim_text_copy(a->image, code, sizeof(code));
	shim_text_copy(b->image, code, sizeof(code));
	memcpy(text_a, a, sizeof(text_a));
	memcpy(text_b, b, sizeof(text_b));
	used = v.used;
	bpf_prog_pack_free((char *)a + 8, 64);		/* off a chunk */
	ASSERT_EQ(shim.warnings, ++warned, "off a chunk: warned");
	bpf_prog_pack_free((char *)b + 256, 64);	/* free chunks after b */
	ASSERT_EQ(shim.warnings, ++warned, "free chunks: warned");
	bpf_prog_pack_free((char *)b, 512);		/* b and free chunks */
	ASSERT_EQ(shim.warnings, ++warned, "partly free: warned");
	bpf_prog_pack_free(other, 64);			/* in no pack */
	ASSERT_EQ(shim.warnings, ++warned, "no pack: warned");
	ASSERT_OK(memcmp(a, text_a, sizeof(text_a)), "a's text untouched");
	ASSERT_OK(memcmp(b, text_b, sizeof(text_b)), "b's text untouched");
	ASSERT_OK(pack_get(0, &v), "pack");
	ASSERT_EQ(v.used, used, "no chunk freed");
	ASSERT_EQ(v.free, pack_chunks - used, "free count unchanged");

	prog_free(b);
	b = prog_alloc(256, false);	/* takes b's chunks again */
	if (!ASSERT_TRUE(b, "b again"))
		goto out;
	shim_text_copy(b->image, code, sizeof(code));
	memcpy(text_b, b, sizeof(text_b));
	bpf_prog_pack_free(a, 256);
	bpf_prog_pack_free(a, 256);			/* twice */
	ASSERT_EQ(shim.warnings, ++warned, "second free: warned");
	a = NULL;
	ASSERT_OK(memcmp(b, text_b, sizeof(text_b)), "b's text untouched");
	ASSERT_OK(pack_get(0, &v), "pack");
	ASSERT_EQ(v.used, prog_chunks(256), "b's chunks still used");
	shim.warnings = 0;
out:
	if (a)
		prog_free(a);
	if (b)
		prog_free(b);
}

void test_edge(void)
{
	static const struct pack_case cases[] = {
		{ "oversized", test_oversized },
		{ "fallback", test_fallback },
		{ "prefer_huge", test_prefer_huge },
		{ "failures", test_failures },
		{ "images", test_images },
		{ "bad_free", test_bad_free },
	};
	run_pack_cases(cases, sizeof(cases) / sizeof(cases[0]), NULL);
}
