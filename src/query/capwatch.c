/* The daemon's running capacitor damage (capwatch.h), replayed through capreplay.c. */
#include "capwatch.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "capreplay.h"
#include "log.h"
#include "store.h"
#include "xalloc.h"

#define STATE_PREFIX    "lifetime/"
#define PERSIST_EVERY_S 3600

struct watched {
	const struct capacitor_config *cc; // borrowed
	struct lifetime_params p;
	char *state_key;
	char *fingerprint;
	struct lifetime_acc acc;
	struct lifetime_spacing sp; // the cycles added so far
	size_t hint;                // index of the sensor in the last cycle's channels
	// A measured ripple on an ambient sensor: each cycle's rise from the current beside it.
	bool joint_on;
	struct capreplay_joint joint;
	size_t load_hint;
};

struct capwatch {
	const struct config *cfg;
	struct store *store;
	int64_t fallback_s; // the configured interval, for rollups when no spacing is known
	struct watched *caps;
	size_t n;
	int64_t last_persist; // s since epoch, 0 = never
	bool dirty;
	int64_t generation; // store_history_generation() the sums were built on
};

static char *state_text(const struct watched *w, int64_t generation) {
	struct buf b;
	buf_init(&b);
	buf_printf(&b, "%s\nlast=%" PRId64 " spacing=%" PRId64 " dt=%" PRId64 " gen=%" PRId64 "\n",
		   w->fingerprint, w->sp.prev_ts, w->sp.prev_spacing, w->sp.prev_dt, generation);
	lifetime_acc_format(&w->acc, &b);
	return buf_steal(&b);
}

/*
 * Restores a persisted state written for the same rating over the same stored history (no import
 * since: @generation); false leaves @w fresh.
 */
static bool state_restore(struct watched *w, const char *text, int64_t generation) {
	size_t fp_len = strlen(w->fingerprint);
	if (strncmp(text, w->fingerprint, fp_len) != 0 || strncmp(text + fp_len, "\nlast=", 6)) {
		return false;
	}
	long long last, spacing, dt, gen;
	int used = 0;
	if (sscanf(text + fp_len + 6, "%lld spacing=%lld dt=%lld gen=%lld\n%n", &last, &spacing,
		   &dt, &gen, &used) != 4 ||
	    used == 0 || gen != generation) {
		return false;
	}
	struct lifetime_acc acc;
	if (!lifetime_acc_parse(&acc, text + fp_len + 6 + used)) {
		return false;
	}
	w->acc = acc;
	w->sp = (struct lifetime_spacing){last, spacing, dt};
	return true;
}

/* The sensor the part ages at. */
static const char *drive_sensor(const struct watched *w) {
	return lifetime_sensor_of(w->cc, w->p.basis);
}

/*
 * A measured ripple on an ambient sensor: the ambient and the current channel, as the report
 * reads them. False (logged) when the current is not stored: then nothing ages the part.
 */
static bool joint_channels(struct watched *w, const struct store_channel *ambient,
			   const struct store_channel *chans, size_t n_chans) {
	const char *load = lifetime_load_of(w->cc);
	const struct store_channel *lc = capreplay_match_channel(chans, n_chans, load);
	const char *unit = lc && lc->ch.unit ? lc->ch.unit : "none";
	if (!lc || (strcmp(unit, "amperes") != 0 && strcmp(unit, "watts") != 0)) {
		log_warn("capacitor %s: ripple_from channel %s is %s: its rise is unknown",
			 w->cc->name, load, lc ? "not a current or a power" : "not stored");
		return false;
	}
	struct capreplay_joint *j = &w->joint;
	*j = (struct capreplay_joint){.load_ripple = true,
				      .load_watts = strcmp(unit, "watts") == 0};
	for (int r = 0; r < CAPREPLAY_N_ROLES; r++) {
		j->ids[r] = -1;
	}
	j->ids[CAPREPLAY_AMBIENT] = ambient->id;
	j->res[CAPREPLAY_AMBIENT] = ambient->ch.resolution;
	j->ids[CAPREPLAY_LOAD] = lc->id;
	j->res[CAPREPLAY_LOAD] = lc->ch.resolution;
	return true;
}

/* Adds the stored cycles after each capacitor's last counted one (all of them when fresh). */
static int catch_up(struct capwatch *cw) {
	struct store *store = cw->store;
	struct store_channel *chans = NULL;
	size_t n_chans = 0;
	int rc = store_channels(store, &chans, &n_chans);
	if (rc < 0) {
		log_error("lifetime: could not read the channel list: %s", strerror(-rc));
		return rc;
	}
	struct capreplay_target *targets = xcalloc(cw->n ? cw->n : 1, sizeof(*targets));
	int64_t from = INT64_MAX;
	for (size_t i = 0; i < cw->n; i++) {
		struct watched *w = &cw->caps[i];
		const struct store_channel *ch =
			capreplay_match_channel(chans, n_chans, drive_sensor(w));
		if (ch && !capreplay_is_celsius(ch->ch.unit)) {
			log_warn("capacitor %s: sensor %s is not a temperature (unit %s)",
				 w->cc->name, ch->ch.key, ch->ch.unit ? ch->ch.unit : "none");
			ch = NULL;
		}
		if (ch && w->joint_on && !joint_channels(w, ch, chans, n_chans)) {
			ch = NULL;
		}
		targets[i] = (struct capreplay_target){
			.p = &w->p,
			.acc = &w->acc,
			.channel_id = ch ? ch->id : -1,
			.resolution = ch ? ch->ch.resolution : 0,
			.sp = &w->sp,
			.joint = ch && w->joint_on ? &w->joint : NULL,
		};
		int64_t start = w->sp.prev_ts == INT64_MIN ? INT64_MIN : w->sp.prev_ts + 1;
		from = start < from ? start : from;
	}
	store_channels_free(chans, n_chans);
	if (cw->n > 0 && from != INT64_MAX) {
		struct capreplay_summary caught;
		struct capreplay_info info;
		rc = capreplay_run(store, from, INT64_MAX, false, cw->fallback_s, targets, cw->n,
				   &caught, &info);
		if (rc < 0) {
			log_error("lifetime: could not catch up from the stored history: %s",
				  strerror(-rc));
			free(targets);
			return rc;
		}
		if (caught.n > 0) {
			cw->dirty = true;
			log_info("lifetime: caught up %lld stored cycles", (long long)caught.n);
		}
	}
	free(targets);
	return 0;
}

struct capwatch *capwatch_create(const struct config *cfg, struct store *store) {
	struct capwatch *cw = xcalloc(1, sizeof(*cw));
	cw->cfg = cfg;
	cw->store = store;
	cw->fallback_s = cfg->interval_ms >= 1000 ? cfg->interval_ms / 1000 : 60;
	cw->caps = xcalloc(cfg->n_capacitors ? cfg->n_capacitors : 1, sizeof(*cw->caps));
	if (store_history_generation(store, &cw->generation) < 0) {
		log_error("lifetime: could not read the stored history's generation");
		capwatch_destroy(cw);
		return NULL;
	}
	for (size_t i = 0; i < cfg->n_capacitors; i++) {
		const struct capacitor_config *cc = &cfg->capacitors[i];
		struct watched *w = &cw->caps[cw->n];
		char *err = NULL;
		if (!lifetime_params_init(&w->p, cc, &err)) {
			log_error("capacitor %s: %s; not tracked", cc->name, err);
			free(err);
			continue;
		}
		w->cc = cc;
		w->state_key = xasprintf(STATE_PREFIX "%s", cc->name);
		struct buf fp;
		buf_init(&fp);
		buf_printf(&fp, "sensor=%s ", lifetime_sensor_of(cc, w->p.basis));
		w->joint_on = w->p.ripple_measured && w->p.basis == TEMP_BASIS_AMBIENT;
		if (w->joint_on) {
			buf_printf(&fp, "current=%s ", lifetime_load_of(cc));
		}
		lifetime_params_fingerprint(&w->p, &fp);
		w->fingerprint = buf_steal(&fp);
		lifetime_acc_init(&w->acc);
		lifetime_spacing_init(&w->sp);
		cw->n++;
		char *saved = NULL;
		int rc = store_state_get(store, w->state_key, &saved);
		if (rc == 0 && saved && !state_restore(w, saved, cw->generation)) {
			log_info(
				"capacitor %s: saved damage was for another rating, sensor or stored "
				"history (an import since); recomputing from the stored history",
				cc->name);
		}
		free(saved);
	}

	if (catch_up(cw) < 0) {
		capwatch_destroy(cw);
		return NULL;
	}
	return cw;
}

/* The reading of @sensor (key, else label) in @cycle, by the hinted index first. */
static const struct reading *find_reading(const struct cycle *cycle, const char *sensor,
					  size_t *hint, const struct channel **ch) {
	if (*hint < cycle->n && strcmp(cycle->channels[*hint].key, sensor) == 0) {
		*ch = &cycle->channels[*hint];
		return &cycle->readings[*hint];
	}
	for (int by_label = 0; by_label < 2; by_label++) {
		for (size_t i = 0; i < cycle->n; i++) {
			const char *name =
				by_label ? cycle->channels[i].label : cycle->channels[i].key;
			if (name && strcmp(name, sensor) == 0) {
				*hint = i;
				*ch = &cycle->channels[i];
				return &cycle->readings[i];
			}
		}
	}
	return NULL;
}

/* A measured ripple's cycle: the ambient and the current, quantized as the store keeps them. */
static void add_joint(struct watched *w, struct capreplay_target *t, const struct cycle *cycle,
		      const struct reading *ambient, const struct channel *ach) {
	if (w->joint.ids[CAPREPLAY_LOAD] < 0) {
		return; // the current was not stored at the catch-up: nothing to pair with
	}
	const struct channel *lch = NULL;
	const struct reading *load =
		find_reading(cycle, lifetime_load_of(w->cc), &w->load_hint, &lch);
	struct capreplay_joint *j = &w->joint;
	capreplay_joint_clear(j);
	j->q[CAPREPLAY_AMBIENT] = llround(ambient->value / ach->resolution);
	j->have[CAPREPLAY_AMBIENT] = true;
	if (load && load->err == 0 && lch->resolution > 0) {
		j->q[CAPREPLAY_LOAD] = llround(load->value / lch->resolution);
		j->res[CAPREPLAY_LOAD] = lch->resolution;
		j->have[CAPREPLAY_LOAD] = true;
	}
	j->res[CAPREPLAY_AMBIENT] = ach->resolution;
	t->joint = j;
	capreplay_add_cycle(t);
}

/* An import changed older history: start the sums again from the whole stored history. */
static void recompute_if_changed(struct capwatch *cw) {
	int64_t gen;
	if (store_history_generation(cw->store, &gen) < 0 || gen == cw->generation) {
		return;
	}
	for (size_t i = 0; i < cw->n; i++) {
		lifetime_acc_init(&cw->caps[i].acc);
		lifetime_spacing_init(&cw->caps[i].sp);
	}
	cw->generation = gen;
	cw->dirty = true;
	cw->last_persist = 0; // save the new sums at once
	log_info("lifetime: the stored history changed (an import); recomputing the damage");
	if (catch_up(cw) < 0) {
		cw->generation = gen - 1; // try again with the next cycle
	}
}

void capwatch_update(struct capwatch *cw, const struct cycle *cycle) {
	if (!cw) {
		return;
	}
	recompute_if_changed(cw);
	if (cycle->clock == CLOCK_STATE_UNSYNCED) {
		return; // left out of the history by default, so out of the running sum too
	}
	for (size_t i = 0; i < cw->n; i++) {
		struct watched *w = &cw->caps[i];
		if (w->sp.prev_ts != INT64_MIN && cycle->ts <= w->sp.prev_ts) {
			continue; // counted by the catch-up already
		}
		struct capreplay_target t = {
			.p = &w->p, .acc = &w->acc, .sp = &w->sp, .cycle_ts = cycle->ts};
		t.cycle_dt = lifetime_spacing_next(&w->sp, cycle->ts, 0, NULL);
		cw->dirty = true;
		const struct channel *ch = NULL;
		const struct reading *rd = find_reading(cycle, drive_sensor(w), &w->hint, &ch);
		if (!rd || rd->err != 0 || !capreplay_is_celsius(ch->unit) ||
		    !(ch->resolution > 0)) {
			continue;
		}
		if (w->joint_on) {
			add_joint(w, &t, cycle, rd, ch);
			continue;
		}
		// Quantized exactly as the store keeps it, so the replay sees the same value.
		double temp_c = (double)llround(rd->value / ch->resolution) * ch->resolution;
		capreplay_add_sample(&t, temp_c);
	}
}

int capwatch_persist(struct capwatch *cw, int64_t now) {
	if (!cw || !cw->dirty ||
	    (cw->last_persist != 0 && now - cw->last_persist < PERSIST_EVERY_S)) {
		return 0;
	}
	int rc = store_begin(cw->store);
	if (rc < 0) {
		return rc;
	}
	for (size_t i = 0; i < cw->n; i++) {
		char *text = state_text(&cw->caps[i], cw->generation);
		rc = store_state_set(cw->store, cw->caps[i].state_key, text);
		free(text);
		if (rc < 0) {
			store_rollback(cw->store);
			log_warn("lifetime: could not save the running damage: %s", strerror(-rc));
			return rc;
		}
	}
	rc = store_commit(cw->store);
	if (rc < 0) {
		store_rollback(cw->store);
		return rc;
	}
	cw->last_persist = now;
	cw->dirty = false;
	return 0;
}

size_t capwatch_states(struct capwatch *cw, struct capstate *out, size_t max) {
	size_t n = 0;
	for (size_t i = 0; cw && i < cw->n && n < max; i++) {
		const struct watched *w = &cw->caps[i];
		struct lifetime_result r;
		lifetime_summarize(&w->p, &w->acc, w->sp.prev_ts == INT64_MIN ? 0 : w->sp.prev_ts,
				   &r);
		out[n++] = (struct capstate){
			.name = w->cc->name,
			.sensor = w->cc->sensor,
			.consumed_fraction = r.consumed_fraction,
			.consumed_total = r.consumed_total,
			.remaining_h = r.remaining_h,
			.effective_life_h = r.life_h,
			.observed_h = r.observed_h,
		};
	}
	return n;
}

void capwatch_destroy(struct capwatch *cw) {
	if (!cw) {
		return;
	}
	for (size_t i = 0; i < cw->n; i++) {
		free(cw->caps[i].state_key);
		free(cw->caps[i].fingerprint);
	}
	free(cw->caps);
	free(cw);
}
