/* thermlog repair: removes cycles a clock glitch stamped in the future (see thermlog(1)). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli-options.h"
#include "cli.h"
#include "store.h"
#include "timefmt.h"

static const char usage_text[] =
	"usage: thermlog repair --drop-after TIME [--dry-run]\n"
	"Removes every cycle stamped after TIME (e.g. now, 2026-08-20T12:00:00Z, -1h),\n"
	"with its raw values and the rollups of the hours after it. --dry-run only counts.\n";

int cli_repair(struct cli_context *ctx, int argc, char **argv) {
	enum { OPT_DROP_AFTER = 512, OPT_DRY_RUN };
	static const struct option longopts[] = {
		{"drop-after", required_argument, NULL, OPT_DROP_AFTER},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		CLI_OPTION_HELP,
		{0},
	};
	int64_t now = (int64_t)time(NULL), after = 0;
	bool have_after = false, dry_run = false;
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_DROP_AFTER:
			if (!cli_time_option("repair", "--drop-after", optarg, now, &after)) {
				return CLI_EXIT_USAGE;
			}
			have_after = true;
			break;
		case OPT_DRY_RUN:
			dry_run = true;
			break;
		default: // --help, or an option getopt_long refused
			return cli_usage(c, usage_text);
		}
	}
	if (!cli_no_operand("repair", usage_text, argc, argv)) {
		return CLI_EXIT_USAGE;
	}
	if (!have_after) {
		fprintf(stderr, "thermlog repair: --drop-after TIME is required\n%s", usage_text);
		return CLI_EXIT_USAGE;
	}
	// An existing database only (CLI_NEEDS_UPDATE): never an empty one created.
	int rc = cli_setup(ctx);
	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	struct store_drop drop;
	if (store_drop_after(ctx->store, after, dry_run, &drop) < 0) { // logs why
		fprintf(stderr, "thermlog repair: nothing was changed\n");
		return CLI_EXIT_FAILURE;
	}
	char at[TIMEFMT_ISO_LEN], first[TIMEFMT_ISO_LEN], last[TIMEFMT_ISO_LEN];
	timefmt_iso(after, at);
	if (drop.cycles == 0) {
		printf("no cycles after %s: nothing to remove\n", at);
		return CLI_EXIT_OK;
	}
	timefmt_iso(drop.first, first);
	timefmt_iso(drop.last, last);
	printf("%s %" PRId64 " cycles after %s (%s .. %s) and %" PRId64 " hourly rollups\n",
	       dry_run ? "would remove" : "removed", drop.cycles, at, first, last, drop.rollups);
	return CLI_EXIT_OK;
}
