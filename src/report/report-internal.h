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
/** Section @title of board @bi: with two boards the heading names it ("Load: board B"). */
void report_section_of(struct report_doc *doc, const struct report *rep, size_t bi,
		       const char *title);
/** A table of @cols columns with the header @head; rows follow with report_row(), cells. */
struct report_block *report_table(struct report_doc *doc, size_t cols, const char *const *head);
void report_row(struct report_block *t);
void report_cell(struct report_block *t, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/** A cell of a number with @places places, "-" for NAN or an infinity. */
void report_num(struct report_block *t, size_t col, double v, int places);
/** A table of two text columns, neither aligned right: a name and what it says (@head). */
struct report_block *report_text_table(struct report_doc *doc, const char *const head[2]);
/** A row of such a table: @name and @text as they are. */
void report_text_row(struct report_block *t, const char *name, const char *text);
/** A chart block: @svg and @caption (both newly allocated) are the document's from now on. */
void report_chart_add(struct report_doc *doc, const char *name, char *svg, char *caption);
/** True once the document has spent its budget. */
bool report_over_budget(struct report_doc *doc);
void report_block_free(struct report_block *b);

/* Shared by the layouts (report-doc.c): how a channel's figures read. */
/** Places of @ch's statistics as shown: temperatures two, else the unit registry's columns. */
int report_places(const struct channel *ch);
/** The channel's label when it says more than its key ("" else). */
const char *report_label(const struct channel *ch);
/** "weighted by time: ..." or "weighted by samples: ...". */
const char *report_weight_text(enum query_weight w);
/** Slot @k's residency, the commonest state first, at most @shown states: "held 1800 MHz for
 * 60.0 % of the time, 1416 MHz 30.0 %". */
void report_residency(const struct query_stats *s, size_t k, size_t shown, struct buf *out);
/** Whether slot @k of @s is a clock with samples (of the weighing the statistics use). */
bool report_clock_sampled(const struct query_stats *s, size_t k);
/** Whether @ch is a thermal zone (a temperature of the thermal source). */
bool report_is_zone(const struct channel *ch);
/** Whether run label @label is one the report shows (--label; all without). */
bool report_label_shown(const struct report_options *opt, const char *label);
/** The role of @b's channel @key (report.c: inferred, or as the board declared it). */
enum role report_role(const struct report_board *b, const char *key);

/* The sections of two boards (report-compare.c). */
/** Comparable or not, at the top: each compared label's verdict, the reasons once each. */
void report_verdict_section(struct report_doc *doc, const struct report *rep);
/** Zones, clocks, memory, runs, per-test figures and the peaks of both boards side by side. */
void report_compare_sections(struct report_doc *doc, const struct report *rep);

/* The sections of one board beside its zones and clocks (report-board.c). */
/** The Board table: each board's facts (declared and recorded), clocks and window. */
void report_board_section(struct report_doc *doc, const struct report *rep);
/** Board @bi's load per CPU cluster and NPU core, over the window and per label. */
void report_load_section(struct report_doc *doc, const struct report *rep, size_t bi);
/** Board @bi's throttling: episodes per domain, and per label while its runs were under way. */
void report_throttle_section(struct report_doc *doc, const struct report *rep, size_t bi);

/** The capacitor design review of board @bi: a section a capacitor (report-review.c). */
void report_review_sections(struct report_doc *doc, const struct report *rep, size_t bi);

/** Lays @rep out as a document (report-doc.c). */
void report_doc_build(const struct report *rep, struct report_doc *doc);
void report_doc_finish(struct report_doc *doc);

/** Writers of a document (report-html.c, report-md.c). */
void report_html_write(const struct report_doc *doc, struct buf *out);
void report_md_write(const struct report_doc *doc, const char *chart_prefix, struct buf *out);
/** Writes @doc in @format (Markdown's charts named after @chart_prefix), then finishes it. */
void report_doc_write(struct report_doc *doc, enum report_format format, const char *chart_prefix,
		      struct buf *out);

/**
 * Appends @s with &, <, >, " and ' as character references (HTML and SVG text alike;
 * report-html.c).
 */
void report_escape_xml(struct buf *out, const char *s);

/**
 * The SVG of board @b's peak (report-chart.c): every zone of the peak over its cycles in
 * minutes from the peak, one line style per role with a legend naming each role's zones, round
 * ticks, the unit along the axis; a standalone document.
 */
char *report_chart_peak(const struct report_board *b);

/** Both boards' peak channels on one chart, each in minutes from its own peak. */
char *report_chart_peaks(const struct report *rep);

/** A capacitor's mission profile as bars: hours per bin of the model temperature. */
char *report_chart_profile(const struct lifetime_profile_entry *pe, double bin_k);

/** A capacitor's consumed life over the window: the series' points joined. */
char *report_chart_consumed(const struct lifetime_series *s, const struct capacitor_config *cc);

#endif
