/*
 * How every command reads its options: --help, a refused option, an operand it does not take,
 * and the values of the options several commands share, each with the one message for it.
 */
#include "cli-options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "timefmt.h"
#include "xalloc.h"

int cli_usage(int opt, const char *usage) {
	bool help = opt == 'h';
	fputs(usage, help ? stdout : stderr);
	return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}

bool cli_no_operand(const char *cmd, const char *usage, int argc, char **argv) {
	if (optind < argc) {
		fprintf(stderr, "thermlog %s: unexpected argument '%s'\n%s", cmd, argv[optind],
			usage);
		return false;
	}
	return true;
}

bool cli_read_options(const char *cmd, const char *usage, const char *shortopts,
		      const struct option *longopts, const struct plain_option *plain,
		      cli_option_fn *take, void *state, int argc, char **argv, int *rc) {
	int opt;
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		int taken = plain_option_keep(plain, opt, optarg) ? 1
			    : take                                ? take(state, opt, optarg)
								  : 0;
		if (taken <= 0) {
			*rc = taken < 0 ? CLI_EXIT_USAGE : cli_usage(opt, usage);
			return false;
		}
	}
	if (!cli_no_operand(cmd, usage, argc, argv)) {
		*rc = CLI_EXIT_USAGE;
		return false;
	}
	return true;
}

bool cli_time_option(const char *cmd, const char *option, const char *arg, int64_t now,
		     int64_t *ts) {
	if (!timefmt_parse_time(arg, now, ts)) {
		fprintf(stderr,
			"thermlog %s: bad time for %s: '%s' (use 2026-08-20T00:00:00Z, 2026-08-20, "
			"unix seconds, -24h or now)\n",
			cmd, option, arg);
		return false;
	}
	return true;
}

bool cli_percentile_option(const char *cmd, const char *arg, double *list, size_t *n, size_t most) {
	char *end;
	double v = strtod(arg, &end);
	if (end == arg || *end || !(v >= 0 && v <= 100)) {
		fprintf(stderr, "thermlog %s: bad percentile '%s' (a number from 0 to 100)\n", cmd,
			arg);
		return false;
	}
	if (*n == most) {
		fprintf(stderr, "thermlog %s: at most %zu --percentile options\n", cmd, most);
		return false;
	}
	list[(*n)++] = v;
	return true;
}

bool cli_weight_option(const char *cmd, const char *arg, enum query_weight *weight) {
	if (!query_weight_parse(arg, weight)) {
		fprintf(stderr, "thermlog %s: bad --weight '%s' (samples or time)\n", cmd, arg);
		return false;
	}
	return true;
}

bool cli_over_option(const char *cmd, const char *arg, double *over_s) {
	int64_t ms;
	if (!timefmt_parse_duration_ms(arg, &ms)) {
		fprintf(stderr,
			"thermlog %s: bad duration for --over: '%s' (e.g. 30m, 1h30m, 90s)\n", cmd,
			arg);
		return false;
	}
	*over_s = (double)ms / 1000.0;
	return true;
}

void cli_window_init(struct cli_window *w) {
	*w = (struct cli_window){0};
	w->p.percentiles = w->percentiles;
}

void cli_window_finish(struct cli_window *w) {
	free(w->channels);
	*w = (struct cli_window){0};
}

int cli_window_option(struct cli_window *w, const char *cmd, int opt, const char *arg,
		      int64_t now) {
	switch (opt) {
	case CLI_OPT_FROM:
	case CLI_OPT_TO: {
		int64_t ts;
		if (!cli_time_option(cmd, opt == CLI_OPT_FROM ? "--from" : "--to", arg, now, &ts)) {
			return -1;
		}
		if (opt == CLI_OPT_FROM) {
			w->p.from = ts;
			w->p.has_from = true;
		} else {
			w->p.to = ts;
			w->p.has_to = true;
		}
		return 1;
	}
	case CLI_OPT_CHANNEL:
		w->channels = xgrow(w->channels, &w->cap_channels, w->p.n_channels + 1,
				    sizeof(*w->channels));
		w->channels[w->p.n_channels++] = arg;
		w->p.channels = w->channels;
		return 1;
	case CLI_OPT_PERCENTILE:
		return cli_percentile_option(cmd, arg, w->percentiles, &w->p.n_percentiles,
					     QUERY_MAX_PERCENTILES)
			       ? 1
			       : -1;
	case CLI_OPT_UNSYNCED:
		w->p.include_unsynced = true;
		return 1;
	case CLI_OPT_INTERVAL: {
		int64_t ms;
		if (!timefmt_parse_duration_ms(arg, &ms) || ms < 1000) {
			fprintf(stderr, "thermlog %s: bad interval '%s' (e.g. 60s, 1m)\n", cmd,
				arg);
			return -1;
		}
		w->p.interval_s = ms / 1000;
		return 1;
	}
	default:
		return 0;
	}
}

bool cli_window_check(struct cli_context *ctx, const struct cli_window *w, const char *cmd,
		      int64_t now) {
	static const char *const names[] = {"--from", "--to"};
	if (!w->p.has_from && !w->p.has_to) {
		return true; // the whole stored history, bounded by what is stored
	}
	const struct config *cfg = cli_config(ctx);
	if (!cfg) {
		return false;
	}
	// As in the API: an end left out is now (--to) or the limit does not apply (--from),
	// except to the stretch after now that a --to alone adds (--to 2999-01-01).
	static const char *const ahead[] = {"now", "--to"};
	bool to_alone_ahead = !w->p.has_from && w->p.to > now;
	int64_t from = w->p.has_from ? w->p.from : to_alone_ahead ? now : INT64_MIN;
	int64_t to = w->p.has_to ? w->p.to : now;
	char *err = NULL;
	int bad;
	int rc = query_window_check(from, to, !w->p.has_to,
				    w->p.has_from || to_alone_ahead ? cfg->http.max_window_s : 0,
				    to_alone_ahead ? ahead : names, &bad, &err);
	if (rc < 0) {
		fprintf(stderr, "thermlog %s: %s\n", cmd, err);
		free(err);
		return false;
	}
	return true;
}

int cli_query_failed(const char *cmd, int rc, char *err) {
	fprintf(stderr, "thermlog %s: %s\n", cmd, err ? err : strerror(-rc));
	free(err);
	return rc == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
}

int cli_document_option(struct cli_document *d, const char *cmd, int opt, const char *arg) {
	if (opt == 'o') {
		d->output = arg;
	} else if (opt == CLI_OPT_FORCE) {
		d->force = true;
	} else if (opt != CLI_OPT_FORMAT) {
		return 0;
	} else if (report_format_parse(arg, &d->format)) {
		d->has_format = true;
	} else {
		fprintf(stderr, "thermlog %s: bad --format '%s' (html or md)\n", cmd, arg);
		return -1;
	}
	return 1;
}

void cli_document_format(struct cli_document *d) {
	if (!d->has_format) {
		d->format = report_format_of_path(d->output);
	}
}
