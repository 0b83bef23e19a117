// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktap.h"

void ktap_init(struct ktap_suite *s)
{
	memset(s, 0, sizeof(*s));
	s->planned = -1;
	s->indent = -1;
}

static void append(char **buf, const char *line)
{
	size_t old = *buf ? strlen(*buf) : 0;
	char *p = realloc(*buf, old + strlen(line) + 2);

	if (!p)
		return;
	sprintf(p + old, "%s\n", line);
	*buf = p;
}

/* "ok 3 name # SKIP why" or "not ok 3 name"; returns false for other lines. */
static bool parse_result(const char *l, enum ktap_result *res, char *name,
			 size_t name_len, char *reason, size_t reason_len)
{
	const char *p, *hash;
	size_t n;
	int num, used;

	if (!strncmp(l, "not ok ", 7)) {
		*res = KTAP_FAIL;
		p = l + 7;
	} else if (!strncmp(l, "ok ", 3)) {
		*res = KTAP_OK;
		p = l + 3;
	} else {
		return false;
	}
	if (sscanf(p, "%d %n", &num, &used) != 1)
		return false;
	p += used;
	hash = strstr(p, " # ");
	n = hash ? (size_t)(hash - p) : strlen(p);
	snprintf(name, name_len, "%.*s", (int)n, p);
	reason[0] = 0;
	if (hash && !strncasecmp(hash + 3, "SKIP", 4)) {
		if (*res == KTAP_OK)
			*res = KTAP_SKIP;
		p = hash + 7;
		p += strspn(p, " ");
		snprintf(reason, reason_len, "%s", p);
	}
	return true;
}

void ktap_feed(struct ktap_suite *s, const char *line)
{
	int indent = strspn(line, " \t");
	const char *l = line + indent;
	enum ktap_result res;
	char name[96], reason[128];
	struct ktap_case *c;

	if (indent > 0 && !strncmp(l, "# Subtest: ", 11) && !s->name[0]) {
		snprintf(s->name, sizeof(s->name), "%s", l + 11);
		return;
	}
	if (indent > 0 && !strncmp(l, "1..", 3) && s->planned < 0) {
		s->planned = atoi(l + 3);
		s->indent = indent;
		return;
	}
	if (s->planned < 0)
		return;
	if (indent == s->indent && l[0] == '#') {
		append(&s->pending, l);
		return;
	}
	if (!parse_result(l, &res, name, sizeof(name), reason, sizeof(reason)))
		return;
	if (indent == 0) {
		if (!strcmp(name, s->name))
			s->result = res;
		return;
	}
	if (indent != s->indent || s->ncases == KTAP_MAX_CASES)
		return;		/* a parameterised case's own cases: counted by the parent */
	c = &s->cases[s->ncases++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->reason, sizeof(c->reason), "%s", reason);
	c->result = res;
	c->diag = s->pending;
	s->pending = NULL;
}

bool ktap_complete(const struct ktap_suite *s)
{
	return s->planned >= 0 && s->ncases == s->planned && s->result != KTAP_NONE;
}

void ktap_free(struct ktap_suite *s)
{
	int i;

	for (i = 0; i < s->ncases; i++)
		free(s->cases[i].diag);
	free(s->pending);
	ktap_init(s);
}
