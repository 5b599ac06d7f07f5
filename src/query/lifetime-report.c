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

/* The seconds per stored integer (sealed by capreplay_percentile()) as hours per temperature. */
static void keep_temps(struct lifetime_report_entry *e, const struct capreplay_target *t) {
	size_t n;
	const struct stats_bin *bins = stats_bins(t->secs, &n);
	e->temps = xcalloc(n ? n : 1, sizeof(*e->temps));
	e->n_temps = n;
	for (size_t k = 0; k < n; k++) {
		e->temps[k] = (struct lifetime_point){(double)bins[k].q * t->resolution,
						      (double)bins[k].count / 3600.0};
	}
}

void lifetime_report_finish(struct lifetime_report *rep) {
	for (size_t i = 0; i < rep->n; i++) {
		free(rep->entries[i].sensor_key);
		free(rep->entries[i].temps);
	}
	free(rep->entries);
	*rep = (struct lifetime_report){0};
}

int lifetime_report_compute(struct store *store, const struct config *cfg, int64_t from, int64_t to,
			    bool include_unsynced, int64_t now, struct lifetime_report *rep,
			    char **err) {
	*rep = (struct lifetime_report){0};
	if (from == 0) {
		from = INT64_MIN;
	}
	if (to == 0) {
		to = INT64_MAX;
	}
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
	struct lifetime_params *params = xcalloc(n ? n : 1, sizeof(*params));
	struct lifetime_acc *accs = xcalloc(n ? n : 1, sizeof(*accs));
	struct lifetime_spacing *spacing = xcalloc(n ? n : 1, sizeof(*spacing));
	struct capreplay_target *targets = xcalloc(n ? n : 1, sizeof(*targets));
	struct stats_acc *secs = xcalloc(n ? n : 1, sizeof(*secs));
	size_t n_targets = 0;
	size_t *target_of = xcalloc(n ? n : 1, sizeof(*target_of));
	char **problems = xcalloc(n ? n : 1, sizeof(*problems));
	enum lifetime_warning_code *problem_code = xcalloc(n ? n : 1, sizeof(*problem_code));

	for (size_t i = 0; i < n; i++) {
		const struct capacitor_config *cc = &cfg->capacitors[i];
		struct lifetime_report_entry *e = &rep->entries[i];
		e->cc = cc;
		target_of[i] = SIZE_MAX;
		lifetime_acc_init(&accs[i]);
		lifetime_spacing_init(&spacing[i]);
		char *perr = NULL;
		if (!lifetime_params_init(&params[i], cc, &perr)) {
			problems[i] = perr;
			problem_code[i] = LIFETIME_WARN_INVALID;
			e->sensor_key = xstrdup(cc->sensor);
			continue;
		}
		const struct store_channel *ch =
			capreplay_match_channel(chans, n_chans, cc->sensor);
		e->sensor_key = xstrdup(ch ? ch->ch.key : cc->sensor);
		if (!ch) {
			problems[i] = xasprintf(
				"sensor '%s' matches no stored channel key or label", cc->sensor);
			problem_code[i] = LIFETIME_WARN_SENSOR;
			continue;
		}
		if (!capreplay_is_celsius(ch->ch.unit)) {
			problems[i] = xasprintf("sensor '%s' is not a temperature (unit %s)",
						ch->ch.key, ch->ch.unit ? ch->ch.unit : "none");
			problem_code[i] = LIFETIME_WARN_NOT_TEMPERATURE;
			continue;
		}
		target_of[i] = n_targets;
		targets[n_targets++] = (struct capreplay_target){
			.p = &params[i],
			.acc = &accs[i],
			.channel_id = ch->id,
			.resolution = ch->ch.resolution,
			.sp = &spacing[i],
			.collect = true,
		};
	}

	struct capreplay_info info;
	struct capreplay_summary hist;
	int64_t fallback_s = cfg->interval_ms >= 1000 ? cfg->interval_ms / 1000 : 60;
	// Seconds per stored integer: the p95 over histograms as over single samples.
	for (size_t i = 0; i < n_targets; i++) {
		targets[i].collect = false;
		targets[i].secs = &secs[i];
		stats_init(&secs[i]);
	}
	rc = include_unsynced ? 1
			      : capreplay_days(store, from, to, fallback_s, targets, n_targets,
					       &hist, &info);
	if (rc == 1) { // no merged days in the window: every cycle and sample
		rc = capreplay_run(store, from, to, include_unsynced, fallback_s, targets,
				   n_targets, &hist, &info);
	}
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
		struct lifetime_report_entry *e = &rep->entries[i];
		if (problems[i]) {
			e->r = (struct lifetime_result){0};
			e->r.consumed_fraction = e->r.life_h = e->r.remaining_h = NAN;
			e->r.equivalent_temp_c = e->r.life_at_mean_temp_h = NAN;
			e->r.life_uncapped_h = e->r.mean_temp_c = NAN;
			e->r.self_heating_k = e->r.consumed_total = NAN;
			e->r.service_h = e->r.unobserved_service_h = NAN;
			for (int k = 0; k < LIFETIME_N_RELATIVE; k++) {
				e->r.relative[k] = (struct lifetime_relative){10.0 * k, NAN, NAN};
			}
		} else {
			lifetime_summarize(&params[i], &accs[i], now, &e->r);
		}
		if (problems[i]) {
			lifetime_warn(&e->r, problem_code[i], "%s", problems[i]);
		}
		e->coverage = span_h > 0 && !problems[i] ? e->r.observed_h / span_h : NAN;
		e->p95_temp_c = e->life_at_p95_temp_h = NAN;
		// A lone sample stands for no time: no p95 life beside a no_data warning.
		if (target_of[i] != SIZE_MAX && e->r.observed_h > 0) {
			struct capreplay_target *t = &targets[target_of[i]];
			e->p95_temp_c = capreplay_percentile(t->secs, t->resolution, 95);
			e->life_at_p95_temp_h = lifetime_life_at(&params[i], e->p95_temp_c);
			keep_temps(e, t);
		}
		if (!problems[i]) {
			history_warnings(e, &hist, &info, include_unsynced);
		}
	}
	rc = 0;
out:
	for (size_t i = 0; i < n_targets; i++) {
		free(targets[i].pts);
		stats_finish(&secs[i]);
	}
	free(secs);
	for (size_t i = 0; i < n; i++) {
		free(problems[i]);
	}
	free(problems);
	free(problem_code);
	free(target_of);
	free(targets);
	free(spacing);
	free(accs);
	free(params);
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
		json_field_double(out, "p95_effective_temp_c", e->p95_temp_c + r->self_heating_k);
		json_field_time_or_null(out, "in_service", e->cc->has_in_service,
					e->cc->in_service);
		json_field_double(out, "unobserved_service_h", r->unobserved_service_h);
		json_field_double(out, "consumed_fraction_extrapolated", r->consumed_extrapolated);
		json_field_double(out, "consumed_fraction_total", r->consumed_total);
		json_field_bool(out, "past_estimated_life", r->past_life);
		json_key(out, "review");
		lifetime_report_write_review(e->cc, out);
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
