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

enum { OPT_DROP_AFTER = 512, OPT_DRY_RUN, OPT_MIGRATE };

/* What repair's options say. */
struct repair_args {
	int64_t now, after;
	bool have_after, dry_run, migrate;
};

static int repair_option(void *state, int opt, char *arg) {
	struct repair_args *a = state;
	if (opt != OPT_DROP_AFTER) {
		return 0; // --help, or an option getopt_long refused
	}
	if (!cli_time_option("repair", "--drop-after", arg, a->now, &a->after)) {
		return -1;
	}
	a->have_after = true;
	return 1;
}

int cli_repair(struct cli_context *ctx, int argc, char **argv) {
	static const struct option longopts[] = {
		{"drop-after", required_argument, NULL, OPT_DROP_AFTER},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		{"migrate", no_argument, NULL, OPT_MIGRATE},
		CLI_OPTION_HELP,
		{0},
	};
	struct repair_args a = {.now = (int64_t)time(NULL)};
	const struct plain_option plain[] = {
		{OPT_DRY_RUN, NULL, &a.dry_run},
		{OPT_MIGRATE, NULL, &a.migrate},
		{0},
	};
	int rc;
	if (!cli_read_options("repair", usage_text, "h", longopts, plain, repair_option, &a, argc,
			      argv, &rc)) {
		return rc;
	}
	if (a.migrate && (a.have_after || a.dry_run)) {
		fprintf(stderr, "thermlog repair: --migrate takes no other option\n%s", usage_text);
		return CLI_EXIT_USAGE;
	}
	if (a.migrate) {
		return migrate(ctx);
	}
	if (!a.have_after) {
		fprintf(stderr, "thermlog repair: --drop-after TIME or --migrate is required\n%s",
			usage_text);
		return CLI_EXIT_USAGE;
	}
	// An existing database only (CLI_NEEDS_UPDATE): never an empty one created.
	rc = cli_setup(ctx);
	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	struct store_drop drop;
	if (store_drop_after(ctx->store, a.after, a.dry_run, &drop) < 0) { // logs why
		fprintf(stderr, "thermlog repair: nothing was changed\n");
		return CLI_EXIT_FAILURE;
	}
	char at[TIMEFMT_ISO_LEN], first[TIMEFMT_ISO_LEN], last[TIMEFMT_ISO_LEN];
	timefmt_iso(a.after, at);
	if (drop.cycles == 0) {
		printf("no cycles after %s: nothing to remove\n", at);
		return CLI_EXIT_OK;
	}
	timefmt_iso(drop.first, first);
	timefmt_iso(drop.last, last);
	printf("%s %" PRId64 " cycles after %s (%s .. %s) and %" PRId64 " hourly rollups\n",
	       a.dry_run ? "would remove" : "removed", drop.cycles, at, first, last, drop.rollups);
	return CLI_EXIT_OK;
}
