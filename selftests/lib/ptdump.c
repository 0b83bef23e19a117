// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ptdump.h"

static unsigned int level_shift(const char *level)
{
	static const struct { const char *name; unsigned int shift; } levels[] = {
		{ "pte", 12 }, { "pmd", 21 }, { "pud", 30 }, { "p4d", 39 }, { "pgd", 39 },
	};
	size_t i;

	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (!strcmp(level, levels[i].name))
			return levels[i].shift;
	return 0;
}

/*
 * "0xffff888000000000-0xffff888000200000           2M     RW         PSE         GLB NX pmd":
 * 0, 1 for a line with nothing to count, or -EINVAL.
 */
static int parse_range(char *line, struct pt_range *r)
{
	char *tok, *save, *last = NULL;

	memset(r, 0, sizeof(*r));
	if (sscanf(line, "0x%" SCNx64 "-0x%" SCNx64, &r->start, &r->end) != 2)
		return -EINVAL;
	strtok_r(line, " \t\n", &save);		/* the range */
	strtok_r(NULL, " \t\n", &save);		/* the size */
	while ((tok = strtok_r(NULL, " \t\n", &save))) {
		if (!strcmp(tok, "RW"))
			r->present = r->rw = true;
		else if (!strcmp(tok, "ro"))
			r->present = true;
		else if (!strcmp(tok, "x"))
			r->x = true;
		last = tok;
	}
	r->shift = last ? level_shift(last) : 0;
	if (!r->end)	/* the last range runs to the top of the address space */
		r->end = UINT64_MAX;
	/* The final line may stop after the range: nothing mapped there. */
	if (!r->shift && !r->present)
		return 1;
	return r->shift && r->end > r->start ? 0 : -EINVAL;
}

int ptdump_walk(FILE *f, pt_range_fn fn, void *ctx)
{
	char line[256], section[64] = "";
	struct pt_range r;
	int ranges = 0;

	while (fgets(line, sizeof(line), f)) {
		char *open = strstr(line, "---[ "), *close;

		if (open && (close = strstr(open, " ]---"))) {
			snprintf(section, sizeof(section), "%.*s",
				 (int)(close - open - 5), open + 5);
			continue;
		}
		if (strncmp(line, "0x", 2))
			continue;
		switch (parse_range(line, &r)) {
		case 0:
			break;
		case 1:
			continue;
		default:
			fprintf(stderr, "ptdump: cannot parse: %s", line);
			return -EINVAL;
		}
		fn(section, &r, ctx);
		ranges++;
	}
	return ferror(f) ? -EIO : ranges ? 0 : -ENODATA;
}

struct stats_ctx {
	const char *section;
	uint64_t start, end;
	struct pt_stats *st;
};

static void add_range(const char *section, const struct pt_range *r, void *data)
{
	struct stats_ctx *c = data;
	uint64_t start = r->start, end = r->end, bytes;

	if (!r->present)
		return;
	if (c->section) {
		if (strcmp(section, c->section))
			return;
	} else {
		if (start < c->start)
			start = c->start;
		if (end > c->end)
			end = c->end;
		if (start >= end)
			return;
	}
	bytes = end - start;
	switch (r->shift) {
	case 12: c->st->bytes[PT_4K] += bytes; break;
	case 21: c->st->bytes[PT_2M] += bytes; break;
	case 30: c->st->bytes[PT_1G] += bytes; break;
	}
	if (r->rw && r->x)
		c->st->wx_bytes += bytes;
}

int ptdump_stats(FILE *f, const char *section, uint64_t start, uint64_t end,
		 struct pt_stats *st)
{
	struct stats_ctx c = { section, start, end, st };

	memset(st, 0, sizeof(*st));
	return ptdump_walk(f, add_range, &c);
}

int ptdump_stats_kernel(const char *section, uint64_t start, uint64_t end,
			struct pt_stats *st)
{
	FILE *f = fopen(PTDUMP_PATH, "r");
	int err;

	if (!f)
		return -errno;
	err = ptdump_stats(f, section, start, end, st);
	fclose(f);
	return err;
}
