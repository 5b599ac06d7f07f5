/*
 * The report as one self-contained HTML file: inline CSS and SVG, no script, no font and
 * nothing fetched (a Content-Security-Policy says so to the browser), every text escaped.
 * Tables fit a desktop's width and stack their rows on a phone's; in print each section starts
 * a page.
 */
#include "report-internal.h"

/* The entities HTML and SVG text needs; DEL and the other control bytes become \xNN. */
static const char *const xml_escapes[128] = {
	['&'] = "&amp;",  ['<'] = "&lt;",   ['>'] = "&gt;",
	['"'] = "&quot;", ['\''] = "&#39;", [0x7f] = "\\x7f",
};

static void put_hex_escape(struct buf *out, unsigned char c) {
	buf_printf(out, "\\x%02x", c); // no control bytes
}

void report_escape_xml(struct buf *out, const char *s) {
	buf_put_escaped(out, s, xml_escapes, put_hex_escape);
}

/*
 * Tables fit the screen: at a desktop's width every column shows (text cells wrap, numbers do
 * not; a table of many columns in a smaller font), so nothing hides behind an inner scrollbar;
 * at a phone's width each row stacks, every cell on a line of its own beside its column's name
 * (data-label), so nothing needs one either. A table wider than its box still scrolls inside it.
 */
static const char style[] =
	"*{box-sizing:border-box}\n"
	"body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1b1b1b;"
	"background:#fff;margin:0 auto;padding:12px;max-width:1600px}\n"
	"h1{font-size:1.4em;margin:.4em 0;overflow-wrap:anywhere}\n"
	"h2{font-size:1.2em;margin:1.2em 0 .4em;border-bottom:1px solid #ccc;"
	"overflow-wrap:anywhere}\n"
	"h3{font-size:1.05em;margin:1em 0 .3em;overflow-wrap:anywhere}\n"
	"p{margin:.4em 0;overflow-wrap:anywhere;max-width:110ch}\n"
	".scroll{overflow-x:auto;max-width:100%;margin:.4em 0}\n"
	"table{border-collapse:collapse;font-variant-numeric:tabular-nums}\n"
	"table.wide{font-size:.84em}\n"
	"th,td{padding:3px 6px;border-bottom:1px solid #e3e3e3;text-align:left;"
	"vertical-align:top}\n"
	"th{background:#f3f3f3;font-weight:600}\n"
	"td{overflow-wrap:anywhere}\n"
	"td.n{text-align:right;white-space:nowrap;overflow-wrap:normal}\n"
	"th.n{text-align:right}\n"
	"figure{margin:.6em 0}\n"
	"figure svg{display:block;width:100%;height:auto;max-width:760px}\n"
	"figcaption{font-size:.9em;color:#555}\n"
	"@media (max-width:640px){"
	".scroll{overflow-x:visible}"
	"table,tbody,tr,td{display:block;width:100%}"
	"thead{display:none}"
	"tr{border:1px solid #ddd;border-radius:4px;margin:0 0 .6em;padding:.2em .5em}"
	"td,td.n{border:none;padding:1px 0;text-align:right;white-space:normal;"
	"overflow-wrap:anywhere}"
	"td::before{content:attr(data-label);float:left;margin-right:.8em;color:#555;"
	"font-weight:600;text-align:left}"
	"td:first-child{font-weight:600;text-align:left}"
	"td:first-child::before{content:none}"
	"}\n"
	"@media print{body{max-width:none;padding:0}"
	"section{break-before:page;page-break-before:always}"
	"section:first-of-type{break-before:auto;page-break-before:auto}"
	".scroll{overflow:visible}th,td{white-space:normal}"
	"figure{break-inside:avoid}}\n";

/* Tables of this many columns or more read in a smaller font. */
#define WIDE_COLUMNS 9

static void table_html(const struct report_block *t, struct buf *out) {
	buf_puts(out, t->cols >= WIDE_COLUMNS ? "<div class=\"scroll\"><table class=\"wide\">\n"
					      : "<div class=\"scroll\"><table>\n");
	buf_puts(out, "<thead><tr>");
	for (size_t c = 0; c < t->cols; c++) {
		buf_puts(out, t->right[c] ? "<th class=\"n\">" : "<th>");
		report_escape_xml(out, t->cells[c]);
		buf_puts(out, "</th>");
	}
	buf_puts(out, "</tr></thead>\n<tbody>\n");
	for (size_t r = 1; r < t->rows; r++) {
		buf_puts(out, "<tr>");
		for (size_t c = 0; c < t->cols; c++) {
			// Its column's name beside each cell when a phone stacks the row.
			buf_puts(out, t->right[c] ? "<td class=\"n\" data-label=\""
						  : "<td data-label=\"");
			report_escape_xml(out, t->cells[c]);
			buf_puts(out, "\">");
			report_escape_xml(out, t->cells[r * t->cols + c]);
			buf_puts(out, "</td>");
		}
		buf_puts(out, "</tr>\n");
	}
	buf_puts(out, "</tbody></table></div>\n");
}

/* Element @tag holding @text escaped, then a line break: "<p>text</p>\n". */
static void element(struct buf *out, const char *tag, const char *text) {
	buf_printf(out, "<%s>", tag);
	report_escape_xml(out, text);
	buf_printf(out, "</%s>\n", tag);
}

void report_html_write(const struct report_doc *doc, struct buf *out) {
	buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		      "style-src 'unsafe-inline'\">\n");
	element(out, "title", doc->title);
	buf_puts(out, "<style>\n");
	buf_puts(out, style);
	buf_puts(out, "</style>\n</head>\n<body>\n<header><h1>");
	report_escape_xml(out, doc->title);
	buf_puts(out, "</h1></header>\n");
	bool open = false;
	for (size_t i = 0; i < doc->n; i++) {
		const struct report_block *b = &doc->blocks[i];
		switch (b->kind) {
		case REPORT_BLOCK_SECTION:
			buf_puts(out, open ? "</section>\n<section>\n" : "<section>\n");
			element(out, "h2", b->text);
			open = true;
			break;
		case REPORT_BLOCK_HEADING:
			element(out, "h3", b->text);
			break;
		case REPORT_BLOCK_PARA:
			element(out, "p", b->text);
			break;
		case REPORT_BLOCK_TABLE:
			table_html(b, out);
			break;
		case REPORT_BLOCK_CHART:
			buf_puts(out, "<figure>\n");
			buf_puts(out, doc->charts[b->chart].svg);
			element(out, "figcaption", b->text);
			buf_puts(out, "</figure>\n");
			break;
		}
	}
	buf_puts(out, open ? "</section>\n</body>\n</html>\n" : "</body>\n</html>\n");
}
