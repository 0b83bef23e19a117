// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sys.h"

static long long read_keyed(const char *path, const char *name, const char *sep)
{
	char line[256], key[128];
	long long val, found = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	snprintf(key, sizeof(key), "%s%s", name, sep);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, strlen(key)) &&
		    sscanf(line + strlen(key), " %lld", &val) == 1) {
			found = val;
			break;
		}
	}
	fclose(f);
	return found;
}

long long read_vmstat(const char *name)
{
	return read_keyed("/proc/vmstat", name, " ");
}

long long read_meminfo_kb(const char *name)
{
	return read_keyed("/proc/meminfo", name, ":");
}

int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY), err;
	ssize_t n = 0, len = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)len + 1 < size && (n = read(fd, buf + len, size - len - 1)) > 0)
		len += n;
	err = n < 0 ? -errno : 0;
	close(fd);
	buf[len] = 0;
	return err ?: (int)len;
}

long long read_key(const char *path, const char *key)
{
	char buf[4096], pat[64], *p;

	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	snprintf(pat, sizeof(pat), "%s ", key);
	for (p = buf; (p = strstr(p, pat)); p++)
		if (p == buf || p[-1] == '\n')
			return strtoll(p + strlen(pat), NULL, 10);
	return -1;
}

int drain_file(const char *path)
{
	char buf[1 << 16];
	int fd = open(path, O_RDONLY), err = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		err = -errno;
	close(fd);
	return err;
}

bool cmdline_has(const char *word)
{
	char buf[4096], *tok, *save;

	if (read_file("/proc/cmdline", buf, sizeof(buf)) < 0)
		return false;
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, word))
			return true;
	return false;
}

bool cmdline_value(const char *key, char *val, size_t size)
{
	char buf[4096], *tok, *save;
	size_t len = strlen(key);

	if (read_file("/proc/cmdline", buf, sizeof(buf)) < 0)
		return false;
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (!strncmp(tok, key, len) && tok[len] == '=') {
			snprintf(val, size, "%s", tok + len + 1);
			return true;
		}
	return false;
}

bool expect_huge_vmalloc(const char *runner_args)
{
	if (strstr(runner_args, "expect-nohuge"))
		return false;
	return !cmdline_has("nohugevmalloc");
}

bool debug_kernel(void)
{
	return !access("/sys/kernel/debug/kmemleak", F_OK);
}

int possible_nodes(void)
{
	char buf[64];
	int first, last;

	/* "0", or a range such as "0-3"; no file: a kernel without NUMA */
	if (read_file("/sys/devices/system/node/possible", buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%d-%d", &first, &last) == 2)
		return last - first + 1;
	return 1;
}

int module_load(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, params ?: "", 0))
		err = -errno;
	close(fd);
	return err;
}

int module_unload(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

int kmsg_open(bool from_end)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (from_end)
		lseek(fd, 0, SEEK_END);
	return fd;
}

int kmsg_next_seq(int fd, char *buf, size_t size, unsigned long long *seq)
{
	char rec[8192], *text, *nl;
	ssize_t n;

	n = read(fd, rec, sizeof(rec) - 1);
	if (n < 0)	/* EPIPE: records overwritten; the next read goes on with the oldest left */
		return errno == EAGAIN ? 0 : -errno;
	rec[n] = 0;
	/* "prio,seq,usec,flags;text\n KEY=value..." */
	if (seq && sscanf(rec, "%*u,%llu,", seq) != 1)
		return -EINVAL;
	text = strchr(rec, ';');
	text = text ? text + 1 : rec;
	nl = strchr(text, '\n');
	if (nl)
		*nl = 0;
	snprintf(buf, size, "%s", text);
	return 1;
}

int kmsg_next(int fd, char *buf, size_t size)
{
	return kmsg_next_seq(fd, buf, size, NULL);
}

/* A line of the kernel log that reports a bug: the lists guest/check-log.sh reads. */
static const char *const bad_patterns[] = {
#include "log-patterns.h"
};

/* Lines that match one of them but report no bug: guest/log-allowed. */
static const char *const allowed[] = {
#include "log-allowed.h"
};

const char *kmsg_bad_pattern(const char *msg)
{
	size_t i;

	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (strstr(msg, allowed[i]))
			return NULL;
	for (i = 0; i < sizeof(bad_patterns) / sizeof(bad_patterns[0]); i++)
		if (strstr(msg, bad_patterns[i]))
			return bad_patterns[i];
	return NULL;
}

int raise_nofile(unsigned long n)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur >= n)
		return 0;
	rl.rlim_cur = rl.rlim_max = n;
	return setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0;
}

uint64_t kallsyms_addr(const char *name)
{
	char line[256], sym[128], type;
	unsigned long long a;
	uint64_t addr = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (!addr && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %127s", &a, &type, sym) == 3 && !strcmp(sym, name))
			addr = a;
	fclose(f);
	return addr;
}
