/*
 * simhistory: a database of the demo's simulated board under work (thermlogd --demo --board's
 * model, src/daemon/simboard.c) over a window of the past, for the tests that compare two
 * boards measured months apart. The board runs a fixed test plan, each test a run declared on
 * it (simload.h, as thermlog-simload declares work) from a cold board: "idle" (nothing), "all-core"
 * (every CPU at 100 %) and "npu-op" (the NPU at 90 %, one big core at 30 %), ten minutes apart.
 * Every cycle goes through the real sampler over the simulated tree, the throttle tracker and
 * the store, as the demo's backfill writes its week; each run is stored with the load its CPUs
 * and NPU cores showed (figures.load, as a live run's fast samples give it); the board as the
 * daemon would record it at its start (boardinfo) and as its configuration declares it
 * (board: name, cooling) are kept in the database's state.
 *
 * usage: simhistory --db PATH --board SPEC --seed N --end UNIX_S --rounds N --name NAME
 *        (SPEC as thermlogd --demo --board: ambient=25,big_max=2304,...)
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boardfacts.h"
#include "boardinfo.h"
#include "buf.h"
#include "clock.h"
#include "config.h"
#include "demo.h"
#include "json.h"
#include "log.h"
#include "runload.h"
#include "sampler.h"
#include "sim.h"
#include "simboard.h"
#include "simload.h"
#include "store.h"
#include "throttle.h"
#include "throttlescan.h"
#include "xalloc.h"

#define STEP_S  10   // a cycle every 10 s: a minute-long run holds six
#define ROUND_S 1800 // one round of the plan: three tests, ten minutes apart
#define PLAN_N  3

/* The plan: each test's load, its offset in the round and its length (the board's seconds). */
static const struct {
	const char *label;
	const char *cpu, *npu; // simload_spec()'s "LIST=PCT", or NULL
	int64_t at_s, for_s;
} plan[PLAN_N] = {
	{"idle", NULL, NULL, 60, 60},
	{"all-core", "all=100", NULL, 660, 60},
	{"npu-op", "4=30", "all=90", 1260, 50},
};

struct history {
	struct sim *sim;
	struct config *cfg;
	struct store *store;
	struct sampler *sampler;
	int64_t from, to; // s
};

/* Declares every run of the plan on the tree, each with its start and end (simload.h). */
static int declare_plan(const struct history *h, int rounds) {
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < PLAN_N; k++) {
			if (!plan[k].cpu && !plan[k].npu) {
				continue;
			}
			struct simload_decl d = {
				.start_ms = (h->from + r * ROUND_S + plan[k].at_s) * 1000};
			if ((plan[k].cpu && !simload_spec(plan[k].cpu, d.load.cpu_pct, SIM_CPUS)) ||
			    (plan[k].npu &&
			     !simload_spec(plan[k].npu, d.load.npu_pct, SIM_NPU_CORES))) {
				return -1;
			}
			int fd = simload_declare(sim_root(h->sim), &d);
			if (fd < 0 || simload_end(fd, d.start_ms + plan[k].for_s * 1000) < 0) {
				return -1;
			}
		}
	}
	return 0;
}

/* A run being measured: its load from the cycles in its window. */
struct run_meter {
	int64_t id;
	struct runload *load;
	double peak_c;
};

static struct runload *new_load(void) {
	struct runload *l = runload_create();
	for (int p = 0; p < SIM_POLICY_COUNT; p++) {
		bool has[RUNLOAD_CPUS_MAX] = {0};
		runload_parse_cpus(sim_policy_cpus((enum sim_policy)p), has);
		runload_add_cluster(l, sim_policy_name((enum sim_policy)p), has);
	}
	return l;
}

/* The cycle's loads and zones into the run under way. */
static void meter(struct run_meter *m, int64_t t, const struct channel *ch,
		  const struct reading *rd, size_t n) {
	for (size_t i = 0; i < n; i++) {
		if (rd[i].err) {
			continue;
		}
		if (ch[i].kind == CHANNEL_KIND_LOAD &&
		    (strncmp(ch[i].key, "load/cpu", 8) == 0 ||
		     strncmp(ch[i].key, "load/rknpu/", 11) == 0)) {
			runload_add(m->load, t * 1000, ch[i].key, rd[i].value);
		}
		if (ch[i].kind == CHANNEL_KIND_TEMPERATURE &&
		    strncmp(ch[i].key, "thermal/", 8) == 0 && !(rd[i].value <= m->peak_c)) {
			m->peak_c = rd[i].value;
		}
	}
}

static int run_begin(struct history *h, int k, int64_t t, struct run_meter *m) {
	struct store_run_new row = {
		.label = plan[k].label, .tags = "{\"simulated\":\"yes\"}", .start_ms = t * 1000};
	*m = (struct run_meter){.load = new_load(), .peak_c = NAN};
	return store_run_begin(h->store, &row, &m->id);
}

static int run_end(struct history *h, int64_t t, struct run_meter *m) {
	struct buf fig = {0};
	struct json j;
	json_init(&j, &fig, false);
	json_object_begin(&j);
	json_key(&j, "load");
	runload_write_json(m->load, &j,
			   "the simulated board's busy shares at the history's cycles");
	json_object_end(&j);
	struct store_run_end end = {.end_ms = t * 1000,
				    .status = RUN_STATUS_OK,
				    .has_exit_code = true,
				    .energy_j = NAN,
				    .energy_coverage = NAN,
				    .temp_max_c = m->peak_c,
				    .rss_max_bytes = -1,
				    .figures = fig.data};
	int rc = store_run_end(h->store, m->id, &end);
	buf_finish(&fig);
	runload_destroy(m->load);
	m->load = NULL;
	return rc;
}

/* The plan's test under way at @t (s), or -1, and whether @t starts or ends it. */
static int test_at(const struct history *h, int64_t t, bool *starts, bool *ends) {
	int64_t in = (t - h->from) % ROUND_S;
	for (int k = 0; k < PLAN_N; k++) {
		*starts = in == plan[k].at_s;
		*ends = in == plan[k].at_s + plan[k].for_s;
		if (in >= plan[k].at_s && in <= plan[k].at_s + plan[k].for_s) {
			return k;
		}
	}
	return -1;
}

static int record(struct history *h) {
	int rc = store_begin(h->store);
	struct throttlescan *scan = throttlescan_create(sampler_root_fd(h->sampler));
	struct throttle_tracker *tracker = throttle_tracker_create();
	struct throttle_input *in = xcalloc(1, sizeof(*in));
	struct run_meter m = {0};
	for (int64_t t = h->from; rc == 0 && t <= h->to; t += STEP_S) {
		if (t > h->from) { // the tree holds h->from's state since it was created
			sim_write_ms(h->sim, t * 1000);
		}
		const struct channel *ch;
		const struct reading *rd;
		size_t n = sampler_read(h->sampler, t, &ch, &rd);
		throttlescan_read(scan, in, h->sampler);
		in->ts = t;
		throttle_tracker_update(tracker, in);
		size_t n_eps;
		struct throttle_episode *const *eps = throttle_tracker_episodes(tracker, &n_eps);
		rc = n_eps > 0 ? store_throttle_put(h->store, eps, n_eps) : 0;
		struct cycle c = {.ts = t,
				  .clock = CLOCK_STATE_SYNCED,
				  .n = n,
				  .channels = ch,
				  .readings = rd,
				  .channels_version = sampler_channels_version(h->sampler)};
		rc = rc == 0 ? store_write_cycle(h->store, &c) : rc;
		bool starts, ends;
		int k = test_at(h, t, &starts, &ends);
		if (rc == 0 && k >= 0 && starts) {
			rc = run_begin(h, k, t, &m);
		}
		if (rc == 0 && m.load) {
			meter(&m, t, ch, rd, n);
		}
		if (rc == 0 && m.load && ends) {
			rc = run_end(h, t, &m);
		}
	}
	runload_destroy(m.load);
	throttle_tracker_destroy(tracker);
	throttlescan_destroy(scan);
	free(in);
	rc = rc == 0 ? store_commit(h->store) : rc;
	return rc == 0 ? store_maintain(h->store, h->to + 3600, 400 * 86400) : rc;
}

/* The board as the daemon records it at its start, and as its configuration declares it. */
static int keep_board(struct history *h, const char *name) {
	h->cfg->board.declared = true;
	h->cfg->board.name = xstrdup(name);
	h->cfg->board.cooling = xstrdup("heatsink and fan");
	struct buf b = {0};
	struct json j;
	json_init(&j, &b, false);
	boardinfo_json(h->cfg->sysfs_root, h->cfg->procfs_root, h->cfg->debugfs_root, &j);
	int rc = boardfacts_keep_recorded(h->store, b.data);
	buf_finish(&b);
	return rc == 0 ? boardfacts_keep_declared(h->store, h->cfg) : rc;
}

int main(int argc, char **argv) {
	static const struct option options[] = {
		{"db", required_argument, NULL, 'd'},
		{"board", required_argument, NULL, 'b'},
		{"seed", required_argument, NULL, 's'},
		{"end", required_argument, NULL, 'e'},
		{"rounds", required_argument, NULL, 'r'},
		{"name", required_argument, NULL, 'n'},
		{0},
	};
	const char *db = NULL, *spec = "ambient=25", *name = "simulated ROCK 5C";
	uint64_t seed = 1;
	int64_t end = 0;
	int rounds = 4, opt;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'd':
			db = optarg;
			break;
		case 'b':
			spec = optarg;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 10);
			break;
		case 'e':
			end = strtoll(optarg, NULL, 10);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'n':
			name = optarg;
			break;
		default:
			return 2;
		}
	}
	log_init(LOG_LEVEL_WARN);
	struct simboard_params params;
	simboard_params_default(&params);
	char *err = NULL;
	if (!db || end <= 0 || rounds < 1 || !simboard_params_parse(spec, &params, &err)) {
		fprintf(stderr,
			"usage: simhistory --db PATH --board SPEC --seed N --end UNIX_S "
			"--rounds N --name NAME%s%s\n",
			err ? ": " : "", err ? err : "");
		free(err);
		return 2;
	}
	struct history h = {.to = end - end % STEP_S};
	h.from = h.to - (int64_t)rounds * ROUND_S;
	struct demo demo = {0};
	int rc = demo_init_board(&demo, seed, db, h.from, &params);
	h.sim = demo.sim;
	h.cfg = rc == 0 ? demo_config(&demo, "10s") : NULL;
	rc = h.cfg ? store_open(&h.store, db, STORE_MODE_WRITE) : -1;
	h.sampler = rc == 0 ? sampler_create(h.cfg) : NULL;
	if (!h.sampler || declare_plan(&h, rounds) < 0 || keep_board(&h, name) < 0 ||
	    record(&h) < 0) {
		fprintf(stderr, "simhistory: could not write %s\n", db);
		rc = 1;
	} else {
		printf("%s: %d rounds of %d tests, %" PRId64 " .. %" PRId64 "\n", db, rounds,
		       PLAN_N, h.from, h.to);
	}
	sampler_destroy(h.sampler);
	store_close(h.store);
	if (h.cfg) {
		config_finish(h.cfg);
		free(h.cfg);
	}
	demo_finish(&demo);
	return rc == 0 ? 0 : 1;
}
