/* RFC 4180 CSV writing and a streaming reader that keeps one record in memory. */
#include "csv.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* The first bytes that make a spreadsheet evaluate a cell (OWASP's CSV injection list). */
static bool formula_start(const char *s) {
	return *s && strchr("=+-@\t\r", *s) != NULL;
}

/* A field; @text: neutralised if a spreadsheet would take it for a formula (csv_text_field()). */
static void field(struct buf *b, const char *s, size_t len, bool first, bool text) {
	if (!first) {
		buf_putc(b, ',');
	}
	bool formula = text && len > 0 && formula_start(s), quote = formula;
	for (size_t i = 0; i < len && !quote; i++) {
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
	}
	if (!quote) {
		buf_append(b, s, len);
		return;
	}
	buf_putc(b, '"');
	if (formula) {
		buf_putc(b, '\'');
	}
	const char *p = s, *end = s + len;
	while (p < end) {
		const char *q = memchr(p, '"', (size_t)(end - p));
		if (!q) {
			buf_append(b, p, (size_t)(end - p));
			break;
		}
		buf_append(b, p, (size_t)(q - p + 1));
		buf_putc(b, '"'); // a quote inside is doubled
		p = q + 1;
	}
	buf_putc(b, '"');
}

void csv_field(struct buf *b, const char *s, size_t len, bool first) {
	field(b, s, len, first, false);
}

void csv_text_field(struct buf *b, const char *s, bool first) {
	field(b, s ? s : "", s ? strlen(s) : 0, first, true);
}

const char *csv_text_value(const char *s) {
	return s[0] == '\'' && formula_start(s + 1) ? s + 1 : s;
}

void csv_end_record(struct buf *b) {
	buf_append(b, "\r\n", 2);
}

void csv_reader_init(struct csv_reader *r, FILE *in) {
	*r = (struct csv_reader){.in = in, .next_line = 1};
	buf_init(&r->text);
}

void csv_reader_finish(struct csv_reader *r) {
	buf_finish(&r->text);
	free(r->offsets);
	free(r->fields);
	*r = (struct csv_reader){0};
}

static void end_field(struct csv_reader *r) {
	r->offsets = xgrow(r->offsets, &r->cap, r->n_fields + 1, sizeof(*r->offsets));
	r->offsets[r->n_fields++] = r->text.len + 1; // where the next field starts
	buf_putc(&r->text, '\0');
}

static int fail(struct csv_reader *r, unsigned long line, const char *what) {
	snprintf(r->error, sizeof(r->error), "line %lu: %s", line, what);
	return -1;
}

int csv_read(struct csv_reader *r) {
	if (!r->started) {
		r->started = true;
		int c0 = getc(r->in);
		if (c0 == 0xEF) { // a UTF-8 BOM must be the full EF BB BF
			if (getc(r->in) != 0xBB || getc(r->in) != 0xBF) {
				return fail(r, 1, "invalid byte order mark");
			}
		} else if (c0 != EOF) {
			ungetc(c0, r->in);
		}
	}
	for (;;) {
		buf_clear(&r->text);
		r->n_fields = 0;
		r->line = r->next_line;
		enum { FIELD_START, UNQUOTED, QUOTED, QUOTE_IN_QUOTED } state = FIELD_START;
		bool any = false; // the record has content (so an empty line is skipped)
		int c;
		for (;;) {
			c = getc(r->in);
			if (c == '\0') {
				return fail(r, r->next_line, "NUL byte in CSV");
			}
			if (r->text.len >= CSV_RECORD_MAX) {
				return fail(r, r->line, "record too long");
			}
			if (state == QUOTED) {
				if (c == EOF) {
					return fail(r, r->line, "unterminated quoted field");
				} else if (c == '"') {
					state = QUOTE_IN_QUOTED;
				} else {
					if (c == '\n') {
						r->next_line++;
					}
					buf_putc(&r->text, (char)c);
				}
				continue;
			}
			if (c == '\r') { // outside quotes CR LF ends a record as LF does
				int n = getc(r->in);
				if (n != '\n') {
					return fail(r, r->next_line,
						    "carriage return without line feed");
				}
				c = '\n';
			}
			if (state == QUOTE_IN_QUOTED) {
				if (c == '"') { // "" is one quote
					buf_putc(&r->text, '"');
					state = QUOTED;
					continue;
				}
				if (c != ',' && c != '\n' && c != EOF) {
					return fail(r, r->next_line, "text after a closing quote");
				}
			}
			if (c == EOF || c == '\n') {
				if (c == '\n') {
					r->next_line++;
				}
				if (!any && state == FIELD_START) {
					if (c == EOF) {
						return ferror(r->in)
							       ? fail(r, r->line, "read error")
							       : 0;
					}
					break; // blank line: read the next one
				}
				end_field(r);
				goto record;
			}
			any = true;
			if (c == ',') {
				end_field(r);
				state = FIELD_START;
			} else if (c == '"' && state == FIELD_START) {
				state = QUOTED;
			} else if (c == '"') {
				return fail(r, r->next_line, "quote inside an unquoted field");
			} else {
				buf_putc(&r->text, (char)c);
				state = UNQUOTED;
			}
		}
	}
record:
	r->fields = xrealloc(r->fields, r->n_fields * sizeof(*r->fields));
	for (size_t i = 0; i < r->n_fields; i++) {
		r->fields[i] = r->text.data + (i ? r->offsets[i - 1] : 0);
	}
	return 1;
}
