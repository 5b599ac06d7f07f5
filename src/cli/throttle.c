/* thermlog throttle: the throttle episodes of a window and each domain's totals. */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli-options.h"
#include "csv.h"
#include "table.h"
#include "throttle-report.h"
#include "timefmt.h"
#include "unit.h"

enum { THROTTLE_OPT_DOMAIN = 512, THROTTLE_OPT_CSV };

static const char usage_text[] =
	"usage: thermlog throttle [--from T] [--to T] [--domain GLOB] [--json | --csv]\n"
	"The throttle episodes of the window, newest last, then each frequency domain's\n"
	"episodes, throttled time, share of the window and deepest cap (default window:\n"
	"the whole history; --from alone ends it now). A domain (cpufreq/policyN,\n"
	"devfreq/NAME) is throttled while its effective maximum is below its hardware\n"
	"maximum; cause thermal when a passive trip was crossed or a capping cooling\n"
	"device was active, else cap. --domain keeps the domains matching GLOB\n"
	"(cpufreq/*). --json prints what GET /api/v1/throttle answers; --csv the episodes, a row\n"
	"each.\n";

static void time_cell(struct table *t, size_t col, int64_t ts) {
	char iso[TIMEFMT_ISO_LEN];
	if (ts) {
		timefmt_iso(ts, iso);
		table_set(t, col, "%s", iso);
	} else {
		table_set(t, col, "open");
	}
}

static void episodes_table(const struct throttle_report *r, struct buf *out) {
	struct table t;
	table_init(&t, 9);
	static const char *const head[] = {"start", "end",  "duration", "domain", "cap",
					   "cause", "zone", "cooling",  "notes"};
	table_head(&t, head, 9);
	for (size_t i = 0; i < r->n; i++) {
		const struct throttle_episode *ep = &r->episodes[i];
		char cap[96], dur[32];
		table_row(&t);
		time_cell(&t, 0, ep->start);
		time_cell(&t, 1, ep->end);
		unit_duration(dur, sizeof(dur), (double)ep->duration_ms / 1000);
		table_set(&t, 2, "%s", dur);
		table_set(&t, 3, "%s", ep->domain);
		throttle_report_cap(cap, sizeof(cap), ep->min_hz, ep->max_hz);
		table_set(&t, 4, "%s", cap);
		table_set(&t, 5, "%s", throttle_cause_name(ep->cause));
		if (ep->zone[0] && ep->have_temp) {
			table_set(&t, 6, "%s %.1f-%.1f °C", ep->zone,
				  (double)ep->temp_start_mc / 1000,
				  (double)ep->temp_peak_mc / 1000);
		} else {
			table_set(&t, 6, "%s", ep->zone[0] ? ep->zone : "-");
		}
		struct buf cool;
		buf_init(&cool);
		for (size_t c = 0; c < ep->n_cooling; c++) {
			buf_printf(&cool, "%s%s@%" PRId64, c ? " " : "", ep->cooling[c].type,
				   ep->cooling[c].state);
		}
		table_set(&t, 7, "%s", cool.len ? cool.data : "-");
		buf_finish(&cool);
		table_set(&t, 8, "%s%s%s", ep->method == THROTTLE_METHOD_COUNTERS ? "counters" : "",
			  ep->method == THROTTLE_METHOD_COUNTERS && ep->stuck ? ", " : "",
			  ep->stuck ? "stuck" : "");
	}
	table_print(&t, out);
}

static void domains_table(const struct throttle_report *r, struct buf *out) {
	struct table t;
	table_init(&t, 5);
	static const char *const head[] = {"domain", "episodes", "throttled", "share",
					   "deepest cap"};
	table_head(&t, head, 5);
	for (size_t i = 0; i < r->n_domains; i++) {
		const struct throttle_report_domain *d = &r->domains[i];
		char span[32], cap[96];
		table_row(&t);
		table_set(&t, 0, "%s", d->name);
		table_set(&t, 1, "%" PRId64, d->episodes);
		unit_duration(span, sizeof(span), (double)d->throttled_ms / 1000);
		table_set(&t, 2, "%s", span);
		table_set(&t, 3, "%.2f %%", 100 * d->share);
		throttle_report_cap(cap, sizeof(cap), d->min_hz, d->max_hz);
		table_set(&t, 4, "%s", cap);
	}
	table_print(&t, out);
}

static void report_text(const struct throttle_report *r, struct buf *out) {
	char from[TIMEFMT_ISO_LEN], to[TIMEFMT_ISO_LEN];
	timefmt_iso(r->from, from);
	timefmt_iso(r->to, to);
	buf_printf(out, "throttle episodes from %s to %s: %zu\n", from, to, r->n);
	if (r->n == 0) {
		return;
	}
	buf_putc(out, '\n');
	episodes_table(r, out);
	buf_putc(out, '\n');
	domains_table(r, out);
}

/* A field of @fmt's text (numbers, names): csv.c quotes what needs it. */
static void __attribute__((format(printf, 3, 4)))
field(struct buf *b, bool first, const char *fmt, ...) {
	char text[96];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	csv_field(b, text, strlen(text), first);
}

/* The episodes as CSV (RFC 4180, the CSV writer of export): one row each, unknowns empty. */
static void report_csv(const struct throttle_report *r, struct buf *b) {
	static const char *const head[] = {"domain", "start",       "end",         "duration_s",
					   "min_hz", "max_hz",      "cause",       "method",
					   "zone",   "trip_temp_c", "temp_peak_c", "stuck"};
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++) {
		csv_field(b, head[i], strlen(head[i]), i == 0);
	}
	csv_end_record(b);
	for (size_t i = 0; i < r->n; i++) {
		const struct throttle_episode *e = &r->episodes[i];
		char start[TIMEFMT_ISO_LEN], end[TIMEFMT_ISO_LEN] = "";
		timefmt_iso(e->start, start);
		if (e->end) {
			timefmt_iso(e->end, end);
		}
		csv_field(b, e->domain, strlen(e->domain), true);
		field(b, false, "%s", start);
		field(b, false, "%s", end);
		field(b, false, "%.3f", (double)e->duration_ms / 1000.0);
		field(b, false, e->min_hz ? "%" PRId64 : "", e->min_hz);
		field(b, false, "%" PRId64, e->max_hz);
		field(b, false, "%s", throttle_cause_name(e->cause));
		field(b, false, "%s", throttle_method_name(e->method));
		csv_field(b, e->zone, strlen(e->zone), false);
		field(b, false, e->trip >= 0 ? "%.3f" : "", (double)e->trip_temp_mc / 1000.0);
		field(b, false, e->have_temp ? "%.3f" : "", (double)e->temp_peak_mc / 1000.0);
		field(b, false, "%d", e->stuck ? 1 : 0);
		csv_end_record(b);
	}
}

/* The window of throttle's --from and --to (no list to finish), times relative to @now. */
struct throttle_window {
	int64_t now;
	struct cli_window w;
};

static int throttle_option(void *state, int opt, char *arg) {
	struct throttle_window *tw = state;
	return cli_window_option(&tw->w, "throttle", opt, arg, tw->now);
}

int cli_throttle(struct cli_context *ctx, int argc, char **argv) {
	static const struct option options[] = {
		CLI_OPTIONS_FROM_TO, {"domain", required_argument, NULL, THROTTLE_OPT_DOMAIN},
		CLI_OPTION_JSON,     {"csv", no_argument, NULL, THROTTLE_OPT_CSV},
		CLI_OPTION_HELP,     {0},
	};
	struct throttle_window tw = {.now = (int64_t)time(NULL)};
	cli_window_init(&tw.w);
	const char *domain = NULL;
	bool json = false, csv = false;
	const struct plain_option plain[] = {
		{THROTTLE_OPT_DOMAIN, &domain, NULL},
		{CLI_OPT_JSON, NULL, &json},
		{THROTTLE_OPT_CSV, NULL, &csv},
		{0},
	};
	int rc;
	if (!cli_read_options("throttle", usage_text, "h", options, plain, throttle_option, &tw,
			      argc, argv, &rc)) {
		return rc;
	}
	struct cli_window *w = &tw.w;
	if (w->p.has_from && !w->p.has_to) { // as in the API: the window ends now
		w->p.to = tw.now;
		w->p.has_to = true;
	}
	rc = cli_setup(ctx);
	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	struct store *store = ctx->store;
	struct throttle_report r;
	char *err = NULL;
	int64_t from, to;
	// an end left out is the stored history's, as in thermlog stats
	int qrc = query_window(store, &w->p, &from, &to, &err);
	if (qrc == 0) {
		qrc = throttle_report_compute(store, from, to, domain, &r, &err);
	}
	if (qrc < 0) {
		return cli_query_failed("throttle", qrc, err);
	}
	struct buf b;
	buf_init(&b);
	if (json) {
		struct json j;
		json_init(&j, &b, false);
		throttle_report_write_json(&r, &j);
		buf_putc(&b, '\n');
	} else if (csv) {
		report_csv(&r, &b);
	} else {
		report_text(&r, &b);
	}
	throttle_report_finish(&r);
	rc = fwrite(b.data, 1, b.len, stdout) == b.len && fflush(stdout) == 0 ? CLI_EXIT_OK
									      : CLI_EXIT_FAILURE;
	if (rc != CLI_EXIT_OK) {
		fprintf(stderr, "thermlog throttle: could not write the output\n");
	}
	buf_finish(&b);
	return rc;
}
