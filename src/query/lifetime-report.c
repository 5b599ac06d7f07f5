/*
 * The full recomputation of every configured capacitor over a window of the stored history,
 * with the history's warnings, as `thermlog lifetime` and GET /api/v1/lifetime show it.
 */
#include "lifetime-report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capreplay.h"
#include "stats.h"
#include "store.h"
#include "timefmt.h"
#include "xalloc.h"

static void history_warnings(struct lifetime_report_entry *e, const struct capreplay_summary *h,
			     const struct capreplay_info *info, bool include_unsynced) {
	int64_t nominal_s = info->nominal_s;
	if (info->rollup_from != INT64_MAX) {
		char iso[TIMEFMT_ISO_LEN];
		timefmt_iso(info->rollup_to, iso);
		lifetime_warn(
			&e->r, LIFETIME_WARN_HISTORY_TRIMMED,
			"raw samples before %s were pruned by the raw retention: the %.0f h "
			"before come from hourly rollups, where each value counts one %" PRId64
			" s interval and gaps inside an hour are not visible",
			iso, (info->rollup_to - info->rollup_from) / 3600.0, nominal_s);
	}
	int64_t gaps = h->gaps, gap_s = h->gap_s, longest = h->longest;
	if (gaps > 0) {
		// Hours to 0.1 h; below that, minutes, so no gap reads as 0.0 h.
		bool small = longest < 360;
		double unit = small ? 60.0 : 3600.0;
		lifetime_warn(&e->r, LIFETIME_WARN_DATA_GAPS,
			      "%" PRId64
			      " gap%s in the data totalling %.1f %s (longest %.1f %s): gap "
			      "time is not counted as observed; the part aged meanwhile at an "
			      "unknown temperature",
			      gaps, gaps == 1 ? "" : "s", gap_s / unit, small ? "min" : "h",
			      longest / unit, small ? "min" : "h");
	}
	if (h->unsynced > 0) {
		if (include_unsynced) {
			lifetime_warn(&e->r, LIFETIME_WARN_UNSYNCED,
				      "%" PRId64
				      " cycles with an unsynchronized clock are included; "
				      "their time stamps may be wrong",
				      h->unsynced);
		} else {
			lifetime_warn(&e->r, LIFETIME_WARN_UNSYNCED,
				      "%" PRId64
				      " cycles with an unsynchronized clock were left out "
				      "(--include-unsynced keeps them)",
				      h->unsynced);
		}
	}
	double obs = e->r.observed_h;
	if (obs > 0 && obs < LIFETIME_HOURS_PER_YEAR) {
		lifetime_warn(&e->r, LIFETIME_WARN_SHORT_HISTORY,
			      "projected from %.1f days of data, assuming they repeat: seasons and "
			      "load changes outside them are not captured",
			      obs / 24);
	}
}

/* Hours per value of a sealed histogram at @res (the seconds each stood for). */
static struct lifetime_point *hist_points(struct stats_acc *secs, double res, size_t *n) {
	const struct stats_bin *bins = stats_bins(secs, n);
	struct lifetime_point *pts = xcalloc(*n ? *n : 1, sizeof(*pts));
	for (size_t k = 0; k < *n; k++) {
		pts[k] = (struct lifetime_point){(double)bins[k].q * res,
						 (double)bins[k].count / 3600.0};
	}
	return pts;
}

void lifetime_report_finish(struct lifetime_report *rep) {
	for (size_t i = 0; i < rep->n; i++) {
		struct lifetime_report_entry *e = &rep->entries[i];
		free(e->sensor_key);
		free(e->temps);
		free(e->model_temps);
		free(e->load_key);
		for (int b = 0; b < TEMP_BASIS_N; b++) {
			free(e->sensor_keys[b]);
			capcheck_steady_finish(e->steady[b]);
			free(e->steady[b]);
		}
	}
	free(rep->entries);
	*rep = (struct lifetime_report){0};
}

/* One capacitor's replay: its model, sums, channels and checks. */
struct cap_work {
	struct lifetime_params p;
	struct lifetime_acc acc;
	struct lifetime_spacing sp;
	struct stats_acc secs, rise_secs, model_secs;
	struct capreplay_joint joint;
	struct capcheck_rise check;
	bool joint_on; // read with its other channels
	bool target;   // replayed at all
	const struct store_channel *chan[CAPREPLAY_N_ROLES];
	char *problem; // nothing can be estimated: why
	enum lifetime_warning_code problem_code;
	char *notes[CAPREPLAY_N_ROLES]; // a second channel left out: why (sensor_missing)
};

static const char *role_name(int role) {
	return role == CAPREPLAY_LOAD ? "load" : temp_basis_name((enum temp_basis)role);
}

/*
 * Matches the channel of @role named @name: the one the part ages at must be a temperature
 * (else the capacitor's problem); another one left out is a note.
 */
static void match_role(struct cap_work *w, struct lifetime_report_entry *e, int role,
		       const char *name, const struct store_channel *chans, size_t n_chans) {
	const struct store_channel *ch = capreplay_match_channel(chans, n_chans, name);
	bool drive = role == (int)w->p.basis;
	bool ripple = role == CAPREPLAY_LOAD && w->p.ripple_measured;
	char **key = role == CAPREPLAY_LOAD ? &e->load_key : &e->sensor_keys[role];
	*key = xstrdup(ch ? ch->ch.key : name);
	const char *unit = ch && ch->ch.unit ? ch->ch.unit : "none";
	char *why = NULL;
	if (!ch) {
		why = xasprintf("%s '%s' matches no stored channel key or label",
				role == CAPREPLAY_LOAD ? "load channel" : "sensor", name);
	} else if (role != CAPREPLAY_LOAD && !capreplay_is_celsius(ch->ch.unit)) {
		why = xasprintf("sensor '%s' is not a temperature (unit %s)", ch->ch.key, unit);
	} else if (ripple && strcmp(unit, "amperes") != 0 && strcmp(unit, "watts") != 0) {
		why = xasprintf("ripple_from channel '%s' is not a current or a power (unit %s)",
				ch->ch.key, unit);
	}
	if (!why) {
		w->chan[role] = ch;
		return;
	}
	// Without the one it ages at (or, for an ambient, the current its rise needs) nothing
	// can be estimated; another one only leaves its check out.
	if (drive || (ripple && w->p.basis == TEMP_BASIS_AMBIENT)) {
		if (!w->problem) {
			w->problem = why;
			w->problem_code = ch ? LIFETIME_WARN_NOT_TEMPERATURE : LIFETIME_WARN_SENSOR;
			return;
		}
		free(why);
		return;
	}
	w->notes[role] = xasprintf("the %s %s: left out of the checks", role_name(role), why);
	free(why);
}

/* The target of a capacitor whose channels matched; joint when it has others to read. */
static void set_target(struct cap_work *w, unsigned flags, struct capreplay_target *t) {
	int drive = (int)w->p.basis;
	int others = 0;
	for (int r = 0; r < CAPREPLAY_N_ROLES; r++) {
		others += r != drive && w->chan[r];
	}
	w->joint_on = others > 0 || (flags & LIFETIME_REPORT_STEADY);
	stats_init(&w->secs);
	*t = (struct capreplay_target){
		.p = &w->p,
		.acc = &w->acc,
		.channel_id = w->chan[drive]->id,
		.resolution = w->chan[drive]->ch.resolution,
		.sp = &w->sp,
		.secs = &w->secs,
	};
	w->target = true;
	if (!w->joint_on) {
		return;
	}
	struct capreplay_joint *j = &w->joint;
	for (int r = 0; r < CAPREPLAY_N_ROLES; r++) {
		j->ids[r] = w->chan[r] ? w->chan[r]->id : -1;
		j->res[r] = w->chan[r] ? w->chan[r]->ch.resolution : 0;
	}
	j->load_watts = w->chan[CAPREPLAY_LOAD] && w->chan[CAPREPLAY_LOAD]->ch.unit &&
			strcmp(w->chan[CAPREPLAY_LOAD]->ch.unit, "watts") == 0;
	j->load_ripple = w->p.ripple_measured && w->chan[CAPREPLAY_LOAD];
	capcheck_rise_init(&w->check);
	j->check = &w->check;
	stats_init(&w->rise_secs);
	j->rise_secs = &w->rise_secs;
	if (j->load_ripple && drive == TEMP_BASIS_AMBIENT) {
		stats_init(&w->model_secs);
		j->model_secs = &w->model_secs;
	}
	t->joint = j;
}

/* Steady state per measured sensor for the report's steady flag. */
static void steady_init(struct cap_work *w, struct lifetime_report_entry *e) {
	for (int b = 0; b < TEMP_BASIS_N; b++) {
		if (w->chan[b]) {
			e->steady[b] = xcalloc(1, sizeof(*e->steady[b]));
			capcheck_steady_init(e->steady[b], w->p.steady_rate_k, w->p.steady_soak_s);
			w->joint.steady[b] = e->steady[b];
		}
	}
}

/* Matches every channel of capacitor @e and prepares its sums. */
static void cap_prepare(struct cap_work *w, struct lifetime_report_entry *e,
			const struct store_channel *chans, size_t n_chans, unsigned flags,
			struct capreplay_target *t) {
	const struct capacitor_config *cc = e->cc;
	lifetime_acc_init(&w->acc);
	lifetime_spacing_init(&w->sp);
	char *perr = NULL;
	if (!lifetime_params_init(&w->p, cc, &perr)) {
		w->problem = perr;
		w->problem_code = LIFETIME_WARN_INVALID;
		e->sensor_key = xstrdup(cc->sensor ? cc->sensor : "");
		return;
	}
	e->basis_reason = lifetime_basis_reason(&w->p);
	for (int b = 0; b < TEMP_BASIS_N; b++) {
		const char *name = lifetime_sensor_of(cc, (enum temp_basis)b);
		if (name) {
			match_role(w, e, b, name, chans, n_chans);
		}
	}
	if (lifetime_load_of(cc)) {
		match_role(w, e, CAPREPLAY_LOAD, lifetime_load_of(cc), chans, n_chans);
	}
	e->sensor_key = xstrdup(e->sensor_keys[w->p.basis] ? e->sensor_keys[w->p.basis] : "");
	if (w->problem) {
		return;
	}
	set_target(w, flags, t);
	if (flags & LIFETIME_REPORT_STEADY) {
		steady_init(w, e);
	}
}

/*
 * The replay of every target: the simple ones over the daily histograms where they serve,
 * the joint ones (several channels, steady state) sample by sample.
 */
static int replay_all(struct store *store, int64_t from, int64_t to, unsigned flags,
		      int64_t fallback_s, struct capreplay_target *simple, size_t ns,
		      struct capreplay_target *joint, size_t nj, struct capreplay_summary *hist,
		      struct capreplay_info *info) {
	bool unsynced = flags & LIFETIME_REPORT_UNSYNCED;
	int rc = unsynced || ns == 0
			 ? 1
			 : capreplay_days(store, from, to, fallback_s, simple, ns, hist, info);
	if (rc < 0 || (rc == 0 && nj == 0)) {
		return rc;
	}
	// The joint ones (and the simple ones too when no day was merged) sample by sample;
	// simple and joint lie side by side in one array.
	bool with_simple = rc == 1;
	struct capreplay_target *t = with_simple ? simple : joint;
	size_t n = with_simple ? ns + nj : nj;
	struct capreplay_summary raw_hist;
	struct capreplay_info raw_info;
	rc = capreplay_run(store, from, to, unsynced, fallback_s, t, n, &raw_hist, &raw_info);
	if (with_simple) {
		*hist = raw_hist;
		*info = raw_info;
	}
	return rc;
}

/* What only a joint replay gives: profiles on the model scale, the checks, steady state. */
static void joint_results(struct cap_work *w, struct lifetime_report_entry *e) {
	if (!w->joint_on) {
		return;
	}
	if (w->joint.model_secs && e->r.observed_h > 0) {
		stats_seal(&w->model_secs);
		e->p95_effective_temp_c =
			capreplay_percentile(&w->model_secs, CAPREPLAY_MODEL_RES, 95);
		e->life_at_p95_temp_h = lifetime_life_at_model(&w->p, e->p95_effective_temp_c);
		e->model_temps =
			hist_points(&w->model_secs, CAPREPLAY_MODEL_RES, &e->n_model_temps);
	}
	if (w->chan[CAPREPLAY_AMBIENT] && (w->chan[CAPREPLAY_CASE] || w->chan[CAPREPLAY_LOAD])) {
		double p95 = capreplay_percentile(&w->rise_secs, CAPREPLAY_RISE_RES, 95);
		e->has_check = true;
		capcheck_rise_summarize(&w->p, &w->check, p95, e->sensor_keys[TEMP_BASIS_AMBIENT],
					&e->check, &e->r);
	}
	int drive = (int)w->p.basis;
	for (int b = 0; b < TEMP_BASIS_N; b++) {
		if (!e->steady[b]) {
			continue;
		}
		capcheck_steady_end(e->steady[b]);
		capcheck_steady_finish(e->steady[b]); // the figures stay, the window goes
		double d = lifetime_sum_value(&e->steady[b]->transient_d);
		double all = d + lifetime_sum_value(&e->steady[b]->steady_d);
		if (b == drive && all > 0 && d > CAPCHECK_TRANSIENT_SHARE * all) {
			double h = lifetime_sum_value(&e->steady[b]->transient_h);
			lifetime_warn(&e->r, LIFETIME_WARN_TRANSIENT,
				      "%.0f %% of the consumed life was drawn while the %s "
				      "temperature was not steady (%.1f h of transients, %zu "
				      "periods of steady state): evaluate conditions only after "
				      "temperatures have fully stabilized",
				      100 * d / all, temp_basis_name((enum temp_basis)b), h,
				      e->steady[b]->n_periods_total);
		}
	}
}

/* One capacitor's figures and warnings after the replay. */
static void cap_results(struct cap_work *w, struct lifetime_report_entry *e, int64_t now,
			double span_h, const struct capreplay_summary *hist,
			const struct capreplay_info *info, bool unsynced) {
	if (w->problem) {
		e->r = (struct lifetime_result){0};
		e->r.consumed_fraction = e->r.life_h = e->r.remaining_h = NAN;
		e->r.equivalent_temp_c = e->r.life_at_mean_temp_h = NAN;
		e->r.life_uncapped_h = e->r.mean_temp_c = NAN;
		e->r.self_heating_k = e->r.consumed_total = NAN;
		e->r.service_h = e->r.unobserved_service_h = NAN;
		e->r.consumed_constant_ripple = e->r.life_constant_ripple_h = NAN;
		e->r.voltage_factor = NAN;
		for (int k = 0; k < LIFETIME_N_RELATIVE; k++) {
			e->r.relative[k] = (struct lifetime_relative){10.0 * k, NAN, NAN};
		}
		for (int k = 0; k < 2; k++) {
			e->r.band.consumed_fraction[k] = e->r.band.life_uncapped_h[k] = NAN;
			e->r.band.life_h[k] = e->r.band.remaining_h[k] = NAN;
		}
		lifetime_warn(&e->r, w->problem_code, "%s", w->problem);
	} else {
		lifetime_summarize(&w->p, &w->acc, now, &e->r);
	}
	e->coverage = span_h > 0 && !w->problem ? e->r.observed_h / span_h : NAN;
	e->p95_temp_c = e->life_at_p95_temp_h = e->p95_effective_temp_c = NAN;
	// A lone sample stands for no time: no p95 life beside a no_data warning.
	if (w->target && e->r.observed_h > 0) {
		e->p95_temp_c =
			capreplay_percentile(&w->secs, w->chan[w->p.basis]->ch.resolution, 95);
		e->p95_effective_temp_c = e->p95_temp_c + e->r.self_heating_k;
		e->life_at_p95_temp_h = lifetime_life_at(&w->p, e->p95_temp_c);
		e->temps = hist_points(&w->secs, w->chan[w->p.basis]->ch.resolution, &e->n_temps);
	}
	if (w->target) {
		joint_results(w, e);
	}
	for (int r = 0; r < CAPREPLAY_N_ROLES; r++) {
		if (w->notes[r]) {
			lifetime_warn(&e->r, LIFETIME_WARN_SENSOR_MISSING, "%s", w->notes[r]);
		}
	}
	if (!w->problem) {
		history_warnings(e, hist, info, unsynced);
	}
	capcheck_vent_check(e->cc->case_diameter_mm, e->cc->vent_clearance_mm, &e->vent);
}

static void cap_finish(struct cap_work *w) {
	free(w->problem);
	for (int r = 0; r < CAPREPLAY_N_ROLES; r++) {
		free(w->notes[r]);
	}
	if (w->target) {
		stats_finish(&w->secs);
	}
	if (w->joint_on) {
		stats_finish(&w->rise_secs);
		if (w->joint.model_secs) {
			stats_finish(&w->model_secs);
		}
	}
}

int lifetime_report_compute(struct store *store, const struct config *cfg, int64_t from, int64_t to,
			    bool include_unsynced, int64_t now, struct lifetime_report *rep,
			    char **err) {
	return lifetime_report_compute_with(store, cfg, from, to,
					    include_unsynced ? LIFETIME_REPORT_UNSYNCED : 0, now,
					    rep, err);
}

int lifetime_report_compute_with(struct store *store, const struct config *cfg, int64_t from,
				 int64_t to, unsigned flags, int64_t now,
				 struct lifetime_report *rep, char **err) {
	*rep = (struct lifetime_report){0};
	from = from == 0 ? INT64_MIN : from;
	to = to == 0 ? INT64_MAX : to;
	if (from >= to) {
		*err = xstrdup("the window is empty: --from must be before --to");
		return -EINVAL;
	}
	struct store_channel *chans = NULL;
	size_t n_chans = 0;
	int rc = store_channels(store, &chans, &n_chans);
	if (rc < 0) {
		*err = xasprintf("could not read the channel list: %s", strerror(-rc));
		return rc;
	}
	size_t n = cfg->n_capacitors;
	rep->n = n;
	rep->entries = xcalloc(n ? n : 1, sizeof(*rep->entries));
	struct cap_work *work = xcalloc(n ? n : 1, sizeof(*work));
	// simple targets from the front, joint ones from the back: one array, two runs
	struct capreplay_target *targets = xcalloc(n ? n : 1, sizeof(*targets));
	size_t ns = 0, nj = 0;
	for (size_t i = 0; i < n; i++) {
		rep->entries[i].cc = &cfg->capacitors[i];
		struct capreplay_target t;
		cap_prepare(&work[i], &rep->entries[i], chans, n_chans, flags, &t);
		if (work[i].target) {
			targets[work[i].joint_on ? n - ++nj : ns++] = t;
		}
	}
	struct capreplay_info info = {.raw_from = INT64_MAX, .rollup_from = INT64_MAX};
	struct capreplay_summary hist = {0};
	int64_t fallback_s = cfg->interval_ms >= 1000 ? cfg->interval_ms / 1000 : 60;
	if (ns + nj < n) { // the joint ones next to the simple ones
		memmove(targets + ns, targets + n - nj, nj * sizeof(*targets));
	}
	rc = replay_all(store, from, to, flags, fallback_s, targets, ns, targets + ns, nj, &hist,
			&info);
	rep->interval_s = info.nominal_s;
	if (rc < 0) {
		*err = xasprintf("could not read the stored history: %s", strerror(-rc));
		goto out;
	}
	if (hist.n > 0) {
		rep->from = hist.first;
		rep->to = hist.last;
	}
	if (info.rollup_from != INT64_MAX) {
		rep->from = info.rollup_from;
		rep->to = hist.n > 0 ? rep->to : info.rollup_to;
	}
	double span_h = (double)(rep->to - rep->from) / 3600.0;
	for (size_t i = 0; i < n; i++) {
		cap_results(&work[i], &rep->entries[i], now, span_h, &hist, &info,
			    flags & LIFETIME_REPORT_UNSYNCED);
	}
	rc = 0;
out:
	for (size_t i = 0; i < n; i++) {
		cap_finish(&work[i]);
	}
	free(work);
	free(targets);
	store_channels_free(chans, n_chans);
	if (rc < 0) {
		lifetime_report_finish(rep);
	}
	return rc;
}

void lifetime_report_write_warnings(const struct lifetime_result *r, struct json *out) {
	json_array_begin(out);
	for (size_t k = 0; k < r->n_warnings; k++) {
		json_object_begin(out);
		json_field_string(out, "code", lifetime_warning_name(r->warnings[k].code));
		json_field_string(out, "message", r->warnings[k].message);
		json_object_end(out);
	}
	json_array_end(out);
}

void lifetime_report_write_review(const struct capacitor_config *cc, struct json *out) {
	json_object_begin(out);
	for (int k = 0; k < CAPACITOR_REVIEW_N; k++) {
		json_field_string(out, capacitor_review_keys[k],
				  cc->review[k]); // null: not recorded
	}
	json_object_end(out);
}

void lifetime_report_write_part(const struct lifetime_report_entry *e, struct json *out) {
	json_field_string(out, "name", e->cc->name);
	json_field_string(out, "sensor", e->sensor_key);
	json_field_string(out, "basis", temp_basis_name(e->cc->basis));
	json_field_string(out, "basis_reason", e->basis_reason);
}

/* "[short end, long end]": the band's two figures. */
static void write_pair(struct json *out, const char *key, const double v[2]) {
	json_key(out, key);
	json_array_begin(out);
	json_double(out, v[0]);
	json_double(out, v[1]);
	json_array_end(out);
}

void lifetime_report_write_band(const struct lifetime_result *r, struct json *out) {
	json_object_begin(out);
	json_field_double(out, "uncertainty_k", r->band.uncertainty_k);
	write_pair(out, "effective_life_h", r->band.life_h);
	write_pair(out, "life_uncapped_h", r->band.life_uncapped_h);
	write_pair(out, "remaining_h", r->band.remaining_h);
	write_pair(out, "consumed_fraction", r->band.consumed_fraction);
	json_object_end(out);
}

static void write_validity(const struct lifetime_result *r, struct json *out) {
	const struct lifetime_validity *v = &r->validity;
	json_object_begin(out);
	json_field_double(out, "low_c", v->low_c);
	json_field_double(out, "high_c", v->high_c);
	json_field_bool(out, "configured", v->configured);
	json_field_double(out, "max_temp_c", v->max_c);
	json_field_double(out, "below_h", v->below_h);
	json_field_double(out, "above_h", v->above_h);
	json_field_double(out, "below_consumed_share", v->below_share);
	json_field_double(out, "above_consumed_share", v->above_share);
	json_field_double(out, "above_max_h", v->above_max_h);
	json_field_double(out, "bt2_low_c", v->bt2_low_c);
	json_field_double(out, "bt2_high_c", v->bt2_high_c);
	json_field_double(out, "bt2_outside_h", v->bt2_out_h);
	json_field_double(out, "bt2_outside_consumed_share", v->bt2_out_share);
	json_object_end(out);
}

static void write_voltage(const struct lifetime_report_entry *e, struct json *out) {
	const struct capacitor_voltage *v = &e->cc->voltage;
	if (isnan(v->applied_v)) {
		json_null(out);
		return;
	}
	json_object_begin(out);
	json_field_double(out, "applied_v", v->applied_v);
	json_field_double(out, "rated_v", v->rated_v);
	json_field_double(out, "exponent", v->exponent);
	json_field_double(out, "factor", e->r.voltage_factor);
	json_object_end(out);
}

static void write_ripple(const struct lifetime_report_entry *e, struct json *out) {
	const struct capacitor_ripple_from *rf = &e->cc->ripple_from;
	if (!rf->channel) {
		json_null(out);
		return;
	}
	const struct lifetime_result *r = &e->r;
	json_object_begin(out);
	json_field_string(out, "channel", e->load_key);
	json_field_string(out, "formula", ripple_formula_names[rf->formula]);
	json_field_double(out, "mean_rise_k", r->self_heating_k);
	json_field_double(out, "consumed_fraction_measured", r->consumed_fraction);
	json_field_double(out, "consumed_fraction_constant", r->consumed_constant_ripple);
	json_field_double(out, "life_uncapped_h_measured", r->life_uncapped_h);
	json_field_double(out, "life_uncapped_h_constant", r->life_constant_ripple_h);
	json_field_double(out, "constant_current_a", e->cc->current_a);
	json_object_end(out);
}

static void write_check(const struct lifetime_report_entry *e, struct json *out) {
	if (!e->has_check) {
		json_null(out);
		return;
	}
	const struct capcheck_rise_result *c = &e->check;
	json_object_begin(out);
	json_field_double(out, "hours", c->hours);
	json_field_double(out, "measured_mean_k", c->measured_mean_k);
	json_field_double(out, "measured_p95_k", c->measured_p95_k);
	json_field_double(out, "modelled_k", c->modelled_mean_k);
	json_field_double(out, "tolerance_k", c->tolerance_k);
	if (c->paired && isfinite(c->modelled_mean_k)) {
		json_field_bool(out, "agrees", !c->mismatch);
	} else {
		json_field_null(out, "agrees");
	}
	json_field_double(out, "ambient_above_case_h", c->ambient_above_h);
	json_field_double(out, "ambient_load_r", c->ambient_load_r);
	json_field_double(out, "case_load_r", c->case_load_r);
	json_field_bool(out, "ambient_looks_like_case", c->looks_like_case);
	json_object_end(out);
}

static void write_steady_one(const struct capcheck_steady *st, struct json *out) {
	double sh = lifetime_sum_value(&st->steady_h), th = lifetime_sum_value(&st->transient_h);
	double sd = lifetime_sum_value(&st->steady_d), td = lifetime_sum_value(&st->transient_d);
	json_object_begin(out);
	json_field_double(out, "steady_h", sh);
	json_field_double(out, "transient_h", th);
	json_field_double(out, "steady_share", sh + th > 0 ? sh / (sh + th) : NAN);
	json_field_double(out, "transient_consumed_share", sd + td > 0 ? td / (sd + td) : NAN);
	json_field_int(out, "periods_total", (int64_t)st->n_periods_total);
	json_key(out, "periods");
	json_array_begin(out);
	for (size_t k = 0; k < st->n_periods; k++) {
		json_object_begin(out);
		json_field_time(out, "from", st->periods[k].from);
		json_field_time(out, "to", st->periods[k].to);
		json_object_end(out);
	}
	json_array_end(out);
	json_field_int(out, "transients_total", (int64_t)st->n_transients_total);
	json_key(out, "transients");
	json_array_begin(out);
	for (size_t k = 0; k < st->n_transients; k++) {
		const struct capcheck_transient *tr = &st->transients[k];
		json_object_begin(out);
		json_field_time(out, "from", tr->from);
		json_field_time(out, "to", tr->to);
		json_field_bool(out, "from_window_start", tr->from_window_start);
		json_field_bool(out, "reached", tr->reached);
		json_field_int_or_null(out, "time_to_equilibrium_s", tr->reached,
				       tr->to - tr->from);
		json_object_end(out);
	}
	json_array_end(out);
	json_object_end(out);
}

static void write_steady(const struct lifetime_report_entry *e, struct json *out) {
	bool any = false;
	for (int b = 0; b < TEMP_BASIS_N; b++) {
		any = any || e->steady[b];
	}
	if (!any) {
		json_null(out);
		return;
	}
	json_object_begin(out);
	for (int b = 0; b < TEMP_BASIS_N; b++) {
		json_key(out, temp_basis_names[b]);
		if (e->steady[b]) {
			write_steady_one(e->steady[b], out);
		} else {
			json_null(out);
		}
	}
	json_object_end(out);
}

static void write_vent(const struct lifetime_report_entry *e, struct json *out) {
	json_object_begin(out);
	json_field_double(out, "case_diameter_mm", e->cc->case_diameter_mm);
	json_field_double(out, "clearance_mm", e->cc->vent_clearance_mm);
	json_field_string(out, "facing", e->cc->vent_facing);
	json_field_double(out, "required_mm", e->vent.required_mm);
	json_field_string(out, "verdict", capcheck_vent_verdict_name(e->vent.verdict));
	json_field_string(out, "rule", e->vent.rule);
	json_object_end(out);
}

/* What the capacitor review adds to an entry: temperatures, checks, band, validity, vent. */
static void write_review_figures(const struct lifetime_report_entry *e, struct json *out) {
	json_key(out, "sensors");
	json_object_begin(out);
	for (int b = 0; b < TEMP_BASIS_N; b++) {
		json_field_string(out, temp_basis_names[b], e->sensor_keys[b]);
	}
	json_object_end(out);
	json_field_string(out, "load_channel", e->load_key);
	json_key(out, "band");
	lifetime_report_write_band(&e->r, out);
	json_key(out, "validity");
	write_validity(&e->r, out);
	json_key(out, "voltage");
	write_voltage(e, out);
	json_key(out, "ripple");
	write_ripple(e, out);
	json_key(out, "self_heating_check");
	write_check(e, out);
	json_key(out, "steady_state");
	write_steady(e, out);
	json_key(out, "vent");
	write_vent(e, out);
}

void lifetime_report_write_json(const struct lifetime_report *rep, struct json *out) {
	json_object_begin(out);
	// the span it covers: the first and the last sample evaluated (null when none)
	bool any = rep->from != 0 || rep->to != 0;
	json_field_int_or_null(out, "from", any, rep->from);
	json_field_int_or_null(out, "to", any, rep->to);
	json_field_int_or_null(out, "interval_s", rep->interval_s > 0, rep->interval_s);
	json_key(out, "capacitors");
	json_array_begin(out);
	for (size_t i = 0; i < rep->n; i++) {
		const struct lifetime_report_entry *e = &rep->entries[i];
		const struct lifetime_result *r = &e->r;
		json_object_begin(out);
		lifetime_report_write_part(e, out);
		json_field_double(out, "observed_h", r->observed_h);
		json_field_double(out, "coverage", e->coverage);
		json_field_double(out, "consumed_fraction", r->consumed_fraction);
		json_field_double(out, "effective_life_h", r->life_h);
		json_field_double(out, "life_uncapped_h", r->life_uncapped_h);
		json_field_double(out, "equivalent_temp_c", r->equivalent_temp_c);
		json_field_double(out, "mean_temp_c", r->mean_temp_c);
		json_field_double(out, "life_at_mean_temp_h", r->life_at_mean_temp_h);
		json_field_double(out, "p95_temp_c", e->p95_temp_c);
		json_field_double(out, "life_at_p95_temp_h", e->life_at_p95_temp_h);
		json_field_double(out, "remaining_h", r->remaining_h);
		json_field_bool(out, "capped", r->capped);
		// The cap itself, so a reader can bound the relative lives (which are uncapped).
		json_field_double(out, "life_cap_h",
				  lifetime_cap_years(e->cc) * LIFETIME_HOURS_PER_YEAR);
		json_key(out, "warnings");
		lifetime_report_write_warnings(r, out);
		json_key(out, "relative_lifetime");
		json_array_begin(out);
		for (int k = 0; k < LIFETIME_N_RELATIVE; k++) {
			json_object_begin(out);
			json_field_double(out, "reduction_k", r->relative[k].reduction_k);
			json_field_double(out, "factor", r->relative[k].factor);
			json_field_double(out, "life_h", r->relative[k].life_h);
			json_object_end(out);
		}
		json_array_end(out);
		// The temperatures the model used: measured + self-heating (the core estimate).
		json_field_double(out, "self_heating_k", r->self_heating_k);
		json_field_double(out, "equivalent_effective_temp_c",
				  r->equivalent_temp_c + r->self_heating_k);
		json_field_double(out, "mean_effective_temp_c", r->mean_temp_c + r->self_heating_k);
		json_field_double(out, "p95_effective_temp_c", e->p95_effective_temp_c);
		json_field_time_or_null(out, "in_service", e->cc->has_in_service,
					e->cc->in_service);
		json_field_double(out, "unobserved_service_h", r->unobserved_service_h);
		json_field_double(out, "consumed_fraction_extrapolated", r->consumed_extrapolated);
		json_field_double(out, "consumed_fraction_total", r->consumed_total);
		json_field_bool(out, "past_estimated_life", r->past_life);
		json_key(out, "review");
		lifetime_report_write_review(e->cc, out);
		write_review_figures(e, out);
		json_object_end(out);
	}
	json_array_end(out);
	json_object_end(out);
}

int lifetime_report_json(struct store *store, const struct config *cfg, int64_t from, int64_t to,
			 bool include_unsynced, int64_t now, struct json *out, char **err) {
	struct lifetime_report rep;
	int rc = lifetime_report_compute(store, cfg, from, to, include_unsynced, now, &rep, err);
	if (rc < 0) {
		return rc;
	}
	lifetime_report_write_json(&rep, out);
	lifetime_report_finish(&rep);
	return 0;
}

int lifetime_report_series(struct store *store, const struct config *cfg, int64_t from, int64_t now,
			   const struct lifetime_report *rep, struct lifetime_series *series,
			   char **err) {
	int64_t span = rep->to - rep->from;
	int64_t step = (span + LIFETIME_SERIES_POINTS - 1) / LIFETIME_SERIES_POINTS;
	if (step >= 3600) {
		step = (step + 3599) / 3600 * 3600;
	}
	size_t n = 0;
	int64_t at[LIFETIME_SERIES_POINTS];
	for (int64_t t = rep->from + step;
	     step > 0 && t < rep->to && n + 1 < LIFETIME_SERIES_POINTS; t += step) {
		at[n++] = t;
	}
	for (size_t i = 0; i < rep->n; i++) {
		series[i].n = 0;
	}
	for (size_t k = 0; k <= n; k++) {
		struct lifetime_report part;
		const struct lifetime_report *use = rep;
		if (k < n) {
			int rc = lifetime_report_compute(store, cfg, from, at[k], false, now, &part,
							 err);
			if (rc < 0) {
				return rc;
			}
			use = &part;
		}
		for (size_t i = 0; i < rep->n && i < use->n; i++) {
			struct lifetime_series *s = &series[i];
			const struct lifetime_result *r = &use->entries[i].r;
			s->to[s->n] = k < n ? at[k] : rep->to;
			s->consumed[s->n] = r->consumed_fraction;
			s->consumed_band[s->n][0] = r->band.consumed_fraction[0];
			s->consumed_band[s->n][1] = r->band.consumed_fraction[1];
			s->observed_h[s->n] = r->observed_h;
			s->n++;
		}
		if (k < n) {
			lifetime_report_finish(&part);
		}
	}
	return 0;
}

int lifetime_series_json(struct store *store, const struct config *cfg, int64_t from, int64_t to,
			 int64_t now, struct json *out, char **err) {
	struct lifetime_report rep;
	int rc = lifetime_report_compute(store, cfg, from, to, false, now, &rep, err);
	if (rc < 0) {
		return rc;
	}
	struct lifetime_series *series = xcalloc(rep.n ? rep.n : 1, sizeof(*series));
	if (rep.to > rep.from) {
		rc = lifetime_report_series(store, cfg, from == 0 ? INT64_MIN : from, now, &rep,
					    series, err);
	}
	if (rc == 0) {
		json_object_begin(out);
		json_key(out, "capacitors");
		json_array_begin(out);
		for (size_t i = 0; i < rep.n; i++) {
			const struct lifetime_series *s = &series[i];
			json_object_begin(out);
			lifetime_report_write_part(&rep.entries[i], out);
			json_key(out, "points");
			json_array_begin(out);
			for (size_t k = 0; k < s->n; k++) {
				json_object_begin(out);
				json_field_time(out, "to", s->to[k]);
				json_field_double(out, "observed_h", s->observed_h[k]);
				json_field_double(out, "consumed_fraction", s->consumed[k]);
				write_pair(out, "consumed_fraction_band", s->consumed_band[k]);
				json_object_end(out);
			}
			json_array_end(out);
			json_object_end(out);
		}
		json_array_end(out);
		json_object_end(out);
	}
	free(series);
	lifetime_report_finish(&rep);
	return rc;
}
