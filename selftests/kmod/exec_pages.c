// SPDX-License-Identifier: GPL-2.0
/*
 * Makes and frees the executable pages x86 takes from module_alloc() for
 * others than module loading, and looks at the direct map under them, for
 * the exec_pages test.  Commands, written to /sys/kernel/debug/exec_pages
 * one at a time; the result of the last one is read back from the same
 * file as "key value" lines:
 *
 *   kprobes N  N kprobes registered in probe_sym, at the instruction
 *              boundaries after its first byte (kprobes on ftrace take
 *              no slot; these take instruction slots, and those the
 *              optimizer turns into jumps optprobe slots too), held until
 *              "free"
 *   ftrace N   N ftrace_ops saving registers, each filtered to probe_sym,
 *              registered: each gets a trampoline of its own; held until
 *              "free"
 *   free       unregisters them: their slots and trampolines are freed
 *   alias      the pages of this module's text, rodata and ro_after_init,
 *              and of the kprobes' instruction slots and trampolines held:
 *              how many, how many
 *              of them have a writable direct-map alias, how many sit on
 *              a 2M or 1G direct-map entry
 *
 * Nothing probed runs while the test holds them: probe_sym is
 * load_module(), and the test loads no module meanwhile.
 */
#include <linux/delay.h>
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "testmod.h"

static char *probe_sym = "load_module";
module_param(probe_sym, charp, 0400);
MODULE_PARM_DESC(probe_sym, "the function the kprobes and ftrace_ops are put in");

/* offsets tried past the first byte: load_module() is some 6.8 KiB */
#define MAX_OFFSET	16384
#define MAX_HELD	2048

static struct kprobe *probes;
static unsigned int nr_probes;
static struct ftrace_ops *ops;
static unsigned int nr_ops;

static int cmd_free(unsigned int unused)
{
	unsigned int i;

	for (i = 0; i < nr_probes; i++)
		unregister_kprobe(&probes[i]);
	kfree(probes);
	probes = NULL;
	nr_probes = 0;
	for (i = 0; i < nr_ops; i++) {
		unregister_ftrace_function(&ops[i]);
		ftrace_free_filter(&ops[i]);
	}
	kfree(ops);
	ops = NULL;
	nr_ops = 0;
	return 0;
}

static int cmd_kprobes(unsigned int n)
{
	unsigned int offset;
	int err;

	if (nr_probes || n > MAX_HELD)
		return -EBUSY;
	probes = kcalloc(n, sizeof(*probes), GFP_KERNEL);
	if (!probes)
		return -ENOMEM;
	for (offset = 1; nr_probes < n && offset < MAX_OFFSET; offset++) {
		struct kprobe *p = &probes[nr_probes];

		p->symbol_name = probe_sym;
		p->offset = offset;
		err = register_kprobe(p);
		if (!err) {
			nr_probes++;
			continue;
		}
		/* not an instruction boundary, an instruction kprobes cannot step, a jump label */
		memset(p, 0, sizeof(*p));
		if (err != -EILSEQ && err != -EINVAL && err != -EBUSY)
			return err;
	}
	/* the optimizer makes optprobes (slots of their own) a few jiffies later */
	msleep(200);
	report("held %u\nlast_offset %u\n", nr_probes, offset - 1);
	return nr_probes == n ? 0 : -ENOSPC;
}

static void nop_func(unsigned long ip, unsigned long parent_ip, struct ftrace_ops *op,
		     struct ftrace_regs *fregs)
{
}

static int cmd_ftrace(unsigned int n)
{
	unsigned int tramps = 0;
	int err;

	if (nr_ops || n > MAX_HELD)
		return -EBUSY;
	ops = kcalloc(n, sizeof(*ops), GFP_KERNEL);
	if (!ops)
		return -ENOMEM;
	while (nr_ops < n) {
		struct ftrace_ops *op = &ops[nr_ops];

		op->func = nop_func;
		op->flags = FTRACE_OPS_FL_SAVE_REGS_IF_SUPPORTED;
		err = ftrace_set_filter(op, probe_sym, strlen(probe_sym), 1);
		if (!err)
			err = register_ftrace_function(op);
		if (err) {
			ftrace_free_filter(op);
			return err;
		}
		nr_ops++;
		tramps += !!op->trampoline;
	}
	report("held %u\ntrampolines %u\n", nr_ops, tramps);
	return 0;
}

/* The level of the direct-map entry under @vaddr's page, and whether it is writable */
static int alias_level(const void *vaddr, bool *rw)
{
	struct page *page = vmalloc_to_page(vaddr);

	return page ? direct_map_level((unsigned long)page_address(page), rw) : 0;
}

struct alias_count {
	unsigned int pages, rw, large, unmapped;
};

static void alias_add(struct alias_count *c, const void *vaddr)
{
	bool rw = false;
	int level = alias_level(vaddr, &rw);

	c->pages++;
	c->unmapped += !level;
	c->rw += rw;
	c->large += level > 1;
}

static void alias_report(const char *what, const struct alias_count *c)
{
	report("%s_pages %u\n%s_rw %u\n%s_large %u\n%s_unmapped %u\n", what, c->pages,
	       what, c->rw, what, c->large, what, c->unmapped);
}

static int cmd_alias(unsigned int unused)
{
	const struct module_layout *l = &THIS_MODULE->core_layout;
	struct alias_count mod = {}, slot = {}, tramp = {};
	unsigned long off, page, last = 0;
	unsigned int i;

	/* text, rodata and ro_after_init: read-only since the module's init ended */
	for (off = 0; off < l->ro_after_init_size; off += PAGE_SIZE)
		alias_add(&mod, l->base + off);
	alias_report("module", &mod);
	/* probes sit in slots in few pages: each page once */
	for (i = 0; i < nr_probes; i++) {
		page = (unsigned long)probes[i].ainsn.insn & PAGE_MASK;
		if (page && page != last)
			alias_add(&slot, (void *)page);
		last = page;
	}
	alias_report("slot", &slot);
	for (i = 0; i < nr_ops; i++)
		for (off = 0; ops[i].trampoline && off < ops[i].trampoline_size; off += PAGE_SIZE)
			alias_add(&tramp, (void *)(ops[i].trampoline + off));
	alias_report("tramp", &tramp);
	return 0;
}

static const struct testmod_cmd cmds[] = {
	{ "kprobes", cmd_kprobes, true },
	{ "ftrace", cmd_ftrace, true },
	{ "free", cmd_free },
	{ "alias", cmd_alias },
	{}
};

static int __init exec_pages_init(void)
{
	testmod_create("exec_pages", cmds);
	return 0;
}
module_init(exec_pages_init);

static void __exit exec_pages_exit(void)
{
	testmod_remove();
	cmd_free(0);
}
module_exit(exec_pages_exit);

MODULE_DESCRIPTION("Make kprobe slots and ftrace trampolines, for the exec_pages test");
MODULE_LICENSE("GPL");
