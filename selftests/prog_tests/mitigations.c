// SPDX-License-Identifier: GPL-2.0
/*
 * Which speculation mitigations the kernel runs with, as
 * /sys/devices/system/cpu/vulnerabilities says, in the log of every boot.
 * With "-a expect-thunks" (make test-tramp, an AMD Zen guest booted with
 * spectre_v2=retpoline) it asserts that indirect branches go through
 * retpolines and returns through a return thunk: the JIT and the
 * trampolines then emit jumps to the thunks, whose addresses they must
 * encode for where the code runs, and a wrong one crashes instead of
 * passing by luck.
 */
#include <string.h>

#include "../lib/sys.h"
#include "../test_runner.h"

#define VULN "/sys/devices/system/cpu/vulnerabilities/"

static void read_vuln(const char *name, char *buf, size_t size)
{
	char path[128];

	snprintf(path, sizeof(path), VULN "%s", name);
	if (read_file(path, buf, size) < 0)
		snprintf(buf, size, "(unreadable)");
	buf[strcspn(buf, "\n")] = 0;
	printf("%s: %s\n", name, buf);
}

void test_mitigations(void)
{
	char v2[256], retbleed[256], srso[256];

	read_vuln("spectre_v2", v2, sizeof(v2));
	read_vuln("retbleed", retbleed, sizeof(retbleed));
	read_vuln("spec_rstack_overflow", srso, sizeof(srso));
	test__note("spectre_v2: %s; retbleed: %s; SRSO: %s", v2, retbleed, srso);
	if (!strstr(test__args(), "expect-thunks"))
		return;
	ASSERT_TRUE(strstr(v2, "Retpolines"), "spectre_v2: retpolines on");
	/* untrained return thunk, or SRSO's safe RET: a return thunk either way */
	ASSERT_TRUE(strstr(retbleed, "return thunk") || strstr(srso, "Safe RET"),
		    "returns through a return thunk");
}
