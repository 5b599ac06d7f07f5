/*
 * The CLI's dispatch and set-up, side by side (git's commands[] and run_builtin()): each entry
 * of a command table says what its command needs (the configuration, the database and how);
 * the command asks for it once its options are read (cli_setup(), so --help and a usage error
 * need no database), it is made once, and the dispatcher releases it when the command returns.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boardfacts.h"
#include "store.h"
#include "xalloc.h"

/*
 * Loads the configuration the context names into @cfg (initialized here): -c FILE must exist;
 * the default path is optional. Errors are printed; returns false on any.
 */
static bool load_config(const struct cli_context *ctx, struct config *cfg) {
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

const struct cli_command *cli_command_find(const struct cli_command *table, size_t n,
					   const char *name) {
	for (size_t i = 0; i < n; i++) {
		if (strcmp(table[i].name, name) == 0) {
			return &table[i];
		}
	}
	return NULL;
}

/* What cli_setup() made for the command that ends: the database closed, the configuration. */
static void release(struct cli_context *ctx) {
	store_close(ctx->store);
	ctx->store = NULL;
	if (ctx->config_loaded) {
		config_finish(&ctx->cfg);
		ctx->config_loaded = ctx->config_bad = false;
	}
}

int cli_dispatch(struct cli_context *ctx, const struct cli_command *cmd, int argc, char **argv) {
	size_t len = strlen(ctx->cmd);
	snprintf(ctx->cmd + len, sizeof(ctx->cmd) - len, "%s%s", len ? " " : "", cmd->name);
	ctx->needs = cmd->needs;
	optind = 0; // getopt anew for the command's own options
	int rc = cmd->run(ctx, argc, argv);
	release(ctx);
	ctx->cmd[len] = '\0';
	return rc;
}

bool cli_subcommand(struct cli_context *ctx, const struct cli_command *table, size_t n, int argc,
		    char **argv, int *rc) {
	const struct cli_command *sub = argc > 1 ? cli_command_find(table, n, argv[1]) : NULL;
	if (sub) {
		*rc = cli_dispatch(ctx, sub, argc - 1, argv + 1);
	}
	return sub != NULL;
}

const struct config *cli_config(struct cli_context *ctx) {
	if (!ctx->config_loaded) {
		ctx->config_loaded = true;
		ctx->config_bad = !load_config(ctx, &ctx->cfg);
	}
	return ctx->config_bad ? NULL : &ctx->cfg;
}

const char *cli_store_path(struct cli_context *ctx) {
	const struct config *cfg = cli_config(ctx);
	return !cfg ? NULL : ctx->db_path ? ctx->db_path : cfg->database;
}

int cli_setup(struct cli_context *ctx) {
	if (ctx->needs == CLI_NEEDS_NONE) {
		return CLI_EXIT_OK;
	}
	const char *path = cli_store_path(ctx);
	if (!path) {
		return CLI_EXIT_USAGE; // the configuration's errors are printed
	}
	if (ctx->needs == CLI_NEEDS_CONFIG || ctx->store) {
		return CLI_EXIT_OK;
	}
	// Reading, or writing into an existing database: a missing one is an error, not created.
	if (ctx->needs != CLI_NEEDS_WRITE && access(path, F_OK) != 0) {
		fprintf(stderr, "thermlog %s: no database at %s (--db PATH names another)\n",
			ctx->cmd, path);
		return CLI_EXIT_FAILURE;
	}
	enum store_mode mode = ctx->needs == CLI_NEEDS_READ ? STORE_MODE_READ : STORE_MODE_WRITE;
	if (store_open(&ctx->store, path, mode) < 0) { // logs why
		ctx->store = NULL;
		fprintf(stderr, "thermlog %s: could not open the database %s\n", ctx->cmd, path);
		return CLI_EXIT_FAILURE;
	}
	return CLI_EXIT_OK;
}

void cli_keep_board(struct cli_context *ctx, const char *cmd) {
	int rc = ctx->store && ctx->config_loaded && !ctx->config_bad
			 ? boardfacts_keep_declared(ctx->store, &ctx->cfg)
			 : 0;
	if (rc < 0) {
		fprintf(stderr,
			"thermlog %s: imported, but the board's description was not kept: %s\n",
			cmd, strerror(-rc));
	}
}
