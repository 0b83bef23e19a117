/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of the kernel for kernel/bpf/prog_pack.c to build and run in
 * user space, in the manner of tools/testing/radix-tree: every
 * <linux/...> header it includes resolves here.  Memory comes from aligned
 * anonymous mappings, permissions are tracked per area (and enforced with
 * mprotect()), and each thing that can fail in the kernel can be made to
 * fail on demand (see the shim_* hooks).
 */
#ifndef BPF_PROG_PACK_SHIM_H
#define BPF_PROG_PACK_SHIM_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;

#define __init
#define late_initcall(fn)
#define pure_initcall(fn) static void __attribute__((constructor)) fn##_ctor(void) { fn(); }

#define PAGE_SHIFT	12
#define PAGE_SIZE	(1UL << PAGE_SHIFT)
#define PMD_SHIFT	21
#define PMD_SIZE	(1UL << PMD_SHIFT)
#define SZ_1K		0x00000400UL
#define SZ_1M		0x00100000UL
#define SZ_2M		0x00200000UL
#define num_possible_nodes()	1

#define BITS_PER_LONG	64
#define BIT(n)		(1UL << (n))
#define BITS_TO_LONGS(n)	(((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#define round_up(x, y)	((((x) - 1) | ((__typeof__(x))((y) - 1))) + 1)
#define IS_ALIGNED(x, a)	(((x) & ((__typeof__(x))(a) - 1)) == 0)
#define min(a, b)	((a) < (b) ? (a) : (b))
#define max(a, b)	((a) > (b) ? (a) : (b))
#define min_t(t, a, b)	min((t)(a), (t)(b))
#define struct_size(p, member, n) (sizeof(*(p)) + sizeof((p)->member[0]) * (n))
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define READ_ONCE(x)	(*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))
#define ilog2(n)	(BITS_PER_LONG - 1 - __builtin_clzl(n))

/* --- list.h ---------------------------------------------------------- */
struct list_head {
	struct list_head *next, *prev;
};
#define LIST_HEAD_INIT(name) { &(name), &(name) }
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)

static inline void list_add_tail(struct list_head *new, struct list_head *head)
{
	new->prev = head->prev;
	new->next = head;
	head->prev->next = new;
	head->prev = new;
}

static inline void list_del(struct list_head *entry)
{
	entry->prev->next = entry->next;
	entry->next->prev = entry->prev;
	entry->next = entry->prev = NULL;
}

static inline void INIT_LIST_HEAD(struct list_head *list)
{
	list->next = list->prev = list;
}

static inline void list_add(struct list_head *new, struct list_head *head)
{
	new->next = head->next;
	new->prev = head;
	head->next->prev = new;
	head->next = new;
}

static inline void list_del_init(struct list_head *entry)
{
	entry->prev->next = entry->next;
	entry->next->prev = entry->prev;
	INIT_LIST_HEAD(entry);
}

static inline bool list_empty(const struct list_head *head)
{
	return head->next == head;
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry_or_null(head, type, member) \
	(list_empty(head) ? NULL : list_entry((head)->next, type, member))
#define list_for_each_entry(pos, head, member)					\
	for (pos = list_entry((head)->next, __typeof__(*pos), member);		\
	     &pos->member != (head);						\
	     pos = list_entry(pos->member.next, __typeof__(*pos), member))
#define list_for_each_entry_safe(pos, n, head, member)				\
	for (pos = list_entry((head)->next, __typeof__(*pos), member),		\
	     n = list_entry(pos->member.next, __typeof__(*pos), member);	\
	     &pos->member != (head);						\
	     pos = n, n = list_entry(n->member.next, __typeof__(*n), member))

/* hlist: a NULL head is an empty list, a NULL pprev an unhashed node */
struct hlist_head {
	struct hlist_node *first;
};
struct hlist_node {
	struct hlist_node *next, **pprev;
};

static inline bool hlist_unhashed(const struct hlist_node *n)
{
	return !n->pprev;
}

static inline void hlist_del_init(struct hlist_node *n)
{
	if (hlist_unhashed(n))
		return;
	*n->pprev = n->next;
	if (n->next)
		n->next->pprev = n->pprev;
	n->next = NULL;
	n->pprev = NULL;
}

static inline void hlist_add_head(struct hlist_node *n, struct hlist_head *h)
{
	n->next = h->first;
	if (h->first)
		h->first->pprev = &n->next;
	h->first = n;
	n->pprev = &h->first;
}

#define hlist_entry_safe(ptr, type, member) \
	({ __typeof__(ptr) ____p = (ptr); ____p ? container_of(____p, type, member) : NULL; })
#define hlist_for_each_entry(pos, head, member)					\
	for (pos = hlist_entry_safe((head)->first, __typeof__(*(pos)), member);	\
	     pos;								\
	     pos = hlist_entry_safe((pos)->member.next, __typeof__(*(pos)), member))

/* --- xarray.h: a hash of index -> pointer, as much as prog_pack.c uses --- */
struct xarray {
	struct xa_slot *slots;
	size_t size, used;
};
#define DEFINE_XARRAY(name) struct xarray name
void *xa_load(struct xarray *xa, unsigned long index);
/* Returns the old entry; a failure (fail_xa_store) as an error entry. */
void *xa_store(struct xarray *xa, unsigned long index, void *entry, int gfp);
void *xa_erase(struct xarray *xa, unsigned long index);
int xa_err(void *entry);

/* --- mutex.h, with the owner tracked for lockdep_assert_held() --------- */
struct mutex {
	pthread_mutex_t lock;
	pthread_t owner;
	bool held;
};
#define DEFINE_MUTEX(name) struct mutex name = { .lock = PTHREAD_MUTEX_INITIALIZER }
void mutex_lock(struct mutex *m);
int mutex_trylock(struct mutex *m);
void mutex_unlock(struct mutex *m);
void shim_assert_held(struct mutex *m, const char *file, int line);
#define lockdep_assert_held(m) shim_assert_held(m, __FILE__, __LINE__)

/* --- bug.h, printk.h: warnings are counted, tests expect none -------- */
void shim_warn(const char *file, int line, const char *fmt, ...);
#define WARN_ONCE(cond, fmt...) ({						\
	bool __c = !!(cond);							\
	if (__c)								\
		shim_warn(__FILE__, __LINE__, fmt);				\
	__c;									\
})
#define WARN_ON_ONCE(cond) WARN_ONCE(cond, "%s", #cond)
#define pr_warn_once(fmt...) shim_warn(__FILE__, __LINE__, fmt)
#define pr_warn(fmt...) shim_warn(__FILE__, __LINE__, fmt)

/* --- jump_label.h, static_call.h ------------------------------------- */
struct static_key_false {
	bool enabled;
};
#define DEFINE_STATIC_KEY_FALSE(name) struct static_key_false name
#define static_branch_unlikely(key) ((key)->enabled)
/* static_call_cond(name)() calls shim_call_name, a no-op until a test sets it */
#define DEFINE_STATIC_CALL_NULL(name, func) void (*shim_call_##name)(void) = shim_nop
#define static_call_cond(name) (*shim_call_##name)
void shim_nop(void);

/* --- slab.h ---------------------------------------------------------- */
#define GFP_KERNEL 0
void *kzalloc(size_t size, int gfp);
void kfree(const void *p);

/* --- bitmap.h, from the kernel's semantics --------------------------- */
void bitmap_set(unsigned long *map, unsigned int start, unsigned int nbits);
void bitmap_clear(unsigned long *map, unsigned int start, unsigned int nbits);
unsigned int bitmap_weight(const unsigned long *map, unsigned int nbits);
unsigned long find_next_bit(const unsigned long *map, unsigned long size,
			    unsigned long offset);
unsigned long find_next_zero_bit(const unsigned long *map, unsigned long size,
				 unsigned long offset);
unsigned long bitmap_find_next_zero_area(unsigned long *map, unsigned long size,
					 unsigned long start, unsigned int nr,
					 unsigned long align_mask);
/* include/asm-generic/bitops/non-atomic.h */
static inline void __set_bit(unsigned int nr, unsigned long *addr)
{
	addr[nr / BITS_PER_LONG] |= BIT(nr % BITS_PER_LONG);
}

static inline void __clear_bit(unsigned int nr, unsigned long *addr)
{
	addr[nr / BITS_PER_LONG] &= ~BIT(nr % BITS_PER_LONG);
}

/* include/linux/find.h */
#define for_each_set_bit(bit, addr, size)				\
	for ((bit) = 0;							\
	     (bit) = find_next_bit((addr), (size), (bit)), (bit) < (size);	\
	     (bit)++)
#define for_each_clear_bitrange(b, e, addr, size)		\
	for ((b) = 0;						\
	     (b) = find_next_zero_bit((addr), (size), (b)),	\
	     (e) = find_next_bit((addr), (size), (b) + 1),	\
	     (b) < (size);					\
	     (b) = (e) + 1)

/* --- moduleloader.h, vmalloc.h, set_memory.h ------------------------- */
void *module_alloc(unsigned long size);
void *module_alloc_huge(unsigned long size);
void module_memfree(void *addr);
void set_vm_flush_reset_perms(void *addr);
bool is_vm_area_hugepages(const void *addr);
bool is_vm_area_exec_pool(const void *addr);
int set_memory_ro(unsigned long addr, int numpages);
int set_memory_x(unsigned long addr, int numpages);

/* --- jiffies.h: a clock the tests move ------------------------------- */
#define HZ 100
extern unsigned long jiffies;
#define time_after(a, b) ((long)((b) - (a)) < 0)

/*
 * --- wait.h: one thread, so nobody can wake a waiter: a wait whose
 * condition is false is counted and times out at once, jiffies unmoved
 */
struct wait_queue_head {
	int unused;
};
#define DECLARE_WAIT_QUEUE_HEAD(name) struct wait_queue_head name
#define wait_event_timeout(wq, cond, timeout) ({				\
	(void)(wq);								\
	(cond) ? (long)(timeout) : (shim.waits++, 0L);				\
})
#define wake_up_all(wq) ((void)(wq))

/* --- workqueue.h: work queued, and run when a test says --------------- */
struct work_struct {
	void (*fn)(struct work_struct *work);
	bool pending;
	unsigned long due;	/* jiffies */
};
struct delayed_work {
	struct work_struct work;
};
#define DECLARE_WORK(name, f) struct work_struct name = { .fn = (f) }
#define DECLARE_DELAYED_WORK(name, f) struct delayed_work name = { .work = { .fn = (f) } }
#define system_wq NULL
bool schedule_work(struct work_struct *work);
/* Runs the work now if it is queued, and returns when it is done. */
bool flush_delayed_work(struct delayed_work *dw);
bool schedule_delayed_work(struct delayed_work *dw, unsigned long delay);
bool mod_delayed_work(void *wq, struct delayed_work *dw, unsigned long delay);

/* --- mmzone.h: one zone, short of pages when a test says ------------- */
struct zone {
	int unused;
};
#define for_each_populated_zone(z) for ((z) = &shim_zone; (z); (z) = NULL)
extern struct zone shim_zone;
#define NR_FREE_PAGES	0
unsigned long zone_page_state(struct zone *zone, int item);
unsigned long high_wmark_pages(struct zone *zone);

/* --- shrinker.h: registered, then called by the tests ---------------- */
struct shrink_control {
	unsigned long nr_to_scan;
};
struct shrinker {
	unsigned long (*count_objects)(struct shrinker *s, struct shrink_control *sc);
	unsigned long (*scan_objects)(struct shrinker *s, struct shrink_control *sc);
	int seeks;
};
#define DEFAULT_SEEKS	2
#define SHRINK_STOP	(~0UL)
#define SHRINK_EMPTY	(~0UL - 1)
int register_shrinker(struct shrinker *s, const char *fmt, ...);

/* --- notifier.h, vmalloc's purge notifier ---------------------------- */
struct notifier_block {
	int (*notifier_call)(struct notifier_block *nb, unsigned long action, void *data);
};
#define NOTIFY_DONE	0
#define NOTIFY_OK	1
int register_vmap_purge_notifier(struct notifier_block *nb);

/* --- moduleparam.h: parameters are plain variables here -------------- */
struct kernel_param {
	void *arg;
};
struct kernel_param_ops {
	int (*set)(const char *val, const struct kernel_param *kp);
	int (*get)(char *buffer, const struct kernel_param *kp);
};
#define module_param_cb(name, ops, arg, perm)
#define MODULE_PARM_DESC(name, desc)
int param_set_uint_minmax(const char *val, const struct kernel_param *kp,
			  unsigned int min, unsigned int max);
int param_get_uint(char *buffer, const struct kernel_param *kp);

/* --- filter.h -------------------------------------------------------- */
#define BPF_PROG_CHUNK_SHIFT	6
#define BPF_PROG_CHUNK_SIZE	BIT(BPF_PROG_CHUNK_SHIFT)
#define BPF_PROG_CHUNK_MASK	(~(BPF_PROG_CHUNK_SIZE - 1))

struct bpf_binary_header {
	u32 size;
	u8 image[] __attribute__((aligned(8)));
};
typedef void (*bpf_jit_fill_hole_t)(void *area, unsigned int size);
void *bpf_prog_pack_alloc(u32 size, bpf_jit_fill_hole_t bpf_fill_ill_insns, bool was_classic);
void bpf_prog_pack_free(void *ptr, u32 size);
void *bpf_image_pack_alloc(u32 size, bpf_jit_fill_hole_t bpf_fill_ill_insns);
void bpf_image_pack_free(void *ptr, u32 size);
int bpf_arch_text_invalidate(void *dst, size_t len);

/* --- hooks for the tests --------------------------------------------- */
#define SHIM_TRAP 0xcc

struct shim_area {
	void *addr;
	size_t size;
	bool huge, ro, x, reset_perms;
	bool pool;	/* its pages are the exec pool's (shim.pool_areas) */
};

extern struct shim_state {
	/* what can fail: counts down to a failure; -1 never, 0 the next call */
	long fail_huge;		/* module_alloc_huge() gets no 2M page: 4K area */
	long fail_module_alloc;	/* module_alloc*() returns NULL */
	long fail_kzalloc;
	long fail_set_memory;
	long fail_xa_store;
	/* the next this many huge areas get their pages from the exec pool */
	long pool_areas;
	/* called as module_alloc_huge() makes an area, once: a load meanwhile */
	void (*on_alloc_huge)(void);
	/* waits that found their condition false, and timed out */
	long waits;
	/* what is live */
	long areas, huge_areas, kzallocs;
	long warnings;
	struct shrinker *shrinker;	/* the shrinker registered */
	struct notifier_block *vmap_purge;	/* the vmap purge notifier registered */
	bool no_mprotect;	/* track permissions but leave the pages writable (bench) */
	bool pages_short;	/* the zone is below its high watermark */
} shim;

void shim_reset(void);
/* The area at @addr, or NULL. */
const struct shim_area *shim_area_of(const void *addr);
/* Write into read-only text, as bpf_arch_text_copy() does. */
void shim_text_copy(void *dst, const void *src, size_t len);
void shim_fill_trap(void *area, unsigned int size);
/* Forgets the works queued (shim_reset() does). */
void shim_drop_works(void);
/* The work due first: NULL if none is queued. */
struct work_struct *shim_next_work(void);
/* Moves jiffies to the time of the work due first and runs it: false if none. */
bool shim_run_work(void);
/* Runs the works due now, jiffies unmoved: how many ran. */
int shim_run_due_works(void);

#endif
