/* thermlog stats, peak and channels: window statistics from the database, as tables or JSON. */
#include "cli-options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "json.h"
#include "stats.h"
#include "table.h"
#include "timefmt.h"
#include "unit.h"
#include "xalloc.h"

/* Writes @b to stdout (a failed write fails the command: main.c checks the output). */
static int emit(const char *cmd, struct buf *b) {
	fwrite(b->data ? b->data : "", 1, b->len, stdout);
	return CLI_EXIT_OK;
}

enum query_kind { QUERY_STATS, QUERY_PEAK, QUERY_CHANNELS };

/* Options of peak alone. */
enum { PEAK_OPT_WITH = 512, PEAK_OPT_AROUND, PEAK_OPT_WIDE };

/* The --help text of each kind. */
static const char *const usage_texts[] = {
	[QUERY_STATS] =
		"usage: thermlog stats [--from T] [--to T] [--channel KEY|GLOB]... "
		"[--percentile P]...\n"
		"                      [--weight samples|time] [--include-unsynced] "
		"[--interval D] [--json]\n"
		"Count, coverage, mean, population stddev, min, median, p95 and max per "
		"channel.\n--weight samples (default): each sample counts once, percentiles "
		"interpolate\nlinearly between closest ranks (numpy's default; a cooling state's by the "
		"inverted\nCDF: a state that occurred). --weight time: "
		"each sample counts\nthe time it stands for (the spacing since the previous "
		"one, as lifetime weighs it),\npercentiles by the weighted inverted CDF.\n"
		"T: 2026-08-20T00:00:00Z, 2026-08-20, unix seconds, -24h, now "
		"(default: all history;\nwith --from alone the window ends now).\n"
		"Exact at each channel's resolution (values are stored as integer multiples "
		"of it):\nwhole hours are read from exact hourly histograms, the rest from "
		"raw samples, with\nthe same results. Cycles with an unsynced clock are "
		"left out and counted unless\n--include-unsynced. Coverage is observed time "
		"over the window: a spacing over 1.5\ntimes the sample's own (or --interval "
		"D) is a gap beyond it.\n",
	[QUERY_PEAK] =
		"usage: thermlog peak --channel KEY|LABEL [--samples N | --around DUR]\n"
		"                    [--with KEY|GLOB|LABEL]... [--wide] [--from T] [--to T]\n"
		"                    [--include-unsynced] [--json]\n"
		"The N cycles (default 30) centred on the channel's maximum, or those within\n"
		"DUR (e.g. 15m) of it, with the companion channels --with names (default: every\n"
		"channel). The table fits 100 columns, showing as many companions as fit;\n"
		"--wide shows them all with their full keys.\n",
	[QUERY_CHANNELS] = "usage: thermlog channels [--channel KEY|GLOB]... [--json]\n"
			   "Every known channel with first/last seen and present/absent.\n",
};

/* ---- the text forms: tables of the computed answers ---- */

/* A summary line ("7002 samples over 6 days ...") and one row per channel; MHz for hertz. */
static void stats_text(const struct query_stats *s, struct buf *out) {
	char span[32], gap[32], from[TIMEFMT_ISO_LEN], to[TIMEFMT_ISO_LEN];
	unit_duration(span, sizeof(span), (double)(s->to - s->from));
	unit_duration(gap, sizeof(gap), (double)s->longest_gap_s);
	timefmt_iso(s->from, from);
	timefmt_iso(s->to, to);
	buf_printf(out, "%lld samples over %s (%s .. %s), coverage %.1f %%, ", (long long)s->cycles,
		   span, from, to, 100.0 * s->coverage);
	if (s->longest_gap_s > 0) {
		buf_printf(out, "longest gap %s", gap);
	} else {
		buf_puts(out, "no gaps");
	}
	if (!s->include_unsynced && s->unsynced > 0) {
		buf_printf(out, ", %lld unsynced cycles excluded", (long long)s->unsynced);
	}
	buf_printf(out, "\nweighted by %s\n",
		   s->weight == QUERY_WEIGHT_TIME
			   ? "time: each sample counts the time it stands for"
			   : "samples: each sample counts once (--weight time weighs by time)");
	if (s->mixed_intervals) {
		char lo[32], hi[32];
		unit_duration(lo, sizeof(lo), (double)s->min_interval_s);
		unit_duration(hi, sizeof(hi), (double)s->max_interval_s);
		buf_printf(out, "warning: the window mixes sampling intervals from %s to %s%s\n",
			   lo, hi,
			   s->weight == QUERY_WEIGHT_TIME
				   ? ""
				   : ": faster stretches weigh more by samples than by time");
	}
	if (s->weight == QUERY_WEIGHT_TIME && s->time_rollup_to != INT64_MIN) {
		char at[TIMEFMT_ISO_LEN];
		timefmt_iso(s->time_rollup_to, at);
		buf_printf(
			out,
			"note: raw samples before %s were pruned: their hours weigh each rolled-up "
			"value as one %lld s interval\n",
			at, (long long)s->interval_s);
	}
	buf_puts(out, "\n");
	size_t fixed = 10, cols = fixed + s->n_percentiles;
	struct table t;
	table_init(&t, cols);
	static const char *const head[] = {"channel", "unit", "count",  "mean",
					   "stddev",  "min",  "median", "p95"};
	table_head(&t, head, 8);
	for (size_t k = 0; k < s->n_percentiles; k++) {
		table_set(&t, 8 + k, "p%.10g", s->percentiles[k]);
	}
	table_set(&t, cols - 2, "max");
	table_set(&t, cols - 1, "max at");
	table_align_right(&t, 2, cols - 1);
	struct buf states;
	buf_init(&states);
	for (size_t k = 0; k < s->sel.n; k++) {
		const struct channel *ch = query_selection_channel(&s->sel, k);
		const struct stats_acc *acc = &s->acc[k];
		double factor;
		const char *unit = table_unit(ch->unit, &factor);
		int digits = table_digits(ch, factor);
		double res = ch->resolution;
		bool any = acc->count > 0;
		char v[64];
		table_row(&t);
		table_set(&t, 0, "%s", ch->key);
		table_set(&t, 1, "%s", unit);
		table_set(&t, 2, "%lld", (long long)acc->count);
		double vals[5 + QUERY_MAX_PERCENTILES] = {0};
		size_t nv = 0;
		vals[nv++] = query_stats_mean(s, k);
		vals[nv++] = query_stats_stddev(s, k);
		vals[nv++] = any ? stats_value(acc->min_q, res) : NAN;
		vals[nv++] = query_stats_percentile(s, k, 50);
		vals[nv++] = query_stats_percentile(s, k, 95);
		for (size_t e = 0; e < s->n_percentiles && e < QUERY_MAX_PERCENTILES; e++) {
			vals[nv++] = query_stats_percentile(s, k, s->percentiles[e]);
		}
		for (size_t i = 0; i < nv; i++) {
			// the mean and stddev get one more place than the sensor has
			table_number(v, sizeof(v), vals[i], factor, digits + (i < 2 && digits < 3));
			table_set(&t, 3 + i, "%s", v);
		}
		table_number(v, sizeof(v), any ? stats_value(acc->max_q, res) : NAN, factor,
			     digits);
		table_set(&t, cols - 2, "%s", v);
		if (any) {
			char at[TIMEFMT_ISO_LEN];
			timefmt_iso(acc->max_ts, at);
			table_set(&t, cols - 1, "%s", at);
		}
		const struct stats_acc *tis =
			s->weight == QUERY_WEIGHT_TIME ? &s->time_acc[k] : acc;
		size_t n_bins;
		const struct stats_bin *bins = stats_bins(tis, &n_bins);
		if (ch->kind == CHANNEL_KIND_FREQUENCY && tis->count > 0 && n_bins <= 16) {
			buf_printf(&states, "%s:", ch->key);
			for (size_t i = n_bins; i-- > 0;) {
				table_number(v, sizeof(v), stats_value(bins[i].q, res), factor,
					     digits);
				buf_printf(&states, " %s %s %.1f %%%s", v, unit,
					   100.0 * (double)bins[i].count / (double)tis->count,
					   i ? "," : "");
			}
			buf_putc(&states, '\n');
		}
	}
	table_print(&t, out);
	if (states.len) {
		buf_puts(out, "\ntime in state:\n");
		buf_puts(out, states.data);
	}
	buf_finish(&states);
}

/* The last part of a key ("soc-thermal"), or the whole key when another column shares it. */
static const char *short_name(const struct query_peak *pk, size_t c) {
	const char *key = pk->columns[c]->key;
	const char *last = strrchr(key, '/') ? strrchr(key, '/') + 1 : key;
	for (size_t o = 0; o < pk->n_columns; o++) {
		const char *other = pk->columns[o]->key;
		const char *olast = strrchr(other, '/') ? strrchr(other, '/') + 1 : other;
		if (o != c && strcmp(last, olast) == 0) {
			return key;
		}
	}
	return last;
}

/* Cell (@r, @c) of the peak as shown: "-" where the channel has no value. */
static void peak_cell(const struct query_peak *pk, size_t r, size_t c, char *v, size_t len) {
	const struct channel *ch = pk->columns[c];
	size_t cell = r * pk->n_columns + c;
	double factor;
	table_unit(ch->unit, &factor);
	table_number(v, len, pk->have[cell] ? stats_value(pk->cells[cell], ch->resolution) : NAN,
		     factor, table_digits(ch, factor));
}

#define PEAK_TEXT_COLUMNS 100 // a terminal's width, give or take

/*
 * The peak as a table: by default short names with the unit below them and only as many
 * companions as fit PEAK_TEXT_COLUMNS, the rest named in one line; @wide: every column with
 * its full key and unit, however wide.
 */
static void peak_text(const struct query_peak *pk, bool wide, struct buf *text) {
	const struct channel *pch = pk->channel;
	char at[TIMEFMT_ISO_LEN], v[64];
	double factor;
	const char *unit = table_unit(pch->unit, &factor);
	timefmt_iso(pk->max_ts, at);
	table_number(v, sizeof(v), stats_value(pk->max_q, pch->resolution), factor,
		     table_digits(pch, factor));
	buf_printf(text, "maximum of %s: %s %s at %s; %zu cycles around it\n\n", pch->key, v, unit,
		   at, pk->n_rows);
	// One day: times without the date (given above); else "MM-DD HH:MM:SS".
	int64_t d0 = pk->row_ts[0], d1 = pk->row_ts[pk->n_rows - 1];
	bool one_day = d0 - (d0 % 86400 + 86400) % 86400 == d1 - (d1 % 86400 + 86400) % 86400;
	size_t time_from = one_day ? 11 : 5, time_len = one_day ? 8 : 14;
	size_t n_cols = pk->n_columns, shown = n_cols, used = time_len + 2;
	if (!wide) {
		// Columns in order while they fit: the widest of the name, the unit and the values.
		for (shown = 0; shown < n_cols; shown++) {
			size_t w = table_text_width(short_name(pk, shown));
			size_t uw = table_text_width(table_unit(pk->columns[shown]->unit, &factor));
			w = uw > w ? uw : w;
			for (size_t r = 0; r < pk->n_rows; r++) {
				peak_cell(pk, r, shown, v, sizeof(v));
				w = strlen(v) > w ? strlen(v) : w;
			}
			if (shown > 0 && used + 2 + w > PEAK_TEXT_COLUMNS) {
				break;
			}
			used += 2 + w;
		}
	}
	struct table t;
	table_init(&t, shown + 1);
	table_row(&t);
	table_set(&t, 0, "time");
	for (size_t c = 0; c < shown; c++) {
		const struct channel *ch = pk->columns[c];
		if (wide) {
			table_set(&t, c + 1, "%s (%s)", ch->key, table_unit(ch->unit, &factor));
		} else {
			table_set(&t, c + 1, "%s", short_name(pk, c));
		}
		t.right[c + 1] = true;
	}
	if (!wide) {
		table_row(&t);
		table_set(&t, 0, "(UTC)");
		for (size_t c = 0; c < shown; c++) {
			table_set(&t, c + 1, "%s", table_unit(pk->columns[c]->unit, &factor));
		}
	}
	for (size_t r = 0; r < pk->n_rows; r++) {
		table_row(&t);
		timefmt_iso(pk->row_ts[r], at);
		const char *mark = pk->row_ts[r] == pk->max_ts ? " *" : "";
		if (wide) {
			table_set(&t, 0, "%s%s", at, mark);
		} else {
			table_set(&t, 0, "%.*s%s", (int)time_len, at + time_from, mark);
		}
		for (size_t c = 0; c < shown; c++) {
			peak_cell(pk, r, c, v, sizeof(v));
			table_set(&t, c + 1, "%s", v);
		}
	}
	table_print(&t, text);
	if (shown < n_cols) {
		buf_printf(
			text,
			"\n%zu more channels not shown: choose companions with --with KEY|GLOB|LABEL, "
			"or --wide for all\n",
			n_cols - shown);
	}
}

/* The channels @sel selects, one row each with when they were first and last seen. */
static void channels_text(const struct query_selection *sel, struct buf *out) {
	struct table t;
	table_init(&t, 7);
	static const char *const head[] = {"channel",    "label",     "kind", "unit",
					   "first seen", "last seen", "state"};
	table_head(&t, head, 7);
	for (size_t k = 0; k < sel->n; k++) {
		const struct store_channel *sc = &sel->all[sel->pick[k]];
		char first[TIMEFMT_ISO_LEN], last[TIMEFMT_ISO_LEN];
		double factor;
		timefmt_iso(sc->first_seen, first);
		timefmt_iso(sc->last_seen, last);
		table_row(&t);
		table_set(&t, 0, "%s", sc->ch.key);
		table_set(&t, 1, "%s", sc->ch.label ? sc->ch.label : "");
		table_set(&t, 2, "%s", channel_kind_name(sc->ch.kind));
		table_set(&t, 3, "%s", table_unit(sc->ch.unit, &factor));
		table_set(&t, 4, "%s", first);
		table_set(&t, 5, "%s", last);
		table_set(&t, 6, "%s", sc->present ? "present" : "absent");
	}
	table_print(&t, out);
}

/* Under a window without samples, where the stored history lies. */
static void history_hint(struct store *store, const struct query_stats *s, struct buf *out) {
	struct query_params all = {0};
	int64_t first, end;
	if (s->cycles > 0 || query_window(store, &all, &first, &end, NULL) < 0) {
		return;
	}
	char a[TIMEFMT_ISO_LEN], b[TIMEFMT_ISO_LEN];
	timefmt_iso(first, a);
	timefmt_iso(end - 1, b);
	buf_printf(out,
		   "\nno samples in this window: the stored history runs from %s to %s; use "
		   "--from and --to inside it\n",
		   a, b);
}

/* Computes the answer of @kind and appends it to @b as a table, or as JSON when @json. */
static int answer(struct store *store, const struct query_params *p, enum query_kind kind,
		  bool json, struct buf *b, char **err) {
	struct json j;
	json_init(&j, b, false);
	int rc;
	if (kind == QUERY_STATS) {
		struct query_stats s;
		if ((rc = query_stats_compute(store, p, &s, err)) == 0) {
			if (json) {
				query_stats_write_json(&s, &j);
			} else {
				stats_text(&s, b);
				history_hint(store, &s, b);
			}
			query_stats_finish(&s);
		}
	} else if (kind == QUERY_PEAK) {
		struct query_peak pk;
		if ((rc = query_peak_compute(store, p, &pk, err)) == 0) {
			if (json) {
				query_peak_write_json(&pk, &j);
			} else {
				peak_text(&pk, p->wide, b);
			}
			query_peak_finish(&pk);
		}
	} else if (json) {
		rc = query_channels_json(store, p, &j, err);
	} else {
		struct query_selection sel;
		if ((rc = query_select(store, p->channels, p->n_channels, &sel, err)) == 0) {
			channels_text(&sel, b);
			query_selection_finish(&sel);
		}
	}
	if (rc == 0 && json) {
		buf_putc(b, '\n');
	}
	return rc;
}

static int run_query(struct cli_context *ctx, int argc, char **argv, enum query_kind kind) {
	static const struct option options[] = {
		CLI_OPTIONS_FROM_TO,
		CLI_OPTION_CHANNEL,
		CLI_OPTION_PERCENTILE,
		CLI_OPTION_UNSYNCED,
		CLI_OPTION_INTERVAL,
		CLI_OPTION_SAMPLES,
		{"with", required_argument, NULL, PEAK_OPT_WITH},
		{"around", required_argument, NULL, PEAK_OPT_AROUND},
		{"wide", no_argument, NULL, PEAK_OPT_WIDE},
		CLI_OPTION_WEIGHT,
		CLI_OPTION_JSON,
		CLI_OPTION_HELP,
		{0},
	};
	const char *cmd = argv[0];
	struct cli_window w;
	cli_window_init(&w);
	bool json = false;
	const char **with = NULL;
	size_t cap_with = 0;
	int64_t now = (int64_t)time(NULL);
	int opt, rc = CLI_EXIT_USAGE;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		bool peak_only = opt == CLI_OPT_SAMPLES || opt == PEAK_OPT_WITH ||
				 opt == PEAK_OPT_AROUND || opt == PEAK_OPT_WIDE;
		bool allowed = kind == QUERY_STATS ? !peak_only
			       : kind == QUERY_PEAK
				       ? opt != CLI_OPT_PERCENTILE && opt != CLI_OPT_WEIGHT
				       : opt == CLI_OPT_CHANNEL || opt == CLI_OPT_JSON;
		if (opt == 'h' || opt == '?') {
			rc = cli_usage(opt, usage_texts[kind]);
			goto out;
		}
		if (!allowed) {
			fprintf(stderr, "thermlog %s: option %s does not apply\n%s", cmd,
				argv[optind - 1], usage_texts[kind]);
			goto out;
		}
		if (opt == CLI_OPT_JSON) {
			json = true;
			continue;
		}
		if (opt == CLI_OPT_SAMPLES) {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (end == optarg || *end || n < 1 || n > 10000) {
				fprintf(stderr, "thermlog %s: bad --samples '%s' (1..10000)\n", cmd,
					optarg);
				goto out;
			}
			w.p.samples = (unsigned)n;
			continue;
		}
		if (opt == PEAK_OPT_WITH) {
			with = xgrow(with, &cap_with, w.p.n_with + 1, sizeof(*with));
			with[w.p.n_with++] = optarg;
			w.p.with = with;
			continue;
		}
		if (opt == PEAK_OPT_AROUND) {
			int64_t ms;
			if (!timefmt_parse_duration_ms(optarg, &ms) || ms < 1000) {
				fprintf(stderr,
					"thermlog %s: bad --around '%s' (a duration of at least 1s, "
					"e.g. 15m)\n",
					cmd, optarg);
				goto out;
			}
			w.p.around_s = ms / 1000;
			continue;
		}
		if (opt == PEAK_OPT_WIDE) {
			w.p.wide = true;
			continue;
		}
		if (opt == CLI_OPT_WEIGHT) {
			if (!cli_weight_option(cmd, optarg, &w.p.weight)) {
				goto out;
			}
			continue;
		}
		if (cli_window_option(&w, cmd, opt, optarg, now) < 0) {
			goto out;
		}
	}
	if (!cli_no_operand(cmd, usage_texts[kind], argc, argv)) {
		goto out;
	}
	if (kind == QUERY_PEAK && w.p.n_channels != 1) {
		fprintf(stderr, "thermlog peak: name one --channel\n");
		goto out;
	}
	if (w.p.samples && w.p.around_s) {
		fprintf(stderr, "thermlog peak: give --samples N or --around DUR, not both\n");
		goto out;
	}
	if (!cli_window_check(ctx, &w, cmd, now)) {
		goto out;
	}
	if (w.p.has_from && !w.p.has_to) { // as in the API: the window ends now
		w.p.to = now;
		w.p.has_to = true;
	}
	if ((rc = cli_setup(ctx)) != CLI_EXIT_OK) {
		goto out;
	}
	struct buf b;
	buf_init(&b);
	char *err = NULL;
	int qrc = answer(ctx->store, &w.p, kind, json, &b, &err);
	rc = qrc < 0 ? cli_query_failed(cmd, qrc, err) : emit(cmd, &b);
	buf_finish(&b);
out:
	free(with);
	cli_window_finish(&w);
	return rc;
}

int cli_stats(struct cli_context *ctx, int argc, char **argv) {
	return run_query(ctx, argc, argv, QUERY_STATS);
}

int cli_peak(struct cli_context *ctx, int argc, char **argv) {
	return run_query(ctx, argc, argv, QUERY_PEAK);
}

int cli_channels(struct cli_context *ctx, int argc, char **argv) {
	return run_query(ctx, argc, argv, QUERY_CHANNELS);
}
