/*
 * A run's figures: the counters read at its boundaries (cpufreq, devfreq, cooling, energy)
 * and the figures of its end (energy, clock residency, heat) written with the run.
 */
#include "runsock-internal.h"

#include "throttle.h"
#include "throttlescan.h"

/* --- counters at a run's boundaries --------------------------------------------------------- */

void runsock_snapshot_json(const struct counters_snapshot *s, int64_t mono_ms, uint64_t pid_start,
			   struct buf *out) {
	struct json j;
	json_init(&j, out, false);
	json_object_begin(&j);
	json_field_int(&j, "mono_ms", mono_ms);
	if (pid_start > 0 && pid_start <= INT64_MAX) {
		// The watched process's start time, for a restart.
		json_field_int(&j, "pid_start", (int64_t)pid_start);
	}
	json_key(&j, "counters");
	json_array_begin(&j);
	for (size_t i = 0; i < s->n; i++) {
		json_object_begin(&j);
		json_field_string(&j, "kind", counters_snap_kind_name(s->files[i].kind));
		json_field_string(&j, "key", s->files[i].key);
		json_field_string(&j, "path", s->files[i].path);
		json_field_string(&j, "text", s->files[i].text);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
}

/*
 * Reads back a start snapshot stored as JSON (a run left running by an earlier daemon), and the
 * watched process's start time in it (@pid_start may be NULL).
 */
bool runsock_snapshot_parse(const char *text, struct counters_snapshot *s, uint64_t *pid_start) {
	struct jsonread_error err;
	size_t len = text ? strlen(text) : 0;
	struct jsonread_node *root = text ? jsonread_parse(text, len, len, &err) : NULL;
	const struct jsonread_node *ps = jsonread_get(root, "pid_start");
	if (pid_start && ps && ps->kind == JSONREAD_NUMBER && ps->number > 0) {
		*pid_start = (uint64_t)ps->number;
	}
	const struct jsonread_node *list = jsonread_get(root, "counters");
	for (size_t i = 0; list && list->kind == JSONREAD_ARRAY && i < list->n; i++) {
		const char *kind = jsonread_string(jsonread_get(list->items[i], "kind"));
		const char *key = jsonread_string(jsonread_get(list->items[i], "key"));
		const char *path = jsonread_string(jsonread_get(list->items[i], "path"));
		const char *t = jsonread_string(jsonread_get(list->items[i], "text"));
		if (!kind || !key || !path || !t) {
			continue;
		}
		enum counters_snap_kind k;
		if (counters_snap_kind_parse(kind, &k)) {
			counters_snapshot_add(s, k, xstrdup(key), xstrdup(path), xstrdup(t));
		}
	}
	bool good = root != NULL;
	jsonread_node_free(root);
	return good;
}

/* --- figures at a run's end ---------------------------------------------------------------- */

static enum counters_format snap_format(enum counters_snap_kind kind) {
	return kind == COUNTERS_SNAP_CPUFREQ   ? COUNTERS_FORMAT_CPUFREQ
	       : kind == COUNTERS_SNAP_DEVFREQ ? COUNTERS_FORMAT_DEVFREQ
					       : COUNTERS_FORMAT_COOLING;
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* @v to @digits decimal places, the double nearest that decimal (no float noise in the JSON). */
static double rounded(double v, int digits) {
	double step = pow(10, -digits);
	return isfinite(v) ? stats_value(llround(v / step), step) : v;
}

/* Energy: a counter's delta, else the integrated power, else none. */
struct energy {
	double joules, coverage;
	const char *method;
	char *channel;
};

static void energy_of(struct run *run, const struct counters_snapshot *start,
		      const struct counters_snapshot *stop, int64_t end_ms, int64_t interval_ms,
		      struct energy *e) {
	*e = (struct energy){.joules = NAN, .coverage = NAN};
	for (size_t i = 0; i < start->n; i++) {
		const struct counters_snap_file *a = &start->files[i];
		const struct counters_snap_file *b = a->kind == COUNTERS_SNAP_ENERGY
							     ? counters_snapshot_find(stop, a->path)
							     : NULL;
		if (!b) {
			continue;
		}
		char *end_a, *end_b;
		unsigned long long ua = strtoull(a->text, &end_a, 10);
		unsigned long long ub = strtoull(b->text, &end_b, 10);
		if (end_a == a->text || end_b == b->text) {
			continue;
		}
		enum counters_energy_method m = counters_energy_delta(ua, ub, 0, &e->joules);
		e->method = m == COUNTERS_ENERGY_DELTA ? "counter" : "counter_reset";
		e->coverage = 1;
		e->channel = xstrdup(a->key);
		return;
	}
	runsock_power_fold(run, interval_ms, (double)end_ms / 1000);
	double span_s = (double)end_ms / 1000 - (double)run->start_ms / 1000; // as integrated
	if (run->power_seen && span_s > 0) {
		e->joules = run->power_j;
		e->coverage = run->power_covered_s / span_s;
		e->method = "power_trapezoid";
		e->channel = run->power_key ? xstrdup(run->power_key) : NULL;
	}
}

/* A clock's hardware maximum in Hz: cpufreq's cpuinfo_max_freq (kHz), or the highest of a devfreq
 * device's available_frequencies (Hz). 0 when the kernel says neither; *from names the file. */
static int64_t hw_max_hz(int root_fd, const char *key, const char **from) {
	int64_t top = 0;
	*from = NULL;
	if (strncmp(key, "cpufreq/", 8) == 0) {
		char *path = xasprintf("devices/system/cpu/cpufreq/%s/cpuinfo_max_freq", key + 8);
		int64_t khz;
		if (sysfs_read_int(root_fd, path, &khz) == 0 && khz > 0) {
			top = khz * 1000;
			*from = "cpuinfo_max_freq";
		}
		free(path);
	} else if (strncmp(key, "devfreq/", 8) == 0) {
		char *path = xasprintf("class/devfreq/%s/available_frequencies", key + 8);
		char *text = sysfs_read_alloc(root_fd, path, FILE_MAX);
		for (char *p = text, *end; p && *p; p = end) {
			long long hz = strtoll(p, &end, 10);
			if (end == p) {
				break; // not a number: the list ends here
			}
			top = hz > top ? hz : top;
		}
		*from = top > 0 ? "available_frequencies" : NULL;
		free(text);
		free(path);
	}
	return top;
}

/* "max_hz" (and where it came from) and the share of @total_ms spent below it. */
static void below_max_json(struct json *j, int64_t max_hz, const char *from, int64_t below_ms,
			   int64_t total_ms) {
	json_field_int(j, "max_hz", max_hz);
	json_field_string(j, "max_hz_from", from);
	json_field_double(j, "below_max_share",
			  total_ms > 0 ? (double)below_ms / (double)total_ms : NAN);
}

/*
 * "cooling": the time any cooling device was active (its bounds over the devices' residencies),
 * and each capping device's own active time with the frequency domain it caps
 * ("devices": [{"key", "domain", "active_s"}], as throttlescan maps a device to its domain): a
 * run's throttled time where the kernel counted it (runs-throttle.c).
 */
static void cooling_json(struct json *j, int root_fd, const struct counters_residency *cool,
			 const char *const *keys, size_t n_cool) {
	json_key(j, "cooling");
	if (n_cool == 0) {
		json_null(j);
		return;
	}
	int64_t low, high;
	counters_cooling_any(cool, n_cool, &low, &high);
	json_object_begin(j);
	json_field_string(j, "method", "time_in_state_ms");
	json_field_fixed(j, "active_s_low", (double)low / 1000, 3);
	json_field_fixed(j, "active_s_high", (double)high / 1000, 3);
	struct throttlescan *ts = throttlescan_create(root_fd);
	struct throttle_input *in = xcalloc(1, sizeof(*in));
	throttlescan_read(ts, in, NULL);
	json_key(j, "devices");
	json_array_begin(j);
	for (size_t i = 0; i < n_cool; i++) {
		const char *hash = strrchr(keys[i], '#');
		int dev = hash ? atoi(hash + 1) : -1;
		for (size_t c = 0; c < in->n_cdevs; c++) {
			const struct throttle_cdev_reading *cd = &in->cdevs[c];
			if (cd->dev != dev || !cd->caps || !cd->domain[0]) {
				continue;
			}
			json_object_begin(j);
			json_field_string(j, "key", keys[i]);
			json_field_string(j, "domain", cd->domain);
			json_field_fixed(j, "active_s", (double)cool[i].active_ms / 1000, 3);
			json_object_end(j);
		}
	}
	json_array_end(j);
	json_object_end(j);
	free(in);
	throttlescan_destroy(ts);
}

static void residency_json(struct json *j, int root_fd, const struct run *run,
			   const struct counters_snapshot *start,
			   const struct counters_snapshot *stop) {
	json_key(j, "residency");
	json_object_begin(j);
	struct counters_residency *cool = NULL;
	const char **cool_keys = NULL;
	size_t n_cool = 0;
	const char **counted = NULL; // keys answered by a kernel counter
	size_t n_counted = 0;
	for (size_t i = 0; i < start->n; i++) {
		const struct counters_snap_file *a = &start->files[i];
		if (a->kind == COUNTERS_SNAP_ENERGY) {
			continue;
		}
		const struct counters_snap_file *b = counters_snapshot_find(stop, a->path);
		struct counters_table ta = {0}, tb = {0};
		struct counters_residency res = {0};
		int rc = b ? counters_parse(snap_format(a->kind), a->text, &ta) : -ENOENT;
		rc = rc == 0 ? counters_parse(snap_format(a->kind), b->text, &tb) : rc;
		rc = rc == 0 ? counters_residency(&ta, &tb, &res) : rc;
		counters_table_finish(&ta);
		counters_table_finish(&tb);
		if (a->kind == COUNTERS_SNAP_COOLING) {
			if (rc == 0) {
				cool = xrealloc(cool, (n_cool + 1) * sizeof(*cool));
				cool_keys = xrealloc(cool_keys, (n_cool + 1) * sizeof(*cool_keys));
				cool_keys[n_cool] = a->key;
				cool[n_cool++] = res;
			}
			continue;
		}
		if (rc != 0) {
			continue; // the fast samples stand in, below
		}
		counted = xrealloc(counted, (n_counted + 1) * sizeof(*counted));
		counted[n_counted++] = a->key;
		json_key(j, a->key);
		json_object_begin(j);
		json_field_string(j, "method",
				  a->kind == COUNTERS_SNAP_CPUFREQ ? "time_in_state"
								   : "trans_stat");
		{
			json_key(j, "seconds");
			json_object_begin(j);
			for (size_t k = 0; k < res.n; k++) {
				char hz[32];
				snprintf(hz, sizeof(hz), "%" PRId64, res.levels[k].level);
				json_field_fixed(j, hz, (double)res.levels[k].time_ms / 1000, 3);
			}
			json_object_end(j);
			// Against the hardware's maximum, not the table's top: a clock held at
			// 300 MHz of 1 GHz all run long was below it all run long.
			const char *from;
			int64_t top = hw_max_hz(root_fd, a->key, &from);
			int64_t below = 0;
			for (size_t k = 0; top > 0 && k < res.n; k++) {
				below += res.levels[k].level < top ? res.levels[k].time_ms : 0;
			}
			below_max_json(j, top > 0 ? top : res.top_level, from ? from : "table",
				       top > 0 ? below : res.below_top_ms, res.total_ms);
		}
		json_object_end(j);
		counters_residency_finish(&res);
	}
	// No counter (no CONFIG_CPU_FREQ_STAT, "Not Supported.", a reset): the fast samples, each
	// interval at the frequency it started with, against the hardware maximum (the highest
	// frequency seen when the kernel tells none).
	for (size_t i = 0; i < run->n_freq; i++) {
		const struct freq *f = &run->freq[i];
		bool done = false;
		for (size_t k = 0; k < n_counted && !done; k++) {
			done = strcmp(counted[k], f->key) == 0;
		}
		if (done) {
			continue;
		}
		json_key(j, f->key);
		json_object_begin(j);
		json_field_string(j, "method", f->n > 0 ? "fast_samples" : "unavailable");
		int64_t seen = 0, total = 0, below = 0;
		for (size_t k = 0; k < f->n; k++) {
			seen = f->hz[k] > seen ? f->hz[k] : seen;
			total += f->ms[k];
		}
		const char *from;
		int64_t top = hw_max_hz(root_fd, f->key, &from);
		if (top <= 0) {
			top = seen;
			from = "highest seen";
		}
		json_key(j, "seconds");
		json_object_begin(j);
		for (size_t k = 0; k < f->n; k++) {
			char hz[32];
			snprintf(hz, sizeof(hz), "%" PRId64, f->hz[k]);
			json_field_fixed(j, hz, (double)f->ms[k] / 1000, 3);
			below += f->hz[k] < top ? f->ms[k] : 0;
		}
		json_object_end(j);
		json_field_int(j, "max_hz_seen", seen);
		below_max_json(j, top, from, below, total);
		json_object_end(j);
	}
	free(counted);
	json_object_end(j);
	cooling_json(j, root_fd, cool, cool_keys, n_cool);
	for (size_t i = 0; i < n_cool; i++) {
		counters_residency_finish(&cool[i]);
	}
	free(cool);
	free(cool_keys);
}

/* One heat channel's stored fast samples, for its p95. */
struct heat_values {
	int64_t channel_id; // -1 = not stored
	double resolution;
	double *v;
	size_t n, cap;
};

struct heat_scan {
	struct heat_values *hv;
	size_t n;
};

static int heat_collect(void *ctx, const struct store_run_sample *sample) {
	struct heat_scan *hs = ctx;
	for (size_t k = 0; k < hs->n; k++) {
		struct heat_values *h = &hs->hv[k];
		if (h->channel_id == sample->channel_id) {
			h->v = xgrow(h->v, &h->cap, h->n + 1, sizeof(*h->v));
			h->v[h->n++] = (double)sample->q * h->resolution;
		}
	}
	return 0;
}

/*
 * The type-7 p95 of each heat channel of @run over its stored fast samples from its first
 * sample of this daemon's to @end_ms: read back at the end, so an active run holds none of
 * them. p95[k] is NAN for a channel the store does not keep.
 */
static void heat_p95(struct runsock *rs, const struct run *run, int64_t end_ms, double *p95) {
	struct heat_scan hs = {.hv = xcalloc(run->n_heat ? run->n_heat : 1, sizeof(*hs.hv)),
			       .n = run->n_heat};
	struct store_channel *list = NULL;
	size_t n = 0;
	bool known =
		rs->store && run->first_sample_ms > 0 && store_channels(rs->store, &list, &n) == 0;
	for (size_t k = 0; k < run->n_heat; k++) {
		hs.hv[k].channel_id = -1;
		for (size_t i = 0; known && i < n; i++) {
			if (strcmp(list[i].ch.key, run->heat[k].key) == 0) {
				hs.hv[k].channel_id = list[i].id;
				hs.hv[k].resolution = list[i].ch.resolution;
			}
		}
	}
	store_channels_free(list, n);
	if (known && store_run_samples_scan(rs->store, run->first_sample_ms, end_ms + 1,
					    heat_collect, &hs) < 0) {
		log_warn("runs: run %" PRId64 ": the fast samples could not be read back for "
			 "the p95",
			 run->id);
	}
	for (size_t k = 0; k < run->n_heat; k++) {
		struct heat_values *h = &hs.hv[k];
		qsort(h->v, h->n, sizeof(*h->v), cmp_double);
		p95[k] = h->n > 0 ? runstats_quantile_sorted(h->v, h->n, 95) : NAN;
		free(h->v);
	}
	free(hs.hv);
}

/* --- load: the busy shares over the run's fast samples ----------------------------------- */

/* The cpufreq policies under @root_fd as clusters of their CPUs: related_cpus, else
 * affected_cpus, as the cpufreq source reads them. */
static void load_clusters(int root_fd, struct runload *l) {
	char **names = source_list_dir(root_fd, "devices/system/cpu/cpufreq", "policy");
	for (size_t i = 0; names && names[i]; i++) {
		static const char *const files[] = {"related_cpus", "affected_cpus"};
		bool has[RUNLOAD_CPUS_MAX], good = false;
		for (size_t f = 0; f < 2 && !good; f++) {
			char *path =
				xasprintf("devices/system/cpu/cpufreq/%s/%s", names[i], files[f]);
			char *text = sysfs_read_alloc(root_fd, path, FILE_MAX);
			memset(has, 0, sizeof(has));
			good = text && runload_parse_cpus(text, has);
			free(text);
			free(path);
		}
		if (good) {
			runload_add_cluster(l, names[i], has);
		}
	}
	source_free_names(names);
}

/* The store's channels by id, to name the fast samples read back. */
struct load_scan {
	struct runload *l;
	struct store_channel *list;
	size_t n;
};

static int load_collect(void *ctx, const struct store_run_sample *sample) {
	struct load_scan *ls = ctx;
	for (size_t i = 0; i < ls->n; i++) {
		if (ls->list[i].id == sample->channel_id) {
			const struct channel *ch = &ls->list[i].ch;
			runload_add(ls->l, sample->ts_ms, ch->key,
				    stats_value(sample->q, ch->resolution));
			break;
		}
	}
	return 0;
}

/* "load": the busy shares over @run's stored fast samples from its first sample of this
 * daemon's to @end_ms (runload.h). */
static void load_json(struct runsock *rs, const struct run *run, int64_t end_ms, struct json *j) {
	struct load_scan ls = {.l = runload_create()};
	if (rs->store && run->first_sample_ms > 0 &&
	    store_channels(rs->store, &ls.list, &ls.n) == 0) {
		load_clusters(rs->sysfs_fd, ls.l);
		if (store_run_samples_scan(rs->store, run->first_sample_ms, end_ms + 1,
					   load_collect, &ls) < 0) {
			log_warn("runs: run %" PRId64 ": the fast samples could not be read back "
				 "for the load",
				 run->id);
		}
	}
	json_key(j, "load");
	runload_write_json(ls.l, j,
			   "fast samples of the load channels (CPUs: the busy ticks between two "
			   "fast samples; NPU cores: the driver's load window); a cluster is a "
			   "cpufreq policy's CPUs, their mean at each fast sample; p95 type 7");
	store_channels_free(ls.list, ls.n);
	runload_destroy(ls.l);
}

/* The figures JSON; *temp_max the highest temperature seen on a channel of runs.peak_channels
 * (NAN = none). */
static void figures_json(struct runsock *rs, const struct run *run, int64_t end_ms,
			 const struct counters_snapshot *start,
			 const struct counters_snapshot *stop, const struct energy *e,
			 const double *p95, struct buf *out, double *temp_max) {
	const struct config *cfg = rs->cfg;
	int root_fd = rs->sysfs_fd;
	struct json j;
	json_init(&j, out, false);
	json_object_begin(&j);
	residency_json(&j, root_fd, run, start, stop);
	json_key(&j, "energy");
	json_object_begin(&j);
	json_field_double(&j, "joules", rounded(e->joules, 6));
	json_field_string(&j, "method", e->method);
	json_field_double(&j, "coverage", e->coverage);
	json_field_string(&j, "channel", e->channel);
	json_object_end(&j);
	json_key(&j, "heat");
	json_object_begin(&j);
	*temp_max = NAN;
	const struct heat *peak = NULL;
	for (size_t i = 0; i < run->n_heat; i++) {
		const struct heat *h = &run->heat[i];
		if (!config_peak_channel(cfg, h->key)) {
			continue; // a capacitor's thermocouple is no zone of the board
		}
		json_key(&j, h->key);
		json_object_begin(&j);
		json_field_double(&j, "max_c", rounded(h->max, 3));
		json_field_time_ms(&j, "max_at", h->max_ms);
		json_field_double(&j, "p95_c", rounded(p95[i], 3));
		json_field_double(&j, "mean_c", rounded(h->sum / (double)h->n, 3));
		json_field_int(&j, "samples", (int64_t)h->n);
		if (h->n_trips > 0) {
			json_key(&j, "above_passive_trips");
			json_array_begin(&j);
			for (size_t k = 0; k < h->n_trips; k++) {
				json_object_begin(&j);
				json_field_double(&j, "trip_c", h->trip_c[k]);
				json_field_fixed(&j, "seconds", (double)h->above_ms[k] / 1000, 3);
				json_object_end(&j);
			}
			json_array_end(&j);
		}
		json_object_end(&j);
		if (!peak || h->max > peak->max) {
			peak = h;
		}
	}
	json_object_end(&j);
	*temp_max = peak ? rounded(peak->max, 3) : NAN; // m°C: the zones' step
	json_key(&j, "peak");
	if (peak) {
		json_object_begin(&j);
		json_field_string(&j, "channel", peak->key);
		json_field_double(&j, "max_c", rounded(peak->max, 3));
		json_field_time_ms(&j, "max_at", peak->max_ms);
		json_object_end(&j);
	} else {
		json_null(&j);
	}
	json_field_string(
		&j, "heat_method",
		"fast samples of the channels of runs.peak_channels: type 7 percentiles "
		"over the stored ones; time above a trip counts each interval that starts "
		"above it");
	json_key(&j, "memory");
	json_object_begin(&j);
	json_field_double(&j, "available_min_bytes", run->mem_avail_min);
	json_field_double(&j, "swap_used_max_bytes", run->swap_used_max);
	json_object_end(&j);
	load_json(rs, run, end_ms, &j);
	json_field_int(&j, "fast_samples", (int64_t)run->samples);
	// Heat, memory, fallback residency and integrated power cover the samples from here on:
	// the run's start, or the daemon's restart in its middle.
	json_field_time_ms_or_null(&j, "fast_samples_from", run->first_sample_ms > 0,
				   run->first_sample_ms);
	json_object_end(&j);
}

/* The start counters of open run @id as stored: an active run keeps none in memory. */
void runsock_start_snapshot(struct runsock *rs, int64_t id, struct counters_snapshot *s) {
	char *text = NULL;
	if (rs->store && store_run_start_snapshot(rs->store, id, &text) == 0 && text) {
		runsock_snapshot_parse(text, s, NULL);
	}
	free(text);
}

/* Ends @run (taken out of the list by the caller) and frees it. */
int runsock_run_end(struct runsock *rs, struct run *run, struct store_run_end *end,
		    struct buf *summary) {
	runsock_flush_batch(rs); // the samples before the end's figures, which read them back
	struct counters_snapshot start = {0}, stop = {0};
	runsock_start_snapshot(rs, run->id, &start);
	counters_snapshot_read(rs->sysfs_fd, &stop);
	struct energy e;
	energy_of(run, &start, &stop, end->end_ms, rs->cfg->runs.interval_ms, &e);
	double *p95 = xcalloc(run->n_heat ? run->n_heat : 1, sizeof(*p95));
	heat_p95(rs, run, end->end_ms, p95);
	struct buf figures = {0};
	double temp_max;
	figures_json(rs, run, end->end_ms, &start, &stop, &e, p95, &figures, &temp_max);
	free(p95);
	end->energy_j = rounded(e.joules, 6); // uJ: the hwmon energy counters' step
	end->energy_method = e.method;
	end->energy_coverage = e.coverage;
	end->temp_max_c = temp_max;
	end->figures = figures.data;
	int rc = rs->store ? store_run_end(rs->store, run->id, end) : -EAGAIN;
	if (rc == 0 && summary) {
		// The stop's reply is the run as `runs show` and the API give it: read back, one
		// writer (runs.c), so tags and origin are there too.
		int got = runs_get_json(rs->store, run->id, summary);
		if (got < 0) {
			log_warn("runs: could not read run %" PRId64 " back for its reply: %s",
				 run->id, strerror(-got));
			buf_printf(summary, "{\"id\":%" PRId64 "}", run->id);
		}
	}
	if (rc == 0) {
		log_write(run->simulated ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO,
			  "runs: run %" PRId64 " (%s) ended: %s", run->id, run->label,
			  run_status_name(end->status));
	}
	buf_finish(&figures);
	free(e.channel);
	counters_snapshot_finish(&start);
	counters_snapshot_finish(&stop);
	return rc;
}

void runsock_run_remove(struct runsock *rs, size_t at) {
	memmove(&rs->runs[at], &rs->runs[at + 1], (rs->n_runs - at - 1) * sizeof(*rs->runs));
	rs->n_runs--;
	rs->trim_due = true;
}
