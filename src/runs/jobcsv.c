/* Job log CSV: a header naming start, end and status, one finished run per row, bad rows
 * named by line. */
#include "jobcsv.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "csv.h"
#include "runtag.h"
#include "timefmt.h"
#include "xalloc.h"

/* 2000-01-01T00:00:00Z in ms: no job log predates it; smaller numbers are a wrong unit. */
#define JOBCSV_OLDEST_MS INT64_C(946684800000)

enum column {
	COL_START,
	COL_END,
	COL_STATUS,
	COL_LABEL,
	COL_EXIT_CODE,
	COL_ENERGY,
	COL_TEMP,
	COL_RSS,
	COL_ERROR,
	COL_COUNT,
};

static const char *const column_names[COL_COUNT] = {
	"start",    "end",        "status",        "label", "exit_code",
	"energy_j", "temp_max_c", "rss_max_bytes", "error",
};

/* A metric: column of the header. */
struct metric_col {
	size_t field;
	char *name, *unit; // unit "" when the header gives none
};

/* A tag: column of the header. */
struct tag_col {
	size_t field;
	char *key;
};

struct parser {
	const char *name;
	struct buf *errors;
	size_t n_errors;
	ptrdiff_t col[COL_COUNT]; // field index, -1 = absent
	int64_t unix_per_s;       // what a unix stamp counts: 1 (s), 1000 (ms), 1000000 (us)
	struct metric_col *metrics;
	size_t n_metrics, cap_metrics;
	struct tag_col *tags;
	size_t n_tags, cap_tags;
};

static void report(struct parser *p, unsigned long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void report(struct parser *p, unsigned long line, const char *fmt, ...) {
	p->n_errors++;
	if (p->n_errors > JOBCSV_ERRORS_MAX) {
		return;
	}
	// The file's bytes quoted in a message reach a terminal: control characters escaped.
	struct buf msg;
	buf_init(&msg);
	buf_printf(&msg, "%s:%lu: ", p->name, line);
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	buf_put_printable(p->errors, msg.data, msg.len);
	buf_putc(p->errors, '\n');
	buf_finish(&msg);
}

static bool is_digit(char c) {
	return c >= '0' && c <= '9';
}

/* Up to three fraction digits as ms, rounded by the rest: "123456" -> 123, "9996" -> 1000. */
static int64_t fraction_ms(const char *f) {
	int64_t ms = 0;
	int i = 0;
	for (; i < 3; i++) {
		ms = ms * 10 + (is_digit(f[i]) ? f[i] - '0' : 0);
		if (!is_digit(f[i])) {
			for (i++; i < 3; i++) {
				ms *= 10;
			}
			return ms;
		}
	}
	return ms + (is_digit(f[3]) && f[3] >= '5');
}

bool jobcsv_parse_time_ms(const char *text, int64_t unix_per_s, int64_t *ms) {
	if (!*text || text[0] == '-' || strcmp(text, "now") == 0) {
		return false; // a log records absolute times
	}
	const char *p = text;
	while (is_digit(*p)) {
		p++;
	}
	bool unix_s = p > text && (*p == '\0' || (*p == '.' && is_digit(p[1])));
	if (unix_s && unix_per_s > 1) {
		// Whole milliseconds or microseconds: 12 digits of seconds and the unit's own.
		int digits = unix_per_s == 1000 ? 15 : 18;
		if (*p || p - text > digits) {
			return false;
		}
		int64_t v = strtoll(text, NULL, 10);
		*ms = unix_per_s == 1000 ? v : v / 1000 + (v % 1000 >= 500);
		return true;
	}
	if (unix_s) {
		const char *f = *p == '.' ? p + 1 : p;
		const char *q = f;
		while (is_digit(*q)) {
			q++;
		}
		if (*q || p - text > 12) {
			return false; // a unix second count has at most 12 digits until year 33658
		}
		int64_t s = strtoll(text, NULL, 10);
		*ms = s * 1000 + (*p == '.' ? fraction_ms(f) : 0);
		return true;
	}
	int64_t s;
	if (!timefmt_parse_time(text, 0, &s)) {
		return false;
	}
	// timefmt drops an ISO fraction; a log keeps it: find it after "HH:MM:SS".
	int64_t frac = 0;
	const char *t = strpbrk(text, "Tt ");
	if (t && strlen(t) > 9 && t[3] == ':' && t[6] == ':' && (t[9] == '.' || t[9] == ',')) {
		frac = fraction_ms(t + 10);
	}
	*ms = s * 1000 + frac;
	return true;
}

bool jobcsv_parse_status(const char *text, enum run_status *out) {
	static const struct {
		const char *word;
		enum run_status status;
	} words[] = {
		{"ok", RUN_STATUS_OK},           {"completed", RUN_STATUS_OK},
		{"success", RUN_STATUS_OK},      {"succeeded", RUN_STATUS_OK},
		{"done", RUN_STATUS_OK},         {"failed", RUN_STATUS_FAILED},
		{"error", RUN_STATUS_FAILED},    {"failure", RUN_STATUS_FAILED},
		{"fail", RUN_STATUS_FAILED},     {"signaled", RUN_STATUS_SIGNALED},
		{"timeout", RUN_STATUS_TIMEOUT}, {"lost", RUN_STATUS_LOST},
	};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strcasecmp(text, words[i].word) == 0) {
			*out = words[i].status;
			return true;
		}
	}
	return false;
}

static const char *field(const struct csv_reader *r, ptrdiff_t col) {
	return col >= 0 && (size_t)col < r->n_fields ? r->fields[col] : "";
}

/*
 * An error column's text as the run keeps it, or NULL when empty: one line, control characters
 * escaped (old logs hold multi-line tracebacks), cut to JOBCSV_ERROR_MAX bytes between
 * characters, never inside a UTF-8 sequence or an escape.
 */
char *jobcsv_error_text(const char *s) {
	struct buf b;
	buf_init(&b);
	for (size_t i = 0, n = strlen(s); i < n;) {
		size_t len = 1;
		if ((unsigned char)s[i] >= 0xc0) {
			while (i + len < n && ((unsigned char)s[i + len] & 0xc0) == 0x80) {
				len++;
			}
		}
		size_t before = b.len;
		buf_put_printable(&b, s + i, len);
		if (b.len > JOBCSV_ERROR_MAX) {
			b.len = before;
			b.data[before] = '\0';
			break;
		}
		i += len;
	}
	if (b.len == 0) {
		buf_finish(&b);
		return NULL;
	}
	return buf_steal(&b);
}

/* An optional non-negative figure; empty = NAN. */
static bool parse_figure(const char *text, double *out) {
	if (!*text) {
		*out = NAN;
		return true;
	}
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (*end || errno || !isfinite(v) || v < 0 || !(is_digit(*text) || *text == '.')) {
		return false;
	}
	*out = v;
	return true;
}

bool jobcsv_text_valid(const char *s, size_t len, size_t max) {
	return runtag_text_valid(s, len, max);
}

bool jobcsv_label_valid(const char *s) {
	return jobcsv_text_valid(s, strlen(s), JOBCSV_LABEL_MAX);
}

/* A header field "metric:NAME" or "metric:NAME (UNIT)": true when it is one (bad: refused). */
static bool metric_column(struct parser *p, const struct csv_reader *r, size_t i, bool *bad) {
	const char *f = r->fields[i];
	size_t plen = strlen(JOBCSV_METRIC_PREFIX);
	if (strncasecmp(f, JOBCSV_METRIC_PREFIX, plen) != 0) {
		return false;
	}
	char *name = xstrdup(f + plen), *unit = xstrdup("");
	size_t len = strlen(name);
	char *open = len > 2 && name[len - 1] == ')' ? strrchr(name, '(') : NULL;
	if (open && open > name && open[-1] == ' ') {
		name[len - 1] = '\0';
		free(unit);
		unit = xstrdup(open + 1);
		open[-1] = '\0';
	}
	for (size_t k = 0; k < p->n_metrics && !*bad; k++) {
		if (strcmp(p->metrics[k].name, name) == 0) {
			report(p, r->line, "metric '%s' appears twice in the header", name);
			*bad = true;
		}
	}
	if (!*bad && (!runtag_name_valid(name) || !runmetric_unit_valid(unit))) {
		report(p, r->line,
		       "column '%s': expected metric:NAME or metric:NAME (UNIT), the name " RUNTAG_TEXT_RULE
		       ", the unit " RUNMETRIC_UNIT_RULE,
		       f);
		*bad = true;
	}
	if (*bad) {
		free(name);
		free(unit);
		return true;
	}
	p->metrics = xgrow(p->metrics, &p->cap_metrics, p->n_metrics + 1, sizeof(*p->metrics));
	p->metrics[p->n_metrics++] = (struct metric_col){i, name, unit};
	return true;
}

/* A header field "tag:KEY": true when it is one (bad: refused). */
static bool tag_column(struct parser *p, const struct csv_reader *r, size_t i, bool *bad) {
	const char *f = r->fields[i];
	size_t plen = strlen(JOBCSV_TAG_PREFIX);
	if (strncasecmp(f, JOBCSV_TAG_PREFIX, plen) != 0) {
		return false;
	}
	const char *key = f + plen;
	for (size_t k = 0; k < p->n_tags && !*bad; k++) {
		if (strcmp(p->tags[k].key, key) == 0) {
			report(p, r->line, "tag '%s' appears twice in the header", key);
			*bad = true;
		}
	}
	if (!*bad && !runtag_name_valid(key)) {
		report(p, r->line, "column '%s': expected tag:KEY, the key " RUNTAG_TEXT_RULE, f);
		*bad = true;
	}
	if (!*bad) {
		p->tags = xgrow(p->tags, &p->cap_tags, p->n_tags + 1, sizeof(*p->tags));
		p->tags[p->n_tags++] = (struct tag_col){i, xstrdup(key)};
	}
	return true;
}

static void parser_finish(struct parser *p) {
	for (size_t k = 0; k < p->n_metrics; k++) {
		free(p->metrics[k].name);
		free(p->metrics[k].unit);
	}
	free(p->metrics);
	for (size_t k = 0; k < p->n_tags; k++) {
		free(p->tags[k].key);
	}
	free(p->tags);
}

static bool parse_header(struct parser *p, const struct csv_reader *r) {
	for (int c = 0; c < COL_COUNT; c++) {
		p->col[c] = -1;
	}
	for (size_t i = 0; i < r->n_fields; i++) {
		bool bad = false;
		if (metric_column(p, r, i, &bad) || tag_column(p, r, i, &bad)) {
			if (bad) {
				return false;
			}
			continue;
		}
		for (int c = 0; c < COL_COUNT; c++) {
			if (strcasecmp(r->fields[i], column_names[c]) != 0) {
				continue;
			}
			if (p->col[c] >= 0) {
				report(p, r->line, "column '%s' appears twice in the header",
				       column_names[c]);
				return false;
			}
			p->col[c] = (ptrdiff_t)i;
		}
	}
	bool good = true;
	for (int c = COL_START; c <= COL_STATUS; c++) {
		if (p->col[c] < 0) {
			report(p, r->line,
			       "the header has no '%s' column (a job log needs start, end and "
			       "status)",
			       column_names[c]);
			good = false;
		}
	}
	return good;
}

static bool parse_row(struct parser *p, const struct csv_reader *r, const char *default_label,
		      struct jobcsv_row *row) {
	unsigned long line = r->line;
	const char *names[2] = {"start", "end"};
	int64_t *stamps[2] = {&row->start_ms, &row->end_ms};
	for (int i = 0; i < 2; i++) {
		const char *t = field(r, p->col[COL_START + i]);
		if (!jobcsv_parse_time_ms(t, p->unix_per_s, stamps[i])) {
			report(p, line, "bad %s '%s' (ISO 8601 with a zone, or unix %s)", names[i],
			       t,
			       p->unix_per_s == 1000      ? "milliseconds (--time-unit ms)"
			       : p->unix_per_s == 1000000 ? "microseconds (--time-unit us)"
							  : "seconds");
			return false;
		}
		if (*stamps[i] < JOBCSV_OLDEST_MS) {
			report(p, line, "%s '%s' is before 2000-01-01: not a plausible stamp",
			       names[i], t);
			return false;
		}
	}
	if (row->end_ms < row->start_ms) {
		report(p, line, "end '%s' is before start '%s'", field(r, p->col[COL_END]),
		       field(r, p->col[COL_START]));
		return false;
	}
	const char *s = field(r, p->col[COL_STATUS]);
	if (!jobcsv_parse_status(s, &row->status)) {
		report(p, line,
		       "bad status '%s' (ok, failed, signaled, timeout or lost; also completed, "
		       "success, error)",
		       s);
		return false;
	}
	row->exit_code = -1;
	const char *e = field(r, p->col[COL_EXIT_CODE]);
	if (*e) {
		char *end;
		errno = 0;
		long v = strtol(e, &end, 10);
		if (*end || errno || v < 0 || v > 255 || !is_digit(*e)) {
			report(p, line, "bad exit_code '%s' (0..255 or empty)", e);
			return false;
		}
		row->exit_code = (int)v;
		if (row->status == RUN_STATUS_OK && v != 0) {
			report(p, line, "status '%s' with exit_code %ld: an ok run exits 0", s, v);
			return false;
		}
	}
	double *figures[3] = {&row->energy_j, &row->temp_max_c, &row->rss_max_bytes};
	for (int i = 0; i < 3; i++) {
		const char *f = field(r, p->col[COL_ENERGY + i]);
		if (!parse_figure(f, figures[i])) {
			report(p, line, "bad %s '%s' (a non-negative number or empty)",
			       column_names[COL_ENERGY + i], f);
			return false;
		}
	}
	const char *label = field(r, p->col[COL_LABEL]);
	if (!*label) {
		label = default_label;
	}
	if (!jobcsv_label_valid(label)) {
		report(p, line, "bad label '%s' (" JOBCSV_LABEL_RULE ")", label);
		return false;
	}
	for (size_t k = 0; k < p->n_metrics; k++) {
		const struct metric_col *m = &p->metrics[k];
		const char *cell = field(r, (ptrdiff_t)m->field);
		if (!*cell) {
			continue; // the run has no such metric
		}
		double v;
		char *unit = NULL, *err = NULL;
		bool good = runmetric_parse_value(cell, &v, &unit, &err);
		if (good && *unit && *m->unit && strcmp(unit, m->unit) != 0) {
			err = xasprintf("the unit '%s' is not the column's '%s'", unit, m->unit);
			good = false;
		}
		if (good) {
			free(err);
			err = NULL;
			good = runmetric_put(&row->metrics, m->name, v, *unit ? unit : m->unit,
					     &err);
		}
		if (!good) {
			report(p, line, "bad metric '%s' '%s': %s", m->name, cell, err);
		}
		free(unit);
		free(err);
		if (!good) {
			runmetric_set_finish(&row->metrics);
			return false;
		}
	}
	for (size_t k = 0; k < p->n_tags; k++) {
		const char *cell = field(r, (ptrdiff_t)p->tags[k].field);
		if (!*cell) {
			continue; // the run has no such tag
		}
		if (!runtag_name_valid(cell)) {
			report(p, line, "bad tag %s '%s' (" RUNTAG_TEXT_RULE ")", p->tags[k].key,
			       cell);
			runmetric_set_finish(&row->metrics);
			runtag_list_finish(&row->tags);
			return false;
		}
		runtag_put(&row->tags, p->tags[k].key, cell);
	}
	row->label = xstrdup(label);
	row->error = jobcsv_error_text(field(r, p->col[COL_ERROR]));
	row->line = line;
	return true;
}

int jobcsv_parse(FILE *in, const char *name, const char *default_label, int64_t unix_per_s,
		 struct jobcsv *out, struct buf *errors) {
	*out = (struct jobcsv){0};
	struct parser p = {.name = name, .errors = errors, .unix_per_s = unix_per_s};
	struct csv_reader r;
	csv_reader_init(&r, in);
	int rc = csv_read(&r);
	if (rc <= 0) {
		if (rc == 0) {
			report(&p, 1,
			       "empty file: a job log starts with a header naming start, end "
			       "and status");
		} else {
			buf_printf(errors, "%s:%s\n", name, r.error + strlen("line "));
		}
		csv_reader_finish(&r);
		return -EINVAL;
	}
	if (!parse_header(&p, &r)) {
		csv_reader_finish(&r);
		parser_finish(&p);
		return -EINVAL;
	}
	size_t cap = 0;
	while ((rc = csv_read(&r)) > 0) {
		struct jobcsv_row row = {0};
		if (!parse_row(&p, &r, default_label, &row)) {
			out->n_bad++;
			continue;
		}
		out->rows = xgrow(out->rows, &cap, out->n + 1, sizeof(*out->rows));
		out->rows[out->n++] = row;
	}
	parser_finish(&p);
	if (rc < 0) {
		buf_printf(errors, "%s:%s\n", name, r.error + strlen("line "));
		csv_reader_finish(&r);
		return -EINVAL;
	}
	csv_reader_finish(&r);
	if (p.n_errors > JOBCSV_ERRORS_MAX) {
		buf_printf(errors, "%s: %zu more bad rows not listed\n", name,
			   p.n_errors - JOBCSV_ERRORS_MAX);
	}
	return out->n_bad ? -EBADMSG : 0;
}

void jobcsv_finish(struct jobcsv *log) {
	if (!log) {
		return;
	}
	for (size_t i = 0; i < log->n; i++) {
		jobcsv_row_finish(&log->rows[i]);
	}
	free(log->rows);
	*log = (struct jobcsv){0};
}

void jobcsv_row_finish(struct jobcsv_row *row) {
	free(row->label);
	free(row->error);
	runmetric_set_finish(&row->metrics);
	runtag_list_finish(&row->tags);
	*row = (struct jobcsv_row){0};
}
