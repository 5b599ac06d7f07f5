/* How every command ends its options: --help, a refused option, an operand it does not take. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

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
