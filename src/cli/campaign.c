/*
 * thermlog campaign: a suite of steps run as one campaign (docs/CAMPAIGN.md). check reads a
 * suite and names every problem before anything runs; run is campaign-run.c; list and show
 * read the campaigns back; burst is the binning check's built-in all-core load.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "campaign.h"
#include "cli-campaign.h"
#include "cli-options.h"
#include "cli-output.h"
#include "cli.h"
#include "json.h"
#include "jsonread.h"
#include "report.h"
#include "table.h"
#include "timefmt.h"
#include "unit.h"
#include "xalloc.h"

/* --- check -------------------------------------------------------------------------------- */

static const char check_usage[] = "usage: thermlog campaign check SUITE.yaml...\n"
				  "Reads each suite and names every problem (FILE:LINE:COL) before "
				  "anything runs.\n";

static int campaign_check(struct cli_context *ctx, int argc, char **argv) {
	(void)ctx;
	static const struct option longopts[] = {CLI_OPTION_HELP, {0}};
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		return cli_usage(c, check_usage);
	}
	if (optind == argc) {
		fputs(check_usage, stderr);
		return CLI_EXIT_USAGE;
	}
	int rc = CLI_EXIT_OK;
	for (int i = optind; i < argc; i++) {
		struct campaign_suite s;
		char *errors = NULL;
		if (campaign_suite_load(argv[i], &s, &errors)) {
			size_t n;
			free(campaign_plan(&s, &n));
			printf("%s: suite OK: %s, %zu steps, %zu repetitions (warmup runs included), "
			       "%s\n",
			       argv[i], s.name, s.n_steps, n, campaign_order_name(s.order));
		} else {
			fputs(errors, stderr);
			rc = CLI_EXIT_USAGE;
		}
		free(errors);
		campaign_suite_finish(&s);
	}
	return rc;
}

/* --- list and show ------------------------------------------------------------------------ */

/* A JSON answer parsed back, for the text tables (one writer: the JSON). */
static struct jsonread_node *parse(const struct buf *b) {
	struct jsonread_error e;
	return jsonread_parse(b->data, b->len, 64 << 20, &e);
}

static const char *text_of(const struct jsonread_node *obj, const char *key) {
	const struct jsonread_node *v = jsonread_get(obj, key);
	return v && (v->kind == JSONREAD_STRING || v->kind == JSONREAD_NUMBER) ? v->text : "-";
}

static double number_of(const struct jsonread_node *obj, const char *key) {
	const struct jsonread_node *v = jsonread_get(obj, key);
	return v && v->kind == JSONREAD_NUMBER ? v->number : 0;
}

/* A column of a table read from JSON objects: its head and the member it shows. */
struct json_column {
	const char *head, *key;
};

/*
 * @t filled with a row per object of the array @rows, a column per @cols; a member named *_s is a
 * duration (unit_duration()); columns from @right_from on are aligned right.
 */
static void json_table(struct table *t, const struct jsonread_node *rows,
		       const struct json_column *cols, size_t n, size_t right_from) {
	const char *head[16];
	n = n < 16 ? n : 16;
	table_init(t, n);
	for (size_t c = 0; c < n; c++) {
		head[c] = cols[c].head;
	}
	table_head(t, head, n);
	table_align_right(t, right_from, n);
	for (size_t i = 0; rows && i < rows->n; i++) {
		table_row(t);
		for (size_t c = 0; c < n; c++) {
			size_t len = strlen(cols[c].key);
			if (len > 2 && strcmp(cols[c].key + len - 2, "_s") == 0) {
				char d[64];
				unit_duration(d, sizeof(d), number_of(rows->items[i], cols[c].key));
				table_set(t, c, "%s", d);
			} else {
				table_set(t, c, "%s", text_of(rows->items[i], cols[c].key));
			}
		}
	}
}

static const char list_usage[] = "usage: thermlog campaign list [--json]\n"
				 "Every campaign of the database, oldest first.\n";

/*
 * Reads the options of a subcommand whose one option is --json into *@json: false when it ends
 * with *@rc (--help, or an option it does not take, as cli_usage() answers with @usage).
 */
static bool json_option(const char *usage, int argc, char **argv, bool *json, int *rc) {
	static const struct option longopts[] = {CLI_OPTION_JSON, CLI_OPTION_HELP, {0}};
	*json = false;
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c != CLI_OPT_JSON) {
			*rc = cli_usage(c, usage);
			return false;
		}
		*json = true;
	}
	return true;
}

static int campaign_list(struct cli_context *ctx, int argc, char **argv) {
	bool json;
	int rc;
	if (!json_option(list_usage, argc, argv, &json, &rc)) {
		return rc;
	}
	if (!cli_no_operand("campaign list", list_usage, argc, argv)) {
		return CLI_EXIT_USAGE;
	}
	rc = cli_setup(ctx);
	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	struct buf out = {0};
	struct json j;
	json_init(&j, &out, json);
	rc = campaign_list_json(ctx->store, cli_config(ctx)->procfs_root, &j);
	if (rc < 0) {
		fprintf(stderr, "thermlog campaign list: could not read the campaigns: %s\n",
			strerror(-rc));
		buf_finish(&out);
		return CLI_EXIT_FAILURE;
	}
	if (json) {
		printf("%s\n", out.data);
		buf_finish(&out);
		return CLI_EXIT_OK;
	}
	struct jsonread_node *root = parse(&out);
	const struct jsonread_node *list = jsonread_get(root, "campaigns");
	static const struct json_column cols[] = {
		{"ID", "id"},           {"NAME", "name"},
		{"BOARD", "board"},     {"STATUS", "status"},
		{"CREATED", "created"}, {"REPS_DONE", "slots_ended"},
		{"OF", "slots"},        {"GATE_WAIT", "gate_wait_s"},
	};
	struct table t;
	json_table(&t, list, cols, sizeof(cols) / sizeof(*cols), 5);
	if (!list || list->n == 0) {
		printf("no campaign in this database (thermlog campaign run SUITE.yaml begins one)\n");
		table_finish(&t);
	} else {
		table_print_stdout(&t, 0);
	}
	jsonread_node_free(root);
	buf_finish(&out);
	return CLI_EXIT_OK;
}

/* The step table of `campaign show`: outcomes, gate waits, cold and warm. */
static void show_steps(const struct jsonread_node *steps) {
	static const struct json_column cols[] = {
		{"STEP", "label"},
		{"START", "start"},
		{"DONE", "ended"},
		{"OF", "planned"},
		{"OK", "ok"},
		{"FAILED", "failed"},
		{"LOST", "lost"},
		{"GATE_OUT", "gate_timeouts"},
		{"INCOMPLETE", "incomplete"},
		{"GATE_WAIT", "gate_wait_s"},
	};
	struct table t;
	json_table(&t, steps, cols, sizeof(cols) / sizeof(*cols), 2);
	table_print_stdout(&t, 2);
}

/* The idle baseline per zone, and the clocks the burst reached against the hardware's. */
static void show_board(const struct jsonread_node *v) {
	const struct jsonread_node *base = jsonread_get(jsonread_get(v, "baseline"), "zones");
	double factor;
	const char *c = unit_symbol("celsius", &factor);
	if (base && base->kind == JSONREAD_OBJECT && base->n > 0) {
		printf("idle baseline (%s to %s):\n", text_of(jsonread_get(v, "baseline"), "from"),
		       text_of(jsonread_get(v, "baseline"), "to"));
		for (size_t i = 0; i + 1 < base->n; i += 2) {
			printf("  %-32s %.1f %s\n", base->items[i]->text,
			       base->items[i + 1]->number * factor, c);
		}
	}
	const struct jsonread_node *fp = jsonread_get(v, "fingerprint");
	const struct jsonread_node *reached = jsonread_get(fp, "reached_hz");
	const struct jsonread_node *cpus = jsonread_get(jsonread_get(fp, "board"), "cpufreq");
	double mhz;
	const char *sym = unit_symbol("hertz", &mhz);
	for (size_t i = 0; cpus && cpus->kind == JSONREAD_ARRAY && i < cpus->n; i++) {
		const char *policy = text_of(cpus->items[i], "policy");
		char key[96];
		snprintf(key, sizeof(key), "cpufreq/%s", policy);
		double top = number_of(cpus->items[i], "cpuinfo_max_hz");
		double got = number_of(reached, key);
		printf("%s %s: cpuinfo_max_freq %.0f %s, reached %s%.0f %s in the burst%s\n",
		       i == 0 ? "clocks:" : "       ", policy, top * mhz, sym, got > 0 ? "" : "-",
		       got * mhz, sym, got > 0 && got < top ? " (binned below its maximum)" : "");
	}
}

static const char show_usage[] = "usage: thermlog campaign show [ID] [--json]\n"
				 "One campaign (the newest without ID): its suite, the board's "
				 "fingerprint, the idle baseline,\neach step's repetitions and "
				 "gate waits, and every repetition (--json).\n";

static int campaign_show(struct cli_context *ctx, int argc, char **argv) {
	bool json;
	int rc;
	if (!json_option(show_usage, argc, argv, &json, &rc)) {
		return rc;
	}
	int64_t id = 0;
	if (optind < argc) {
		char *end;
		id = strtoll(argv[optind], &end, 10);
		if (*end || id <= 0 || optind + 1 < argc) {
			fprintf(stderr, "thermlog campaign show: '%s' is not a campaign id\n",
				argv[optind]);
			return CLI_EXIT_USAGE;
		}
	}
	rc = cli_setup(ctx);
	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	id = id ? id : campaign_newest(ctx->store);
	struct campaign_view v;
	char *err = NULL;
	rc = campaign_view_load(ctx->store, cli_config(ctx)->procfs_root, id, &v, &err);
	if (rc < 0) {
		if (rc == -ENOENT) {
			fprintf(stderr,
				"thermlog campaign show: no campaign %" PRId64
				" (thermlog campaign list)\n",
				id);
		} else {
			fprintf(stderr, "thermlog campaign show: campaign %" PRId64 ": %s\n", id,
				err ? err : strerror(-rc));
		}
		free(err);
		campaign_view_finish(&v);
		return CLI_EXIT_FAILURE;
	}
	struct buf out = {0};
	struct json j;
	json_init(&j, &out, json);
	campaign_view_json(&v, &j);
	if (json) {
		printf("%s\n", out.data);
	} else {
		struct jsonread_node *root = parse(&out);
		printf("campaign %s: %s on %s, %s, %s of %s repetitions ended\n",
		       text_of(root, "id"), text_of(root, "name"), text_of(root, "board"),
		       text_of(root, "status"), text_of(root, "slots_ended"),
		       text_of(root, "slots"));
		printf("suite %s (sha256 %.12s), begun %s\n", text_of(root, "suite_path"),
		       text_of(root, "suite_hash"), text_of(root, "created"));
		show_board(root);
		show_steps(jsonread_get(root, "steps"));
		jsonread_node_free(root);
	}
	buf_finish(&out);
	campaign_view_finish(&v);
	return CLI_EXIT_OK;
}

/* --- burst -------------------------------------------------------------------------------- */

int cli_campaign_burst(int64_t ms) {
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	cpus = cpus > 0 ? cpus : 1;
	pid_t *kids = xcalloc((size_t)cpus, sizeof(*kids));
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long started = 0;
	for (long i = 0; i < cpus; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			// Spin until the deadline, reading the clock now and then: a busy CPU.
			volatile uint64_t x = 0;
			for (;;) {
				for (int k = 0; k < 100000; k++) {
					x += (uint64_t)k;
				}
				struct timespec now;
				clock_gettime(CLOCK_MONOTONIC, &now);
				int64_t gone = (now.tv_sec - t0.tv_sec) * 1000 +
					       (now.tv_nsec - t0.tv_nsec) / 1000000;
				if (gone >= ms) {
					_exit(0);
				}
			}
		}
		if (pid > 0) {
			kids[started++] = pid;
		}
	}
	for (long i = 0; i < started; i++) {
		while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR) {
		}
	}
	free(kids);
	return started > 0 ? 0 : -EAGAIN;
}

static const char burst_usage[] = "usage: thermlog campaign burst --for DUR\n"
				  "Keeps every online CPU busy for DUR: the binning check's "
				  "all-core burst.\n";

static int campaign_burst(struct cli_context *ctx, int argc, char **argv) {
	(void)ctx;
	static const struct option longopts[] = {
		{"for", required_argument, NULL, 'f'}, CLI_OPTION_HELP, {0}};
	int64_t ms = -1;
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c != 'f') {
			return cli_usage(c, burst_usage);
		}
		if (!timefmt_parse_duration_ms(optarg, &ms) || ms <= 0) {
			fprintf(stderr,
				"thermlog campaign burst: --for %s: expected a duration such "
				"as 10s\n",
				optarg);
			return CLI_EXIT_USAGE;
		}
	}
	if (ms <= 0 || !cli_no_operand("campaign burst", burst_usage, argc, argv)) {
		fputs(ms <= 0 ? burst_usage : "", stderr);
		return CLI_EXIT_USAGE;
	}
	int rc = cli_campaign_burst(ms);
	if (rc < 0) {
		fprintf(stderr, "thermlog campaign burst: could not start: %s\n", strerror(-rc));
		return CLI_EXIT_FAILURE;
	}
	return CLI_EXIT_OK;
}

/* --- report ------------------------------------------------------------------------------- */

static const char report_usage[] =
	"usage: thermlog campaign report [--campaign ID] [--compare OTHER.db[:ID]]\n"
	"                                [--format html|md] -o FILE [--force]\n"
	"A campaign (the newest without --campaign) as one HTML or Markdown document: the board's\n"
	"fingerprint, the idle baseline, each step's outcomes, figures, gate waits and every\n"
	"repetition. --compare sets another board's campaign of the suite beside it (the newest\n"
	"in OTHER.db without :ID), with the verdict (comparable or not, and why) first and each\n"
	"step's ratios of medians with their intervals. --format html (the default unless FILE\n"
	"ends in .md) or md.\n";

/* "OTHER.db[:ID]": the file, and the id after a last ':' of digits (0: none). */
static char *split_compare(const char *arg, int64_t *id) {
	const char *colon = strrchr(arg, ':');
	*id = 0;
	if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		*id = strtoll(colon + 1, NULL, 10);
		return xstrndup(arg, (size_t)(colon - arg));
	}
	return xstrdup(arg);
}

struct report_args {
	int64_t id;
	char *compare;
	int64_t compare_id;
	struct cli_document doc; // -o FILE, --force, --format
};

/* The options of `campaign report` into @a: -1 to go on, else the exit code. */
static int report_parse(struct report_args *a, int argc, char **argv) {
	static const struct option longopts[] = {
		{"campaign", required_argument, NULL, 'i'},
		{"compare", required_argument, NULL, 'C'},
		CLI_OPTION_FORMAT,
		CLI_OPTIONS_OUTPUT,
		CLI_OPTION_HELP,
		{0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'i':
			a->id = strtoll(optarg, &end, 10);
			if (*end || a->id <= 0) {
				fprintf(stderr,
					"thermlog campaign report: --campaign %s: expected a "
					"campaign id\n",
					optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case 'C':
			free(a->compare);
			a->compare = split_compare(optarg, &a->compare_id);
			break;
		case CLI_OPT_FORMAT:
		case 'o':
		case CLI_OPT_FORCE:
			if (cli_document_option(&a->doc, "campaign report", c, optarg) < 0) {
				return CLI_EXIT_USAGE;
			}
			break;
		default:
			return cli_usage(c, report_usage);
		}
	}
	if (!a->doc.output || !cli_no_operand("campaign report", report_usage, argc, argv)) {
		if (!a->doc.output) {
			fputs(report_usage, stderr);
		}
		return CLI_EXIT_USAGE;
	}
	cli_document_format(&a->doc);
	return -1;
}

/* Writes the report into @a->doc.output (appearing when complete), never over a database. */
static int report_file(const struct report_args *a, const struct report_campaign *rc,
		       const char *db_path) {
	if (a->compare && cli_output_is_database(a->doc.output, a->compare)) {
		fprintf(stderr,
			"thermlog campaign report: %s is the database %s or one of its "
			"files; refusing to write it (even with --force)\n",
			a->doc.output, a->compare);
		return CLI_EXIT_FAILURE;
	}
	struct cli_output out;
	if (!cli_output_open(&out, "campaign report", a->doc.output, db_path, a->doc.force, 0)) {
		return CLI_EXIT_FAILURE;
	}
	struct buf b = {0};
	report_campaign_write(rc, a->doc.format, &b);
	int rc_out = CLI_EXIT_OK;
	if (b.len && fwrite(b.data, 1, b.len, out.f) != b.len) {
		fprintf(stderr, "thermlog campaign report: could not write %s\n", a->doc.output);
		cli_output_abort(&out);
		rc_out = CLI_EXIT_FAILURE;
	} else if (!cli_output_commit(&out, "campaign report")) {
		rc_out = CLI_EXIT_FAILURE;
	}
	buf_finish(&b);
	return rc_out;
}

static int campaign_report(struct cli_context *ctx, int argc, char **argv) {
	struct report_args a = {0};
	int rc = report_parse(&a, argc, argv);
	struct store *other = NULL;
	struct report_campaign r = {0};
	if (rc >= 0) {
		goto out;
	}
	if ((rc = cli_setup(ctx)) != CLI_EXIT_OK) {
		goto out;
	}
	rc = CLI_EXIT_FAILURE;
	if (a.compare && (access(a.compare, F_OK) != 0 ||
			  store_open(&other, a.compare, STORE_MODE_FOREIGN) < 0)) {
		fprintf(stderr, "thermlog campaign report: could not open %s%s\n", a.compare,
			access(a.compare, F_OK) != 0 ? ": no such file" : "");
		goto out;
	}
	const char *db_path = cli_store_path(ctx);
	struct store *stores[2] = {ctx->store, other};
	const char *files[2] = {db_path, a.compare};
	int64_t ids[2] = {a.id, a.compare_id};
	char *err = NULL;
	if (report_campaign_compute(stores, files, ids, a.compare ? 2 : 1,
				    cli_config(ctx)->procfs_root, &r, &err) < 0) {
		fprintf(stderr, "thermlog campaign report: %s\n", err ? err : "failed");
		free(err);
		goto out;
	}
	rc = report_file(&a, &r, db_path);
out:
	report_campaign_finish(&r);
	store_close(other);
	free(a.compare);
	return rc;
}

/* --- the command -------------------------------------------------------------------------- */

static const char usage[] =
	"usage: thermlog campaign check SUITE.yaml...\n"
	"       thermlog campaign run SUITE.yaml [--board NAME] [--resume]\n"
	"       thermlog campaign list [--json]\n"
	"       thermlog campaign show [ID] [--json]\n"
	"       thermlog campaign report [--campaign ID] [--compare OTHER.db[:ID]] -o FILE\n"
	"       thermlog campaign burst --for DUR\n"
	"A suite of steps run as recorded runs, each cold one behind a thermal gate on the\n"
	"board's idle baseline, resumable. See thermlog-campaign(5) and docs/CAMPAIGN.md.\n";

static const struct cli_command campaign_commands[] = {
	{.name = "check", .run = campaign_check, .needs = CLI_NEEDS_NONE},
	{.name = "run", .run = cli_campaign_run, .needs = CLI_NEEDS_CONFIG},
	{.name = "list", .run = campaign_list, .needs = CLI_NEEDS_READ},
	{.name = "show", .run = campaign_show, .needs = CLI_NEEDS_READ},
	{.name = "report", .run = campaign_report, .needs = CLI_NEEDS_READ},
	{.name = "burst", .run = campaign_burst, .needs = CLI_NEEDS_NONE},
};

int cli_campaign(struct cli_context *ctx, int argc, char **argv) {
	int rc;
	size_t n = sizeof(campaign_commands) / sizeof(campaign_commands[0]);
	if (cli_subcommand(ctx, campaign_commands, n, argc, argv, &rc)) {
		return rc;
	}
	bool help = argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
	if (argc > 1 && !help) {
		fprintf(stderr, "thermlog campaign: unknown subcommand '%s'\n", argv[1]);
	}
	fputs(usage, help ? stdout : stderr);
	return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}
