// SPDX-License-Identifier: GPL-2.0
/*
 * The harness self-test (make test-harness): a kernel that goes wrong on
 * purpose, in the ways a bug in the series would, so that the log judge
 * (guest/check-log.sh) is shown to fail each run.
 *
 *   what=warn  WARN_ON() from a kworker: a warning in a deferred path
 *              (patch 21's collapse worker, the pack shrinker) that no
 *              test's own assertion sees
 *   what=oops  a NULL pointer dereference in a kworker: the worker dies,
 *              the test that queued it goes on and can pass
 *   what=hang  a kthread blocked uninterruptibly for hang_s seconds: with
 *              kernel.hung_task_timeout_secs below that, the hung-task
 *              detector names it; the module stays loaded until it ends
 *
 * Only ever loaded in a throwaway QEMU guest.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/workqueue.h>

static char *what = "warn";
module_param(what, charp, 0444);
MODULE_PARM_DESC(what, "warn, oops or hang");

static unsigned int hang_s = 10;
module_param(hang_s, uint, 0444);
MODULE_PARM_DESC(hang_s, "what=hang: seconds the kthread stays blocked");

static int *volatile harness_null;

static void harness_warn(struct work_struct *work)
{
	WARN_ON(1);
}
static DECLARE_WORK(warn_work, harness_warn);

static void harness_oops(struct work_struct *work)
{
	pr_info("harness_bug: dereferencing NULL from a kworker\n");
	*harness_null = 1;
}
static DECLARE_WORK(oops_work, harness_oops);

static int harness_hang(void *unused)
{
	/* msleep() sleeps in TASK_UNINTERRUPTIBLE, as a task stuck on a lock. */
	msleep(hang_s * 1000);
	return 0;
}

static int __init harness_bug_init(void)
{
	struct task_struct *t;

	if (!strcmp(what, "warn")) {
		schedule_work(&warn_work);
		flush_work(&warn_work);
	} else if (!strcmp(what, "oops")) {
		/* Not flushed: the worker never returns. */
		schedule_work(&oops_work);
	} else if (!strcmp(what, "hang")) {
		t = kthread_run(harness_hang, NULL, "harness_hang");
		if (IS_ERR(t))
			return PTR_ERR(t);
	} else {
		pr_err("harness_bug: what=%s: not warn, oops or hang\n", what);
		return -EINVAL;
	}
	return 0;
}
module_init(harness_bug_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Kernel failures on purpose, for the harness self-test");
