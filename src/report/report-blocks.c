/*
 * The document's building blocks (report-internal.h): blocks, tables, cells and charts, each
 * counted against the document's budget (report_options.max_bytes), and how a channel's
 * figures read in them (places, label, residency), which every layout shares.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "report-internal.h"
#include "stats.h"
#include "unit.h"
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

void report_section_of(struct report_doc *doc, const struct report *rep, size_t bi,
		       const char *title) {
	if (rep->n_boards > 1) {
		report_section(doc, "%s: %s", title, rep->boards[bi].name);
	} else {
		report_section(doc, "%s", title);
	}
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
	// Each HTML cell names its column (data-label, for a phone's stacked rows).
	for (size_t c = 0; c < t->cols; c++) {
		t->doc->bytes += CELL_BYTES + strlen(t->cells[c]);
	}
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

struct report_block *report_text_table(struct report_doc *doc, const char *const head[2]) {
	struct report_block *t = report_table(doc, 2, head);
	t->right[1] = false;
	return t;
}

void report_text_row(struct report_block *t, const char *name, const char *text) {
	report_row(t);
	report_cell(t, 0, "%s", name);
	report_cell(t, 1, "%s", text);
}

void report_chart_add(struct report_doc *doc, const char *name, char *svg, char *caption) {
	doc->charts = xgrow(doc->charts, &doc->cap_charts, doc->n_charts + 1, sizeof(*doc->charts));
	doc->charts[doc->n_charts] = (struct report_chart){.name = xstrdup(name), .svg = svg};
	struct report_block *c = report_block_add(doc, REPORT_BLOCK_CHART);
	c->chart = doc->n_charts++;
	c->text = caption;
}

/* ---- how a channel's figures read ---- */

/* Places of @ch's statistics as shown: temperatures two, else the unit registry's columns. */
int report_places(const struct channel *ch) {
	if (ch->kind == CHANNEL_KIND_TEMPERATURE) {
		return 2;
	}
	int p = unit_places(ch->unit, true);
	if (p < 0) {
		p = stats_resolution_digits(ch->resolution);
	}
	return p < 0 ? 3 : p > 3 ? 3 : p;
}

/*
 * The channel's label when it says more than its key: not the key itself, nor its last part
 * (a zone's type, "soc-thermal" of thermal/soc-thermal), which the key already shows.
 */
const char *report_label(const struct channel *ch) {
	const char *slash = strrchr(ch->key, '/');
	const char *last = slash ? slash + 1 : ch->key;
	return ch->label && strcmp(ch->label, ch->key) != 0 && strcmp(ch->label, last) != 0
		       ? ch->label
		       : "";
}

bool report_is_zone(const struct channel *ch) {
	return ch->kind == CHANNEL_KIND_TEMPERATURE && strncmp(ch->key, "thermal/", 8) == 0;
}

const char *report_weight_text(enum query_weight w) {
	return w == QUERY_WEIGHT_TIME
		       ? "weighted by time: each sample counts the time it stands for"
		       : "weighted by samples: each sample counts once";
}

struct share {
	double value;
	int64_t count;
};

static int by_count(const void *pa, const void *pb) {
	const struct share *a = pa, *b = pb;
	return a->count != b->count ? (a->count < b->count ? 1 : -1)
				    : (a->value < b->value) - (a->value > b->value);
}

/*
 * Appends @s's residency of slot @k to @out, the commonest state first: "held 1800 MHz for
 * 60.0 % of the time, 1416 MHz 30.0 %", at most @shown states (and how many more).
 */
void report_residency(const struct query_stats *s, size_t k, size_t shown, struct buf *out) {
	const struct channel *ch = query_selection_channel(&s->sel, k);
	bool by_time = s->weight == QUERY_WEIGHT_TIME;
	const struct stats_acc *tis = by_time ? &s->time_acc[k] : &s->acc[k];
	double factor;
	const char *unit = unit_symbol(ch->unit, &factor);
	size_t n_bins;
	const struct stats_bin *bins = stats_bins(tis, &n_bins);
	struct share *sh = xcalloc(n_bins ? n_bins : 1, sizeof(*sh));
	for (size_t i = 0; i < n_bins; i++) {
		sh[i] = (struct share){stats_value(bins[i].q, ch->resolution) * factor,
				       bins[i].count};
	}
	qsort(sh, n_bins, sizeof(*sh), by_count);
	int places = report_places(ch);
	for (size_t i = 0; i < n_bins && i < shown; i++) {
		double pct = 100.0 * (double)sh[i].count / (double)tis->count;
		buf_printf(out, i == 0 ? "held %.*f %s for %.1f %% of the %s" : ", %.*f %s %.1f %%",
			   places, sh[i].value, unit, pct, by_time ? "time" : "samples");
	}
	if (n_bins > shown) {
		buf_printf(out, ", %zu more state%s", n_bins - shown,
			   n_bins - shown == 1 ? "" : "s");
	}
	free(sh);
}

/* Whether slot @k of @s is a clock with samples (of the weighing the statistics use). */
bool report_clock_sampled(const struct query_stats *s, size_t k) {
	const struct channel *ch = query_selection_channel(&s->sel, k);
	const struct stats_acc *tis = s->weight == QUERY_WEIGHT_TIME ? &s->time_acc[k] : &s->acc[k];
	return ch->kind == CHANNEL_KIND_FREQUENCY && tis->count > 0;
}

bool report_label_shown(const struct report_options *opt, const char *label) {
	for (size_t i = 0; i < opt->n_labels; i++) {
		if (strcmp(opt->labels[i], label) == 0) {
			return true;
		}
	}
	return opt->n_labels == 0;
}
