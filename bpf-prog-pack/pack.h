/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernel/bpf/prog_pack.c, compiled by pack.c against the shims, and a
 * window on its internals for the tests.
 */
#ifndef PACK_H
#define PACK_H

#include <shim.h>

struct pack_view {
	void *ptr;
	bool huge, flush_needed;
	unsigned int used;		/* chunks marked in the bitmap */
	unsigned int free;		/* the pack's own count of free chunks */
	const unsigned long *bitmap;
};

extern const unsigned long pack_size, pack_chunks;

int pack_nr(void);
/* The @i-th pack on the list: 0, or -1 past the end. */
int pack_get(int i, struct pack_view *v);
/* The pack holding @addr: its index, or -1. */
int pack_index_of(const void *addr);
unsigned long pack_fallback_count(void);
unsigned long pack_oversized_count(void);
unsigned long pack_oversized_bytes(void);
/* trampoline and struct_ops images: how many, and their chunks' bytes */
unsigned long pack_image_count(void);
unsigned long pack_image_bytes(void);
/* Empty huge packs kept for reuse. */
unsigned long pack_cached_count(void);
/* Takes pack_mutex (true) or drops it, as a load in progress holds it. */
void pack_mutex_hold(bool hold);
/* Writes the bpf_prog_pack.idle_secs parameter: 0 or -errno. */
int pack_set_idle_secs(const char *val);
/* Writes the bpf_prog_pack.reserve parameter: 0 or -errno. */
int pack_set_reserve(const char *val);
/* Forgets the arch's trap fill, as at boot before the first program. */
void pack_forget_fill(void);
/* Turns the predictor-flush steering on with @flush as the flush, or off. */
void pack_pred_flush(void (*flush)(void));

#endif
