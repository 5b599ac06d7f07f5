/*
 * The report as GitHub-flavoured Markdown: pipe tables (a '|' in a cell escaped, so every row
 * has the header's columns), text escaped so a label is never markup or HTML, and each chart
 * linked as the SVG file beside the document.
 */
#include <stdbool.h>
#include <string.h>

#include "report-internal.h"

/*
 * @s as Markdown text: emphasis, code, link and table characters backslash-escaped (and a
 * leading heading or list mark at the start of a @block), <, > and & as references.
 */
static void md_text(struct buf *out, const char *s, bool block) {
	for (const char *start = s; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '<') {
			buf_puts(out, "&lt;");
		} else if (c == '>') {
			buf_puts(out, "&gt;");
		} else if (c == '&') {
			buf_puts(out, "&amp;");
		} else if (c < 0x20 || c == 0x7f) {
			buf_printf(out, "\\\\x%02x", c); // a literal "\xNN", no control byte
		} else if (strchr("\\`*_[]|~", c) || (block && s == start && strchr("#+-!>", c))) {
			buf_putc(out, '\\');
			buf_putc(out, (char)c);
		} else {
			buf_putc(out, (char)c);
		}
	}
}

static void table_md(const struct report_block *t, struct buf *out) {
	for (size_t r = 0; r < t->rows; r++) {
		buf_puts(out, "|");
		for (size_t c = 0; c < t->cols; c++) {
			const char *v = t->cells[r * t->cols + c];
			buf_puts(out, " ");
			if (r > 0 && t->right[c]) {
				buf_puts(out, v); // numbers: digits, '.', '-', spaces and letters
			} else {
				md_text(out, v, false);
			}
			buf_puts(out, " |");
		}
		buf_puts(out, "\n");
		if (r == 0) {
			buf_puts(out, "|");
			for (size_t c = 0; c < t->cols; c++) {
				buf_puts(out, t->right[c] ? " ---: |" : " --- |");
			}
			buf_puts(out, "\n");
		}
	}
	buf_puts(out, "\n");
}

void report_md_write(const struct report_doc *doc, const char *chart_prefix, struct buf *out) {
	buf_puts(out, "# ");
	md_text(out, doc->title, true);
	buf_puts(out, "\n\n");
	for (size_t i = 0; i < doc->n; i++) {
		const struct report_block *b = &doc->blocks[i];
		switch (b->kind) {
		case REPORT_BLOCK_SECTION:
		case REPORT_BLOCK_HEADING:
			buf_puts(out, b->kind == REPORT_BLOCK_SECTION ? "## " : "### ");
			md_text(out, b->text, true);
			buf_puts(out, "\n\n");
			break;
		case REPORT_BLOCK_PARA:
			md_text(out, b->text, true);
			buf_puts(out, "\n\n");
			break;
		case REPORT_BLOCK_TABLE:
			table_md(b, out);
			break;
		case REPORT_BLOCK_CHART:
			if (!chart_prefix) {
				buf_puts(out,
					 "(Chart left out: this Markdown came without its chart "
					 "files (standard output, or the API); the HTML report has "
					 "every chart inline.)\n\n");
				break;
			}
			buf_puts(out, "![");
			md_text(out, b->text, true);
			buf_puts(out, "](<");
			// The link target inside <...>: only '<', '>' and line ends would end it.
			for (const char *p = chart_prefix; *p; p++) {
				if (*p == '<' || *p == '>' || *p == '\n') {
					buf_printf(out, "%%%02X", (unsigned char)*p);
				} else if (*p == ' ') {
					buf_puts(out, "%20");
				} else {
					buf_putc(out, *p);
				}
			}
			buf_puts(out, "-");
			buf_puts(out, doc->charts[b->chart].name);
			buf_puts(out, ".svg>)\n\n");
			break;
		}
	}
}
