/*
 * How every command reads its options: --help, a refused option, an operand it does not take,
 * and the values of the options several commands share, each with the one message for it.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli-stats.h"
#include "cli.h"
#include "timefmt.h"

int cli_usage(int opt, const char *usage) {
	bool help = opt == 'h';
	fputs(usage, help ? stdout : stderr);
	return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
}

bool cli_no_operand(const char *cmd, int argc, char **argv) {
	if (optind < argc) {
		fprintf(stderr, "thermlog %s: unexpected argument '%s'\n", cmd, argv[optind]);
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
