/* SPDX-License-Identifier: GPL-2.0 */
/* Loading BPF programs of a chosen size, and watching JIT memory come back. */
#ifndef PROGS_H
#define PROGS_H

#include <stdbool.h>
#include <stdint.h>

#include "ptdump.h"

/* Shortest program load_filter() builds: r0 = ret; exit. */
#define FILTER_MIN_INSNS 2

/*
 * A socket filter of @insns instructions (>= FILTER_MIN_INSNS) that returns
 * @ret: the fd, or -errno.  The log, if any, goes to stdout.
 */
int load_filter(unsigned int insns, int ret);

/* A socket filter of FILL_INSNS instructions that returns 0, as load_filter(). */
#define FILL_INSNS 30000
int load_fill(void);

struct sock_filter;

/*
 * A socket (AF_UNIX datagram) with the classic filter @f of @len
 * instructions attached (SO_ATTACH_FILTER): the fd, or -errno.
 */
int attach_classic(const struct sock_filter *f, unsigned short len);

struct pack_stats;

/*
 * Fills the room left in the packs @st lists, so that the next load of
 * @load's program needs a new pack: on a distribution kernel the kernel's
 * own programs (Debian's PTP classifier, JITed at boot) hold part of a pack
 * for good.  Programs of FILL_INSNS instructions take the bulk, then
 * @load's until one lands outside those packs; that one is closed, and the
 * pack it made is gone on return (packs_uncache()).  The fds of the rest go to @fds (at most
 * @max): returns how many, or -errno.
 */
int packs_fill(const struct pack_stats *st, int (*load)(void), int *fds, int max);

/*
 * Loads "r0 = 0; exit" as an fentry program on each of the first @n
 * syscall entry points (__x64_sys_*, in name order) the verifier takes:
 * their fds go to @fds.  Returns how many, or -errno.  Attaching one
 * (bpf_link_create()) builds a trampoline, or fails where ftrace cannot
 * patch the function.
 */
int load_fentry_progs(int *fds, int n);

/* Number of BPF programs alive in the system, or -errno. */
int count_live_progs(void);

/* Address and length of a program's JITed image; 0 or -errno. */
int prog_jited_image(int fd, uint64_t *addr, uint32_t *len);

/* The Modules section, where x86 puts JITed BPF code. */
#define MODULES_SECTION "Modules"

/*
 * Program frees are deferred (RCU, then a workqueue), so counters read
 * right after close() are not final.  jit_settle() waits (up to
 * @timeout_ms) until @live programs are left and the Modules section maps
 * no more bytes than in @baseline, at whatever page size, the packs the
 * frees left empty reclaimed (packs_uncache()); 0 or -ETIMEDOUT.
 */
int jit_settle(int live, const struct pt_stats *baseline, int timeout_ms);

/*
 * Waits until the live program count and the Modules section stay the
 * same for half a second: frees an earlier test left in flight are done.
 */
int jit_quiesce(int timeout_ms);

/*
 * Empty huge packs are kept for reuse (the statistics' cached), until
 * unused for bpf_prog_pack.idle_secs, or reclaimed when pages are short.
 * packs_uncache() frees them now: it writes idle_secs 0, which applies
 * before the write returns, then writes back what was there.  Returns 0
 * once only the reserve is left cached (at once on a kernel without the
 * cache), or -errno.
 */
int packs_uncache(void);

/* The pack allocator's parameters: bpf_prog_pack.idle_secs, .reserve. */
#define PACK_PARAM(name)	"/sys/module/bpf_prog_pack/parameters/" name

/*
 * Writes @val to the parameter @name, after reading what it was into
 * @was (@size bytes, one line): 0 or -errno.
 */
int pack_param_set(const char *name, const char *val, char *was, size_t size);

#endif
