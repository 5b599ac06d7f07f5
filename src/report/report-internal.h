/*
 * The report's document model (private to src/report/): report-doc.c lays the computed answers
 * out as blocks of plain text, report-html.c and report-md.c write the blocks (each escaping
 * text for its format), report-chart.c draws the SVG charts, report-write.c joins them behind
 * report.h's report_write() and report_charts().
 */
#ifndef REPORT_INTERNAL_H
#define REPORT_INTERNAL_H

#include "report.h"

enum report_block_kind {
	REPORT_BLOCK_SECTION, // a new section (a page of its own in print) headed by text
	REPORT_BLOCK_HEADING, // a heading inside a section
	REPORT_BLOCK_PARA,    // a paragraph
	REPORT_BLOCK_TABLE,   // a table; its first row is the header
	REPORT_BLOCK_CHART,   // a chart: the index into the charts, text its caption
};

struct report_block {
	enum report_block_kind kind;
	char *text; // plain text (UTF-8), escaped by the writer
	size_t cols, rows;
	char **cells;           // rows x cols, plain text, never NULL
	bool *right;            // per column: numbers, right-aligned
	size_t chart;           // REPORT_BLOCK_CHART: index into the document's charts
	struct report_doc *doc; // the document it belongs to, whose budget it spends
	bool discard;           // past the budget: its further rows and cells go nowhere
};

struct report_doc {
	char *title;
	struct report_block *blocks;
	size_t n, cap;
	struct report_chart *charts;
	size_t n_charts, cap_charts;
	// The budget (report_options.max_bytes): once the blocks would take more output than
	// max_bytes (0: no limit), nothing more is added, and the document ends saying so.
	size_t max_bytes, bytes;
	bool cut;
	struct report_block sink; // what is added past the budget, dropped
};

/*
 * The building blocks (report-blocks.c), each counted against the document's budget: past it
 * a block goes to doc->sink, a row and its cells are dropped (report_over_budget() says so).
 */
struct report_block *report_block_add(struct report_doc *doc, enum report_block_kind kind);
void report_text(struct report_doc *doc, enum report_block_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define report_section(doc, ...) report_text(doc, REPORT_BLOCK_SECTION, __VA_ARGS__)
#define report_heading(doc, ...) report_text(doc, REPORT_BLOCK_HEADING, __VA_ARGS__)
#define report_para(doc, ...)    report_text(doc, REPORT_BLOCK_PARA, __VA_ARGS__)
/** A table of @cols columns with the header @head; rows follow with report_row(), cells. */
struct report_block *report_table(struct report_doc *doc, size_t cols, const char *const *head);
void report_row(struct report_block *t);
void report_cell(struct report_block *t, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** A cell of a number with @places places, "-" for NAN or an infinity. */
void report_num(struct report_block *t, size_t col, double v, int places);
/** A chart block: @svg and @caption (both newly allocated) are the document's from now on. */
void report_chart_add(struct report_doc *doc, const char *name, char *svg, char *caption);
/** True once the document has spent its budget. */
bool report_over_budget(struct report_doc *doc);
void report_block_free(struct report_block *b);

/** The capacitor design review of board @bi: a section a capacitor (report-review.c). */
void report_review_sections(struct report_doc *doc, const struct report *rep, size_t bi);

/** Lays @rep out as a document (report-doc.c). */
void report_doc_build(const struct report *rep, struct report_doc *doc);
void report_doc_finish(struct report_doc *doc);

/** Writers of a document (report-html.c, report-md.c). */
void report_html_write(const struct report_doc *doc, struct buf *out);
void report_md_write(const struct report_doc *doc, const char *chart_prefix, struct buf *out);

/**
 * Appends @s with &, <, >, " and ' as character references (HTML and SVG text alike;
 * report-html.c).
 */
void report_escape_xml(struct buf *out, const char *s);

/**
 * The SVG of board @b's peak (report-chart.c): every zone of the peak over its cycles, the
 * big-core zone solid, the NPU zone dashed, the others faint; a standalone document.
 */
char *report_chart_peak(const struct report_board *b);

/** A capacitor's mission profile as bars: hours per bin of the model temperature. */
char *report_chart_profile(const struct lifetime_profile_entry *pe, double bin_k);

/** A capacitor's consumed life over the window: the series' points joined. */
char *report_chart_consumed(const struct lifetime_series *s, const struct capacitor_config *cc);

#endif
