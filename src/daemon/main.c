/*
 * thermlogd: options, signals, the wall-clock-aligned timer loop, start and stop. The work of
 * one cycle is the recorder's (recorder.c), the demo's board and database are demo.c's; this
 * file wires them to the HTTP server and systemd. See docs/DAEMON.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "boardfacts.h"
#include "boardinfo.h"
#include "clock.h"
#include "config.h"
#include "demo.h"
#include "grid.h"
#include "json.h"
#include "live.h"
#include "log.h"
#include "notify.h"
#include "plainopt.h"
#include "recorder.h"
#include "runsock.h"
#include "sampler.h"
#include "server.h"
#include "sim.h"
#include "simboard.h"
#include "source.h"
#include "steptime.h"
#include "timefmt.h"
#include "version.h"
#include "xalloc.h"

#define EXIT_USAGE       2
#define TRIM_INTERVAL_MS (10 * 60 * 1000) // trim_heap() at most this often after the start

struct options {
	const char *config_path; // -c FILE; NULL = the default path if it exists
	const char *sysfs_root, *debugfs_root, *db, *interval, *listen;
	bool check_config, demo;
	uint64_t seed;
	const char *board, *time_scale; // --demo --board SPEC [--time-scale N]
};

struct daemon {
	struct options opt;
	struct config *cfg; // heap, so the borrowed pointers stay valid until a reload swaps it
	char *db_path;
	struct recorder *recorder;
	struct sampler *sampler;
	struct live *live;
	struct server *server;
	struct runsock *runs; // runs: the socket's requests, fast samples, watched processes
	char *runs_socket;    // the socket file we created, removed at exit
	int lock_fd;          // flock()ed PATH.lock: one daemon per database
	int db_lock_fd;       // the database file flock()ed too (its other names), or -1
	bool lost_lock;       // the database was recreated and another daemon locked it first
	struct notify *notify;
	struct demo demo; // --demo: the simulated board and its database
	char boot_id[CLOCK_BOOT_ID_LEN];
	int sfd;                 // signalfd: SIGTERM, SIGINT, SIGHUP
	int tfd;                 // the schedule: CLOCK_BOOTTIME timerfd, absolute deadlines
	const char *offset_file; // $THERMLOG_TEST_CLOCK_OFFSET_FILE, test hook
	struct grid grid;        // the wall-clock grid: the slot armed, the last one acted on
	int64_t busy_max_ms; // the loop's longest step (poll to poll) since the last cycle began
	struct steptime busy_stage; // that step's longest stage
	struct steptime stage;      // the current step's longest stage so far
	int64_t trimmed_mono_ms;    // the last trim_heap(), boot clock ms
	uint64_t trimmed_completed; // server_completed() at the last trim_heap()
	bool ready;
	bool url_printed;
};

/* --- time --------------------------------------------------------------------------------- */

static int64_t clock_ms(clockid_t id) {
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The boot clock: monotonic, and it keeps counting through suspend. */
static int64_t mono_ms(void) {
	return clock_ms(CLOCK_BOOTTIME);
}

/*
 * Wall-clock ms. The test hook: when $THERMLOG_TEST_CLOCK_OFFSET_FILE names a file, its
 * content (signed seconds) is added, read anew each time, so a test can step the clock.
 */
static int64_t wall_ms(const struct daemon *d) {
	int64_t now = clock_ms(CLOCK_REALTIME);
	if (d->offset_file) {
		FILE *f = fopen(d->offset_file, "re");
		long long off = 0;
		if (f) {
			if (fscanf(f, "%lld", &off) == 1) {
				now += off * 1000;
			}
			fclose(f);
		}
	}
	return now;
}

/* --- one cycle ----------------------------------------------------------------------------- */

static void detect_step(struct daemon *d, int64_t now_wall_ms, int64_t now_mono_ms) {
	int64_t step_ms = grid_wake(&d->grid, now_wall_ms, now_mono_ms);
	if (llabs(step_ms) >= GRID_STEP_NOTICE_MS) {
		log_notice("the wall clock stepped %s by %lld s", step_ms > 0 ? "forward" : "back",
			   llabs(step_ms) / 1000);
	}
}

static void print_url(struct daemon *d) {
	if (!d->opt.demo || d->url_printed || !d->server) {
		return;
	}
	char url[64];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/", server_port(d->server));
	// the address and the commands last on the terminal, once the first cycle is stored;
	// stderr before the URL on stdout, which scripts wait for
	demo_print_commands(&d->demo, d->runs_socket != NULL, url);
	printf("%s\n", url);
	fflush(stdout);
	d->url_printed = true;
}

static int relock_db(struct daemon *d);

/* One cycle through the recorder, then what systemd and the demo's user are told. */
static void run_cycle(struct daemon *d, int64_t slot_ms, int64_t now_mono_ms) {
	struct recorder_result res;
	recorder_tick(d->recorder, slot_ms, now_mono_ms, &res);
	steptime_merge(&d->stage, &res.longest);
	int64_t t = steptime_now_ms();
	if (d->opt.demo) {
		demo_runs(&d->demo, d->runs, slot_ms, now_mono_ms); // the tree holds slot_ms now
		t = steptime_end(&d->stage, "the demo's runs", t);
	}
	if (res.reopened) {
		relock_db(d);
		server_restart(d->server, d->cfg);
		runsock_set_store(d->runs, recorder_store(d->recorder));
		t = steptime_end(&d->stage, "restarting the HTTP server on the new database", t);
	}
	if (res.skipped || (d->ready && !notify_active(d->notify))) {
		return; // the rest is the status line and the first cycle's messages
	}
	char iso[TIMEFMT_ISO_LEN];
	timefmt_iso(res.ts, iso);
	if (res.queued > 0) {
		notify_sendf(d->notify,
			     "STATUS=last cycle %s, %zu channels, %zu cycles waiting for the disk",
			     iso, res.n, res.queued);
	} else {
		notify_sendf(d->notify, "STATUS=last cycle %s, %zu channels, clock %s", iso, res.n,
			     clock_state_name(res.clock));
	}
	if (res.stored && !d->ready) {
		d->ready = true;
		notify_send(d->notify, "READY=1");
		log_info("first cycle stored at %s: %zu channels", iso, res.n);
		print_url(d);
	}
}

/*
 * Gives the heap's free pages back to the kernel, which glibc would keep resident: once after
 * the start's peak (migrations, rollups, the demo's backfill, the first cycle), then after a
 * cycle in which HTTP requests finished (what their answers freed does not stay between
 * cycles), else every TRIM_INTERVAL_MS. malloc_trim() walks the free chunks: tens of
 * microseconds on this heap, at most once a cycle.
 */
static void trim_heap(struct daemon *d, int64_t now_mono_ms) {
	malloc_trim(0);
	d->trimmed_mono_ms = now_mono_ms;
	d->trimmed_completed = server_completed(d->server);
}

/* --- configuration ------------------------------------------------------------------------- */

static bool apply_overrides(const struct options *opt, struct config *cfg, char **errors) {
	if (opt->sysfs_root) {
		free(cfg->sysfs_root);
		cfg->sysfs_root = xstrdup(opt->sysfs_root);
	}
	if (opt->debugfs_root) {
		free(cfg->debugfs_root);
		cfg->debugfs_root = xstrdup(opt->debugfs_root);
	}
	if (opt->db) {
		free(cfg->database);
		cfg->database = xstrdup(opt->db);
	}
	if (opt->listen) {
		free(cfg->http.listen);
		cfg->http.listen = xstrdup(opt->listen);
		cfg->http.listen_at = (struct config_mark){0};
	}
	if (opt->interval) {
		int64_t ms;
		if (!timefmt_parse_duration_ms(opt->interval, &ms) || ms < 1000 || ms > 86400000) {
			*errors = xasprintf(
				"--interval %s: expected a duration from 1s to 1d, e.g. 60s",
				opt->interval);
			return false;
		}
		cfg->interval_ms = ms;
	}
	return true;
}

/* Whether systemd passed a listening socket (sd_listen_fds(3)); activated_fd() takes it. */
static bool activated_fd_present(void) {
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	return pid && fds && strtoll(pid, NULL, 10) == (long long)getpid() && strcmp(fds, "1") == 0;
}

/* Loads the configuration the options name into a new heap config; NULL with errors printed. */
static struct config *load_config(const struct options *opt) {
	struct config *cfg = xcalloc(1, sizeof(*cfg));
	config_init(cfg);
	char *errors = NULL;
	const char *path = opt->config_path;
	struct stat st;
	if (!path && stat(CONFIG_DEFAULT_PATH, &st) == 0) {
		path = CONFIG_DEFAULT_PATH;
	}
	bool ok = !path || config_load(cfg, path, &errors);
	ok = ok && apply_overrides(opt, cfg, &errors);
	// Socket activation decides the address itself; http_create checks that case.
	ok = ok && (activated_fd_present() || config_validate(cfg, &errors));
	if (!ok) {
		log_error("configuration rejected:");
		for (char *line = errors ? strtok(errors, "\n") : NULL; line;
		     line = strtok(NULL, "\n")) {
			log_error("  %s", line);
		}
		free(errors);
		config_finish(cfg);
		free(cfg);
		return NULL;
	}
	free(errors);
	char *warnings = config_warnings(cfg, (int64_t)time(NULL));
	for (char *line = warnings ? strtok(warnings, "\n") : NULL; line;
	     line = strtok(NULL, "\n")) {
		log_warn("%s", line);
	}
	free(warnings);
	return cfg;
}

/* --- start and stop ------------------------------------------------------------------------ */

/*
 * One daemon per database: an exclusive flock() on PATH.lock, held until exit (the kernel drops
 * it when the process dies, even by SIGKILL). The file holds the owner's pid for the message.
 * SQLite's own locks only serialise transactions; two daemons would interleave their cycles.
 */
static int lock_lockfile(struct daemon *d, const char *lock) {
	d->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (d->lock_fd < 0) {
		int rc = -errno;
		log_error("%s cannot be written: could not create the lock file %s: %s (the daemon "
			  "needs write access to the database's directory)",
			  d->db_path, lock, strerror(errno));
		return rc;
	}
	if (flock(d->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		int rc = -errno;
		if (errno == EWOULDBLOCK) {
			char text[32] = "";
			ssize_t n = pread(d->lock_fd, text, sizeof(text) - 1, 0);
			text[n > 0 ? n : 0] = '\0';
			text[strcspn(text, "\n")] = '\0';
			log_error("the database %s is already in use by another thermlogd (pid %s, "
				  "lock %s): refusing to start a second one",
				  d->db_path, *text ? text : "unknown", lock);
			rc = -EBUSY;
		} else {
			log_error("could not lock %s: %s", lock, strerror(errno));
		}
		return rc;
	}
	char pid[32];
	int len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	// The pid is for messages only: a full disk must not stop the daemon here.
	if (ftruncate(d->lock_fd, 0) < 0 || pwrite(d->lock_fd, pid, (size_t)len, 0) != len) {
		log_debug("could not write the pid to %s: %s", lock, strerror(errno));
	}
	return 0;
}

/*
 * A symlink or hard link names the same file with another PATH.lock: lock the file too (flock,
 * which SQLite's fcntl locks ignore). Closing it would drop SQLite's locks, so it stays open
 * until the store is closed. Created empty when missing (SQLite takes an empty file as a new
 * database), so the first daemon holds it too. O_NONBLOCK: a FIFO must not hang the start.
 */
static int lock_dbfile(struct daemon *d) {
	d->db_lock_fd =
		open(d->db_path, O_RDONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
	struct stat st;
	if (d->db_lock_fd >= 0 && (fstat(d->db_lock_fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(d->db_lock_fd);
		d->db_lock_fd = -1;
	}
	if (d->db_lock_fd >= 0 && flock(d->db_lock_fd, LOCK_EX | LOCK_NB) < 0) {
		int rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		if (rc == -EBUSY) {
			log_error(
				"the database %s is already in use by another thermlogd through "
				"another name (a symlink or hard link to the same file): refusing "
				"to start a second one",
				d->db_path);
		} else {
			log_error("could not lock %s: %s", d->db_path, strerror(-rc));
		}
		return rc;
	}
	return 0;
}

static int lock_db(struct daemon *d) {
	char *lock = xasprintf("%s.lock", d->db_path);
	int rc = lock_lockfile(d, lock);
	free(lock);
	return rc < 0 ? rc : lock_dbfile(d);
}

/* Whether @fd is the file at @path now (same device and inode). */
static bool same_file(int fd, const char *path) {
	struct stat held, now;
	return fd >= 0 && fstat(fd, &held) == 0 && stat(path, &now) == 0 &&
	       held.st_dev == now.st_dev && held.st_ino == now.st_ino;
}

/*
 * The recorder recreated the database (deleted, or the whole directory emptied) or opened what
 * replaced it: the lock file and the database file may be other files now, which no lock
 * covers. Takes what changed again (a second daemon started on them is then refused); -EBUSY,
 * said, when another daemon got them first.
 */
static int relock_db(struct daemon *d) {
	char *lock = xasprintf("%s.lock", d->db_path);
	int rc = 0, old_lock = d->lock_fd, old_db = d->db_lock_fd;
	bool lock_same = same_file(old_lock, lock), db_same = same_file(old_db, d->db_path);
	if (!lock_same && (rc = lock_lockfile(d, lock)) == 0) {
		close(old_lock);
	}
	if (rc == 0 && !db_same && (rc = lock_dbfile(d)) == 0 && old_db >= 0) {
		close(old_db); // the vanished file's: SQLite's connection to it is closed
	}
	free(lock);
	if (rc < 0) {
		log_error("the database %s was recreated and another thermlogd locked it first: "
			  "stopping, as that one writes there now",
			  d->db_path);
		d->lost_lock = true;
	}
	return rc;
}

/* Socket activation (sd_listen_fds(3)): exactly one listening socket at fd 3. */
static int activated_fd(void) {
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	int fd = -1;
	if (pid && fds && strtoll(pid, NULL, 10) == (long long)getpid()) {
		if (strcmp(fds, "1") == 0) {
			fd = 3;
			fcntl(fd, F_SETFD, FD_CLOEXEC);
		} else {
			log_warn("LISTEN_FDS=%s: expected one socket; binding http.listen instead",
				 fds);
		}
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return fd;
}

/*
 * What the configuration declares of the board (board:, roles:) and, at the start, the board as
 * it stands (boardinfo), kept in the database's state, so its report and every comparison with
 * it name the board, its cooling and its clocks (boardfacts.h). A failed write is said and the
 * daemon goes on: the history matters more.
 */
static void keep_board(struct daemon *d, const struct config *cfg, bool recorded) {
	struct store *store = recorder_store(d->recorder);
	int rc = boardfacts_keep_declared(store, cfg);
	if (rc == 0 && recorded) {
		struct buf b = {0};
		struct json j;
		json_init(&j, &b, false);
		boardinfo_json(cfg->sysfs_root, cfg->procfs_root, cfg->debugfs_root, &j);
		// A stop asked during the walk (thousands of devices) leaves it half done: not
		// kept.
		rc = source_stop_pending() ? 0 : boardfacts_keep_recorded(store, b.data);
		buf_finish(&b);
	}
	if (rc < 0) {
		log_warn("could not keep the board's description in the database: %s",
			 strerror(-rc));
	}
}

/* SIGHUP: a new configuration replaces the old only when it loads and the server starts. */
static void reload(struct daemon *d) {
	log_info("reloading the configuration");
	struct config *next = d->opt.demo ? NULL : load_config(&d->opt);
	if (d->opt.demo) {
		log_notice("the demo has no configuration file to reload; rescanning sources");
		sampler_rescan(d->sampler);
		return;
	}
	if (!next) {
		log_error("reload failed: keeping the running configuration");
		return;
	}
	notify_send(d->notify, "RELOADING=1");
	if (strcmp(next->database, d->cfg->database) != 0 && !d->opt.db) {
		log_warn("database path change to %s takes effect at the next restart",
			 next->database);
	}
	if (!server_reload(d->server, d->cfg, next)) {
		log_error("reload failed: the HTTP server does not start with the new "
			  "configuration; keeping the running one");
		config_finish(next);
		free(next);
		notify_send(d->notify, "READY=1");
		return;
	}
	sampler_set_config(d->sampler, next);
	recorder_set_config(d->recorder, next);
	runsock_set_config(d->runs, next);
	server_retire(d->server, d->cfg); // freed when no HTTP request reads it any more
	d->cfg = next;
	keep_board(d, next, false);
	notify_send(d->notify, "READY=1");
	log_info("configuration reloaded");
}

/* --- the demo ------------------------------------------------------------------------------ */

static int demo_setup(struct daemon *d, int64_t now) {
	if (d->opt.config_path) {
		log_warn("the demo uses its own configuration: ignoring -c %s", d->opt.config_path);
	}
	struct simboard_params board;
	if (d->opt.board) {
		simboard_params_default(&board);
		char *err = NULL;
		bool ok = simboard_params_parse(d->opt.board, &board, &err);
		free(err);
		if (ok && d->opt.time_scale) { // parse_args() checked both
			char *spec = xasprintf("time_scale=%s", d->opt.time_scale);
			ok = simboard_params_parse(spec, &board, &err);
			free(err);
			free(spec);
		}
		if (!ok) {
			return -EINVAL;
		}
	}
	int rc = demo_init_board(&d->demo, d->opt.seed, d->opt.db, now,
				 d->opt.board ? &board : NULL);
	if (rc < 0) {
		return rc;
	}
	d->cfg = demo_config(&d->demo, d->opt.interval);
	if (!d->cfg) {
		return -EINVAL;
	}
	struct options o = d->opt; // --db and --listen still apply; the tree and interval are set
	o.sysfs_root = NULL;
	o.debugfs_root = NULL;
	o.interval = NULL;
	char *errors = NULL;
	apply_overrides(&o, d->cfg, &errors); // cannot fail without an interval
	free(errors);
	d->db_path = xstrdup(d->demo.db_path);
	if (d->opt.board) {
		log_info(
			"demo: simulated ROCK 5C answering to work (ambient %g °C, big cores to %lld "
			"MHz, %s, time scale %g) in %s, database %s (seed %" PRIu64 ")",
			board.ambient_c,
			(long long)(board.big_max_khz ? board.big_max_khz / 1000 : 2400),
			board.cooling == SIMBOARD_COOLING_PASSIVE ? "passive cooling" : "fan",
			board.time_scale, sim_root(d->demo.sim), d->db_path, d->opt.seed);
	} else {
		log_info("demo: simulated ROCK 5C in %s, database %s (seed %" PRIu64 ")",
			 sim_root(d->demo.sim), d->db_path, d->opt.seed);
	}
	return 0;
}

/* --- main ---------------------------------------------------------------------------------- */

static void usage(FILE *out) {
	fprintf(out,
		"usage: thermlogd [-c FILE] [--sysfs-root DIR] [--debugfs-root DIR] [--db PATH]\n"
		"                 [--interval DUR] [--listen ADDR:PORT] [--check-config]\n"
		"                 [--demo [--seed N] [--board SPEC [--time-scale N]]]\n"
		"                 [--version] [--help]\n"
		"\n"
		"Samples board telemetry into SQLite and serves it over HTTP.\n"
		"\n"
		"  -c, --config FILE    configuration (default %s, if present)\n"
		"      --sysfs-root DIR read sysfs from DIR instead of /sys\n"
		"      --debugfs-root DIR  read the NPU's and RGA's load files (rknpu/load,\n"
		"                       rkrga/load) under DIR instead of debugfs_root\n"
		"      --db PATH        database (default %s)\n"
		"      --interval DUR   sampling interval, e.g. 60s (1s .. 1d)\n"
		"      --listen A:P     HTTP address, e.g. 127.0.0.1:9470\n"
		"      --check-config   validate the configuration and exit\n"
		"      --demo           simulate a ROCK 5C with a week of history; own database\n"
		"      --seed N         the demo's simulation seed (default 1)\n"
		"      --board SPEC     the demo's board answers to work instead of its timetable:\n"
		"                       ambient=C,big_max=MHZ,cooling=fan|passive (thermlogd(8))\n"
		"      --time-scale N   the board's seconds per second (1 .. 3600, default 1)\n"
		"      --version        print the version\n"
		"      --help           this text\n"
		"\nFlags override the configuration file. See thermlogd(8).\n",
		CONFIG_DEFAULT_PATH, CONFIG_DEFAULT_DATABASE);
}

static int parse_args(int argc, char **argv, struct options *opt) {
	enum {
		OPT_SYSFS = 256,
		OPT_DEBUGFS,
		OPT_DB,
		OPT_INTERVAL,
		OPT_LISTEN,
		OPT_CHECK,
		OPT_DEMO,
		OPT_SEED,
		OPT_BOARD,
		OPT_TIME_SCALE,
		OPT_VERSION,
		OPT_HELP
	};
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"sysfs-root", required_argument, NULL, OPT_SYSFS},
		{"debugfs-root", required_argument, NULL, OPT_DEBUGFS},
		{"db", required_argument, NULL, OPT_DB},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"listen", required_argument, NULL, OPT_LISTEN},
		{"check-config", no_argument, NULL, OPT_CHECK},
		{"demo", no_argument, NULL, OPT_DEMO},
		{"seed", required_argument, NULL, OPT_SEED},
		{"board", required_argument, NULL, OPT_BOARD},
		{"time-scale", required_argument, NULL, OPT_TIME_SCALE},
		{"version", no_argument, NULL, OPT_VERSION},
		{"help", no_argument, NULL, OPT_HELP},
		{0},
	};
	const struct plain_option plain[] = {
		{'c', &opt->config_path, NULL},
		{OPT_SYSFS, &opt->sysfs_root, NULL},
		{OPT_DEBUGFS, &opt->debugfs_root, NULL},
		{OPT_DB, &opt->db, NULL},
		{OPT_INTERVAL, &opt->interval, NULL},
		{OPT_LISTEN, &opt->listen, NULL},
		{OPT_CHECK, NULL, &opt->check_config},
		{OPT_DEMO, NULL, &opt->demo},
		{0},
	};
	bool seed_given = false;
	opt->seed = 1;
	int c;
	while ((c = getopt_long(argc, argv, "c:", longopts, NULL)) != -1) {
		if (plain_option_keep(plain, c, optarg)) {
			continue;
		}
		switch (c) {
		case OPT_SEED: {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-') {
				fprintf(stderr,
					"thermlogd: --seed %s: expected a non-negative integer\n",
					optarg);
				return EXIT_USAGE;
			}
			opt->seed = v;
			seed_given = true;
			break;
		}
		case OPT_BOARD:
		case OPT_TIME_SCALE: {
			struct simboard_params bp;
			simboard_params_default(&bp);
			char *spec = c == OPT_BOARD ? xstrdup(optarg)
						    : xasprintf("time_scale=%s", optarg);
			char *err = NULL;
			bool ok = simboard_params_parse(spec, &bp, &err);
			free(spec);
			if (!ok) {
				fprintf(stderr, "thermlogd: --%s %s: %s\n",
					c == OPT_BOARD ? "board" : "time-scale", optarg, err);
				free(err);
				return EXIT_USAGE;
			}
			*(c == OPT_BOARD ? &opt->board : &opt->time_scale) = optarg;
			break;
		}
		case OPT_VERSION:
			printf("thermlogd %s\n", THERMLOG_VERSION);
			return 0;
		case OPT_HELP:
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "thermlogd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (seed_given && !opt->demo) {
		fprintf(stderr, "thermlogd: --seed only applies to --demo\n");
		return EXIT_USAGE;
	}
	if (opt->board && !opt->demo) {
		fprintf(stderr, "thermlogd: --board only applies to --demo\n");
		return EXIT_USAGE;
	}
	if (opt->time_scale && !opt->board) {
		fprintf(stderr, "thermlogd: --time-scale only applies to --demo --board\n");
		return EXIT_USAGE;
	}
	return -1;
}

/* Arms the timer for the grid's next slot (grid_arm()), from one reading of both clocks. */
static int64_t arm_next(struct daemon *d) {
	struct timespec rt, bt;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	int64_t offset_ms = wall_ms(d) - clock_ms(CLOCK_REALTIME); // the test hook, or 0
	int64_t now_wall_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec + offset_ms * 1000000;
	int64_t now_boot_ns = (int64_t)bt.tv_sec * 1000000000 + bt.tv_nsec;
	struct grid_deadline at = grid_arm(&d->grid, d->cfg->interval_ms, now_wall_ns, now_boot_ns);
	struct itimerspec its = {
		.it_value = {(time_t)(at.boot_ns / 1000000000), (long)(at.boot_ns % 1000000000)},
	};
	timerfd_settime(d->tfd, TFD_TIMER_ABSTIME, &its, NULL);
	return at.slot_ms;
}

/*
 * Says the slots between the last cycle and the one at @slot_ms that no cycle was taken at, and
 * why (grid_skipped()). The loop woke an interval or more late (the process did not run: a
 * starved, stopped or paused machine): cycles missed, counted in health.cycles_missed. The wall
 * clock stepped forward past them: those seconds never came on this clock, nothing is missed (a
 * step of 2 s or more detect_step() has said already).
 */
static void note_skipped(struct daemon *d, int64_t slot_ms, int64_t now_wall_ms,
			 int64_t now_mono_ms) {
	struct grid_skip skip = grid_skipped(&d->grid, slot_ms, now_wall_ms, now_mono_ms);
	if (skip.n == 0) {
		return;
	}
	char from[TIMEFMT_ISO_LEN], to[TIMEFMT_ISO_LEN];
	timefmt_iso(skip.first_ms / 1000, from);
	timefmt_iso(skip.last_ms / 1000, to);
	const char *s = skip.n == 1 ? "" : "s";
	if (skip.stepped) {
		if (skip.stepped_ms < GRID_STEP_NOTICE_MS) {
			log_notice("the wall clock stepped forward by %" PRId64 " ms: %" PRId64
				   " slot%s passed (%s to %s)",
				   skip.stepped_ms, skip.n, s, from, to);
		}
		return;
	}
	// A long step is the loop's own (a cycle, a request); a short one: the process did not run.
	// The stage names what to move off the loop when misses come from a step of its own.
	char stage[160] = "";
	if (d->busy_stage.stage) {
		snprintf(stage, sizeof(stage), ", its longest stage %s: %" PRId64 " ms",
			 d->busy_stage.stage, d->busy_stage.ms);
	}
	log_notice("%" PRId64 " cycle%s missed (%s to %s): %" PRId64
		   " ms from one cycle to the next, the loop woke too late for them (its longest "
		   "step meanwhile took %" PRId64 " ms%s)",
		   skip.n, s, from, to, skip.gap_ms, d->busy_max_ms, stage);
	recorder_count_missed(d->recorder, skip.n);
}

/*
 * The demo's first cycles: its history goes on at the live interval, every slot from its last
 * backfilled minute to now taken as the loop takes a slot (the simulation written for each
 * stamp, the runs under way sampled, the backfill's throttle tracker going on), so the switch
 * to live leaves no gap, no spacing shorter than the interval, no episode closed and opened
 * again and no run measured in part. The boot clock goes back as far as the slot.
 */
static void demo_catch_up(struct daemon *d, int64_t last_ts) {
	int64_t iv = d->cfg->interval_ms, now = wall_ms(d);
	int64_t slot = last_ts ? (timefmt_floor_div(last_ts * 1000, iv) + 1) * iv
			       : timefmt_floor_div(now, iv) * iv;
	// until no slot is due (a loaded machine takes long over them: the clocks read afresh)
	for (; slot <= now; slot += iv, now = wall_ms(d)) {
		int64_t m = mono_ms() - (now - slot);
		if (d->runs) {
			runsock_work(d->runs, slot, m);
		}
		grid_take(&d->grid, slot);
		run_cycle(d, slot, m);
	}
}

/*
 * The first cycle at start, off the grid: /metrics and /api/v1/latest have values at once
 * instead of up to an interval later. Stamped with the current second, which becomes the
 * handled slot, so the grid never handles it again. Skipped when that second is already
 * stored (a restart within it).
 */
static void first_cycle(struct daemon *d) {
	int64_t now_ms = timefmt_floor_div(wall_ms(d), 1000) * 1000;
	int64_t last_ts = recorder_last_ts(d->recorder);
	if (d->opt.demo) {
		demo_catch_up(d, last_ts);
		return;
	}
	if (last_ts != 0 && now_ms / 1000 <= last_ts) {
		return;
	}
	grid_take(&d->grid, now_ms);
	run_cycle(d, now_ms, mono_ms());
}

/* What a handler tells the loop: go on, stop (0), or fail (1). */
enum loop_next {
	LOOP_GO_ON = -1,
	LOOP_STOP = 0,
	LOOP_FAIL = 1,
};

static enum loop_next handle_watchdog(struct daemon *d, int64_t t) {
	notify_watchdog(d->notify);
	steptime_end(&d->stage, "telling the watchdog", t);
	return LOOP_GO_ON;
}

/* Every wake-up: a run's fast samples and watched processes, its socket's requests. */
static enum loop_next handle_runs(struct daemon *d, int64_t t) {
	if (!d->runs) {
		return LOOP_GO_ON;
	}
	runsock_work(d->runs, wall_ms(d), mono_ms());
	struct steptime runs = runsock_work_longest(d->runs);
	steptime_merge(&d->stage, &runs);
	t = steptime_now_ms();
	recorder_publish_runs(d->recorder); // a run that ended shows at once
	steptime_end(&d->stage, "publishing the runs", t);
	return LOOP_GO_ON;
}

/* The cycle of the slot due, if any, and what follows it; then the timer for the next one. */
static void cycle_due(struct daemon *d, int64_t now_wall, int64_t now_mono) {
	int64_t slot = grid_due_slot(&d->grid, now_wall, now_mono);
	if (slot == d->grid.last_slot_ms) {
		log_debug("woke early for a slot already handled");
		return;
	}
	if (slot == INT64_MIN) {
		log_debug("woke %" PRId64 " ms off the grid: waiting for the next slot",
			  now_wall - d->grid.armed_slot_ms);
		return;
	}
	note_skipped(d, slot, now_wall, now_mono);
	d->busy_max_ms = 0; // from this cycle's step on
	d->busy_stage = (struct steptime){0};
	grid_take(&d->grid, slot);
	run_cycle(d, slot, now_mono);
	int64_t t = steptime_now_ms();
	server_collect(d->server);
	t = steptime_end(&d->stage, "collecting replaced HTTP servers", t);
	if (now_mono - d->trimmed_mono_ms >= TRIM_INTERVAL_MS ||
	    server_completed(d->server) != d->trimmed_completed) {
		trim_heap(d, now_mono);
		steptime_end(&d->stage, "giving the heap's free pages back", t);
	}
}

static enum loop_next handle_timer(struct daemon *d, int64_t t) {
	(void)t;
	uint64_t expirations;
	if (read(d->tfd, &expirations, sizeof(expirations)) < 0 && errno == EAGAIN) {
		return LOOP_GO_ON;
	}
	int64_t now_wall = wall_ms(d), now_mono = mono_ms();
	detect_step(d, now_wall, now_mono);
	cycle_due(d, now_wall, now_mono);
	arm_next(d);
	return d->lost_lock ? LOOP_FAIL : LOOP_GO_ON;
}

static enum loop_next handle_signal(struct daemon *d, int64_t t) {
	struct signalfd_siginfo si;
	if (read(d->sfd, &si, sizeof(si)) != sizeof(si)) {
		return LOOP_GO_ON;
	}
	if (si.ssi_signo != SIGHUP) {
		log_info("%s received: stopping", strsignal((int)si.ssi_signo));
		return LOOP_STOP;
	}
	reload(d);
	arm_next(d);
	steptime_end(&d->stage, "reloading the configuration", t);
	return LOOP_GO_ON;
}

static int watchdog_fd(const struct daemon *d) {
	return notify_watchdog_fd(d->notify);
}

static int runs_fd(const struct daemon *d) {
	return runsock_fd(d->runs);
}

static int timer_fd(const struct daemon *d) {
	return d->tfd;
}

static int signal_fd(const struct daemon *d) {
	return d->sfd;
}

/*
 * The loop's handlers, in the order a wake-up runs them: each its descriptor (-1: none; poll
 * skips it) and what to do when it is readable, or at every wake-up (@always).
 */
static const struct loop_handler {
	int (*fd)(const struct daemon *d);
	enum loop_next (*handle)(struct daemon *d, int64_t t);
	bool always;
} handlers[] = {
	{watchdog_fd, handle_watchdog, false},
	{runs_fd, handle_runs, true},
	{timer_fd, handle_timer, false},
	{signal_fd, handle_signal, false},
};

#define HANDLERS_N (sizeof(handlers) / sizeof(handlers[0]))

/* True when SIGTERM or SIGINT waits at the signalfd. */
static bool stop_pending(void) {
	sigset_t pending;
	return sigpending(&pending) == 0 &&
	       (sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1);
}

static int run(struct daemon *d) {
	// A stop asked for during the start (a discovery of thousands of cooling devices, which
	// then ends early) stops before the first cycle, which would read a half-found list.
	while (stop_pending()) {
		if (handle_signal(d, steptime_now_ms()) == LOOP_STOP) {
			return LOOP_STOP;
		}
	}
	// When the last poll returned, boot clock ms: the first cycle runs before the first poll,
	// and its step counts as the loop's first (a miss after a slow one names it).
	int64_t woke = mono_ms();
	first_cycle(d);
	trim_heap(d, mono_ms());
	arm_next(d);
	for (;;) {
		int64_t step = mono_ms() - woke;
		if (step > d->busy_max_ms) {
			d->busy_max_ms = step;
			d->busy_stage = d->stage;
		}
		d->stage = (struct steptime){0};
		struct pollfd fds[HANDLERS_N];
		for (size_t i = 0; i < HANDLERS_N; i++) {
			fds[i] = (struct pollfd){.fd = handlers[i].fd(d), .events = POLLIN};
		}
		// While a run is active, wake for its fast samples and watched processes too.
		if (poll(fds, HANDLERS_N, runsock_timeout_ms(d->runs, mono_ms())) < 0) {
			if (errno == EINTR) {
				continue;
			}
			log_errno("poll failed");
			return LOOP_FAIL;
		}
		woke = mono_ms();
		for (size_t i = 0; i < HANDLERS_N; i++) {
			if (!handlers[i].always && !(fds[i].revents & POLLIN)) {
				continue;
			}
			enum loop_next next = handlers[i].handle(d, steptime_now_ms());
			if (next != LOOP_GO_ON) {
				return next;
			}
		}
	}
}

static void daemon_finish(struct daemon *d) {
	server_destroy(d->server); // waits for replaced servers to finish their requests
	runsock_destroy(d->runs);  // before the store: it writes the last fast samples
	if (d->runs_socket) {
		unlink(d->runs_socket);
		free(d->runs_socket);
	}
	recorder_destroy(d->recorder); // before the lock is released: it covers every write
	sampler_destroy(d->sampler);
	live_destroy(d->live);
	if (d->db_lock_fd >= 0) {
		close(d->db_lock_fd);
	}
	if (d->lock_fd >= 0) {
		close(d->lock_fd);
	}
	demo_finish(&d->demo); // removes a temporary database and its lock file
	notify_destroy(d->notify);
	if (d->sfd >= 0) {
		close(d->sfd);
	}
	if (d->tfd >= 0) {
		close(d->tfd);
	}
	free(d->db_path);
	if (d->cfg) {
		config_finish(d->cfg);
		free(d->cfg);
	}
}

/* Blocks the signals before any thread exists, so they all arrive at the signalfd. */
static void block_signals(sigset_t *mask) {
	sigemptyset(mask);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGHUP);
	sigprocmask(SIG_BLOCK, mask, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* The tests' hooks from the environment, each said in the log when set. */
static void test_hooks(struct daemon *d, struct recorder_params *params) {
	d->offset_file = getenv("THERMLOG_TEST_CLOCK_OFFSET_FILE");
	if (d->offset_file && !*d->offset_file) {
		d->offset_file = NULL;
	}
	if (d->offset_file) {
		log_warn("test hook: wall clock offset from %s", d->offset_file);
	}
	const char *ckpt = getenv("THERMLOG_TEST_CHECKPOINT_PAGES");
	if (ckpt && *ckpt) {
		params->checkpoint_pages = atoi(ckpt);
		log_warn("test hook: a WAL checkpoint every %d pages", params->checkpoint_pages);
	}
	const char *qmax = getenv("THERMLOG_TEST_QUEUE_MAX_BYTES");
	if (qmax && *qmax) {
		params->queue_max_bytes = (size_t)strtoull(qmax, NULL, 10);
		log_warn("test hook: queue of unwritten cycles limited to %zu bytes",
			 params->queue_max_bytes);
	}
}

/*
 * The configuration (or the demo's board and configuration): -1 to go on, else the exit code
 * (--check-config's, or a refused configuration's).
 */
static int configure(struct daemon *d, int64_t now) {
	if (d->opt.demo) {
		if (d->opt.check_config) {
			fprintf(stderr,
				"thermlogd: --check-config and --demo exclude each other\n");
			return EXIT_USAGE;
		}
		int rc = demo_setup(d, now);
		return rc < 0 ? (rc == -EINVAL ? EXIT_USAGE : 1) : -1;
	}
	d->cfg = load_config(&d->opt);
	if (!d->cfg) {
		return EXIT_USAGE;
	}
	if (d->opt.check_config) {
		printf("configuration OK\n");
		return 0;
	}
	d->db_path = xstrdup(d->cfg->database);
	return -1;
}

/* The runs: their socket, the API's hand-off, and the demo's replayed runs. */
static void start_runs(struct daemon *d) {
	d->runs = runsock_create(d->cfg, recorder_store(d->recorder), d->boot_id, wall_ms(d));
	if (!d->runs) {
		return;
	}
	server_set_runs(d->server, runsock_api(d->runs));
	if (d->opt.demo) {
		demo_replay(&d->demo, d->runs, wall_ms(d), mono_ms());
	}
	// The demo's runs.socket is in its simulated tree (demo_config()).
	int ufd = runsock_listen(d->cfg, d->opt.demo);
	if (ufd >= 0 && server_listen_local(d->server, d->cfg, ufd)) {
		d->runs_socket = xstrdup(d->cfg->runs.socket);
	} else if (ufd >= 0) {
		log_warn("runs: the server on %s did not start: runs are not recorded",
			 d->cfg->runs.socket);
		unlink(d->cfg->runs.socket);
	}
}

/* Everything the loop needs, in order (daemon_finish() undoes it); 0, or -1 having said why. */
static int start(struct daemon *d, const sigset_t *mask, struct recorder_params *params,
		 int64_t now) {
	d->notify = notify_create();
	d->sfd = signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d->tfd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->sfd < 0 || d->tfd < 0) {
		log_errno("could not create the signal and timer descriptors");
		return -1;
	}
	if (lock_db(d) < 0) {
		return -1;
	}
	params->db_path = d->db_path;
	if (d->opt.demo) {
		params->before_read = demo_before_read;
		params->ctx = &d->demo;
	}
	d->recorder = recorder_create(d->cfg, params, now, mono_ms());
	d->sampler = d->recorder ? sampler_create(d->cfg) : NULL;
	if (!d->sampler) {
		return -1;
	}
	d->live = live_create();
	// Bind before the demo's backfill, so a port in use is reported at once.
	d->server = server_create(d->cfg, d->live, d->db_path, activated_fd());
	if (!d->server) {
		if (d->opt.demo) {
			log_error(
				"demo: could not serve %s: --listen 127.0.0.1:0 takes any free port",
				d->cfg->http.listen);
		}
		return -1;
	}
	if (d->opt.demo) {
		int64_t last_ts = recorder_last_ts(d->recorder);
		if (demo_backfill(&d->demo, recorder_store(d->recorder), d->sampler, d->boot_id,
				  d->cfg->retention_raw_s, now, &last_ts) < 0) {
			log_error("demo: could not backfill the simulated history");
			return -1;
		}
		recorder_set_last_ts(d->recorder, last_ts);
		recorder_adopt_throttle(d->recorder, demo_take_tracker(&d->demo));
	}
	keep_board(d, d->cfg, true);
	recorder_start(d->recorder, d->sampler, d->live, now);
	start_runs(d);
	log_info("thermlogd %s: database %s, interval %" PRId64 " ms, sysfs %s", THERMLOG_VERSION,
		 d->db_path, d->cfg->interval_ms, d->cfg->sysfs_root);
	return 0;
}

int main(int argc, char **argv) {
	struct daemon d = {.lock_fd = -1, .db_lock_fd = -1, .sfd = -1, .tfd = -1};
	log_init(LOG_LEVEL_INFO);
	int rc = parse_args(argc, argv, &d.opt);
	if (rc >= 0) {
		return rc;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	// One malloc arena: the HTTP server's thread per connection would otherwise each get
	// an arena of its own, and its freed pages stay resident (glibc; RSS budget 5 MiB).
	mallopt(M_ARENA_MAX, 1);
	sigset_t mask;
	block_signals(&mask);
	struct recorder_params params = {.boot_id = d.boot_id, .mono_ms = mono_ms};
	test_hooks(&d, &params);
	clock_boot_id("", d.boot_id);

	int64_t now = timefmt_floor_div(wall_ms(&d), 1000);
	int exit_code = configure(&d, now);
	if (exit_code < 0 && start(&d, &mask, &params, now) < 0) {
		exit_code = 1;
	} else if (exit_code < 0) {
		exit_code = run(&d);
		notify_send(d.notify, "STOPPING=1");
	}
	daemon_finish(&d);
	return exit_code;
}
