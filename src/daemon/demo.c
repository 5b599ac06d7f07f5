/*
 * The demo: a simulated ROCK 5C (sim), its configuration (demo.yaml, embedded), its own
 * database and a week of history with its workload's runs, so thermlogd --demo shows a filled
 * dashboard at once.
 */
#include "demo.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "clock.h"
#include "json.h"
#include "log.h"
#include "runload.h"
#include "runsock.h"
#include "sampler.h"
#include "sim.h"
#include "stats.h"
#include "store.h"
#include "throttle.h"
#include "throttlescan.h"
#include "timefmt.h"
#include "xalloc.h"

#include "src/daemon/demo-yaml.h"

#define DEMO_BACKFILL_S (7 * 86400)
#define DEMO_SOCKET     "thermlog.sock" // in the simulated tree
#define DEMO_STATE_KEY  "demo.database" // marks a database the demo created

/* The database: @db, or a new temporary file. */
static int demo_database(struct demo *demo, const char *db) {
	if (db) {
		demo->db_path = xstrdup(db);
		return 0;
	}
	const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	demo->db_path = xasprintf("%s/thermlog-demo.XXXXXX.db", tmp);
	int fd = mkstemps(demo->db_path, 3);
	if (fd < 0) {
		log_errno("could not create the demo database in %s", tmp);
		return -EIO;
	}
	close(fd);
	demo->db_is_temp = true;
	return 0;
}

int demo_init(struct demo *demo, uint64_t seed, const char *db, int64_t now) {
	return demo_init_board(demo, seed, db, now, NULL);
}

int demo_init_board(struct demo *demo, uint64_t seed, const char *db, int64_t now,
		    const struct simboard_params *board) {
	*demo = (struct demo){0};
	if (db && strcmp(db, CONFIG_DEFAULT_DATABASE) == 0) {
		log_error("the demo never writes the service's database %s: choose another --db",
			  CONFIG_DEFAULT_DATABASE);
		return -EINVAL;
	}
	demo->seed = seed;
	demo->live_from = now;
	demo->replay_from = now;
	demo->board = board != NULL;
	demo->sim = sim_create_board(NULL, seed, now, board);
	if (!demo->sim) {
		return -EIO;
	}
	return demo_database(demo, db);
}

struct config *demo_config(const struct demo *demo, const char *interval) {
	const char *root = sim_root(demo->sim);
	// The runs socket lives in the demo's own tree, never at the service's runs.socket; the
	// load source reads the tree's proc/stat and debug/rknpu/load.
	// A board under work samples its runs at the cycle's pace: its runs are short.
	const char *every = interval ? interval : DEMO_INTERVAL;
	char *runs_interval = demo->board ? xasprintf("  interval: %s\n", every) : xstrdup("");
	char *yaml = xasprintf("interval: %s\nsysfs_root: %s\nprocfs_root: %s/proc\n"
			       "debugfs_root: %s/debug\nruns:\n  socket: %s/%s\n%s%s",
			       every, root, root, root, root, DEMO_SOCKET, runs_interval,
			       demo_yaml_text);
	free(runs_interval);
	char *path = xasprintf("%s/thermlog-demo.yaml", root);
	FILE *f = fopen(path, "we");
	bool written = f && fputs(yaml, f) >= 0;
	if ((f && fclose(f) != 0) || !written) {
		log_warn("demo: could not write %s: %s", path, strerror(errno));
	}
	free(path);
	struct config *cfg = xcalloc(1, sizeof(*cfg));
	config_init(cfg);
	char *errors = NULL;
	bool ok = config_load_string(cfg, "demo", yaml, strlen(yaml), &errors);
	free(yaml);
	if (!ok) {
		log_error("demo configuration rejected: %s", errors ? errors : "");
		free(errors);
		config_finish(cfg);
		free(cfg);
		return NULL;
	}
	return cfg;
}

#define DEMO_RUN_STEP_S 5 // as runs.interval's default: a live run's fast samples
#define DEMO_REPLAY_S   (3 * 3600)
#define DEMO_TAGS       "{\"board\":\"rock-5c\",\"demo\":\"simulated\"}"

/* A run's load as its fast samples give it live: each CPU's and NPU core's busy share. */
static struct runload *backfill_load(void) {
	struct runload *l = runload_create();
	for (int p = 0; p < SIM_POLICY_COUNT; p++) {
		bool has[RUNLOAD_CPUS_MAX] = {0};
		runload_parse_cpus(sim_policy_cpus((enum sim_policy)p), has);
		runload_add_cluster(l, sim_policy_name((enum sim_policy)p), has);
	}
	return l;
}

static void backfill_load_add(struct runload *l, int64_t at, const struct sim_state *s) {
	char key[32];
	for (int c = 0; c < SIM_CPUS; c++) {
		snprintf(key, sizeof(key), "load/cpu%d", c);
		runload_add(l, at * 1000, key, s->cpu_busy_pct[c]);
	}
	for (int c = 0; c < SIM_NPU_CORES; c++) {
		snprintf(key, sizeof(key), "load/rknpu/core%d", c);
		runload_add(l, at * 1000, key, s->npu_load_pct[c]);
	}
}

/* The figures of a backfilled run: its load, as the daemon's fast samples would give it. */
static char *backfill_figures(struct runload *l) {
	struct buf b = {0};
	struct json j;
	json_init(&j, &b, false);
	json_object_begin(&j);
	json_key(&j, "load");
	runload_write_json(l, &j,
			   "the simulated board's busy shares at the run's 5 s steps (the demo's "
			   "history, as fast samples would give them); a cluster is a cpufreq "
			   "policy's CPUs, their mean at each step; p95 type 7");
	json_object_end(&j);
	return buf_steal(&b);
}

/* One finished run of the workload, measured from the model as the daemon would measure it. */
static int backfill_run(struct demo *demo, struct store *store, const struct sim_run *r) {
	double joules = 0, prev_w = NAN;
	int64_t prev_at = r->start;
	int32_t peak_mc = INT32_MIN;
	struct runload *load = backfill_load();
	for (int64_t at = r->start;;
	     at = at + DEMO_RUN_STEP_S < r->end ? at + DEMO_RUN_STEP_S : r->end) {
		// What the INA226 prints (25 mW steps) and what the TSADCs print, as sampled live.
		double w = 0.025 * (double)llround(sim_power_w(demo->seed, at) / 0.025);
		if (!isnan(prev_w)) {
			joules += 0.5 * (prev_w + w) * (double)(at - prev_at);
		}
		prev_w = w;
		prev_at = at;
		struct sim_state s;
		sim_model(demo->seed, at, &s);
		// The thermal zones: runs.peak_channels' default (thermal/*), as live runs take it.
		for (int z = 0; z < SIM_ZONE_COUNT; z++) {
			peak_mc = s.zone_mc[z] > peak_mc ? s.zone_mc[z] : peak_mc;
		}
		backfill_load_add(load, at, &s);
		if (at == r->end) {
			break;
		}
	}
	char *figures = backfill_figures(load);
	runload_destroy(load);
	struct store_run_new row = {
		.label = r->label, .tags = DEMO_TAGS, .start_ms = r->start * 1000};
	int64_t id;
	int rc = store_run_begin(store, &row, &id);
	if (rc < 0) {
		free(figures);
		return rc;
	}
	struct store_run_end end = {.end_ms = r->end * 1000,
				    .status = r->exit_code ? RUN_STATUS_FAILED : RUN_STATUS_OK,
				    .has_exit_code = true,
				    .exit_code = r->exit_code,
				    // to the uJ, as a live run's (no float noise from the sum)
				    .energy_j = stats_value(llround(joules * 1e6), 1e-6),
				    .energy_method = "power_trapezoid",
				    .energy_coverage = 1,
				    .temp_max_c = peak_mc / 1000.0,
				    .rss_max_bytes = -1,
				    .figures = figures};
	rc = store_run_end(store, id, &end);
	free(figures);
	return rc;
}

/*
 * The workload's runs that start in [@from, @now) and ended by @now; those from the quiet
 * minute at or before now - DEMO_REPLAY_S on wait for demo_replay(). A run stored here then
 * never overlaps a replayed one, whose fast samples would lie in its window: its `peak` (the
 * hottest fast sample in the window, runs.c) would be another run's, not its temp_max_c.
 */
static int backfill_runs(struct demo *demo, struct store *store, int64_t from, int64_t now) {
	int64_t quiet = sim_quiet_minute(demo->seed, now - DEMO_REPLAY_S);
	demo->replay_from = from > quiet ? from : quiet;
	size_t n = sim_runs(demo->seed, from, now, NULL, 0);
	struct sim_run *runs = xcalloc(n ? n : 1, sizeof(*runs));
	sim_runs(demo->seed, from, now, runs, n);
	int rc = 0;
	size_t stored = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (runs[i].end <= now && runs[i].start < demo->replay_from) {
			rc = backfill_run(demo, store, &runs[i]);
			stored++;
		}
	}
	free(runs);
	if (rc == 0) {
		log_info("demo: %zu simulated runs in the history", stored);
	}
	return rc;
}

int demo_backfill(struct demo *demo, struct store *store, struct sampler *sampler,
		  const char *boot_id, int64_t retention_raw_s, int64_t now, int64_t *last_ts) {
	struct store_info info;
	if (store_info(store, &info) < 0) {
		return -EIO;
	}
	// Simulated history goes only into a database the demo started: never into one holding
	// real history, whatever name (a symlink, another path) it is reached by.
	char *mark = NULL;
	int rc = store_state_get(store, DEMO_STATE_KEY, &mark);
	free(mark);
	if (rc == -ENOENT && info.cycles > 0) {
		log_error("demo: %s holds %" PRId64 " cycles the demo did not write; it adds "
			  "simulated history only to its own database: choose a new --db",
			  demo->db_path, info.cycles);
		return -EEXIST;
	}
	if (rc == -ENOENT) {
		rc = store_state_set(store, DEMO_STATE_KEY, "simulated");
	}
	if (rc < 0 || demo->board) {
		return rc; // a board under work has no history but what it records
	}
	// A new history begins at a quiet minute, so it holds each of its runs and episodes whole.
	int64_t from = sim_quiet_minute(demo->seed, now - DEMO_BACKFILL_S);
	if (info.last_cycle >= from) {
		from = timefmt_floor_div(info.last_cycle, 60) * 60 + 60;
	}
	int64_t to = timefmt_floor_div(now - 1, 60) * 60; // the live cycles come after it
	if (from > to) {
		return 0;
	}
	log_info("demo: backfilling %" PRId64 " minutes of simulated history",
		 (to - from) / 60 + 1);
	rc = store_begin(store);
	if (rc < 0) {
		return rc;
	}
	// The throttle episodes of the history, as the recorder tracks them live; the tracker goes
	// on in the recorder (demo_take_tracker()), so an episode open at the switch goes on.
	struct throttlescan *scan = throttlescan_create(sampler_root_fd(sampler));
	throttle_tracker_destroy(demo->tracker);
	struct throttle_tracker *tracker = demo->tracker = throttle_tracker_create();
	struct throttle_input *in = xcalloc(1, sizeof(*in));
	for (int64_t t = from; t <= to && rc == 0; t += 60) {
		sim_write(demo->sim, t);
		const struct channel *channels;
		const struct reading *readings;
		size_t n = sampler_read(sampler, 0, &channels, &readings);
		throttlescan_read(scan, in, sampler);
		in->ts = t;
		throttle_tracker_update(tracker, in);
		size_t n_eps;
		struct throttle_episode *const *eps = throttle_tracker_episodes(tracker, &n_eps);
		rc = n_eps > 0 ? store_throttle_put(store, eps, n_eps) : 0;
		if (rc < 0) {
			break;
		}
		struct cycle c = {.ts = t,
				  .boot_id = boot_id && *boot_id ? boot_id : NULL,
				  .clock = CLOCK_STATE_SYNCED,
				  .n = n,
				  .channels = channels,
				  .readings = readings,
				  .channels_version = sampler_channels_version(sampler)};
		rc = store_write_cycle(store, &c);
		*last_ts = t;
	}
	throttlescan_destroy(scan);
	free(in);
	if (rc == 0) {
		rc = backfill_runs(demo, store, from, now);
	}
	if (rc < 0) {
		store_rollback(store);
		return rc;
	}
	rc = store_commit(store);
	if (rc == 0) {
		rc = store_maintain(store, now, retention_raw_s);
	}
	return rc;
}

/* Appends @text to @b in single quotes, so a shell takes it as one word whatever it holds. */
static void shell_quote(struct buf *b, const char *text) {
	buf_putc(b, '\'');
	for (const char *p = text; *p; p++) {
		if (*p == '\'') {
			buf_puts(b, "'\\''");
		} else {
			buf_putc(b, *p);
		}
	}
	buf_putc(b, '\'');
}

/*
 * The dashboard's address, then the demo's examples, one command a line on stderr without a log
 * prefix, so each can be pasted as printed: the thermlog built beside this thermlogd (by
 * absolute path), else the one on PATH.
 * With @runs_served, a `thermlog run` through the demo's socket too.
 */
void demo_print_commands(const struct demo *demo, bool runs_served, const char *url) {
	const char *sim_dir = sim_root(demo->sim), *db_path = demo->db_path;
	struct buf prefix;
	buf_init(&prefix);
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *cli = NULL;
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			cli = xasprintf("%s/thermlog", self);
			if (access(cli, X_OK) != 0) {
				free(cli);
				cli = NULL;
			}
		}
	}
	shell_quote(&prefix, cli ? cli : "thermlog");
	free(cli);
	char *yaml = xasprintf("%s/thermlog-demo.yaml", sim_dir);
	buf_puts(&prefix, " -c ");
	shell_quote(&prefix, yaml);
	free(yaml);
	buf_puts(&prefix, " --db ");
	shell_quote(&prefix, db_path);
	static const char *const examples[] = {"stats", "lifetime", "export --from -1h",
					       "throttle --from -1d",
					       "run --label try-it -- sleep 3"};
	size_t n_examples = sizeof(examples) / sizeof(*examples) - (runs_served ? 0 : 1);
	fprintf(stderr, "demo: the dashboard: %s\n", url);
	fprintf(stderr, "demo: query it from another terminal, one command a line:\n");
	for (size_t i = 0; i < n_examples; i++) {
		fprintf(stderr, "  %s %s\n", prefix.data, examples[i]);
	}
	fflush(stderr);
	buf_finish(&prefix);
}

void demo_before_read(void *ctx, int64_t ts) {
	struct demo *demo = ctx;
	sim_write(demo->sim, ts);
}

void demo_replay(struct demo *demo, struct runsock *rs, int64_t now_ms, int64_t mono_ms) {
	int64_t from = demo->replay_from, to = demo->live_from;
	if (!rs || from >= to || demo->board) {
		return;
	}
	size_t n = sim_runs(demo->seed, from, to, NULL, 0);
	struct sim_run *runs = xcalloc(n ? n : 1, sizeof(*runs));
	sim_runs(demo->seed, from, to, runs, n);
	// On the 5 s grid from the first run's start to the last run's end, as the live loop would
	// have run it; the boot clock goes back as far as the simulated time.
	struct {
		int64_t id, end;
		int exit_code;
	} open[DEMO_LIVE_RUNS];
	size_t n_open = 0, next = 0, replayed = 0;
	int64_t t =
		n > 0 ? timefmt_floor_div(runs[0].start, DEMO_RUN_STEP_S) * DEMO_RUN_STEP_S : to;
	for (; t < to && (next < n || n_open > 0); t += DEMO_RUN_STEP_S) {
		int64_t mono = mono_ms - (now_ms - t * 1000);
		sim_write(demo->sim, t);
		for (size_t i = 0; i < n_open;) {
			if (open[i].end > t) {
				i++;
				continue;
			}
			struct runwire_stop stop = {.has_exit_code = true,
						    .exit_code = open[i].exit_code,
						    .rss_max_bytes = -1};
			runsock_stop(rs, open[i].id, &stop, t * 1000, mono);
			open[i] = open[--n_open];
		}
		for (; next < n && runs[next].start <= t; next++) {
			if (n_open == DEMO_LIVE_RUNS) {
				continue;
			}
			struct runwire_start start = {.label = runs[next].label, .tags = DEMO_TAGS};
			int64_t id;
			if (runsock_start(rs, &start, t * 1000, mono, &id) == 0) {
				open[n_open].id = id;
				open[n_open].end = runs[next].end;
				open[n_open].exit_code = runs[next].exit_code;
				n_open++;
				replayed++;
			}
		}
		runsock_work(rs, t * 1000, mono);
	}
	// Runs under way at the start go on live: demo_runs() stops each at its end.
	for (size_t i = 0; i < n_open && demo->n_live < DEMO_LIVE_RUNS; i++) {
		demo->live[demo->n_live].id = open[i].id;
		demo->live[demo->n_live].end = open[i].end;
		demo->live[demo->n_live].exit_code = open[i].exit_code;
		demo->n_live++;
	}
	free(runs);
	sim_write(demo->sim, to);
	log_info("demo: %zu recent simulated runs replayed with fast samples", replayed);
}

struct throttle_tracker *demo_take_tracker(struct demo *demo) {
	struct throttle_tracker *t = demo->tracker;
	demo->tracker = NULL;
	return t;
}

void demo_runs(struct demo *demo, struct runsock *rs, int64_t now_ms, int64_t mono_ms) {
	if (!rs || demo->board) {
		return;
	}
	int64_t now = timefmt_floor_div(now_ms, 1000);
	for (size_t i = 0; i < demo->n_live;) {
		if (demo->live[i].end > now) {
			i++;
			continue;
		}
		struct runwire_stop stop = {.has_exit_code = true,
					    .exit_code = demo->live[i].exit_code,
					    .rss_max_bytes = -1};
		runsock_stop(rs, demo->live[i].id, &stop, now_ms, mono_ms);
		demo->live[i] = demo->live[--demo->n_live];
	}
	if (now < demo->live_from) {
		return; // a slot the replay covered (the catch-up to the live start): none starts
	}
	struct sim_run due[DEMO_LIVE_RUNS];
	size_t n = sim_runs(demo->seed, demo->live_from, now + 1, due, DEMO_LIVE_RUNS);
	for (size_t i = 0; i < n && i < DEMO_LIVE_RUNS && demo->n_live < DEMO_LIVE_RUNS; i++) {
		struct runwire_start start = {.label = due[i].label, .tags = DEMO_TAGS};
		int64_t id;
		if (runsock_start(rs, &start, now_ms, mono_ms, &id) == 0) {
			demo->live[demo->n_live].id = id;
			demo->live[demo->n_live].end = due[i].end;
			demo->live[demo->n_live].exit_code = due[i].exit_code;
			demo->n_live++;
		}
	}
	demo->live_from = now + 1;
}

void demo_finish(struct demo *demo) {
	if (demo->db_is_temp) {
		static const char *const suffixes[] = {"", "-wal", "-shm", "-journal", ".lock"};
		for (size_t i = 0; i < 5; i++) {
			char *p = xasprintf("%s%s", demo->db_path, suffixes[i]);
			unlink(p);
			free(p);
		}
	}
	throttle_tracker_destroy(demo->tracker);
	sim_destroy(demo->sim);
	free(demo->db_path);
	*demo = (struct demo){0};
}
