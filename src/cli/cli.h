/* The thermlog CLI: global options and one function per command (one file each in src/cli/). */
#ifndef CLI_H
#define CLI_H

#include <getopt.h>
#include <stdbool.h>

#include "config.h"
#include "plainopt.h"

/* Exit codes of every command. */
#define CLI_EXIT_OK      0
#define CLI_EXIT_FAILURE 1 // the command ran and failed (database, I/O)
#define CLI_EXIT_USAGE   2 // bad arguments or configuration

/*
 * Option values for getopt_long, above every short option's character; each command lists the
 * ones it takes, the shared ones through the CLI_OPTION_* entries below.
 */
enum {
	CLI_OPT_FROM = 256,
	CLI_OPT_TO,
	CLI_OPT_CHANNEL,
	CLI_OPT_PERCENTILE,
	CLI_OPT_UNSYNCED,
	CLI_OPT_JSON,
	CLI_OPT_SAMPLES,
	CLI_OPT_FORMAT,
	CLI_OPT_SKIP_BAD,
	CLI_OPT_INTERVAL,
	CLI_OPT_TIME_UNIT,
	CLI_OPT_FORCE,
	CLI_OPT_WEIGHT,
	CLI_OPT_OVER,
	CLI_OPT_LABEL,
	CLI_OPT_TAG,
};

/*
 * The getopt_long entries (struct option) of the options several commands take, each spelled
 * once: the same name, argument and value wherever it is accepted.
 */
// clang-format off
#define CLI_OPTIONS_FROM_TO   {"from", required_argument, NULL, CLI_OPT_FROM}, \
			      {"to", required_argument, NULL, CLI_OPT_TO}
#define CLI_OPTION_CHANNEL    {"channel", required_argument, NULL, CLI_OPT_CHANNEL}
#define CLI_OPTION_PERCENTILE {"percentile", required_argument, NULL, CLI_OPT_PERCENTILE}
#define CLI_OPTION_UNSYNCED   {"include-unsynced", no_argument, NULL, CLI_OPT_UNSYNCED}
#define CLI_OPTION_INTERVAL   {"interval", required_argument, NULL, CLI_OPT_INTERVAL}
#define CLI_OPTION_SAMPLES    {"samples", required_argument, NULL, CLI_OPT_SAMPLES}
#define CLI_OPTION_JSON       {"json", no_argument, NULL, CLI_OPT_JSON}
#define CLI_OPTION_FORMAT     {"format", required_argument, NULL, CLI_OPT_FORMAT}
#define CLI_OPTION_SKIP_BAD   {"skip-bad", no_argument, NULL, CLI_OPT_SKIP_BAD}
#define CLI_OPTION_TIME_UNIT  {"time-unit", required_argument, NULL, CLI_OPT_TIME_UNIT}
#define CLI_OPTION_WEIGHT     {"weight", required_argument, NULL, CLI_OPT_WEIGHT}
#define CLI_OPTION_OVER       {"over", required_argument, NULL, CLI_OPT_OVER}
/* A run's label and a KEY=VALUE tag (runtag.h) it carries. */
#define CLI_OPTION_LABEL      {"label", required_argument, NULL, CLI_OPT_LABEL}
#define CLI_OPTION_TAG        {"tag", required_argument, NULL, CLI_OPT_TAG}
/* -o FILE (--output FILE) and --force: a file written as src/cli/output.c writes it. */
#define CLI_OPTIONS_OUTPUT    {"output", required_argument, NULL, 'o'}, \
			      {"force", no_argument, NULL, CLI_OPT_FORCE}
#define CLI_OPTION_HELP       {"help", no_argument, NULL, 'h'}
// clang-format on

struct store;

/* What a command needs before its work, said by its entry in a command table (command.c). */
enum cli_needs {
	CLI_NEEDS_NONE,   // neither the configuration nor the database
	CLI_NEEDS_CONFIG, // the configuration (cli_config())
	CLI_NEEDS_READ,   // that and an existing database, read-only (ctx->store)
	CLI_NEEDS_WRITE,  // that and the database for writing, created if missing
	CLI_NEEDS_UPDATE, // that and an existing database for writing (never created)
};

struct cli_context {
	const char *config_path; // -c FILE, or NULL = the default path if it exists
	const char *db_path;     // --db PATH, or NULL = the configured database
	/* The command running (cli_dispatch()) and what cli_setup() made for it. */
	char cmd[64]; // its name, a subcommand's after its command's: "runs stats"
	enum cli_needs needs;
	struct store *store; // the database after cli_setup() (CLI_NEEDS_READ and on), else NULL
	struct config cfg;   // read through cli_config()
	bool config_loaded, config_bad;
};

/** A command: its name, its function, what it needs and its line in --help. */
struct cli_command {
	const char *name;
	int (*run)(struct cli_context *ctx, int argc, char **argv);
	enum cli_needs needs;
	const char *summary;
};

/** The entry of @table (@n entries) named @name, or NULL. */
const struct cli_command *cli_command_find(const struct cli_command *table, size_t n,
					   const char *name);
/**
 * Runs @cmd with @argc/@argv (argv[0] its name): ctx->cmd and ctx->needs said, getopt reset;
 * what cli_setup() made is released when it returns. Returns the command's exit code.
 */
int cli_dispatch(struct cli_context *ctx, const struct cli_command *cmd, int argc, char **argv);
/**
 * When argv[1] names an entry of the subcommand table @table (@n entries), dispatches it with
 * the arguments from there and says true, its exit code in *@rc; else false.
 */
bool cli_subcommand(struct cli_context *ctx, const struct cli_command *table, size_t n, int argc,
		    char **argv, int *rc);
/**
 * What the running command's entry says it needs, made once, after its options are read:
 * CLI_EXIT_OK, or the exit code after the message (a bad configuration, no database, one that
 * does not open).
 */
int cli_setup(struct cli_context *ctx);
/**
 * After a command that wrote the database (@cmd: an import): keeps the configuration's board:
 * and roles: in it (boardfacts.h), so a database of imported logs names its board; a failure
 * is said, the import stands.
 */
void cli_keep_board(struct cli_context *ctx, const char *cmd);
/** The configuration, loaded once; NULL after printing its errors. */
const struct config *cli_config(struct cli_context *ctx);
/** The database path (--db, else the configuration's); NULL when the configuration is bad. */
const char *cli_store_path(struct cli_context *ctx);

/**
 * The answer to the option @opt that ends a command's parsing: --help ('h') prints @usage on
 * stdout and gives CLI_EXIT_OK; any other (one getopt_long refused) prints it on stderr and
 * gives CLI_EXIT_USAGE.
 */
int cli_usage(int opt, const char *usage);
/**
 * Whether no operand follows the options getopt_long has read; false after printing
 * "thermlog CMD: unexpected argument 'ARG'" and @usage on stderr, alike for every command.
 */
bool cli_no_operand(const char *cmd, const char *usage, int argc, char **argv);

/*
 * Takes option @opt (its argument @arg) of a command into @state: 1 if taken, 0 if it is none
 * of the command's (--help, or one getopt_long refused), -1 after printing why @arg is bad.
 */
typedef int cli_option_fn(void *state, int opt, char *arg);

/**
 * Reads the options of @cmd, which takes no operand: getopt_long over @argv with @shortopts and
 * @longopts; an option of the list @plain is kept there (plain_option_keep()), any other given to
 * @take (NULL: none) with @state. True when they are read and the command goes on; false when it
 * ends with *@rc: --help and a refused option as cli_usage() answers with @usage, a bad value
 * with CLI_EXIT_USAGE, an operand as cli_no_operand() refuses it.
 */
bool cli_read_options(const char *cmd, const char *usage, const char *shortopts,
		      const struct option *longopts, const struct plain_option *plain,
		      cli_option_fn *take, void *state, int argc, char **argv, int *rc);

/* Each command gets argv[0] = its name and the arguments after global options are removed. */

/** thermlog sample [--sysfs-root DIR] [--json]: one reading of every channel, nothing stored. */
int cli_sample(struct cli_context *ctx, int argc, char **argv);
/** thermlog check-config [FILE]: prints "configuration OK" (exit 0) or every error (exit 2). */
int cmd_check_config(struct cli_context *ctx, int argc, char **argv);
/* stats area: cli/stats.c, cli/export.c */
int cli_stats(struct cli_context *ctx, int argc, char **argv);
int cli_peak(struct cli_context *ctx, int argc, char **argv);
int cli_channels(struct cli_context *ctx, int argc, char **argv);
int cli_export(struct cli_context *ctx, int argc, char **argv);
int cli_import(struct cli_context *ctx, int argc, char **argv);
int cli_backup(struct cli_context *ctx, int argc, char **argv);
/** thermlog repair --drop-after TIME [--dry-run]: removes cycles stamped after TIME. */
int cli_repair(struct cli_context *ctx, int argc, char **argv);

/**
 * thermlog lifetime [--from T] [--to T] [--include-unsynced] [--json]: every configured
 * capacitor from the stored history; `thermlog lifetime calc ...`: the calculator, no database.
 */
int cli_lifetime(struct cli_context *ctx, int argc, char **argv);

/**
 * thermlog runs [--label L] [--from T] [--to T] [--json], and its subcommands show ID, stats,
 * import FILE and compare --label L OTHER.db (src/cli/runs.c).
 */
int cli_runs(struct cli_context *ctx, int argc, char **argv);

/**
 * thermlog run [--label L] [--tag K=V]... [--timeout DUR] -- CMD [ARGS...]: runs CMD as a
 * recorded run and exits with its status; `run start` prints a new run's id, `run stop ID`
 * ends it. Through the daemon's socket (runs.socket).
 */
int cli_run(struct cli_context *ctx, int argc, char **argv);

/**
 * thermlog runs metric ID NAME=VALUE[UNIT]...: adds metrics to run ID through the daemon's
 * socket, as `thermlog run` sends its own (src/cli/run.c).
 */
int cli_runs_metric(struct cli_context *ctx, int argc, char **argv);

/**
 * thermlog throttle [--from T] [--to T] [--domain GLOB] [--json]: the throttle episodes of a
 * window and each domain's totals (src/cli/throttle.c).
 */
int cli_throttle(struct cli_context *ctx, int argc, char **argv);

/**
 * thermlog report [--from T] [--to T] [--label L]... [--over DUR] [--compare OTHER.db]
 * [--format html|md] -o FILE [--force]: the window's figures as one document (src/cli/report.c).
 */
int cli_report(struct cli_context *ctx, int argc, char **argv);

/**
 * thermlog campaign check|run|list|show|burst: a suite of steps run as recorded runs behind a
 * thermal gate, resumable (src/cli/campaign.c, campaign-run.c).
 */
int cli_campaign(struct cli_context *ctx, int argc, char **argv);

#endif
