/*
 * The report's output: a computed report (report.c) laid out as a document (report-doc.c) and
 * written as HTML or Markdown (report-html.c, report-md.c), or as its charts alone.
 */
#include "report.h"

#include <string.h>

#include "report-internal.h"

bool report_format_parse(const char *text, enum report_format *format) {
	if (strcmp(text, "html") == 0) {
		*format = REPORT_HTML;
	} else if (strcmp(text, "md") == 0 || strcmp(text, "markdown") == 0) {
		*format = REPORT_MARKDOWN;
	} else {
		return false;
	}
	return true;
}

enum report_format report_format_of_path(const char *path) {
	size_t len = strlen(path);
	return len > 3 && strcmp(path + len - 3, ".md") == 0 ? REPORT_MARKDOWN : REPORT_HTML;
}

void report_write(const struct report *rep, enum report_format format, const char *chart_prefix,
		  struct buf *out) {
	struct report_doc doc;
	report_doc_build(rep, &doc);
	report_doc_write(&doc, format, chart_prefix, out);
}

void report_doc_write(struct report_doc *doc, enum report_format format, const char *chart_prefix,
		      struct buf *out) {
	if (format == REPORT_HTML) {
		report_html_write(doc, out);
	} else {
		report_md_write(doc, chart_prefix, out);
	}
	report_doc_finish(doc);
}

void report_charts(const struct report *rep, struct report_chart **charts, size_t *n) {
	struct report_doc doc;
	report_doc_build(rep, &doc);
	*charts = doc.charts;
	*n = doc.n_charts;
	doc.charts = NULL;
	doc.n_charts = 0;
	report_doc_finish(&doc);
}
