/* thermlog stats, peak and channels: window statistics from the database, as tables or JSON. */
#include "cli-stats.h"

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
#include "timefmt.h"
#include "xalloc.h"

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
		if (!timefmt_parse_time(arg, now, &ts)) {
			fprintf(stderr,
				"thermlog %s: bad time for %s: '%s' (use 2026-08-20T00:00:00Z, "
				"2026-08-20, unix seconds, -24h or now)\n",
				cmd, opt == CLI_OPT_FROM ? "--from" : "--to", arg);
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
	case CLI_OPT_PERCENTILE: {
		char *end;
		double v = strtod(arg, &end);
		if (end == arg || *end || !(v >= 0 && v <= 100)) {
			fprintf(stderr,
				"thermlog %s: bad percentile '%s' (a number from 0 to 100)\n", cmd,
				arg);
			return -1;
		}
		if (w->p.n_percentiles == QUERY_MAX_PERCENTILES) {
			fprintf(stderr, "thermlog %s: at most %d --percentile options\n", cmd,
				QUERY_MAX_PERCENTILES);
			return -1;
		}
		w->percentiles[w->p.n_percentiles++] = v;
		return 1;
	}
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

bool cli_window_check(const struct cli_context *ctx, const struct cli_window *w, const char *cmd,
		      int64_t now) {
	static const char *const names[] = {"--from", "--to"};
	if (!w->p.has_from && !w->p.has_to) {
		return true; // the whole stored history, bounded by what is stored
	}
	struct config cfg;
	if (!cli_load_config(ctx, &cfg)) {
		config_finish(&cfg);
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
				    w->p.has_from || to_alone_ahead ? cfg.http.max_window_s : 0,
				    to_alone_ahead ? ahead : names, &bad, &err);
	config_finish(&cfg);
	if (rc < 0) {
		fprintf(stderr, "thermlog %s: %s\n", cmd, err);
		free(err);
		return false;
	}
	return true;
}

int cli_open_store(const struct cli_context *ctx, const char *cmd, enum store_mode mode,
		   struct store **store) {
	struct config cfg;
	if (!cli_load_config(ctx, &cfg)) {
		config_finish(&cfg);
		return CLI_EXIT_USAGE;
	}
	const char *path = cli_db_path(ctx, &cfg);
	int rc = CLI_EXIT_OK;
	if (mode == STORE_MODE_READ && access(path, F_OK) != 0) {
		fprintf(stderr, "thermlog %s: no database at %s (--db PATH names another)\n", cmd,
			path);
		rc = CLI_EXIT_FAILURE;
	} else if (store_open(store, path, mode) < 0) { // logs why
		fprintf(stderr, "thermlog %s: could not open the database %s\n", cmd, path);
		rc = CLI_EXIT_FAILURE;
	}
	config_finish(&cfg);
	return rc;
}

char *cli_store_path(const struct cli_context *ctx) {
	struct config cfg;
	bool good = cli_load_config(ctx, &cfg);
	char *path = good ? xstrdup(cli_db_path(ctx, &cfg)) : NULL;
	config_finish(&cfg);
	return path;
}

int cli_query_failed(const char *cmd, int rc, char *err) {
	fprintf(stderr, "thermlog %s: %s\n", cmd, err ? err : strerror(-rc));
	free(err);
	return rc == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
}

/* Writes @b to stdout; a failed write (a full disk, a closed pipe) is a failure. */
static int emit(const char *cmd, struct buf *b) {
	if (b->len && fwrite(b->data, 1, b->len, stdout) != b->len) {
		fprintf(stderr, "thermlog %s: could not write the output\n", cmd);
		return CLI_EXIT_FAILURE;
	}
	return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

enum query_kind { QUERY_STATS, QUERY_PEAK, QUERY_CHANNELS };

/* Options of peak alone. */
enum { PEAK_OPT_WITH = 512, PEAK_OPT_AROUND, PEAK_OPT_WIDE };

static void usage(FILE *out, enum query_kind kind) {
	switch (kind) {
	case QUERY_STATS:
		fputs("usage: thermlog stats [--from T] [--to T] [--channel KEY|GLOB]... "
		      "[--percentile P]... [--include-unsynced] [--interval D] [--json]\n"
		      "Count, coverage, mean, population stddev, min, median, p95 and max per "
		      "channel;\npercentiles interpolate linearly between closest ranks (numpy's "
		      "default).\nT: 2026-08-20T00:00:00Z, 2026-08-20, unix seconds, -24h, now "
		      "(default: all history).\n"
		      "Exact at each channel's resolution (values are stored as integer multiples "
		      "of it):\nwhole hours are read from exact hourly histograms, the rest from "
		      "raw samples, with\nthe same results. Cycles with an unsynced clock are "
		      "left out and counted unless\n--include-unsynced. --interval D sets the "
		      "expected cycle spacing for coverage\n(default: the median spacing).\n",
		      out);
		break;
	case QUERY_PEAK:
		fputs("usage: thermlog peak --channel KEY|LABEL [--samples N | --around DUR]\n"
		      "                    [--with KEY|GLOB|LABEL]... [--wide] [--from T] [--to T]\n"
		      "                    [--include-unsynced] [--json]\n"
		      "The N cycles (default 30) centred on the channel's maximum, or those within\n"
		      "DUR (e.g. 15m) of it, with the companion channels --with names (default: every\n"
		      "channel). The table fits 100 columns, showing as many companions as fit;\n"
		      "--wide shows them all with their full keys.\n",
		      out);
		break;
	case QUERY_CHANNELS:
		fputs("usage: thermlog channels [--channel KEY|GLOB]... [--json]\n"
		      "Every known channel with first/last seen and present/absent.\n",
		      out);
		break;
	}
}

static int run_query(const struct cli_context *ctx, int argc, char **argv, enum query_kind kind) {
	static const struct option options[] = {
		{"from", required_argument, NULL, CLI_OPT_FROM},
		{"to", required_argument, NULL, CLI_OPT_TO},
		{"channel", required_argument, NULL, CLI_OPT_CHANNEL},
		{"percentile", required_argument, NULL, CLI_OPT_PERCENTILE},
		{"include-unsynced", no_argument, NULL, CLI_OPT_UNSYNCED},
		{"interval", required_argument, NULL, CLI_OPT_INTERVAL},
		{"samples", required_argument, NULL, CLI_OPT_SAMPLES},
		{"with", required_argument, NULL, PEAK_OPT_WITH},
		{"around", required_argument, NULL, PEAK_OPT_AROUND},
		{"wide", no_argument, NULL, PEAK_OPT_WIDE},
		{"json", no_argument, NULL, CLI_OPT_JSON},
		{"help", no_argument, NULL, 'h'},
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
		bool allowed = kind == QUERY_STATS  ? !peak_only
			       : kind == QUERY_PEAK ? opt != CLI_OPT_PERCENTILE
						    : opt == CLI_OPT_CHANNEL || opt == CLI_OPT_JSON;
		if (opt == 'h') {
			usage(stdout, kind);
			rc = CLI_EXIT_OK;
			goto out;
		}
		if (opt == '?' || !allowed) {
			if (opt != '?') {
				fprintf(stderr, "thermlog %s: option %s does not apply\n", cmd,
					argv[optind - 1]);
			}
			usage(stderr, kind);
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
		if (cli_window_option(&w, cmd, opt, optarg, now) < 0) {
			goto out;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "thermlog %s: unexpected argument '%s'\n", cmd, argv[optind]);
		usage(stderr, kind);
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
	struct store *store;
	if ((rc = cli_open_store(ctx, cmd, STORE_MODE_READ, &store)) != CLI_EXIT_OK) {
		goto out;
	}
	struct buf b;
	buf_init(&b);
	char *err = NULL;
	int qrc;
	if (json) {
		struct json j;
		json_init(&j, &b, false);
		qrc = kind == QUERY_STATS  ? query_stats_json(store, &w.p, &j, &err)
		      : kind == QUERY_PEAK ? query_peak_json(store, &w.p, &j, &err)
					   : query_channels_json(store, &w.p, &j, &err);
		buf_putc(&b, '\n');
	} else {
		qrc = kind == QUERY_STATS  ? query_stats_text(store, &w.p, &b, &err)
		      : kind == QUERY_PEAK ? query_peak_text(store, &w.p, &b, &err)
					   : query_channels_text(store, &w.p, &b, &err);
	}
	rc = qrc < 0 ? cli_query_failed(cmd, qrc, err) : emit(cmd, &b);
	buf_finish(&b);
	store_close(store);
out:
	free(with);
	cli_window_finish(&w);
	return rc;
}

int cli_stats(const struct cli_context *ctx, int argc, char **argv) {
	return run_query(ctx, argc, argv, QUERY_STATS);
}

int cli_peak(const struct cli_context *ctx, int argc, char **argv) {
	return run_query(ctx, argc, argv, QUERY_PEAK);
}

int cli_channels(const struct cli_context *ctx, int argc, char **argv) {
	return run_query(ctx, argc, argv, QUERY_CHANNELS);
}
