/*
 * thermlog run: marks a job as a run through the daemon's Unix socket (runs.socket). The
 * wrapper form runs the command itself, forwards signals, collects its peak RSS with wait4()
 * and passes its exit status through, recorded or not; `run start` and `run stop` serve
 * orchestrators whose jobs are not our children.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cli-daemon.h"
#include "cli-wrap.h"
#include "cli.h"
#include "jobcsv.h"
#include "runmetric.h"
#include "runtag.h"
#include "runwire.h"
#include "timefmt.h"
#include "xalloc.h"

/* --- arguments ------------------------------------------------------------------------------ */

struct run_args {
	const char *label;
	struct runtag_list tags; // --tag KEY=VALUE
	int64_t timeout_ms;      // 0 = none
	int64_t pid;             // run start --pid
	bool pid_given;
	struct runmetric_set metrics; // --metric
};

/* --metric NAME=VALUE[UNIT] into @a's metrics; false after saying why. */
static bool add_metric(struct run_args *a, const char *cmd, const char *text) {
	char *err = NULL;
	if (runmetric_parse_assignment(text, &a->metrics, &err)) {
		return true;
	}
	struct buf shown = {0};
	buf_put_printable(&shown, err, strlen(err));
	fprintf(stderr, "thermlog %s: --metric: %s\n", cmd, shown.data);
	buf_finish(&shown);
	free(err);
	return false;
}

static bool add_tag(struct run_args *a, const char *kv) {
	char *err = NULL;
	if (runtag_parse(kv, &a->tags, &err)) {
		return true;
	}
	struct buf shown = {0};
	buf_put_printable(&shown, kv, strlen(kv));
	fprintf(stderr, "thermlog run: --tag %s: %s\n", shown.data, err);
	buf_finish(&shown);
	free(err);
	return false;
}

/* --- the wrapper ---------------------------------------------------------------------------- */

static int wrap(struct cli_context *ctx, struct run_args *a, int argc, char **argv) {
	char *sock = cli_daemon_socket(ctx);
	if (!sock) {
		return CLI_EXIT_USAGE;
	}
	struct buf tags = {0};
	runtag_list_json(&a->tags, &tags);
	struct cli_wrap w = {.cmd = "run",
			     .sock = sock,
			     .label = a->label,
			     .tags = tags.data,
			     .timeout_ms = a->timeout_ms,
			     .argv = argv,
			     .argc = argc};
	struct cli_wrap_result r;
	int rc = cli_wrap_run(ctx, &w, &a->metrics, &r);
	if (rc == CLI_EXIT_OK) {
		rc = r.exit_code;
	}
	cli_wrap_result_finish(&r);
	buf_finish(&tags);
	free(sock);
	return rc;
}

/* --- start and stop ------------------------------------------------------------------------- */

static int start(struct cli_context *ctx, struct run_args *a) {
	if (!a->label) {
		fprintf(stderr, "thermlog run start: --label is required\n");
		return CLI_EXIT_USAGE;
	}
	// A run watched through a process that is not there would only end as lost.
	if (a->pid_given && kill((pid_t)a->pid, 0) < 0 && errno == ESRCH) {
		fprintf(stderr, "thermlog run start: --pid %" PRId64 ": no such process\n", a->pid);
		return CLI_EXIT_USAGE;
	}
	int rc;
	char *sock = cli_daemon_serving(ctx, "run start", "no run was started", &rc);
	if (!sock) {
		return rc;
	}
	char request_id[33];
	cli_request_id(request_id);
	struct buf tags_json = {0};
	runtag_list_json(&a->tags, &tags_json);
	char *tags = buf_steal(&tags_json);
	struct buf body = {0};
	// This process exits at once: the run is watched only through --pid ("pid": null: none).
	struct runwire_start start = {.label = a->label,
				      .tags = tags,
				      .has_pid = true,
				      .pid = a->pid_given ? a->pid : 0,
				      .request_id = request_id};
	runwire_start_write(&start, &body);
	free(tags);
	struct cli_reply r = {0};
	rc = CLI_EXIT_FAILURE;
	if (cli_daemon_request(sock, "run start", "/api/v1/runs", body.data, 201, true,
			       ": no run was started", &r)) {
		char *id = cli_reply_field(r.body, "id");
		if (id) {
			printf("%s\n", id);
			rc = CLI_EXIT_OK;
		} else {
			cli_daemon_refused("run start", &r);
		}
		free(id);
	}
	free(r.body);
	buf_finish(&body);
	free(sock);
	return rc;
}

static int stop(struct cli_context *ctx, const char *id_text, int exit_code, const char *status,
		const struct runmetric_set *metrics) {
	char *end;
	errno = 0;
	long long id = strtoll(id_text, &end, 10);
	if (errno || *end || id <= 0) {
		fprintf(stderr, "thermlog run stop: '%s' is not a run id\n", id_text);
		return CLI_EXIT_USAGE;
	}
	int rc;
	char *sock = cli_daemon_serving(ctx, "run stop", "no run was stopped", &rc);
	if (!sock) {
		return rc;
	}
	struct runwire_stop how = {.has_exit_code = exit_code >= 0,
				   .exit_code = exit_code,
				   .rss_max_bytes = -1,
				   .metrics = *metrics}; // borrowed: written, never freed here
	how.has_status = status && run_status_parse(status, &how.status);
	struct buf body = {0};
	runwire_stop_write(&how, &body);
	char *path = xasprintf("/api/v1/runs/%lld/stop", id);
	struct cli_reply r = {0};
	rc = CLI_EXIT_FAILURE;
	if (cli_daemon_request(sock, "run stop", path, body.data, 200, false, "", &r)) {
		printf("%s", r.body);
		cli_metrics_not_recorded("run stop", r.body, metrics);
		rc = CLI_EXIT_OK;
	}
	free(r.body);
	free(path);
	buf_finish(&body);
	free(sock);
	return rc;
}

static const char usage_text[] =
	"usage: thermlog run [--label L] [--tag K=V]... [--metric NAME=VALUE[UNIT]]...\n"
	"                    [--timeout DUR] -- CMD [ARGS...]\n"
	"       thermlog run start --label L [--tag K=V]... [--pid PID]\n"
	"       thermlog run stop ID (--exit N | --status ok|failed) [--metric NAME=VALUE[UNIT]]...\n"
	"\n"
	"Records a run through thermlogd's socket (runs.socket). The wrapper exits with\n"
	"CMD's status (128+N when a signal N ended it) and runs CMD even when the daemon\n"
	"is not reachable. CMD may write its own metrics, lines \"NAME VALUE [UNIT]\" or\n"
	"one JSON object, to the file $THERMLOG_METRICS names. See thermlog(1).\n";

enum { OPT_TIMEOUT = 512, OPT_PID, OPT_EXIT, OPT_STATUS, OPT_METRIC };

static const struct option run_options[] = {
	CLI_OPTION_LABEL,
	CLI_OPTION_TAG,
	{"metric", required_argument, NULL, OPT_METRIC},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"pid", required_argument, NULL, OPT_PID},
	{"exit", required_argument, NULL, OPT_EXIT},
	{"status", required_argument, NULL, OPT_STATUS},
	CLI_OPTION_HELP,
	{0},
};

/* What `thermlog run` (start, stop) was given besides its run_args. */
struct run_cli {
	struct run_args a;
	const char *cmd; // "run", "run start" or "run stop": what --metric's messages say
	int exit_code;   // --exit, -1 without
	const char *status;
	bool timeout_given, exit_given;
};

/* --exit @arg of `thermlog @cmd` into o->exit_code: false after the message. */
static bool exit_option(struct run_cli *o, const char *cmd, const char *arg) {
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || *end || !*arg || v < 0 || v > 255) {
		fprintf(stderr, "thermlog %s: --exit %s: expected 0..255\n", cmd, arg);
		return false;
	}
	o->exit_code = (int)v;
	o->exit_given = true;
	return true;
}

/* One option of `thermlog run` into @o: false after its message. */
static bool run_option(struct run_cli *o, int c, const char *arg) {
	char *end;
	switch (c) {
	case CLI_OPT_LABEL:
		if (!jobcsv_label_valid(arg)) {
			fprintf(stderr, "thermlog run: --label: expected " JOBCSV_LABEL_RULE "\n");
			return false;
		}
		o->a.label = arg;
		return true;
	case CLI_OPT_TAG:
		return add_tag(&o->a, arg);
	case OPT_METRIC:
		return add_metric(&o->a, o->cmd, arg);
	case OPT_TIMEOUT:
		if (!timefmt_parse_duration_ms(arg, &o->a.timeout_ms) || o->a.timeout_ms <= 0) {
			fprintf(stderr,
				"thermlog run: --timeout %s: expected a duration such as 30s or "
				"25m\n",
				arg);
			return false;
		}
		o->timeout_given = true;
		return true;
	case OPT_PID:
		errno = 0;
		o->a.pid = strtoll(arg, &end, 10);
		if (errno || *end || o->a.pid <= 0 || o->a.pid > INT_MAX) {
			fprintf(stderr, "thermlog run: --pid %s: expected a process id\n", arg);
			return false;
		}
		o->a.pid_given = true;
		return true;
	case OPT_EXIT:
		return exit_option(o, "run", arg);
	default: // OPT_STATUS
		if (strcmp(arg, "ok") != 0 && strcmp(arg, "failed") != 0) {
			fprintf(stderr, "thermlog run: --status %s: expected ok or failed\n", arg);
			return false;
		}
		o->status = arg;
		return true;
	}
}

/* `thermlog run stop`: the id may come before or after the options ("run stop 12 --exit 3"). */
static int stop_cmd(struct cli_context *ctx, struct run_cli *o, int argc, char **argv) {
	const char *stop_id = NULL;
	while (optind < argc) {
		if (stop_id) {
			fprintf(stderr, "thermlog run stop: unexpected argument '%s'\n",
				argv[optind]);
			return CLI_EXIT_USAGE;
		}
		stop_id = argv[optind++];
		int c;
		while ((c = getopt_long(argc, argv, "+", run_options, NULL)) != -1) {
			bool good;
			if (c == OPT_EXIT) {
				good = exit_option(o, "run stop", optarg);
			} else if (c == OPT_STATUS &&
				   (strcmp(optarg, "ok") == 0 || strcmp(optarg, "failed") == 0)) {
				o->status = optarg;
				good = true;
			} else if (c == OPT_METRIC) {
				good = add_metric(&o->a, "run stop", optarg);
			} else {
				fputs(usage_text, stderr);
				good = false;
			}
			if (!good) {
				return CLI_EXIT_USAGE;
			}
		}
	}
	if (!stop_id || o->exit_given == (o->status != NULL) || o->a.label || o->a.tags.n ||
	    o->timeout_given || o->a.pid_given) {
		fprintf(stderr, "thermlog run stop: needs ID and one of --exit N or --status "
				"ok|failed\n");
		return CLI_EXIT_USAGE;
	}
	return stop(ctx, stop_id, o->exit_code, o->status, &o->a.metrics);
}

/* `thermlog run [options] -- CMD [ARGS...]`: the @rest words of @args after the options. */
static int wrap_cmd(struct cli_context *ctx, struct run_cli *o, int rest, char **args) {
	if (rest == 0 || o->a.pid_given || o->exit_given || o->status) {
		fputs(usage_text, stderr);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(args[0], "--") == 0) {
		args++;
		rest--;
	}
	if (rest == 0) {
		fputs(usage_text, stderr);
		return CLI_EXIT_USAGE;
	}
	char **cmd = xcalloc((size_t)rest + 1, sizeof(*cmd));
	memcpy(cmd, args, (size_t)rest * sizeof(*cmd));
	int rc = wrap(ctx, &o->a, rest, cmd);
	free(cmd);
	return rc;
}

int cli_run(struct cli_context *ctx, int argc, char **argv) {
	struct run_cli o = {.cmd = "run", .exit_code = -1};
	int rc = CLI_EXIT_USAGE;
	int c;
	// "run start ..." and "run stop ...": the word comes first, its options after it.
	const char *sub =
		argc > 1 && (strcmp(argv[1], "start") == 0 || strcmp(argv[1], "stop") == 0)
			? argv[1]
			: NULL;
	if (sub) {
		o.cmd = strcmp(sub, "stop") == 0 ? "run stop" : "run start";
		argv++;
		argc--;
	}
	// "+": options end at the command, whose own options are its business.
	while ((c = getopt_long(argc, argv, "+", run_options, NULL)) != -1) {
		if (c == 'h' || c == '?') { // --help, or an option getopt_long refused
			rc = cli_usage(c, usage_text);
			goto out;
		}
		if (!run_option(&o, c, optarg)) {
			goto out;
		}
	}
	int rest = argc - optind;
	if (sub && strcmp(sub, "start") == 0) {
		if (rest > 0 || o.timeout_given || o.exit_given || o.status || o.a.metrics.n) {
			fprintf(stderr,
				"thermlog run start: takes --label, --tag and --pid only (a run's "
				"metrics come with its stop: run stop ID --metric ...)\n");
			goto out;
		}
		rc = start(ctx, &o.a);
	} else if (sub) {
		rc = stop_cmd(ctx, &o, argc, argv);
	} else {
		rc = wrap_cmd(ctx, &o, rest, argv + optind);
	}
out:
	runtag_list_finish(&o.a.tags);
	runmetric_set_finish(&o.a.metrics);
	return rc;
}

/* --- runs metric ---------------------------------------------------------------------------- */

static const char metric_usage[] =
	"usage: thermlog runs metric ID NAME=VALUE[UNIT]...\n"
	"Adds metrics to run ID (running or ended) through thermlogd's socket (runs.socket):\n"
	"figures known only after the run, such as an output's deviation checked later. A\n"
	"metric without a unit takes the one recorded for its name; another unit is refused.\n";

int cli_runs_metric(struct cli_context *ctx, int argc, char **argv) {
	static const struct option longopts[] = {CLI_OPTION_HELP, {0}};
	int c;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		return cli_usage(c, metric_usage);
	}
	if (argc - optind < 2) {
		fputs(metric_usage, stderr);
		return CLI_EXIT_USAGE;
	}
	char *end;
	errno = 0;
	long long id = strtoll(argv[optind], &end, 10);
	if (errno || *end || id <= 0) {
		fprintf(stderr, "thermlog runs metric: '%s' is not a run id\n", argv[optind]);
		return CLI_EXIT_USAGE;
	}
	struct run_args a = {0};
	int rc = CLI_EXIT_USAGE;
	for (int i = optind + 1; i < argc; i++) {
		if (!add_metric(&a, "runs metric", argv[i])) {
			goto out;
		}
	}
	char *sock = cli_daemon_serving(ctx, "runs metric", "no metric was recorded", &rc);
	if (!sock) {
		goto out;
	}
	struct buf body = {0};
	runwire_metrics_write(&a.metrics, &body);
	char *path = xasprintf("/api/v1/runs/%lld/metrics", id);
	struct cli_reply r = {0};
	rc = CLI_EXIT_FAILURE;
	if (cli_daemon_request(sock, "runs metric", path, body.data, 200, true,
			       ": no metric was recorded", &r)) {
		printf("%s", r.body);
		rc = CLI_EXIT_OK;
	}
	free(r.body);
	free(path);
	buf_finish(&body);
	free(sock);
out:
	runmetric_set_finish(&a.metrics);
	return rc;
}
