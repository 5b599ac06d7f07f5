/*
 * Campaigns read back from the store (campaign.h): a campaign with its suite, repetitions and
 * runs, its JSON, the idle baseline from the stored cycles and the clocks a burst reached.
 */
#include "campaign.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonread.h"
#include "pidstart.h"
#include "query.h"
#include "xalloc.h"

/* --- reading a campaign back ---------------------------------------------------------------- */

struct campaignplan_slot *campaign_plan(const struct campaign_suite *suite, size_t *n) {
	struct campaignplan_step *steps = xcalloc(suite->n_steps + 1, sizeof(*steps));
	for (size_t i = 0; i < suite->n_steps; i++) {
		steps[i] = (struct campaignplan_step){suite->steps[i].repetitions,
						      suite->steps[i].warmup};
	}
	bool inter = suite->order == CAMPAIGN_ORDER_INTERLEAVED;
	*n = campaignplan_slots(steps, suite->n_steps, inter, NULL, 0);
	struct campaignplan_slot *plan = xcalloc(*n + 1, sizeof(*plan));
	campaignplan_slots(steps, suite->n_steps, inter, plan, *n);
	free(steps);
	return plan;
}

/* The runs the repetitions point to: copies what a repetition needs of its run. */
struct rep_scan {
	struct campaign_view *v;
};

static int take_run(void *ctx, const struct store_run *run) {
	struct campaign_view *v = ((struct rep_scan *)ctx)->v;
	for (size_t i = 0; i < v->n_reps; i++) {
		struct campaign_rep *r = &v->reps[i];
		if (r->row.run != run->id) {
			continue;
		}
		r->found = true;
		r->status = run->ended ? run->status : RUN_STATUS_RUNNING;
		r->start_ms = run->start_ms;
		r->end_ms = run->ended ? run->end_ms : 0;
		r->exit_code = run->exit_code;
		r->duration_s = run->ended ? (double)(run->end_ms - run->start_ms) / 1000 : NAN;
	}
	return 0;
}

/* A repetition's run ended: neither still running nor cut by a fault. */
static bool rep_ended(const struct campaign_rep *r) {
	return r->found && r->status != RUN_STATUS_RUNNING && r->status != RUN_STATUS_LOST;
}

static struct campaign_step_sum *step_sum(struct campaign_view *v, const char *label) {
	for (size_t i = 0; i < v->suite.n_steps; i++) {
		if (strcmp(v->suite.steps[i].label, label) == 0) {
			return &v->steps[i];
		}
	}
	return NULL;
}

static void sum_steps(struct campaign_view *v) {
	v->steps = xcalloc(v->suite.n_steps + 1, sizeof(*v->steps));
	for (size_t i = 0; i < v->suite.n_steps; i++) {
		v->steps[i].step = &v->suite.steps[i];
		v->steps[i].planned = v->suite.steps[i].warmup + v->suite.steps[i].repetitions;
	}
	for (size_t i = 0; i < v->n_reps; i++) {
		const struct campaign_rep *r = &v->reps[i];
		struct campaign_step_sum *s = step_sum(v, r->row.step);
		if (!s) {
			continue;
		}
		s->attempts++;
		s->gate_wait_ms += r->row.gate_wait_ms;
		s->gate_timeouts += r->row.gate == CAMPAIGNGATE_TIMEOUT;
		s->incomplete += r->row.missing_metrics && *r->row.missing_metrics;
		enum run_status st = r->found ? r->status : RUN_STATUS_LOST;
		s->ok += st == RUN_STATUS_OK;
		s->failed += st == RUN_STATUS_FAILED;
		s->lost += st == RUN_STATUS_LOST;
		s->other += st != RUN_STATUS_OK && st != RUN_STATUS_FAILED && st != RUN_STATUS_LOST;
		if (!r->row.warmup && rep_ended(r)) {
			s->cold += r->row.start == CAMPAIGN_START_COLD;
			s->warm += r->row.start == CAMPAIGN_START_WARM;
		}
	}
	size_t n;
	struct campaignplan_slot *plan = campaign_plan(&v->suite, &n);
	v->slots = n;
	for (size_t i = 0; i < n; i++) {
		if (campaign_view_slot_ended(v, &plan[i])) {
			v->slots_ended++;
			v->steps[plan[i].step].ended++;
		}
	}
	free(plan);
}

int campaign_view_load(struct store *store, const char *procfs_root, int64_t id,
		       struct campaign_view *v, char **err) {
	*v = (struct campaign_view){0};
	*err = NULL;
	int rc = store_campaign_get(store, id, &v->c);
	if (rc < 0) {
		return rc;
	}
	if (!campaign_suite_parse(v->c.suite_path, v->c.suite_text, strlen(v->c.suite_text),
				  &v->suite, err)) {
		return -EINVAL;
	}
	struct store_campaign_run *rows;
	size_t n;
	rc = store_campaign_runs(store, id, &rows, &n);
	if (rc < 0) {
		return rc;
	}
	v->reps = xcalloc(n + 1, sizeof(*v->reps));
	for (size_t i = 0; i < n; i++) {
		v->reps[i] = (struct campaign_rep){.row = rows[i], .exit_code = -1};
	}
	free(rows); // its strings now belong to the repetitions
	v->n_reps = n;
	struct store_run_filter since = {.from_ms = v->c.created_ms, .has_from = true};
	struct rep_scan scan = {v};
	rc = n > 0 ? store_runs_scan(store, &since, take_run, &scan) : 0;
	if (rc < 0) {
		return rc;
	}
	v->runner_alive = v->c.status == CAMPAIGN_STATUS_RUNNING &&
			  pidstart_alive(procfs_root, v->c.runner_pid, v->c.runner_start);
	sum_steps(v);
	return 0;
}

void campaign_view_finish(struct campaign_view *v) {
	store_campaign_finish(&v->c);
	campaign_suite_finish(&v->suite);
	for (size_t i = 0; i < v->n_reps; i++) {
		free(v->reps[i].row.step);
		free(v->reps[i].row.gate_detail);
		free(v->reps[i].row.missing_metrics);
	}
	free(v->reps);
	free(v->steps);
	*v = (struct campaign_view){0};
}

bool campaign_view_slot_ended(const struct campaign_view *v, const struct campaignplan_slot *s) {
	const char *label = v->suite.steps[s->step].label;
	for (size_t i = v->n_reps; i-- > 0;) {
		const struct campaign_rep *r = &v->reps[i];
		if (r->row.rep == s->rep && r->row.warmup == s->warmup &&
		    strcmp(r->row.step, label) == 0) {
			return rep_ended(r);
		}
	}
	return false;
}

/* --- JSON ---------------------------------------------------------------------------------- */

static const char *status_name(enum campaign_status s) {
	static const char *const names[] = {"running", "stopped", "done"};
	return names[s];
}

static const char *gate_name(enum campaigngate_outcome g) {
	static const char *const names[] = {"none", "passed", "timeout"};
	return names[g];
}

/* A stored JSON text as it is, or null when there is none. */
static void field_json(struct json *j, const char *key, const char *text) {
	if (text && *text) {
		json_field_raw(j, key, text);
	} else {
		json_field_null(j, key);
	}
}

/* The campaign's row: what `campaign list` shows of each. */
static void row_json(struct json *j, const struct store_campaign *c, bool alive) {
	json_field_int(j, "id", c->id);
	json_field_string(j, "name", c->name);
	json_field_string(j, "board", c->board);
	// A runner killed outright leaves "running" behind: it is stopped.
	enum campaign_status st = c->status;
	if (st == CAMPAIGN_STATUS_RUNNING && !alive) {
		st = CAMPAIGN_STATUS_STOPPED;
	}
	json_field_string(j, "status", status_name(st));
	json_field_string(j, "suite_path", c->suite_path);
	json_field_string(j, "suite_hash", c->suite_hash);
	json_field_time_ms(j, "created", c->created_ms);
	json_field_time_ms_or_null(j, "ended", c->ended_ms > 0, c->ended_ms);
	json_field_int_or_null(j, "idle_run", c->idle_run > 0, c->idle_run);
	json_field_int_or_null(j, "burst_run", c->burst_run > 0, c->burst_run);
}

static void rep_json(struct json *j, const struct campaign_rep *r) {
	json_object_begin(j);
	json_field_int(j, "seq", r->row.seq);
	json_field_string(j, "step", r->row.step);
	json_field_int(j, "rep", r->row.rep);
	json_field_bool(j, "warmup", r->row.warmup);
	json_field_int(j, "run", r->row.run);
	json_field_string(j, "status", r->found ? run_status_name(r->status) : NULL);
	json_field_int_or_null(j, "exit_code", r->found && r->exit_code >= 0, r->exit_code);
	json_field_time_ms_or_null(j, "start", r->found, r->start_ms);
	json_field_double_or_null(j, "duration_s", r->found && isfinite(r->duration_s),
				  r->duration_s);
	json_field_string(j, "start_kind", campaign_start_name(r->row.start));
	json_field_string(j, "gate", gate_name(r->row.gate));
	json_field_fixed(j, "gate_wait_s", (double)r->row.gate_wait_ms / 1000, 3);
	json_field_string(j, "gate_detail", r->row.gate_detail);
	json_field_double_or_null(j, "warm_after_s", r->row.warm_ms >= 0,
				  (double)r->row.warm_ms / 1000);
	json_key(j, "missing_metrics");
	if (r->row.missing_metrics && *r->row.missing_metrics) {
		json_array_begin(j);
		char *copy = xstrdup(r->row.missing_metrics);
		for (char *save = NULL, *m = strtok_r(copy, " ", &save); m;
		     m = strtok_r(NULL, " ", &save)) {
			json_string(j, m);
		}
		free(copy);
		json_array_end(j);
	} else {
		json_null(j);
	}
	json_object_end(j);
}

static void step_sum_json(struct json *j, const struct campaign_step_sum *s) {
	json_object_begin(j);
	json_field_string(j, "label", s->step->label);
	json_field_string(j, "start", campaign_start_name(s->step->start));
	json_field_int(j, "repetitions", s->step->repetitions);
	json_field_int(j, "warmup", s->step->warmup);
	json_field_int(j, "planned", (int64_t)s->planned);
	json_field_int(j, "ended", (int64_t)s->ended);
	json_field_int(j, "attempts", (int64_t)s->attempts);
	json_field_int(j, "ok", (int64_t)s->ok);
	json_field_int(j, "failed", (int64_t)s->failed);
	json_field_int(j, "lost", (int64_t)s->lost);
	json_field_int(j, "other", (int64_t)s->other);
	json_field_int(j, "gate_timeouts", (int64_t)s->gate_timeouts);
	json_field_int(j, "incomplete", (int64_t)s->incomplete);
	json_field_fixed(j, "gate_wait_s", (double)s->gate_wait_ms / 1000, 3);
	json_field_int(j, "cold", (int64_t)s->cold);
	json_field_int(j, "warm", (int64_t)s->warm);
	json_object_end(j);
}

void campaign_view_json(const struct campaign_view *v, struct json *j) {
	json_object_begin(j);
	row_json(j, &v->c, v->runner_alive);
	json_field_int_or_null(j, "runner_pid", v->runner_alive, v->c.runner_pid);
	json_field_int(j, "slots", (int64_t)v->slots);
	json_field_int(j, "slots_ended", (int64_t)v->slots_ended);
	json_key(j, "suite");
	campaign_suite_json(&v->suite, j);
	field_json(j, "fingerprint", v->c.fingerprint);
	field_json(j, "baseline", v->c.baseline);
	json_key(j, "steps");
	json_array_begin(j);
	for (size_t i = 0; i < v->suite.n_steps; i++) {
		step_sum_json(j, &v->steps[i]);
	}
	json_array_end(j);
	json_key(j, "repetitions");
	json_array_begin(j);
	for (size_t i = 0; i < v->n_reps; i++) {
		rep_json(j, &v->reps[i]);
	}
	json_array_end(j);
	json_object_end(j);
}

int64_t campaign_newest(struct store *store) {
	struct store_campaign *list;
	size_t n;
	int64_t id = 0;
	if (store_campaign_list(store, &list, &n) == 0 && n > 0) {
		id = list[n - 1].id;
	}
	store_campaigns_free(list, n);
	return id;
}

int campaign_list_json(struct store *store, const char *procfs_root, struct json *j) {
	struct store_campaign *list;
	size_t n;
	int rc = store_campaign_list(store, &list, &n);
	if (rc < 0) {
		return rc;
	}
	json_object_begin(j);
	json_key(j, "campaigns");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		struct campaign_view v;
		char *err = NULL;
		// The view sums each campaign's repetitions; one whose suite no longer reads is
		// listed by its row alone.
		int vrc = campaign_view_load(store, procfs_root, list[i].id, &v, &err);
		json_object_begin(j);
		row_json(j, &list[i], vrc == 0 && v.runner_alive);
		json_field_int_or_null(j, "slots", vrc == 0, (int64_t)v.slots);
		json_field_int_or_null(j, "slots_ended", vrc == 0, (int64_t)v.slots_ended);
		int64_t wait = 0;
		for (size_t k = 0; vrc == 0 && k < v.n_reps; k++) {
			wait += v.reps[k].row.gate_wait_ms;
		}
		json_field_fixed(j, "gate_wait_s", (double)wait / 1000, 3);
		json_object_end(j);
		campaign_view_finish(&v);
		free(err);
	}
	json_array_end(j);
	json_object_end(j);
	store_campaigns_free(list, n);
	return 0;
}

/* --- the idle baseline -------------------------------------------------------------------- */

/* The mean of each channel matching @globs over [@from, @to) into @zones (*n of them). */
static int window_means(struct store *store, char *const *globs, size_t n_globs, int64_t from,
			int64_t to, struct campaigngate_zone **zones, size_t *n, char **err) {
	*zones = NULL;
	*n = 0;
	struct query_params p = {.has_from = true,
				 .has_to = true,
				 .from = from,
				 .to = to,
				 .channels = (const char *const *)globs,
				 .n_channels = n_globs,
				 .include_unsynced = true};
	struct query_stats s = {0};
	int rc = query_stats_compute(store, &p, &s, err);
	if (rc < 0) {
		query_stats_finish(&s);
		return rc;
	}
	*zones = xcalloc(s.sel.n + 1, sizeof(**zones));
	for (size_t k = 0; k < s.sel.n; k++) {
		double mean = query_stats_mean(&s, k);
		if (!isfinite(mean)) {
			continue;
		}
		(*zones)[*n].key = xstrdup(s.sel.all[s.sel.pick[k]].ch.key);
		(*zones)[(*n)++].baseline_c = mean;
	}
	query_stats_finish(&s);
	return 0;
}

int campaign_baseline_compute(struct store *store, char *const *globs, size_t n_globs, int64_t from,
			      int64_t to, struct campaign_baseline *out, char **err) {
	*out = (struct campaign_baseline){.from = from, .to = to};
	int rc = window_means(store, globs, n_globs, from, to, &out->zones, &out->n, err);
	if (rc < 0) {
		return rc;
	}
	// The ambient is optional: a board without such a channel has none (no error).
	char *ambient[] = {CAMPAIGN_AMBIENT_GLOB};
	char *none = NULL;
	if (window_means(store, ambient, 1, from, to, &out->ambient, &out->n_ambient, &none) < 0) {
		free(none);
	}
	return out->n > 0 ? 0 : -ENODATA;
}

void campaign_baseline_json(const struct campaign_baseline *b, struct json *j) {
	json_object_begin(j);
	json_field_time(j, "from", b->from);
	json_field_time(j, "to", b->to);
	json_field_int(j, "from_ts", b->from);
	json_field_int(j, "to_ts", b->to);
	json_key(j, "zones");
	json_object_begin(j);
	for (size_t i = 0; i < b->n; i++) {
		json_field_fixed(j, b->zones[i].key, b->zones[i].baseline_c, 3);
	}
	json_object_end(j);
	json_key(j, "ambient");
	json_object_begin(j);
	for (size_t i = 0; i < b->n_ambient; i++) {
		json_field_fixed(j, b->ambient[i].key, b->ambient[i].baseline_c, 3);
	}
	json_object_end(j);
	json_object_end(j);
}

bool campaign_baseline_parse(const char *text, struct campaign_baseline *out) {
	*out = (struct campaign_baseline){0};
	struct jsonread_error e;
	struct jsonread_node *root = text ? jsonread_parse(text, strlen(text), 1 << 20, &e) : NULL;
	const struct jsonread_node *zones = jsonread_get(root, "zones");
	bool good = zones && zones->kind == JSONREAD_OBJECT &&
		    jsonread_int(jsonread_get(root, "from_ts"), 0, INT64_MAX, &out->from) &&
		    jsonread_int(jsonread_get(root, "to_ts"), 0, INT64_MAX, &out->to);
	if (good) {
		out->zones = xcalloc(zones->n / 2 + 1, sizeof(*out->zones));
		for (size_t i = 0; i + 1 < zones->n; i += 2) {
			if (zones->items[i + 1]->kind == JSONREAD_NUMBER) {
				out->zones[out->n].key = xstrdup(zones->items[i]->text);
				out->zones[out->n++].baseline_c = zones->items[i + 1]->number;
			}
		}
	}
	jsonread_node_free(root);
	return good && out->n > 0;
}

void campaign_baseline_finish(struct campaign_baseline *b) {
	for (size_t i = 0; b->zones && i < b->n; i++) {
		free((char *)b->zones[i].key);
	}
	free(b->zones);
	for (size_t i = 0; b->ambient && i < b->n_ambient; i++) {
		free((char *)b->ambient[i].key);
	}
	free(b->ambient);
	*b = (struct campaign_baseline){0};
}

/* --- the clocks a burst reached ------------------------------------------------------------ */

/* The highest level of a residency's "seconds" with time spent there, or its max_hz_seen. */
static int64_t reached(const struct jsonread_node *res) {
	int64_t top = 0;
	const struct jsonread_node *secs = jsonread_get(res, "seconds");
	for (size_t i = 0; secs && secs->kind == JSONREAD_OBJECT && i + 1 < secs->n; i += 2) {
		char *end;
		long long hz = strtoll(secs->items[i]->text, &end, 10);
		const struct jsonread_node *t = secs->items[i + 1];
		if (!*end && t->kind == JSONREAD_NUMBER && t->number > 0 && hz > top) {
			top = hz;
		}
	}
	int64_t seen;
	if (jsonread_int(jsonread_get(res, "max_hz_seen"), 1, INT64_MAX, &seen) && seen > top) {
		top = seen;
	}
	return top;
}

void campaign_reached_json(const char *figures, struct buf *out) {
	struct json j;
	json_init(&j, out, false);
	json_object_begin(&j);
	struct jsonread_error e;
	struct jsonread_node *root =
		figures ? jsonread_parse(figures, strlen(figures), 4 << 20, &e) : NULL;
	const struct jsonread_node *res = jsonread_get(root, "residency");
	for (size_t i = 0; res && res->kind == JSONREAD_OBJECT && i + 1 < res->n; i += 2) {
		const char *key = res->items[i]->text;
		int64_t top = strncmp(key, "cpufreq/", 8) == 0 ? reached(res->items[i + 1]) : 0;
		if (top > 0) {
			json_field_int(&j, key, top);
		}
	}
	jsonread_node_free(root);
	json_object_end(&j);
}
