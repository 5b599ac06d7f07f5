/*
 * The capacitors: section of the configuration (config-capacitor.c): the capacitor schema over
 * the YAML toolkit, with the parser state config.c shares with it.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config-internal.h"
#include "lifetime.h"
#include "timefmt.h"
#include "xalloc.h"
#include "yamltree.h"

struct self_heating_keys {
	const struct yamltree_node *rise_k, *current_a, *esr_ohm, *rth_k_per_w, *rated_ripple_a,
		*rated_rise_k, *ripple;
};

/*
 * self_heating: ripple: [{freq_hz, current_a, multiplier}], the ripple current per frequency
 * with the series' frequency multiplier; folded into c->current_a, the equivalent current at
 * the rated frequency, sqrt(sum (current_a / multiplier)^2).
 */
static void parse_ripple(struct parser *p, const struct yamltree_node *seq,
			 struct capacitor_config *c) {
	static const char *const keys[] = {"freq_hz", "current_a", "multiplier", NULL};
	if (!yamltree_check_sequence(&p->yt, seq, "ripple")) {
		return;
	}
	if (seq->n == 0 || seq->n > CAPACITOR_RIPPLE_MAX) {
		yamltree_error_node(&p->yt, seq, "ripple: give 1 to %d frequency components",
				    CAPACITOR_RIPPLE_MAX);
		return;
	}
	double sum = 0;
	for (size_t i = 0; i < seq->n; i++) {
		const struct yamltree_node *m = seq->items[i];
		struct capacitor_ripple *r = &c->ripple[i];
		*r = (struct capacitor_ripple){NAN, NAN, NAN};
		if (!yamltree_check_mapping(&p->yt, m, "ripple", keys)) {
			continue;
		}
		size_t given = 0; // keys present: a bad value is its own error, not a missing key
		for (size_t k = 0; k + 1 < m->n; k += 2) {
			const struct yamltree_node *key = m->items[k], *v = m->items[k + 1];
			given += yamltree_key_is(key, "freq_hz") ||
				 yamltree_key_is(key, "current_a") ||
				 yamltree_key_is(key, "multiplier");
			if (yamltree_key_is(key, "freq_hz")) {
				yamltree_get_double(&p->yt, v, "freq_hz",
						    (struct yamltree_range){0, 1e9, true},
						    &r->freq_hz);
			} else if (yamltree_key_is(key, "current_a")) {
				yamltree_get_double(&p->yt, v, "current_a",
						    (struct yamltree_range){0, 1e4, false},
						    &r->current_a);
			} else if (yamltree_key_is(key, "multiplier")) {
				yamltree_get_double(&p->yt, v, "multiplier",
						    (struct yamltree_range){0, 100, true},
						    &r->multiplier);
			}
		}
		if (given < 3) {
			yamltree_error_node(&p->yt, m,
					    "ripple: each component needs freq_hz, current_a and "
					    "multiplier (the series' factor at that frequency)");
			continue;
		}
		if (isnan(r->freq_hz) || isnan(r->current_a) || isnan(r->multiplier)) {
			continue; // a bad value, said where it is
		}
		sum += (r->current_a / r->multiplier) * (r->current_a / r->multiplier);
	}
	c->n_ripple = seq->n;
	c->current_a = sqrt(sum);
}

static void parse_self_heating(struct parser *p, const struct yamltree_node *map,
			       struct capacitor_config *c) {
	static const char *const keys[] = {
		"rise_k",         "current_a",    "esr_ohm", "rth_k_per_w",
		"rated_ripple_a", "rated_rise_k", "ripple",  NULL};
	const struct yamltree_range positive = {0, 1e6, true}, non_negative = {0, 1e6, false};
	if (!yamltree_check_mapping(&p->yt, map, "self_heating", keys)) {
		return;
	}
	struct self_heating_keys seen = {0};
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *k = map->items[i], *v = map->items[i + 1];
		if (yamltree_key_is(k, "rise_k")) {
			seen.rise_k = v;
			yamltree_get_double(&p->yt, v, "rise_k",
					    (struct yamltree_range){0, 100, false}, &c->rise_k);
		} else if (yamltree_key_is(k, "current_a")) {
			seen.current_a = v;
			yamltree_get_double(&p->yt, v, "current_a", non_negative, &c->current_a);
		} else if (yamltree_key_is(k, "esr_ohm")) {
			seen.esr_ohm = v;
			yamltree_get_double(&p->yt, v, "esr_ohm", positive, &c->esr_ohm);
		} else if (yamltree_key_is(k, "rth_k_per_w")) {
			seen.rth_k_per_w = v;
			yamltree_get_double(&p->yt, v, "rth_k_per_w", positive, &c->rth_k_per_w);
		} else if (yamltree_key_is(k, "rated_ripple_a")) {
			seen.rated_ripple_a = v;
			yamltree_get_double(&p->yt, v, "rated_ripple_a", positive,
					    &c->rated_ripple_a);
		} else if (yamltree_key_is(k, "ripple")) {
			seen.ripple = v;
			parse_ripple(p, v, c);
		} else if (yamltree_key_is(k, "rated_rise_k")) {
			seen.rated_rise_k = v;
			yamltree_get_double(&p->yt, v, "rated_rise_k",
					    (struct yamltree_range){0, 100, true},
					    &c->rated_rise_k);
		}
	}
	if (seen.ripple && seen.current_a) {
		yamltree_error_node(
			&p->yt, seen.ripple,
			"self_heating: give current_a or ripple (per frequency), not both");
		return;
	}
	if (seen.ripple && !(seen.rated_ripple_a && seen.rated_rise_k)) {
		yamltree_error_node(&p->yt, seen.ripple,
				    "self_heating: ripple per frequency needs rated_ripple_a and "
				    "rated_rise_k (the rating it is compared with)");
		return;
	}
	seen.current_a = seen.current_a ? seen.current_a : seen.ripple;
	bool power = seen.esr_ohm || seen.rth_k_per_w;
	bool ripple = seen.rated_ripple_a || seen.rated_rise_k;
	// current_a may be left to a measured current (ripple_from:, checked with the entry).
	if (seen.rise_k && !seen.current_a && !power && !ripple) {
		c->self_heating = SELF_HEATING_RISE;
	} else if (!seen.rise_k && seen.esr_ohm && seen.rth_k_per_w && !ripple) {
		c->self_heating = SELF_HEATING_POWER;
	} else if (!seen.rise_k && seen.rated_ripple_a && seen.rated_rise_k && !power) {
		c->self_heating = SELF_HEATING_RIPPLE;
	} else {
		yamltree_error_node(
			&p->yt, map,
			"self_heating: give exactly one form: {rise_k}, {current_a, esr_ohm, rth_k_per_w} or {current_a, rated_ripple_a, rated_rise_k}");
	}
}

/*
 * A mapping of texts keyed by @names (yamltree_named_values()) into @slots at their key's index,
 * where @optional an empty value clearing one; each value's node in @values. False when @map
 * cannot be walked.
 */
static bool get_texts(struct parser *p, const struct yamltree_node *map, const char *section,
		      const char *const *names, bool optional, char **slots,
		      const struct yamltree_node **values) {
	if (!yamltree_named_values(&p->yt, map, section, names, values)) {
		return false;
	}
	for (size_t i = 0; names[i]; i++) {
		if (values[i] && optional) {
			yamltree_get_optional_text(&p->yt, values[i], names[i], &slots[i]);
		} else if (values[i]) {
			yamltree_get_text(&p->yt, values[i], names[i], &slots[i]);
		}
	}
	return true;
}

/* Matches @v against @names; the index, or -1 after reporting the allowed words. */
static int get_enum(struct parser *p, const struct yamltree_node *v, const char *key,
		    const char *const *names) {
	struct buf list;
	buf_init(&list);
	for (const char *const *q = names; *q; q++) {
		buf_printf(&list, "%s%s", q == names ? "" : " or ", *q);
	}
	int found = -1;
	if (yamltree_want_scalar(&p->yt, v, key, list.data)) {
		for (int i = 0; names[i] && found < 0; i++) {
			if (strcmp(v->text, names[i]) == 0) {
				found = i;
			}
		}
		if (found < 0) {
			yamltree_error_node(&p->yt, v, "%s: expected %s, got '%s'", key, list.data,
					    v->text);
		}
	}
	buf_finish(&list);
	return found;
}

/* A mapping's doubles by key: each key with its range and slot; unknown keys were reported. */
struct number_key {
	const char *key;
	struct yamltree_range range;
	double *slot;
	const struct yamltree_node **seen;
};

/* The key @k's value @v when @k is one of @keys (true), read into its slot. */
static bool get_number(struct parser *p, const struct yamltree_node *k,
		       const struct yamltree_node *v, const struct number_key *keys, size_t n) {
	for (size_t j = 0; j < n; j++) {
		if (yamltree_key_is(k, keys[j].key)) {
			yamltree_get_double(&p->yt, v, keys[j].key, keys[j].range, keys[j].slot);
			if (keys[j].seen) {
				*keys[j].seen = v;
			}
			return true;
		}
	}
	return false;
}

static void get_numbers(struct parser *p, const struct yamltree_node *map,
			const struct number_key *keys, size_t n) {
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		get_number(p, map->items[i], map->items[i + 1], keys, n);
	}
}

/* sensors: {ambient: CH, case: CH, core: CH}: any of them, at least one, no channel twice. */
static void parse_sensors(struct parser *p, const struct yamltree_node *map,
			  struct capacitor_config *c) {
	const struct yamltree_node *v[TEMP_BASIS_N];
	if (!get_texts(p, map, "sensors", temp_basis_names, false, c->sensors, v)) {
		return;
	}
	// once all are read, so the map's order does not matter
	for (int b = 0; b < TEMP_BASIS_N; b++) {
		for (int o = 0; o < b && v[b] && c->sensors[b]; o++) {
			if (v[o] && c->sensors[o] && strcmp(c->sensors[o], c->sensors[b]) == 0) {
				yamltree_error_node(
					&p->yt, v[b],
					"sensors: %s and %s name the same channel '%s': one sensor measures one temperature",
					temp_basis_names[o], temp_basis_names[b], c->sensors[b]);
			}
		}
	}
	if (map->kind == YAMLTREE_MAPPING && map->n == 0) {
		yamltree_error_node(&p->yt, map,
				    "sensors: name at least one of ambient, case and core");
	}
}

/* ripple_from: {channel, formula: proportional (k) | buck_input (v_in, v_out), multiplier}. */
static void parse_ripple_from(struct parser *p, const struct yamltree_node *map,
			      struct capacitor_config *c) {
	static const char *const keys[] = {"channel", "formula",    "k", "v_in",
					   "v_out",   "multiplier", NULL};
	if (!yamltree_check_mapping(&p->yt, map, "ripple_from", keys)) {
		return;
	}
	struct capacitor_ripple_from *rf = &c->ripple_from;
	free(rf->channel); // a repeated key starts again
	*rf = (struct capacitor_ripple_from){
		.k = NAN, .v_in = NAN, .v_out = NAN, .multiplier = NAN};
	const struct yamltree_node *formula = NULL, *k = NULL, *v_in = NULL, *v_out = NULL;
	const struct number_key numbers[] = {
		{"k", {0, 1e3, true}, &rf->k, &k},
		{"v_in", {0, 1e4, true}, &rf->v_in, &v_in},
		{"v_out", {0, 1e4, true}, &rf->v_out, &v_out},
		{"multiplier", {0, 100, true}, &rf->multiplier, NULL},
	};
	get_numbers(p, map, numbers, sizeof(numbers) / sizeof(numbers[0]));
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *key = map->items[i], *v = map->items[i + 1];
		int e;
		if (yamltree_key_is(key, "channel")) {
			yamltree_get_text(&p->yt, v, "channel", &rf->channel);
		} else if (yamltree_key_is(key, "formula")) {
			if ((e = get_enum(p, v, "formula", ripple_formula_names)) >= 0) {
				rf->formula = (enum ripple_formula)e;
				formula = v;
			} else {
				return; // reported; the formula's keys cannot be judged
			}
		}
	}
	if (map->kind != YAMLTREE_MAPPING) {
		return;
	}
	if (!rf->channel || !formula) {
		yamltree_error_node(
			&p->yt, map,
			"ripple_from: give channel and formula (proportional with k, or "
			"buck_input with v_in and v_out)");
	} else if (rf->formula == RIPPLE_FORMULA_PROPORTIONAL && (!k || v_in || v_out)) {
		yamltree_error_node(&p->yt, formula,
				    "ripple_from: formula proportional takes k (I_rms = k x the "
				    "channel's value), not v_in or v_out");
	} else if (rf->formula == RIPPLE_FORMULA_BUCK_INPUT && (k || !v_in || !v_out)) {
		yamltree_error_node(&p->yt, formula,
				    "ripple_from: formula buck_input takes v_in and v_out (I_rms = "
				    "I_out sqrt(D (1 - D)), D = v_out / v_in), not k");
	} else if (rf->formula == RIPPLE_FORMULA_BUCK_INPUT && !(rf->v_out < rf->v_in)) {
		yamltree_error_node(&p->yt, v_out ? v_out : map,
				    "ripple_from: v_out must be below v_in for a buck converter");
	}
}

/* voltage: {applied_v, rated_v, exponent}: all three. */
static void parse_voltage(struct parser *p, const struct yamltree_node *map,
			  struct capacitor_config *c) {
	static const char *const keys[] = {"applied_v", "rated_v", "exponent", NULL};
	if (!yamltree_check_mapping(&p->yt, map, "voltage", keys)) {
		return;
	}
	struct capacitor_voltage *v = &c->voltage;
	*v = (struct capacitor_voltage){NAN, NAN, NAN}; // a repeated key starts again
	const struct yamltree_node *applied = NULL;
	const struct number_key numbers[] = {
		{"applied_v", {0, 1e5, true}, &v->applied_v, &applied},
		{"rated_v", {0, 1e5, true}, &v->rated_v, NULL},
		{"exponent", {0, 20, true}, &v->exponent, NULL},
	};
	get_numbers(p, map, numbers, 3);
	if (map->kind != YAMLTREE_MAPPING) {
		return;
	}
	if (isnan(v->applied_v) || isnan(v->rated_v) || isnan(v->exponent)) {
		yamltree_error_node(&p->yt, map,
				    "voltage: give applied_v, rated_v and exponent (life x "
				    "(applied_v / rated_v)^-exponent)");
	} else if (v->applied_v > v->rated_v) {
		yamltree_error_node(
			&p->yt, applied ? applied : map,
			"voltage: applied_v %g V is above rated_v %g V: no model applies "
			"above the rated voltage",
			v->applied_v, v->rated_v);
	}
}

/* valid_c: [LOW, HIGH] in °C. */
static void parse_valid(struct parser *p, const struct yamltree_node *seq,
			struct capacitor_config *c) {
	if (!yamltree_check_sequence(&p->yt, seq, "valid_c")) {
		return;
	}
	if (seq->n != 2) {
		yamltree_error_node(&p->yt, seq,
				    "valid_c: give [LOW, HIGH], the band in °C over which the "
				    "series' B_t or E_a is stated (e.g. [60, 95])");
		return;
	}
	const struct yamltree_range r = {-55, 200, false};
	yamltree_get_double(&p->yt, seq->items[0], "valid_c", r, &c->valid_low_c);
	yamltree_get_double(&p->yt, seq->items[1], "valid_c", r, &c->valid_high_c);
	if (!isnan(c->valid_low_c) && !isnan(c->valid_high_c) &&
	    !(c->valid_high_c > c->valid_low_c)) {
		yamltree_error_node(&p->yt, seq->items[1],
				    "valid_c: the upper bound must be above the lower");
	}
}

struct capacitor_keys {
	const struct yamltree_node *name, *sensor, *sensors, *basis, *rated_life_h, *rated_temp_c,
		*model, *bt, *ea_ev, *self_heating, *validity_low_c, *valid_c, *ripple_from;
};

/* One sensor drives: sensors:'s best founded (core, case, ambient), or sensor's on its basis. */
static void settle_sensors(struct parser *p, const struct capacitor_keys *seen,
			   struct capacitor_config *c) {
	if (seen->sensor && seen->sensors) {
		yamltree_error_node(&p->yt, seen->sensors,
				    "sensors: give sensor (with basis) or sensors, not both");
		return;
	}
	if (seen->sensors && seen->basis) {
		yamltree_error_node(&p->yt, seen->basis,
				    "basis: the sensors: map names each sensor's temperature; "
				    "basis goes with sensor");
	}
	if (!seen->sensor && !seen->sensors) {
		return; // reported with the other required keys
	}
	if (seen->sensor) {
		if (c->sensor) {
			c->sensors[c->basis] = xstrdup(c->sensor);
		}
		return;
	}
	c->sensors_map = true;
	for (int b = TEMP_BASIS_N; b-- > 0;) {
		if (c->sensors[b]) {
			c->sensor = xstrdup(c->sensors[b]);
			c->basis = (enum temp_basis)b;
			return;
		}
	}
}

/* What the self-heating, a measured ripple and the validity band need of each other. */
static void check_heating(struct parser *p, const struct capacitor_keys *seen,
			  struct capacitor_config *c) {
	if (seen->self_heating && c->basis != TEMP_BASIS_AMBIENT && !c->sensors_map) {
		yamltree_error_node(
			&p->yt, seen->self_heating,
			"self_heating: only for an ambient basis: a %s temperature already includes the capacitor's own heating, so adding it again would count it twice (with sensors: it is the modelled rise, checked against the measurements)",
			temp_basis_name(c->basis));
	}
	bool current_form =
		c->self_heating == SELF_HEATING_POWER || c->self_heating == SELF_HEATING_RIPPLE;
	if (seen->ripple_from && c->ripple_from.channel && !current_form) {
		yamltree_error_node(
			&p->yt, seen->ripple_from,
			"ripple_from: needs self_heating in the power form {esr_ohm, rth_k_per_w} or the ripple form {rated_ripple_a, rated_rise_k}, through which the measured current heats the part");
	}
	if (seen->self_heating && current_form && isnan(c->current_a) && !seen->ripple_from) {
		yamltree_error_node(
			&p->yt, seen->self_heating,
			"self_heating: this form needs current_a (or a measured current: ripple_from)");
	}
	if (seen->validity_low_c && seen->valid_c) {
		yamltree_error_node(&p->yt, seen->validity_low_c,
				    "validity_low_c: give valid_c or validity_low_c, not both "
				    "(valid_c's first value is the lower bound)");
	}
	if (seen->validity_low_c && seen->rated_temp_c && !isnan(c->validity_low_c) &&
	    c->validity_low_c >= c->rated_temp_c) {
		yamltree_error_node(&p->yt, seen->validity_low_c,
				    "validity_low_c: must be below rated_temp_c (%g)",
				    c->rated_temp_c);
	}
	if (seen->valid_c && seen->rated_temp_c && !isnan(c->valid_low_c) &&
	    c->valid_low_c >= c->rated_temp_c) {
		yamltree_error_node(&p->yt, seen->valid_c,
				    "valid_c: the lower bound must be below rated_temp_c (%g)",
				    c->rated_temp_c);
	}
}

static void check_capacitor(struct parser *p, const struct yamltree_node *map,
			    const struct capacitor_keys *seen, struct capacitor_config *c) {
	static const char *const required[] = {"name", "sensor' or 'sensors", "rated_life_h",
					       "rated_temp_c"};
	const struct yamltree_node *const present[] = {seen->name,
						       seen->sensor ? seen->sensor : seen->sensors,
						       seen->rated_life_h, seen->rated_temp_c};
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (!present[i]) {
			yamltree_error_node(&p->yt, map, "capacitor%s%s: '%s' is required",
					    c->name ? " " : "", c->name ? c->name : "",
					    required[i]);
		}
	}
	settle_sensors(p, seen, c);
	if (seen->bt && c->model != LIFETIME_MODEL_BT) {
		yamltree_error_node(&p->yt, seen->bt,
				    "bt: applies to model bt only (arrhenius uses ea_ev)");
	}
	if (seen->ea_ev && c->model != LIFETIME_MODEL_ARRHENIUS) {
		yamltree_error_node(
			&p->yt, seen->ea_ev,
			"ea_ev: applies to model arrhenius only (set model: arrhenius, or use bt)");
	}
	if (!seen->ea_ev && c->model == LIFETIME_MODEL_ARRHENIUS) {
		yamltree_error_node(
			&p->yt, seen->model,
			"model: arrhenius needs ea_ev (the activation energy in eV, e.g. 0.83)");
	}
	check_heating(p, seen, c);
}

/* The keys of a capacitors: entry that are plain numbers, with their ranges. */
static bool capacitor_number(struct parser *p, const struct yamltree_node *k,
			     const struct yamltree_node *v, struct capacitor_keys *seen,
			     struct capacitor_config *c) {
	const struct number_key numbers[] = {
		{"rated_life_h", {0, 1e7, true}, &c->rated_life_h, &seen->rated_life_h},
		{"rated_temp_c", {40, 200, false}, &c->rated_temp_c, &seen->rated_temp_c},
		{"bt", {1, 10, true}, &c->bt, &seen->bt},
		{"ea_ev", {0, 5, true}, &c->ea_ev, &seen->ea_ev},
		{"life_cap_years", {0, 100, true}, &c->life_cap_years, NULL},
		{"validity_low_c", {-55, 150, false}, &c->validity_low_c, &seen->validity_low_c},
		{"max_temp_c", {40, 200, false}, &c->max_temp_c, NULL},
		{"case_diameter_mm", {0, 200, true}, &c->case_diameter_mm, NULL},
		{"vent_clearance_mm", {0, 1000, false}, &c->vent_clearance_mm, NULL},
		{"uncertainty_k", {0, 20, false}, &c->uncertainty_k, NULL},
	};
	return get_number(p, k, v, numbers, sizeof(numbers) / sizeof(numbers[0]));
}

/*
 * The keys of a capacitors: entry that are mappings of two numbers (self_heating_tolerance:
 * {k, pct}, steady_state: {rate_k_per_10min, soak_min}), with their keys' ranges.
 */
static bool capacitor_number_map(struct parser *p, const struct yamltree_node *k,
				 const struct yamltree_node *v, struct capacitor_config *c) {
	const struct {
		const char *section;
		struct number_key keys[2];
	} maps[] = {
		{"self_heating_tolerance",
		 {{"k", {0, 100, false}, &c->rise_tolerance_k, NULL},
		  {"pct", {0, 1000, false}, &c->rise_tolerance_pct, NULL}}},
		{"steady_state",
		 {{"rate_k_per_10min", {0, 100, true}, &c->steady_rate_k, NULL},
		  {"soak_min", {0, 7 * 24 * 60, true}, &c->steady_soak_min, NULL}}},
	};
	for (size_t j = 0; j < sizeof(maps) / sizeof(maps[0]); j++) {
		if (yamltree_key_is(k, maps[j].section)) {
			const char *const names[] = {maps[j].keys[0].key, maps[j].keys[1].key,
						     NULL};
			if (yamltree_check_mapping(&p->yt, v, maps[j].section, names)) {
				get_numbers(p, v, maps[j].keys, 2);
			}
			return true;
		}
	}
	return false;
}

/* The keys of a capacitors: entry that are mappings, lists or words. */
static void capacitor_key(struct parser *p, const struct yamltree_node *k,
			  const struct yamltree_node *v, struct capacitor_keys *seen,
			  struct capacitor_config *c) {
	int e;
	if (yamltree_key_is(k, "name")) {
		seen->name = v;
		yamltree_get_text(&p->yt, v, "name", &c->name);
	} else if (yamltree_key_is(k, "sensor")) {
		seen->sensor = v;
		yamltree_get_text(&p->yt, v, "sensor", &c->sensor);
	} else if (yamltree_key_is(k, "sensors")) {
		seen->sensors = v;
		parse_sensors(p, v, c);
	} else if (yamltree_key_is(k, "basis")) {
		seen->basis = v;
		if ((e = get_enum(p, v, "basis", temp_basis_names)) >= 0) {
			c->basis = (enum temp_basis)e;
		}
	} else if (yamltree_key_is(k, "model")) {
		seen->model = v;
		if ((e = get_enum(p, v, "model", lifetime_model_names)) >= 0) {
			c->model = (enum lifetime_model)e;
		}
	} else if (yamltree_key_is(k, "type")) {
		if ((e = get_enum(p, v, "type", capacitor_type_names)) >= 0) {
			c->type = (enum capacitor_type)e;
		}
	} else if (yamltree_key_is(k, "self_heating")) {
		seen->self_heating = yamltree_is_null(v) ? NULL : v;
		parse_self_heating(p, v, c);
	} else if (yamltree_key_is(k, "in_service")) {
		int64_t ts;
		if (yamltree_want_scalar(&p->yt, v, "in_service", "a date YYYY-MM-DD")) {
			if (timefmt_parse_date(v->text, &ts)) {
				c->in_service = ts;
				c->has_in_service = true;
				c->in_service_line = (int)v->line;
				c->in_service_col = (int)v->col;
			} else {
				yamltree_error_node(
					&p->yt, v,
					"in_service: expected a date YYYY-MM-DD, got '%s'",
					v->text);
			}
		}
	} else if (yamltree_key_is(k, "review")) {
		// free-text notes by the keys of capacitor_review_keys[]; an empty value clears one
		const struct yamltree_node *notes[CAPACITOR_REVIEW_N];
		get_texts(p, v, "review", capacitor_review_keys, true, c->review, notes);
	} else if (yamltree_key_is(k, "ripple_from")) {
		seen->ripple_from = v;
		parse_ripple_from(p, v, c);
	} else if (yamltree_key_is(k, "load_channel")) {
		yamltree_get_text(&p->yt, v, "load_channel", &c->load_channel);
	} else if (yamltree_key_is(k, "valid_c")) {
		seen->valid_c = v;
		parse_valid(p, v, c);
	} else if (yamltree_key_is(k, "voltage")) {
		parse_voltage(p, v, c);
	} else if (yamltree_key_is(k, "vent_facing")) {
		yamltree_get_optional_text(&p->yt, v, "vent_facing", &c->vent_facing);
	}
}

static void parse_capacitor(struct parser *p, const struct yamltree_node *map,
			    struct capacitor_config *c) {
	static const char *const keys[] = {"name",
					   "sensor",
					   "sensors",
					   "basis",
					   "rated_life_h",
					   "rated_temp_c",
					   "model",
					   "bt",
					   "ea_ev",
					   "type",
					   "self_heating",
					   "in_service",
					   "life_cap_years",
					   "validity_low_c",
					   "valid_c",
					   "max_temp_c",
					   "review",
					   "ripple_from",
					   "load_channel",
					   "self_heating_tolerance",
					   "steady_state",
					   "voltage",
					   "case_diameter_mm",
					   "vent_clearance_mm",
					   "vent_facing",
					   "uncertainty_k",
					   NULL};
	if (!yamltree_check_entry(&p->yt, map, "capacitors",
				  "name, sensor (or sensors), rated_life_h and rated_temp_c",
				  "capacitor", keys)) {
		return;
	}
	struct capacitor_keys seen = {0};
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *k = map->items[i], *v = map->items[i + 1];
		if (!capacitor_number(p, k, v, &seen, c) && !capacitor_number_map(p, k, v, c)) {
			capacitor_key(p, k, v, &seen, c);
		}
	}
	check_capacitor(p, map, &seen, c);
}

void config_capacitor_init(struct capacitor_config *c) {
	*c = (struct capacitor_config){
		.basis = TEMP_BASIS_AMBIENT,
		.model = LIFETIME_MODEL_BT,
		.bt = NAN,
		.ea_ev = NAN,
		.type = CAPACITOR_TYPE_WET,
		.self_heating = SELF_HEATING_NONE,
		.life_cap_years = 15,
		.validity_low_c = NAN,
		.current_a = NAN,
		.ripple_from = {.multiplier = NAN, .k = NAN, .v_in = NAN, .v_out = NAN},
		.rise_tolerance_k = NAN,
		.rise_tolerance_pct = NAN,
		.steady_rate_k = NAN,
		.steady_soak_min = NAN,
		.valid_low_c = NAN,
		.valid_high_c = NAN,
		.max_temp_c = NAN,
		.voltage = {NAN, NAN, NAN},
		.case_diameter_mm = NAN,
		.vent_clearance_mm = NAN,
		.uncertainty_k = NAN,
	};
}

void config_parse_capacitors(struct parser *p, const struct yamltree_node *seq) {
	struct config *cfg = p->cfg;
	if (!yamltree_check_sequence(&p->yt, seq, "capacitors")) {
		return;
	}
	cfg->capacitors = xrealloc(cfg->capacitors,
				   (cfg->n_capacitors + seq->n + 1) * sizeof(*cfg->capacitors));
	for (size_t i = 0; i < seq->n; i++) {
		const struct yamltree_node *item = seq->items[i];
		struct capacitor_config *c = &cfg->capacitors[cfg->n_capacitors++];
		config_capacitor_init(c);
		c->line = (int)item->line;
		parse_capacitor(p, item, c);
		for (size_t j = 0; c->name && j + 1 < cfg->n_capacitors; j++) {
			if (cfg->capacitors[j].name &&
			    strcmp(cfg->capacitors[j].name, c->name) == 0) {
				yamltree_error_node(
					&p->yt, item,
					"capacitors: the name '%s' is used twice (first at line %d)",
					c->name, cfg->capacitors[j].line);
				break;
			}
		}
	}
}

void config_capacitors_free(struct config *cfg) {
	for (size_t i = 0; i < cfg->n_capacitors; i++) {
		struct capacitor_config *c = &cfg->capacitors[i];
		for (int b = 0; b < TEMP_BASIS_N; b++) {
			free(c->sensors[b]);
		}
		free(c->ripple_from.channel);
		free(c->load_channel);
		free(c->vent_facing);
		free(cfg->capacitors[i].name);
		free(cfg->capacitors[i].sensor);
		for (int r = 0; r < CAPACITOR_REVIEW_N; r++) {
			free(cfg->capacitors[i].review[r]);
		}
	}
	free(cfg->capacitors);
}

/* Before it, an in-service date is most likely a typo (1925 for 2025). */
#define IN_SERVICE_EARLIEST 631152000 // 1990-01-01

void config_capacitor_warnings(const struct config *cfg, int64_t now, struct buf *out) {
	const char *name = cfg->path ? cfg->path : "configuration";
	for (size_t i = 0; i < cfg->n_capacitors; i++) {
		const struct capacitor_config *c = &cfg->capacitors[i];
		if (!c->has_in_service ||
		    (c->in_service >= IN_SERVICE_EARLIEST && c->in_service <= now)) {
			continue;
		}
		char date[TIMEFMT_ISO_LEN], today[TIMEFMT_ISO_LEN];
		timefmt_iso(c->in_service, date);
		timefmt_iso(now, today);
		buf_printf(out, "%s:%d:%d: capacitor '%s': in_service %.10s ", name,
			   c->in_service_line, c->in_service_col, c->name ? c->name : "", date);
		if (c->in_service < IN_SERVICE_EARLIEST) {
			buf_puts(out,
				 "is before 1990: if the year is a typo, the part's age and its "
				 "calendar cap are wrong\n");
		} else {
			buf_printf(out,
				   "is in the future (today is %.10s): no sample ages the part "
				   "before it\n",
				   today);
		}
	}
}
