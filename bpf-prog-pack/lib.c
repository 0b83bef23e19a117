// SPDX-License-Identifier: GPL-2.0
#include "lib.h"

struct bpf_binary_header *prog_alloc(u32 size, bool classic)
{
	struct bpf_binary_header *hdr;

	size = round_up(size, BPF_PROG_CHUNK_SIZE);
	hdr = bpf_prog_pack_alloc(size, shim_fill_trap, classic);
	if (hdr)	/* the JIT writes the header through text_poke */
		shim_text_copy(&hdr->size, &size, sizeof(size));
	return hdr;
}

void prog_free(struct bpf_binary_header *hdr)
{
	bpf_prog_pack_free(hdr, hdr->size);
}

unsigned int prog_chunks(u32 size)
{
	return round_up(size, BPF_PROG_CHUNK_SIZE) / BPF_PROG_CHUNK_SIZE;
}

bool all_trap(const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != SHIM_TRAP)
			return false;
	return true;
}

unsigned long shrink(unsigned long nr_pages)
{
	struct shrink_control sc = { .nr_to_scan = nr_pages };
	unsigned long n = shim.shrinker->count_objects(shim.shrinker, &sc);

	/* as do_shrink_slab(): nothing to count, no scan */
	if (!n || n == SHRINK_EMPTY)
		return 0;
	if (!nr_pages)
		sc.nr_to_scan = n;
	return shim.shrinker->scan_objects(shim.shrinker, &sc);
}

bool pack_idle(void)
{
	pack_set_idle_secs("0");
	pack_set_idle_secs("600");
	return pack_nr() == 0 && shim.areas == 0 && shim.kzallocs == 0 &&
	       pack_oversized_count() == 0 && pack_oversized_bytes() == 0;
}
