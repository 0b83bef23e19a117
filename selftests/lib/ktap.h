/* SPDX-License-Identifier: GPL-2.0 */
/* Parses the KTAP a KUnit suite prints when its module loads. */
#ifndef KTAP_H
#define KTAP_H

#include <stdbool.h>

enum ktap_result { KTAP_NONE, KTAP_OK, KTAP_FAIL, KTAP_SKIP };

#define KTAP_MAX_CASES	64

struct ktap_case {
	char name[96];
	enum ktap_result result;
	char reason[128];	/* the "# SKIP reason" */
	char *diag;		/* "# ..." lines printed before the result, malloced */
};

struct ktap_suite {
	char name[64];
	int planned;		/* from "1..N", -1 until seen */
	int indent;		/* indentation of the suite's case lines */
	int ncases;
	struct ktap_case cases[KTAP_MAX_CASES];
	enum ktap_result result;	/* the suite's own line */
	char *pending;		/* diagnostics waiting for their case */
};

void ktap_init(struct ktap_suite *s);
/* One line of kernel log text, without its trailing newline. */
void ktap_feed(struct ktap_suite *s, const char *line);
/* Plan seen, every planned case reported, and the suite line printed. */
bool ktap_complete(const struct ktap_suite *s);
void ktap_free(struct ktap_suite *s);

#endif
