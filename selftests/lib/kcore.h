/* SPDX-License-Identifier: GPL-2.0 */
/* Reads kernel memory through /proc/kcore (CONFIG_PROC_KCORE, as root). */
#ifndef KCORE_H
#define KCORE_H

#include <stddef.h>
#include <stdint.h>

/* Copies @len bytes at kernel address @vaddr into @buf: 0 or -errno. */
int kcore_read(uint64_t vaddr, void *buf, size_t len);

#endif
