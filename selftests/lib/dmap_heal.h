/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dmap_heal.ko (selftests/kmod/dmap_heal.c): split the direct map the ways
 * 6.1 does, and undo it, on command.
 */
#ifndef DMAP_HEAL_H
#define DMAP_HEAL_H

#define DMAP_HEAL_CTL	"/sys/kernel/debug/dmap_heal"

struct mem_snapshot;

/* Loads the module with the set_memory_*() addresses from /proc/kallsyms: 0 or -errno. */
int dmap_heal_load(void);
int dmap_heal_unload(void);
/* One command ("rox 1024", "free", ...): 0 or -errno. */
int dmap_heal_cmd(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The value of "@key N" in the last command's result, or -1. */
long long dmap_heal_result(const char *key);
/*
 * @n one-page RO+X areas made by @cmd ("rox" or "rox_undo") and held, the
 * direct map snapshotted into @held (unless NULL), the areas freed, and
 * snapshotted again into @after: 0 or -errno.
 */
int dmap_heal_areas(const char *cmd, int n, struct mem_snapshot *held,
		    struct mem_snapshot *after);

#endif
