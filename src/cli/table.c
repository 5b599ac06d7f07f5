/* Aligned text tables for the CLI and how stored values read in them (table.h). */
#include "table.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "xalloc.h"

void table_init(struct table *t, size_t cols) {
	*t = (struct table){.cols = cols};
	t->right = xcalloc(cols, sizeof(*t->right));
}

void table_row(struct table *t) {
	t->rows++;
	t->cells = xrealloc(t->cells, t->rows * t->cols * sizeof(*t->cells));
	memset(t->cells + (t->rows - 1) * t->cols, 0, t->cols * sizeof(*t->cells));
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
	size_t *width = xcalloc(t->cols ? t->cols : 1, sizeof(*width));
	for (size_t r = 0; r < t->rows; r++) {
		for (size_t c = 0; c < t->cols; c++) {
			const char *cell = t->cells[r * t->cols + c];
			size_t w = cell ? table_text_width(cell) : 0;
			width[c] = w > width[c] ? w : width[c];
		}
	}
	for (size_t r = 0; r < t->rows; r++) {
		for (size_t c = 0; c < t->cols; c++) {
			const char *cell = t->cells[r * t->cols + c];
			cell = cell ? cell : "";
			size_t pad = width[c] - table_text_width(cell);
			if (t->right[c] && r > 0) {
				buf_printf(out, "%*s%s", (int)pad, "", cell);
			} else if (c + 1 < t->cols) {
				buf_printf(out, "%s%*s", cell, (int)pad, "");
			} else {
				buf_puts(out, cell); // no trailing spaces after the last column
			}
			buf_puts(out, c + 1 < t->cols ? "  " : "\n");
		}
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
	static const struct {
		const char *unit, *symbol;
		double factor;
	} units[] = {
		{"celsius", "°C", 1},    {"hertz", "MHz", 1e-6}, {"volts", "V", 1},
		{"millivolts", "mV", 1}, {"amperes", "A", 1},    {"watts", "W", 1},
		{"joules", "J", 1},      {"rpm", "rpm", 1},      {"percent", "%", 1},
		{"ohms", "ohm", 1},
	};
	*factor = 1;
	for (size_t i = 0; unit && i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit, units[i].unit) == 0) {
			*factor = units[i].factor;
			return units[i].symbol;
		}
	}
	return unit ? unit : "";
}

int table_digits(const struct channel *ch, double factor) {
	if (ch->unit && strcmp(ch->unit, "hertz") == 0) {
		return 0; // operating points are whole MHz
	}
	int d = stats_resolution_digits(ch->resolution * factor);
	return d < 0 ? 3 : d > 3 ? 3 : d;
}

void table_number(char *out, size_t len, double v, double factor, int digits) {
	if (!isfinite(v)) {
		snprintf(out, len, "-");
	} else {
		snprintf(out, len, "%.*f", digits, v * factor);
	}
}

void table_duration(char *out, size_t len, int64_t s) {
	if (s >= 2 * 86400) {
		snprintf(out, len, "%.3g days", (double)s / 86400);
	} else if (s >= 2 * 3600) {
		snprintf(out, len, "%.3g hours", (double)s / 3600);
	} else if (s >= 120) {
		snprintf(out, len, "%.3g minutes", (double)s / 60);
	} else {
		snprintf(out, len, "%lld s", (long long)s);
	}
}
