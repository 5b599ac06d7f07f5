/*
 * Per-test board figures (testfig.h): the ok runs of each label grouped, their windows merged,
 * the minute samples of each window scanned once and weighed by the spacing of its cycles
 * (struct lifetime_spacing, as `stats --weight time`), CPU clusters averaged over their CPUs at
 * each cycle, and the runs' throttle shares weighed by their durations.
 */
#include "testfig.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifetime.h"
#include "runload.h"
#include "runs-internal.h"
#include "runtag.h"
#include "stats.h"
#include "xalloc.h"

#define LOAD_RESOLUTION 0.001 // a cluster's mean load, % (runload.h's 0.001)

/* --- the runs --------------------------------------------------------------------------- */

struct fig_run {
	char *label, *group;
	int64_t start_ms, end_ms;
	struct runs_shares shares;
};

struct run_list {
	struct fig_run *runs;
	size_t n, cap;
	const struct runs_episodes *episodes;
	const char *by;
};

static int take_run(void *ctx, const struct store_run *run) {
	struct run_list *l = ctx;
	if (run->status != RUN_STATUS_OK || !run->ended) {
		return 0;
	}
	l->runs = xgrow(l->runs, &l->cap, l->n + 1, sizeof(*l->runs));
	struct fig_run *r = &l->runs[l->n++];
	*r = (struct fig_run){.label = xstrdup(run->label),
			      .group = l->by ? runtag_value(run->tags, l->by) : NULL,
			      .start_ms = run->start_ms,
			      .end_ms = run->end_ms};
	struct throttle_report tr;
	runs_run_throttle(l->episodes, run, &tr, &r->shares);
	throttle_report_finish(&tr);
	return 0;
}

static int cmp_group(const char *a, const char *b) {
	return a && b ? strcmp(a, b) : (a == NULL) - (b == NULL);
}

/* By label, then group (NULL last), then start. */
static int cmp_run(const void *pa, const void *pb) {
	const struct fig_run *a = pa, *b = pb;
	int c = strcmp(a->label, b->label);
	c = c ? c : cmp_group(a->group, b->group);
	return c ? c : (a->start_ms > b->start_ms) - (a->start_ms < b->start_ms);
}

static void run_list_finish(struct run_list *l) {
	for (size_t i = 0; i < l->n; i++) {
		free(l->runs[i].label);
		free(l->runs[i].group);
	}
	free(l->runs);
	*l = (struct run_list){0};
}

/* --- the channels ------------------------------------------------------------------------- */

enum slot_kind { SLOT_ZONE, SLOT_CLOCK, SLOT_CPU, SLOT_NPU, SLOT_POWER };

/* One stored channel the figures read, and what it feeds. */
struct slot {
	int64_t id;
	const struct channel *ch;
	enum slot_kind kind;
	int cpu; // SLOT_CPU: its CPU's number
};

/* A CPU cluster: a cpufreq policy's CPUs, its value at a cycle their mean. */
struct cluster {
	char *name; // "policy4"
	char cpus[64];
	bool has[RUNLOAD_CPUS_MAX];
};

struct plan {
	struct store_channel *channels;
	size_t n_channels;
	struct slot *slots; // by channel id
	size_t n_slots;
	int64_t *ids;
	struct cluster *clusters;
	size_t n_clusters;
	int32_t *slot_by_id; // a channel id's slot, -1 for none
	int64_t max_id;
};

/* "4-5", "0-3", "0,2": @has as a list of ranges. */
static void cpus_text(const bool has[RUNLOAD_CPUS_MAX], char *out, size_t len) {
	size_t at = 0;
	out[0] = '\0';
	for (int c = 0; c < RUNLOAD_CPUS_MAX && at < len; c++) {
		if (!has[c] || (c > 0 && has[c - 1])) {
			continue;
		}
		int end = c;
		while (end + 1 < RUNLOAD_CPUS_MAX && has[end + 1]) {
			end++;
		}
		at += (size_t)snprintf(out + at, len - at, end > c ? "%s%d-%d" : "%s%d",
				       at ? "," : "", c, end);
	}
}

/* The cluster of cpufreq channel @ch (runs_policy_cpus()): false when it has none. */
static bool cluster_of(const struct channel *ch, struct cluster *out) {
	*out = (struct cluster){0};
	if (!runs_policy_cpus(ch, out->has)) {
		return false;
	}
	out->name = xstrdup(ch->key + 8);
	cpus_text(out->has, out->cpus, sizeof(out->cpus));
	return true;
}

/* The number N of "load/cpuN", or -1. */
static int cpu_number(const char *key) {
	if (strncmp(key, "load/cpu", 8) != 0 || key[8] < '0' || key[8] > '9') {
		return -1;
	}
	char *end;
	long n = strtol(key + 8, &end, 10);
	return *end == '\0' && n < RUNLOAD_CPUS_MAX ? (int)n : -1;
}

/* Which slot a channel fills, if any. */
static bool slot_kind_of(const struct store_channel *c, struct slot *s) {
	const struct channel *ch = &c->ch;
	*s = (struct slot){.id = c->id, .ch = ch, .cpu = -1};
	// By key, so a job-log-only database's imported channels (thermal/..., cpufreq/...) count.
	if (ch->kind == CHANNEL_KIND_TEMPERATURE && strncmp(ch->key, "thermal/", 8) == 0) {
		s->kind = SLOT_ZONE;
	} else if (ch->kind == CHANNEL_KIND_FREQUENCY &&
		   (strncmp(ch->key, "cpufreq/", 8) == 0 || strncmp(ch->key, "devfreq/", 8) == 0)) {
		s->kind = SLOT_CLOCK;
	} else if (ch->kind == CHANNEL_KIND_LOAD && (s->cpu = cpu_number(ch->key)) >= 0) {
		s->kind = SLOT_CPU;
	} else if (ch->kind == CHANNEL_KIND_LOAD && strncmp(ch->key, "load/rknpu", 10) == 0) {
		s->kind = SLOT_NPU;
	} else if (ch->kind == CHANNEL_KIND_POWER) {
		s->kind = SLOT_POWER;
	} else {
		return false;
	}
	return true;
}

static int plan_read(struct store *store, struct plan *p) {
	*p = (struct plan){0};
	int rc = store_channels(store, &p->channels, &p->n_channels);
	if (rc < 0) {
		return rc;
	}
	p->slots = xcalloc(p->n_channels + 1, sizeof(*p->slots));
	p->ids = xcalloc(p->n_channels + 1, sizeof(*p->ids));
	p->clusters = xcalloc(p->n_channels + 1, sizeof(*p->clusters));
	for (size_t i = 0; i < p->n_channels; i++) {
		struct slot s;
		if (slot_kind_of(&p->channels[i], &s)) {
			p->ids[p->n_slots] = s.id;
			p->slots[p->n_slots++] = s;
			p->max_id = s.id > p->max_id ? s.id : p->max_id;
		}
		if (cluster_of(&p->channels[i].ch, &p->clusters[p->n_clusters])) {
			p->n_clusters++;
		}
	}
	p->slot_by_id = xcalloc((size_t)p->max_id + 1, sizeof(*p->slot_by_id));
	for (int64_t id = 0; id <= p->max_id; id++) {
		p->slot_by_id[id] = -1;
	}
	for (size_t k = 0; k < p->n_slots; k++) {
		p->slot_by_id[p->slots[k].id] = (int32_t)k;
	}
	return 0;
}

static void plan_finish(struct plan *p) {
	for (size_t i = 0; i < p->n_clusters; i++) {
		free(p->clusters[i].name);
	}
	free(p->clusters);
	free(p->slot_by_id);
	free(p->ids);
	free(p->slots);
	store_channels_free(p->channels, p->n_channels);
	*p = (struct plan){0};
}

static const struct slot *slot_of(const struct plan *p, int64_t id) {
	return id >= 0 && id <= p->max_id && p->slot_by_id[id] >= 0 ? &p->slots[p->slot_by_id[id]]
								    : NULL;
}

/* --- the accumulation ----------------------------------------------------------------------- */

/* One figure's running sums over a label's windows. */
struct acc {
	struct stats_acc secs; // seconds per value
	int64_t max_q;
	size_t samples;
};

struct group {
	struct acc *by_slot;    // p->n_slots
	struct acc *by_cluster; // p->n_clusters
	size_t first, n;        // its runs in the run list
	size_t runs_with_samples;
};

/* A merged window of a group's runs, [from, to) in whole seconds as read. */
struct fig_window {
	int64_t from, to;
	size_t group;
	size_t runs; // the runs merged in it
};

/* One pass over every group's windows, the window being read. */
struct scan {
	const struct plan *p;
	struct group *groups;
	const struct fig_window *windows;
	size_t window; // SIZE_MAX before the first
	struct group *g;
	struct lifetime_spacing sp;
	int64_t ts; // the cycle being read, INT64_MIN before the first of the window
	int64_t dt; // the seconds it stands for
	bool any;   // a sample in this window
	double cpu[RUNLOAD_CPUS_MAX];
	bool have_cpu[RUNLOAD_CPUS_MAX];
};

static void acc_add(struct acc *a, int64_t q, int64_t dt) {
	if (a->samples++ == 0 || q > a->max_q) {
		a->max_q = q;
	}
	if (dt > 0) {
		stats_add_hist(&a->secs, &q, &dt, 1, 0);
	}
}

/* The cycle read is complete: each cluster's mean of its CPUs present in it. */
static void flush_cycle(struct scan *s) {
	if (s->ts == INT64_MIN) {
		return;
	}
	for (size_t c = 0; c < s->p->n_clusters; c++) {
		double sum = 0;
		int n = 0;
		for (int cpu = 0; cpu < RUNLOAD_CPUS_MAX; cpu++) {
			if (s->p->clusters[c].has[cpu] && s->have_cpu[cpu]) {
				sum += s->cpu[cpu];
				n++;
			}
		}
		if (n > 0) {
			acc_add(&s->g->by_cluster[c], llround(sum / n / LOAD_RESOLUTION), s->dt);
		}
	}
	memset(s->have_cpu, 0, sizeof(s->have_cpu));
}

/* The window read is complete: its last cycle, and its runs if it held a sample. */
static void window_end(struct scan *s) {
	if (s->window == SIZE_MAX) {
		return;
	}
	flush_cycle(s);
	s->g->runs_with_samples += s->any ? s->windows[s->window].runs : 0;
}

/* Window @w begins: its group's sums, the spacing of its cycles from none. */
static void window_begin(struct scan *s, size_t w) {
	window_end(s);
	s->window = w;
	s->g = &s->groups[s->windows[w].group];
	lifetime_spacing_init(&s->sp);
	s->ts = INT64_MIN;
	s->any = false;
}

static int scan_sample(void *ctx, size_t window, const struct store_sample *sample) {
	struct scan *s = ctx;
	if (window != s->window) {
		window_begin(s, window);
	}
	if (sample->ts != s->ts) {
		flush_cycle(s);
		s->ts = sample->ts;
		s->dt = lifetime_spacing_next(&s->sp, sample->ts, 0, NULL);
	}
	const struct slot *slot = slot_of(s->p, sample->channel_id);
	if (!slot) {
		return 0;
	}
	s->any = true;
	acc_add(&s->g->by_slot[slot - s->p->slots], sample->q, s->dt);
	if (slot->kind == SLOT_CPU) {
		s->cpu[slot->cpu] = stats_value(sample->q, slot->ch->resolution);
		s->have_cpu[slot->cpu] = true;
	}
	return 0;
}

static int by_from(const void *pa, const void *pb) {
	const struct fig_window *a = pa, *b = pb;
	return a->from != b->from ? (a->from > b->from) - (a->from < b->from)
				  : (a->group > b->group) - (a->group < b->group);
}

/*
 * Scans windows @w[0..n) (any order) in one pass, oldest first: a window's minute samples go to
 * its group's sums, each window's cycles spaced from its own first.
 */
static int scan_windows(struct store *store, const struct plan *p, struct group *groups,
			struct fig_window *w, size_t n) {
	if (p->n_slots == 0 || n == 0) {
		return 0;
	}
	qsort(w, n, sizeof(*w), by_from);
	struct store_window *times = xcalloc(n, sizeof(*times));
	for (size_t i = 0; i < n; i++) {
		times[i] = (struct store_window){w[i].from, w[i].to};
	}
	struct scan s = {.p = p, .groups = groups, .windows = w, .window = SIZE_MAX};
	int rc = store_scan_sample_windows(store, times, n, p->ids, p->n_slots, false, scan_sample,
					   &s);
	window_end(&s);
	free(times);
	return rc;
}

/* --- the figures ---------------------------------------------------------------------------- */

static void figure_from(struct testfig_figure *f, struct acc *a, double resolution) {
	stats_seal(&a->secs);
	f->samples = a->samples;
	f->seconds = a->secs.count;
	f->mean = a->secs.count ? stats_mean(&a->secs, resolution) : NAN;
	f->p95 = a->secs.count ? stats_percentile_inverted_cdf(&a->secs, 95, resolution) : NAN;
	f->max = a->samples ? stats_value(a->max_q, resolution) : NAN;
}

static int by_share(const void *pa, const void *pb) {
	const struct testfig_state *a = pa, *b = pb;
	return a->share != b->share ? (a->share < b->share ? 1 : -1)
				    : (a->hz < b->hz) - (a->hz > b->hz);
}

static void clock_from(struct testfig_clock *c, struct acc *a, const struct channel *ch) {
	figure_from(&c->f, a, ch->resolution);
	size_t n;
	const struct stats_bin *bins = stats_bins(&a->secs, &n);
	c->states = xcalloc(n + 1, sizeof(*c->states));
	for (size_t i = 0; i < n && a->secs.count > 0; i++) {
		c->states[c->n_states++] =
			(struct testfig_state){stats_value(bins[i].q, ch->resolution),
					       (double)bins[i].count / (double)a->secs.count};
	}
	qsort(c->states, c->n_states, sizeof(*c->states), by_share);
}

static void named(struct testfig_figure *f, const char *key, const char *label) {
	f->key = xstrdup(key);
	f->label = label && strcmp(label, key) != 0 ? xstrdup(label) : NULL;
}

/* The figures of group @g's accumulators into @l. */
static void label_figures(const struct plan *p, struct group *g, struct testfig_label *l) {
	size_t n = p->n_slots + p->n_clusters + 1;
	l->zones = xcalloc(n, sizeof(*l->zones));
	l->clocks = xcalloc(n, sizeof(*l->clocks));
	l->loads = xcalloc(n, sizeof(*l->loads));
	l->power = xcalloc(n, sizeof(*l->power));
	for (size_t c = 0; c < p->n_clusters; c++) {
		struct testfig_figure *f = &l->loads[l->n_loads++];
		char key[80];
		snprintf(key, sizeof(key), "cluster/%s", p->clusters[c].name);
		named(f, key, p->clusters[c].cpus);
		figure_from(f, &g->by_cluster[c], LOAD_RESOLUTION);
	}
	for (size_t k = 0; k < p->n_slots; k++) {
		const struct slot *s = &p->slots[k];
		struct acc *a = &g->by_slot[k];
		struct testfig_figure *f = NULL;
		switch (s->kind) {
		case SLOT_ZONE:
			f = &l->zones[l->n_zones++];
			break;
		case SLOT_CLOCK:
			clock_from(&l->clocks[l->n_clocks], a, s->ch);
			named(&l->clocks[l->n_clocks++].f, s->ch->key, s->ch->label);
			continue;
		case SLOT_NPU:
			f = &l->loads[l->n_loads++];
			break;
		case SLOT_POWER:
			f = &l->power[l->n_power++];
			break;
		case SLOT_CPU:
			continue; // in its cluster
		}
		named(f, s->ch->key, s->ch->label);
		figure_from(f, a, s->ch->resolution);
	}
}

static void add_domain(struct testfig_label *l, const char *d) {
	for (size_t i = 0; i < l->n_loaded_domains; i++) {
		if (strcmp(l->loaded_domains[i], d) == 0) {
			return;
		}
	}
	l->loaded_domains =
		xrealloc(l->loaded_domains, (l->n_loaded_domains + 1) * sizeof(*l->loaded_domains));
	l->loaded_domains[l->n_loaded_domains++] = xstrdup(d);
}

/* The runs' throttling, weighed by their durations, and the domains they loaded. */
static void label_throttle(const struct fig_run *runs, size_t n, struct testfig_label *l) {
	double board = 0, loaded = 0, total = 0;
	for (size_t i = 0; i < n; i++) {
		const struct runs_shares *s = &runs[i].shares;
		for (size_t d = 0; d < s->loaded_domains.n; d++) {
			add_domain(l, s->loaded_domains.domains[d]);
		}
		if (isnan(s->board)) {
			continue;
		}
		double dur = (double)(runs[i].end_ms - runs[i].start_ms) / 1000.0;
		l->throttle_runs++;
		total += dur;
		board += s->board * dur;
		loaded += (isnan(s->loaded) ? s->board : s->loaded) * dur;
	}
	l->board_share = l->throttle_runs && total > 0 ? board / total : NAN;
	l->loaded_share = l->throttle_runs && total > 0 ? loaded / total : NAN;
}

/*
 * Group @k (runs @first..@first + @n of @runs, sorted by start) into @g and @l: its sums begun,
 * the time its runs were under way, and their windows (runs that overlap merged) added to @w at
 * *@n_w for the scan.
 */
static void group_begin(const struct plan *p, const struct run_list *runs, size_t first, size_t n,
			size_t k, struct group *g, struct testfig_label *l, struct fig_window *w,
			size_t *n_w) {
	const struct fig_run *r = &runs->runs[first];
	*l = (struct testfig_label){.label = xstrdup(r[0].label),
				    .group = r[0].group ? xstrdup(r[0].group) : NULL,
				    .runs = n};
	*g = (struct group){.by_slot = xcalloc(p->n_slots + 1, sizeof(struct acc)),
			    .by_cluster = xcalloc(p->n_clusters + 1, sizeof(struct acc)),
			    .first = first,
			    .n = n};
	for (size_t i = 0; i < p->n_slots; i++) {
		stats_init(&g->by_slot[i].secs);
	}
	for (size_t c = 0; c < p->n_clusters; c++) {
		stats_init(&g->by_cluster[c].secs);
	}
	int64_t window_ms = 0;
	for (size_t i = 0; i < n;) {
		int64_t from = r[i].start_ms, to = r[i].end_ms;
		size_t merged = i;
		for (i++; i < n && r[i].start_ms <= to; i++) { // overlapping runs: one window
			to = r[i].end_ms > to ? r[i].end_ms : to;
		}
		window_ms += to - from;
		// The minute samples stamped within it, in whole seconds.
		int64_t from_s = (from + 999) / 1000, to_s = to / 1000 + 1;
		if (from_s < to_s) {
			w[(*n_w)++] = (struct fig_window){from_s, to_s, k, i - merged};
		}
	}
	l->window_s = (double)window_ms / 1000.0;
}

static void group_finish(const struct plan *p, struct group *g) {
	for (size_t k = 0; k < p->n_slots; k++) {
		stats_finish(&g->by_slot[k].secs);
	}
	for (size_t c = 0; c < p->n_clusters; c++) {
		stats_finish(&g->by_cluster[c].secs);
	}
	free(g->by_slot);
	free(g->by_cluster);
}

/*
 * The figures of sorted runs @runs: one group per label (and tag value), each group's windows
 * read in one pass over them all, oldest first, so a block of the history is decoded once for
 * the windows that fall in it whichever labels they are of.
 */
static int groups_compute(struct store *store, const struct plan *p, const struct run_list *runs,
			  struct testfig_result *out) {
	struct group *groups = xcalloc(runs->n, sizeof(*groups));
	struct fig_window *w = xcalloc(runs->n, sizeof(*w));
	size_t n_w = 0;
	out->labels = xcalloc(runs->n, sizeof(*out->labels));
	for (size_t i = 0; i < runs->n;) {
		size_t j = i;
		while (j < runs->n && strcmp(runs->runs[j].label, runs->runs[i].label) == 0 &&
		       cmp_group(runs->runs[j].group, runs->runs[i].group) == 0) {
			j++;
		}
		group_begin(p, runs, i, j - i, out->n, &groups[out->n], &out->labels[out->n], w,
			    &n_w);
		out->n++;
		i = j;
	}
	int rc = scan_windows(store, p, groups, w, n_w);
	for (size_t k = 0; k < out->n; k++) {
		struct testfig_label *l = &out->labels[k];
		l->runs_with_samples = groups[k].runs_with_samples;
		if (rc == 0) {
			label_figures(p, &groups[k], l);
			label_throttle(&runs->runs[groups[k].first], groups[k].n, l);
		}
		group_finish(p, &groups[k]);
	}
	free(groups);
	free(w);
	return rc;
}

int testfig_compute(struct store *store, const struct testfig_options *opt,
		    struct testfig_result *out) {
	*out = (struct testfig_result){0};
	struct store_run_filter f = opt->filter;
	f.limit = 0;
	f.by_label = false;
	struct runs_episodes e;
	runs_episodes_read(store, f.has_from ? f.from_ms : 0, INT64_MAX / 2, &e);
	struct run_list runs = {.episodes = &e, .by = opt->by};
	int rc = store_runs_scan(store, &f, take_run, &runs);
	runs_episodes_finish(&e);
	struct plan p = {0};
	if (rc == 0 && runs.n > 0) {
		rc = plan_read(store, &p);
	}
	if (rc == 0 && runs.n > 0) {
		qsort(runs.runs, runs.n, sizeof(*runs.runs), cmp_run);
		rc = groups_compute(store, &p, &runs, out);
	}
	plan_finish(&p);
	run_list_finish(&runs);
	return rc;
}

static void figure_finish(struct testfig_figure *f) {
	free(f->key);
	free(f->label);
}

void testfig_result_finish(struct testfig_result *r) {
	if (!r) {
		return;
	}
	for (size_t i = 0; i < r->n; i++) {
		struct testfig_label *l = &r->labels[i];
		free(l->label);
		free(l->group);
		for (size_t k = 0; k < l->n_zones; k++) {
			figure_finish(&l->zones[k]);
		}
		for (size_t k = 0; k < l->n_clocks; k++) {
			figure_finish(&l->clocks[k].f);
			free(l->clocks[k].states);
		}
		for (size_t k = 0; k < l->n_loads; k++) {
			figure_finish(&l->loads[k]);
		}
		for (size_t k = 0; k < l->n_power; k++) {
			figure_finish(&l->power[k]);
		}
		for (size_t k = 0; k < l->n_loaded_domains; k++) {
			free(l->loaded_domains[k]);
		}
		free(l->zones);
		free(l->clocks);
		free(l->loads);
		free(l->power);
		free(l->loaded_domains);
	}
	free(r->labels);
	*r = (struct testfig_result){0};
}

const struct testfig_label *testfig_result_label(const struct testfig_result *r, const char *label,
						 const char *group) {
	for (size_t i = 0; r && i < r->n; i++) {
		if (strcmp(r->labels[i].label, label) == 0 &&
		    cmp_group(r->labels[i].group, group) == 0) {
			return &r->labels[i];
		}
	}
	return NULL;
}

/* --- JSON ------------------------------------------------------------------------------------ */

static void write_figure(struct json *j, const struct testfig_figure *f) {
	json_field_string(j, "key", f->key);
	json_field_string(j, "label", f->label);
	json_field_int(j, "samples", (int64_t)f->samples);
	json_field_int(j, "seconds", f->seconds);
	json_field_double(j, "mean", f->mean);
	json_field_double(j, "p95", f->p95);
	json_field_double(j, "max", f->max);
}

static void write_figures(struct json *j, const char *key, const struct testfig_figure *f,
			  size_t n) {
	json_key(j, key);
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(j);
		write_figure(j, &f[i]);
		json_object_end(j);
	}
	json_array_end(j);
}

void testfig_write_json(const struct testfig_label *l, struct json *j) {
	json_object_begin(j);
	json_field_string(j, "method",
			  "the stored minute samples stamped within the ok runs' windows (runs of "
			  "the label that overlap merged), each weighing the seconds since the "
			  "cycle before it in its window, as stats --weight time; p95 the weighted "
			  "inverted CDF; max over the samples; a cluster's load the mean of its "
			  "CPUs' at each cycle; shares weighed by the runs' durations");
	json_field_int(j, "runs", (int64_t)l->runs);
	json_field_int(j, "runs_with_samples", (int64_t)l->runs_with_samples);
	json_field_double(j, "window_s", l->window_s);
	write_figures(j, "zones", l->zones, l->n_zones);
	json_key(j, "clocks");
	json_array_begin(j);
	for (size_t i = 0; i < l->n_clocks; i++) {
		const struct testfig_clock *c = &l->clocks[i];
		json_object_begin(j);
		write_figure(j, &c->f);
		json_key(j, "residency");
		json_array_begin(j);
		for (size_t k = 0; k < c->n_states; k++) {
			json_object_begin(j);
			json_field_double(j, "hz", c->states[k].hz);
			json_field_double(j, "share", c->states[k].share);
			json_object_end(j);
		}
		json_array_end(j);
		json_object_end(j);
	}
	json_array_end(j);
	write_figures(j, "loads", l->loads, l->n_loads);
	write_figures(j, "power", l->power, l->n_power);
	json_key(j, "throttle");
	json_object_begin(j);
	json_field_int(j, "runs", (int64_t)l->throttle_runs);
	json_field_double(j, "board_share", l->board_share);
	json_field_double(j, "loaded_share", l->loaded_share);
	json_field_strings(j, "loaded_domains", l->loaded_domains, l->n_loaded_domains);
	json_object_end(j);
	json_object_end(j);
}
