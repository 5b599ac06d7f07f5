/* How far apart two short names are: the one edit distance behind every "did you mean". */
#ifndef TEXTDIST_H
#define TEXTDIST_H

#include <stddef.h>

/** The longest name compared; a longer one is as far as @limit. */
#define TEXTDIST_MAX 64

/**
 * The Levenshtein distance of @a and @b, ASCII case folded, or @limit when it is at least that
 * (also when either is over TEXTDIST_MAX bytes or their lengths differ by @limit or more, so a
 * fuzzed key gives up early). SIZE_MAX as @limit: the distance itself.
 */
size_t textdist(const char *a, const char *b, size_t limit);

#endif
