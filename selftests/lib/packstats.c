// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "packstats.h"
#include "sys.h"

bool packstats_available(void)
{
	return !access(PACKSTATS_PATH, R_OK);
}

static int parse_pack(const char *line, struct pack_info *p)
{
	const char *list = strstr(line, " used_list ");
	char mapped[8];

	memset(p, 0, sizeof(*p));
	if (sscanf(line, "pack 0x%" SCNx64 " mapped %7s chunks %u used %u free %u "
		   "largest_free %u", &p->addr, mapped, &p->chunks, &p->nr_used, &p->nr_free,
		   &p->largest_free) != 6 || !list || !p->chunks)
		return -EINVAL;
	if (!strcmp(mapped, "2M"))
		p->mapped_shift = 21;
	else if (!strcmp(mapped, "4K"))
		p->mapped_shift = 12;
	else
		return -EINVAL;
	p->used = calloc(p->chunks, 1);
	if (!p->used)
		return -ENOMEM;
	return parse_bitmap_list(list + 11, p->used, p->chunks);
}

int packstats_parse(FILE *f, struct pack_stats *st)
{
	char *line = NULL;
	size_t cap = 0;
	/* the rest came later (trampolines in packs, the cache): optional */
	struct { const char *key; long long *val; } keys[] = {
		{ "packs", &st->packs }, { "huge_packs", &st->huge_packs },
		{ "fallbacks", &st->fallbacks }, { "oversized", &st->oversized },
		{ "bytes_in_use", &st->bytes_in_use }, { "chunk_size", &st->chunk_size },
		{ "pack_size", &st->pack_size },
		{ "images", &st->images }, { "image_bytes", &st->image_bytes },
		{ "cached", &st->cached }, { "reserve", &st->reserve },
	};
	const int required = 7;
	int err = 0, seen = 0;
	size_t i;

	memset(st, 0, sizeof(*st));
	while (!err && getline(&line, &cap, f) > 0) {
		if (!strncmp(line, "pack ", 5)) {
			if (st->npacks == PACK_MAX)
				err = -E2BIG;
			else
				err = parse_pack(line, &st->pack[st->npacks++]);
			continue;
		}
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t len = strlen(keys[i].key);

			if (!strncmp(line, keys[i].key, len) && line[len] == ' ') {
				*keys[i].val = atoll(line + len + 1);
				seen += (int)i < required;
			}
		}
	}
	free(line);
	if (!err && seen != required)
		err = -EINVAL;
	if (!err && st->npacks != st->packs)
		err = -EINVAL;
	if (err)
		packstats_free(st);
	return err;
}

int packstats_read(struct pack_stats *st)
{
	FILE *f = fopen(PACKSTATS_PATH, "r");
	int err;

	if (!f)
		return -errno;
	err = packstats_parse(f, st);
	fclose(f);
	return err;
}

int pack_of(const struct pack_stats *st, uint64_t addr)
{
	int i;

	for (i = 0; i < st->npacks; i++)
		if (addr >= st->pack[i].addr && addr < st->pack[i].addr + st->pack_size)
			return i;
	return -1;
}

void packstats_free(struct pack_stats *st)
{
	int i;

	for (i = 0; i < st->npacks; i++)
		free(st->pack[i].used);
	st->npacks = 0;
}

int packstats_wait(struct pack_stats *st, bool (*done)(const struct pack_stats *st, void *arg),
		   void *arg, int ms)
{
	double end = now_ms() + ms;
	int err;

	while (!(err = packstats_read(st)) && !done(st, arg) && now_ms() < end) {
		packstats_free(st);
		usleep(50 * 1000);
	}
	return err;
}

int parse_bitmap_list(const char *s, unsigned char *map, unsigned int n)
{
	unsigned int a, b;
	int len;

	while (*s && *s != '\n') {
		if (sscanf(s, "%u%n", &a, &len) != 1)
			return -EINVAL;
		s += len;
		b = a;
		if (*s == '-') {
			if (sscanf(s + 1, "%u%n", &b, &len) != 1)
				return -EINVAL;
			s += 1 + len;
		}
		if (b < a || b >= n)
			return -EINVAL;
		memset(map + a, 1, b - a + 1);
		if (*s == ',')
			s++;
	}
	return 0;
}
