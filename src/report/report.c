/*
 * The report's answers: each section is the struct the matching JSON answer writes
 * (query_stats_compute, query_peak_compute, runs_stats, runs_compare, lifetime_report_compute),
 * computed once here and only laid out by report-doc.c.
 */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "jsonread.h"
#include "report-internal.h"
#include "stats.h"
#include "xalloc.h"

/* The first cycle of [from, to) into *ts: the scan stops at it. */
static int first_cycle(void *ctx, const struct store_cycle *cycle) {
	*(int64_t *)ctx = cycle->ts;
	return 1;
}

static int last_cycle(void *ctx, const struct store_cycle *cycle) {
	*(int64_t *)ctx = cycle->ts;
	return 0;
}

/*
 * The first and the last cycle of [from, to): the first from a scan stopped at it, the last
 * from scans of the window's end, each reaching twice as far back, so a year costs a few reads.
 */
static int window_edges(struct store *store, int64_t from, int64_t to, int64_t *first,
			int64_t *last) {
	*first = *last = INT64_MIN;
	int rc = store_scan_cycles(store, from, to, first_cycle, first);
	if (rc < 0 || *first == INT64_MIN) {
		return rc < 0 ? rc : 0;
	}
	for (int64_t back = 3600;; back *= 2) {
		int64_t start = to - back > *first && back < to - from ? to - back : *first;
		rc = store_scan_cycles(store, start, to, last_cycle, last);
		if (rc < 0 || *last != INT64_MIN || start == *first) {
			return rc < 0 ? rc : 0;
		}
	}
}

/* The board and the kernel from the fingerprint of the latest run that recorded one. */
struct fingerprint_scan {
	char *latest;
};

static int keep_fingerprint(void *ctx, const struct store_run *run) {
	struct fingerprint_scan *f = ctx;
	if (run->fingerprint) {
		free(f->latest);
		f->latest = xstrdup(run->fingerprint);
	}
	return 0;
}

static char *member_string(const struct jsonread_node *obj, const char *key) {
	const char *s = jsonread_string(jsonread_get(obj, key));
	return s && *s ? xstrdup(s) : NULL;
}

static int board_identity(struct store *store, struct report_board *b) {
	struct fingerprint_scan f = {0};
	struct store_run_filter all = {0};
	int rc = store_runs_scan(store, &all, keep_fingerprint, &f);
	if (rc == 0 && f.latest) {
		struct jsonread_error e;
		size_t len = strlen(f.latest);
		struct jsonread_node *tree = jsonread_parse(f.latest, len, len, &e);
		if (tree && tree->kind == JSONREAD_OBJECT) {
			b->model = member_string(tree, "board");
			b->kernel = member_string(tree, "kernel");
		}
		jsonread_node_free(tree);
	}
	free(f.latest);
	return rc;
}

/* Whether the peak may take channel @ch by default: a temperature of runs.peak_channels (the
 * thermal zones unless configured), never a capacitor's thermocouple or a cold junction. */
static bool peak_candidate(const struct report_options *opt, const struct channel *ch) {
	if (ch->kind != CHANNEL_KIND_TEMPERATURE) {
		return false;
	}
	return opt->cfg ? config_peak_channel(opt->cfg, ch->key)
			: strncmp(ch->key, "thermal/", 8) == 0;
}

/*
 * The slot of the hottest channel in the window among @want (a slot's flag; NULL: the default
 * candidates), or -1.
 */
static ssize_t hottest(const struct query_stats *s, const struct report_options *opt,
		       const bool *want) {
	ssize_t best = -1;
	double top = -INFINITY;
	for (size_t k = 0; k < s->sel.n; k++) {
		const struct channel *ch = query_selection_channel(&s->sel, k);
		if (want ? !want[k] : !peak_candidate(opt, ch)) {
			continue;
		}
		double v = s->acc[k].count ? stats_value(s->acc[k].max_q, ch->resolution) : NAN;
		if (v > top) {
			top = v;
			best = (ssize_t)k;
		}
	}
	return best;
}

/* The slot the peak is drawn for: --peak-channel's hottest (a name no channel has is an error
 * naming the near ones), else the hottest default candidate. -1 for none; a negative errno. */
static int peak_slot(struct store *store, const struct report_options *opt,
		     const struct query_stats *s, ssize_t *slot, char **err) {
	*slot = -1;
	if (!opt->peak_channel) {
		*slot = hottest(s, opt, NULL);
		return 0;
	}
	struct query_selection sel = {0};
	int rc = query_select(store, &opt->peak_channel, 1, &sel, err);
	if (rc < 0) {
		char *why = *err;
		*err = xasprintf("the peak's channel: %s", why ? why : strerror(-rc));
		free(why);
		return rc;
	}
	bool *want = xcalloc(s->sel.n + 1, sizeof(*want));
	for (size_t i = 0; i < sel.n; i++) {
		int32_t k = query_selection_slot(&s->sel, sel.ids[i]);
		if (k >= 0) {
			want[k] = true;
		}
	}
	*slot = hottest(s, opt, want);
	free(want);
	query_selection_finish(&sel);
	return 0;
}

#define PEAK_MARGIN_S (7 * 86400)

/* The peak of slot @hot, the other zones along (as `thermlog peak --with` them). */
static int board_peak(struct store *store, const struct report_options *opt,
		      const struct query_params *window, ssize_t hot, struct report_board *b,
		      char **err) {
	if (hot < 0) {
		return 0;
	}
	const struct query_stats *s = &b->stats;
	const char **zones = xcalloc(s->sel.n, sizeof(*zones));
	size_t n = 0;
	for (size_t k = 0; k < s->sel.n; k++) {
		const struct channel *ch = query_selection_channel(&s->sel, k);
		if (peak_candidate(opt, ch) && s->acc[k].count && (ssize_t)k != hot) {
			zones[n++] = ch->key;
		}
	}
	const char *key = query_selection_channel(&s->sel, (size_t)hot)->key;
	struct query_params p = *window;
	/*
	 * The maximum is where stats found it: the peak is asked over the week on each side of it
	 * (within the window), where its earliest maximum and the cycles around it are the same
	 * as over the whole window, instead of searching a year's rollups for it again.
	 */
	int64_t at = s->acc[hot].max_ts;
	if (at - PEAK_MARGIN_S > s->from) {
		p.from = at - PEAK_MARGIN_S;
		p.has_from = true;
	}
	if (at + PEAK_MARGIN_S < s->to) {
		p.to = at + PEAK_MARGIN_S;
		p.has_to = true;
	}
	p.channels = &key;
	p.n_channels = 1;
	const char *none = NULL;
	p.with = n ? zones : &none; // none: the zone alone
	p.n_with = n ? n : 0;
	int rc = query_peak_compute(store, &p, &b->peak, err);
	free(zones);
	if (rc == -ENOENT) { // its raw samples were pruned: no chart, said so
		free(*err);
		*err = NULL;
		return 0;
	}
	b->has_peak = rc == 0;
	return rc;
}

/* A channel's hardware maximum for its role: the recorded board's, else the highest seen. */
static double max_hz_of(const struct report_board *b, size_t k) {
	const struct channel *ch = query_selection_channel(&b->stats.sel, k);
	double max = boardfacts_max_hz(&b->facts, ch->key);
	if (isnan(max) && ch->kind == CHANNEL_KIND_FREQUENCY && b->stats.acc[k].count) {
		max = stats_value(b->stats.acc[k].max_q, ch->resolution);
	}
	return max;
}

/* What each channel of @b's window is on its board (role.h). */
static struct role_channel *board_roles(struct report_board *b) {
	size_t n = b->stats.sel.n;
	struct role_channel *rc = xcalloc(n + 1, sizeof(*rc));
	for (size_t k = 0; k < n; k++) {
		const struct channel *ch = query_selection_channel(&b->stats.sel, k);
		rc[k] = (struct role_channel){ch->key, ch->label, ch->kind, max_hz_of(b, k)};
	}
	b->roles = xcalloc(n + 1, sizeof(*b->roles));
	role_infer(rc, n, b->facts.roles, b->facts.n_roles, b->roles);
	return rc;
}

enum role report_role(const struct report_board *b, const char *key) {
	for (size_t k = 0; b->roles && k < b->stats.sel.n; k++) {
		if (strcmp(query_selection_channel(&b->stats.sel, k)->key, key) == 0) {
			return b->roles[k];
		}
	}
	return ROLE_NONE;
}

/* The two boards' channels paired: by hand, by role, by key (role_pair()). */
static void pair_channels(struct report *rep) {
	struct report_board *a = &rep->boards[0], *b = &rep->boards[1];
	struct role_channel *ra = board_roles(a), *rb = board_roles(b);
	rep->pair = xcalloc(a->stats.sel.n + 1, sizeof(*rep->pair));
	rep->pair_why = xcalloc(a->stats.sel.n + 1, sizeof(*rep->pair_why));
	role_pair(ra, a->roles, a->stats.sel.n, rb, b->roles, b->stats.sel.n, rep->opt.map_channel,
		  rep->opt.n_map_channel, rep->pair, rep->pair_why);
	free(ra);
	free(rb);
}

static const char *base_name(const char *path) {
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

/* What the design review adds to the lifetime report: the ratings, profiles and series. */
static int board_review(struct store *store, const struct report_options *opt,
			struct report_board *b, char **err) {
	size_t n = b->life.n;
	b->params = xcalloc(n ? n : 1, sizeof(*b->params));
	b->params_ok = xcalloc(n ? n : 1, sizeof(*b->params_ok));
	b->series = xcalloc(n ? n : 1, sizeof(*b->series));
	for (size_t i = 0; i < n; i++) {
		char *perr = NULL;
		b->params_ok[i] = lifetime_params_init(&b->params[i], b->life.entries[i].cc, &perr);
		free(perr); // the report's invalid_rating warning says it
	}
	int rc = lifetime_profile_build(&b->life, LIFETIME_PROFILE_BIN_K, NULL, &b->profile, err);
	if (rc < 0) {
		return rc;
	}
	b->has_review = true;
	return b->life.to > b->life.from
		       ? lifetime_report_series(store, opt->cfg,
						opt->has_from ? opt->from : INT64_MIN, opt->now,
						&b->life, b->series, err)
		       : 0;
}

/* The window's statistics, its first and last cycle and the board's facts. */
static int board_stats(struct store *store, const char *file, const struct report_options *opt,
		       const struct config *declared, struct report_board *b, char **err) {
	b->file = xstrdup(base_name(file));
	struct query_params p = {.has_from = opt->has_from,
				 .has_to = opt->has_to,
				 .from = opt->from,
				 .to = opt->to,
				 .weight = opt->weight};
	int rc = query_stats_compute(store, &p, &b->stats, err);
	if (rc == -ENOENT) { // no history at all
		free(*err);
		*err = NULL;
		b->empty = true;
	} else if (rc < 0) {
		return rc;
	} else {
		b->has_stats = true;
		b->empty = b->stats.cycles == 0;
	}
	if (!b->empty) {
		rc = window_edges(store, b->stats.from, b->stats.to, &b->first_ts, &b->last_ts);
		b->empty = rc == 0 && b->first_ts == INT64_MIN;
		if (rc < 0) {
			return rc;
		}
	}
	if ((rc = boardfacts_read(store, declared, &b->facts)) < 0 ||
	    (rc = board_identity(store, b)) < 0) {
		*err = xasprintf("could not read the board of %s: %s", b->file, strerror(-rc));
		return rc;
	}
	// The board's name: as declared, else as the daemon or the runs recorded it, else the file.
	const char *name = b->facts.board.name ? b->facts.board.name
			   : b->facts.model    ? b->facts.model
			   : b->model          ? b->model
					       : b->file;
	b->name = xstrdup(name);
	return 0;
}

/* The peak of slot @hot, the runs, the throttling and the capacitors of board @b. */
static int board_compute(struct store *store, const struct report_options *opt, ssize_t hot,
			 struct report_board *b, char **err) {
	struct query_params p = {.has_from = opt->has_from,
				 .has_to = opt->has_to,
				 .from = opt->from,
				 .to = opt->to,
				 .weight = opt->weight};
	int rc = 0;
	if (!b->empty && (rc = board_peak(store, opt, &p, hot, b, err)) < 0) {
		return rc;
	}
	b->runs_percentiles[0] = 0; // the minimum, as `runs stats --percentile 0` writes p0
	b->runs_opt = (struct runs_stats_options){
		.filter = {.has_from = opt->has_from,
			   .has_to = opt->has_to,
			   .from_ms = opt->has_from ? opt->from * 1000 : 0,
			   .to_ms = opt->has_to ? opt->to * 1000 : 0,
			   .tags = opt->tags},
		.over_s = opt->over_s,
		.percentiles = b->runs_percentiles,
		.n_percentiles = 1,
	};
	// The runs read once: their statistics (runs stats --json --percentile 0), the per-test
	// figures and the verdict's facts.
	if ((rc = runs_side_read(store, &b->runs_opt.filter, b->name, &b->side)) < 0 ||
	    (rc = runs_side_stats(b->side, opt->over_s, b->runs_percentiles, 1, &b->runs)) < 0) {
		*err = xasprintf("could not compute the runs of %s: %s", b->file, strerror(-rc));
		return rc;
	}
	if (!b->empty && b->stats.to > b->stats.from &&
	    (rc = throttle_report_compute(store, b->stats.from, b->stats.to, NULL, &b->throttle,
					  err)) < 0) {
		return rc;
	}
	if (opt->cfg && opt->cfg->n_capacitors > 0) {
		// The design review states each sensor's steady state: every sample replayed.
		unsigned flags = opt->lifetime != REPORT_LIFETIME_NONE ? LIFETIME_REPORT_STEADY : 0;
		rc = lifetime_report_compute_with(
			store, opt->cfg, opt->has_from ? opt->from : INT64_MIN,
			opt->has_to ? opt->to : INT64_MAX, flags, opt->now, &b->life, err);
		if (rc == 0 && opt->lifetime != REPORT_LIFETIME_NONE) {
			rc = board_review(store, opt, b, err);
		}
	}
	return rc;
}

/* Whether run label @label is one the report shows. */
static bool label_shown(const struct report_options *opt, const char *label) {
	for (size_t i = 0; i < opt->n_labels; i++) {
		if (strcmp(opt->labels[i], label) == 0) {
			return true;
		}
	}
	return opt->n_labels == 0;
}

static int check_labels(struct store *store, const struct report_options *opt, char **err) {
	for (size_t i = 0; i < opt->n_labels; i++) {
		int rc = runs_label_check(store, opt->labels[i], err);
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}

/* Every shown label of the first board that the second has too, as `runs compare` does it. */
/* The label @label of the first board maps to on the other (itself when not mapped). */
static const char *mapped(const struct report_options *opt, const char *label) {
	for (size_t i = 0; i < opt->n_map; i++) {
		if (strcmp(opt->map_a[i], label) == 0) {
			return opt->map_b[i];
		}
	}
	return label;
}

/* Whether label @label of the other board is some shown label's match. */
static bool matched_there(const struct report *rep, const char *label) {
	for (size_t i = 0; i < rep->n_compares; i++) {
		if (strcmp(rep->compares[i].other_label, label) == 0) {
			return true;
		}
	}
	return false;
}

/*
 * Every shown label of the first board that the other has (under its mapped label), as `runs
 * compare` does it; the labels of either board without a match are listed, never compared
 * with a namesake.
 */
static int compare_runs(struct report *rep) {
	const struct runstats_result *a = &rep->boards[0].runs, *b = &rep->boards[1].runs;
	rep->compares = xcalloc(a->n ? a->n : 1, sizeof(*rep->compares));
	rep->unmatched_a = xcalloc(a->n + 1, sizeof(*rep->unmatched_a));
	rep->unmatched_b = xcalloc(b->n + 1, sizeof(*rep->unmatched_b));
	for (size_t i = 0; i < a->n; i++) {
		const char *label = a->labels[i].label, *there = mapped(&rep->opt, label);
		if (!label_shown(&rep->opt, label) ||
		    (i > 0 && strcmp(label, a->labels[i - 1].label) == 0)) {
			continue;
		}
		if (!runstats_result_label(b, there)) {
			rep->unmatched_a[rep->n_unmatched_a++] = xstrdup(label);
			continue;
		}
		struct report_compare *c = &rep->compares[rep->n_compares++];
		c->label = xstrdup(label);
		c->other_label = xstrdup(there);
		c->rc = runs_compare_sides(rep->boards[0].side, rep->boards[1].side, label, there,
					   false, rep->opt.map_channel, rep->opt.n_map_channel,
					   &c->c);
		if (c->rc < 0 && c->rc != -ENODATA) {
			return c->rc;
		}
	}
	for (size_t i = 0; i < b->n; i++) {
		if (!matched_there(rep, b->labels[i].label) &&
		    (i == 0 || strcmp(b->labels[i].label, b->labels[i - 1].label) != 0)) {
			rep->unmatched_b[rep->n_unmatched_b++] = xstrdup(b->labels[i].label);
		}
	}
	return 0;
}

/* The slot of the compared board's peak: the counterpart of the first board's peak channel,
 * else its own hottest zone. */
static ssize_t other_peak(const struct report *rep, ssize_t first) {
	if (first >= 0 && rep->pair[first] >= 0) {
		return rep->pair[first];
	}
	return hottest(&rep->boards[1].stats, &rep->opt, NULL);
}

int report_compute(struct store *const *stores, const char *const *files, size_t n,
		   const struct report_options *opt, struct report *rep, char **err) {
	*rep = (struct report){.opt = *opt, .n_boards = n > 2 ? 2 : n};
	*err = NULL;
	int rc = check_labels(stores[0], opt, err);
	rep->bad_param = rc == -EINVAL ? "label" : NULL;
	// The compared board has its own window: by default its whole history.
	struct report_options other = *opt;
	other.has_from = opt->has_compare_from;
	other.has_to = opt->has_compare_to;
	other.from = opt->compare_from;
	other.to = opt->compare_to;
	for (size_t i = 0; rc == 0 && i < rep->n_boards; i++) {
		rc = board_stats(stores[i], files[i], i ? &other : opt, i ? NULL : opt->cfg,
				 &rep->boards[i], err);
		if (rc < 0 && i == 1 && *err) { // the compared board's own window: say whose
			char *whose = xasprintf("%s, the compared board: %s", files[1], *err);
			free(*err);
			*err = whose;
		}
	}
	if (rc == 0 && rep->n_boards == 2) {
		struct report_board *a = &rep->boards[0], *b = &rep->boards[1];
		if (strcmp(a->name, b->name) == 0) { // two boards of one model: name them apart
			for (size_t i = 0; i < 2; i++) {
				char *named = xasprintf("%s (%s)", rep->boards[i].name,
							rep->boards[i].file);
				free(rep->boards[i].name);
				rep->boards[i].name = named;
			}
		}
		pair_channels(rep);
	} else if (rc == 0) {
		free(board_roles(&rep->boards[0]));
	}
	ssize_t hot = -1;
	if (rc == 0 && !rep->boards[0].empty) {
		rc = peak_slot(stores[0], opt, &rep->boards[0].stats, &hot, err);
		rep->bad_param = rc == -EINVAL ? "peak_channel" : NULL;
	}
	for (size_t i = 0; rc == 0 && i < rep->n_boards; i++) {
		rc = board_compute(stores[i], i ? &other : opt, i ? other_peak(rep, hot) : hot,
				   &rep->boards[i], err);
	}
	if (rc == 0 && rep->n_boards == 2 && (rc = compare_runs(rep)) < 0) {
		*err = xasprintf("could not compare the runs: %s", strerror(-rc));
	}
	if (rc < 0 && !*err) {
		*err = xasprintf("%s", strerror(-rc));
	}
	return rc;
}

static void board_finish(struct report_board *b) {
	free(b->name);
	free(b->file);
	free(b->model);
	free(b->kernel);
	query_stats_finish(&b->stats);
	query_peak_finish(&b->peak);
	runstats_result_finish(&b->runs);
	runs_side_destroy(b->side);
	boardfacts_finish(&b->facts);
	free(b->roles);
	throttle_report_finish(&b->throttle);
	lifetime_profile_finish(&b->profile);
	lifetime_report_finish(&b->life);
	free(b->series);
	free(b->params);
	free(b->params_ok);
	*b = (struct report_board){0};
}

void report_finish(struct report *rep) {
	for (size_t i = 0; i < 2; i++) {
		board_finish(&rep->boards[i]);
	}
	for (size_t i = 0; i < rep->n_unmatched_a; i++) {
		free(rep->unmatched_a[i]);
	}
	for (size_t i = 0; i < rep->n_unmatched_b; i++) {
		free(rep->unmatched_b[i]);
	}
	free(rep->unmatched_a);
	free(rep->unmatched_b);
	for (size_t i = 0; i < rep->n_compares; i++) {
		free(rep->compares[i].label);
		free(rep->compares[i].other_label);
		runs_compare_finish(&rep->compares[i].c);
	}
	free(rep->compares);
	free(rep->pair);
	free(rep->pair_why);
	*rep = (struct report){0};
}
