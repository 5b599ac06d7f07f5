/*
 * Answers about runs: list, show, the import of job logs joined with the stored minute
 * samples, and the per-label summary of /metrics (statistics and two boards compared:
 * runs-stats.c). JSON for the CLI and the API alike.
 */
#include "runs.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "jobcsv.h"
#include "json.h"
#include "jsonread.h"
#include "log.h"
#include "runload.h"
#include "runs-internal.h"
#include "runtag.h"
#include "stats.h"
#include "textdist.h"
#include "throttle-report.h"
#include "xalloc.h"

#define OLDEST_MS INT64_C(946684800000) // 2000-01-01T00:00:00Z, as `thermlog import` refuses

/* The stored JSON text of tags, figures or a fingerprint; NULL (written as null) if none. */
static const char *stored(const char *text) {
	return text && *text ? text : NULL;
}

static void write_run_fields(struct json *j, const struct store_run *run,
			     const struct runs_episodes *e, const struct runmetric_set *metrics) {
	json_field_int(j, "id", run->id);
	json_field_string(j, "label", run->label);
	json_field_raw(j, "tags", stored(run->tags));
	json_field_time_ms(j, "start", run->start_ms);
	json_field_time_ms_or_null(j, "end", run->ended, run->end_ms);
	if (run->ended) {
		json_field_fixed(j, "duration_s", (double)(run->end_ms - run->start_ms) / 1000.0,
				 3);
	} else {
		json_field_null(j, "duration_s");
	}
	json_field_string(j, "status", run_status_name(run->status));
	json_field_int_or_null(j, "exit_code", run->exit_code >= 0, run->exit_code);
	json_field_int_or_null(j, "signal", run->signal > 0, run->signal);
	json_field_string(j, "error", run->error);
	json_field_double(j, "energy_j", run->energy_j);
	json_field_string(j, "energy_method", run->energy_method);
	json_field_double(j, "energy_coverage", run->energy_coverage);
	json_field_double(j, "temp_max_c", run->temp_max_c);
	json_field_double(j, "rss_max_bytes", run->rss_max_bytes);
	json_field_string(j, "origin", run->origin);
	runs_write_metrics(j, metrics);
	runs_write_throttle(j, e, run);
}

/* One run's object, written while the scan's strings are valid (a list's item, or alone). */
struct one_writer {
	struct json *j;
	struct store *store;
	const struct runs_episodes *e; // read for a list; NULL: read for the run alone
	const struct runs_metrics *m;  // likewise
	int64_t n;                     // runs written
	int rc;                        // a failure reading the run alone's metrics
};

static int write_one(void *ctx, const struct store_run *run) {
	struct one_writer *w = ctx;
	struct runs_episodes own;
	struct runs_metrics own_metrics = {0};
	if (!w->e) {
		runs_episodes_read(w->store, run->start_ms,
				   run->ended ? run->end_ms : run->start_ms, &own);
	}
	if (!w->m) {
		w->rc = runs_metrics_read_run(w->store, run->id, &own_metrics);
	}
	w->n++;
	json_object_begin(w->j);
	write_run_fields(w->j, run, w->e ? w->e : &own,
			 runs_metrics_of(w->m ? w->m : &own_metrics, run->id));
	json_object_end(w->j);
	if (!w->e) {
		runs_episodes_finish(&own);
	}
	runs_metrics_finish(&own_metrics);
	return w->rc;
}

/*
 * A JSON answer written aside: the caller's buffer receives it only once all of it was read
 * without error.
 */
struct draft {
	struct buf body;
	struct json j;
};

static struct json *draft_begin(struct draft *d, bool pretty) {
	buf_init(&d->body);
	json_init(&d->j, &d->body, pretty);
	return &d->j;
}

/* Appends the draft to @out when @rc is 0 and frees it; returns @rc. */
static int draft_end(struct draft *d, int rc, struct buf *out) {
	if (rc == 0) {
		buf_append(out, d->body.data, d->body.len);
	}
	buf_finish(&d->body);
	return rc;
}

int runs_get_json(struct store *store, int64_t id, struct buf *out) {
	struct draft d;
	struct json *j = draft_begin(&d, false);
	struct one_writer w = {.j = j, .store = store};
	int rc = store_run_get(store, id, write_one, &w);
	rc = rc == 0 ? w.rc : rc;
	if (rc == 0 && d.body.len == 0) {
		rc = -ENOENT;
	}
	return draft_end(&d, rc, out);
}

int runs_list_json(struct store *store, const struct store_run_filter *filter, bool pretty,
		   struct buf *out) {
	struct draft d;
	struct json *j = draft_begin(&d, pretty);
	json_object_begin(j);
	json_key(j, "runs");
	json_array_begin(j);
	// One read of the episodes for the whole list: those of the runs that start in the
	// filter's window, and end whenever.
	struct runs_episodes e;
	runs_episodes_read(store, filter && filter->has_from ? filter->from_ms : 0, INT64_MAX / 2,
			   &e);
	struct runs_metrics m;
	int rc = runs_metrics_read(store, filter, &m);
	struct one_writer c = {.j = j, .store = store, .e = &e, .m = &m};
	rc = rc == 0 ? store_runs_scan(store, filter, write_one, &c) : rc;
	runs_episodes_finish(&e);
	runs_metrics_finish(&m);
	json_array_end(j);
	int64_t matched = c.n;
	if (rc == 0 && filter && filter->limit > 0 && c.n == filter->limit) {
		rc = store_runs_count(store, filter, &matched); // a full list: are there more?
	}
	if (rc == 0 && filter && filter->limit > 0 && matched > filter->limit) {
		// Cut to the newest: says so, and how many there are.
		json_key(j, "truncated");
		json_object_begin(j);
		json_field_int(j, "limit", filter->limit);
		json_field_int(j, "matched", matched);
		json_object_end(j);
	}
	json_object_end(j);
	return draft_end(&d, rc, out);
}

/* --- the list as CSV -------------------------------------------------------------------------- */

/* The tag keys and metric names (with units) of the runs a list writes, sorted. */
struct csv_columns {
	char **tags;
	size_t n_tags, cap_tags;
	char **metrics, **units;
	size_t n_metrics, cap_metrics, cap_units;
	const struct runs_metrics *m;
	struct buf *out;
};

static bool listed(char **list, size_t n, const char *s) {
	for (size_t i = 0; i < n; i++) {
		if (strcmp(list[i], s) == 0) {
			return true;
		}
	}
	return false;
}

static int collect_columns(void *ctx, const struct store_run *run) {
	struct csv_columns *c = ctx;
	struct jsonread_error err;
	size_t len = run->tags ? strlen(run->tags) : 0;
	struct jsonread_node *tree = len ? jsonread_parse(run->tags, len, len, &err) : NULL;
	for (size_t i = 0; tree && tree->kind == JSONREAD_OBJECT && i + 1 < tree->n; i += 2) {
		if (!listed(c->tags, c->n_tags, tree->items[i]->text)) {
			c->tags = xgrow(c->tags, &c->cap_tags, c->n_tags + 1, sizeof(*c->tags));
			c->tags[c->n_tags++] = xstrdup(tree->items[i]->text);
		}
	}
	jsonread_node_free(tree);
	const struct runmetric_set *set = runs_metrics_of(c->m, run->id);
	for (size_t i = 0; set && i < set->n; i++) {
		if (!listed(c->metrics, c->n_metrics, set->m[i].name)) {
			c->metrics = xgrow(c->metrics, &c->cap_metrics, c->n_metrics + 1,
					   sizeof(*c->metrics));
			c->units =
				xgrow(c->units, &c->cap_units, c->n_metrics + 1, sizeof(*c->units));
			c->units[c->n_metrics] = xstrdup(set->m[i].unit);
			c->metrics[c->n_metrics++] = xstrdup(set->m[i].name);
		}
	}
	return 0;
}

static void csv_text(struct buf *b, const char *s, bool first) {
	csv_field(b, s ? s : "", s ? strlen(s) : 0, first);
}

static void csv_number(struct buf *b, double v) {
	char text[32] = "";
	if (isfinite(v)) {
		json_format_double(text, v);
	}
	csv_text(b, text, false);
}

static int write_csv_run(void *ctx, const struct store_run *run) {
	struct csv_columns *c = ctx;
	struct buf *b = c->out;
	char id[24], start[TIMEFMT_ISO_LEN], end[TIMEFMT_ISO_LEN] = "";
	snprintf(id, sizeof(id), "%lld", (long long)run->id);
	timefmt_iso_ms(run->start_ms, start);
	if (run->ended) {
		timefmt_iso_ms(run->end_ms, end);
	}
	csv_text(b, id, true);
	csv_text(b, run->label, false);
	csv_text(b, start, false);
	csv_text(b, end, false);
	csv_text(b, run_status_name(run->status), false);
	csv_number(b, run->exit_code >= 0 ? run->exit_code : NAN);
	csv_number(b, run->signal > 0 ? run->signal : NAN);
	csv_number(b, run->energy_j);
	csv_text(b, run->energy_method, false);
	csv_number(b, run->temp_max_c);
	csv_number(b, run->rss_max_bytes);
	csv_text(b, run->error, false);
	for (size_t i = 0; i < c->n_tags; i++) {
		char *v = runtag_value(run->tags, c->tags[i]);
		csv_text(b, v, false);
		free(v);
	}
	const struct runmetric_set *set = runs_metrics_of(c->m, run->id);
	for (size_t i = 0; i < c->n_metrics; i++) {
		const struct runmetric *m = set ? runmetric_find(set, c->metrics[i]) : NULL;
		csv_number(b, m ? m->value : NAN);
	}
	csv_end_record(b);
	return 0;
}

int runs_list_csv(struct store *store, const struct store_run_filter *filter, struct buf *out) {
	struct runs_metrics m;
	struct buf body = {0};
	struct csv_columns c = {.m = &m, .out = &body};
	int rc = runs_metrics_read(store, filter, &m);
	rc = rc == 0 ? store_runs_scan(store, filter, collect_columns, &c) : rc;
	static const char *const head[] = {
		"id",     "label",    "start",         "end",        "status",        "exit_code",
		"signal", "energy_j", "energy_method", "temp_max_c", "rss_max_bytes", "error"};
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++) {
		csv_text(&body, head[i], i == 0);
	}
	for (size_t i = 0; i < c.n_tags; i++) {
		char *h = xasprintf("tag:%s", c.tags[i]);
		csv_text(&body, h, false);
		free(h);
	}
	for (size_t i = 0; i < c.n_metrics; i++) {
		char *h = *c.units[i] ? xasprintf("metric:%s (%s)", c.metrics[i], c.units[i])
				      : xasprintf("metric:%s", c.metrics[i]);
		csv_text(&body, h, false);
		free(h);
	}
	csv_end_record(&body);
	rc = rc == 0 ? store_runs_scan(store, filter, write_csv_run, &c) : rc;
	if (rc == 0) {
		buf_append(out, body.data, body.len);
	}
	for (size_t i = 0; i < c.n_tags; i++) {
		free(c.tags[i]);
	}
	for (size_t i = 0; i < c.n_metrics; i++) {
		free(c.metrics[i]);
		free(c.units[i]);
	}
	free(c.tags);
	free(c.metrics);
	free(c.units);
	buf_finish(&body);
	runs_metrics_finish(&m);
	return rc;
}

/* --- show --------------------------------------------------------------------------------- */

/* A run copied out of the scan (its strings are only borrowed there). */
struct run_copy {
	struct store_run run;
	char *strings[8];
};

static char *keep(struct run_copy *c, int slot, const char *s) {
	c->strings[slot] = s ? xstrdup(s) : NULL;
	return c->strings[slot];
}

static int copy_run(void *ctx, const struct store_run *run) {
	struct run_copy *c = ctx;
	c->run = *run;
	c->run.label = keep(c, 0, run->label);
	c->run.tags = keep(c, 1, run->tags);
	c->run.origin = keep(c, 3, run->origin);
	c->run.energy_method = keep(c, 4, run->energy_method);
	c->run.figures = keep(c, 5, run->figures);
	c->run.fingerprint = keep(c, 6, run->fingerprint);
	c->run.error = keep(c, 7, run->error);
	return 0;
}

static void run_copy_finish(struct run_copy *c) {
	for (size_t i = 0; i < sizeof(c->strings) / sizeof(c->strings[0]); i++) {
		free(c->strings[i]);
	}
	*c = (struct run_copy){0};
}

/* The channels by id, to name and scale the values of fast samples. */
struct channel_index {
	struct store_channel *list;
	size_t n;
};

static const struct store_channel *channel_by_id(const struct channel_index *ci, int64_t id) {
	for (size_t i = 0; i < ci->n; i++) {
		if (ci->list[i].id == id) {
			return &ci->list[i];
		}
	}
	return NULL;
}

/* A run with the channels its fast samples are read with, and the scan's end. */
struct run_view {
	struct run_copy c;
	struct channel_index ci;
	int64_t to; // exclusive
};

static int run_view_open(struct store *store, int64_t id, struct run_view *v) {
	*v = (struct run_view){0};
	int rc = store_run_get(store, id, copy_run, &v->c);
	if (rc < 0) {
		return rc;
	}
	if ((rc = store_channels(store, &v->ci.list, &v->ci.n)) < 0) {
		run_copy_finish(&v->c);
		return rc;
	}
	// A running run's samples reach to now: INT64_MAX bounds the scan.
	v->to = v->c.run.ended ? v->c.run.end_ms + 1 : INT64_MAX;
	return 0;
}

static void run_view_finish(struct run_view *v) {
	store_channels_free(v->ci.list, v->ci.n);
	run_copy_finish(&v->c);
}

/* Fast samples of one instant share its time stamp: counts the instants of a scan. */
struct instants {
	size_t n;
	int64_t last_ts;
};

/* Returns true when @ts_ms starts a new instant (its index is then in->n - 1). */
static bool instant_next(struct instants *in, int64_t ts_ms) {
	if (in->n > 0 && ts_ms == in->last_ts) {
		return false;
	}
	in->n++;
	in->last_ts = ts_ms;
	return true;
}

/* Pass one of show: the hottest fast sample. */
struct peak_scan {
	const struct channel_index *ci;
	const struct config *cfg;
	struct instants inst;
	bool found;
	double peak_c;
	int64_t peak_ts, peak_channel;
	size_t peak_index; // the instant's index in the run
};

static int find_peak(void *ctx, const struct store_run_sample *s) {
	struct peak_scan *p = ctx;
	instant_next(&p->inst, s->ts_ms);
	const struct store_channel *c = channel_by_id(p->ci, s->channel_id);
	if (!c || c->ch.kind != CHANNEL_KIND_TEMPERATURE ||
	    !config_peak_channel(p->cfg, c->ch.key)) {
		return 0;
	}
	double v = stats_value(s->q, c->ch.resolution);
	if (!p->found || v > p->peak_c) {
		p->found = true;
		p->peak_c = v;
		p->peak_ts = s->ts_ms;
		p->peak_channel = s->channel_id;
		p->peak_index = p->inst.n - 1;
	}
	return 0;
}

static int count_instants(void *ctx, const struct store_run_sample *s) {
	instant_next(ctx, s->ts_ms);
	return 0;
}

/* Writes the instants whose index is in [lo, hi] and a multiple of stride, each with its values. */
struct sample_writer {
	const struct channel_index *ci;
	struct json *j;
	struct instants inst;
	size_t lo, hi, stride;
	bool open;
};

static void close_instant(struct sample_writer *w) {
	if (w->open) {
		json_object_end(w->j); // values
		json_object_end(w->j);
		w->open = false;
	}
}

static int write_sample(void *ctx, const struct store_run_sample *s) {
	struct sample_writer *w = ctx;
	if (instant_next(&w->inst, s->ts_ms)) {
		close_instant(w);
		size_t index = w->inst.n - 1;
		if (index >= w->lo && index <= w->hi && index % w->stride == 0) {
			json_object_begin(w->j);
			json_field_time_ms(w->j, "time", s->ts_ms);
			json_key(w->j, "values");
			json_object_begin(w->j);
			w->open = true;
		}
	}
	const struct store_channel *c = channel_by_id(w->ci, s->channel_id);
	if (w->open && c) {
		json_field_double(w->j, c->ch.key, stats_value(s->q, c->ch.resolution));
	}
	return 0;
}

int runs_show_json(struct store *store, const struct config *cfg, int64_t id, bool pretty,
		   struct buf *out) {
	struct run_view v;
	int rc = run_view_open(store, id, &v);
	if (rc < 0) {
		return rc;
	}
	struct peak_scan p = {.ci = &v.ci, .cfg = cfg};
	rc = store_run_samples_scan(store, v.c.run.start_ms, v.to, find_peak, &p);
	struct draft d;
	struct json *j = draft_begin(&d, pretty);
	json_object_begin(j);
	json_key(j, "run");
	json_object_begin(j);
	struct runs_episodes e;
	runs_episodes_read(store, v.c.run.start_ms,
			   v.c.run.ended ? v.c.run.end_ms : v.c.run.start_ms, &e);
	struct runs_metrics m;
	int mrc = runs_metrics_read_run(store, id, &m);
	rc = rc == 0 ? mrc : rc;
	write_run_fields(j, &v.c.run, &e, runs_metrics_of(&m, id));
	runs_metrics_finish(&m);
	runs_episodes_finish(&e);
	json_field_raw(j, "figures", stored(v.c.run.figures));
	json_field_raw(j, "fingerprint", stored(v.c.run.fingerprint));
	json_field_int(j, "fast_samples", (int64_t)p.inst.n);
	json_key(j, "peak");
	if (rc == 0 && p.found) {
		const struct store_channel *pc = channel_by_id(&v.ci, p.peak_channel);
		json_object_begin(j);
		json_field_string(j, "channel", pc->ch.key);
		json_field_double(j, "value", p.peak_c);
		json_field_time_ms(j, "time", p.peak_ts);
		json_key(j, "samples");
		json_array_begin(j);
		struct sample_writer w = {
			.ci = &v.ci,
			.j = j,
			.lo = p.peak_index > RUNS_SHOW_AROUND ? p.peak_index - RUNS_SHOW_AROUND : 0,
			.hi = p.peak_index + RUNS_SHOW_AROUND,
			.stride = 1,
		};
		rc = store_run_samples_scan(store, v.c.run.start_ms, v.to, write_sample, &w);
		close_instant(&w);
		json_array_end(j);
		json_object_end(j);
	} else {
		json_null(j);
	}
	json_object_end(j);
	json_object_end(j);
	rc = draft_end(&d, rc, out);
	run_view_finish(&v);
	return rc;
}

int runs_samples_json(struct store *store, int64_t id, unsigned max_points, bool pretty,
		      struct buf *out) {
	struct run_view v;
	int rc = run_view_open(store, id, &v);
	if (rc < 0) {
		return rc;
	}
	struct instants count = {0};
	rc = store_run_samples_scan(store, v.c.run.start_ms, v.to, count_instants, &count);
	struct draft d;
	struct json *j = draft_begin(&d, pretty);
	size_t want = max_points > 0 ? max_points : 1;
	size_t stride = (count.n + want - 1) / want;
	struct sample_writer w = {
		.ci = &v.ci, .j = j, .lo = 0, .hi = SIZE_MAX, .stride = stride > 0 ? stride : 1};
	json_object_begin(j);
	json_field_int(j, "id", id);
	json_field_int(j, "fast_samples", (int64_t)count.n);
	json_field_int(j, "stride", (int64_t)w.stride);
	json_key(j, "samples");
	json_array_begin(j);
	if (rc == 0) {
		rc = store_run_samples_scan(store, v.c.run.start_ms, v.to, write_sample, &w);
	}
	close_instant(&w);
	json_array_end(j);
	json_object_end(j);
	rc = draft_end(&d, rc, out);
	run_view_finish(&v);
	return rc;
}

/* --- import ------------------------------------------------------------------------------- */

/* What the stored minute samples say about a run's window: heat and memory. */
struct window_scan {
	const struct channel_index *ci;
	const struct config *cfg;
	double temp_max_c;
	size_t n_temp;
	double available_min, swap_used_max; // bytes
	size_t n_available, n_swap;
	struct runload *load;
};

/* The meminfo source's channels (src/sources/meminfo.c) a run's memory figures come from. */
#define KEY_AVAILABLE "meminfo/available"
#define KEY_SWAP_USED "meminfo/swap_used"

static bool peak_channel(const struct config *cfg, const struct store_channel *c) {
	return c->ch.kind == CHANNEL_KIND_TEMPERATURE && config_peak_channel(cfg, c->ch.key);
}

static bool joined_channel(const struct config *cfg, const struct store_channel *c) {
	return peak_channel(cfg, c) || strcmp(c->ch.key, KEY_AVAILABLE) == 0 ||
	       strcmp(c->ch.key, KEY_SWAP_USED) == 0 || strcmp(c->ch.source, "load") == 0;
}

bool runs_policy_cpus(const struct channel *ch, bool has[RUNLOAD_CPUS_MAX]) {
	memset(has, 0, RUNLOAD_CPUS_MAX * sizeof(*has));
	if (strncmp(ch->key, "cpufreq/", 8) != 0 || !ch->meta) {
		return false;
	}
	struct jsonread_error err;
	size_t len = strlen(ch->meta);
	struct jsonread_node *tree = jsonread_parse(ch->meta, len, len, &err);
	const struct jsonread_node *cpus = jsonread_get(tree, "affected_cpus");
	bool any = false;
	for (size_t k = 0; cpus && cpus->kind == JSONREAD_ARRAY && k < cpus->n; k++) {
		const struct jsonread_node *v = cpus->items[k];
		if (v->kind == JSONREAD_NUMBER && v->number >= 0 && v->number < RUNLOAD_CPUS_MAX &&
		    v->number == floor(v->number)) {
			has[(int)v->number] = any = true;
		}
	}
	jsonread_node_free(tree);
	return any;
}

/* The clusters of a run's load: each cpufreq policy's CPUs (runs_policy_cpus()). */
static void load_clusters(const struct channel_index *ci, struct runload *l) {
	for (size_t i = 0; i < ci->n; i++) {
		const struct channel *c = &ci->list[i].ch;
		bool has[RUNLOAD_CPUS_MAX];
		if (runs_policy_cpus(c, has)) {
			runload_add_cluster(l, c->key + 8, has);
		}
	}
}

static int window_add(void *ctx, const struct store_sample *s) {
	struct window_scan *w = ctx;
	const struct store_channel *c = channel_by_id(w->ci, s->channel_id);
	double v = stats_value(s->q, c->ch.resolution);
	if (strcmp(c->ch.source, "load") == 0) {
		runload_add(w->load, s->ts * 1000, c->ch.key, v);
	} else if (peak_channel(w->cfg, c)) {
		w->temp_max_c = w->n_temp++ == 0 || v > w->temp_max_c ? v : w->temp_max_c;
	} else if (strcmp(c->ch.key, KEY_AVAILABLE) == 0) {
		w->available_min =
			w->n_available++ == 0 || v < w->available_min ? v : w->available_min;
	} else if (strcmp(c->ch.key, KEY_SWAP_USED) == 0) {
		w->swap_used_max = w->n_swap++ == 0 || v > w->swap_used_max ? v : w->swap_used_max;
	}
	return 0;
}

static void write_memory(struct json *j, const struct window_scan *w) {
	if (w->n_available == 0 && w->n_swap == 0) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	json_field_double(j, "available_min_bytes", w->n_available ? w->available_min : NAN);
	json_field_double(j, "swap_used_max_bytes", w->n_swap ? w->swap_used_max : NAN);
	json_field_string(j, "method",
			  "min of " KEY_AVAILABLE " and max of " KEY_SWAP_USED
			  " over the stored minute samples in the run's window");
	json_field_int(j, "samples",
		       (int64_t)(w->n_available > w->n_swap ? w->n_available : w->n_swap));
	json_object_end(j);
}

static int import_row(struct store *store, const struct config *cfg, const struct jobcsv_row *row,
		      const struct channel_index *ci, const int64_t *ids, size_t n_ids,
		      struct runs_import_result *res) {
	struct buf key, figures;
	buf_init(&key);
	buf_init(&figures);
	buf_printf(&key, "%s@%lld", row->label, (long long)row->start_ms);
	struct store_run_import run = {
		.label = row->label,
		.start_ms = row->start_ms,
		.end_ms = row->end_ms,
		.status = row->status,
		.exit_code = row->exit_code,
		.energy_j = row->energy_j,
		.energy_method = isfinite(row->energy_j) ? "job log" : NULL,
		.temp_max_c = row->temp_max_c,
		.rss_max_bytes = row->rss_max_bytes,
		.import_key = key.data,
		.error = row->error,
	};
	struct store_run_metric *metrics = xcalloc(row->metrics.n + 1, sizeof(*metrics));
	for (size_t i = 0; i < row->metrics.n; i++) {
		const struct runmetric *m = &row->metrics.m[i];
		metrics[i] = (struct store_run_metric){
			.name = m->name, .value = m->value, .unit = m->unit};
	}
	run.metrics = metrics;
	run.n_metrics = row->metrics.n;
	struct buf tags = {0};
	runtag_list_json(&row->tags, &tags);
	run.tags = tags.data;
	// Minute samples stamped within [start, end] (whole seconds inside the window).
	struct window_scan w = {.ci = ci, .cfg = cfg, .load = runload_create()};
	load_clusters(ci, w.load);
	int rc = 0;
	if (n_ids > 0) {
		int64_t from = (row->start_ms + 999) / 1000, to = row->end_ms / 1000 + 1;
		rc = store_scan_samples(store, from, to, ids, n_ids, false, window_add, &w);
	}
	struct json j;
	json_init(&j, &figures, false);
	json_object_begin(&j);
	json_key(&j, "temp_max_c");
	json_object_begin(&j);
	json_key(&j, "method");
	if (isfinite(row->temp_max_c)) {
		json_string(&j, "job log");
	} else if (w.n_temp > 0) {
		run.temp_max_c = w.temp_max_c;
		res->temp_from_samples++;
		json_string(&j, "max of the stored minute samples of the channels of "
				"runs.peak_channels in the run's window");
		json_field_int(&j, "samples", (int64_t)w.n_temp);
	} else {
		json_null(&j);
	}
	json_object_end(&j);
	json_key(&j, "energy_j");
	json_object_begin(&j);
	json_field_string(&j, "method", isfinite(row->energy_j) ? "job log" : NULL);
	json_object_end(&j);
	json_key(&j, "memory");
	write_memory(&j, &w);
	json_key(&j, "load");
	runload_write_json(
		w.load, &j,
		"stored minute samples of the load channels in the run's window (each "
		"the busy share over the interval before it); a cluster is a cpufreq "
		"policy's CPUs (its affected_cpus), their mean at each sample; p95 type 7");
	runload_destroy(w.load);
	json_field_string(&j, "source", "job log");
	json_field_int(&j, "line", (int64_t)row->line);
	json_object_end(&j);
	run.figures = figures.data;
	bool added = false;
	if (rc == 0) {
		rc = store_run_import(store, &run, &added);
	}
	if (rc == 0) {
		if (added) {
			res->added++;
		} else {
			res->unchanged++;
		}
	}
	free(metrics);
	buf_finish(&tags);
	buf_finish(&key);
	buf_finish(&figures);
	return rc;
}

static bool same_double(double a, double b) {
	return a == b || (isnan(a) && isnan(b));
}

static bool same_metrics(const struct runmetric_set *a, const struct runmetric_set *b) {
	bool same = a->n == b->n;
	for (size_t i = 0; same && i < a->n; i++) {
		const struct runmetric *m = runmetric_find(b, a->m[i].name);
		same = m && m->value == a->m[i].value && strcmp(m->unit, a->m[i].unit) == 0;
	}
	return same;
}

static bool same_tags(const struct runtag_list *a, const struct runtag_list *b) {
	bool same = a->n == b->n;
	for (size_t i = 0; same && i < a->n; i++) {
		same = strcmp(a->tags[i].key, b->tags[i].key) == 0 &&
		       strcmp(a->tags[i].value, b->tags[i].value) == 0;
	}
	return same;
}

static bool rows_equal(const struct jobcsv_row *a, const struct jobcsv_row *b) {
	return a->start_ms == b->start_ms && a->end_ms == b->end_ms && a->status == b->status &&
	       strcmp(a->label, b->label) == 0 && a->exit_code == b->exit_code &&
	       same_double(a->energy_j, b->energy_j) && same_double(a->temp_max_c, b->temp_max_c) &&
	       same_double(a->rss_max_bytes, b->rss_max_bytes) &&
	       strcmp(a->error ? a->error : "", b->error ? b->error : "") == 0 &&
	       same_metrics(&a->metrics, &b->metrics) && same_tags(&a->tags, &b->tags);
}

/* Orders rows by the run they name (label, start), then by line. */
static int cmp_row_run(const void *pa, const void *pb) {
	const struct jobcsv_row *a = *(const struct jobcsv_row *const *)pa;
	const struct jobcsv_row *b = *(const struct jobcsv_row *const *)pb;
	int c = strcmp(a->label, b->label);
	if (c == 0) {
		c = (a->start_ms > b->start_ms) - (a->start_ms < b->start_ms);
	}
	return c != 0 ? c : (a->line > b->line) - (a->line < b->line);
}

/* Rows naming the run of an earlier row (label and start): a repeat of it is dropped and
 * counted, a row with other content is bad. Marks both by setting the row's line to 0. */
static void mark_duplicates(struct jobcsv *log, const char *name, struct runs_import_result *res,
			    struct buf *errors) {
	struct jobcsv_row **by_run = xcalloc(log->n ? log->n : 1, sizeof(*by_run));
	for (size_t i = 0; i < log->n; i++) {
		by_run[i] = &log->rows[i];
	}
	qsort(by_run, log->n, sizeof(*by_run), cmp_row_run);
	unsigned long *drop = xcalloc(log->n ? log->n : 1, sizeof(*drop));
	for (size_t i = 1, first = 0; i < log->n; i++) {
		const struct jobcsv_row *a = by_run[first], *b = by_run[i];
		if (strcmp(a->label, b->label) != 0 || a->start_ms != b->start_ms) {
			first = i;
			continue;
		}
		if (rows_equal(a, b)) {
			res->repeated++;
		} else {
			if (res->bad < JOBCSV_ERRORS_MAX) {
				buf_printf(errors,
					   "%s:%lu: duplicate of line %lu: the same label '%s' and "
					   "start with other figures\n",
					   name, b->line, a->line, a->label);
			}
			res->bad++;
		}
		drop[b - log->rows] = 1;
	}
	size_t n = 0;
	for (size_t i = 0; i < log->n; i++) {
		if (drop[i]) {
			jobcsv_row_finish(&log->rows[i]);
		} else {
			log->rows[n++] = log->rows[i];
		}
	}
	log->n = n;
	free(drop);
	free(by_run);
}

/* A metric's unit as this import knows it: recorded in the store, or first given in the log. */
struct known_unit {
	char *name, *unit;  // unit "" until one is known
	unsigned long line; // where the log first gave it (0: the store's)
};

/* The unit metric @name has so far, read from the store the first time it is asked for. */
static int known_unit(struct store *store, struct known_unit **units, size_t *n, size_t *cap,
		      const char *name, struct known_unit **out) {
	for (size_t i = 0; i < *n; i++) {
		if (strcmp((*units)[i].name, name) == 0) {
			*out = &(*units)[i];
			return 0;
		}
	}
	char *unit;
	int rc = store_run_metric_unit(store, name, &unit);
	if (rc < 0) {
		return rc;
	}
	*units = xgrow(*units, cap, *n + 1, sizeof(**units));
	(*units)[*n] = (struct known_unit){xstrdup(name), unit, 0};
	*out = &(*units)[(*n)++];
	return 0;
}

/*
 * Rows giving a metric a unit other than the one its name has (recorded in the store, or
 * given on an earlier line) are bad: a name keeps one unit. Returns 0 or the store's -errno.
 */
static int check_units(struct store *store, struct jobcsv *log, const char *name,
		       struct runs_import_result *res, struct buf *errors) {
	struct known_unit *units = NULL, *u;
	size_t n_units = 0, cap = 0, kept = 0;
	int rc = 0;
	for (size_t i = 0; i < log->n; i++) {
		struct jobcsv_row *row = &log->rows[i];
		const struct runmetric *bad = NULL;
		for (size_t k = 0; k < row->metrics.n && !bad && rc == 0; k++) {
			const struct runmetric *m = &row->metrics.m[k];
			if ((rc = known_unit(store, &units, &n_units, &cap, m->name, &u)) < 0 ||
			    !*m->unit) {
				continue;
			}
			if (!*u->unit) {
				free(u->unit);
				u->unit = xstrdup(m->unit);
				u->line = row->line;
			} else if (strcmp(u->unit, m->unit) != 0) {
				bad = m;
			}
		}
		if (bad && res->bad++ < JOBCSV_ERRORS_MAX) {
			char where[48] = "recorded";
			if (u->line) {
				snprintf(where, sizeof(where), "given on line %lu", u->line);
			}
			buf_printf(errors,
				   "%s:%lu: metric '%s' in '%s', but it is in '%s' (%s): a metric "
				   "keeps one unit\n",
				   name, row->line, bad->name, bad->unit, u->unit, where);
		}
		if (bad) {
			jobcsv_row_finish(row);
		} else {
			log->rows[kept++] = *row;
		}
	}
	log->n = kept;
	for (size_t i = 0; i < n_units; i++) {
		free(units[i].name);
		free(units[i].unit);
	}
	free(units);
	return rc;
}

int runs_import(struct store *store, FILE *in, const char *name,
		const struct runs_import_options *opt, int64_t now_ms,
		struct runs_import_result *result, struct buf *errors) {
	*result = (struct runs_import_result){0};
	struct jobcsv log = {0};
	struct channel_index ci = {0};
	int64_t *ids = NULL;
	int rc = jobcsv_parse(in, name, opt->default_label, opt->unix_per_s, &log, errors);
	if (rc == -EINVAL) {
		goto out;
	}
	result->bad = log.n_bad;
	// The time bounds of `thermlog import`: a log from the future or before 2000 is a mistake.
	size_t n_good = 0;
	for (size_t i = 0; i < log.n; i++) {
		struct jobcsv_row *row = &log.rows[i];
		const char *problem = NULL;
		if (row->start_ms < OLDEST_MS) {
			problem = "start is before 2000-01-01: not a plausible stamp";
		} else if (row->end_ms > now_ms) {
			problem = "end is in the future";
		}
		if (problem) {
			if (result->bad < JOBCSV_ERRORS_MAX) {
				buf_printf(errors, "%s:%lu: %s\n", name, row->line, problem);
			}
			result->bad++;
			jobcsv_row_finish(row);
			continue;
		}
		log.rows[n_good++] = *row;
	}
	log.n = n_good;
	mark_duplicates(&log, name, result, errors);
	if ((rc = check_units(store, &log, name, result, errors)) < 0) {
		goto out;
	}
	result->rows = log.n;
	if (result->bad > 0 && !opt->skip_bad) {
		rc = -EBADMSG;
		goto out;
	}
	if ((rc = store_channels(store, &ci.list, &ci.n)) < 0) {
		goto out;
	}
	ids = xcalloc(ci.n + 1, sizeof(*ids));
	size_t n_ids = 0;
	for (size_t i = 0; i < ci.n; i++) {
		if (joined_channel(opt->cfg, &ci.list[i])) {
			ids[n_ids++] = ci.list[i].id;
		}
	}
	if ((rc = store_begin(store)) < 0) {
		goto out;
	}
	for (size_t i = 0; i < log.n && rc == 0; i++) {
		rc = import_row(store, opt->cfg, &log.rows[i], &ci, ids, n_ids, result);
		if (rc < 0) {
			buf_printf(errors, "%s:%lu: could not store the run: %s\n", name,
				   log.rows[i].line, strerror(-rc));
		}
	}
	if (rc == 0) {
		rc = store_commit(store);
	} else {
		store_rollback(store);
	}
	if (rc < 0) {
		result->added = 0;
		result->unchanged = 0;
	}
out:
	free(ids);
	store_channels_free(ci.list, ci.n);
	jobcsv_finish(&log);
	return rc;
}

int runs_label_known(struct store *store, const char *label, struct buf *hint) {
	struct runsummary_label *labels;
	size_t n;
	int rc = runs_summary(store, SIZE_MAX, &labels, &n);
	if (rc < 0) {
		return rc;
	}
	struct textdist_near near;
	textdist_near_init(&near, label);
	bool known = false;
	for (size_t i = 0; i < n && !known; i++) {
		known = strcmp(labels[i].label, label) == 0;
		textdist_near_offer(&near, labels[i].label, labels[i].label);
	}
	if (!known) {
		textdist_near_write(&near, true, hint);
	}
	runs_summary_free(labels, n);
	return known ? 1 : 0;
}

int runs_label_check(struct store *store, const char *label, char **err) {
	if (!label) {
		return 0;
	}
	struct buf hint;
	buf_init(&hint);
	int known = runs_label_known(store, label, &hint);
	if (known == 0) {
		*err = xasprintf("no run has the label '%s'%s", label, hint.data ? hint.data : "");
	} else if (known < 0) {
		*err = xasprintf("could not read the runs: %s", strerror(-known));
	}
	buf_finish(&hint);
	return known == 1 ? 0 : known < 0 ? known : -EINVAL;
}

/* --- metrics summary ---------------------------------------------------------------------- */

/*
 * The summary in one pass over the runs in label order: the label being summed, the busiest
 * labels so far (at most max_labels) and the rest folded into "other", so memory holds
 * max_labels + 2 labels whatever the number stored.
 */
struct summary_acc {
	struct runsummary_label cur;  // the label being summed (label NULL before the first run)
	struct runsummary_label *top; // the busiest labels so far, any order
	size_t n, cap, max;
	struct runsummary_label other;
	bool any_other;
};

static int cmp_summary_label(const void *a, const void *b) {
	return strcmp(((const struct runsummary_label *)a)->label,
		      ((const struct runsummary_label *)b)->label);
}

static void summary_add(struct runsummary_label *l, const struct store_run *run) {
	static const double bounds[RUNSUMMARY_BUCKETS] = RUNSUMMARY_BUCKET_BOUNDS_S;
	if (!run->ended) {
		l->by_status[RUN_STATUS_RUNNING]++;
		return;
	}
	if (isfinite(run->energy_j)) {
		l->energy_j_total += run->energy_j;
	}
	if (!run_status_final(run->status)) {
		return;
	}
	l->by_status[run->status]++;
	if (run->status == RUN_STATUS_OK) {
		double d = (double)(run->end_ms - run->start_ms) / 1000.0;
		l->duration_count++;
		l->duration_sum_s += d;
		for (size_t b = 0; b < RUNSUMMARY_BUCKETS; b++) {
			if (d <= bounds[b]) {
				l->duration_bucket[b]++;
				break;
			}
		}
	}
}

static uint64_t summary_total(const struct runsummary_label *l) {
	uint64_t n = 0;
	for (size_t s = 0; s < RUN_STATUS_COUNT; s++) {
		n += l->by_status[s];
	}
	return n;
}

/* Most runs first, then by label, so the labels exported are the busiest and stay stable. */
static int cmp_summary_busy(const void *a, const void *b) {
	const struct runsummary_label *x = a, *y = b;
	uint64_t nx = summary_total(x), ny = summary_total(y);
	if (nx != ny) {
		return nx > ny ? -1 : 1;
	}
	return strcmp(x->label, y->label);
}

static void summary_merge(struct runsummary_label *into, const struct runsummary_label *l) {
	for (size_t s = 0; s < RUN_STATUS_COUNT; s++) {
		into->by_status[s] += l->by_status[s];
	}
	for (size_t b = 0; b < RUNSUMMARY_BUCKETS; b++) {
		into->duration_bucket[b] += l->duration_bucket[b];
	}
	into->duration_count += l->duration_count;
	into->duration_sum_s += l->duration_sum_s;
	into->energy_j_total += l->energy_j_total;
}

/* Folds @l into "other" and frees its label. */
static void summary_fold(struct summary_acc *acc, struct runsummary_label *l) {
	summary_merge(&acc->other, l);
	acc->any_other = true;
	free(l->label);
}

/* A label summed whole: among the busiest (the least busy one then folded), or into other. */
static void summary_done(struct summary_acc *acc, struct runsummary_label *l) {
	// A stored label "other" joins the folded ones: one series per name.
	if (strcmp(l->label, RUNSUMMARY_OTHER) == 0 || acc->max == 0) {
		summary_fold(acc, l);
		return;
	}
	if (acc->n < acc->max) {
		acc->top = xgrow(acc->top, &acc->cap, acc->n + 1, sizeof(*acc->top));
		acc->top[acc->n++] = *l;
		return;
	}
	size_t least = 0;
	for (size_t i = 1; i < acc->n; i++) {
		if (cmp_summary_busy(&acc->top[i], &acc->top[least]) > 0) {
			least = i;
		}
	}
	if (cmp_summary_busy(l, &acc->top[least]) < 0) {
		struct runsummary_label out = acc->top[least];
		acc->top[least] = *l;
		summary_fold(acc, &out);
	} else {
		summary_fold(acc, l);
	}
}

static int summary_collect(void *ctx, const struct store_run *run) {
	struct summary_acc *acc = ctx;
	if (!acc->cur.label || strcmp(acc->cur.label, run->label) != 0) {
		if (acc->cur.label) {
			summary_done(acc, &acc->cur);
		}
		acc->cur = (struct runsummary_label){.label = xstrdup(run->label)};
	}
	summary_add(&acc->cur, run);
	return 0;
}

int runs_summary(struct store *store, size_t max_labels, struct runsummary_label **out, size_t *n) {
	struct summary_acc acc = {.max = max_labels};
	struct store_run_filter all = {.by_label = true};
	*out = NULL;
	*n = 0;
	int rc = store_runs_scan(store, &all, summary_collect, &acc);
	if (acc.cur.label) {
		summary_done(&acc, &acc.cur);
	}
	if (rc < 0) {
		free(acc.other.label);
		runs_summary_free(acc.top, acc.n);
		return rc;
	}
	if (acc.any_other) {
		acc.top = xgrow(acc.top, &acc.cap, acc.n + 1, sizeof(*acc.top));
		acc.other.label = xstrdup(RUNSUMMARY_OTHER);
		acc.top[acc.n++] = acc.other;
	}
	if (acc.n > 0) { // no runs: no series (qsort must not see the NULL array)
		qsort(acc.top, acc.n, sizeof(*acc.top), cmp_summary_label);
	}
	*out = acc.top;
	*n = acc.n;
	return 0;
}

void runs_summary_free(struct runsummary_label *labels, size_t n) {
	for (size_t i = 0; i < n; i++) {
		free(labels[i].label);
	}
	free(labels);
}
