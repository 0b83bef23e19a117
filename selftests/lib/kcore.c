// SPDX-License-Identifier: GPL-2.0
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "kcore.h"

int kcore_read(uint64_t vaddr, void *buf, size_t len)
{
	int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC), err = -ENOENT;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int i;

	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || eh.e_ident[EI_CLASS] != ELFCLASS64) {
		err = -EIO;
		goto out;
	}
	/* the PT_LOAD segment that holds the whole range */
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (off_t)i * eh.e_phentsize) != sizeof(ph)) {
			err = -EIO;
			goto out;
		}
		if (ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr + len > ph.p_vaddr + ph.p_memsz)
			continue;
		err = pread(fd, buf, len, ph.p_offset + (vaddr - ph.p_vaddr)) == (ssize_t)len ?
		      0 : -EIO;
		break;
	}
out:
	close(fd);
	return err;
}
