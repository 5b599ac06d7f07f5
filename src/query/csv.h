/* RFC 4180 CSV: a field writer into a buffer and a streaming record reader with line numbers. */
#ifndef CSV_H
#define CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "buf.h"

/** Appends @s (@len bytes) as one field, preceded by a comma unless @first; quoted if needed. */
void csv_field(struct buf *b, const char *s, size_t len, bool first);
/**
 * Appends @s as a text field (a key, a label, a name; never a number): one a spreadsheet would
 * evaluate as a formula (beginning with =, +, -, @, a tab or a carriage return) is written
 * behind a single quote and quoted, as OWASP advises against CSV injection.
 */
void csv_text_field(struct buf *b, const char *s, bool first);
/** @s as it was before csv_text_field() neutralised it (without the quote it added). */
const char *csv_text_value(const char *s);
/** Ends a record with CRLF, as RFC 4180 asks. */
void csv_end_record(struct buf *b);

/** Longest record the reader accepts, so a file without line breaks cannot exhaust memory. */
#define CSV_RECORD_MAX (1u << 20)

struct csv_reader {
	FILE *in;           // borrowed
	unsigned long line; // 1-based line on which the last record started
	char **fields; // the last record: n_fields NUL-terminated fields, valid until the next read
	size_t n_fields;
	char error[160]; // "line N: problem" after csv_read() returned -1
	// private
	unsigned long next_line;
	struct buf text;
	size_t *offsets;
	size_t cap;
	bool started;
};

/** Reads records from @in (borrowed); a leading UTF-8 byte order mark is skipped. */
void csv_reader_init(struct csv_reader *r, FILE *in);
void csv_reader_finish(struct csv_reader *r); // accepts a zeroed struct

/**
 * Reads the next record: 1 with fields set, 0 at the end of input, -1 on malformed input
 * (an unterminated quote, text after a closing quote, a NUL byte, a record over
 * CSV_RECORD_MAX) with r->error set. Blank lines are skipped; CRLF and LF both end records.
 */
int csv_read(struct csv_reader *r);

#endif
