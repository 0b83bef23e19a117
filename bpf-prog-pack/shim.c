// SPDX-License-Identifier: GPL-2.0
/* The kernel services prog_pack.c uses, in user space (see include/shim.h). */
#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>

#include <shim.h>

struct shim_state shim;

#define MAX_AREAS 4096
static struct shim_area areas[MAX_AREAS];
static int areas_used;		/* high-water mark of areas[] */

void shim_reset(void)
{
	/* registered once, at start-up, as in the kernel */
	struct shrinker *shrinker = shim.shrinker;
	struct notifier_block *vmap_purge = shim.vmap_purge;

	shim_drop_works();
	memset(&shim, 0, sizeof(shim));
	shim.shrinker = shrinker;
	shim.vmap_purge = vmap_purge;
	shim.fail_huge = shim.fail_module_alloc = shim.fail_kzalloc = shim.fail_set_memory = -1;
	shim.fail_xa_store = -1;
}

/* Counts a hook down; true when this call is the one that fails. */
static bool fails(long *hook)
{
	if (*hook < 0)
		return false;
	return (*hook)-- == 0;
}

void shim_warn(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: kernel warning: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	shim.warnings++;
}

void shim_nop(void)
{
}

void mutex_lock(struct mutex *m)
{
	pthread_mutex_lock(&m->lock);
	m->owner = pthread_self();
	m->held = true;
}

int mutex_trylock(struct mutex *m)
{
	if (pthread_mutex_trylock(&m->lock))
		return 0;
	m->owner = pthread_self();
	m->held = true;
	return 1;
}

void mutex_unlock(struct mutex *m)
{
	m->held = false;
	pthread_mutex_unlock(&m->lock);
}

void shim_assert_held(struct mutex *m, const char *file, int line)
{
	if (!m->held || !pthread_equal(m->owner, pthread_self()))
		shim_warn(file, line, "lock not held\n");
}

void *kzalloc(size_t size, int gfp)
{
	void *p;

	(void)gfp;
	if (fails(&shim.fail_kzalloc))
		return NULL;
	p = calloc(1, size);
	if (p)
		shim.kzallocs++;
	return p;
}

void kfree(const void *p)
{
	if (p)
		shim.kzallocs--;
	free((void *)p);
}

/* --- bitmaps ---------------------------------------------------------- */
static bool test_bit(unsigned long nr, const unsigned long *map)
{
	return map[nr / BITS_PER_LONG] & BIT(nr % BITS_PER_LONG);
}

void bitmap_set(unsigned long *map, unsigned int start, unsigned int nbits)
{
	while (nbits--) {
		map[start / BITS_PER_LONG] |= BIT(start % BITS_PER_LONG);
		start++;
	}
}

void bitmap_clear(unsigned long *map, unsigned int start, unsigned int nbits)
{
	while (nbits--) {
		map[start / BITS_PER_LONG] &= ~BIT(start % BITS_PER_LONG);
		start++;
	}
}

unsigned int bitmap_weight(const unsigned long *map, unsigned int nbits)
{
	unsigned int i, w = 0;

	for (i = 0; i < nbits / BITS_PER_LONG; i++)
		w += __builtin_popcountl(map[i]);
	for (i = nbits / BITS_PER_LONG * BITS_PER_LONG; i < nbits; i++)
		w += test_bit(i, map);
	return w;
}

/* Word at a time, like lib/find_bit.c: the bench measures the allocator, not this. */
static unsigned long find_next(const unsigned long *map, unsigned long size,
			       unsigned long offset, unsigned long invert)
{
	unsigned long word;

	if (offset >= size)
		return size;
	word = (map[offset / BITS_PER_LONG] ^ invert) & (~0UL << (offset % BITS_PER_LONG));
	offset -= offset % BITS_PER_LONG;
	while (!word) {
		offset += BITS_PER_LONG;
		if (offset >= size)
			return size;
		word = map[offset / BITS_PER_LONG] ^ invert;
	}
	offset += __builtin_ctzl(word);
	return min(offset, size);
}

unsigned long find_next_bit(const unsigned long *map, unsigned long size, unsigned long offset)
{
	return find_next(map, size, offset, 0);
}

unsigned long find_next_zero_bit(const unsigned long *map, unsigned long size,
				 unsigned long offset)
{
	return find_next(map, size, offset, ~0UL);
}

/* lib/bitmap.c's bitmap_find_next_zero_area_off() with align_offset 0. */
unsigned long bitmap_find_next_zero_area(unsigned long *map, unsigned long size,
					 unsigned long start, unsigned int nr,
					 unsigned long align_mask)
{
	unsigned long index, end, i;
again:
	index = find_next_zero_bit(map, size, start);
	index = (index + align_mask) & ~align_mask;
	end = index + nr;
	if (end > size)
		return end;
	i = find_next_bit(map, end, index);
	if (i < end) {
		start = i + 1;
		goto again;
	}
	return index;
}

/* --- executable memory ------------------------------------------------ */
static bool area_has(const struct shim_area *a, const void *addr)
{
	return a->addr && (char *)addr >= (char *)a->addr && (char *)addr < (char *)a->addr + a->size;
}

/*
 * The area holding @addr.  The last one found is tried first: the kernel
 * finds a page in constant time, and a linear walk here would charge the
 * allocator for the number of areas the shim keeps.
 */
static struct shim_area *find_area(const void *addr)
{
	static struct shim_area *last;
	int i;

	if (last && area_has(last, addr))
		return last;
	for (i = 0; i < areas_used; i++)
		if (area_has(&areas[i], addr))
			return last = &areas[i];
	return NULL;
}

const struct shim_area *shim_area_of(const void *addr)
{
	return find_area(addr);
}

/* An anonymous mapping of @size aligned to @align, as a new area. */
static void *map_area(size_t size, size_t align, bool huge)
{
	size_t len = size + align;
	char *p, *start;
	int i;

	for (i = 0; i < MAX_AREAS && areas[i].addr; i++)
		;
	if (i == MAX_AREAS)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	start = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	if (start > p)
		munmap(p, start - p);
	if (start + size < p + len)
		munmap(start + size, p + len - start - size);
	areas[i] = (struct shim_area){ .addr = start, .size = size, .huge = huge };
	if (i >= areas_used)
		areas_used = i + 1;
	shim.areas++;
	shim.huge_areas += huge;
	return start;
}

void *module_alloc(unsigned long size)
{
	if (fails(&shim.fail_module_alloc))
		return NULL;
	return map_area(round_up(size, PAGE_SIZE), PAGE_SIZE, false);
}

/* Like the kernel: PMD aligned huge pages from PMD_SIZE up, 4K when none can be had. */
void *module_alloc_huge(unsigned long size)
{
	bool huge = size >= PMD_SIZE && !fails(&shim.fail_huge);
	void (*hook)(void) = shim.on_alloc_huge;
	void *addr;

	if (fails(&shim.fail_module_alloc))
		return NULL;
	shim.on_alloc_huge = NULL;
	if (hook)
		hook();
	if (!huge)
		return map_area(round_up(size, PAGE_SIZE), PAGE_SIZE, false);
	addr = map_area(round_up(size, PMD_SIZE), PMD_SIZE, true);
	if (addr && shim.pool_areas > 0) {
		shim.pool_areas--;
		find_area(addr)->pool = true;
	}
	return addr;
}

bool is_vm_area_exec_pool(const void *addr)
{
	struct shim_area *a = find_area(addr);

	return a && a->addr == addr && a->pool;
}

void module_memfree(void *addr)
{
	struct shim_area *a = find_area(addr);

	if (!a || a->addr != addr) {
		shim_warn(__FILE__, __LINE__, "module_memfree(%p): no such area\n", addr);
		return;
	}
	/* read-only or executable memory may only go back with its permissions reset */
	if ((a->ro || a->x) && !a->reset_perms)
		shim_warn(__FILE__, __LINE__, "freeing protected %p without VM_FLUSH_RESET_PERMS\n",
			  addr);
	munmap(a->addr, a->size);
	shim.areas--;
	shim.huge_areas -= a->huge;
	memset(a, 0, sizeof(*a));
}

void set_vm_flush_reset_perms(void *addr)
{
	struct shim_area *a = find_area(addr);

	if (a)
		a->reset_perms = true;
}

bool is_vm_area_hugepages(const void *addr)
{
	struct shim_area *a = find_area(addr);

	return a && a->huge;
}

/* Whole areas only, as prog_pack.c asks: a partial change would split a huge page. */
static struct shim_area *protect_target(unsigned long addr, int numpages)
{
	struct shim_area *a = find_area((void *)addr);

	if (!a || a->addr != (void *)addr || a->size != (size_t)numpages * PAGE_SIZE) {
		shim_warn(__FILE__, __LINE__, "set_memory on part of an area: %lx+%d pages\n",
			  addr, numpages);
		return NULL;
	}
	return a;
}

int set_memory_ro(unsigned long addr, int numpages)
{
	struct shim_area *a = protect_target(addr, numpages);

	if (fails(&shim.fail_set_memory))
		return -ENOMEM;
	if (!a)
		return -EINVAL;
	a->ro = true;
	if (shim.no_mprotect)
		return 0;
	return mprotect(a->addr, a->size, PROT_READ) ? -errno : 0;
}

int set_memory_x(unsigned long addr, int numpages)
{
	struct shim_area *a = protect_target(addr, numpages);

	if (fails(&shim.fail_set_memory))
		return -ENOMEM;
	if (!a)
		return -EINVAL;
	a->x = true;
	return 0;
}

/* text_poke: write through a writable alias, however the area is protected. */
void shim_text_copy(void *dst, const void *src, size_t len)
{
	struct shim_area *a = find_area(dst);

	if (!a) {
		shim_warn(__FILE__, __LINE__, "text copy to %p outside any area\n", dst);
		return;
	}
	if (a->ro && !shim.no_mprotect)
		mprotect(a->addr, a->size, PROT_READ | PROT_WRITE);
	memmove(dst, src, len);
	if (a->ro && !shim.no_mprotect)
		mprotect(a->addr, a->size, PROT_READ);
}

int bpf_arch_text_invalidate(void *dst, size_t len)
{
	struct shim_area *a = find_area(dst);

	if (!a) {
		shim_warn(__FILE__, __LINE__, "text invalidate at %p outside any area\n", dst);
		return -EINVAL;
	}
	if (a->ro && !shim.no_mprotect)
		mprotect(a->addr, a->size, PROT_READ | PROT_WRITE);
	memset(dst, SHIM_TRAP, len);
	if (a->ro && !shim.no_mprotect)
		mprotect(a->addr, a->size, PROT_READ);
	return 0;
}

void shim_fill_trap(void *area, unsigned int size)
{
	memset(area, SHIM_TRAP, size);
}

/* --- time, work, shrinker, parameters ----------------------------------- */
unsigned long jiffies = 1000;

/* Every work ever queued: prog_pack.c has two. */
static struct work_struct *works[4];

static void queue(struct work_struct *w, unsigned long delay)
{
	size_t i;

	w->pending = true;
	w->due = jiffies + delay;
	for (i = 0; i < ARRAY_SIZE(works) && works[i] && works[i] != w; i++)
		;
	if (i == ARRAY_SIZE(works))
		shim_warn(__FILE__, __LINE__, "too many works\n");
	else
		works[i] = w;
}

bool schedule_work(struct work_struct *w)
{
	if (w->pending)
		return false;
	queue(w, 0);
	return true;
}

bool schedule_delayed_work(struct delayed_work *dw, unsigned long delay)
{
	if (dw->work.pending)
		return false;
	queue(&dw->work, delay);
	return true;
}

bool mod_delayed_work(void *wq, struct delayed_work *dw, unsigned long delay)
{
	bool was = dw->work.pending;

	(void)wq;
	queue(&dw->work, delay);
	return was;
}

struct work_struct *shim_next_work(void)
{
	struct work_struct *next = NULL;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(works) && works[i]; i++)
		if (works[i]->pending && (!next || time_after(next->due, works[i]->due)))
			next = works[i];
	return next;
}

bool shim_run_work(void)
{
	struct work_struct *w = shim_next_work();

	if (!w)
		return false;
	if (time_after(w->due, jiffies))
		jiffies = w->due;
	w->pending = false;
	w->fn(w);
	return true;
}

bool flush_delayed_work(struct delayed_work *dw)
{
	if (!dw->work.pending)
		return false;
	dw->work.pending = false;
	dw->work.fn(&dw->work);
	return true;
}

int shim_run_due_works(void)
{
	int n = 0;

	while (shim_next_work() && !time_after(shim_next_work()->due, jiffies) && shim_run_work())
		n++;
	return n;
}

void shim_drop_works(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(works) && works[i]; i++)
		works[i]->pending = false;
}

struct zone shim_zone;

unsigned long zone_page_state(struct zone *zone, int item)
{
	(void)zone;
	(void)item;
	return shim.pages_short ? 10 : 1UL << 20;
}

unsigned long high_wmark_pages(struct zone *zone)
{
	(void)zone;
	return 1000;
}

int register_shrinker(struct shrinker *s, const char *fmt, ...)
{
	(void)fmt;
	shim.shrinker = s;
	return 0;
}

int register_vmap_purge_notifier(struct notifier_block *nb)
{
	shim.vmap_purge = nb;
	return 0;
}

int param_set_uint_minmax(const char *val, const struct kernel_param *kp,
			  unsigned int min, unsigned int max)
{
	char *end;
	unsigned long v = strtoul(val, &end, 0);

	if (end == val || v < min || v > max)
		return -EINVAL;
	*(unsigned int *)kp->arg = v;
	return 0;
}

int param_get_uint(char *buffer, const struct kernel_param *kp)
{
	return sprintf(buffer, "%u\n", *(unsigned int *)kp->arg);
}

/* --- xarray: open addressing on the index, entries never moved but on growth --- */
struct xa_slot {
	unsigned long index;
	void *entry;		/* NULL: empty; XA_TOMBSTONE: erased */
};
#define XA_TOMBSTONE ((void *)1)
#define XA_ERROR ((void *)2)

static struct xa_slot *xa_find(struct xarray *xa, unsigned long index, bool for_insert)
{
	size_t i, mask = xa->size - 1;
	struct xa_slot *tomb = NULL;

	if (!xa->size)
		return NULL;
	for (i = (index * 0x9e3779b97f4a7c15ul) >> 7 & mask;; i = (i + 1) & mask) {
		struct xa_slot *s = &xa->slots[i];

		if (!s->entry)
			return for_insert ? (tomb ?: s) : NULL;
		if (s->entry == XA_TOMBSTONE) {
			if (!tomb)
				tomb = s;
		} else if (s->index == index) {
			return s;
		}
	}
}

void *xa_load(struct xarray *xa, unsigned long index)
{
	struct xa_slot *s = xa_find(xa, index, false);

	return s ? s->entry : NULL;
}

void *xa_store(struct xarray *xa, unsigned long index, void *entry, int gfp)
{
	struct xa_slot *s;
	void *old;

	(void)gfp;
	if (fails(&shim.fail_xa_store))
		return XA_ERROR;
	if ((xa->used + 1) * 2 > xa->size) {	/* grow, dropping tombstones */
		struct xarray bigger = { calloc(xa->size ? xa->size * 2 : 64, sizeof(*s)),
					 xa->size ? xa->size * 2 : 64, 0 };
		size_t i;

		if (!bigger.slots)
			return XA_ERROR;
		for (i = 0; i < xa->size; i++)
			if (xa->slots[i].entry && xa->slots[i].entry != XA_TOMBSTONE) {
				*xa_find(&bigger, xa->slots[i].index, true) = xa->slots[i];
				bigger.used++;
			}
		free(xa->slots);
		*xa = bigger;
	}
	s = xa_find(xa, index, true);
	old = s->entry && s->entry != XA_TOMBSTONE && s->index == index ? s->entry : NULL;
	if (!old)
		xa->used++;
	s->index = index;
	s->entry = entry;
	return old;
}

void *xa_erase(struct xarray *xa, unsigned long index)
{
	struct xa_slot *s = xa_find(xa, index, false);
	void *old = s ? s->entry : NULL;

	if (s)
		s->entry = XA_TOMBSTONE;
	return old;
}

int xa_err(void *entry)
{
	return entry == XA_ERROR ? -ENOMEM : 0;
}
