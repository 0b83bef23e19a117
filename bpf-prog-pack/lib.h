/* SPDX-License-Identifier: GPL-2.0 */
/* What the JIT does around the pack allocator, for the tests and the bench. */
#ifndef LIB_H
#define LIB_H

#include "pack.h"

/* Header + image of @size bytes, as bpf_jit_binary_pack_alloc() asks: NULL or the header. */
struct bpf_binary_header *prog_alloc(u32 size, bool classic);
void prog_free(struct bpf_binary_header *hdr);
/* Chunks a program of @size bytes takes. */
unsigned int prog_chunks(u32 size);
/* Every byte of [p, p + len) is the trap. */
bool all_trap(const void *p, size_t len);
/*
 * Reclaim as the kernel does it: asks the shrinker how many pages it can
 * free, then for @nr_pages of them (all of them if 0): the pages freed,
 * or SHRINK_STOP.  The shrinker frees only while pages are short
 * (shim.pages_short).
 */
unsigned long shrink(unsigned long nr_pages);
/* Drops the cached packs (idle_secs 0, and back); true when then nothing is left. */
bool pack_idle(void);

#endif
