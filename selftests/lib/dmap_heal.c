// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "churn.h"
#include "dmap_heal.h"
#include "sys.h"

int dmap_heal_load(void)
{
	static const char *const fns[][2] = {
		{ "ro_addr", "set_memory_ro" }, { "rw_addr", "set_memory_rw" },
		{ "x_addr", "set_memory_x" }, { "nx_addr", "set_memory_nx" },
		{ "k4_addr", "set_memory_4k" }, { "area_addr", "find_vm_area" },
	};
	char params[512] = "";
	size_t i;

	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		uint64_t addr = kallsyms_addr(fns[i][1]);
		size_t len = strlen(params);

		if (!addr) {
			fprintf(stderr, "dmap_heal: %s not in /proc/kallsyms\n", fns[i][1]);
			return -ENOENT;
		}
		snprintf(params + len, sizeof(params) - len, "%s=%" PRIu64 " ", fns[i][0], addr);
	}
	return module_load("dmap_heal.ko", params);
}

int dmap_heal_unload(void)
{
	return module_unload("dmap_heal");
}

int dmap_heal_cmd(const char *fmt, ...)
{
	char cmd[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return write_file(DMAP_HEAL_CTL, cmd);
}

long long dmap_heal_result(const char *key)
{
	return read_key(DMAP_HEAL_CTL, key);
}

int dmap_heal_areas(const char *cmd, int n, struct mem_snapshot *held,
		    struct mem_snapshot *after)
{
	int err = dmap_heal_cmd("%s %d", cmd, n);

	if (err)
		return err;
	if (dmap_heal_result("held") != n) {
		fprintf(stderr, "dmap_heal: %s %d holds %lld areas\n", cmd, n,
			dmap_heal_result("held"));
		return -EIO;
	}
	if (held) {
		err = snapshot_take(held);
		if (err)
			return err;
	}
	err = dmap_heal_cmd("free");
	return err ? err : snapshot_take(after);
}
