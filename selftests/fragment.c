// SPDX-License-Identifier: GPL-2.0
/*
 * fragment: break up free memory so that no 2 MiB block is left free,
 * show /proc/buddyinfo before and after as proof, run a command on the
 * fragmented machine, then give the memory back.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fragment.h"

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-m] [-k KEEP] [COMMAND [ARG...]]\n"
		"  -m       movable: this process's pages (transparent huge pages,\n"
		"           split), which compaction can move; default: unmovable,\n"
		"           kernel pages held by " FRAGMENT_KO "\n"
		"  -k KEEP  hold one page in every KEEP of each 2 MiB block (16)\n"
		"Without COMMAND, holds the memory until stdin closes.\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	enum frag_kind kind = FRAG_UNMOVABLE;
	unsigned int keep = 16;
	struct frag f;
	int c, err, status = 0;
	pid_t pid;

	while ((c = getopt(argc, argv, "+mk:")) != -1) {
		switch (c) {
		case 'm': kind = FRAG_MOVABLE; break;
		case 'k': keep = strtoul(optarg, NULL, 0); break;
		default: usage(argv[0]);
		}
	}
	if (!keep)
		usage(argv[0]);
	printf("fragment: buddyinfo before (%ld free 2 MiB blocks)\n", free_huge_blocks());
	print_buddyinfo();
	err = fragment(&f, kind, keep);
	if (err) {
		fprintf(stderr, "fragment: %s\n", strerror(-err));
		return 1;
	}
	printf("fragment: %s, %ld blocks of 2 MiB broken, one page in %u held\n",
	       kind == FRAG_MOVABLE ? "movable" : "unmovable", f.blocks, keep);
	printf("fragment: buddyinfo after (%ld free 2 MiB blocks)\n", free_huge_blocks());
	print_buddyinfo();
	fflush(stdout);
	if (optind < argc) {
		pid = fork();
		if (pid == 0) {
			execvp(argv[optind], argv + optind);
			perror(argv[optind]);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0)
			status = 1 << 8;
	} else {
		while (getchar() != EOF)
			;
	}
	fragment_release(&f);
	printf("fragment: released (%ld free 2 MiB blocks)\n", free_huge_blocks());
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
