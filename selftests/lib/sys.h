/* SPDX-License-Identifier: GPL-2.0 */
/* /proc, /sys, /dev/kmsg and module helpers for the guest tests. */
#ifndef SYS_H
#define SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* A /proc/vmstat counter, or -1 when the kernel has none by that name. */
long long read_vmstat(const char *name);
/* A /proc/meminfo value in kB, or -1. */
long long read_meminfo_kb(const char *name);
/* Reads a whole small file into buf (NUL-terminated); returns length or -errno. */
int read_file(const char *path, char *buf, size_t size);
int write_file(const char *path, const char *text);
/* The number N of a "@key N" line of the small file @path, or -1. */
long long read_key(const char *path, const char *key);
/*
 * Reads @path to its end and throws the text away, as a reader like cat
 * makes the kernel print it all: 0 or -errno.
 */
int drain_file(const char *path);
/* Does /proc/cmdline contain the word @word? */
bool cmdline_has(const char *word);
/* The value of @key=VALUE on /proc/cmdline, into @val: false if none. */
bool cmdline_value(const char *key, char *val, size_t size);

/*
 * Should vmalloc_huge() map huge?  Yes unless the kernel was booted with
 * nohugevmalloc, or the runner was told so (-a expect-nohuge, which on a
 * normal boot makes the huge-mapping tests fail: the harness self-test).
 */
bool expect_huge_vmalloc(const char *runner_args);

/*
 * Is this the debug kernel (guest/debug.fragment: KASAN, lockdep, kmemleak)?
 * Told by kmemleak's file.  Tests that repeat the same paths many times
 * run fewer rounds there: KASAN makes each one ten times slower, and a bug
 * the instrumentation catches shows on the first round already.
 */
bool debug_kernel(void);

/* NUMA nodes the kernel allows for (/sys/devices/system/node/possible). */
int possible_nodes(void);

/* finit_module()/delete_module(); return 0 or -errno. */
int module_load(const char *path, const char *params);
int module_unload(const char *name);

/* The kernel log from /dev/kmsg, one record at a time. */
int kmsg_open(bool from_end);
/*
 * Next message text (no prefix, no newline) into buf: 1, 0 at the end, or
 * -errno.  -EPIPE says records were lost: the ring overwrote them before
 * this reader got to them.  It comes once; the next call goes on with the
 * oldest record left.  A reader may go on, but must say so, or fail.
 */
int kmsg_next(int fd, char *buf, size_t size);
/* kmsg_next(), with the record's sequence number (0: the first since boot) in @seq. */
int kmsg_next_seq(int fd, char *buf, size_t size, unsigned long long *seq);
/* The pattern a log line matches if it reports a kernel bug, else NULL. */
const char *kmsg_bad_pattern(const char *msg);

/* Raise RLIMIT_NOFILE to at least @n open files: 0 or -errno. */
int raise_nofile(unsigned long n);

/* The address /proc/kallsyms gives @name (root sees real ones), or 0. */
uint64_t kallsyms_addr(const char *name);

/* Milliseconds of CLOCK_MONOTONIC (inline: the host runner has no sys.c). */
static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#endif
