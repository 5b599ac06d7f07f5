/* Aligned text tables for the CLI and how stored values read in them (table.h). */
#include "table.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "stats.h"
#include "unit.h"
#include "xalloc.h"

void table_init(struct table *t, size_t cols) {
	*t = (struct table){.cols = cols};
	t->right = xcalloc(cols, sizeof(*t->right));
}

void table_align_right(struct table *t, size_t from, size_t to) {
	for (size_t c = from; c < to; c++) {
		t->right[c] = true;
	}
}

void table_row(struct table *t) {
	t->rows++;
	t->cells = xrealloc(t->cells, t->rows * t->cols * sizeof(*t->cells));
	memset(t->cells + (t->rows - 1) * t->cols, 0, t->cols * sizeof(*t->cells));
}

void table_head(struct table *t, const char *const *names, size_t n) {
	table_row(t);
	for (size_t c = 0; c < n && c < t->cols; c++) {
		table_set(t, c, "%s", names[c]);
	}
}

void table_set(struct table *t, size_t col, const char *fmt, ...) {
	char **cell = &t->cells[(t->rows - 1) * t->cols + col];
	free(*cell);
	va_list ap;
	va_start(ap, fmt);
	char *text = xvasprintf(fmt, ap);
	va_end(ap);
	// Labels and names come from configs, job logs and old databases: never raw to a terminal.
	struct buf shown;
	buf_init(&shown);
	buf_put_printable(&shown, text, strlen(text));
	*cell = buf_steal(&shown);
	free(text);
}

const char *table_printable(struct buf *scratch, const char *s) {
	buf_clear(scratch);
	buf_put_printable(scratch, s ? s : "", s ? strlen(s) : 0);
	return scratch->data ? scratch->data : "";
}

size_t table_text_width(const char *s) {
	size_t w = 0;
	for (; *s; s++) {
		w += ((unsigned char)*s & 0xC0) != 0x80;
	}
	return w;
}

void table_print(struct table *t, struct buf *out) {
	table_print_indented(t, 0, out);
}

void table_print_stdout(struct table *t, size_t indent) {
	struct buf out;
	buf_init(&out);
	table_print_indented(t, indent, &out);
	fwrite(out.data ? out.data : "", 1, out.len, stdout);
	buf_finish(&out);
}

void table_print_indented(struct table *t, size_t indent, struct buf *out) {
	size_t *width = xcalloc(t->cols ? t->cols : 1, sizeof(*width));
	for (size_t r = 0; r < t->rows; r++) {
		for (size_t c = 0; c < t->cols; c++) {
			const char *cell = t->cells[r * t->cols + c];
			size_t w = cell ? table_text_width(cell) : 0;
			width[c] = w > width[c] ? w : width[c];
		}
	}
	for (size_t r = 0; r < t->rows; r++) {
		buf_printf(out, "%*s", (int)indent, "");
		size_t line = out->len;
		for (size_t c = 0; c < t->cols; c++) {
			const char *cell = t->cells[r * t->cols + c];
			cell = cell ? cell : "";
			size_t pad = width[c] - table_text_width(cell);
			if (t->right[c] && r > 0) {
				buf_printf(out, "%*s%s", (int)pad, "", cell);
			} else {
				buf_printf(out, "%s%*s", cell, (int)pad, "");
			}
			buf_puts(out, c + 1 < t->cols ? "  " : "");
		}
		while (out->len > line && out->data[out->len - 1] == ' ') {
			out->data[--out->len] = '\0'; // no trailing spaces (empty last cells)
		}
		buf_putc(out, '\n');
	}
	free(width);
	table_finish(t);
}

void table_finish(struct table *t) {
	for (size_t i = 0; i < t->rows * t->cols; i++) {
		free(t->cells[i]);
	}
	free(t->cells);
	free(t->right);
	*t = (struct table){0};
}

const char *table_unit(const char *unit, double *factor) {
	const char *symbol = unit_symbol(unit, factor);
	// A column names its unit even when a value beside it has no symbol ("state", "1").
	return *symbol ? symbol : unit ? unit : "";
}

int table_digits(const struct channel *ch, double factor) {
	int places = unit_places(ch->unit, true);
	if (places >= 0) {
		return places; // the registry's (whole MHz, memory in MiB to 0.1)
	}
	int d = stats_resolution_digits(ch->resolution * factor);
	return d < 0 ? 3 : d > 3 ? 3 : d;
}

/* Decimal places that show a value at @resolution (0.000439453125 -> 4), at most 9. */
static int resolution_places(double resolution) {
	if (!(resolution > 0) || !isfinite(resolution) || resolution >= 1) {
		return 0;
	}
	int places = (int)ceil(-log10(resolution) - 1e-9);
	return places > 9 ? 9 : places;
}

char *table_value(const struct channel *ch, double v) {
	double factor;
	const char *symbol = unit_symbol(ch->unit, &factor);
	double shown = v * factor;
	int places = unit_places(ch->unit, false);
	if (places < 0 && ch->resolution > 0) {
		// (raw + offset) x scale carries more digits than the sensor resolves
		int digits = stats_resolution_digits(ch->resolution * factor);
		places = digits >= 0 && digits <= 9 ? digits
						    : resolution_places(ch->resolution * factor);
	}
	if (places >= 0) {
		double p = pow(10, places);
		shown = nearbyint(shown * p) / p;
	}
	char num[32];
	json_format_double(num, shown);
	return *symbol ? xasprintf("%s %s", num, symbol) : xstrdup(num);
}

void table_number(char *out, size_t len, double v, double factor, int digits) {
	if (!isfinite(v)) {
		snprintf(out, len, "-");
	} else {
		snprintf(out, len, "%.*f", digits, v * factor);
	}
}
