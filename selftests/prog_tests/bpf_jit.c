// SPDX-License-Identifier: GPL-2.0
/* The JIT is on (for good, unless -a jit-optional); JITed programs run read-only, executable. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "../lib/progs.h"
#include "../lib/sys.h"
#include "../test_runner.h"

#define JIT_ENABLE "/proc/sys/net/core/bpf_jit_enable"

struct find_ctx {
	uint64_t addr;
	bool found, present, rw, x;
	char section[64];
};

static void find_addr(const char *section, const struct pt_range *r, void *data)
{
	struct find_ctx *c = data;

	if (c->addr < r->start || c->addr >= r->end)
		return;
	c->found = true;
	c->present = r->present;
	c->rw = r->rw;
	c->x = r->x;
	snprintf(c->section, sizeof(c->section), "%s", section);
}

/*
 * BPF_JIT_ALWAYS_ON: the interpreter is gone, so the JIT cannot be turned
 * off.  A kernel built without it (Debian's configuration) takes the 0; the
 * JIT is turned back on at once either way, so that the tests after this
 * one still run JITed code, and -a jit-optional says such a kernel is
 * expected.
 */
static void test_jit_always_on(void)
{
	bool optional = strstr(test__args(), "jit-optional");
	char buf[16];
	int err;

	if (!ASSERT_GT(read_file(JIT_ENABLE, buf, sizeof(buf)), 0, "read bpf_jit_enable"))
		return;
	ASSERT_EQ(atoi(buf), 1, "bpf_jit_enable");
	err = write_file(JIT_ENABLE, "0");
	if (!err)
		ASSERT_OK(write_file(JIT_ENABLE, "1"), "bpf_jit_enable=1 again");
	if (optional && !err)
		test__note("BPF_JIT_ALWAYS_ON off: the JIT can be turned off, and is on");
	else
		ASSERT_EQ(err, -EINVAL, "bpf_jit_enable=0 refused");
}

static void test_jited_image(void)
{
	struct find_ctx c = {};
	uint32_t len = 0;
	FILE *f;
	int fd = load_filter(64, 0);

	if (!ASSERT_GE(fd, 0, "load_filter"))
		return;
	if (!ASSERT_OK(prog_jited_image(fd, &c.addr, &len), "prog_jited_image"))
		goto out;
	ASSERT_GT(len, 0, "jited_prog_len");
	ASSERT_NEQ(c.addr, 0, "jited_ksyms (kptr_restrict hides it?)");
	f = fopen(PTDUMP_PATH, "r");
	if (!ASSERT_TRUE(f, "open " PTDUMP_PATH))
		goto out;
	ASSERT_OK(ptdump_walk(f, find_addr, &c), "ptdump_walk");
	fclose(f);
	printf("image at 0x%llx, %u bytes, in \"%s\"\n", (unsigned long long)c.addr, len, c.section);
	if (!ASSERT_TRUE(c.found && c.present, "image mapped"))
		goto out;
	ASSERT_STREQ(c.section, MODULES_SECTION, "image section");
	ASSERT_FALSE(c.rw, "image read-only");
	ASSERT_TRUE(c.x, "image executable");
out:
	close(fd);
}

static void test_test_run(void)
{
	char data[64] = {};
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = data, .data_size_in = sizeof(data),
		    .repeat = 3);
	int fd = load_filter(200, 42);

	if (!ASSERT_GE(fd, 0, "load_filter"))
		return;
	if (ASSERT_OK(bpf_prog_test_run_opts(fd, &topts) ? -errno : 0, "bpf_prog_test_run"))
		ASSERT_EQ(topts.retval, 42, "retval");
	close(fd);
}

/* A datagram through a unix socket pair whose receiver has filter @fd attached. */
static ssize_t send_through(int fd)
{
	int sv[2];
	char buf[32];
	ssize_t n = -1;

	if (!ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv) ? -errno : 0,
		       "socketpair"))
		return -1;
	if (!ASSERT_OK(setsockopt(sv[1], SOL_SOCKET, SO_ATTACH_BPF, &fd, sizeof(fd)) ? -errno : 0,
		       "SO_ATTACH_BPF"))
		goto out;
	if (!ASSERT_EQ(send(sv[0], "hello", 5, 0), 5, "send"))
		goto out;
	n = recv(sv[1], buf, sizeof(buf), 0);
	if (n < 0)
		n = -errno;
out:
	close(sv[0]);
	close(sv[1]);
	return n;
}

static void test_socket_filter(void)
{
	int drop = load_filter(10, 0), keep = load_filter(300, 0xffff);

	if (ASSERT_GE(drop, 0, "load drop filter"))
		ASSERT_EQ(send_through(drop), -EAGAIN, "filter returning 0 drops");
	if (ASSERT_GE(keep, 0, "load keep filter"))
		ASSERT_EQ(send_through(keep), 5, "filter returning 0xffff keeps");
	close(drop);
	close(keep);
}

void test_bpf_jit(void)
{
	if (test__start_subtest("jit_always_on"))
		test_jit_always_on();
	if (test__start_subtest("jited_image_ro_x"))
		test_jited_image();
	if (test__start_subtest("test_run"))
		test_test_run();
	if (test__start_subtest("socket_filter"))
		test_socket_filter();
}
