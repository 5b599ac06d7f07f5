/*
 * The streaming CSV export over the store: the same window and channel selection as the
 * statistics (query.h), read in slices so memory stays flat however long the window.
 */
#ifndef EXPORT_H
#define EXPORT_H

#include <stddef.h>
#include <sys/types.h>

#include "query.h"

enum export_format {
	EXPORT_FORMAT_LONG, // time,unix,channel,value,unit: one row per value
	EXPORT_FORMAT_WIDE, // time,unix,<key> (<unit>)...: one row per cycle, empty cell = missing
};

struct export;

/**
 * A pull-style CSV exporter (RFC 4180, UTF-8, ISO 8601 UTC times, values exact at the
 * channel's resolution) that holds a bounded amount of memory however long the window:
 * it reads the store in slices. @store is borrowed until export_destroy(); @p is copied.
 * NULL on error with *err newly allocated (caller frees) and errno set to the positive error
 * code.
 */
struct export *export_create(struct store *store, const struct query_params *p,
			     enum export_format format, char **err);
/** Copies up to @max bytes of CSV into @buf: the count, 0 at the end, or a negative errno. */
ssize_t export_read(struct export *e, char *buf, size_t max);
void export_destroy(struct export *e); // accepts NULL

#endif
