// SPDX-License-Identifier: GPL-2.0
/*
 * lsm_deny DENIED ALLOWED ROUNDS: BPF LSM as a user of it loads it, in
 * rounds: each round loads lsm_deny.bpf.c's program, attaches it (a BPF
 * trampoline on the LSM hook), checks that opening DENIED fails with EPERM
 * and opening ALLOWED works, and unloads it.  Exits 1, saying why, on the
 * first thing that does not hold; 0 after "lsm_deny: N rounds ...".
 *
 * Debian 12's systemd is built without BPF_FRAMEWORK, so its
 * RestrictFileSystems= (BPF LSM) does not exist there: make test-system
 * runs this instead (guest/system/payload/run).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "lsm_deny.skel.h"

/* The kernel's dev_t: 12 bits of major above 20 bits of minor. */
static unsigned int kernel_dev(dev_t dev)
{
	return major(dev) << 20 | minor(dev);
}

static int round_once(const char *denied, const char *allowed, int round)
{
	struct lsm_deny *skel;
	struct stat st;
	int fd, err = 1;

	if (stat(denied, &st)) {
		fprintf(stderr, "lsm_deny: stat %s: %s\n", denied, strerror(errno));
		return 1;
	}
	skel = lsm_deny__open();
	if (!skel) {
		fprintf(stderr, "lsm_deny: open: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->deny_ino = st.st_ino;
	skel->rodata->deny_dev = kernel_dev(st.st_dev);
	skel->rodata->deny_tgid = getpid();
	if (lsm_deny__load(skel)) {
		fprintf(stderr, "lsm_deny: round %d: load: %s\n", round, strerror(errno));
		goto out;
	}
	if (lsm_deny__attach(skel)) {
		fprintf(stderr, "lsm_deny: round %d: attach: %s (is bpf in /sys/kernel/security/lsm?)\n",
			round, strerror(errno));
		goto out;
	}
	fd = open(denied, O_RDONLY);
	if (fd >= 0 || errno != EPERM) {
		fprintf(stderr, "lsm_deny: round %d: open %s: %s, not EPERM\n", round, denied,
			fd >= 0 ? "opened" : strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	fd = open(allowed, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "lsm_deny: round %d: open %s: %s\n", round, allowed, strerror(errno));
		goto out;
	}
	close(fd);
	if (skel->bss->denied != 1) {
		fprintf(stderr, "lsm_deny: round %d: the program counted %llu refusals, not 1\n",
			round, (unsigned long long)skel->bss->denied);
		goto out;
	}
	err = 0;
out:
	lsm_deny__destroy(skel);
	return err;
}

int main(int argc, char **argv)
{
	int rounds, i;

	if (argc != 4 || (rounds = atoi(argv[3])) <= 0) {
		fprintf(stderr, "usage: lsm_deny DENIED ALLOWED ROUNDS\n");
		return 2;
	}
	for (i = 1; i <= rounds; i++)
		if (round_once(argv[1], argv[2], i))
			return 1;
	/* Unloaded: the file opens again. */
	i = open(argv[1], O_RDONLY);
	if (i < 0) {
		fprintf(stderr, "lsm_deny: open %s after unloading: %s\n", argv[1], strerror(errno));
		return 1;
	}
	close(i);
	printf("lsm_deny: %d rounds: %s refused (EPERM) while loaded, %s opened, %s again once unloaded\n",
	       rounds, argv[1], argv[2], argv[1]);
	return 0;
}
