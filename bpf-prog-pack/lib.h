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
/* Frees everything the allocator holds; true when nothing leaked. */
bool pack_idle(void);

#endif
