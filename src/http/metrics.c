/*
 * Prometheus text format 0.0.4 from a live snapshot: no sysfs or database work per scrape.
 * Families are written contiguously with HELP/TYPE once each, as the format requires.
 */
#include "metrics.h"

#include <math.h>
#include <string.h>

#include "json.h"
#include "unit.h"
#include "version.h"

/* Label values escape backslash, double quote and line feed (exposition format spec). */
static const char *const label_escapes[128] = {['\\'] = "\\\\", ['"'] = "\\\"", ['\n'] = "\\n"};

static void put_label(struct buf *out, bool first, const char *name, const char *value) {
	buf_printf(out, "%s%s=\"", first ? "" : ",", name);
	buf_put_escaped(out, value ? value : "", label_escapes, NULL);
	buf_putc(out, '"');
}

static void put_value(struct buf *out, double v) {
	char text[32];
	if (isnan(v)) {
		strcpy(text, "NaN");
	} else if (isinf(v)) {
		strcpy(text, v > 0 ? "+Inf" : "-Inf");
	} else {
		json_format_double(text, v);
	}
	buf_printf(out, " %s\n", text);
}

static void put_header(struct buf *out, const char *name, const char *type, const char *help) {
	buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void put_channel_labels(struct buf *out, const struct channel *ch) {
	buf_putc(out, '{');
	put_label(out, true, "key", ch->key);
	put_label(out, false, "label", ch->label ? ch->label : ch->key);
	put_label(out, false, "source", ch->source);
}

/* The family name a channel's values are written under (unit.h: the registry's). */
static const char *family_name(const struct unit_info *fam) {
	return fam ? fam->family : UNIT_FAMILY_OTHER;
}

static void write_channels(const struct live_snapshot *snap, struct buf *out) {
	// Each family once, in the registry's order, the catch-all last; a family shows only if
	// some channel has a value.
	size_t n_units;
	const struct unit_info *units = unit_all(&n_units);
	for (size_t f = 0; f <= n_units; f++) {
		const struct unit_info *fam = f < n_units ? &units[f] : NULL;
		if (fam && !fam->family) {
			continue; // written under the catch-all
		}
		// "millivolts" shares the volts family: write it with "volts" only.
		if (fam && f > 0 && units[f - 1].family &&
		    strcmp(fam->family, units[f - 1].family) == 0) {
			continue;
		}
		const char *name = family_name(fam);
		bool header = false;
		for (size_t i = 0; i < snap->n; i++) {
			const struct unit_info *cf = unit_family(&snap->channels[i]);
			if (strcmp(family_name(cf), name) != 0 || snap->readings[i].err != 0 ||
			    !isfinite(snap->readings[i].value)) {
				continue;
			}
			if (!header) {
				put_header(out, name, "gauge",
					   fam ? fam->family_help : UNIT_FAMILY_OTHER_HELP);
				header = true;
			}
			buf_puts(out, name);
			put_channel_labels(out, &snap->channels[i]);
			if (!cf) {
				put_label(out, false, "unit", snap->channels[i].unit);
			}
			buf_putc(out, '}');
			put_value(out, snap->readings[i].value / (cf ? cf->family_divisor : 1));
		}
	}

	if (snap->n > 0) {
		put_header(
			out, "thermlog_channel_ok", "gauge",
			"1 if the channel's last reading succeeded, 0 if it failed (then it has no value sample).");
		for (size_t i = 0; i < snap->n; i++) {
			buf_puts(out, "thermlog_channel_ok");
			put_channel_labels(out, &snap->channels[i]);
			buf_putc(out, '}');
			put_value(out, snap->readings[i].err == 0 ? 1 : 0);
		}
	}
}

static void write_capacitors(const struct live_snapshot *snap, struct buf *out) {
	// Hours become seconds: Prometheus wants base units (promtool lints "_hours").
	static const struct {
		const char *name, *help;
		size_t offset;
		double factor;
	} fields[] = {
		{"thermlog_capacitor_consumed_ratio",
		 "Fraction of the capacitor's effective life consumed so far (1 = end of life).",
		 offsetof(struct capstate, consumed_fraction), 1},
		{"thermlog_capacitor_consumed_total_ratio",
		 "Fraction of the capacitor's effective life consumed, with the time in service before "
		 "and between the samples aged at the observed rate (= consumed_ratio without in_service).",
		 offsetof(struct capstate, consumed_total), 1},
		{"thermlog_capacitor_remaining_seconds",
		 "Remaining life of the capacitor at its observed temperature history, in seconds.",
		 offsetof(struct capstate, remaining_h), 3600},
		{"thermlog_capacitor_effective_life_seconds",
		 "Effective (temperature-weighted) total life of the capacitor, in seconds.",
		 offsetof(struct capstate, effective_life_h), 3600},
		{"thermlog_capacitor_observed_seconds",
		 "Temperature history the capacitor's estimate is based on, in seconds.",
		 offsetof(struct capstate, observed_h), 3600},
	};
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
		bool header = false;
		for (size_t i = 0; i < snap->n_capacitors; i++) {
			const struct capstate *cap = &snap->capacitors[i];
			double v = *(const double *)((const char *)cap + fields[f].offset);
			if (!isfinite(v)) {
				continue; // unknown: no sample
			}
			if (!header) {
				put_header(out, fields[f].name, "gauge", fields[f].help);
				header = true;
			}
			buf_printf(out, "%s{", fields[f].name);
			put_label(out, true, "capacitor", cap->name);
			put_label(out, false, "sensor", cap->sensor);
			buf_putc(out, '}');
			put_value(out, v * fields[f].factor);
		}
	}
}

static void put_single(struct buf *out, const char *name, const char *type, const char *help,
		       double v) {
	put_header(out, name, type, help);
	buf_puts(out, name);
	put_value(out, v);
}

static void write_health(const struct live_snapshot *snap, struct buf *out) {
	const struct live_health *h = &snap->health;
	put_header(out, "thermlog_build_info", "gauge",
		   "Always 1; the version label names the build.");
	buf_puts(out, "thermlog_build_info{");
	put_label(out, true, "version", THERMLOG_VERSION);
	buf_puts(out, "} 1\n");
	put_single(out, "thermlog_up", "gauge", "1 while thermlogd serves metrics.", 1);
	if (h->started > 0) {
		put_single(out, "thermlog_start_time_seconds", "gauge",
			   "Start time of thermlogd, seconds since the epoch.", (double)h->started);
	}
	if (h->interval_ms > 0) {
		put_single(out, "thermlog_interval_seconds", "gauge",
			   "Configured sampling interval.", (double)h->interval_ms / 1000.0);
	}
	if (snap->ts > 0) {
		put_single(out, "thermlog_last_cycle_timestamp_seconds", "gauge",
			   "Time stamp of the last cycle, seconds since the epoch.",
			   (double)snap->ts);
		put_single(out, "thermlog_cycle_duration_seconds", "gauge",
			   "Duration of the last cycle (read and store).", h->cycle_seconds);
	}
	put_single(out, "thermlog_cycles_total", "counter", "Cycles stored since start.",
		   (double)h->cycles_total);
	put_single(out, "thermlog_cycles_failed_total", "counter",
		   "Cycles that could not be stored since start (queued or dropped).",
		   (double)h->cycles_failed);
	put_single(out, "thermlog_cycles_missed_total", "counter",
		   "Slots the loop woke too late for since start (the process did not run).",
		   (double)h->cycles_missed);
	put_single(out, "thermlog_queued_cycles", "gauge", "Cycles waiting for disk space.",
		   (double)h->queued_cycles);
	put_single(out, "thermlog_read_errors_total", "counter",
		   "Failed channel reads since start.", (double)h->read_errors_total);
	put_single(out, "thermlog_errors_last_hour", "gauge", "Errors logged in the last hour.",
		   (double)h->errors_last_hour);
	put_single(out, "thermlog_bytes_written_total", "counter",
		   "Database bytes written since start.", (double)h->bytes_written_total);
	// Unknown sync state has no sample rather than a guess.
	if (h->clock != CLOCK_STATE_UNKNOWN) {
		put_single(out, "thermlog_clock_synchronized", "gauge",
			   "1 if the system clock is synchronized (NTP), 0 if not.",
			   h->clock == CLOCK_STATE_SYNCED ? 1 : 0);
	}
}

/*
 * Runs, bounded: one series set per label of the summary (at most runs.metrics_labels
 * labels plus "other"), never one per run.
 */
static void write_runs(const struct live_snapshot *snap, struct buf *out) {
	static const double bounds[RUNSUMMARY_BUCKETS] = RUNSUMMARY_BUCKET_BOUNDS_S;
	if (snap->n_run_labels == 0) {
		return;
	}
	put_header(out, "thermlog_runs_total", "counter",
		   "Runs ended, by label and status (labels beyond the cap are summed as other).");
	for (size_t i = 0; i < snap->n_run_labels; i++) {
		const struct runsummary_label *l = &snap->run_labels[i];
		for (enum run_status s = 0; s < RUN_STATUS_COUNT; s++) {
			if (!run_status_final(s)) {
				continue; // running runs are thermlog_runs_running
			}
			buf_puts(out, "thermlog_runs_total{");
			put_label(out, true, "label", l->label);
			put_label(out, false, "status", run_status_name(s));
			buf_putc(out, '}');
			put_value(out, (double)l->by_status[s]);
		}
	}
	put_header(out, "thermlog_run_duration_seconds", "histogram",
		   "Duration of the ok runs, by label.");
	for (size_t i = 0; i < snap->n_run_labels; i++) {
		const struct runsummary_label *l = &snap->run_labels[i];
		uint64_t cumulative = 0;
		for (size_t b = 0; b <= RUNSUMMARY_BUCKETS; b++) {
			char le[32];
			if (b < RUNSUMMARY_BUCKETS) {
				cumulative += l->duration_bucket[b];
				json_format_double(le, bounds[b]);
			} else {
				cumulative = l->duration_count;
				strcpy(le, "+Inf");
			}
			buf_puts(out, "thermlog_run_duration_seconds_bucket{");
			put_label(out, true, "label", l->label);
			put_label(out, false, "le", le);
			buf_putc(out, '}');
			put_value(out, (double)cumulative);
		}
		buf_puts(out, "thermlog_run_duration_seconds_sum{");
		put_label(out, true, "label", l->label);
		buf_putc(out, '}');
		put_value(out, l->duration_sum_s);
		buf_puts(out, "thermlog_run_duration_seconds_count{");
		put_label(out, true, "label", l->label);
		buf_putc(out, '}');
		put_value(out, (double)l->duration_count);
	}
	put_header(out, "thermlog_run_active", "gauge", "Runs in progress, by label.");
	for (size_t i = 0; i < snap->n_run_labels; i++) {
		buf_puts(out, "thermlog_run_active{");
		put_label(out, true, "label", snap->run_labels[i].label);
		buf_putc(out, '}');
		put_value(out, (double)snap->run_labels[i].by_status[RUN_STATUS_RUNNING]);
	}
	put_header(out, "thermlog_run_energy_joules_total", "counter",
		   "Energy measured over the ended runs, by label.");
	for (size_t i = 0; i < snap->n_run_labels; i++) {
		buf_puts(out, "thermlog_run_energy_joules_total{");
		put_label(out, true, "label", snap->run_labels[i].label);
		buf_putc(out, '}');
		put_value(out, snap->run_labels[i].energy_j_total);
	}
}

/* Each frequency domain's throttle state and throttled time since the daemon started. */
static void write_throttle(const struct live_snapshot *snap, struct buf *out) {
	if (snap->n_throttle == 0) {
		return;
	}
	put_header(
		out, "thermlog_throttled", "gauge",
		"1 while the domain's effective maximum frequency is below its hardware maximum.");
	for (size_t i = 0; i < snap->n_throttle; i++) {
		buf_puts(out, "thermlog_throttled{");
		put_label(out, true, "domain", snap->throttle[i].name);
		buf_putc(out, '}');
		put_value(out, snap->throttle[i].throttled ? 1 : 0);
	}
	put_header(out, "thermlog_throttle_seconds_total", "counter",
		   "Time the domain was throttled since the daemon started, by cause (thermal or "
		   "cap).");
	for (size_t i = 0; i < snap->n_throttle; i++) {
		for (int c = THROTTLE_CAUSE_CAP; c <= THROTTLE_CAUSE_THERMAL; c++) {
			buf_puts(out, "thermlog_throttle_seconds_total{");
			put_label(out, true, "domain", snap->throttle[i].name);
			put_label(out, false, "cause", throttle_cause_name((enum throttle_cause)c));
			buf_putc(out, '}');
			put_value(out, (double)snap->throttle[i].ms[c] / 1000);
		}
	}
}

void metrics_write(const struct live_snapshot *snap, struct buf *out) {
	write_channels(snap, out);
	write_capacitors(snap, out);
	write_throttle(snap, out);
	write_runs(snap, out);
	write_health(snap, out);
}
