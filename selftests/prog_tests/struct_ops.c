// SPDX-License-Identifier: GPL-2.0
/*
 * A BPF TCP congestion control (progs/tcp_ca_count.bpf.c, Reno through
 * the kernel's Reno functions) registered and unregistered 400 times, each
 * time as a new struct_ops map, the way a daemon reloading it does: a new
 * image each time.  Every 50th time a TCP connection over loopback uses
 * it, and TCP must call it (init, cong_avoid, counted by the programs)
 * while 1 MiB goes through.  While registered, its image is one more in
 * the packs, charged what it takes.  After: nothing left (programs,
 * images, packs, JIT budget), no W+X, free pack bytes int3, and with huge
 * packs no direct-map split, DirectMap4k and 4K direct-map entries as
 * before.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../checks.h"
#include "../lib/churn.h"
#include "../lib/packstats.h"
#include "../lib/progs.h"
#include "../lib/sys.h"
#include "../test_runner.h"
#include "tcp_ca_count.skel.h"

#define REGISTRATIONS	400
#define USE_EVERY	50
#define CA_NAME		"bpf_ca_count"
#define BYTES		(1 << 20)

static int loopback_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		err = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (!err && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		err = -errno;
	close(fd);
	return err;
}

struct sink {
	int fd;
	long long got;
};

static void *drain(void *arg)
{
	struct sink *s = arg;
	static char buf[65536];
	ssize_t n;

	while ((n = read(s->fd, buf, sizeof(buf))) > 0)
		s->got += n;
	return NULL;
}

/*
 * A connection over loopback whose sender uses @ca: BYTES sent and
 * received.  0, or -errno.
 */
static int tcp_exchange(const char *ca)
{
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	static char buf[65536];
	char seen[16] = "";	/* TCP_CA_NAME_MAX */
	socklen_t seen_len = sizeof(seen);
	struct sink s = { .fd = -1 };
	int lsn, cli = -1, err = 0;
	long long sent = 0;
	pthread_t th;

	lsn = socket(AF_INET, SOCK_STREAM, 0);
	if (lsn < 0 || bind(lsn, (void *)&addr, sizeof(addr)) || listen(lsn, 1) ||
	    getsockname(lsn, (void *)&addr, &len))
		goto fail;
	cli = socket(AF_INET, SOCK_STREAM, 0);
	if (cli < 0 || setsockopt(cli, IPPROTO_TCP, TCP_CONGESTION, ca, strlen(ca)) ||
	    connect(cli, (void *)&addr, sizeof(addr)))
		goto fail;
	s.fd = accept(lsn, NULL, NULL);
	if (s.fd < 0 || getsockopt(cli, IPPROTO_TCP, TCP_CONGESTION, seen, &seen_len))
		goto fail;
	if (!ASSERT_STREQ(seen, ca, "the connection's congestion control")) {
		err = -EINVAL;
		goto out;
	}
	err = -pthread_create(&th, NULL, drain, &s);
	if (err)
		goto out;
	while (sent < BYTES) {
		ssize_t n = write(cli, buf, sizeof(buf));

		if (n <= 0)
			break;
		sent += n;
	}
	shutdown(cli, SHUT_WR);
	pthread_join(th, NULL);
	ASSERT_EQ(s.got, BYTES, "bytes through the connection");
	goto out;
fail:
	err = -errno;
out:
	if (s.fd >= 0)
		close(s.fd);
	if (cli >= 0)
		close(cli);
	if (lsn >= 0)
		close(lsn);
	return err;
}

/* The congestion control in use: TCP calls into it, and its image is in a pack. */
static void use(struct tcp_ca_count *skel, const struct leak_state *before, int i)
{
	__u64 init = skel->bss->init_calls, avoid = skel->bss->cong_avoid_calls;
	char when[48];

	if (!ASSERT_OK(tcp_exchange(CA_NAME), "1 MiB over loopback with " CA_NAME))
		return;
	ASSERT_GT(skel->bss->init_calls, init, "TCP called init");
	ASSERT_GT(skel->bss->cong_avoid_calls, avoid, "TCP called cong_avoid");
	snprintf(when, sizeof(when), "registration %d", i + 1);
	/* one image: the map's; earlier maps' go as their frees complete */
	if (PATCHED_HAS(packstats_available(), PACKSTATS_PATH))
		check_images(before, 1, NULL, when);
}

void test_struct_ops(void)
{
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	struct tcp_ca_count *skel;
	struct mem_snapshot snap;
	struct leak_state before;
	struct bpf_link *link;
	int i, fd, err = 0;
	double t;

	if (!ASSERT_OK(loopback_up(), "bring lo up") ||
	    !ASSERT_OK(jit_quiesce(SETTLE_MS), "quiesce") ||
	    !ASSERT_OK(leak_state_read(&before), "leak state before") ||
	    !ASSERT_OK(snapshot_take(&snap), "snapshot before"))
		return;
	skel = tcp_ca_count__open_and_load();
	if (!ASSERT_TRUE(skel, "open and load tcp_ca_count.bpf.o"))
		return;
	if (!ASSERT_OK(bpf_obj_get_info_by_fd(bpf_map__fd(skel->maps.ca_count), &info, &info_len),
		       "struct_ops map info"))
		goto out;
	/* as libbpf creates it: the kernel wants a BTF object with the map */
	LIBBPF_OPTS(bpf_map_create_opts, opts, .btf_fd = bpf_object__btf_fd(skel->obj),
		    .btf_vmlinux_value_type_id = info.btf_vmlinux_value_type_id);
	t = now_ms();
	for (i = 0; i < REGISTRATIONS && !err; i++) {
		/* a new map for each registration after the skeleton's own */
		if (i) {
			fd = bpf_map_create(BPF_MAP_TYPE_STRUCT_OPS, "ca_count", sizeof(__u32),
					    info.value_size, 1, &opts);
			if (!ASSERT_GE(fd, 0, "create a struct_ops map"))
				break;
			err = bpf_map__reuse_fd(skel->maps.ca_count, fd);
			close(fd);
			if (!ASSERT_OK(err, "reuse the map"))
				break;
		}
		link = bpf_map__attach_struct_ops(skel->maps.ca_count);
		err = link ? 0 : -errno;
		if (!ASSERT_OK(err, "register " CA_NAME))
			break;
		if (i % USE_EVERY == 0)
			use(skel, &before, i);
		err = bpf_link__destroy(link);
		ASSERT_OK(err, "unregister " CA_NAME);
	}
	test__note("%d registrations in %.0f ms; TCP called init %llu, cong_avoid %llu, "
		   "ssthresh %llu times", i, now_ms() - t,
		   (unsigned long long)skel->bss->init_calls,
		   (unsigned long long)skel->bss->cong_avoid_calls,
		   (unsigned long long)skel->bss->ssthresh_calls);
	ASSERT_EQ(i, REGISTRATIONS, "registrations");
out:
	tcp_ca_count__destroy(skel);
	check_no_leak(&before, "after the last map is gone");
	check_invariants("after the last map is gone");
	check_direct_map(&snap, NULL);
}
