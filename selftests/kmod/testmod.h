/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the test modules driven by commands share: their debugfs command
 * file, and a look at the direct map.
 *
 * The file /sys/kernel/debug/NAME takes one command per write, "CMD [N]",
 * run under one mutex; a read gives what the last command report()ed, as
 * "key value" lines.  A module lists its commands in a table ending with
 * an empty entry and creates the file with testmod_create().
 */
#ifndef TESTMOD_H
#define TESTMOD_H

#include <linux/debugfs.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <asm/pgtable.h>

struct testmod_cmd {
	const char *name;
	int (*run)(unsigned int n);
	bool needs_n;		/* N given and not 0 */
};

static DEFINE_MUTEX(testmod_lock);
static char testmod_result[512];
static const struct testmod_cmd *testmod_cmds;
static struct dentry *testmod_file;

static __printf(1, 2) void report(const char *fmt, ...)
{
	size_t len = strlen(testmod_result);
	va_list args;

	va_start(args, fmt);
	vsnprintf(testmod_result + len, sizeof(testmod_result) - len, fmt, args);
	va_end(args);
}

static ssize_t testmod_write(struct file *f, const char __user *ubuf, size_t len, loff_t *off)
{
	const struct testmod_cmd *c;
	char buf[32], cmd[16];
	unsigned int n = 0;
	int err = -EINVAL;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%15s %u", cmd, &n) < 1)
		return -EINVAL;

	mutex_lock(&testmod_lock);
	testmod_result[0] = '\0';
	for (c = testmod_cmds; c->name; c++) {
		if (strcmp(cmd, c->name))
			continue;
		if (n || !c->needs_n)
			err = c->run(n);
		break;
	}
	mutex_unlock(&testmod_lock);
	return err ?: len;
}

static int testmod_show(struct seq_file *m, void *v)
{
	mutex_lock(&testmod_lock);
	seq_puts(m, testmod_result);
	mutex_unlock(&testmod_lock);
	return 0;
}

static int testmod_open(struct inode *inode, struct file *f)
{
	return single_open(f, testmod_show, NULL);
}

static const struct file_operations testmod_fops = {
	.owner = THIS_MODULE,
	.open = testmod_open,
	.read = seq_read,
	.write = testmod_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static void testmod_create(const char *name, const struct testmod_cmd *cmds)
{
	testmod_cmds = cmds;
	testmod_file = debugfs_create_file(name, 0600, NULL, NULL, &testmod_fops);
}

/* Waits for a command running, if any: none runs after it returns. */
static void testmod_remove(void)
{
	debugfs_remove(testmod_file);
}

/*
 * The level of the direct-map entry at @addr (lookup_address()'s: 1 = 4K,
 * 2 = 2M, 3 = 1G; 0 if none) and its flags (pte_flags(), 0 if none).  With
 * interrupts off, as the kernel's own lockless walkers: a collapse frees
 * the tables it replaced only after a TLB flush has interrupted every CPU.
 */
static int direct_map_entry(unsigned long addr, pteval_t *flags)
{
	unsigned int level = 0;
	unsigned long irqs;
	pte_t *pte;

	local_irq_save(irqs);
	pte = lookup_address(addr, &level);
	*flags = pte ? pte_flags(*pte) : 0;
	local_irq_restore(irqs);
	return pte ? level : 0;
}

/* The entry's level, and, when @rw is given, whether it is writable */
static int direct_map_level(unsigned long addr, bool *rw)
{
	pteval_t flags;
	int level = direct_map_entry(addr, &flags);

	if (rw)
		*rw = flags & _PAGE_RW;
	return level;
}

#endif
