/* thermlog check-config: validates a configuration file and prints every error with its place. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"

static const char usage_text[] =
	"usage: thermlog check-config [FILE]\n"
	"\n"
	"Validates FILE (default: -c FILE, else " CONFIG_DEFAULT_PATH ") and prints\n"
	"'configuration OK', or each error as FILE:LINE:COLUMN: problem, including\n"
	"what the daemon would refuse at start (a listen address off loopback without\n"
	"a token, a short token, unreadable token_file, tls_cert or tls_key), and\n"
	"'warning: ' lines for what may not be meant (a capacitor's in_service before\n"
	"1990 or in the future) without changing the exit status.\n"
	"Exit status: 0 valid, 2 invalid or unreadable.\n";

int cmd_check_config(struct cli_context *ctx, int argc, char **argv) {
	static const struct option options[] = {
		CLI_OPTION_HELP,
		{0},
	};
	int opt;
	if ((opt = getopt_long(argc, argv, "+h", options, NULL)) != -1) {
		return cli_usage(opt, usage_text); // --help, or an option getopt_long refused
	}
	if (argc - optind > 1) {
		fputs(usage_text, stderr);
		return CLI_EXIT_USAGE;
	}
	const char *path = optind < argc ? argv[optind] : ctx->config_path;
	if (!path) {
		path = CONFIG_DEFAULT_PATH;
		if (access(path, F_OK) != 0) {
			// The daemon runs on its defaults then; say so rather than fail.
			printf("configuration OK (%s does not exist: the built-in defaults apply)\n",
			       path);
			return CLI_EXIT_OK;
		}
	}
	struct config cfg;
	config_init(&cfg);
	char *errors = NULL;
	// The same whole-configuration checks the daemon applies at start and on reload.
	bool good = config_load(&cfg, path, &errors) && config_validate(&cfg, &errors);
	char *warnings = good ? config_warnings(&cfg, (int64_t)time(NULL)) : NULL;
	config_finish(&cfg);
	if (!good) {
		fputs(errors, stderr);
		free(errors);
		return CLI_EXIT_USAGE;
	}
	for (char *line = warnings ? strtok(warnings, "\n") : NULL; line;
	     line = strtok(NULL, "\n")) {
		fprintf(stderr, "warning: %s\n", line);
	}
	free(warnings);
	printf("configuration OK\n");
	return CLI_EXIT_OK;
}
