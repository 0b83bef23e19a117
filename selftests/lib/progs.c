// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/filter.h>

#include "packstats.h"
#include "progs.h"
#include "sys.h"

static struct bpf_insn mov64_imm(int reg, int imm)
{
	return (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = reg, .imm = imm };
}

static struct bpf_insn add64_imm(int reg, int imm)
{
	return (struct bpf_insn){ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = reg, .imm = imm };
}

int load_filter(unsigned int insns, int ret)
{
	struct bpf_insn *prog;
	unsigned int i;
	int fd;

	if (insns < FILTER_MIN_INSNS)
		return -EINVAL;
	prog = calloc(insns, sizeof(*prog));
	if (!prog)
		return -ENOMEM;
	/* r2 = 0; r2 += i ...; r0 = ret; exit: straight-line code of the size asked for */
	for (i = 0; i < insns - 2; i++)
		prog[i] = i ? add64_imm(BPF_REG_2, i) : mov64_imm(BPF_REG_2, 0);
	prog[insns - 2] = mov64_imm(BPF_REG_0, ret);
	prog[insns - 1] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", prog, insns, NULL);
	free(prog);
	return fd < 0 ? -errno : fd;
}

int load_fill(void)
{
	return load_filter(FILL_INSNS, 0);
}

/*
 * Loads @load's program into @fds from @n until one lands outside @st's
 * packs, and closes that one: the number of fds then.  On an error, every
 * fd is closed.
 */
static int fill_with(const struct pack_stats *st, int (*load)(void), int *fds, int n, int max)
{
	for (;;) {
		uint64_t addr = 0;
		uint32_t len;
		int fd = load(), err = fd < 0 ? fd : prog_jited_image(fd, &addr, &len);
		bool inside = !err && pack_of(st, addr) >= 0;

		if (inside && n < max) {
			fds[n++] = fd;
			continue;
		}
		if (fd >= 0)
			close(fd);
		if (!err && !inside)
			return n;
		while (n)
			close(fds[--n]);
		return err ? err : -E2BIG;
	}
}

int packs_fill(const struct pack_stats *st, int (*load)(void), int *fds, int max)
{
	int n = fill_with(st, load_fill, fds, 0, max), err;

	if (n >= 0)
		n = fill_with(st, load, fds, n, max);
	/* the pack that last program was loaded into is freed with it */
	err = n < 0 ? 0 : jit_quiesce(20000) ?: packs_uncache();
	if (err)
		while (n)
			close(fds[--n]);
	return err ? err : n;
}

int attach_classic(const struct sock_filter *f, unsigned short len)
{
	struct sock_fprog fprog = { .len = len, .filter = (struct sock_filter *)f };
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), err;

	if (s < 0)
		return -errno;
	if (setsockopt(s, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof(fprog))) {
		err = -errno;
		close(s);
		return err;
	}
	return s;
}

int count_live_progs(void)
{
	__u32 id = 0;
	int n = 0;

	while (!bpf_prog_get_next_id(id, &id))
		n++;
	return errno == ENOENT ? n : -errno;
}

int prog_jited_image(int fd, uint64_t *addr, uint32_t *len)
{
	struct bpf_prog_info info = {};
	__u64 ksym = 0;
	__u32 info_len = sizeof(info);

	info.nr_jited_ksyms = 1;
	info.jited_ksyms = (__u64)(unsigned long)&ksym;
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		return -errno;
	*addr = ksym;
	*len = info.jited_prog_len;
	return 0;
}

static int modules_mapped(uint64_t *bytes)
{
	struct pt_stats st;
	int err = ptdump_stats_kernel(MODULES_SECTION, 0, 0, &st);

	*bytes = pt_mapped(&st);
	return err;
}

int jit_settle(int live, const struct pt_stats *baseline, int timeout_ms)
{
	double deadline = now_ms() + timeout_ms;
	uint64_t bytes;

	do {
		if (count_live_progs() == live && !modules_mapped(&bytes) &&
		    bytes > pt_mapped(baseline))
			packs_uncache();
		if (count_live_progs() == live && !modules_mapped(&bytes) &&
		    bytes <= pt_mapped(baseline))
			return 0;
		usleep(20 * 1000);
	} while (now_ms() < deadline);
	return -ETIMEDOUT;
}

int jit_quiesce(int timeout_ms)
{
	double deadline = now_ms() + timeout_ms;
	uint64_t bytes, last_bytes = 0;
	int live, last_live = -1, stable = 0;

	do {
		live = count_live_progs();
		if (live < 0 || modules_mapped(&bytes))
			return -EIO;
		stable = live == last_live && bytes == last_bytes ? stable + 1 : 0;
		if (stable == 4)
			return 0;
		last_live = live;
		last_bytes = bytes;
		usleep(100 * 1000);
	} while (now_ms() < deadline);
	return -ETIMEDOUT;
}

int packs_uncache(void)
{
	struct pack_stats st;
	char was[16];
	int err;

	if (!packstats_available() || access(PACK_PARAM("idle_secs"), W_OK))
		return 0;
	err = pack_param_set("idle_secs", "0", was, sizeof(was)) ?:
	      write_file(PACK_PARAM("idle_secs"), was) ?: packstats_read(&st);
	if (err)
		return err;
	packstats_free(&st);
	return st.cached <= st.reserve ? 0 : -EBUSY;
}

int pack_param_set(const char *name, const char *val, char *was, size_t size)
{
	char path[128];
	int err;

	snprintf(path, sizeof(path), PACK_PARAM("%s"), name);
	err = read_file(path, was, size);
	if (err < 0)
		return err;
	was[strcspn(was, "\n")] = 0;
	return write_file(path, val);
}

static int compare_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int load_fentry_progs(int *fds, int n)
{
	const struct bpf_insn insns[] = {
		mov64_imm(BPF_REG_0, 0),
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct btf *btf = btf__load_vmlinux_btf();
	const char **names;
	int id, nnames = 0, i, k = 0;

	if (!btf)
		return -errno;
	names = calloc(btf__type_cnt(btf), sizeof(*names));
	if (!names) {
		btf__free(btf);
		return -ENOMEM;
	}
	for (id = 1; id < (int)btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name = btf__name_by_offset(btf, t->name_off);

		if (btf_is_func(t) && !strncmp(name, "__x64_sys_", 10))
			names[nnames++] = name;
	}
	qsort(names, nnames, sizeof(*names), compare_str);
	for (i = 0; i < nnames && k < n; i++) {
		LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FENTRY,
			    .attach_btf_id = btf__find_by_name_kind(btf, names[i], BTF_KIND_FUNC));

		fds[k] = bpf_prog_load(BPF_PROG_TYPE_TRACING, "fentry", "GPL", insns, 2, &o);
		if (fds[k] >= 0)
			k++;
	}
	free(names);
	btf__free(btf);
	return k;
}
