/*
 * thermlog repair: removes cycles a clock glitch stamped in the future, or converts a database
 * an older thermlog wrote at once (see thermlog(1)).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli-options.h"
#include "cli.h"
#include "store.h"
#include "timefmt.h"

static const char usage_text[] =
	"usage: thermlog repair --drop-after TIME [--dry-run]\n"
	"       thermlog repair --migrate\n"
	"Removes every cycle stamped after TIME (e.g. now, 2026-08-20T12:00:00Z, -1h),\n"
	"with its raw values and the rollups of the hours after it. --dry-run only counts.\n"
	"--migrate converts a database an older thermlog wrote now, as thermlogd does a slice a\n"
	"cycle: its history compacted, every day checked against the old rollups, the old\n"
	"tables dropped. It can be interrupted at any point and run again.\n";

/* Converts the database at once: maintenance steps until none is left. */
static int migrate(struct cli_context *ctx) {
	// An existing database only (CLI_NEEDS_UPDATE): never an empty one created.
	int rc = cli_setup(ctx);
	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	struct store *store = ctx->store;
	struct store_convert state;
	if (store_convert_state(store, &state) == 0 && state.failed[0]) {
		store_convert_retry(store); // checked again from the first day
	}
	bool converting = false;
	int step;
	while ((step = store_maintain_some(store, (int64_t)time(NULL), 0, 1000)) == 1) {
		if (!converting) {
			printf("converting...\n");
			fflush(stdout);
			converting = true;
		}
	}
	if (step < 0 || store_convert_state(store, &state) < 0) {
		fprintf(stderr,
			"thermlog repair: the conversion stopped (it resumes where it did)\n");
		return CLI_EXIT_FAILURE;
	}
	if (state.failed[0]) {
		fprintf(stderr,
			"thermlog repair: the converted history differs from the old one: %s; "
			"the old tables are kept\n",
			state.failed);
		return CLI_EXIT_FAILURE;
	}
	printf("%s\n", state.converting ? "the database is being converted"
					: "the database is in the current format");
	return state.converting ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

int cli_repair(struct cli_context *ctx, int argc, char **argv) {
	enum { OPT_DROP_AFTER = 512, OPT_DRY_RUN, OPT_MIGRATE };
	static const struct option longopts[] = {
		{"drop-after", required_argument, NULL, OPT_DROP_AFTER},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		{"migrate", no_argument, NULL, OPT_MIGRATE},
		CLI_OPTION_HELP,
		{0},
	};
	int64_t now = (int64_t)time(NULL), after = 0;
	bool have_after = false, dry_run = false, do_migrate = false;
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
		case OPT_MIGRATE:
			do_migrate = true;
			break;
		default: // --help, or an option getopt_long refused
			return cli_usage(c, usage_text);
		}
	}
	if (!cli_no_operand("repair", usage_text, argc, argv)) {
		return CLI_EXIT_USAGE;
	}
	if (do_migrate && (have_after || dry_run)) {
		fprintf(stderr, "thermlog repair: --migrate takes no other option\n%s", usage_text);
		return CLI_EXIT_USAGE;
	}
	if (do_migrate) {
		return migrate(ctx);
	}
	if (!have_after) {
		fprintf(stderr, "thermlog repair: --drop-after TIME or --migrate is required\n%s",
			usage_text);
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
