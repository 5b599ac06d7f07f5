/*
 * thermlog report: one board's window (or two boards side by side) as a self-contained HTML
 * file or Markdown with its charts beside it, written like export -o (src/cli/output.c).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "cli-options.h"
#include "cli-output.h"
#include "cli.h"
#include "query.h"
#include "report.h"
#include "runtag.h"
#include "timefmt.h"
#include "xalloc.h"

enum {
	REPORT_OPT_COMPARE = 512,
	REPORT_OPT_LIFETIME,
	REPORT_OPT_LIFETIME_ONLY,
	REPORT_OPT_COMPARE_FROM,
	REPORT_OPT_COMPARE_TO,
	REPORT_OPT_MAP_LABEL,
	REPORT_OPT_MAP_CHANNEL,
	REPORT_OPT_PEAK_CHANNEL,
};

static const char usage_text[] =
	"usage: thermlog report [--from T] [--to T] [--label L]... [--tag K=V]... [--over DUR]\n"
	"                       [--peak-channel NAME]\n"
	"                       [--compare OTHER.db [--compare-from T] [--compare-to T]\n"
	"                        [--map-label A=B]... [--map-channel A=B]...]\n"
	"                       [--format html|md] [--weight samples|time]\n"
	"                       [--lifetime | --lifetime-only] -o FILE [--force]\n"
	"The board and window, zones, clocks, load, throttling, the peak, memory and swap, runs\n"
	"per label and the capacitor lifetime in one document: the figures of stats, peak,\n"
	"throttle, runs stats and lifetime. The peak is the hottest thermal zone's (the channels\n"
	"of runs.peak_channels), or the hottest channel --peak-channel NAME (a key, glob or\n"
	"label) selects.\n"
	"--compare OTHER.db (opened read-only) sets another board beside this one, over its own\n"
	"window (its whole history unless --compare-from/--compare-to), with the verdict first\n"
	"(comparable or not, and why), temperatures as differences in K, clocks, durations and\n"
	"energy as ratios with runs compare's bootstrap intervals; --map-label A=B compares label\n"
	"A here with B there. Zones and clocks pair by their part on the board (big-core zone,\n"
	"little cluster, NPU...: the configuration's roles: or inferred), never by name alone;\n"
	"--map-channel A=B pairs channel key A here with B there.\n"
	"--format html (the default unless FILE ends in .md): one self-contained file; md:\n"
	"GitHub Markdown, each chart written beside it as\n"
	"FILE-NAME.svg (FILE without its .md). -o - writes standard output (Markdown: no chart\n"
	"files). FILE never replaces a database, an existing file only with --force.\n"
	"--lifetime adds the capacitor design review (per capacitor: part data, sensor and basis,\n"
	"mission profile, consumed life over time and to date, relative lives, warnings, the\n"
	"review checklist); --lifetime-only writes the board and window and the review alone.\n"
	"--tag K=V shows only the runs carrying that tag.\n";

struct report_args {
	// What the options say of the report itself, kept there as they are read (--over,
	// --weight, --lifetime, --compare-from/--compare-to, --peak-channel; now, what relative
	// times count from); the rest is added from the fields below once they are checked.
	struct report_options opt;
	struct cli_window w;
	const char **labels;
	size_t n_labels, cap_labels;
	const char *compare;
	struct cli_document doc;    // -o FILE, --force, --format
	struct runtag_list tags;    // --tag: the runs shown carry each
	struct runtag_list map;     // --map-label A=B: A here is B on the other board
	struct role_pair *channels; // --map-channel A=B (the arguments, split)
	size_t n_channels, cap_channels;
};

/* "A=B", two channel keys, into a pair (pointing into @arg, which is cut at '='). */
static bool map_channel(struct report_args *a, char *arg) {
	char *eq = strchr(arg, '=');
	if (eq) {
		*eq = '\0';
	}
	if (!eq || !channel_key_valid(arg) || !channel_key_valid(eq + 1)) {
		fprintf(stderr,
			"thermlog report: --map-channel %s%s%s: give A=B, a channel key here and one "
			"there (thermal/bigcore0-thermal=thermal/x86_pkg_temp)\n",
			arg, eq ? "=" : "", eq ? eq + 1 : "");
		return false;
	}
	a->channels = xgrow(a->channels, &a->cap_channels, a->n_channels + 1, sizeof(*a->channels));
	a->channels[a->n_channels++] = (struct role_pair){arg, eq + 1};
	return true;
}

/* One option of report into @state, its struct report_args (a cli_option_fn). */
static int report_option(void *state, int opt, char *arg) {
	struct report_args *a = state;
	bool good = true;
	switch (opt) {
	case CLI_OPT_FROM:
	case CLI_OPT_TO:
		good = cli_window_option(&a->w, "report", opt, arg, a->opt.now) > 0;
		break;
	case CLI_OPT_LABEL:
		a->labels = xgrow(a->labels, &a->cap_labels, a->n_labels + 1, sizeof(*a->labels));
		a->labels[a->n_labels++] = arg;
		break;
	case CLI_OPT_OVER:
		good = cli_over_option("report", arg, &a->opt.over_s);
		break;
	case CLI_OPT_TAG: {
		char *err = NULL;
		good = runtag_parse(arg, &a->tags, &err);
		if (!good) {
			fprintf(stderr, "thermlog report: --tag: %s\n", err);
		}
		free(err);
		break;
	}
	case REPORT_OPT_COMPARE_FROM:
	case REPORT_OPT_COMPARE_TO: {
		bool from = opt == REPORT_OPT_COMPARE_FROM;
		good = cli_time_option("report", from ? "--compare-from" : "--compare-to", arg,
				       a->opt.now,
				       from ? &a->opt.compare_from : &a->opt.compare_to);
		*(from ? &a->opt.has_compare_from : &a->opt.has_compare_to) = good;
		break;
	}
	case REPORT_OPT_MAP_LABEL: {
		char *err = NULL;
		good = runtag_parse(arg, &a->map, &err); // LABEL=LABEL, the label rule
		if (!good) {
			fprintf(stderr,
				"thermlog report: --map-label %s: %s (A=B: label A here "
				"is label B on the other board)\n",
				arg, err);
		}
		free(err);
		break;
	}
	case REPORT_OPT_MAP_CHANNEL:
		good = map_channel(a, arg);
		break;
	case CLI_OPT_FORMAT:
	case 'o':
	case CLI_OPT_FORCE:
		good = cli_document_option(&a->doc, "report", opt, arg) > 0;
		break;
	case CLI_OPT_WEIGHT:
		good = cli_weight_option("report", arg, &a->opt.weight);
		break;
	case REPORT_OPT_LIFETIME:
	case REPORT_OPT_LIFETIME_ONLY: {
		enum report_lifetime l =
			opt == REPORT_OPT_LIFETIME ? REPORT_LIFETIME_ADD : REPORT_LIFETIME_ONLY;
		if (a->opt.lifetime != REPORT_LIFETIME_NONE && a->opt.lifetime != l) {
			fprintf(stderr, "thermlog report: give --lifetime or --lifetime-only, "
					"not both\n");
			return -1;
		}
		a->opt.lifetime = l;
		break;
	}
	default: // --help, or an option getopt_long refused
		return 0;
	}
	return good ? 1 : -1;
}

/* The options of report into @a: -1 to go on, else the exit code. */
static int parse(struct report_args *a, int argc, char **argv) {
	static const struct option options[] = {
		CLI_OPTIONS_FROM_TO,
		CLI_OPTION_LABEL,
		CLI_OPTION_OVER,
		{"compare", required_argument, NULL, REPORT_OPT_COMPARE},
		CLI_OPTION_FORMAT,
		CLI_OPTION_WEIGHT,
		{"lifetime", no_argument, NULL, REPORT_OPT_LIFETIME},
		{"lifetime-only", no_argument, NULL, REPORT_OPT_LIFETIME_ONLY},
		CLI_OPTION_TAG,
		{"compare-from", required_argument, NULL, REPORT_OPT_COMPARE_FROM},
		{"compare-to", required_argument, NULL, REPORT_OPT_COMPARE_TO},
		{"map-label", required_argument, NULL, REPORT_OPT_MAP_LABEL},
		{"map-channel", required_argument, NULL, REPORT_OPT_MAP_CHANNEL},
		{"peak-channel", required_argument, NULL, REPORT_OPT_PEAK_CHANNEL},
		CLI_OPTIONS_OUTPUT,
		CLI_OPTION_HELP,
		{0},
	};
	const struct plain_option plain[] = {
		{REPORT_OPT_PEAK_CHANNEL, &a->opt.peak_channel, NULL},
		{REPORT_OPT_COMPARE, &a->compare, NULL},
		{0},
	};
	int rc;
	if (!cli_read_options("report", usage_text, "ho:", options, plain, report_option, a, argc,
			      argv, &rc)) {
		return rc;
	}
	if (!a->doc.output) {
		fprintf(stderr, "thermlog report: name the file with -o FILE (-o - for standard "
				"output)\n");
		return CLI_EXIT_USAGE;
	}
	cli_document_format(&a->doc);
	return -1;
}

/* --compare-from/--compare-to: with --compare, a window that is not empty. */
static bool compare_window_check(const struct report_args *a) {
	if ((a->opt.has_compare_from || a->opt.has_compare_to) && !a->compare) {
		fprintf(stderr,
			"thermlog report: %s chooses the compared board's window: give --compare "
			"OTHER.db with it\n",
			a->opt.has_compare_from ? "--compare-from" : "--compare-to");
		return false;
	}
	static const char *const names[] = {"--compare-from", "--compare-to"};
	char *err = NULL;
	int bad;
	if (a->opt.has_compare_from && a->opt.has_compare_to &&
	    query_window_check(a->opt.compare_from, a->opt.compare_to, false, 0, names, &bad,
			       &err) < 0) {
		fprintf(stderr, "thermlog report: %s (the window of %s)\n", err, a->compare);
		free(err);
		return false;
	}
	return true;
}

/* FILE without a trailing ".md": the charts are PREFIX-NAME.svg. */
static char *chart_prefix(const char *output) {
	size_t len = strlen(output);
	return len > 3 && strcmp(output + len - 3, ".md") == 0 ? xstrndup(output, len - 3)
							       : xstrdup(output);
}

/* Writes every file (the charts, then the document) or none: each appears when complete. */
static int write_files(const struct report_args *a, const struct report *rep, const char *db_path) {
	struct report_chart *charts = NULL;
	size_t n_charts = 0;
	char *prefix = chart_prefix(a->doc.output);
	if (a->doc.format == REPORT_MARKDOWN) {
		report_charts(rep, &charts, &n_charts);
	}
	char **paths = xcalloc(n_charts + 1, sizeof(*paths));
	struct cli_output *outs = xcalloc(n_charts + 1, sizeof(*outs));
	paths[n_charts] = xstrdup(a->doc.output);
	for (size_t i = 0; i < n_charts; i++) {
		paths[i] = xasprintf("%s-%s.svg", prefix, charts[i].name);
	}
	int rc = CLI_EXIT_OK;
	size_t opened = 0;
	for (; opened <= n_charts; opened++) {
		if (a->compare && cli_output_is_database(paths[opened], a->compare)) {
			fprintf(stderr,
				"thermlog report: %s is the database %s or one of its files; refusing "
				"to write it (even with --force)\n",
				paths[opened], a->compare);
			rc = CLI_EXIT_FAILURE;
			break;
		}
		if (!cli_output_open(&outs[opened], "report", paths[opened], db_path, a->doc.force,
				     0)) {
			rc = CLI_EXIT_FAILURE;
			break;
		}
	}
	struct buf b;
	buf_init(&b);
	for (size_t i = 0; rc == CLI_EXIT_OK && i <= n_charts; i++) {
		buf_clear(&b);
		if (i < n_charts) {
			buf_puts(&b, charts[i].svg);
		} else {
			const char *slash = strrchr(prefix, '/');
			report_write(rep, a->doc.format, slash ? slash + 1 : prefix, &b);
		}
		if (b.len && fwrite(b.data, 1, b.len, outs[i].f) != b.len) {
			fprintf(stderr, "thermlog report: could not write %s\n", paths[i]);
			rc = CLI_EXIT_FAILURE;
		}
	}
	for (size_t i = 0; i < opened && i <= n_charts; i++) {
		if (rc != CLI_EXIT_OK) {
			cli_output_abort(&outs[i]);
		} else if (!cli_output_commit(&outs[i], "report")) {
			rc = CLI_EXIT_FAILURE;
		}
	}
	buf_finish(&b);
	for (size_t i = 0; i <= n_charts; i++) {
		free(paths[i]);
	}
	free(paths);
	free(outs);
	free(prefix);
	report_charts_free(charts, n_charts);
	return rc;
}

static int write_stdout(const struct report_args *a, const struct report *rep) {
	struct buf b;
	buf_init(&b);
	report_write(rep, a->doc.format, NULL, &b);
	int rc = CLI_EXIT_OK;
	if ((b.len && fwrite(b.data, 1, b.len, stdout) != b.len) || fflush(stdout) != 0) {
		fprintf(stderr, "thermlog report: could not write stdout: %s\n", strerror(errno));
		rc = CLI_EXIT_FAILURE;
	}
	buf_finish(&b);
	return rc;
}

int cli_report(struct cli_context *ctx, int argc, char **argv) {
	int64_t now = (int64_t)time(NULL);
	struct report_args a = {.opt = {.over_s = NAN, .now = now}};
	cli_window_init(&a.w);
	struct store *stores[2] = {NULL, NULL};
	int rc = parse(&a, argc, argv);
	if (rc >= 0) {
		goto out;
	}
	rc = CLI_EXIT_USAGE;
	if (!cli_window_check(ctx, &a.w, "report", now) || !compare_window_check(&a)) {
		goto out;
	}
	if (a.w.p.has_from && !a.w.p.has_to) { // as in stats: the window ends now
		a.w.p.to = now;
		a.w.p.has_to = true;
	}
	if ((rc = cli_setup(ctx)) != CLI_EXIT_OK) {
		goto out;
	}
	const struct config *cfg = &ctx->cfg;
	const char *db_path = cli_store_path(ctx);
	stores[0] = ctx->store;
	rc = CLI_EXIT_FAILURE;
	if (a.compare && (access(a.compare, F_OK) != 0 ||
			  store_open(&stores[1], a.compare, STORE_MODE_FOREIGN) < 0)) {
		fprintf(stderr, "thermlog report: could not open %s%s\n", a.compare,
			access(a.compare, F_OK) != 0 ? ": no such file" : "");
		goto out;
	}
	const char *files[2] = {db_path, a.compare};
	struct buf tags = {0};
	if (a.tags.n > 0) {
		runtag_list_json(&a.tags, &tags);
	}
	const char **map_a = xcalloc(a.map.n + 1, sizeof(*map_a));
	const char **map_b = xcalloc(a.map.n + 1, sizeof(*map_b));
	for (size_t i = 0; i < a.map.n; i++) {
		map_a[i] = a.map.tags[i].key;
		map_b[i] = a.map.tags[i].value;
	}
	struct report_options *opt = &a.opt;
	opt->tags = tags.data;
	opt->map_a = map_a;
	opt->map_b = map_b;
	opt->n_map = a.map.n;
	opt->map_channel = a.channels;
	opt->n_map_channel = a.n_channels;
	opt->has_from = a.w.p.has_from;
	opt->has_to = a.w.p.has_to;
	opt->from = a.w.p.from;
	opt->to = a.w.p.to;
	opt->labels = a.labels;
	opt->n_labels = a.n_labels;
	opt->cfg = cfg;
	if (opt->lifetime != REPORT_LIFETIME_NONE && cfg->n_capacitors == 0) {
		fprintf(stderr,
			"thermlog report: no capacitors configured (add a 'capacitors:' section to "
			"%s): the design review says so\n",
			cfg->path ? cfg->path : CONFIG_DEFAULT_PATH);
	}
	struct report rep;
	char *err = NULL;
	int qrc = report_compute(stores, files, a.compare ? 2 : 1, opt, &rep, &err);
	if (qrc < 0) {
		rc = cli_query_failed("report", qrc, err);
	} else if (strcmp(a.doc.output, "-") == 0) {
		rc = write_stdout(&a, &rep);
	} else {
		rc = write_files(&a, &rep, db_path);
	}
	report_finish(&rep);
	buf_finish(&tags);
	free(map_a);
	free(map_b);
out:
	store_close(stores[1]); // the --compare database: the command's own
	free(a.labels);
	free(a.channels);
	runtag_list_finish(&a.tags);
	runtag_list_finish(&a.map);
	cli_window_finish(&a.w);
	return rc;
}
