/* How far apart two short names are: the one edit distance behind every "did you mean". */
#ifndef TEXTDIST_H
#define TEXTDIST_H

#include <stdbool.h>
#include <stddef.h>

struct buf;

/** The longest name compared; a longer one is as far as @limit. */
#define TEXTDIST_MAX 64

/**
 * The Levenshtein distance of @a and @b, ASCII case folded, or @limit when it is at least that
 * (also when either is over TEXTDIST_MAX bytes or their lengths differ by @limit or more, so a
 * fuzzed key gives up early). SIZE_MAX as @limit: the distance itself.
 */
size_t textdist(const char *a, const char *b, size_t limit);

/**
 * How near @candidate is to the unknown @name, the one rule of every "did you mean": 0 when
 * @candidate contains @name (three bytes or more, ASCII case folded: "sdxl" in "sdxl-image"),
 * else their edit distance.
 */
size_t textdist_score(const char *name, const char *candidate);

/** The most names a "did you mean" offers. */
#define TEXTDIST_NEAR_MAX 3

/**
 * The names nearest an unknown one, collected as candidates are offered: those of the best
 * score (at most two edits, or a third of the name's length if more), the first
 * TEXTDIST_NEAR_MAX in the order offered. The names are borrowed: they must outlive it.
 */
struct textdist_near {
	const char *name;
	size_t limit, best;
	const char *shown[TEXTDIST_NEAR_MAX];
	size_t n;
};

void textdist_near_init(struct textdist_near *near, const char *name);
/** Offers @shown, scored textdist_score(near->name, @candidate) (a channel offers its key, its
 * last part and its label, each shown as the key). */
void textdist_near_offer(struct textdist_near *near, const char *shown, const char *candidate);
/**
 * Appends "; did you mean A, B?" (each name in single quotes when @quote) to @out; nothing,
 * and false, when no name was near.
 */
bool textdist_near_write(const struct textdist_near *near, bool quote, struct buf *out);

#endif
