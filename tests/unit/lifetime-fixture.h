/*
 * What the lifetime model's unit tests share (test-lifetime.c, test-capcheck.c): a rating
 * validated or the test aborts, and a warning by its code.
 */
#ifndef LIFETIME_FIXTURE_H
#define LIFETIME_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "lifetime.h"

/* A validated model of @cc; an invalid rating is the test's own bug: it aborts. */
static inline struct lifetime_params params(const struct capacitor_config *cc) {
	struct lifetime_params p;
	char *err = NULL;
	if (!lifetime_params_init(&p, cc, &err)) {
		printf("# unexpected error: %s\n", err);
		free(err);
		abort();
	}
	return p;
}

/* The first warning of @code in @r, or NULL. */
static inline const struct lifetime_warning *find_warning(const struct lifetime_result *r,
							  enum lifetime_warning_code code) {
	for (size_t i = 0; i < r->n_warnings; i++) {
		if (r->warnings[i].code == code) {
			return &r->warnings[i];
		}
	}
	return NULL;
}

#endif
