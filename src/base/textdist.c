/* Levenshtein distance over one row of TEXTDIST_MAX + 1 counts. */
#include "textdist.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"

size_t textdist(const char *a, const char *b, size_t limit) {
	size_t la = strlen(a), lb = strlen(b);
	if (la > TEXTDIST_MAX || lb > TEXTDIST_MAX || (la > lb ? la - lb : lb - la) >= limit) {
		return limit;
	}
	size_t row[TEXTDIST_MAX + 1];
	for (size_t j = 0; j <= lb; j++) {
		row[j] = j;
	}
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t sub = diag + (tolower((unsigned char)a[i - 1]) !=
					     tolower((unsigned char)b[j - 1]));
			size_t del = up + 1, ins = row[j - 1] + 1;
			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			diag = up;
		}
	}
	return row[lb] < limit ? row[lb] : limit;
}

/* Whether @s contains @part, ASCII case folded. */
static bool contains_folded(const char *s, const char *part) {
	size_t n = strlen(part);
	for (; *s; s++) {
		size_t i = 0;
		while (i < n && s[i] &&
		       tolower((unsigned char)s[i]) == tolower((unsigned char)part[i])) {
			i++;
		}
		if (i == n) {
			return true;
		}
	}
	return false;
}

size_t textdist_score(const char *name, const char *candidate) {
	if (strlen(name) >= 3 && contains_folded(candidate, name)) {
		return 0;
	}
	return textdist(name, candidate, SIZE_MAX);
}

void textdist_near_init(struct textdist_near *near, const char *name) {
	size_t third = strlen(name) / 3;
	*near = (struct textdist_near){
		.name = name, .limit = third > 2 ? third : 2, .best = SIZE_MAX};
}

void textdist_near_offer(struct textdist_near *near, const char *shown, const char *candidate) {
	size_t s = textdist_score(near->name, candidate);
	if (s > near->limit || s > near->best) {
		return;
	}
	if (s < near->best) {
		near->best = s;
		near->n = 0;
	}
	for (size_t i = 0; i < near->n; i++) {
		if (strcmp(near->shown[i], shown) == 0) {
			return; // a channel's key and label may both be near: shown once
		}
	}
	if (near->n < TEXTDIST_NEAR_MAX) {
		near->shown[near->n++] = shown;
	}
}

bool textdist_near_write(const struct textdist_near *near, bool quote, struct buf *out) {
	const char *q = quote ? "'" : "";
	for (size_t i = 0; i < near->n; i++) {
		buf_printf(out, "%s%s%s%s", i ? ", " : "; did you mean ", q, near->shown[i], q);
	}
	if (near->n) {
		buf_putc(out, '?');
	}
	return near->n > 0;
}
