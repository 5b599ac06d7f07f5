/* thermlog runs [show|stats|import|compare]: the runs stored, as tables or the API's JSON. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "cli-options.h"
#include "cli-output.h"
#include "csv.h"
#include "jsonread.h"
#include "runs.h"
#include "runtag.h"
#include "table.h"
#include "timefmt.h"
#include "unit.h"
#include "xalloc.h"

/* Options of the runs commands only (above the shared CLI_OPT_* values). */
enum {
	RUNS_OPT_DEFAULT_LABEL = 512,
	RUNS_OPT_LAST,
	RUNS_OPT_EXCLUDE_THROTTLED,
	RUNS_OPT_BY,
	RUNS_OPT_BOARD,
	RUNS_OPT_CSV,
};

#define RUNS_MAX_PERCENTILES 16
#define RUNS_MAX_TAGS        16                          // --tag options a command takes
#define RUNS_TAGS_JSON_MAX   (RUNS_MAX_TAGS * 1024 + 16) // their JSON object (each tag fits)

/* The options every runs command may take; each command refuses what it does not use. */
struct runs_args {
	const char *cmd; // "runs", "runs stats", ...
	struct store_run_filter filter;
	double over_s;
	double percentiles[RUNS_MAX_PERCENTILES];
	size_t n_percentiles;
	bool json, skip_bad, exclude_throttled;
	const char *default_label;
	int64_t unix_per_s;              // --time-unit: 1, 1000 or 1000000
	const char *tags[RUNS_MAX_TAGS]; // --tag KEY=VALUE: the runs must carry each
	size_t n_tags;
	char tags_json[RUNS_TAGS_JSON_MAX]; // ... as the filter's JSON object
	const char *by;                     // --by TAGKEY: a label's runs split by its value
	bool board;                         // --board: the per-test board figures too
	bool csv;                           // --csv: CSV (RFC 4180), the export's writer
};

/* The --tag options as the filter's JSON object in @a (each checked when given). */
static void tags_filter(struct runs_args *a) {
	struct runtag_list list = {0};
	for (size_t i = 0; i < a->n_tags; i++) {
		char *err = NULL;
		runtag_parse(a->tags[i], &list, &err);
		free(err);
	}
	struct buf json = {0};
	runtag_list_json(&list, &json);
	snprintf(a->tags_json, sizeof(a->tags_json), "%s", json.data);
	a->filter.tags = a->tags_json;
	buf_finish(&json);
	runtag_list_finish(&list);
}

static const struct option runs_options[] = {
	CLI_OPTION_LABEL,
	CLI_OPTIONS_FROM_TO,
	CLI_OPTION_OVER,
	CLI_OPTION_PERCENTILE,
	CLI_OPTION_JSON,
	CLI_OPTION_SKIP_BAD,
	{"default-label", required_argument, NULL, RUNS_OPT_DEFAULT_LABEL},
	{"last", required_argument, NULL, RUNS_OPT_LAST},
	CLI_OPTION_TIME_UNIT,
	{"exclude-throttled", no_argument, NULL, RUNS_OPT_EXCLUDE_THROTTLED},
	CLI_OPTION_TAG,
	{"by", required_argument, NULL, RUNS_OPT_BY},
	{"board", no_argument, NULL, RUNS_OPT_BOARD},
	{"csv", no_argument, NULL, RUNS_OPT_CSV},
	CLI_OPTION_HELP,
	{0},
};

#define RUNS_GO_ON         (-1)
#define RUNS_OPERANDS_FREE (-1) // the command checks its operands itself

/*
 * Parses the options, then checks that @n_operands operands follow (unless RUNS_OPERANDS_FREE);
 * @allowed lists the option values this command takes. Returns RUNS_GO_ON, or the exit code after
 * --help or a usage error.
 */
static int parse_args(struct runs_args *a, int argc, char **argv, const int *allowed,
		      const char *usage, int n_operands) {
	int64_t now = (int64_t)time(NULL);
	const struct plain_option plain[] = {
		{CLI_OPT_LABEL, &a->filter.label, NULL},
		{RUNS_OPT_DEFAULT_LABEL, &a->default_label, NULL},
		{CLI_OPT_JSON, NULL, &a->json},
		{CLI_OPT_SKIP_BAD, NULL, &a->skip_bad},
		{RUNS_OPT_EXCLUDE_THROTTLED, NULL, &a->exclude_throttled},
		{RUNS_OPT_BOARD, NULL, &a->board},
		{RUNS_OPT_CSV, NULL, &a->csv},
		{0},
	};
	int opt;
	while ((opt = getopt_long(argc, argv, "h", runs_options, NULL)) != -1) {
		bool ok = false;
		for (const int *p = allowed; *p; p++) {
			ok = ok || *p == opt;
		}
		if (opt == 'h' || !ok) { // --help, or an option this command does not take
			return cli_usage(opt, usage);
		}
		if (plain_option_keep(plain, opt, optarg)) {
			continue;
		}
		switch (opt) {
		case CLI_OPT_FROM:
		case CLI_OPT_TO: {
			int64_t ts;
			if (!cli_time_option(a->cmd, opt == CLI_OPT_FROM ? "--from" : "--to",
					     optarg, now, &ts)) {
				return CLI_EXIT_USAGE;
			}
			if (opt == CLI_OPT_FROM) {
				a->filter.from_ms = ts * 1000;
				a->filter.has_from = true;
			} else {
				a->filter.to_ms = ts * 1000;
				a->filter.has_to = true;
			}
			break;
		}
		case RUNS_OPT_LAST: {
			char *end;
			errno = 0;
			long long n = strtoll(optarg, &end, 10);
			if (end == optarg || *end || errno || n < 1) {
				fprintf(stderr,
					"thermlog %s: bad count for --last: '%s' (a whole number from "
					"1)\n",
					a->cmd, optarg);
				return CLI_EXIT_USAGE;
			}
			a->filter.limit = n;
			break;
		}
		case CLI_OPT_OVER:
			if (!cli_over_option(a->cmd, optarg, &a->over_s)) {
				return CLI_EXIT_USAGE;
			}
			break;
		case CLI_OPT_PERCENTILE:
			if (!cli_percentile_option(a->cmd, optarg, a->percentiles,
						   &a->n_percentiles, RUNS_MAX_PERCENTILES)) {
				return CLI_EXIT_USAGE;
			}
			break;
		case CLI_OPT_TAG: {
			struct runtag_list check = {0};
			char *err = NULL;
			bool good = runtag_parse(optarg, &check, &err);
			runtag_list_finish(&check);
			if (!good || a->n_tags == RUNS_MAX_TAGS) {
				fprintf(stderr, "thermlog %s: --tag: %s\n", a->cmd,
					good ? "at most 16 tags" : err);
				free(err);
				return CLI_EXIT_USAGE;
			}
			a->tags[a->n_tags++] = optarg;
			break;
		}
		case RUNS_OPT_BY:
			if (!runtag_name_valid(optarg)) {
				fprintf(stderr,
					"thermlog %s: --by: a tag key: expected " RUNTAG_TEXT_RULE
					"\n",
					a->cmd);
				return CLI_EXIT_USAGE;
			}
			a->by = optarg;
			break;
		case CLI_OPT_TIME_UNIT:
			a->unix_per_s = strcmp(optarg, "s") == 0    ? 1
					: strcmp(optarg, "ms") == 0 ? 1000
					: strcmp(optarg, "us") == 0 ? 1000000
								    : 0;
			if (a->unix_per_s == 0) {
				fprintf(stderr, "thermlog %s: bad --time-unit '%s' (s, ms or us)\n",
					a->cmd, optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		}
	}
	if (a->filter.has_from && a->filter.has_to && a->filter.from_ms >= a->filter.to_ms) {
		fprintf(stderr, "thermlog %s: --from must be before --to\n", a->cmd);
		return CLI_EXIT_USAGE;
	}
	if (a->n_tags > 0) {
		tags_filter(a);
	}
	if (n_operands == 0 && !cli_no_operand(a->cmd, usage, argc, argv)) {
		return CLI_EXIT_USAGE;
	}
	if (n_operands > 0 && argc - optind != n_operands) {
		fputs(usage, stderr);
		return CLI_EXIT_USAGE;
	}
	return RUNS_GO_ON;
}

/*
 * parse_args() for a command that takes no operand, then its set-up (cli_setup(): the database,
 * read-only, into *@store): RUNS_GO_ON, or the exit code after --help, a usage error or a
 * failed open.
 */
static int parse_and_open(struct cli_context *ctx, struct runs_args *a, int argc, char **argv,
			  const int *allowed, const char *usage, struct store **store) {
	int rc = parse_args(a, argc, argv, allowed, usage, 0);
	if (rc != RUNS_GO_ON) {
		return rc;
	}
	rc = cli_setup(ctx);
	*store = ctx->store;
	return rc == CLI_EXIT_OK ? RUNS_GO_ON : rc;
}

/* A run as a row of the list's table (table.c escapes control characters in every cell). */
/* A run's tags as "KEY=VALUE KEY=VALUE" for the list ("-" for none). */
static void tags_text(const char *tags_json, struct buf *out) {
	struct jsonread_error err;
	size_t len = tags_json ? strlen(tags_json) : 0;
	struct jsonread_node *tree = len ? jsonread_parse(tags_json, len, len, &err) : NULL;
	for (size_t i = 0; tree && tree->kind == JSONREAD_OBJECT && i + 1 < tree->n; i += 2) {
		const char *v = jsonread_string(tree->items[i + 1]);
		buf_printf(out, "%s%s=%s", out->len ? " " : "", tree->items[i]->text, v ? v : "?");
	}
	jsonread_node_free(tree);
	if (out->len == 0) {
		buf_puts(out, "-");
	}
}

static int add_run_row(void *ctx, const struct store_run *run) {
	struct table *t = ctx;
	char start[TIMEFMT_ISO_LEN];
	timefmt_iso_ms(run->start_ms, start);
	char dur[24], exit_code[16], temp[16], energy[24];
	table_number(dur, sizeof(dur),
		     run->ended ? (double)(run->end_ms - run->start_ms) / 1000.0 : NAN, 1, 3);
	if (run->exit_code >= 0) {
		snprintf(exit_code, sizeof(exit_code), "%d", run->exit_code);
	} else if (run->signal > 0) {
		snprintf(exit_code, sizeof(exit_code), "sig%d", run->signal);
	} else {
		snprintf(exit_code, sizeof(exit_code), "-");
	}
	table_number(temp, sizeof(temp), run->temp_max_c, 1, 1);
	table_number(energy, sizeof(energy), run->energy_j, 1, 1);
	table_row(t);
	table_set(t, 0, "%lld", (long long)run->id);
	table_set(t, 1, "%s", run->label);
	table_set(t, 2, "%s", start);
	table_set(t, 3, "%s", dur);
	table_set(t, 4, "%s", run_status_name(run->status));
	table_set(t, 5, "%s", exit_code);
	table_set(t, 6, "%s", temp);
	// Partial coverage (a daemon restart mid-run): "~" as the stats' note explains.
	table_set(t, 7, "%s%s", isfinite(run->energy_j) && run->energy_coverage < 1 ? "~" : "",
		  energy);
	struct buf tags = {0};
	tags_text(run->tags, &tags);
	table_set(t, 8, "%s", tags.data);
	buf_finish(&tags);
	if (run->error) {
		table_set(t, 9, "%s", run->error); // why it failed: the last column
	}
	return 0;
}

/* The runs @filter selects as a table on stdout; 0 or a negative errno, *n their number. */
static int print_runs(struct store *store, const struct store_run_filter *filter, size_t *n) {
	static const char *const head[] = {"ID",   "LABEL",  "START",    "DURATION_S", "STATUS",
					   "EXIT", "TEMP_C", "ENERGY_J", "TAGS",       "ERROR"};
	struct table t;
	table_init(&t, 10);
	table_head(&t, head, 10);
	static const size_t numbers[] = {0, 3, 5, 6, 7};
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		t.right[numbers[i]] = true;
	}
	int err = store_runs_scan(store, filter, add_run_row, &t);
	*n = t.rows - 1;
	if (err == 0 && *n > 0) {
		table_print_stdout(&t, 0);
	}
	table_finish(&t);
	return err;
}

/* Nothing matched @filter: says why on stderr. 1 when no run has the label (an error: a typo,
 * with near labels suggested), 0 when the window or the database is just empty. */
static int no_runs_said(struct store *store, const char *cmd, const struct store_run_filter *f) {
	if (!f->label) {
		fprintf(stderr, "thermlog %s: no runs%s\n", cmd,
			f->has_from || f->has_to ? " start in that window" : " stored");
		return 0;
	}
	struct buf hint;
	buf_init(&hint);
	int known = runs_label_known(store, f->label, &hint);
	if (known == 0) {
		fprintf(stderr, "thermlog %s: no run has the label '%s'%s\n", cmd, f->label,
			hint.len ? hint.data : " (thermlog runs lists them)");
	} else if (known == 1) {
		fprintf(stderr, "thermlog %s: no run labelled '%s' starts in that window\n", cmd,
			f->label);
	}
	buf_finish(&hint);
	return known < 0 ? known : known == 0;
}

static int runs_list(struct cli_context *ctx, int argc, char **argv) {
	static const int allowed[] = {CLI_OPT_LABEL, CLI_OPT_FROM, CLI_OPT_TO,   RUNS_OPT_LAST,
				      CLI_OPT_TAG,   CLI_OPT_JSON, RUNS_OPT_CSV, 0};
	const char *usage =
		"usage: thermlog runs [--label L] [--tag K=V]... [--from T] [--to T] "
		"[--last N] [--json]\n"
		"       thermlog runs show ID [--json]\n"
		"       thermlog runs stats [--label L] [--tag K=V]... [--by TAGKEY] "
		"[--from T] [--to T]\n"
		"                           [--over DUR] [--percentile P]... [--json]\n"
		"       thermlog runs import [--default-label L] [--skip-bad] FILE|-\n"
		"       thermlog runs compare --label L [--tag K=V]... [--exclude-throttled] "
		"OTHER.db [--json]\n"
		"       thermlog runs metric ID NAME=VALUE[UNIT]...\n"
		"Runs are listed by start time (--from/--to select by start; --last N keeps "
		"the newest N;\n--tag K=V only the runs carrying that tag).\n";
	struct runs_args a = {.cmd = "runs", .over_s = NAN};
	struct store *store;
	int rc = parse_and_open(ctx, &a, argc, argv, allowed, usage, &store);
	if (rc != RUNS_GO_ON) {
		return rc;
	}
	int err;
	if (a.csv) {
		struct buf out = {0};
		err = runs_list_csv(store, &a.filter, &out);
		if (err == 0) {
			fwrite(out.data, 1, out.len, stdout);
		}
		buf_finish(&out);
	} else if (a.json) {
		struct buf out;
		buf_init(&out);
		err = runs_list_json(store, &a.filter, true, &out);
		if (err == 0) {
			printf("%s\n", out.data);
		}
		buf_finish(&out);
	} else {
		size_t printed = 0;
		err = print_runs(store, &a.filter, &printed);
		if (err == 0 && printed == 0) {
			err = no_runs_said(store, "runs", &a.filter);
		}
	}
	if (err < 0) {
		fprintf(stderr, "thermlog runs: could not read the runs: %s\n", strerror(-err));
		return CLI_EXIT_FAILURE;
	}
	return err == 1 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

static int runs_show(struct cli_context *ctx, int argc, char **argv) {
	static const int allowed[] = {CLI_OPT_JSON, 0};
	const char *usage = "usage: thermlog runs show ID [--json]\n"
			    "One run with its figures and the fast samples around its peak "
			    "temperature.\n";
	struct runs_args a = {.cmd = "runs show", .over_s = NAN};
	int rc = parse_args(&a, argc, argv, allowed, usage, RUNS_OPERANDS_FREE);
	if (rc != RUNS_GO_ON) {
		return rc;
	}
	char *end;
	long long id = optind + 1 == argc ? strtoll(argv[optind], &end, 10) : 0;
	if (optind + 1 != argc || *end || id <= 0) {
		fprintf(stderr, "thermlog runs show: give one run id (see thermlog runs)\n");
		return CLI_EXIT_USAGE;
	}
	if ((rc = cli_setup(ctx)) != CLI_EXIT_OK) {
		return rc;
	}
	struct buf out;
	buf_init(&out);
	// The text form is the same document, indented: every figure keeps its method beside it.
	int err = runs_show_json(ctx->store, &ctx->cfg, id, true, &out);
	if (err == -ENOENT) {
		fprintf(stderr, "thermlog runs show: no run %lld\n", id);
		rc = CLI_EXIT_FAILURE;
	} else if (err < 0) {
		fprintf(stderr, "thermlog runs show: could not read run %lld: %s\n", id,
			strerror(-err));
		rc = CLI_EXIT_FAILURE;
	} else {
		printf("%s\n", out.data);
	}
	buf_finish(&out);
	return rc;
}

/* Columns of 12: the header and five figures fit 100 columns with two extra percentiles. */
/* Peak RSS reads as a memory channel does (the unit registry: MiB to 0.1). */
static const char *rss_unit(double *factor, int *digits) {
	*digits = unit_places("bytes", true);
	return unit_symbol("bytes", factor);
}

/* One figure's row: its values times @factor with @digits places ("-" without an ok run). */
static void add_summary_row(struct table *t, const char *name, const struct runstats_summary *s,
			    double factor, int digits, const struct runs_args *a) {
	const double v[4] = {s->p50, s->p95, s->max, s->mean};
	table_row(t);
	table_set(t, 0, "%s", name);
	table_set(t, 1, "%zu", s->n);
	for (size_t k = 0; k < 4 + a->n_percentiles; k++) {
		char cell[32];
		table_number(cell, sizeof(cell),
			     s->n == 0 ? NAN
			     : k < 4   ? v[k]
				       : s->percentiles[k - 4],
			     factor, digits);
		table_set(t, 2 + k, "%s", cell);
	}
}

/*
 * A table of @n named columns, then one "pP" column per --percentile, the columns from @right
 * on right-aligned.
 */
static void percentile_table(struct table *t, const char *const *head, size_t n, size_t right,
			     const struct runs_args *a) {
	size_t cols = n + a->n_percentiles;
	table_init(t, cols);
	table_head(t, head, n);
	for (size_t c = n; c < cols; c++) {
		table_set(t, c, "p%g", a->percentiles[c - n]);
	}
	table_align_right(t, right, cols);
}

/* The figures of @l's ok runs as an indented table: n, p50, p95, max, mean, the --percentile. */
static void print_summary_table(const struct runstats_label *l, const struct runs_args *a) {
	static const char *const head[] = {"ok runs", "n", "p50", "p95", "max", "mean"};
	struct table t;
	percentile_table(&t, head, 6, 1, a);
	double rss_factor;
	int rss_digits;
	rss_unit(&rss_factor, &rss_digits);
	add_summary_row(&t, "duration_s", &l->duration_s, 1, 3, a);
	add_summary_row(&t, "energy_j", &l->energy_j, 1, 3, a);
	add_summary_row(&t, "temp_max_c", &l->temp_max_c, 1, 3, a);
	add_summary_row(&t, "rss_max_mib", &l->rss_max_bytes, rss_factor, rss_digits, a);
	if (l->throttle_known > 0) {
		// the throttled ok runs only: how much of each run its most throttled domain lost
		add_summary_row(&t, "throttled_pct", &l->throttled_share, 100, 2, a);
	}
	table_print_stdout(&t, 2);
}

/* A metric's value as the tables show it: six significant digits ("-" without one). */
static void metric_number(char *out, size_t len, double v) {
	if (isfinite(v)) {
		snprintf(out, len, "%.6g", v);
	} else {
		snprintf(out, len, "-");
	}
}

/* The metrics of @l's ok runs: n, mean, p50, p95, min, max and the --percentile ones. */
static void print_metrics_table(const struct runstats_label *l, const struct runs_args *a) {
	if (l->n_metrics == 0) {
		return;
	}
	static const char *const head[] = {"metric", "unit", "n",   "mean",
					   "p50",    "p95",  "min", "max"};
	struct table t;
	percentile_table(&t, head, 8, 2, a);
	for (size_t i = 0; i < l->n_metrics; i++) {
		const struct runstats_metric *m = &l->metrics[i];
		const double v[5] = {m->mean, m->p50, m->p95, m->min, m->max};
		table_row(&t);
		table_set(&t, 0, "%s", m->name);
		table_set(&t, 1, "%s", *m->unit ? m->unit : "-");
		table_set(&t, 2, "%zu", m->n);
		for (size_t k = 0; k < 5 + a->n_percentiles; k++) {
			char cell[32];
			metric_number(cell, sizeof(cell), k < 5 ? v[k] : m->percentiles[k - 5]);
			table_set(&t, 3 + k, "%s", cell);
		}
	}
	table_print_stdout(&t, 2);
}

/* One figure's row of the board table: mean, p95 and max in the unit registry's reading. */
static void add_board_row(struct table *t, const struct testfig_figure *f, const char *unit,
			  int digits, const char *note) {
	double factor;
	const char *symbol = table_unit(unit, &factor);
	char v[3][32];
	const double x[3] = {f->mean, f->p95, f->max};
	for (int k = 0; k < 3; k++) {
		table_number(v[k], sizeof(v[k]), x[k], factor, digits);
	}
	table_row(t);
	table_set(t, 0, "%s", f->key);
	table_set(t, 1, "%s", symbol);
	table_set(t, 2, "%s", v[0]);
	table_set(t, 3, "%s", v[1]);
	table_set(t, 4, "%s", v[2]);
	table_set(t, 5, "%s", note ? note : "");
}

/* The board during the label's runs (runs stats --board): zones, clocks, loads, power. */
static void print_board_table(const struct testfig_label *l) {
	if (!l) {
		return;
	}
	printf("  the board during the %zu ok runs (%zu with minute samples, %.0f s under way; "
	       "time-weighted):\n",
	       l->runs, l->runs_with_samples, l->window_s);
	static const char *const head[] = {"board", "unit", "mean", "p95", "max", ""};
	struct table t;
	table_init(&t, 6);
	table_head(&t, head, 6);
	table_align_right(&t, 2, 5);
	for (size_t i = 0; i < l->n_zones; i++) {
		add_board_row(&t, &l->zones[i], "celsius", 2, NULL);
	}
	for (size_t i = 0; i < l->n_clocks; i++) {
		const struct testfig_clock *c = &l->clocks[i];
		struct buf res = {0};
		double factor;
		table_unit("hertz", &factor);
		for (size_t k = 0; k < c->n_states && k < 3; k++) {
			buf_printf(&res, k ? ", %.0f %.1f %%" : "held %.0f MHz %.1f %%",
				   c->states[k].hz * factor, 100 * c->states[k].share);
		}
		add_board_row(&t, &c->f, "hertz", 0, res.data);
		buf_finish(&res);
	}
	for (size_t i = 0; i < l->n_loads; i++) {
		add_board_row(&t, &l->loads[i], "percent", 1, l->loads[i].label);
	}
	for (size_t i = 0; i < l->n_power; i++) {
		add_board_row(&t, &l->power[i], "watts", 2, NULL);
	}
	table_print_stdout(&t, 2);
	if (l->throttle_runs > 0) {
		struct buf d = {0};
		for (size_t i = 0; i < l->n_loaded_domains; i++) {
			buf_printf(&d, "%s%s", i ? ", " : "", l->loaded_domains[i]);
		}
		printf("  throttled %.2f %% of the runs' time (the board: any domain), %.2f %% in the "
		       "domains they loaded (%s)\n",
		       100 * l->board_share, 100 * l->loaded_share, d.len ? d.data : "none known");
		buf_finish(&d);
	}
}

/* One row of runs stats --csv: label, group, figure, unit, n, mean, p50, p95, max. */
static void csv_row(struct buf *b, const struct runstats_label *l, const char *figure,
		    const char *unit, size_t n, const double v[4]) {
	csv_field(b, l->label, strlen(l->label), true);
	csv_field(b, l->group ? l->group : "", l->group ? strlen(l->group) : 0, false);
	csv_field(b, figure, strlen(figure), false);
	csv_field(b, unit, strlen(unit), false);
	char text[32];
	snprintf(text, sizeof(text), "%zu", n);
	csv_field(b, text, strlen(text), false);
	for (int k = 0; k < 4; k++) {
		text[0] = '\0';
		if (isfinite(v[k])) {
			json_format_double(text, v[k]);
		}
		csv_field(b, text, strlen(text), false);
	}
	csv_end_record(b);
}

static void csv_summary(struct buf *b, const struct runstats_label *l, const char *figure,
			const char *unit, const struct runstats_summary *s) {
	const double v[4] = {s->mean, s->p50, s->p95, s->max};
	csv_row(b, l, figure, unit, s->n, v);
}

static void csv_figures(struct buf *b, const struct runstats_label *l, const char *unit,
			const struct testfig_figure *f, size_t n) {
	for (size_t i = 0; i < n; i++) {
		const double v[4] = {f[i].mean, NAN, f[i].p95, f[i].max};
		char *name = xasprintf("board:%s", f[i].key);
		csv_row(b, l, name, unit, f[i].samples, v);
		free(name);
	}
}

/*
 * runs stats --csv: a row per label (group) and figure: the ok runs' duration, energy, peak
 * temperature, peak RSS, each metric (metric:NAME) and the per-test board figures (board:KEY,
 * n its samples, no p50: the p95 is time-weighted).
 */
static void print_stats_csv(const struct runstats_result *r, const struct testfig_result *board) {
	struct buf b = {0};
	static const char *const head[] = {"label", "group", "figure", "unit", "n",
					   "mean",  "p50",   "p95",    "max"};
	for (size_t i = 0; i < 9; i++) {
		csv_field(&b, head[i], strlen(head[i]), i == 0);
	}
	csv_end_record(&b);
	for (size_t i = 0; i < r->n; i++) {
		const struct runstats_label *l = &r->labels[i];
		csv_summary(&b, l, "duration_s", "seconds", &l->duration_s);
		csv_summary(&b, l, "energy_j", "joules", &l->energy_j);
		csv_summary(&b, l, "temp_max_c", "celsius", &l->temp_max_c);
		csv_summary(&b, l, "rss_max_bytes", "bytes", &l->rss_max_bytes);
		for (size_t k = 0; k < l->n_metrics; k++) {
			const struct runstats_metric *m = &l->metrics[k];
			const double v[4] = {m->mean, m->p50, m->p95, m->max};
			char *name = xasprintf("metric:%s", m->name);
			csv_row(&b, l, name, m->unit, m->n, v);
			free(name);
		}
		const struct testfig_label *f = testfig_result_label(board, l->label, l->group);
		if (f) {
			csv_figures(&b, l, "celsius", f->zones, f->n_zones);
			for (size_t k = 0; k < f->n_clocks; k++) {
				csv_figures(&b, l, "hertz", &f->clocks[k].f, 1);
			}
			csv_figures(&b, l, "percent", f->loads, f->n_loads);
			csv_figures(&b, l, "watts", f->power, f->n_power);
		}
	}
	fwrite(b.data, 1, b.len, stdout);
	buf_finish(&b);
}

/* Which runs the energy row covers, when it is not every ok run in full. */
static void print_energy_cover(const struct runstats_label *l) {
	if (l->energy_partial > 0) {
		printf("  warning: energy of %zu of these %zu ok runs covers part of the run "
		       "(~ in thermlog runs:\n  a daemon restart mid-run)\n",
		       l->energy_partial, l->energy_j.n);
	}
	if (l->energy_missing > 0 || l->energy_not_ok > 0) {
		printf("  energy_j leaves out %zu ok runs without energy and %zu runs that are not "
		       "ok but have it\n",
		       l->energy_missing, l->energy_not_ok);
	}
}

/*
 * Prints @first then @text, broken after ", " or "; " where a line would pass 100 columns (a
 * piece too long for a line of its own at its last space that fits), the lines after the first
 * indented by two.
 */
static void print_wrapped(const char *first, const char *text) {
	size_t col = strlen(first), start = col;
	printf("%s", first);
	while (*text) {
		// The next piece: up to and including the next ',' or ';' followed by a space.
		size_t len = 0;
		while (text[len] &&
		       !((text[len] == ',' || text[len] == ';') && text[len + 1] == ' ')) {
			len++;
		}
		len += text[len] ? 1 : 0;
		if (col > start && col + 1 + len > 100) {
			printf("\n  ");
			col = start = 2;
		} else if (col > start) {
			printf(" ");
			col++;
		}
		if (col + len > 100) { // longer than a line: up to its last space that fits
			size_t cut = 100 - col;
			while (cut > 0 && text[cut] != ' ') {
				cut--;
			}
			len = cut > 0 ? cut : len;
		}
		printf("%.*s", (int)len, text);
		col += len;
		text += len;
		text += *text == ' ' ? 1 : 0;
	}
	printf("\n");
}
static int runs_stats_cmd(struct cli_context *ctx, int argc, char **argv) {
	static const int allowed[] = {CLI_OPT_LABEL,
				      CLI_OPT_FROM,
				      CLI_OPT_TO,
				      CLI_OPT_OVER,
				      CLI_OPT_PERCENTILE,
				      CLI_OPT_JSON,
				      CLI_OPT_TAG,
				      RUNS_OPT_BY,
				      RUNS_OPT_BOARD,
				      RUNS_OPT_CSV,
				      0};
	const char *usage =
		"usage: thermlog runs stats [--label L] [--tag K=V]... [--by TAGKEY] "
		"[--from T] [--to T]\n"
		"                           [--over DUR] [--percentile P]... [--board] "
		"[--json | --csv]\n"
		"Per label: counts by status; exact type-7 p50, p95, max and mean of "
		"the ok runs'\nduration, energy, peak temperature and peak RSS; "
		"--over counts ok runs longer than DUR;\nthe share of ok runs "
		"throttled at all and the throttled share of those (throttled_pct);\n"
		"each metric of the ok runs. --tag K=V keeps the runs carrying that tag; "
		"--by TAGKEY\nsplits each label's runs by that tag's value. --board adds what the "
		"board did during the\nruns: zones, clocks, loads, power and throttling (always "
		"in --json, as \"board\").\n";
	struct runs_args a = {.cmd = "runs stats", .over_s = NAN};
	struct store *store;
	int rc = parse_and_open(ctx, &a, argc, argv, allowed, usage, &store);
	if (rc != RUNS_GO_ON) {
		return rc;
	}
	struct runs_stats_options opt = {.filter = a.filter,
					 .over_s = a.over_s,
					 .percentiles = a.percentiles,
					 .n_percentiles = a.n_percentiles,
					 .by = a.by};
	char *why = NULL;
	if (runs_label_check(store, a.filter.label, &why) < 0) {
		fprintf(stderr, "thermlog runs stats: %s\n", why);
		free(why);
		return CLI_EXIT_FAILURE;
	}
	struct runstats_result r;
	struct testfig_result board = {0};
	int err = runs_stats(store, &opt, &r);
	if (err == 0 && (a.json || a.board || a.csv)) {
		err = runs_board(store, &opt, &board);
	}
	if (err < 0) {
		fprintf(stderr, "thermlog runs stats: could not compute: %s\n", strerror(-err));
		runstats_result_finish(&r);
		testfig_result_finish(&board);
		return CLI_EXIT_FAILURE;
	}
	struct buf out;
	buf_init(&out);
	if (a.csv) {
		print_stats_csv(&r, &board);
	} else if (a.json) {
		runs_stats_write_json(&r, &board, &opt, true, &out);
		printf("%s\n", out.data);
	} else if (r.n == 0) {
		printf("no runs\n");
	}
	for (size_t i = 0; !a.json && !a.csv && i < r.n; i++) {
		const struct runstats_label *l = &r.labels[i];
		buf_clear(&out);
		runs_stats_summary_line(l, a.over_s, &out);
		struct buf label;
		buf_init(&label);
		printf("%s%s", i ? "\n" : "", table_printable(&label, l->label));
		if (a.by) {
			printf(" [%s=", table_printable(&label, a.by));
			printf("%s]", l->group ? table_printable(&label, l->group) : "(none)");
		}
		printf("\n");
		buf_finish(&label);
		print_wrapped("  ", out.data ? out.data : "");
		print_summary_table(l, &a);
		print_energy_cover(l);
		print_metrics_table(l, &a);
		if (a.board) {
			print_board_table(testfig_result_label(&board, l->label, l->group));
		}
	}
	buf_finish(&out);
	runstats_result_finish(&r);
	testfig_result_finish(&board);
	return CLI_EXIT_OK;
}

static int runs_import_cmd(struct cli_context *ctx, int argc, char **argv) {
	static const int allowed[] = {RUNS_OPT_DEFAULT_LABEL, CLI_OPT_SKIP_BAD, CLI_OPT_TIME_UNIT,
				      0};
	const char *usage =
		"usage: thermlog runs import [--default-label L] [--skip-bad] [--time-unit s|ms|us]\n"
		"                            FILE|-\n"
		"A job log as CSV: a header naming start, end and status (optional label,\n"
		"exit_code, energy_j, temp_max_c, rss_max_bytes, error). Times as ISO 8601 with a\n"
		"zone, dates or unix seconds (with a fraction; --time-unit ms|us reads whole milli-\n"
		"or microseconds), between 2000-01-01 and now. Bad rows, and rows repeating a label and\n"
		"start with other figures, are named by line and nothing is imported (--skip-bad\n"
		"imports the good ones); a run imported before (same label and start) is left as\n"
		"it is.\n";
	struct runs_args a = {
		.cmd = "runs import", .over_s = NAN, .default_label = "job", .unix_per_s = 1};
	int rc = parse_args(&a, argc, argv, allowed, usage, 1);
	if (rc != RUNS_GO_ON) {
		return rc;
	}
	const char *path = argv[optind];
	bool from_stdin = strcmp(path, "-") == 0;
	const char *name = from_stdin ? "stdin" : path;
	FILE *in = from_stdin ? stdin : cli_input_open(path);
	if (!in) {
		fprintf(stderr, "thermlog runs import: could not read %s: %s\n", name,
			strerror(errno));
		return CLI_EXIT_FAILURE;
	}
	rc = cli_setup(ctx);
	if (rc != CLI_EXIT_OK) {
		if (!from_stdin) {
			fclose(in);
		}
		return rc;
	}
	struct buf errors;
	buf_init(&errors);
	struct runs_import_result res;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	const struct runs_import_options opt = {.default_label = a.default_label,
						.unix_per_s = a.unix_per_s,
						.skip_bad = a.skip_bad,
						.cfg = &ctx->cfg};
	int err = runs_import(ctx->store, in, name, &opt, now_ms, &res, &errors);
	if (!from_stdin) {
		fclose(in);
	}
	if (errors.len) {
		fputs(errors.data, stderr);
	}
	buf_finish(&errors);
	if (err == -EBADMSG) {
		fprintf(stderr,
			"thermlog runs import: %zu bad rows; nothing imported (--skip-bad imports "
			"the good ones)\n",
			res.bad);
		return CLI_EXIT_FAILURE;
	}
	if (err == -EINVAL) {
		fprintf(stderr, "thermlog runs import: %s is not a job log\n", name);
		return CLI_EXIT_FAILURE;
	}
	if (err < 0) {
		fprintf(stderr, "thermlog runs import: nothing imported: %s\n", strerror(-err));
		return CLI_EXIT_FAILURE;
	}
	printf("%zu runs read: %zu imported, %zu already stored, %zu bad rows skipped\n", res.rows,
	       res.added, res.unchanged, res.bad);
	cli_keep_board(ctx, "runs import");
	if (res.repeated > 0) {
		printf("%zu rows repeat an earlier row of the file exactly: stored once\n",
		       res.repeated);
	}
	if (res.temp_from_samples > 0) {
		printf("%zu peak temperatures from the stored minute samples\n",
		       res.temp_from_samples);
	}
	return CLI_EXIT_OK;
}

static void print_ratio(const char *name, const struct runstats_compare *r, bool has,
			const char *unit) {
	if (!has) {
		printf("  %s no ratio (a board has no ok run with it)\n", name);
		return;
	}
	printf("  %-8s ratio %.4f (95 %% CI %.4f .. %.4f): median %.3f %s there, %.3f %s here\n",
	       name, r->ratio, r->ci_low, r->ci_high, r->median_b, unit, r->median_a, unit);
}

/* Each metric of either side: its ratio of medians and interval, or why there is none. */
static void print_metric_ratios(const struct runs_compare *c) {
	struct buf name = {0};
	for (size_t i = 0; i < c->n_metrics; i++) {
		const struct runs_compare_metric *m = &c->metrics[i];
		const char *unit = *m->unit_a ? m->unit_a : m->unit_b;
		printf("  metric %s", table_printable(&name, m->name));
		if (!m->has_ratio) {
			printf(": no ratio (%s; %zu ok runs here, %zu there)\n", m->note, m->n_a,
			       m->n_b);
			continue;
		}
		char a[32], b[32];
		metric_number(a, sizeof(a), m->ratio.median_a);
		metric_number(b, sizeof(b), m->ratio.median_b);
		const char *u = table_printable(&name, unit);
		printf(" ratio %.4f (95 %% CI %.4f .. %.4f): median %s%s%s there, %s%s%s here (%zu, "
		       "%zu ok runs)\n",
		       m->ratio.ratio, m->ratio.ci_low, m->ratio.ci_high, b, *u ? " " : "", u, a,
		       *u ? " " : "", u, m->n_b, m->n_a);
	}
	buf_finish(&name);
}

/* A p50 of one side as text, times @factor with @digits places ("-" without one). */
static void side_p50(char *out, size_t len, const struct runstats_summary *s, double factor,
		     int digits) {
	table_number(out, len, s->n > 0 ? s->p50 : NAN, factor, digits);
}

/* Peak temperature, peak RSS and failure rate of both sides, as the JSON's "here"/"other". */
static void print_other_figures(const struct runstats_label *a, const struct runstats_label *b) {
	char ta[32], tb[32], ra[32], rb[32];
	side_p50(ta, sizeof(ta), &a->temp_max_c, 1, 1);
	side_p50(tb, sizeof(tb), &b->temp_max_c, 1, 1);
	double rss_factor;
	int rss_digits;
	const char *rss_symbol = rss_unit(&rss_factor, &rss_digits);
	side_p50(ra, sizeof(ra), &a->rss_max_bytes, rss_factor, rss_digits);
	side_p50(rb, sizeof(rb), &b->rss_max_bytes, rss_factor, rss_digits);
	printf("  peak temperature p50 %s °C here, %s °C there; peak RSS p50 %s %s here, %s %s "
	       "there\n",
	       ta, tb, ra, rss_symbol, rb, rss_symbol);
	// Of the ended runs: every status but ok failed.
	size_t ea = a->count - a->by_status[RUN_STATUS_RUNNING];
	size_t eb = b->count - b->by_status[RUN_STATUS_RUNNING];
	size_t fa = ea - a->by_status[RUN_STATUS_OK], fb = eb - b->by_status[RUN_STATUS_OK];
	printf("  failure rate %.1f %% here (%zu of %zu ended runs), %.1f %% there (%zu of %zu)\n",
	       ea ? 100.0 * (double)fa / (double)ea : 0.0, fa, ea,
	       eb ? 100.0 * (double)fb / (double)eb : 0.0, fb, eb);
	if (a->throttle_known > 0 || b->throttle_known > 0) {
		char sa[32], sb[32];
		side_p50(sa, sizeof(sa), &a->throttled_share, 100, 2);
		side_p50(sb, sizeof(sb), &b->throttled_share, 100, 2);
		printf("  throttled in %zu of %zu ok runs here (median share %s %%), %zu of %zu "
		       "there (%s %%)\n",
		       a->throttled, a->throttle_known, sa, b->throttled, b->throttle_known, sb);
	}
}

/* One board's row of the comparison: runs, ok runs, p50/p95 of duration and energy. */
static void add_side(struct table *t, const char *name, const struct runstats_label *l) {
	table_row(t);
	table_set(t, 0, "%s", name);
	table_set(t, 1, "%zu", l->count);
	table_set(t, 2, "%zu", l->by_status[RUN_STATUS_OK]);
	table_set(t, 3, "%.3f", l->duration_s.p50);
	table_set(t, 4, "%.3f", l->duration_s.p95);
	char p50[32], p95[32];
	table_number(p50, sizeof(p50), l->energy_j.n > 0 ? l->energy_j.p50 : NAN, 1, 3);
	table_number(p95, sizeof(p95), l->energy_j.n > 0 ? l->energy_j.p95 : NAN, 1, 3);
	table_set(t, 5, "%s", p50);
	table_set(t, 6, "%s", p95);
}

static void print_sides(const struct runs_compare *c) {
	static const char *const head[] = {"",      "runs",         "ok",          "p50 s",
					   "p95 s", "energy p50 J", "energy p95 J"};
	struct table t;
	table_init(&t, 7);
	table_head(&t, head, 7);
	table_align_right(&t, 1, 7);
	add_side(&t, "here", c->a);
	add_side(&t, "there", c->b);
	table_print_stdout(&t, 2);
}

static int runs_compare_cmd(struct cli_context *ctx, int argc, char **argv) {
	static const int allowed[] = {CLI_OPT_LABEL, RUNS_OPT_EXCLUDE_THROTTLED, CLI_OPT_JSON,
				      CLI_OPT_TAG, 0};
	const char *usage =
		"usage: thermlog runs compare --label L [--tag K=V]... [--exclude-throttled] OTHER.db "
		"[--json]\n"
		"The ok runs of label L here and in OTHER.db (a thermlog backup of another board):\n"
		"counts, p50/p95 of duration and energy, the ratio of medians (other over here) with\n"
		"a 95 % percentile-bootstrap interval, a warning per fingerprint difference, and one\n"
		"when the sides' throttle exposure differs (one throttled, the other not, or median\n"
		"throttled shares more than 2 times and 5 points apart). --exclude-throttled leaves\n"
		"every run throttled at all out of both sides first; --tag K=V keeps the runs\n"
		"carrying that tag on both sides.\n";
	struct runs_args a = {.cmd = "runs compare", .over_s = NAN};
	int rc = parse_args(&a, argc, argv, allowed, usage, 1);
	if (rc != RUNS_GO_ON) {
		return rc;
	}
	if (!a.filter.label) {
		fputs(usage, stderr);
		return CLI_EXIT_USAGE;
	}
	const char *other_path = argv[optind];
	struct store *other;
	rc = cli_setup(ctx);
	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	struct store *here = ctx->store;
	if (store_open(&other, other_path, STORE_MODE_FOREIGN) < 0) { // logs why
		fprintf(stderr, "thermlog runs compare: could not open %s\n", other_path);
		return CLI_EXIT_FAILURE;
	}
	struct runs_compare c;
	struct runs_compare_options co = {.label = a.filter.label,
					  .here = a.filter,
					  .other = a.filter,
					  .exclude_throttled = a.exclude_throttled};
	int err = runs_compare(here, other, &co, &c);
	struct buf hint; // a label no run here has: the near ones
	buf_init(&hint);
	if (err == -ENODATA && !(c.a && c.a->duration_s.n)) {
		runs_label_known(here, a.filter.label, &hint);
	}
	store_close(other);
	if (err == -ENODATA) {
		fprintf(stderr, "thermlog runs compare: label '%s' has no %sok run %s%s\n",
			a.filter.label, a.exclude_throttled ? "unthrottled " : "",
			c.a && c.a->duration_s.n ? "in the other database" : "here",
			hint.len ? hint.data : "");
		buf_finish(&hint);
		runs_compare_finish(&c);
		return CLI_EXIT_FAILURE;
	}
	buf_finish(&hint);
	if (err < 0) {
		fprintf(stderr, "thermlog runs compare: %s\n", strerror(-err));
		runs_compare_finish(&c);
		return CLI_EXIT_FAILURE;
	}
	if (a.json) {
		struct buf out;
		buf_init(&out);
		runs_compare_write_json(&c, other_path, true, &out);
		printf("%s\n", out.data);
		buf_finish(&out);
	} else {
		struct buf t1, t2, t3;
		buf_init(&t1);
		buf_init(&t2);
		buf_init(&t3);
		printf("%s: this board against %s\n", table_printable(&t1, c.label),
		       table_printable(&t2, other_path));
		// The verdict first: whether the two sides are like for like at all.
		printf("%s\n", c.verdict.comparable ? "comparable" : "not comparable:");
		for (size_t i = 0; i < c.verdict.n; i++) {
			print_wrapped("  - ", table_printable(&t1, c.verdict.reasons[i].message));
		}
		print_sides(&c);
		print_ratio("duration", &c.duration, c.has_duration, "s");
		print_ratio("energy", &c.energy, c.has_energy, "J");
		print_metric_ratios(&c);
		print_other_figures(c.a, c.b);
		printf("  method: ratio of type-7 medians (there over here), percentile bootstrap,\n"
		       "  %u resamples, seed %llu\n",
		       c.duration.resamples, (unsigned long long)c.duration.seed);
		size_t ok_a = c.a->by_status[RUN_STATUS_OK], ok_b = c.b->by_status[RUN_STATUS_OK];
		if (ok_a < RUNS_COMPARE_FEW || ok_b < RUNS_COMPARE_FEW) {
			printf("warning: few ok runs (%zu here, %zu there; under %d a side the "
			       "interval is too narrow to trust)\n",
			       ok_a, ok_b, RUNS_COMPARE_FEW);
		}
		if (c.exclude_throttled) {
			printf("  --exclude-throttled left out %zu throttled ok runs here, %zu there\n",
			       c.excluded_a, c.excluded_b);
		}
		for (size_t i = 0; i < c.n_warnings; i++) {
			print_wrapped("warning: ", table_printable(&t1, c.warnings[i]));
		}
		for (size_t i = 0; i < c.n_diffs; i++) {
			printf("warning: %s differs: ", table_printable(&t1, c.diffs[i].key));
			printf("%s here, ", table_printable(&t2, c.diffs[i].here));
			printf("%s there\n", table_printable(&t3, c.diffs[i].other));
		}
		buf_finish(&t1);
		buf_finish(&t2);
		buf_finish(&t3);
	}
	runs_compare_finish(&c);
	return CLI_EXIT_OK;
}

/* The subcommands, each with what it needs; the list (runs itself) reads the store (main.c). */
static const struct cli_command runs_commands[] = {
	{.name = "show", .run = runs_show, .needs = CLI_NEEDS_READ},
	{.name = "stats", .run = runs_stats_cmd, .needs = CLI_NEEDS_READ},
	{.name = "import", .run = runs_import_cmd, .needs = CLI_NEEDS_WRITE},
	{.name = "compare", .run = runs_compare_cmd, .needs = CLI_NEEDS_READ},
	{.name = "metric", .run = cli_runs_metric, .needs = CLI_NEEDS_CONFIG},
};

int cli_runs(struct cli_context *ctx, int argc, char **argv) {
	int rc;
	size_t n = sizeof(runs_commands) / sizeof(runs_commands[0]);
	return cli_subcommand(ctx, runs_commands, n, argc, argv, &rc) ? rc
								      : runs_list(ctx, argc, argv);
}
