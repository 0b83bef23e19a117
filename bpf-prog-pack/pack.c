// SPDX-License-Identifier: GPL-2.0
/* The allocator under test: the kernel's own file, never a copy of it. */
#include PROG_PACK_C

#include "pack.h"

/* Before per-pack free counts, the bitmap was the only count. */
#if PACK_HAS_FREE
#define PACK_FREE(pack) ((pack)->free)
#else
#define PACK_FREE(pack) (BPF_PROG_CHUNK_COUNT - \
			 bitmap_weight((pack)->bitmap, BPF_PROG_CHUNK_COUNT))
#endif

const unsigned long pack_size = BPF_PROG_PACK_SIZE;
const unsigned long pack_chunks = BPF_PROG_CHUNK_COUNT;

int pack_nr(void)
{
	struct bpf_prog_pack *pack;
	int n = 0;

	list_for_each_entry(pack, &pack_list, list)
		n++;
	return n;
}

int pack_get(int i, struct pack_view *v)
{
	struct bpf_prog_pack *pack;

	list_for_each_entry(pack, &pack_list, list) {
		if (i--)
			continue;
		*v = (struct pack_view){
			.ptr = pack->ptr, .huge = pack->huge,
			.flush_needed = pack->arch_flush_needed,
			.used = bitmap_weight(pack->bitmap, BPF_PROG_CHUNK_COUNT),
			.free = PACK_FREE(pack),
			.bitmap = pack->bitmap,
		};
		return 0;
	}
	return -1;
}

int pack_index_of(const void *addr)
{
	struct bpf_prog_pack *pack;
	int i = 0;

	list_for_each_entry(pack, &pack_list, list) {
		if ((char *)addr >= (char *)pack->ptr &&
		    (char *)addr < (char *)pack->ptr + BPF_PROG_PACK_SIZE)
			return i;
		i++;
	}
	return -1;
}

unsigned long pack_fallback_count(void)
{
	return pack_fallbacks;
}

unsigned long pack_oversized_count(void)
{
	return oversized_count;
}

unsigned long pack_oversized_bytes(void)
{
	return oversized_bytes;
}

unsigned long pack_image_count(void)
{
	return image_count;
}

unsigned long pack_image_bytes(void)
{
	return image_bytes;
}

unsigned long pack_cached_count(void)
{
	return packs_cached;
}

void pack_mutex_hold(bool hold)
{
	if (hold)
		mutex_lock(&pack_mutex);
	else
		mutex_unlock(&pack_mutex);
}

int pack_set_idle_secs(const char *val)
{
	struct kernel_param kp = { .arg = &idle_secs };

	return idle_secs_ops.set(val, &kp);
}

int pack_set_reserve(const char *val)
{
	struct kernel_param kp = { .arg = &reserve };

	return reserve_ops.set(val, &kp);
}

void pack_forget_fill(void)
{
	pack_fill = NULL;
}

void pack_pred_flush(void (*flush)(void))
{
	shim_call_bpf_arch_pred_flush = flush ?: shim_nop;
	bpf_pred_flush_enabled.enabled = flush != NULL;
}
