/* thermlog: the command-line front end. Global options may come before or after the command. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "version.h"
#include "xalloc.h"

static int cmd_version(struct cli_context *ctx, int argc, char **argv) {
	printf("thermlog %s\n", THERMLOG_VERSION);
	return CLI_EXIT_OK;
}

/* A command, what it needs (cli_setup()) and its line of --help; each lives in its own file. */
// clang-format off
static const struct cli_command commands[] = {
	{"version", cmd_version, CLI_NEEDS_NONE,
	 "print the version"},
	{"sample", cli_sample, CLI_NEEDS_CONFIG,
	 "read every channel once and print it"},
	{"check-config", cmd_check_config, CLI_NEEDS_NONE,
	 "validate the configuration file"},
	{"stats", cli_stats, CLI_NEEDS_READ,
	 "exact statistics per channel over a window"},
	{"peak", cli_peak, CLI_NEEDS_READ,
	 "the cycles around a channel's maximum, with every channel"},
	{"channels", cli_channels, CLI_NEEDS_READ,
	 "every known channel with first/last seen"},
	{"export", cli_export, CLI_NEEDS_READ,
	 "write samples as CSV (long or wide)"},
	{"import", cli_import, CLI_NEEDS_WRITE,
	 "load samples from a long-format CSV file"},
	{"backup", cli_backup, CLI_NEEDS_READ,
	 "write a consistent copy of the database"},
	{"repair", cli_repair, CLI_NEEDS_UPDATE,
	 "remove cycles a clock glitch stamped in the future"},
	{"run", cli_run, CLI_NEEDS_CONFIG,
	 "record a command (or a start/stop pair) as a run through the daemon"},
	{"lifetime", cli_lifetime, CLI_NEEDS_READ,
	 "capacitor life from the stored history (or 'lifetime calc')"},
	{"runs", cli_runs, CLI_NEEDS_READ,
	 "the runs stored (or 'runs show|stats|import|compare')"},
	{"throttle", cli_throttle, CLI_NEEDS_READ,
	 "throttle episodes per frequency domain over a window"},
	{"campaign", cli_campaign, CLI_NEEDS_NONE,
	 "a suite of steps run as gated, resumable runs (campaign check|run|list|show)"},
	{"report", cli_report, CLI_NEEDS_READ,
	 "a window's figures as one HTML or Markdown document (-o FILE)"},
};
// clang-format on

#define COMMANDS_N (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out) {
	fprintf(out, "usage: thermlog [-c FILE] [--db PATH] [-v] COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < COMMANDS_N; i++) {
		fprintf(out, "  %-14s %s\n", commands[i].name, commands[i].summary);
	}
	fprintf(out, "\nglobal options:\n"
		     "  -c, --config FILE  configuration (default " CONFIG_DEFAULT_PATH ")\n"
		     "  --db PATH          database (default: the configured one)\n"
		     "  -v, --verbose      debug logging\n"
		     "  --version, --help\n"
		     "\n'thermlog COMMAND --help' describes a command.\n");
}

/* Takes a global option at argv[*i] (and its value) out of the list; false if not one. */
static bool take_global(struct cli_context *ctx, int argc, char **argv, int *i, int *err) {
	const char *arg = argv[*i];
	const char **slot = NULL;
	const char *inline_value = NULL;
	if (strcmp(arg, "-c") == 0 || strcmp(arg, "--config") == 0) {
		slot = &ctx->config_path;
	} else if (strncmp(arg, "--config=", 9) == 0) {
		slot = &ctx->config_path;
		inline_value = arg + 9;
	} else if (strcmp(arg, "--db") == 0) {
		slot = &ctx->db_path;
	} else if (strncmp(arg, "--db=", 5) == 0) {
		slot = &ctx->db_path;
		inline_value = arg + 5;
	} else if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
		log_set_level(LOG_LEVEL_DEBUG);
		return true;
	} else {
		return false;
	}
	if (inline_value) {
		*slot = inline_value;
	} else if (*i + 1 < argc) {
		*slot = argv[++*i];
	} else {
		fprintf(stderr, "thermlog: option %s needs a value\n", arg);
		*err = 1;
	}
	return true;
}

/*
 * Every command's output is checked in one place: what could not be written (a full disk, a
 * closed pipe) makes a command that succeeded fail, with the reason.
 */
static int output_checked(const char *cmd, int rc) {
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout)) {
		return rc;
	}
	fprintf(stderr, "thermlog%s%s: could not write the output: %s\n", *cmd ? " " : "", cmd,
		errno ? strerror(errno) : "write error");
	return rc == CLI_EXIT_OK ? CLI_EXIT_FAILURE : rc;
}

int main(int argc, char **argv) {
	log_init(LOG_LEVEL_WARN);
	struct cli_context ctx = {0};
	char **rest = xcalloc((size_t)argc + 1, sizeof(*rest));
	int n = 0, err = 0;
	bool after_dashdash = false;
	for (int i = 1; i < argc; i++) {
		if (!after_dashdash && strcmp(argv[i], "--") == 0) {
			after_dashdash = true;
			rest[n++] = argv[i];
		} else if (after_dashdash || !take_global(&ctx, argc, argv, &i, &err)) {
			rest[n++] = argv[i];
		}
	}
	int rc = CLI_EXIT_USAGE;
	if (err) {
		goto out;
	}
	if (n == 0 || strcmp(rest[0], "--help") == 0 || strcmp(rest[0], "-h") == 0 ||
	    strcmp(rest[0], "help") == 0) {
		usage(n == 0 ? stderr : stdout);
		rc = n == 0 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
		goto out;
	}
	if (strcmp(rest[0], "--version") == 0) {
		printf("thermlog %s\n", THERMLOG_VERSION);
		rc = CLI_EXIT_OK;
		goto out;
	}
	const struct cli_command *cmd = cli_command_find(commands, COMMANDS_N, rest[0]);
	if (cmd) {
		rc = cli_dispatch(&ctx, cmd, n, rest);
		goto out;
	}
	fprintf(stderr, "thermlog: unknown command '%s' (see thermlog --help)\n", rest[0]);
out:
	rc = output_checked(n > 0 ? rest[0] : "", rc);
	free(rest);
	return rc;
}
