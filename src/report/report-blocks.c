/*
 * The document's building blocks (report-internal.h): blocks, tables, cells and charts, each
 * counted against the document's budget (report_options.max_bytes).
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report-internal.h"
#include "xalloc.h"

/* What a block and a cell take in the output besides their text (tags, separators), about. */
#define BLOCK_BYTES 32
#define CELL_BYTES  24

void report_block_free(struct report_block *b) {
	free(b->text);
	for (size_t c = 0; c < b->rows * b->cols; c++) {
		free(b->cells[c]);
	}
	free(b->cells);
	free(b->right);
}

/* True once the document has spent its budget: from then on it only says so at its end. */
bool report_over_budget(struct report_doc *doc) {
	doc->cut = doc->cut || (doc->max_bytes > 0 && doc->bytes > doc->max_bytes);
	return doc->cut;
}

struct report_block *report_block_add(struct report_doc *doc, enum report_block_kind kind) {
	if (report_over_budget(doc)) {
		report_block_free(&doc->sink);
		doc->sink = (struct report_block){.kind = kind, .doc = doc, .discard = true};
		return &doc->sink;
	}
	doc->blocks = xgrow(doc->blocks, &doc->cap, doc->n + 1, sizeof(*doc->blocks));
	struct report_block *b = &doc->blocks[doc->n++];
	*b = (struct report_block){.kind = kind, .doc = doc};
	doc->bytes += BLOCK_BYTES;
	return b;
}

void report_text(struct report_doc *doc, enum report_block_kind kind, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	char *text = xvasprintf(fmt, ap);
	va_end(ap);
	doc->bytes += strlen(text);
	report_block_add(doc, kind)->text = text;
}

struct report_block *report_table(struct report_doc *doc, size_t cols, const char *const *head) {
	struct report_block *t = report_block_add(doc, REPORT_BLOCK_TABLE);
	t->cols = cols;
	t->right = xcalloc(cols, sizeof(*t->right));
	t->rows = 1;
	t->cells = xcalloc(cols, sizeof(*t->cells));
	for (size_t c = 0; c < cols; c++) {
		t->cells[c] = xstrdup(head[c] ? head[c] : "");
		t->right[c] = c > 0;
		doc->bytes += strlen(t->cells[c]) + CELL_BYTES;
	}
	return t;
}

/* A new row, whose cells report_cell() sets; past the budget the table ends with the rows it has.
 */
void report_row(struct report_block *t) {
	if (t->discard || report_over_budget(t->doc)) {
		t->discard = true;
		return;
	}
	t->cells = xrealloc(t->cells, (t->rows + 1) * t->cols * sizeof(*t->cells));
	for (size_t c = 0; c < t->cols; c++) {
		t->cells[t->rows * t->cols + c] = xstrdup("");
	}
	t->rows++;
	t->doc->bytes += t->cols * CELL_BYTES;
}

void report_cell(struct report_block *t, size_t col, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	char *text = xvasprintf(fmt, ap); // before the old text goes: an argument may be it
	va_end(ap);
	if (t->discard) {
		free(text);
		return;
	}
	char **slot = &t->cells[(t->rows - 1) * t->cols + col];
	t->doc->bytes += strlen(text);
	free(*slot);
	*slot = text;
}

/* Sets a cell to a number with @places places, "-" for NAN or an infinity. */
void report_num(struct report_block *t, size_t col, double v, int places) {
	if (isfinite(v)) {
		report_cell(t, col, "%.*f", places, v);
	} else {
		report_cell(t, col, "-");
	}
}

void report_chart_add(struct report_doc *doc, const char *name, char *svg, char *caption) {
	doc->charts = xgrow(doc->charts, &doc->cap_charts, doc->n_charts + 1, sizeof(*doc->charts));
	doc->charts[doc->n_charts] = (struct report_chart){.name = xstrdup(name), .svg = svg};
	struct report_block *c = report_block_add(doc, REPORT_BLOCK_CHART);
	c->chart = doc->n_charts++;
	c->text = caption;
}
