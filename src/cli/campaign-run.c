/*
 * thermlog campaign run: runs a suite's steps as ordinary recorded runs through the daemon's
 * socket (cli-wrap.h), each cold repetition behind the thermal gate (campaignplan.h) on the
 * idle baseline the campaign measured first, with the board's fingerprint taken at its start.
 * Its state is in the database (store-campaign.c): a resume goes on with the first repetition
 * not recorded as ended, and a repetition cut by a fault (its run lost) runs again.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boardinfo.h"
#include "buf.h"
#include "campaign.h"
#include "cli-campaign.h"
#include "cli-daemon.h"
#include "cli-wrap.h"
#include "json.h"
#include "jsonread.h"
#include "pidstart.h"
#include "runtag.h"
#include "runwire.h"
#include "timefmt.h"
#include "unit.h"
#include "xalloc.h"

#define POLL_MS        200   // how often the gate looks for a new cycle
#define CUT_WAIT_MS    60000 // a resume waits this long for the daemon to close a cut run
#define CYCLE_WAIT_MS  30000 // the idle baseline waits this long for its last cycle
#define REPLY_JSON_MAX (4 << 20)

static volatile sig_atomic_t stop_signal; // SIGINT, SIGTERM or SIGHUP: the campaign stops

static void on_stop(int sig) {
	stop_signal = sig;
}

struct runner {
	struct cli_context *ctx;
	const struct config *cfg;
	char *sock;
	struct store *store;
	struct campaign_suite suite;
	char *suite_path, *suite_dir, *suite_text;
	struct store_campaign c;
	struct campaign_baseline base;
	char **passive; // cooling devices bound to passive trips (their types)
	int64_t interval_ms;
	bool tty;
	struct campaignplan_slot *plan;
	size_t n_plan, done;
	int64_t seq;                // the next repetition's
	double *sum_s, *sum_wait_s; // per step, for the time left
	size_t *n_s;
	int64_t *prev_end_ms;   // per step: when its latest repetition ended (0: none yet)
	unsigned *extra_warmup; // per step: the rewarming runs so far (warm starts after a break)
};

static int64_t now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleeps @ms; false when a stop signal came first. */
static bool pause_ms(int64_t ms) {
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
	while (!stop_signal && nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
	return !stop_signal;
}

/* One line of progress on stderr: rewritten in place on a terminal, else a line each. */
static void __attribute__((format(printf, 3, 4)))
progress(struct runner *r, bool final, const char *fmt, ...) {
	struct buf line = {0};
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf_printable(&line, fmt, ap);
	va_end(ap);
	if (r->tty) {
		fprintf(stderr, "\r\033[K%s%s", line.data, final ? "\n" : "");
	} else if (final || !r->tty) {
		fprintf(stderr, "%s\n", line.data);
	}
	fflush(stderr);
	buf_finish(&line);
}

/* "[12/40] npu-op rep 3/10 (cold)": where the campaign is. */
static void where(const struct runner *r, size_t step, unsigned rep, bool warmup,
		  enum campaign_start start, struct buf *out) {
	const struct campaign_step *s = &r->suite.steps[step];
	buf_printf(out, "campaign %s [%zu/%zu] %s %s %u/%u (%s)", r->suite.name, r->done + 1,
		   r->n_plan, s->label, warmup ? "warmup" : "rep", rep,
		   warmup ? (rep > s->warmup ? rep : s->warmup) : s->repetitions,
		   campaign_start_name(start));
}

/* The time the campaign's rest should take, for the progress line. */
static void eta(const struct runner *r, size_t from, struct buf *out) {
	double *mean = xcalloc(r->suite.n_steps + 1, sizeof(double));
	double *wait = xcalloc(r->suite.n_steps + 1, sizeof(double));
	for (size_t i = 0; i < r->suite.n_steps; i++) {
		mean[i] = r->n_s[i] ? r->sum_s[i] / (double)r->n_s[i] : NAN;
		wait[i] = r->n_s[i] ? r->sum_wait_s[i] / (double)r->n_s[i] : NAN;
	}
	double s = campaignplan_eta_s(r->plan + from, r->n_plan - from, mean, wait, 60);
	char text[64];
	unit_duration(text, sizeof(text), s);
	buf_printf(out, "; ETA %s", text);
	free(mean);
	free(wait);
}

/* --- the daemon's view of the board -------------------------------------------------------- */

/* GET @path on the socket: its JSON body parsed, or NULL (with *why). */
static struct jsonread_node *get_json(struct runner *r, const char *path, const char **why) {
	struct cli_reply reply;
	if (cli_daemon_call(r->sock, "GET", path, NULL, true, &reply, why) < 0) {
		return NULL;
	}
	struct jsonread_error e;
	struct jsonread_node *root =
		reply.status == 200 && reply.body
			? jsonread_parse(reply.body, strlen(reply.body), REPLY_JSON_MAX, &e)
			: NULL;
	if (!root) {
		*why = "the daemon's answer does not read";
	}
	free(reply.body);
	return root;
}

/* The newest stored cycle's stamp (s), or -1 when the daemon does not say. */
static int64_t last_cycle(struct runner *r) {
	const char *why;
	struct jsonread_node *st = get_json(r, "/api/v1/status", &why);
	int64_t ts = -1;
	if (!jsonread_int(jsonread_get(st, "last_cycle_ts"), 0, INT64_MAX, &ts)) {
		ts = -1;
	}
	jsonread_node_free(st);
	return ts;
}

/* The value of channel @key in a /api/v1/latest answer; false when it has none. */
static bool latest_value(const struct jsonread_node *latest, const char *key, double *v) {
	const struct jsonread_node *chans = jsonread_get(latest, "channels");
	for (size_t i = 0; chans && chans->kind == JSONREAD_ARRAY && i < chans->n; i++) {
		const char *k = jsonread_string(jsonread_get(chans->items[i], "key"));
		const struct jsonread_node *val = jsonread_get(chans->items[i], "value");
		if (k && strcmp(k, key) == 0) {
			if (val && val->kind == JSONREAD_NUMBER) {
				*v = val->number;
				return true;
			}
			return false;
		}
	}
	return false;
}

/* What the gate sees now: a new cycle's readings (false while none is newer than *seen_ts). */
struct gate_view {
	struct campaigngate_zone *zones;
	char episode[128], cooling[128];
	struct campaigngate_input in;
	struct campaigngate_verdict v;
};

static bool gate_look(struct runner *r, int64_t *seen_ts, struct gate_view *g) {
	const char *why;
	struct jsonread_node *latest = get_json(r, "/api/v1/latest", &why);
	int64_t ts = -1;
	if (!latest || !jsonread_int(jsonread_get(latest, "ts"), 0, INT64_MAX, &ts) ||
	    ts <= *seen_ts) {
		jsonread_node_free(latest);
		return false;
	}
	*seen_ts = ts;
	g->in = (struct campaigngate_input){
		.zones = g->zones, .n_zones = r->base.n, .tolerance_k = r->suite.tolerance_k};
	for (size_t i = 0; i < r->base.n; i++) {
		g->zones[i] = r->base.zones[i];
		g->zones[i].present =
			latest_value(latest, r->base.zones[i].key, &g->zones[i].now_c);
	}
	for (char **t = r->passive; *t && !g->in.cooling; t++) {
		char key[160];
		double state;
		snprintf(key, sizeof(key), "cooling/%s", *t);
		if (latest_value(latest, key, &state) && state > 0) {
			snprintf(g->cooling, sizeof(g->cooling), "%s", *t);
			g->in.cooling = g->cooling;
			g->in.cooling_state = (int64_t)state;
		}
	}
	jsonread_node_free(latest);
	struct jsonread_node *thr = get_json(r, "/api/v1/throttle?episodes=open", &why);
	const struct jsonread_node *eps = jsonread_get(thr, "episodes");
	if (eps && eps->kind == JSONREAD_ARRAY && eps->n > 0) {
		const char *d = jsonread_string(jsonread_get(eps->items[0], "domain"));
		snprintf(g->episode, sizeof(g->episode), "%s", d ? d : "a domain");
		g->in.open_episode = g->episode;
	}
	jsonread_node_free(thr);
	campaigngate_check(&g->in, &g->v);
	return true;
}

/* Runs the suite's warm_up command to its end (not a recorded run). */
static void warm_up(struct runner *r) {
	const struct campaign_command *c = &r->suite.warm_up;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent ||
		    chdir(r->suite_dir) < 0) {
			_exit(126);
		}
		execvp(c->argv[0], c->argv);
		_exit(127);
	}
	int status;
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
		if (stop_signal) {
			kill(pid, SIGTERM);
		}
	}
}

/* What the gate did before a repetition. */
struct gate_result {
	enum campaigngate_outcome outcome;
	int64_t wait_ms;
	char detail[512];
};

/*
 * Waits at the gate: until a new cycle shows every watched zone back within the tolerance of
 * its idle baseline, no throttle episode open and no passive trip's cooling active; a board
 * colder than that runs the warm_up command; after max_wait the repetition goes on, marked
 * gate_timeout. False when a stop signal came.
 */
static bool gate_wait(struct runner *r, const struct buf *here, struct gate_result *out) {
	// Only a cycle stamped after the gate began: one read before the previous repetition
	// ended says nothing of the board now.
	int64_t t0 = now_ms(), seen = t0 / 1000;
	struct gate_view g = {.zones = xcalloc(r->base.n + 1, sizeof(*g.zones))};
	unsigned warmups = 0;
	bool passed = false;
	struct buf why = {0};
	while (!stop_signal) {
		int64_t waited = now_ms() - t0;
		if (gate_look(r, &seen, &g)) {
			buf_clear(&why);
			campaigngate_describe(&g.in, &g.v, &why);
			passed = g.v.state == CAMPAIGNGATE_PASS;
			if (passed || waited >= r->suite.max_wait_ms) {
				break;
			}
			char w[64];
			unit_duration(w, sizeof(w), (double)waited / 1000);
			progress(r, false, "%s: gate: waiting %s: %s", here->data, w, why.data);
			if (g.v.state == CAMPAIGNGATE_COLD && r->suite.warm_up.argv) {
				warm_up(r);
				warmups++;
				continue;
			}
		}
		pause_ms(POLL_MS);
	}
	out->wait_ms = now_ms() - t0;
	out->outcome = passed ? CAMPAIGNGATE_PASSED : CAMPAIGNGATE_TIMEOUT;
	char w[64];
	unit_duration(w, sizeof(w), (double)out->wait_ms / 1000);
	snprintf(out->detail, sizeof(out->detail), "%s after %s%s: %s",
		 passed ? "passed" : "gate_timeout", w, warmups ? " and a warm-up" : "",
		 why.data ? why.data : "no cycle seen");
	buf_finish(&why);
	free(g.zones);
	return !stop_signal;
}

/* --- recording ---------------------------------------------------------------------------- */

/* The tags of a campaign's run: the suite's, the step's, then the campaign's own. */
static void run_tags(const struct runner *r, const struct campaign_step *s, const char *step,
		     unsigned rep, bool warmup, enum campaign_start start, bool gate_timeout,
		     struct buf *out) {
	struct runtag_list tags = {0};
	for (size_t i = 0; i < r->suite.n_tags; i++) {
		runtag_put(&tags, r->suite.tags[i].key, r->suite.tags[i].value);
	}
	for (size_t i = 0; s && i < s->n_tags; i++) {
		runtag_put(&tags, s->tags[i].key, s->tags[i].value);
	}
	char text[32];
	snprintf(text, sizeof(text), "%" PRId64, r->c.id);
	runtag_put(&tags, "campaign", text);
	runtag_put(&tags, "step", step);
	snprintf(text, sizeof(text), "%u", rep);
	runtag_put(&tags, "rep", text);
	runtag_put(&tags, "start", campaign_start_name(start));
	if (s) { // a step's run: its warmup runs apart from its measured repetitions
		runtag_put(&tags, "warmup", warmup ? "1" : "0");
	}
	if (gate_timeout) {
		runtag_put(&tags, "gate", "timeout");
	}
	runtag_list_json(&tags, out);
	runtag_list_finish(&tags);
}

/* The campaign's row rewritten; false after saying why. */
static bool save(struct runner *r) {
	if (store_campaign_update(r->store, &r->c) == 0) {
		return true;
	}
	fprintf(stderr,
		"thermlog campaign run: could not write campaign %" PRId64 " to the "
		"database\n",
		r->c.id);
	return false;
}

/* The expected metrics @reply (a run's object) lacks, ' '-separated ("" when none lacks). */
static char *missing_metrics(const struct campaign_step *s, const char *reply) {
	struct jsonread_error e;
	struct jsonread_node *run =
		reply ? jsonread_parse(reply, strlen(reply), REPLY_JSON_MAX, &e) : NULL;
	const struct jsonread_node *got = jsonread_get(run, "metrics");
	struct buf out = {0};
	buf_puts(&out, "");
	for (size_t i = 0; i < s->n_metrics; i++) {
		if (!jsonread_get(got, s->metrics[i])) {
			buf_printf(&out, "%s%s", out.len ? " " : "", s->metrics[i]);
		}
	}
	jsonread_node_free(run);
	return buf_steal(&out);
}

/* Runs @argv as repetition @rep of step @step; the wrapper's result into @res. */
static int wrap_step(struct runner *r, const struct campaign_step *s, const char *label,
		     const struct campaign_command *cmd, int64_t timeout_ms, const char *tags,
		     struct cli_wrap_result *res) {
	struct cli_wrap w = {.cmd = "campaign run",
			     .sock = r->sock,
			     .label = label,
			     .tags = tags,
			     .timeout_ms = timeout_ms,
			     .argv = cmd->argv,
			     .argc = (int)cmd->argc,
			     .cwd = r->suite_dir,
			     .die_with_parent = true,
			     .interrupt_loses = true,
			     .quiet = true,
			     .recorded_only = true};
	struct runmetric_set metrics = {0};
	int rc = cli_wrap_run(r->ctx, &w, &metrics, res);
	runmetric_set_finish(&metrics);
	(void)s;
	return rc;
}

/* Why a wrapped run leaves the campaign: not recorded, cut, its end not recorded. */
static bool wrapped_ok(struct runner *r, const struct cli_wrap_result *res, const char *what) {
	if (!res->id) {
		fprintf(stderr,
			"thermlog campaign run: %s was not recorded (the daemon at %s): the "
			"campaign stops here; `--resume` goes on with it\n",
			what, r->sock);
		return false;
	}
	if (res->interrupted) {
		fprintf(stderr,
			"thermlog campaign run: %s (run %s) was cut by %s: it will show as "
			"lost, and `--resume` runs it again\n",
			what, res->id, strsignal(res->interrupted));
		return false;
	}
	if (!res->end_recorded) {
		fprintf(stderr,
			"thermlog campaign run: the end of %s (run %s) was not recorded: it "
			"will show as lost; `--resume` runs it again once the daemon is back\n",
			what, res->id);
		return false;
	}
	return true;
}

/* --- the idle baseline, the burst and the fingerprint --------------------------------------- */

/* Starts a run of @label with @tags watched through this process: its id, or 0 (said why). */
static int64_t start_plain(struct runner *r, const char *label, const char *tags) {
	char request_id[33];
	cli_request_id(request_id);
	struct runwire_start s = {.label = label, .tags = tags, .request_id = request_id};
	struct buf body = {0};
	runwire_start_write(&s, &body);
	struct cli_reply reply = {0};
	int64_t id = 0;
	if (cli_daemon_request(r->sock, "campaign run", "/api/v1/runs", body.data, 201, true,
			       ": the campaign stops here", &reply)) {
		char *text = cli_reply_field(reply.body, "id");
		id = text ? strtoll(text, NULL, 10) : 0;
		free(text);
	}
	free(reply.body);
	buf_finish(&body);
	return id;
}

/* Ends run @id with exit 0; false (said why) when the daemon did not take it. */
static bool stop_plain(struct runner *r, int64_t id) {
	struct runwire_stop stop = {.has_exit_code = true, .exit_code = 0, .rss_max_bytes = -1};
	struct buf body = {0};
	runwire_stop_write(&stop, &body);
	char *path = xasprintf("/api/v1/runs/%" PRId64 "/stop", id);
	struct cli_reply reply = {0};
	bool ok = cli_daemon_request(r->sock, "campaign run", path, body.data, 200, false,
				     ": the run will show as lost", &reply);
	free(reply.body);
	free(path);
	buf_finish(&body);
	return ok;
}

/*
 * The idle step: the board left alone for the suite's idle duration, as a run labelled "idle";
 * its baseline is each watched zone's mean over the second half, once the daemon stored the
 * cycles to its end. False when the campaign must stop.
 */
static bool record_idle(struct runner *r) {
	struct buf tags = {0};
	run_tags(r, NULL, CAMPAIGN_IDLE_LABEL, 1, false, CAMPAIGN_START_ANY, false, &tags);
	int64_t t0 = now_ms();
	int64_t id = start_plain(r, CAMPAIGN_IDLE_LABEL, tags.data);
	buf_finish(&tags);
	if (id <= 0) {
		return false;
	}
	r->c.idle_run = id;
	save(r);
	char d[64];
	unit_duration(d, sizeof(d), (double)r->suite.idle_ms / 1000);
	progress(r, true,
		 "campaign %s: idle baseline: the board left alone for %s (run %" PRId64 ")",
		 r->suite.name, d, id);
	if (!pause_ms(r->suite.idle_ms)) {
		fprintf(stderr,
			"thermlog campaign run: the idle run %" PRId64 " was cut by %s: it "
			"will show as lost, and `--resume` measures the baseline again\n",
			id, strsignal(stop_signal));
		return false;
	}
	int64_t t1 = now_ms();
	if (!stop_plain(r, id)) {
		return false;
	}
	// Its second half, once the daemon stored a cycle at or after its end.
	int64_t from = timefmt_floor_div(t0 + (t1 - t0) / 2, 1000), to = t1 / 1000 + 1;
	for (int64_t until = now_ms() + CYCLE_WAIT_MS; last_cycle(r) < t1 / 1000;) {
		if (now_ms() > until || !pause_ms(POLL_MS)) {
			fprintf(stderr,
				"thermlog campaign run: no cycle stored after the idle run: is "
				"the daemon sampling?\n");
			return false;
		}
	}
	char *err = NULL;
	campaign_baseline_finish(&r->base);
	int rc = campaign_baseline_compute(r->store, r->suite.zones, r->suite.n_zones, from, to,
					   &r->base, &err);
	if (rc < 0) {
		fprintf(stderr, "thermlog campaign run: no idle baseline: %s\n",
			err ? err : "no watched zone has a sample in the idle run");
		free(err);
		return false;
	}
	struct buf text = {0};
	struct json j;
	json_init(&j, &text, false);
	campaign_baseline_json(&r->base, &j);
	free(r->c.baseline);
	r->c.baseline = buf_steal(&text);
	free(err);
	return save(r);
}

/* The steps' executables with their sha256, hashed here: part of the fingerprint. */
static void executables_json(struct runner *r, struct json *j) {
	json_key(j, "executables");
	json_array_begin(j);
	for (size_t i = 0; i < r->suite.n_steps; i++) {
		const struct campaign_command *c = &r->suite.steps[i].command;
		// A shell string's executable is its first word, when that names one.
		char *word = c->shell ? xstrndup(c->argv[2], strcspn(c->argv[2], " \t;|&<>"))
				      : xstrdup(c->argv[0]);
		char *path = cli_find_exe(word, r->suite_dir);
		char hex[2 * SHA256_DIGEST_LEN + 1];
		json_object_begin(j);
		json_field_string(j, "step", r->suite.steps[i].label);
		json_field_string(j, "command", word);
		json_field_string(j, "path", path);
		json_field_string(j, "sha256", path && cli_exe_sha256(path, hex) ? hex : NULL);
		json_object_end(j);
		free(path);
		free(word);
	}
	json_array_end(j);
}

/*
 * The board's fingerprint: what it is (boardinfo.h, read at the campaign's start), the steps'
 * executables, and the highest clock each CPU cluster reached in the burst (@reached, a JSON
 * object, or NULL before it).
 */
static void fingerprint(struct runner *r, const char *board, const char *reached) {
	struct buf text = {0};
	struct json j;
	json_init(&j, &text, false);
	json_object_begin(&j);
	json_field_time_ms(&j, "taken", r->c.created_ms);
	json_field_string(&j, "board_name", r->c.board);
	json_field_raw(&j, "board", board);
	executables_json(r, &j);
	if (reached) {
		json_field_raw(&j, "reached_hz", reached);
	} else {
		json_field_null(&j, "reached_hz");
	}
	json_object_end(&j);
	free(r->c.fingerprint);
	r->c.fingerprint = buf_steal(&text);
}

/* The board part of a stored fingerprint (newly allocated), or NULL. */
static char *fingerprint_board(const char *stored) {
	struct jsonread_error e;
	struct jsonread_node *root =
		stored ? jsonread_parse(stored, strlen(stored), REPLY_JSON_MAX, &e) : NULL;
	const struct jsonread_node *board = jsonread_get(root, "board");
	char *text = NULL;
	if (board && board->kind == JSONREAD_OBJECT) {
		struct buf b = {0};
		struct json j;
		json_init(&j, &b, false);
		jsonread_write(&j, board);
		text = buf_steal(&b);
	}
	jsonread_node_free(root);
	return text;
}

struct figures_scan {
	char *figures;
};

static int keep_figures(void *ctx, const struct store_run *run) {
	struct figures_scan *f = ctx;
	f->figures = run->figures ? xstrdup(run->figures) : NULL;
	return 0;
}

/*
 * The binning check: a short all-core burst after the idle run (the suite's burst_command,
 * else `thermlog campaign burst`), recorded as a run labelled "burst"; the highest clock each
 * cluster reached in it goes into the fingerprint beside cpuinfo_max_freq.
 */
static bool record_burst(struct runner *r, const char *board) {
	static char campaign[] = "campaign", burst[] = "burst", for_[] = "--for";
	char self[PATH_MAX], ms[32];
	char *argv[] = {self, campaign, burst, for_, ms, NULL};
	struct campaign_command builtin = {.argv = argv, .argc = 5};
	const struct campaign_command *cmd = &r->suite.burst;
	if (!cmd->argv) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = '\0';
		snprintf(ms, sizeof(ms), "%" PRId64 "ms", r->suite.burst_ms);
		cmd = &builtin;
	}
	struct buf tags = {0};
	run_tags(r, NULL, CAMPAIGN_BURST_LABEL, 1, false, CAMPAIGN_START_ANY, false, &tags);
	progress(r, true, "campaign %s: the binning check: an all-core burst", r->suite.name);
	struct cli_wrap_result res;
	// A burst command that never ends is cut after ten times the burst, at least a minute.
	int64_t limit = r->suite.burst_ms * 10 > 60000 ? r->suite.burst_ms * 10 : 60000;
	wrap_step(r, NULL, CAMPAIGN_BURST_LABEL, cmd, limit, tags.data, &res);
	buf_finish(&tags);
	bool ok = wrapped_ok(r, &res, "the burst");
	if (ok) {
		r->c.burst_run = strtoll(res.id, NULL, 10);
		struct figures_scan f = {0};
		store_run_get(r->store, r->c.burst_run, keep_figures, &f);
		struct buf reached = {0};
		campaign_reached_json(f.figures, &reached);
		fingerprint(r, board, reached.data);
		buf_finish(&reached);
		free(f.figures);
		ok = save(r);
	}
	cli_wrap_result_finish(&res);
	return ok;
}

/* --- the repetitions ---------------------------------------------------------------------- */

/* A repetition being started: what its row says. */
struct rep_start {
	struct runner *r;
	struct store_campaign_run row;
};

static void rep_started(void *ctx, const char *id) {
	struct rep_start *s = ctx;
	s->row.run = strtoll(id, NULL, 10);
	s->row.seq = s->r->seq++;
	if (store_campaign_run_put(s->r->store, &s->row) < 0) {
		fprintf(stderr,
			"thermlog campaign run: could not record repetition %" PRId64
			" (run %s) in the database\n",
			s->row.seq, id);
	}
}

/* The environment a step's command sees: which campaign, step and repetition it is. */
static void step_env(const struct runner *r, const char *step, unsigned rep, bool warmup,
		     enum campaign_start start) {
	char text[32];
	snprintf(text, sizeof(text), "%" PRId64, r->c.id);
	setenv("THERMLOG_CAMPAIGN", text, 1);
	setenv("THERMLOG_CAMPAIGN_STEP", step, 1);
	snprintf(text, sizeof(text), "%u", rep);
	setenv("THERMLOG_CAMPAIGN_REP", text, 1);
	setenv("THERMLOG_CAMPAIGN_WARMUP", warmup ? "1" : "0", 1);
	setenv("THERMLOG_CAMPAIGN_START", campaign_start_name(start), 1);
}

/* The progress line after a repetition: its run, how it ended, the gate. */
static void rep_done(struct runner *r, const struct buf *here, const struct cli_wrap_result *res,
		     const struct gate_result *g, const char *missing) {
	char *status = cli_reply_field(res->reply, "status");
	char took[64], wait[64];
	unit_duration(took, sizeof(took), res->took_s);
	unit_duration(wait, sizeof(wait), (double)g->wait_ms / 1000);
	struct buf tail = {0};
	if (g->outcome != CAMPAIGNGATE_NONE) {
		buf_printf(&tail, ", gate %s after %s",
			   g->outcome == CAMPAIGNGATE_PASSED ? "passed" : "timed out", wait);
	}
	if (missing && *missing) {
		buf_printf(&tail, ", incomplete: no %s", missing);
	}
	progress(r, true, "%s: run %s %s in %s%s", here->data, res->id, status ? status : "?", took,
		 tail.data ? tail.data : "");
	buf_finish(&tail);
	free(status);
}

/*
 * One repetition: the gate (cold) or the warm start, the step's command as a recorded run with
 * the campaign's tags, its row, the expected metrics checked. False when the campaign stops.
 */
static bool run_rep(struct runner *r, size_t step, unsigned rep, bool warmup) {
	const struct campaign_step *s = &r->suite.steps[step];
	// A warm step's warmup runs are what warms it: they start with no condition.
	enum campaign_start start =
		warmup && s->start == CAMPAIGN_START_WARM ? CAMPAIGN_START_ANY : s->start;
	struct gate_result g = {.outcome = CAMPAIGNGATE_NONE};
	struct buf here = {0}, tags = {0};
	where(r, step, rep, warmup, start, &here);
	if (start == CAMPAIGN_START_COLD && !gate_wait(r, &here, &g)) {
		buf_finish(&here);
		return false;
	}
	int64_t warm_ms = start == CAMPAIGN_START_WARM && r->prev_end_ms[step]
				  ? now_ms() - r->prev_end_ms[step]
				  : -1;
	run_tags(r, s, s->label, rep, warmup, start, g.outcome == CAMPAIGNGATE_TIMEOUT, &tags);
	step_env(r, s->label, rep, warmup, start);
	struct rep_start rs = {
		.r = r,
		.row = {.campaign = r->c.id,
			.step = s->label,
			.rep = rep,
			.warmup = warmup,
			.start = start,
			.gate = g.outcome,
			.gate_wait_ms = g.wait_ms,
			.gate_detail = g.outcome != CAMPAIGNGATE_NONE ? g.detail : NULL,
			.warm_ms = warm_ms}};
	struct buf eta_text = {0};
	eta(r, r->done, &eta_text);
	progress(r, false, "%s: running%s", here.data, eta_text.data);
	buf_finish(&eta_text);
	struct cli_wrap w = {.cmd = "campaign run",
			     .sock = r->sock,
			     .label = s->label,
			     .tags = tags.data,
			     .timeout_ms = s->timeout_ms,
			     .argv = s->command.argv,
			     .argc = (int)s->command.argc,
			     .cwd = r->suite_dir,
			     .die_with_parent = true,
			     .interrupt_loses = true,
			     .quiet = true,
			     .recorded_only = true,
			     .started = rep_started,
			     .started_ctx = &rs};
	struct runmetric_set metrics = {0};
	struct cli_wrap_result res;
	cli_wrap_run(r->ctx, &w, &metrics, &res);
	runmetric_set_finish(&metrics);
	buf_finish(&tags);
	bool ok = wrapped_ok(r, &res, here.data);
	if (ok) {
		char *missing = missing_metrics(s, res.reply);
		rs.row.missing_metrics = *missing ? missing : NULL;
		rs.row.seq = r->seq - 1;
		store_campaign_run_put(r->store, &rs.row);
		r->prev_end_ms[step] = now_ms();
		r->sum_s[step] += res.took_s;
		r->sum_wait_s[step] += (double)g.wait_ms / 1000;
		r->n_s[step]++;
		rep_done(r, &here, &res, &g, missing);
		free(missing);
	}
	cli_wrap_result_finish(&res);
	buf_finish(&here);
	return ok;
}

/* Runs the plan from where it stands; false when the campaign stopped before its end. */
static bool run_plan(struct runner *r, const struct campaign_view *v) {
	for (size_t i = 0; i < r->n_plan; i++) {
		const struct campaignplan_slot *slot = &r->plan[i];
		if (v && campaign_view_slot_ended(v, slot)) {
			continue;
		}
		if (stop_signal) {
			return false;
		}
		const struct campaign_step *s = &r->suite.steps[slot->step];
		bool warm_due = s->start == CAMPAIGN_START_WARM && !slot->warmup;
		if (warm_due && (!r->prev_end_ms[slot->step] ||
				 now_ms() - r->prev_end_ms[slot->step] > r->suite.warm_within_ms)) {
			// No repetition of the step ended within warm_within (a resume, or a warm
			// step without warmup runs): one more warmup run warms the board first.
			unsigned extra = s->warmup + ++r->extra_warmup[slot->step];
			if (!run_rep(r, slot->step, extra, true)) {
				return false;
			}
		}
		if (!run_rep(r, slot->step, slot->rep, slot->warmup)) {
			return false;
		}
		r->done++;
	}
	return true;
}

/* --- a campaign begun or resumed ---------------------------------------------------------- */

/* This process as the campaign's runner, its row marked running. */
static void claim(struct runner *r) {
	r->c.status = CAMPAIGN_STATUS_RUNNING;
	r->c.runner_pid = getpid();
	uint64_t ticks = 0;
	pidstart_ticks(r->cfg->procfs_root, r->c.runner_pid, &ticks);
	r->c.runner_start = ticks;
}

/* A new campaign's row, with the board's description as its fingerprint's first part. */
static bool begin(struct runner *r, const char *board_name) {
	char hash[65];
	campaign_suite_hash(&r->suite, hash);
	struct buf canon = {0};
	struct json j;
	json_init(&j, &canon, false);
	campaign_suite_json(&r->suite, &j);
	r->c = (struct store_campaign){.name = xstrdup(r->suite.name),
				       .board = board_name ? xstrdup(board_name) : NULL,
				       .suite_path = xstrdup(r->suite_path),
				       .suite_hash = xstrdup(hash),
				       .suite = buf_steal(&canon),
				       .suite_text = xstrdup(r->suite_text),
				       .created_ms = now_ms()};
	claim(r);
	if (store_campaign_create(r->store, &r->c, &r->c.id) < 0) {
		fprintf(stderr, "thermlog campaign run: could not create the campaign in the "
				"database\n");
		return false;
	}
	struct buf board = {0};
	json_init(&j, &board, false);
	boardinfo_json(r->cfg->sysfs_root, r->cfg->procfs_root, r->cfg->debugfs_root, &j);
	fingerprint(r, board.data, NULL);
	buf_finish(&board);
	progress(r, true, "campaign %s: campaign %" PRId64 " begins (%zu repetitions)",
		 r->suite.name, r->c.id, r->n_plan);
	return save(r);
}

/*
 * The campaign of the suite's name a resume goes on with: refused when it is done, when a live
 * runner has it, or when the suite changed since it began (naming what changed). 0, or the
 * exit code after the message.
 */
static int resume(struct runner *r, struct campaign_view *v) {
	struct store_campaign latest;
	int rc = store_campaign_latest(r->store, r->suite.name, &latest);
	if (rc < 0) {
		fprintf(stderr,
			"thermlog campaign run: --resume: no campaign '%s' in this database "
			"to go on with\n",
			r->suite.name);
		return CLI_EXIT_FAILURE;
	}
	int64_t id = latest.id;
	store_campaign_finish(&latest);
	char *err = NULL;
	rc = campaign_view_load(r->store, r->cfg->procfs_root, id, v, &err);
	if (rc < 0) {
		fprintf(stderr, "thermlog campaign run: --resume: campaign %" PRId64 ": %s\n", id,
			err ? err : strerror(-rc));
		free(err);
		return CLI_EXIT_FAILURE;
	}
	char hash[65];
	campaign_suite_hash(&r->suite, hash);
	if (v->c.status == CAMPAIGN_STATUS_DONE) {
		fprintf(stderr,
			"thermlog campaign run: --resume: campaign %" PRId64 " (%s) is done: "
			"run the suite without --resume for a new campaign\n",
			id, r->suite.name);
		return CLI_EXIT_FAILURE;
	}
	if (v->runner_alive) {
		fprintf(stderr,
			"thermlog campaign run: --resume: campaign %" PRId64 " is being run "
			"by process %" PRId64 "\n",
			id, v->c.runner_pid);
		return CLI_EXIT_FAILURE;
	}
	if (strcmp(hash, v->c.suite_hash) != 0) {
		struct buf what = {0};
		campaign_suite_diff(&v->suite, &r->suite, &what);
		fprintf(stderr,
			"thermlog campaign run: --resume: %s changed since campaign %" PRId64
			" began, so its repetitions would not compare: %s; run it without "
			"--resume for a new campaign\n",
			r->suite_path, id, what.data ? what.data : "its settings differ");
		buf_finish(&what);
		return CLI_EXIT_USAGE;
	}
	store_campaign_finish(&r->c);
	r->c = v->c;
	v->c = (struct store_campaign){0}; // the runner owns the row now
	r->c.id = id;
	claim(r);
	r->done = v->slots_ended;
	for (size_t i = 0; i < v->n_reps; i++) {
		const struct campaign_rep *rep = &v->reps[i];
		r->seq = rep->row.seq + 1 > r->seq ? rep->row.seq + 1 : r->seq;
		const struct campaign_step *s = campaign_suite_step(&r->suite, rep->row.step);
		if (s && rep->row.warmup && rep->row.rep > s->warmup) {
			size_t k = (size_t)(s - r->suite.steps);
			unsigned extra = rep->row.rep - s->warmup;
			r->extra_warmup[k] =
				extra > r->extra_warmup[k] ? extra : r->extra_warmup[k];
		}
	}
	if (r->c.baseline && !campaign_baseline_parse(r->c.baseline, &r->base)) {
		free(r->c.baseline);
		r->c.baseline = NULL; // measured again
	}
	progress(r, true, "campaign %s: campaign %" PRId64 " resumes: %zu of %zu repetitions ended",
		 r->suite.name, id, r->done, r->n_plan);
	return save(r) ? 0 : CLI_EXIT_FAILURE;
}

struct open_scan {
	int64_t campaign;
	size_t open;
};

static int count_open(void *ctx, const struct store_run *run) {
	struct open_scan *o = ctx;
	char *c = run->ended ? NULL : runtag_value(run->tags, "campaign");
	if (c && strtoll(c, NULL, 10) == o->campaign) {
		o->open++;
	}
	free(c);
	return 0;
}

/*
 * Waits until the daemon has closed every run of the campaign a killed runner left open: it
 * records them lost once it sees their process gone (a restarted daemon at its first loop).
 */
static bool wait_cut(struct runner *r) {
	struct store_run_filter since = {.from_ms = r->c.created_ms, .has_from = true};
	for (int64_t until = now_ms() + CUT_WAIT_MS;;) {
		struct open_scan o = {.campaign = r->c.id};
		if (store_runs_scan(r->store, &since, count_open, &o) < 0) {
			return false;
		}
		if (o.open == 0) {
			return true;
		}
		if (now_ms() > until) {
			fprintf(stderr,
				"thermlog campaign run: --resume: %zu runs of campaign %" PRId64
				" are still running: is another runner at work?\n",
				o.open, r->c.id);
			return false;
		}
		progress(r, false, "campaign %s: waiting for the daemon to close %zu cut runs",
			 r->suite.name, o.open);
		if (!pause_ms(POLL_MS)) {
			return false;
		}
	}
}

/* --- thermlog campaign run ---------------------------------------------------------------- */

static const char run_usage[] =
	"usage: thermlog campaign run SUITE.yaml [--board NAME] [--resume]\n"
	"Runs the suite's steps as recorded runs through thermlogd's socket (runs.socket), into\n"
	"the database the daemon records into (or --db, which must be it): the idle baseline and\n"
	"the binning check's burst first, then each step's repetitions, every cold one behind the\n"
	"thermal gate. --resume goes on with the suite's last campaign: the first repetition not\n"
	"recorded as ended. See thermlog-campaign(5).\n";

/*
 * The daemon's socket and database: the one --db names (which the daemon must record into),
 * else the one the daemon says, else the configured one. 0 or the exit code after the message.
 */
static int connect_daemon(struct runner *r, char **db) {
	r->sock = cli_daemon_socket(r->ctx);
	if (!r->sock) {
		return CLI_EXIT_USAGE;
	}
	const char *why = NULL;
	struct jsonread_node *st = get_json(r, "/api/v1/status", &why);
	if (!st) {
		fprintf(stderr,
			"thermlog campaign run: the daemon is not reachable at %s (%s): a "
			"campaign records its runs through it\n",
			r->sock, why);
		return CLI_EXIT_FAILURE;
	}
	int64_t interval_s = 0;
	jsonread_int(jsonread_get(st, "interval_s"), 1, 86400, &interval_s);
	r->interval_ms = interval_s > 0 ? interval_s * 1000 : 60000;
	const char *served = jsonread_string(jsonread_get(st, "database_path"));
	if (r->ctx->db_path) {
		*db = xstrdup(r->ctx->db_path);
	} else {
		*db = xstrdup(served ? served : r->cfg->database);
	}
	jsonread_node_free(st);
	if (!cli_daemon_serves_db(r->ctx, r->sock, "campaign run", "the campaign does not begin")) {
		return CLI_EXIT_FAILURE;
	}
	return 0;
}

/* Reads the suite @path (every problem named before anything runs). 0 or the exit code. */
static int read_suite(struct runner *r, const char *path) {
	char *errors = NULL;
	if (!campaign_suite_load(path, &r->suite, &errors)) {
		fputs(errors, stderr);
		free(errors);
		return CLI_EXIT_USAGE;
	}
	r->suite_text = xstrdup(r->suite.text);
	r->suite_path = realpath(path, NULL);
	r->suite_dir = xstrdup(r->suite_path);
	*strrchr(r->suite_dir, '/') = '\0';
	if (!*r->suite_dir) {
		strcpy(r->suite_dir, "/");
	}
	r->plan = campaign_plan(&r->suite, &r->n_plan);
	size_t n = r->suite.n_steps + 1;
	r->sum_s = xcalloc(n, sizeof(*r->sum_s));
	r->sum_wait_s = xcalloc(n, sizeof(*r->sum_wait_s));
	r->n_s = xcalloc(n, sizeof(*r->n_s));
	r->prev_end_ms = xcalloc(n, sizeof(*r->prev_end_ms));
	r->extra_warmup = xcalloc(n, sizeof(*r->extra_warmup));
	return 0;
}

static void runner_finish(struct runner *r) {
	campaign_suite_finish(&r->suite);
	store_campaign_finish(&r->c);
	campaign_baseline_finish(&r->base);
	for (char **t = r->passive; t && *t; t++) {
		free(*t);
	}
	free(r->passive);
	store_close(r->store);
	free(r->sock);
	free(r->suite_path);
	free(r->suite_dir);
	free(r->suite_text);
	free(r->plan);
	free(r->sum_s);
	free(r->sum_wait_s);
	free(r->n_s);
	free(r->prev_end_ms);
	free(r->extra_warmup);
}

/* The idle baseline, the burst, then the plan: false when the campaign stopped early. */
static bool run_campaign(struct runner *r, const struct campaign_view *v) {
	if (!r->c.baseline && !record_idle(r)) {
		return false;
	}
	if (r->suite.burst_ms > 0 && r->c.burst_run == 0) {
		char *board = fingerprint_board(r->c.fingerprint);
		bool ok = record_burst(r, board ? board : "null");
		free(board);
		if (!ok) {
			return false;
		}
	}
	return run_plan(r, v);
}

/* The campaign's end: done, or stopped early; the line that says it. */
static int finish(struct runner *r, bool done) {
	r->c.status = done ? CAMPAIGN_STATUS_DONE : CAMPAIGN_STATUS_STOPPED;
	r->c.ended_ms = done ? now_ms() : 0;
	r->c.runner_pid = 0;
	r->c.runner_start = 0;
	save(r);
	if (done) {
		progress(r, true,
			 "campaign %s: campaign %" PRId64 " done: %zu repetitions (thermlog "
			 "campaign show %" PRId64 ")",
			 r->suite.name, r->c.id, r->n_plan, r->c.id);
		return CLI_EXIT_OK;
	}
	progress(r, true,
		 "campaign %s: campaign %" PRId64 " stopped after %zu of %zu "
		 "repetitions: `thermlog campaign run %s --resume` goes on",
		 r->suite.name, r->c.id, r->done, r->n_plan, r->suite_path);
	return stop_signal ? 128 + stop_signal : CLI_EXIT_FAILURE;
}

int cli_campaign_run(struct cli_context *ctx, int argc, char **argv) {
	static const struct option longopts[] = {
		{"board", required_argument, NULL, 'b'},
		{"resume", no_argument, NULL, 'r'},
		CLI_OPTION_HELP,
		{0},
	};
	const char *board = NULL;
	bool again = false;
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'b') {
			board = optarg;
		} else if (c == 'r') {
			again = true;
		} else {
			return cli_usage(c, run_usage);
		}
	}
	if (argc - optind != 1) {
		fputs(run_usage, stderr);
		return CLI_EXIT_USAGE;
	}
	struct runner r = {.ctx = ctx, .tty = isatty(STDERR_FILENO)};
	struct campaign_view v = {0};
	char *db = NULL;
	int rc = read_suite(&r, argv[optind]);
	if (rc == 0) {
		rc = cli_setup(ctx);
		r.cfg = rc == 0 ? cli_config(ctx) : NULL;
		rc = r.cfg ? connect_daemon(&r, &db) : rc ? rc : CLI_EXIT_USAGE;
	}
	if (rc == 0 && store_open(&r.store, db, STORE_MODE_WRITE) < 0) { // logs why
		r.store = NULL;
		fprintf(stderr, "thermlog campaign run: could not open the database %s\n", db);
		rc = CLI_EXIT_FAILURE;
	}
	free(db);
	if (rc == 0) {
		struct sigaction act = {.sa_handler = on_stop};
		sigemptyset(&act.sa_mask);
		sigaction(SIGINT, &act, NULL);
		sigaction(SIGTERM, &act, NULL);
		sigaction(SIGHUP, &act, NULL);
		r.passive = boardinfo_passive_cooling(r.cfg->sysfs_root);
		rc = again ? resume(&r, &v) : begin(&r, board) ? 0 : CLI_EXIT_FAILURE;
		if (rc == 0) {
			bool done = (!again || wait_cut(&r)) && run_campaign(&r, again ? &v : NULL);
			rc = finish(&r, done);
		}
	}
	campaign_view_finish(&v);
	runner_finish(&r);
	return rc;
}
