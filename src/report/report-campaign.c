/*
 * A campaign's report (report.h): one board's campaign, or two boards' campaigns of one suite
 * compared, computed by the modules that answer the same questions elsewhere (campaign.c for
 * the campaign, runs_stats() and runs_board() for each step's measured repetitions, runs_compare()
 * for each step on both boards, verdict.h for the conditions) and laid out in the report's
 * blocks, written as HTML or Markdown.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonread.h"
#include "report-internal.h"
#include "timefmt.h"
#include "unit.h"
#include "xalloc.h"

/* --- computing ------------------------------------------------------------------------------ */

/* A string member of @json's object @obj, newly allocated, or NULL. */
static char *json_text(const char *json, const char *obj, const char *key) {
	struct jsonread_error e;
	struct jsonread_node *root = json ? jsonread_parse(json, strlen(json), 16 << 20, &e) : NULL;
	const char *s = jsonread_string(jsonread_get(obj ? jsonread_get(root, obj) : root, key));
	char *out = s ? xstrdup(s) : NULL;
	jsonread_node_free(root);
	return out;
}

/* What start_excess() reads of one run's first fast sample. */
struct start_scan {
	int64_t at_ms;
	const struct campaign_baseline *base;
	const int64_t *ids;       // the baseline zones' channel ids (0: none)
	const double *resolution; // and their resolutions
	double hottest;           // the most over its baseline, K
};

static int start_value(void *ctx, const struct store_run_sample *v) {
	struct start_scan *s = ctx;
	if (v->ts_ms != s->at_ms) {
		return 1; // past the run's first fast sample
	}
	for (size_t z = 0; z < s->base->n; z++) {
		if (s->ids[z] == v->channel_id) {
			double off = (double)v->q * s->resolution[z] - s->base->zones[z].baseline_c;
			s->hottest = isnan(s->hottest) || off > s->hottest ? off : s->hottest;
		}
	}
	return 0;
}

/*
 * Each repetition's start: how far its hottest watched zone stood over its idle baseline at the
 * run's first fast sample (taken as it started): cold ones within the gate's tolerance, warm
 * ones hotter.
 */
static int start_excess(struct store *store, struct report_campaign_side *s) {
	struct campaign_baseline base;
	s->start_k = xcalloc(s->view.n_reps + 1, sizeof(*s->start_k));
	for (size_t i = 0; i < s->view.n_reps; i++) {
		s->start_k[i] = NAN;
	}
	if (!campaign_baseline_parse(s->view.c.baseline, &base)) {
		campaign_baseline_finish(&base);
		return 0;
	}
	struct store_channel *ch = NULL;
	size_t n = 0;
	int rc = store_channels(store, &ch, &n);
	int64_t *ids = xcalloc(base.n + 1, sizeof(*ids));
	double *res = xcalloc(base.n + 1, sizeof(*res));
	for (size_t z = 0; rc == 0 && z < base.n; z++) {
		for (size_t k = 0; k < n; k++) {
			if (strcmp(ch[k].ch.key, base.zones[z].key) == 0) {
				ids[z] = ch[k].id;
				res[z] = ch[k].ch.resolution;
			}
		}
	}
	for (size_t i = 0; rc == 0 && i < s->view.n_reps; i++) {
		const struct campaign_rep *r = &s->view.reps[i];
		struct start_scan scan = {.at_ms = r->start_ms,
					  .base = &base,
					  .ids = ids,
					  .resolution = res,
					  .hottest = NAN};
		if (r->found) {
			int got = store_run_samples_scan(store, r->start_ms, r->start_ms + 1,
							 start_value, &scan);
			rc = got < 0 ? got : 0;
			s->start_k[i] = scan.hottest;
		}
	}
	free(ids);
	free(res);
	store_channels_free(ch, n);
	campaign_baseline_finish(&base);
	return rc;
}

static int side_compute(struct store *store, const char *file, int64_t id, const char *procfs_root,
			struct report_campaign_side *s, char **err) {
	const char *slash = strrchr(file, '/');
	s->file = xstrdup(slash ? slash + 1 : file);
	id = id > 0 ? id : campaign_newest(store);
	int rc = id > 0 ? campaign_view_load(store, procfs_root, id, &s->view, err) : -ENOENT;
	if (rc < 0) {
		if (!*err) {
			*err = rc == -ENOENT
				       ? xasprintf("%s: no campaign %lld", s->file, (long long)id)
				       : xasprintf("%s: %s", s->file, strerror(-rc));
		}
		return rc;
	}
	s->name = s->view.c.board ? xstrdup(s->view.c.board)
				  : json_text(s->view.c.fingerprint, "board", "model");
	s->name = s->name ? s->name : xstrdup(s->file);
	// The measured repetitions: the campaign's runs without its warmup runs.
	s->tags = xasprintf("{\"campaign\":\"%lld\",\"warmup\":\"0\"}", (long long)s->view.c.id);
	s->opt = (struct runs_stats_options){
		.filter = {.from_ms = s->view.c.created_ms, .has_from = true, .tags = s->tags},
		.over_s = NAN};
	rc = runs_stats(store, &s->opt, &s->stats);
	if (rc == 0) {
		rc = runs_board(store, &s->opt, &s->figs);
	}
	if (rc == 0) {
		rc = start_excess(store, s);
	}
	if (rc < 0) {
		*err = xasprintf("%s: could not read campaign %lld's runs: %s", s->file,
				 (long long)s->view.c.id, strerror(-rc));
	}
	return rc;
}

/* The highest clocks the burst reached, from the fingerprint, into the verdict's side. */
static void reached_from_fingerprint(struct verdict_side *side, const char *fingerprint) {
	struct jsonread_error e;
	struct jsonread_node *root =
		fingerprint ? jsonread_parse(fingerprint, strlen(fingerprint), 16 << 20, &e) : NULL;
	const struct jsonread_node *reached = jsonread_get(root, "reached_hz");
	for (size_t i = 0; reached && reached->kind == JSONREAD_OBJECT && i + 1 < reached->n;
	     i += 2) {
		for (size_t c = 0; c < side->n_clocks; c++) {
			if (strcmp(side->clocks[c].key, reached->items[i]->text) == 0 &&
			    reached->items[i + 1]->kind == JSONREAD_NUMBER) {
				side->clocks[c].reached_hz = reached->items[i + 1]->number;
				side->clocks[c].loaded =
					true; // an all-core burst loads every cluster
			}
		}
	}
	jsonread_node_free(root);
}

/*
 * The campaigns' conditions judged: the ambient over each campaign, the clocks' hardware
 * maxima and the highest each reached in the binning check's burst, the governors; the throttle
 * exposure is each step's (its comparison below), not the burst's.
 */
static int judge(struct store *const *stores, struct report_campaign *rc) {
	struct verdict_side vs[2];
	for (size_t i = 0; i < 2; i++) {
		struct report_campaign_side *s = &rc->sides[i];
		const struct store_campaign *c = &s->view.c;
		int64_t to_ms = c->ended_ms > 0 ? c->ended_ms : c->created_ms + 1000;
		int err = verdict_side_read(stores[i], s->name, c->created_ms / 1000,
					    to_ms / 1000 + 1, CAMPAIGN_BURST_LABEL, NULL, &vs[i]);
		if (err < 0) {
			return err;
		}
		reached_from_fingerprint(&vs[i], c->fingerprint);
		vs[i].exposure = NAN;
	}
	verdict_judge(&vs[0], &vs[1], &rc->verdict);
	return 0;
}

/* Each step of the first campaign compared with the step of the same label in the second. */
static int compare_steps(struct store *const *stores, struct report_campaign *rc) {
	const struct campaign_suite *sa = &rc->sides[0].view.suite, *sb = &rc->sides[1].view.suite;
	rc->steps = xcalloc(sa->n_steps + 1, sizeof(*rc->steps));
	for (size_t i = 0; i < sa->n_steps; i++) {
		const char *label = sa->steps[i].label;
		if (!campaign_suite_step(sb, label)) {
			continue; // listed as unmatched
		}
		struct report_campaign_step *st = &rc->steps[rc->n_steps++];
		st->label = xstrdup(label);
		struct runs_compare_options opt = {.label = label,
						   .here = rc->sides[0].opt.filter,
						   .other = rc->sides[1].opt.filter,
						   .name_here = rc->sides[0].name,
						   .name_other = rc->sides[1].name};
		st->rc = runs_compare(stores[0], stores[1], &opt, &st->c);
		if (st->rc < 0 && st->rc != -ENODATA) {
			return st->rc;
		}
	}
	return 0;
}

int report_campaign_compute(struct store *const *stores, const char *const *files,
			    const int64_t *ids, size_t n, const char *procfs_root,
			    struct report_campaign *rc, char **err) {
	*rc = (struct report_campaign){.n = n};
	*err = NULL;
	for (size_t i = 0; i < n; i++) {
		int r = side_compute(stores[i], files[i], ids[i], procfs_root, &rc->sides[i], err);
		if (r < 0) {
			return r;
		}
	}
	if (n < 2) {
		return 0;
	}
	int r = judge(stores, rc);
	r = r < 0 ? r : compare_steps(stores, rc);
	if (r < 0) {
		*err = xasprintf("could not compare the campaigns: %s", strerror(-r));
	}
	return r;
}

void report_campaign_finish(struct report_campaign *rc) {
	for (size_t i = 0; i < 2; i++) {
		struct report_campaign_side *s = &rc->sides[i];
		free(s->file);
		free(s->name);
		free(s->tags);
		campaign_view_finish(&s->view);
		runstats_result_finish(&s->stats);
		testfig_result_finish(&s->figs);
		free(s->start_k);
	}
	for (size_t i = 0; i < rc->n_steps; i++) {
		free(rc->steps[i].label);
		runs_compare_finish(&rc->steps[i].c);
	}
	free(rc->steps);
	verdict_finish(&rc->verdict);
	*rc = (struct report_campaign){0};
}

/* --- laying it out ------------------------------------------------------------------------- */

/* A duration for people ("1.5 s", "25.6 minutes"). */
static void cell_duration(struct report_block *t, size_t col, double s) {
	char text[64];
	if (isfinite(s)) {
		unit_duration(text, sizeof(text), s);
	} else {
		snprintf(text, sizeof(text), "-");
	}
	report_cell(t, col, "%s", text);
}

/* @v of unit @unit in its registry's symbol and places ("46.3 °C", "2304 MHz"). */
static void cell_unit(struct report_block *t, size_t col, double v, const char *unit) {
	double factor;
	const char *sym = unit_symbol(unit, &factor);
	int places = unit_places(unit, true);
	if (!isfinite(v)) {
		report_cell(t, col, "-");
	} else {
		report_cell(t, col, "%.*f %s", places < 0 ? 1 : places, v * factor, sym);
	}
}

/* The steps' label (their measured repetitions') statistics in side @s. */
static const struct runstats_label *step_stats(const struct report_campaign_side *s,
					       const char *label) {
	return runstats_result_label(&s->stats, label);
}

/* A repetition's outcome words and the gate: "ok", "failed (exit 1)". */
static const char *gate_word(enum campaigngate_outcome g) {
	return g == CAMPAIGNGATE_PASSED    ? "passed"
	       : g == CAMPAIGNGATE_TIMEOUT ? "gate_timeout"
					   : "-";
}

static void verdict_section(struct report_doc *doc, const struct report_campaign *rc) {
	report_section(doc, "Comparable or not");
	const struct verdict *v = &rc->verdict;
	if (v->n > 0) {
		static const char *const head[] = {"reason", "why"};
		struct report_block *t = report_text_table(doc, head);
		for (size_t i = 0; i < v->n; i++) {
			report_text_row(t, v->reasons[i].code, v->reasons[i].message);
		}
	}
	report_para(doc, "%s: %s", v->comparable ? "comparable" : "not comparable",
		    v->comparable
			    ? "the conditions were like for like by every rule (ambient over "
			      "each campaign, the clocks' maxima and the highest each reached "
			      "in the binning check's burst, governors); each step's own "
			      "comparison below adds its executable and throttle exposure."
			    : "the reasons above, each with both boards' figures, make the "
			      "campaigns' figures not like for like.");
}

/* The facts of each side's campaign, a column each. */
static void campaign_section(struct report_doc *doc, const struct report_campaign *rc) {
	report_section(doc, "Campaign");
	const char *head[3] = {"", rc->sides[0].name, rc->n > 1 ? rc->sides[1].name : NULL};
	struct report_block *t = report_table(doc, rc->n + 1, head);
	for (size_t c = 1; c <= rc->n; c++) {
		t->right[c] = false;
	}
	static const char *const rows[] = {
		"campaign",       "database",          "status",           "begun", "ended",
		"suite (sha256)", "repetitions ended", "time at the gates"};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		report_row(t);
		report_cell(t, 0, "%s", rows[r]);
		for (size_t i = 0; i < rc->n; i++) {
			const struct campaign_view *v = &rc->sides[i].view;
			char when[TIMEFMT_ISO_LEN];
			int64_t wait = 0;
			for (size_t k = 0; k < v->n_reps; k++) {
				wait += v->reps[k].row.gate_wait_ms;
			}
			switch (r) {
			case 0:
				report_cell(t, i + 1, "%lld %s", (long long)v->c.id, v->c.name);
				break;
			case 1:
				report_cell(t, i + 1, "%s", rc->sides[i].file);
				break;
			case 2:
				report_cell(t, i + 1, "%s",
					    v->c.status == CAMPAIGN_STATUS_DONE ? "done"
					    : v->runner_alive                   ? "running"
										: "stopped");
				break;
			case 3:
			case 4:
				timefmt_iso_ms(r == 3 ? v->c.created_ms : v->c.ended_ms, when);
				report_cell(t, i + 1, "%s",
					    r == 4 && v->c.ended_ms <= 0 ? "-" : when);
				break;
			case 5:
				report_cell(t, i + 1, "%.12s", v->c.suite_hash);
				break;
			case 6:
				report_cell(t, i + 1, "%zu of %zu", v->slots_ended, v->slots);
				break;
			default:
				cell_duration(t, i + 1, (double)wait / 1000);
				break;
			}
		}
	}
	// The facts the campaign held fixed.
	const struct campaign_suite *s = &rc->sides[0].view.suite;
	if (s->n_locked > 0) {
		report_heading(doc, "Locked");
		static const char *const lh[] = {"fact", "value"};
		struct report_block *l = report_text_table(doc, lh);
		for (size_t i = 0; i < s->n_locked; i++) {
			report_text_row(l, s->locked[i].key, s->locked[i].value);
		}
	}
}

/* A side's fingerprint parsed (free with jsonread_node_free()), or NULL. */
static struct jsonread_node *fingerprint(const struct report_campaign_side *s) {
	const char *fp = s->view.c.fingerprint;
	struct jsonread_error e;
	return fp ? jsonread_parse(fp, strlen(fp), 16 << 20, &e) : NULL;
}

static const char *node_text(const struct jsonread_node *n) {
	return n && (n->kind == JSONREAD_STRING || n->kind == JSONREAD_NUMBER) ? n->text : "-";
}

/* The board's row of @what in fingerprint @fp, into cell @col. */
static void board_cell(struct report_block *t, size_t col, const struct jsonread_node *fp,
		       size_t what, const char *key) {
	const struct jsonread_node *b = jsonread_get(fp, "board");
	if (what < 4) {
		static const char *const fields[] = {"model", "kernel", "npu_driver", "cmdline"};
		report_cell(t, col, "%s", node_text(jsonread_get(b, fields[what])));
		return;
	}
	if (what == 4) { // RAM
		const struct jsonread_node *ram = jsonread_get(b, "ram_bytes");
		if (ram && ram->kind == JSONREAD_NUMBER) {
			cell_unit(t, col, ram->number, "bytes");
		} else {
			report_cell(t, col, "-");
		}
		return;
	}
	// A cpufreq policy: its hardware maximum, the highest its burst reached, its governor.
	const struct jsonread_node *cpus = jsonread_get(b, "cpufreq");
	for (size_t i = 0; cpus && cpus->kind == JSONREAD_ARRAY && i < cpus->n; i++) {
		char k[96];
		snprintf(k, sizeof(k), "cpufreq/%s",
			 node_text(jsonread_get(cpus->items[i], "policy")));
		if (strcmp(k, key) != 0) {
			continue;
		}
		const struct jsonread_node *max = jsonread_get(cpus->items[i], "cpuinfo_max_hz");
		const struct jsonread_node *got = jsonread_get(jsonread_get(fp, "reached_hz"), key);
		double factor;
		const char *sym = unit_symbol("hertz", &factor);
		struct buf text = {0};
		if (max && max->kind == JSONREAD_NUMBER) {
			buf_printf(&text, "%.0f %s max", max->number * factor, sym);
		}
		if (got && got->kind == JSONREAD_NUMBER) {
			buf_printf(&text, "%s%.0f %s reached", text.len ? ", " : "",
				   got->number * factor, sym);
		}
		buf_printf(&text, "%s%s", text.len ? ", " : "",
			   node_text(jsonread_get(cpus->items[i], "governor")));
		report_cell(t, col, "%s", text.data);
		buf_finish(&text);
		return;
	}
	report_cell(t, col, "-");
}

/* The devfreq devices' governors and tunables ("dmc_ondemand upthreshold=40"). */
static void devfreq_cell(struct report_block *t, size_t col, const struct jsonread_node *fp,
			 const char *name) {
	const struct jsonread_node *devs = jsonread_get(jsonread_get(fp, "board"), "devfreq");
	for (size_t i = 0; devs && devs->kind == JSONREAD_ARRAY && i < devs->n; i++) {
		if (strcmp(node_text(jsonread_get(devs->items[i], "name")), name) != 0) {
			continue;
		}
		struct buf b = {0};
		buf_puts(&b, node_text(jsonread_get(devs->items[i], "governor")));
		const struct jsonread_node *tun = jsonread_get(devs->items[i], "tunables");
		for (size_t k = 0; tun && tun->kind == JSONREAD_OBJECT && k + 1 < tun->n; k += 2) {
			buf_printf(&b, " %s=%s", tun->items[k]->text, node_text(tun->items[k + 1]));
		}
		report_cell(t, col, "%s", b.data);
		buf_finish(&b);
		return;
	}
	report_cell(t, col, "-");
}

/* The board each campaign ran on, from its fingerprint: what must match for a comparison. */
static void board_section(struct report_doc *doc, const struct report_campaign *rc) {
	report_section(doc, "Board");
	struct jsonread_node *fp[2] = {fingerprint(&rc->sides[0]),
				       rc->n > 1 ? fingerprint(&rc->sides[1]) : NULL};
	const char *head[3] = {"", rc->sides[0].name, rc->n > 1 ? rc->sides[1].name : NULL};
	struct report_block *t = report_table(doc, rc->n + 1, head);
	for (size_t c = 1; c <= rc->n; c++) {
		t->right[c] = false;
	}
	static const char *const facts[] = {"model", "kernel", "NPU driver", "command line", "RAM"};
	for (size_t r = 0; r < 5; r++) {
		report_row(t);
		report_cell(t, 0, "%s", facts[r]);
		for (size_t i = 0; i < rc->n; i++) {
			board_cell(t, i + 1, fp[i], r, NULL);
		}
	}
	// Each cpufreq policy and devfreq device of the first board.
	const struct jsonread_node *b0 = jsonread_get(fp[0], "board");
	const struct jsonread_node *cpus = jsonread_get(b0, "cpufreq");
	for (size_t p = 0; cpus && cpus->kind == JSONREAD_ARRAY && p < cpus->n; p++) {
		char key[96];
		snprintf(key, sizeof(key), "cpufreq/%s",
			 node_text(jsonread_get(cpus->items[p], "policy")));
		report_row(t);
		report_cell(t, 0, "%s", key);
		for (size_t i = 0; i < rc->n; i++) {
			board_cell(t, i + 1, fp[i], 5, key);
		}
	}
	const struct jsonread_node *devs = jsonread_get(b0, "devfreq");
	for (size_t d = 0; devs && devs->kind == JSONREAD_ARRAY && d < devs->n; d++) {
		const char *name = node_text(jsonread_get(devs->items[d], "name"));
		report_row(t);
		report_cell(t, 0, "devfreq/%s", name);
		for (size_t i = 0; i < rc->n; i++) {
			devfreq_cell(t, i + 1, fp[i], name);
		}
	}
	// The steps' executables, by their sha256's first 12 digits.
	const struct jsonread_node *exes = jsonread_get(fp[0], "executables");
	for (size_t e = 0; exes && exes->kind == JSONREAD_ARRAY && e < exes->n; e++) {
		const char *step = node_text(jsonread_get(exes->items[e], "step"));
		report_row(t);
		report_cell(t, 0, "executable of %s", step);
		for (size_t i = 0; i < rc->n; i++) {
			const struct jsonread_node *list = jsonread_get(fp[i], "executables");
			const char *sha = "-";
			for (size_t k = 0; list && list->kind == JSONREAD_ARRAY && k < list->n;
			     k++) {
				if (strcmp(node_text(jsonread_get(list->items[k], "step")), step) ==
				    0) {
					sha = node_text(jsonread_get(list->items[k], "sha256"));
				}
			}
			report_cell(t, i + 1, "%.12s", sha);
		}
	}
	jsonread_node_free(fp[0]);
	jsonread_node_free(fp[1]);
}

/* The idle baseline per watched zone (and the ambient), and B − A in K (never a ratio). */
static void baseline_section(struct report_doc *doc, const struct report_campaign *rc) {
	report_section(doc, "Idle baseline");
	struct campaign_baseline b[2] = {{0}};
	for (size_t i = 0; i < rc->n; i++) {
		campaign_baseline_parse(rc->sides[i].view.c.baseline, &b[i]);
	}
	report_para(doc, "Each watched zone's mean over the second half of the idle run (the board "
			 "left alone), the baseline the gate holds each cold repetition to; a "
			 "channel that reads the air is the ambient.");
	// Temperatures compare as differences in K, never as ratios: the compared board's minus
	// this one's, the direction of every comparison here (runs compare's ratios too).
	char *diff = rc->n > 1 ? xasprintf("%s − %s", rc->sides[1].name, rc->sides[0].name) : NULL;
	const char *head[4] = {"channel", rc->sides[0].name, rc->n > 1 ? rc->sides[1].name : NULL,
			       diff};
	struct report_block *t = report_table(doc, rc->n > 1 ? 4 : 2, head);
	free(diff);
	for (int amb = 0; amb < 2; amb++) {
		size_t n = amb ? b[0].n_ambient : b[0].n;
		for (size_t z = 0; z < n; z++) {
			const struct campaigngate_zone *zone =
				amb ? &b[0].ambient[z] : &b[0].zones[z];
			report_row(t);
			report_cell(t, 0, "%s%s", zone->key, amb ? " (ambient)" : "");
			cell_unit(t, 1, zone->baseline_c, "celsius");
			if (rc->n < 2) {
				continue;
			}
			double other = NAN;
			size_t m = amb ? b[1].n_ambient : b[1].n;
			for (size_t k = 0; k < m; k++) {
				const struct campaigngate_zone *o =
					amb ? &b[1].ambient[k] : &b[1].zones[k];
				other = strcmp(o->key, zone->key) == 0 ? o->baseline_c : other;
			}
			cell_unit(t, 2, other, "celsius");
			if (isfinite(other)) {
				report_cell(t, 3, "%+.1f K", other - zone->baseline_c);
			} else {
				report_cell(t, 3, "-");
			}
		}
	}
	campaign_baseline_finish(&b[0]);
	campaign_baseline_finish(&b[1]);
}

/* One side's steps: outcomes, gate waits, durations and metrics of the measured repetitions. */
static void steps_table(struct report_doc *doc, const struct report_campaign_side *s) {
	static const char *const head[] = {"step",      "start", "ended",      "ok",
					   "failed",    "lost",  "incomplete", "gate timeouts",
					   "gate wait", "p50",   "p95",        "metrics (p50)"};
	struct report_block *t = report_table(doc, 12, head);
	t->right[1] = t->right[11] = false;
	for (size_t i = 0; i < s->view.suite.n_steps; i++) {
		const struct campaign_step_sum *sum = &s->view.steps[i];
		const struct runstats_label *l = step_stats(s, sum->step->label);
		report_row(t);
		report_cell(t, 0, "%s", sum->step->label);
		report_cell(t, 1, "%s", campaign_start_name(sum->step->start));
		report_cell(t, 2, "%zu of %zu", sum->ended, sum->planned);
		report_cell(t, 3, "%zu", sum->ok);
		report_cell(t, 4, "%zu", sum->failed);
		report_cell(t, 5, "%zu", sum->lost);
		report_cell(t, 6, "%zu", sum->incomplete);
		report_cell(t, 7, "%zu", sum->gate_timeouts);
		cell_duration(t, 8, (double)sum->gate_wait_ms / 1000);
		cell_duration(t, 9, l ? l->duration_s.p50 : NAN);
		cell_duration(t, 10, l ? l->duration_s.p95 : NAN);
		struct buf m = {0};
		for (size_t k = 0; l && k < l->n_metrics; k++) {
			buf_printf(&m, "%s%s %.4g%s%s", k ? ", " : "", l->metrics[k].name,
				   l->metrics[k].p50, *l->metrics[k].unit ? " " : "",
				   l->metrics[k].unit);
		}
		report_cell(t, 11, "%s", m.data ? m.data : "-");
		buf_finish(&m);
	}
}

static void steps_section(struct report_doc *doc, const struct report_campaign *rc) {
	report_section(doc, "Steps");
	report_para(doc, "Per step: its repetitions ended of those planned (warmup runs included), "
			 "how their runs ended, those lacking an expected metric (incomplete), the "
			 "cold ones that ran after the gate's maximum wait, the time waited at the "
			 "gates, and the measured repetitions' duration (type-7 p50, p95) and "
			 "metrics; warmup runs are left out of the figures.");
	for (size_t i = 0; i < rc->n; i++) {
		if (rc->n > 1) {
			report_heading(doc, "%s", rc->sides[i].name);
		}
		steps_table(doc, &rc->sides[i]);
	}
}

/* "1.043 [0.982, 1.101]": B over A with its interval. */
static void cell_ratio(struct report_block *t, size_t col, const struct runstats_compare *c,
		       bool has) {
	if (!has || !isfinite(c->ratio)) {
		report_cell(t, col, "-");
		return;
	}
	report_cell(t, col, "%.3f [%.3f, %.3f]", c->ratio, c->ci_low, c->ci_high);
}

/* Each step on both boards: the ratio of medians (B over A) of its duration and each metric. */
static void compare_section(struct report_doc *doc, const struct report_campaign *rc) {
	report_section(doc, "Each step on both boards");
	report_para(doc,
		    "The measured repetitions of each step matched by label: the ratio of "
		    "medians %s over %s with its 95 %% bootstrap interval (2000 resamples, "
		    "as runs compare), for the duration and each metric both carry; an "
		    "interval that holds 1 finds no difference. Under %d ok runs a side the "
		    "interval is too narrow to trust.",
		    rc->sides[1].name, rc->sides[0].name, RUNS_COMPARE_FEW);
	char *ratio = xasprintf("duration %s/%s", rc->sides[1].name, rc->sides[0].name);
	char *mratio = xasprintf("%s/%s", rc->sides[1].name, rc->sides[0].name);
	char *runs = xasprintf("runs (%s / %s)", rc->sides[0].name, rc->sides[1].name);
	char *p50 = xasprintf("p50 (%s / %s)", rc->sides[0].name, rc->sides[1].name);
	const char *head[] = {"step", runs, p50, ratio, "metric", mratio};
	struct report_block *t = report_table(doc, 6, head);
	free(ratio);
	free(mratio);
	free(runs);
	free(p50);
	t->right[4] = false;
	for (size_t i = 0; i < rc->n_steps; i++) {
		const struct report_campaign_step *st = &rc->steps[i];
		report_row(t);
		report_cell(t, 0, "%s", st->label);
		if (st->rc < 0) {
			report_cell(t, 1, "no ok run on a board");
			continue;
		}
		report_cell(t, 1, "%zu / %zu", st->c.duration.n_a, st->c.duration.n_b);
		char a[64], b[64];
		unit_duration(a, sizeof(a), st->c.a->duration_s.p50);
		unit_duration(b, sizeof(b), st->c.b->duration_s.p50);
		report_cell(t, 2, "%s / %s", a, b);
		cell_ratio(t, 3, &st->c.duration, st->c.has_duration);
		for (size_t k = 0; k < st->c.n_metrics; k++) {
			if (k > 0) {
				report_row(t);
			}
			report_cell(t, 4, "%s", st->c.metrics[k].name);
			cell_ratio(t, 5, &st->c.metrics[k].ratio, st->c.metrics[k].has_ratio);
		}
	}
}

/* The hottest zone's figure of a test, by its time-weighted mean. */
static const struct testfig_figure *hottest(const struct testfig_label *f) {
	const struct testfig_figure *h = NULL;
	for (size_t i = 0; f && i < f->n_zones; i++) {
		if (isfinite(f->zones[i].mean) && (!h || f->zones[i].mean > h->mean)) {
			h = &f->zones[i];
		}
	}
	return h;
}

/* What the board did during each step's measured repetitions (testfig.h). */
static void figures_section(struct report_doc *doc, const struct report_campaign *rc) {
	report_section(doc, "The board during each step");
	report_para(doc,
		    "From the stored samples while each step's measured repetitions were under "
		    "way, time-weighted as runs stats computes them: the hottest zone's mean and "
		    "maximum, each CPU cluster's mean clock and the highest it reached, the "
		    "share of the time the domains the runs loaded were throttled.");
	for (size_t i = 0; i < rc->n; i++) {
		const struct report_campaign_side *s = &rc->sides[i];
		if (rc->n > 1) {
			report_heading(doc, "%s", s->name);
		}
		static const char *const head[] = {
			"step",     "hottest zone", "mean", "max", "clocks (mean / highest)",
			"throttled"};
		struct report_block *t = report_table(doc, 6, head);
		t->right[1] = t->right[4] = false;
		for (size_t k = 0; k < s->view.suite.n_steps; k++) {
			const char *label = s->view.suite.steps[k].label;
			const struct testfig_label *f = testfig_result_label(&s->figs, label, NULL);
			const struct testfig_figure *h = hottest(f);
			report_row(t);
			report_cell(t, 0, "%s", label);
			report_cell(t, 1, "%s", h ? h->key : "-");
			cell_unit(t, 2, h ? h->mean : NAN, "celsius");
			cell_unit(t, 3, h ? h->max : NAN, "celsius");
			struct buf c = {0};
			double factor;
			unit_symbol("hertz", &factor);
			for (size_t j = 0; f && j < f->n_clocks; j++) {
				if (strncmp(f->clocks[j].f.key, "cpufreq/", 8) == 0 &&
				    isfinite(f->clocks[j].f.mean)) {
					buf_printf(&c, "%s%s %.0f / %.0f", c.len ? ", " : "",
						   f->clocks[j].f.key + 8,
						   f->clocks[j].f.mean * factor,
						   f->clocks[j].f.max * factor);
				}
			}
			report_cell(t, 4, "%s%s", c.data ? c.data : "-", c.data ? " MHz" : "");
			buf_finish(&c);
			if (f && isfinite(f->loaded_share)) {
				report_cell(t, 5, "%.1f %%", 100 * f->loaded_share);
			} else {
				report_cell(t, 5, "-");
			}
		}
	}
}

static bool same_command(const struct campaign_command *a, const struct campaign_command *b) {
	if (a->argc != b->argc || a->shell != b->shell) {
		return false;
	}
	for (size_t i = 0; i < a->argc; i++) {
		if (strcmp(a->argv[i], b->argv[i]) != 0) {
			return false;
		}
	}
	return true;
}

/* The mean start (K over the baseline) of @label's measured repetitions in side @s. */
static double mean_start(const struct report_campaign_side *s, const char *label) {
	double sum = 0;
	size_t n = 0;
	for (size_t i = 0; i < s->view.n_reps; i++) {
		const struct campaign_rep *r = &s->view.reps[i];
		if (!r->row.warmup && strcmp(r->row.step, label) == 0 && isfinite(s->start_k[i])) {
			sum += s->start_k[i];
			n++;
		}
	}
	return n ? sum / (double)n : NAN;
}

/* A K figure ("+1.3 K"), "-" for none. */
static void cell_kelvin(struct report_block *t, size_t col, double k) {
	if (isfinite(k)) {
		report_cell(t, col, "%+.1f K", k);
	} else {
		report_cell(t, col, "-");
	}
}

/* A step's measured figures in one row: runs, the start, p50, the hottest zone, metrics. */
static void cold_warm_row(struct report_block *t, const struct report_campaign_side *s,
			  const char *label) {
	const struct runstats_label *l = step_stats(s, label);
	const struct testfig_figure *h = hottest(testfig_result_label(&s->figs, label, NULL));
	report_row(t);
	report_cell(t, 0, "%s", s->name);
	report_cell(t, 1, "%s", label);
	report_cell(t, 2, "%zu", l ? l->duration_s.n : 0);
	cell_kelvin(t, 3, mean_start(s, label));
	cell_duration(t, 4, l ? l->duration_s.p50 : NAN);
	cell_unit(t, 5, h ? h->mean : NAN, "celsius");
	struct buf m = {0};
	for (size_t k = 0; l && k < l->n_metrics; k++) {
		buf_printf(&m, "%s%s %.4g", k ? ", " : "", l->metrics[k].name, l->metrics[k].p50);
	}
	report_cell(t, 6, "%s", m.data ? m.data : "-");
	buf_finish(&m);
}

/* A cold step beside each warm step that runs the same command: what starting warm changes. */
static void cold_warm_section(struct report_doc *doc, const struct report_campaign *rc) {
	report_section(doc, "Cold and warm");
	const struct campaign_suite *s = &rc->sides[0].view.suite;
	struct report_block *t = NULL;
	for (size_t c = 0; c < s->n_steps; c++) {
		for (size_t w = 0; w < s->n_steps; w++) {
			if (s->steps[c].start != CAMPAIGN_START_COLD ||
			    s->steps[w].start != CAMPAIGN_START_WARM ||
			    !same_command(&s->steps[c].command, &s->steps[w].command)) {
				continue;
			}
			if (!t) {
				static const char *const head[] = {
					"board",        "step", "runs",
					"at the start", "p50",  "hottest zone (mean)",
					"metrics (p50)"};
				t = report_table(doc, 7, head);
				t->right[1] = t->right[6] = false;
			}
			for (size_t i = 0; i < rc->n; i++) {
				cold_warm_row(t, &rc->sides[i], s->steps[c].label);
				cold_warm_row(t, &rc->sides[i], s->steps[w].label);
			}
		}
	}
	report_para(
		doc, "%s",
		t ? "Each cold step beside the warm step that runs the same command: the cold "
		    "repetitions started with the board back at its idle baseline, the warm ones "
		    "right after the step's previous run (at the start: the hottest watched zone "
		    "over its idle baseline, the mean of the measured repetitions, from each "
		    "run's first fast sample)."
		  : "No warm step runs a cold step's command: nothing to set side by side.");
}

/* Every repetition of a side: its run, how it started, the gate, how it ended. */
static void repetitions_section(struct report_doc *doc, const struct report_campaign *rc) {
	report_section(doc, "Repetitions");
	for (size_t i = 0; i < rc->n; i++) {
		const struct campaign_view *v = &rc->sides[i].view;
		if (rc->n > 1) {
			report_heading(doc, "%s", rc->sides[i].name);
		}
		static const char *const head[] = {"#",      "step",    "rep",          "start",
						   "gate",   "wait",    "at the start", "run",
						   "status", "duration"};
		struct report_block *t = report_table(doc, 10, head);
		t->right[1] = t->right[3] = t->right[4] = t->right[8] = false;
		for (size_t k = 0; k < v->n_reps; k++) {
			const struct campaign_rep *r = &v->reps[k];
			report_row(t);
			report_cell(t, 0, "%lld", (long long)r->row.seq + 1);
			report_cell(t, 1, "%s", r->row.step);
			report_cell(t, 2, "%s%u", r->row.warmup ? "warmup " : "", r->row.rep);
			report_cell(t, 3, "%s", campaign_start_name(r->row.start));
			report_cell(t, 4, "%s", gate_word(r->row.gate));
			cell_duration(t, 5, (double)r->row.gate_wait_ms / 1000);
			cell_kelvin(t, 6, rc->sides[i].start_k[k]);
			report_cell(t, 7, "%lld", (long long)r->row.run);
			report_cell(t, 8, "%s%s", r->found ? run_status_name(r->status) : "-",
				    r->row.missing_metrics && *r->row.missing_metrics
					    ? " (incomplete)"
					    : "");
			cell_duration(t, 9, r->duration_s);
		}
	}
}

static void doc_build(const struct report_campaign *rc, struct report_doc *doc) {
	*doc = (struct report_doc){0};
	const struct campaign_view *a = &rc->sides[0].view;
	doc->title = rc->n > 1 ? xasprintf("Campaign %s: %s against %s", a->c.name,
					   rc->sides[0].name, rc->sides[1].name)
			       : xasprintf("Campaign %s on %s", a->c.name, rc->sides[0].name);
	if (rc->n > 1) {
		verdict_section(doc, rc); // at the top: is the rest like for like at all?
	}
	campaign_section(doc, rc);
	board_section(doc, rc);
	baseline_section(doc, rc);
	if (rc->n > 1) {
		compare_section(doc, rc);
	}
	steps_section(doc, rc);
	figures_section(doc, rc);
	cold_warm_section(doc, rc);
	repetitions_section(doc, rc);
}

void report_campaign_write(const struct report_campaign *rc, enum report_format format,
			   struct buf *out) {
	struct report_doc doc;
	doc_build(rc, &doc);
	report_doc_write(&doc, format, NULL, out);
}
