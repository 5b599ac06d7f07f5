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

struct command {
	const char *name;
	int (*run)(const struct cli_context *ctx, int argc, char **argv);
	const char *summary;
};

static int cmd_version(const struct cli_context *ctx, int argc, char **argv) {
	printf("thermlog %s\n", THERMLOG_VERSION);
	return CLI_EXIT_OK;
}

/* One line per command; each lives in its own file in src/cli/. */
static const struct command commands[] = {
	{"version", cmd_version, "print the version"},
	{"sample", cli_sample, "read every channel once and print it"},
	{"check-config", cmd_check_config, "validate the configuration file"},
	{"stats", cli_stats, "exact statistics per channel over a window"},
	{"peak", cli_peak, "the cycles around a channel's maximum, with every channel"},
	{"channels", cli_channels, "every known channel with first/last seen"},
	{"export", cli_export, "write samples as CSV (long or wide)"},
	{"import", cli_import, "load samples from a long-format CSV file"},
	{"backup", cli_backup, "write a consistent copy of the database"},
	{"repair", cli_repair, "remove cycles a clock glitch stamped in the future"},
	{"run", cli_run, "record a command (or a start/stop pair) as a run through the daemon"},
	{"lifetime", cli_lifetime, "capacitor life from the stored history (or 'lifetime calc')"},
	{"runs", cli_runs, "the runs stored (or 'runs show|stats|import|compare')"},
	{"throttle", cli_throttle, "throttle episodes per frequency domain over a window"},
	{"report", cli_report, "a window's figures as one HTML or Markdown document (-o FILE)"},
};

static void usage(FILE *out) {
	fprintf(out, "usage: thermlog [-c FILE] [--db PATH] [-v] COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		fprintf(out, "  %-14s %s\n", commands[i].name, commands[i].summary);
	}
	fprintf(out, "\nglobal options:\n"
		     "  -c, --config FILE  configuration (default " CONFIG_DEFAULT_PATH ")\n"
		     "  --db PATH          database (default: the configured one)\n"
		     "  -v, --verbose      debug logging\n"
		     "  --version, --help\n"
		     "\n'thermlog COMMAND --help' describes a command.\n");
}

bool cli_load_config(const struct cli_context *ctx, struct config *cfg) {
	config_init(cfg);
	const char *path = ctx->config_path;
	if (!path) {
		if (access(CONFIG_DEFAULT_PATH, F_OK) != 0) {
			return true; // no installed config: defaults
		}
		path = CONFIG_DEFAULT_PATH;
	}
	char *errors = NULL;
	if (!config_load(cfg, path, &errors)) {
		fputs(errors, stderr);
		free(errors);
		return false;
	}
	return true;
}

const char *cli_db_path(const struct cli_context *ctx, const struct config *cfg) {
	return ctx->db_path ? ctx->db_path : cfg->database;
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
	for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++) {
		if (strcmp(rest[0], commands[c].name) == 0) {
			optind = 0; // reset getopt for the command's own parsing
			rc = commands[c].run(&ctx, n, rest);
			goto out;
		}
	}
	fprintf(stderr, "thermlog: unknown command '%s' (see thermlog --help)\n", rest[0]);
out:
	rc = output_checked(n > 0 ? rest[0] : "", rc);
	free(rest);
	return rc;
}
