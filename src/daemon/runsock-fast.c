/*
 * A run's fast samples on the loop: the fast sampler's cycle, the batch written to the store,
 * the running heat, clock and power figures of each active run.
 */
#include "runsock-internal.h"

/* The passive trip points from a thermal channel's meta ({"trips": [{"type", "temp"}]}). */
static void heat_trips(struct heat *h, const char *meta) {
	struct jsonread_error err;
	size_t len = meta ? strlen(meta) : 0;
	struct jsonread_node *root = meta ? jsonread_parse(meta, len, len, &err) : NULL;
	const struct jsonread_node *trips = jsonread_get(root, "trips");
	for (size_t i = 0;
	     trips && trips->kind == JSONREAD_ARRAY && i < trips->n && h->n_trips < HEAT_TRIPS_MAX;
	     i++) {
		const char *type = jsonread_string(jsonread_get(trips->items[i], "type"));
		const struct jsonread_node *temp = jsonread_get(trips->items[i], "temp");
		if (type && temp && temp->kind == JSONREAD_NUMBER && strcmp(type, "passive") == 0) {
			h->trip_c[h->n_trips++] = temp->number;
		}
	}
	jsonread_node_free(root);
}

void runsock_flush_batch(struct runsock *rs) {
	if (rs->n_batch == 0) {
		return;
	}
	struct store_run_instant samples[RUNSOCK_BATCH];
	for (size_t i = 0; i < rs->n_batch; i++) {
		samples[i] = (struct store_run_instant){.ts_ms = rs->batch[i].ts_ms,
							.n = rs->batch[i].n,
							.channels = rs->batch[i].channels,
							.readings = rs->batch[i].readings};
	}
	if (rs->store && store_run_samples_put(rs->store, samples, rs->n_batch) < 0) {
		log_warn("runs: %zu fast samples were not stored", rs->n_batch);
	}
	for (size_t i = 0; i < rs->n_batch; i++) {
		struct pending *p = &rs->batch[i];
		if (p->owns_channels) {
			channel_list_free(p->channels, p->n);
		}
		free(p->readings);
	}
	rs->n_batch = 0;
}

/* Adds the sample @ch/@rd (@n channels) at @ts_ms to the batch, which has room for it. */
static void batch_add(struct runsock *rs, int64_t ts_ms, const struct channel *ch,
		      const struct reading *rd, size_t n) {
	const struct pending *prev = rs->n_batch > 0 ? &rs->batch[rs->n_batch - 1] : NULL;
	struct pending *p = &rs->batch[rs->n_batch++];
	*p = (struct pending){.ts_ms = ts_ms, .n = n};
	if (prev && channel_list_same_keys(prev->channels, prev->n, ch, n)) {
		p->channels = prev->channels; // freed with the sample that owns them
	} else {
		p->owns_channels = true;
		p->channels = channel_list_copy(ch, n);
	}
	p->readings = xcalloc(n ? n : 1, sizeof(*p->readings));
	if (n > 0) {
		memcpy(p->readings, rd, n * sizeof(*rd));
	}
}

/* The automatic board power: the first power*_input of an ina2xx-style hwmon chip. */
static const char *auto_power_path(struct runsock *rs) {
	if (rs->auto_power_probed) {
		return rs->auto_power;
	}
	rs->auto_power_probed = true;
	char **names = source_list_dir(rs->sysfs_fd, "class/hwmon", "hwmon");
	for (char **p = names; p && *p && !rs->auto_power; p++) {
		char *name_path = xasprintf("class/hwmon/%s/name", *p);
		char *chip = sysfs_read_alloc(rs->sysfs_fd, name_path, CHIP_NAME_MAX);
		free(name_path);
		if (chip && strncmp(chip, "ina", 3) == 0) {
			char *path = xasprintf("class/hwmon/%s/power1_input", *p);
			if (faccessat(rs->sysfs_fd, path, R_OK, 0) == 0) {
				rs->auto_power = path;
			} else {
				free(path);
			}
		}
		free(chip);
	}
	source_free_names(names);
	return rs->auto_power;
}

/* Board power now in watts, and the channel it came from; NAN when unknown. */
static double power_now(struct runsock *rs, const struct channel *ch, const struct reading *rd,
			size_t n, const char **key) {
	const char *want = rs->cfg->runs.power_channel;
	if (want) {
		*key = want;
		for (size_t i = 0; i < n; i++) {
			if (strcmp(ch[i].key, want) == 0 && rd[i].err == 0) {
				return rd[i].value;
			}
		}
		return NAN;
	}
	const char *path = auto_power_path(rs);
	*key = path;
	// each fast sample: a number in a buffer on the stack, not a page-sized allocation
	char text[64];
	double w = NAN;
	if (path && sysfs_read_text(rs->sysfs_fd, path, text, sizeof(text)) >= 0) {
		char *end;
		long long uw = strtoll(text, &end, 10);
		if (end != text) {
			w = counters_power_hwmon_w(uw);
		}
	}
	return w;
}

void runsock_freq_add(struct run *run, const char *key, int64_t hz, int64_t now_ms) {
	struct freq *f = NULL;
	for (size_t k = 0; k < run->n_freq && !f; k++) {
		f = strcmp(run->freq[k].key, key) == 0 ? &run->freq[k] : NULL;
	}
	if (!f) {
		run->freq = xrealloc(run->freq, (run->n_freq + 1) * sizeof(*run->freq));
		f = &run->freq[run->n_freq++];
		*f = (struct freq){.key = xstrdup(key)};
	}
	if (f->seen && !(now_ms > f->last_ms)) {
		// Taken before the last (as runsock_power_add()): the span from it to the next
		// sample is counted already.
		return;
	}
	if (f->seen) {
		size_t at = 0;
		while (at < f->n && f->hz[at] != f->last_hz) {
			at++;
		}
		if (at == f->n) {
			f->hz = xgrow(f->hz, &f->cap_hz, f->n + 1, sizeof(*f->hz));
			f->ms = xgrow(f->ms, &f->cap_ms, f->n + 1, sizeof(*f->ms));
			f->hz[at] = f->last_hz;
			f->ms[at] = 0;
			f->n++;
		}
		f->ms[at] += now_ms - f->last_ms;
	}
	f->seen = true;
	f->last_hz = hz;
	f->last_ms = now_ms;
}

/*
 * Integrates the power samples held (over the run from its start on: they are all inside it)
 * and keeps the last, which pairs with the next sample: the chunks add up to the whole.
 */
void runsock_power_fold(struct run *run, int64_t interval_ms, double upto_s) {
	struct counters_integral in;
	if (run->n_power > 1 &&
	    counters_integrate_power(run->power, run->n_power, (double)run->start_ms / 1000, upto_s,
				     ENERGY_MAX_S * (double)interval_ms / 1000, &in) == 0) {
		run->power_j += in.joules;
		run->power_covered_s += in.covered_s;
		run->power_seen = true;
	}
	if (run->n_power > 0) {
		run->power[0] = run->power[run->n_power - 1];
		run->n_power = 1;
	}
}

void runsock_power_add(struct run *run, int64_t interval_ms, double t_s, double watts) {
	if (run->n_power > 0 && !(t_s > run->power[run->n_power - 1].t_s)) {
		// A sample of the loop taken late, then one taken on time, or a wall clock stepped
		// back: paired with the next it would integrate a span folded already.
		return;
	}
	if (run->n_power == POWER_CHUNK) {
		runsock_power_fold(run, interval_ms, run->power[POWER_CHUNK - 1].t_s);
	}
	run->power[run->n_power++] = (struct counters_power_sample){.t_s = t_s, .power_w = watts};
}

/* One fast sample: stored (in the next batch) and added to every active run. */
void runsock_fast_sample(struct runsock *rs, int64_t now_ms, int64_t mono_ms) {
	if (!rs->sampler) {
		rs->sampler = sampler_create(rs->cfg);
		if (!rs->sampler) {
			return;
		}
	}
	const struct channel *ch;
	const struct reading *rd;
	size_t n = sampler_read(rs->sampler, mono_ms / 1000, &ch, &rd);
	if (rs->n_batch > 0 && rs->batch[rs->n_batch - 1].ts_ms >= now_ms) {
		return; // the same instant (a start right after a sample)
	}
	batch_add(rs, now_ms, ch, rd, n);
	const char *power_key = NULL;
	double watts = power_now(rs, ch, rd, n, &power_key);
	for (size_t r = 0; r < rs->n_runs; r++) {
		struct run *run = rs->runs[r];
		run->samples++;
		if (run->first_sample_ms == 0) {
			run->first_sample_ms = now_ms;
		}
		for (size_t i = 0; i < n; i++) {
			if (rd[i].err != 0) {
				continue;
			}
			if (ch[i].kind == CHANNEL_KIND_TEMPERATURE) {
				struct heat *h = NULL;
				for (size_t k = 0; k < run->n_heat && !h; k++) {
					h = strcmp(run->heat[k].key, ch[i].key) == 0 ? &run->heat[k]
										     : NULL;
				}
				if (!h) {
					// Grown one at a time: a run holds no slack.
					run->heat = xrealloc(run->heat, (run->n_heat + 1) *
										sizeof(*run->heat));
					h = &run->heat[run->n_heat++];
					*h = (struct heat){.key = xstrdup(ch[i].key),
							   .max = -INFINITY};
					heat_trips(h, ch[i].meta);
				}
				// Time above a trip: each interval counts when it starts above
				// (left point of the fast samples).
				for (size_t k = 0; h->n > 0 && k < h->n_trips; k++) {
					if (h->last_v > h->trip_c[k]) {
						h->above_ms[k] += now_ms - h->last_ms;
					}
				}
				h->last_v = rd[i].value;
				h->last_ms = now_ms;
				h->n++;
				h->sum += rd[i].value;
				if (rd[i].value > h->max) {
					h->max = rd[i].value;
					h->max_ms = now_ms;
				}
			} else if (ch[i].kind == CHANNEL_KIND_FREQUENCY &&
				   (strcmp(ch[i].source, "cpufreq") == 0 ||
				    strcmp(ch[i].source, "devfreq") == 0)) {
				runsock_freq_add(run, ch[i].key, llround(rd[i].value), now_ms);
			} else if (strcmp(ch[i].key, "meminfo/available") == 0) {
				run->mem_avail_min =
					isnan(run->mem_avail_min) ||
							rd[i].value < run->mem_avail_min
						? rd[i].value
						: run->mem_avail_min;
			} else if (strcmp(ch[i].key, "meminfo/swap_used") == 0) {
				run->swap_used_max =
					isnan(run->swap_used_max) ||
							rd[i].value > run->swap_used_max
						? rd[i].value
						: run->swap_used_max;
			}
		}
		if (power_key) {
			if (!run->power_key) {
				run->power_key = xstrdup(power_key);
			}
			// Wall time, like the run's bounds (ms since epoch, as seconds).
			runsock_power_add(run, rs->cfg->runs.interval_ms, (double)now_ms / 1000,
					  watts);
		}
	}
	rs->next_sample_mono = mono_ms + rs->cfg->runs.interval_ms;
	if (rs->n_batch == 1) {
		rs->batch_mono = mono_ms;
	}
	if (rs->n_batch == RUNSOCK_BATCH || mono_ms - rs->batch_mono >= RUNSOCK_BATCH_MAX_MS) {
		runsock_flush_batch(rs);
	}
}
