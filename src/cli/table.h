/*
 * Aligned text tables for the CLI (stats, peak, channels): columns sized to their widest cell,
 * and how a stored value reads in one (its unit's symbol and scaling from the unit registry,
 * places from the channel's resolution).
 */
#ifndef TABLE_H
#define TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "channel.h"

/** A table under construction: add a row, then set its cells; cells are copied. */
struct table {
	size_t cols, rows;
	char **cells; // rows x cols, NULL = empty
	bool *right;  // per column: right-aligned (numbers); the first row (the header) never is
};

void table_init(struct table *t, size_t cols);
/** Appends an empty row; the table_set() calls that follow fill it. */
void table_row(struct table *t);
/** Appends the header row: @names[0..n) in the first @n columns (the rest stay empty). */
void table_head(struct table *t, const char *const *names, size_t n);
/** Right-aligns the columns [@from, @to) (numbers); the header row stays left-aligned. */
void table_align_right(struct table *t, size_t from, size_t to);
/** Sets cell @col of the last row to the printf text, control characters escaped. */
void table_set(struct table *t, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/**
 * Appends the table to @out, two spaces between columns, no trailing spaces, and frees it:
 * @t may be initialized again.
 */
void table_print(struct table *t, struct buf *out);
/** As table_print(), each line after @indent spaces (a table under a heading). */
void table_print_indented(struct table *t, size_t indent, struct buf *out);
/** As table_print_indented(), onto the standard output. */
void table_print_stdout(struct table *t, size_t indent);
/** Frees a table that is not printed; accepts a zeroed or printed one. */
void table_finish(struct table *t);

/**
 * @s as a line of text output may show it (buf_put_printable(): control characters escaped),
 * in @scratch, which the result points into: for the CLI's printf lines outside a table.
 */
const char *table_printable(struct buf *scratch, const char *s);
/** Display width of UTF-8 text: continuation bytes take no column. */
size_t table_text_width(const char *s);

/**
 * How @unit reads in a table: its symbol from the unit registry (unit.h: "celsius" -> "°C",
 * "hertz" -> "MHz", "bytes" -> "MiB"), a bare count's unit name ("state"), unknown units as
 * they are, NULL as ""; *factor gets the multiplier from the stored unit to the shown one.
 */
const char *table_unit(const char *unit, double *factor);
/** Places for @ch's values scaled by @factor: the registry's, or the resolution's (at most 3). */
int table_digits(const struct channel *ch, double factor);
/**
 * "43.461 °C", "1800 MHz", "3051.3 MiB": one value for people, scaled and rounded by the
 * registry or to the channel's resolution (at most 9 places), shortest text. Newly allocated.
 */
char *table_value(const struct channel *ch, double v);
/** @v * @factor with @digits places into @out, or "-" for NAN or an infinity (no value). */
void table_number(char *out, size_t len, double v, double factor, int digits);

#endif
