/* thermlog runs [show|stats|import|compare]: the runs stored, as tables or the API's JSON. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "cli-stats.h"
#include "runs.h"
#include "table.h"
#include "timefmt.h"
#include "xalloc.h"

/* Options of the runs commands only (above the shared CLI_OPT_* values). */
enum {
	RUNS_OPT_LABEL = 512,
	RUNS_OPT_OVER,
	RUNS_OPT_DEFAULT_LABEL,
};

#define RUNS_MAX_PERCENTILES 16

/* The options every runs command may take; each command refuses what it does not use. */
struct runs_args {
	const char *cmd; // "runs", "runs stats", ...
	struct store_run_filter filter;
	double over_s;
	double percentiles[RUNS_MAX_PERCENTILES];
	size_t n_percentiles;
	bool json, skip_bad;
	const char *default_label;
};

static const struct option runs_options[] = {
	{"label", required_argument, NULL, RUNS_OPT_LABEL},
	{"from", required_argument, NULL, CLI_OPT_FROM},
	{"to", required_argument, NULL, CLI_OPT_TO},
	{"over", required_argument, NULL, RUNS_OPT_OVER},
	{"percentile", required_argument, NULL, CLI_OPT_PERCENTILE},
	{"json", no_argument, NULL, CLI_OPT_JSON},
	{"skip-bad", no_argument, NULL, CLI_OPT_SKIP_BAD},
	{"default-label", required_argument, NULL, RUNS_OPT_DEFAULT_LABEL},
	{"help", no_argument, NULL, 'h'},
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
	int opt;
	while ((opt = getopt_long(argc, argv, "h", runs_options, NULL)) != -1) {
		if (opt == 'h') {
			fputs(usage, stdout);
			return CLI_EXIT_OK;
		}
		bool ok = false;
		for (const int *p = allowed; *p; p++) {
			ok = ok || *p == opt;
		}
		if (!ok) {
			fputs(usage, stderr);
			return CLI_EXIT_USAGE;
		}
		switch (opt) {
		case RUNS_OPT_LABEL:
			a->filter.label = optarg;
			break;
		case CLI_OPT_FROM:
		case CLI_OPT_TO: {
			int64_t ts;
			if (!timefmt_parse_time(optarg, now, &ts)) {
				fprintf(stderr,
					"thermlog %s: bad time for %s: '%s' (use "
					"2026-08-20T00:00:00Z, 2026-08-20, unix seconds, -24h or "
					"now)\n",
					a->cmd, opt == CLI_OPT_FROM ? "--from" : "--to", optarg);
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
		case RUNS_OPT_OVER: {
			int64_t ms;
			if (!timefmt_parse_duration_ms(optarg, &ms)) {
				fprintf(stderr,
					"thermlog %s: bad duration for --over: '%s' (e.g. 30m, "
					"1h30m, 90s)\n",
					a->cmd, optarg);
				return CLI_EXIT_USAGE;
			}
			a->over_s = (double)ms / 1000.0;
			break;
		}
		case CLI_OPT_PERCENTILE: {
			char *end;
			double v = strtod(optarg, &end);
			if (end == optarg || *end || !(v >= 0 && v <= 100)) {
				fprintf(stderr,
					"thermlog %s: bad percentile '%s' (a number from 0 to "
					"100)\n",
					a->cmd, optarg);
				return CLI_EXIT_USAGE;
			}
			if (a->n_percentiles == RUNS_MAX_PERCENTILES) {
				fprintf(stderr, "thermlog %s: at most %d --percentile options\n",
					a->cmd, RUNS_MAX_PERCENTILES);
				return CLI_EXIT_USAGE;
			}
			a->percentiles[a->n_percentiles++] = v;
			break;
		}
		case CLI_OPT_JSON:
			a->json = true;
			break;
		case CLI_OPT_SKIP_BAD:
			a->skip_bad = true;
			break;
		case RUNS_OPT_DEFAULT_LABEL:
			a->default_label = optarg;
			break;
		}
	}
	if (a->filter.has_from && a->filter.has_to && a->filter.from_ms >= a->filter.to_ms) {
		fprintf(stderr, "thermlog %s: --from must be before --to\n", a->cmd);
		return CLI_EXIT_USAGE;
	}
	if (n_operands != RUNS_OPERANDS_FREE && argc - optind != n_operands) {
		fputs(usage, stderr);
		return CLI_EXIT_USAGE;
	}
	return RUNS_GO_ON;
}

static int print_run_row(void *ctx, const struct store_run *run) {
	(void)ctx;
	char start[TIMEFMT_ISO_LEN];
	runs_format_time(run->start_ms, start);
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
	printf("%6lld  %-18.18s %-24s %10s  %-8s %5s %6s %10s\n", (long long)run->id, run->label,
	       start, dur, run->status, exit_code, temp, energy);
	return 0;
}

static int runs_list(const struct cli_context *ctx, int argc, char **argv) {
	static const int allowed[] = {RUNS_OPT_LABEL, CLI_OPT_FROM, CLI_OPT_TO, CLI_OPT_JSON, 0};
	const char *usage = "usage: thermlog runs [--label L] [--from T] [--to T] [--json]\n"
			    "       thermlog runs show ID [--json]\n"
			    "       thermlog runs stats [--label L] [--from T] [--to T] "
			    "[--over DUR] [--percentile P]... [--json]\n"
			    "       thermlog runs import [--default-label L] [--skip-bad] FILE|-\n"
			    "       thermlog runs compare --label L OTHER.db [--json]\n"
			    "Runs are listed by start time (--from/--to select by start).\n";
	struct runs_args a = {.cmd = "runs", .over_s = NAN};
	int rc = parse_args(&a, argc, argv, allowed, usage, 0);
	if (rc != RUNS_GO_ON) {
		return rc;
	}
	struct store *store;
	rc = cli_open_store(ctx, "runs", STORE_MODE_READ, &store);
	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	int err;
	if (a.json) {
		struct buf out;
		buf_init(&out);
		err = runs_list_json(store, &a.filter, true, &out);
		if (err == 0) {
			printf("%s\n", out.data);
		}
		buf_finish(&out);
	} else {
		printf("%6s  %-18s %-24s %10s  %-8s %5s %6s %10s\n", "ID", "LABEL", "START",
		       "DURATION_S", "STATUS", "EXIT", "TEMP_C", "ENERGY_J");
		err = store_runs_scan(store, &a.filter, print_run_row, NULL);
	}
	store_close(store);
	if (err < 0) {
		fprintf(stderr, "thermlog runs: could not read the runs: %s\n", strerror(-err));
		return CLI_EXIT_FAILURE;
	}
	return CLI_EXIT_OK;
}

static int runs_show(const struct cli_context *ctx, int argc, char **argv) {
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
	struct store *store;
	rc = cli_open_store(ctx, "runs show", STORE_MODE_READ, &store);
	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	struct buf out;
	buf_init(&out);
	// The text form is the same document, indented: every figure keeps its method beside it.
	int err = runs_show_json(store, id, true, &out);
	store_close(store);
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
static void print_summary_row(const char *name, const struct runstats_summary *s, int digits,
			      const struct runs_args *a) {
	if (s->n == 0) {
		printf("  %-14s %5s  (no ok run has it)\n", name, "0");
		return;
	}
	printf("  %-14s %5zu %12.*f %12.*f %12.*f %12.*f", name, s->n, digits, s->p50, digits,
	       s->p95, digits, s->max, digits, s->mean);
	for (size_t k = 0; k < a->n_percentiles; k++) {
		printf(" %12.*f", digits, s->percentiles[k]);
	}
	printf("\n");
}

/* Prints @text indented by two, broken after ", " or "; " where a line would pass 100 columns. */
static void print_wrapped(const char *text) {
	size_t col = 2;
	printf("  ");
	while (*text) {
		// The next piece: up to and including the next ',' or ';' followed by a space.
		size_t len = 0;
		while (text[len] &&
		       !((text[len] == ',' || text[len] == ';') && text[len + 1] == ' ')) {
			len++;
		}
		len += text[len] ? 1 : 0;
		if (col > 2 && col + 1 + len > 100) {
			printf("\n  ");
			col = 2;
		} else if (col > 2) {
			printf(" ");
			col++;
		}
		printf("%.*s", (int)len, text);
		col += len;
		text += len;
		text += *text == ' ' ? 1 : 0;
	}
	printf("\n");
}

static int runs_stats_cmd(const struct cli_context *ctx, int argc, char **argv) {
	static const int allowed[] = {RUNS_OPT_LABEL,     CLI_OPT_FROM, CLI_OPT_TO, RUNS_OPT_OVER,
				      CLI_OPT_PERCENTILE, CLI_OPT_JSON, 0};
	const char *usage = "usage: thermlog runs stats [--label L] [--from T] [--to T] "
			    "[--over DUR] [--percentile P]... [--json]\n"
			    "Per label: counts by status; exact type-7 p50, p95, max and mean of "
			    "the ok runs'\nduration, energy, peak temperature and peak RSS; "
			    "--over counts ok runs longer than DUR.\n";
	struct runs_args a = {.cmd = "runs stats", .over_s = NAN};
	int rc = parse_args(&a, argc, argv, allowed, usage, 0);
	if (rc != RUNS_GO_ON) {
		return rc;
	}
	struct store *store;
	rc = cli_open_store(ctx, "runs stats", STORE_MODE_READ, &store);
	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	struct runs_stats_options opt = {.filter = a.filter,
					 .over_s = a.over_s,
					 .percentiles = a.percentiles,
					 .n_percentiles = a.n_percentiles};
	struct runstats_result r;
	int err = runs_stats(store, &opt, &r);
	store_close(store);
	if (err < 0) {
		fprintf(stderr, "thermlog runs stats: could not compute: %s\n", strerror(-err));
		runstats_result_finish(&r);
		return CLI_EXIT_FAILURE;
	}
	struct buf out;
	buf_init(&out);
	if (a.json) {
		runs_stats_write_json(&r, &opt, true, &out);
		printf("%s\n", out.data);
	} else if (r.n == 0) {
		printf("no runs\n");
	}
	for (size_t i = 0; !a.json && i < r.n; i++) {
		const struct runstats_label *l = &r.labels[i];
		buf_clear(&out);
		runs_stats_summary_line(l, a.over_s, &out);
		printf("%s%s\n", i ? "\n" : "", l->label);
		print_wrapped(out.data ? out.data : "");
		printf("  %-14s %5s %12s %12s %12s %12s", "ok runs", "n", "p50", "p95", "max",
		       "mean");
		for (size_t k = 0; k < a.n_percentiles; k++) {
			char head[40];
			snprintf(head, sizeof(head), "p%g", a.percentiles[k]);
			printf(" %12s", head);
		}
		printf("\n");
		print_summary_row("duration_s", &l->duration_s, 3, &a);
		print_summary_row("energy_j", &l->energy_j, 3, &a);
		print_summary_row("temp_max_c", &l->temp_max_c, 3, &a);
		print_summary_row("rss_max_bytes", &l->rss_max_bytes, 0, &a);
	}
	buf_finish(&out);
	runstats_result_finish(&r);
	return CLI_EXIT_OK;
}

static int runs_import_cmd(const struct cli_context *ctx, int argc, char **argv) {
	static const int allowed[] = {RUNS_OPT_DEFAULT_LABEL, CLI_OPT_SKIP_BAD, 0};
	const char *usage =
		"usage: thermlog runs import [--default-label L] [--skip-bad] FILE|-\n"
		"A job log as CSV: a header naming start, end and status (optional label,\n"
		"exit_code, energy_j, temp_max_c, rss_max_bytes). Times as ISO 8601 with a zone,\n"
		"dates or unix seconds (with a fraction), between 2000-01-01 and now. Bad rows are\n"
		"named by line and nothing is imported (--skip-bad imports the good ones); a run\n"
		"imported before (same label and start) is left as it is.\n";
	struct runs_args a = {.cmd = "runs import", .over_s = NAN, .default_label = "job"};
	int rc = parse_args(&a, argc, argv, allowed, usage, 1);
	if (rc != RUNS_GO_ON) {
		return rc;
	}
	const char *path = argv[optind];
	bool from_stdin = strcmp(path, "-") == 0;
	const char *name = from_stdin ? "stdin" : path;
	FILE *in = from_stdin ? stdin : fopen(path, "r");
	if (!in) {
		fprintf(stderr, "thermlog runs import: could not read %s: %s\n", name,
			strerror(errno));
		return CLI_EXIT_FAILURE;
	}
	struct store *store;
	rc = cli_open_store(ctx, "runs import", STORE_MODE_WRITE, &store);
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
	int err = runs_import(store, in, name, a.default_label, now_ms, a.skip_bad, &res, &errors);
	store_close(store);
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
	if (res.temp_from_samples > 0) {
		printf("%zu peak temperatures from the stored minute samples\n",
		       res.temp_from_samples);
	}
	return CLI_EXIT_OK;
}

static void print_ratio(const char *name, const struct runstats_compare *r, bool has,
			const char *unit) {
	if (!has) {
		printf("  %-10s no ratio (a board has no ok run with it)\n", name);
		return;
	}
	printf("  %-8s ratio %.4f (95 %% CI %.4f .. %.4f): median %.3f %s there, %.3f %s here\n",
	       name, r->ratio, r->ci_low, r->ci_high, r->median_b, unit, r->median_a, unit);
}

static void print_side(const char *name, const struct runstats_label *l) {
	printf("  %-10s %6zu %6zu %12.3f %12.3f", name, l->count, l->by_status[RUN_STATUS_OK],
	       l->duration_s.p50, l->duration_s.p95);
	if (l->energy_j.n > 0) {
		printf(" %14.3f %14.3f", l->energy_j.p50, l->energy_j.p95);
	} else {
		printf(" %14s %14s", "-", "-");
	}
	printf("\n");
}

static int runs_compare_cmd(const struct cli_context *ctx, int argc, char **argv) {
	static const int allowed[] = {RUNS_OPT_LABEL, CLI_OPT_JSON, 0};
	const char *usage =
		"usage: thermlog runs compare --label L OTHER.db [--json]\n"
		"The ok runs of label L here and in OTHER.db (a thermlog backup of another board):\n"
		"counts, p50/p95 of duration and energy, the ratio of medians (other over here) with\n"
		"a 95 % percentile-bootstrap interval, and a warning per fingerprint difference.\n";
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
	struct store *here, *other;
	rc = cli_open_store(ctx, "runs compare", STORE_MODE_READ, &here);
	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	if (store_open(&other, other_path, STORE_MODE_FOREIGN) < 0) { // logs why
		fprintf(stderr, "thermlog runs compare: could not open %s\n", other_path);
		store_close(here);
		return CLI_EXIT_FAILURE;
	}
	struct runs_compare c;
	int err = runs_compare(here, other, a.filter.label, &c);
	store_close(here);
	store_close(other);
	if (err == -ENODATA) {
		fprintf(stderr, "thermlog runs compare: label '%s' has no ok run %s\n",
			a.filter.label,
			c.a && c.a->duration_s.n ? "in the other database" : "here");
		runs_compare_finish(&c);
		return CLI_EXIT_FAILURE;
	}
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
		printf("%s: this board against %s\n", c.label, other_path);
		printf("  %-10s %6s %6s %12s %12s %14s %14s\n", "", "runs", "ok", "p50 s", "p95 s",
		       "energy p50 J", "energy p95 J");
		print_side("here", c.a);
		print_side("there", c.b);
		print_ratio("duration", &c.duration, c.has_duration, "s");
		print_ratio("energy", &c.energy, c.has_energy, "J");
		printf("  method: ratio of type-7 medians (there over here), percentile bootstrap,\n"
		       "  %u resamples, seed %llu\n",
		       c.duration.resamples, (unsigned long long)c.duration.seed);
		for (size_t i = 0; i < c.n_diffs; i++) {
			printf("warning: %s differs: %s here, %s there\n", c.diffs[i].key,
			       c.diffs[i].here, c.diffs[i].other);
		}
	}
	runs_compare_finish(&c);
	return CLI_EXIT_OK;
}

int cli_runs(const struct cli_context *ctx, int argc, char **argv) {
	if (argc > 1) {
		static const struct {
			const char *name;
			int (*run)(const struct cli_context *ctx, int argc, char **argv);
		} subs[] = {
			{"show", runs_show},
			{"stats", runs_stats_cmd},
			{"import", runs_import_cmd},
			{"compare", runs_compare_cmd},
		};
		for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
			if (strcmp(argv[1], subs[i].name) == 0) {
				return subs[i].run(ctx, argc - 1, argv + 1);
			}
		}
	}
	return runs_list(ctx, argc, argv);
}
