// SPDX-License-Identifier: GPL-2.0
/*
 * The exec pool (vmalloc_exec_pool=, patch 19): set aside at boot as
 * asked, in 2 MiB blocks, and not in a kdump kernel.  kexec tools build
 * the kdump kernel's command line from the crashed kernel's /proc/cmdline,
 * so it inherits the parameter, and its small reservation must not lose
 * the pool's size to it.  A kernel booted with elfcorehdr= is a kdump
 * kernel (is_kdump_kernel()): make test-gbpages boots one with
 * vmalloc_exec_pool=16M besides its 4 GiB guest.  Booted without the
 * parameter, there is nothing to check: skipped.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../checks.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define KDUMP_MSG	"no exec pool in a kdump kernel"

/* memparse(): a size with an optional K, M or G. */
static unsigned long long parse_size(const char *s)
{
	char *end;
	unsigned long long n = strtoull(s, &end, 0);

	switch (*end) {
	case 'G': case 'g':
		n <<= 10;
		/* fallthrough */
	case 'M': case 'm':
		n <<= 10;
		/* fallthrough */
	case 'K': case 'k':
		n <<= 10;
	}
	return n;
}

/* Did the kernel log @text since boot? */
static bool logged(const char *text)
{
	int fd = kmsg_open(false), n;
	char msg[1024];
	bool found = false;

	if (fd < 0)
		return false;
	while (!found && (n = kmsg_next(fd, msg, sizeof(msg))) != 0)
		found = n > 0 && strstr(msg, text);
	close(fd);
	return found;
}

void test_exec_pool(void)
{
	char val[64], hdr[64];
	unsigned long long asked;
	long long blocks;
	bool kdump;

	if (!cmdline_value("vmalloc_exec_pool", val, sizeof(val))) {
		test__skip("booted without vmalloc_exec_pool= (make test-gbpages)");
		return;
	}
	asked = parse_size(val);
	kdump = cmdline_value("elfcorehdr", hdr, sizeof(hdr));
	blocks = read_key(POOL_PATH, "blocks");
	if (!REQUIRE_PATCHED(blocks >= 0, POOL_PATH))
		return;
	printf("vmalloc_exec_pool=%s%s%s: %lld blocks of 2 MiB\n", val,
	       kdump ? ", a kdump kernel: elfcorehdr=" : "", kdump ? hdr : "", blocks);
	if (kdump) {
		ASSERT_EQ(blocks, 0, "no pool in a kdump kernel");
		ASSERT_TRUE(logged(KDUMP_MSG), "the log says \"" KDUMP_MSG "\"");
	} else {
		ASSERT_EQ(blocks, (long long)((asked + (2 << 20) - 1) >> 21), "the blocks asked for");
	}
}
