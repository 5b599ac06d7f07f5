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
	if (seen.rise_k && !seen.current_a && !power && !ripple) {
		c->self_heating = SELF_HEATING_RISE;
	} else if (!seen.rise_k && seen.current_a && seen.esr_ohm && seen.rth_k_per_w && !ripple) {
		c->self_heating = SELF_HEATING_POWER;
	} else if (!seen.rise_k && seen.current_a && seen.rated_ripple_a && seen.rated_rise_k &&
		   !power) {
		c->self_heating = SELF_HEATING_RIPPLE;
	} else {
		yamltree_error_node(
			&p->yt, map,
			"self_heating: give exactly one form: {rise_k}, {current_a, esr_ohm, rth_k_per_w} or {current_a, rated_ripple_a, rated_rise_k}");
	}
}

/* review: free-text notes by the keys of capacitor_review_keys[]; an empty value clears one. */
static void parse_review(struct parser *p, const struct yamltree_node *map,
			 struct capacitor_config *c) {
	if (!yamltree_check_mapping(&p->yt, map, "review", capacitor_review_keys)) {
		return;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *k = map->items[i], *v = map->items[i + 1];
		for (int r = 0; r < CAPACITOR_REVIEW_N; r++) {
			if (yamltree_key_is(k, capacitor_review_keys[r])) {
				yamltree_get_optional_string(&p->yt, v, capacitor_review_keys[r],
							     &c->review[r]);
			}
		}
	}
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

struct capacitor_keys {
	const struct yamltree_node *name, *sensor, *rated_life_h, *rated_temp_c, *model, *bt,
		*ea_ev, *self_heating, *validity_low_c;
};

static void check_capacitor(struct parser *p, const struct yamltree_node *map,
			    const struct capacitor_keys *seen, struct capacitor_config *c) {
	static const char *const required[] = {"name", "sensor", "rated_life_h", "rated_temp_c"};
	const struct yamltree_node *const present[] = {seen->name, seen->sensor, seen->rated_life_h,
						       seen->rated_temp_c};
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (!present[i]) {
			yamltree_error_node(&p->yt, map, "capacitor%s%s: '%s' is required",
					    c->name ? " " : "", c->name ? c->name : "",
					    required[i]);
		}
	}
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
	if (seen->self_heating && c->basis != TEMP_BASIS_AMBIENT) {
		yamltree_error_node(
			&p->yt, seen->self_heating,
			"self_heating: only for an ambient basis: a %s temperature already includes the capacitor's own heating, so adding it again would count it twice",
			temp_basis_name(c->basis));
	}
	if (seen->validity_low_c && seen->rated_temp_c && !isnan(c->validity_low_c) &&
	    c->validity_low_c >= c->rated_temp_c) {
		yamltree_error_node(&p->yt, seen->validity_low_c,
				    "validity_low_c: must be below rated_temp_c (%g)",
				    c->rated_temp_c);
	}
}

static void parse_capacitor(struct parser *p, const struct yamltree_node *map,
			    struct capacitor_config *c) {
	static const char *const keys[] = {
		"name",           "sensor",       "basis",      "rated_life_h",
		"rated_temp_c",   "model",        "bt",         "ea_ev",
		"type",           "self_heating", "in_service", "life_cap_years",
		"validity_low_c", "review",       NULL};
	if (!config_entry_mapping(p, map, "capacitors",
				  "name, sensor, rated_life_h and rated_temp_c", "capacitor",
				  keys)) {
		return;
	}
	struct capacitor_keys seen = {0};
	int e;
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *k = map->items[i], *v = map->items[i + 1];
		if (yamltree_key_is(k, "name")) {
			seen.name = v;
			yamltree_get_string(&p->yt, v, "name", &c->name);
		} else if (yamltree_key_is(k, "sensor")) {
			seen.sensor = v;
			yamltree_get_string(&p->yt, v, "sensor", &c->sensor);
		} else if (yamltree_key_is(k, "basis")) {
			if ((e = get_enum(p, v, "basis", temp_basis_names)) >= 0) {
				c->basis = (enum temp_basis)e;
			}
		} else if (yamltree_key_is(k, "rated_life_h")) {
			seen.rated_life_h = v;
			yamltree_get_double(&p->yt, v, "rated_life_h",
					    (struct yamltree_range){0, 1e7, true},
					    &c->rated_life_h);
		} else if (yamltree_key_is(k, "rated_temp_c")) {
			seen.rated_temp_c = v;
			yamltree_get_double(&p->yt, v, "rated_temp_c",
					    (struct yamltree_range){40, 200, false},
					    &c->rated_temp_c);
		} else if (yamltree_key_is(k, "model")) {
			seen.model = v;
			if ((e = get_enum(p, v, "model", lifetime_model_names)) >= 0) {
				c->model = (enum lifetime_model)e;
			}
		} else if (yamltree_key_is(k, "bt")) {
			seen.bt = v;
			yamltree_get_double(&p->yt, v, "bt", (struct yamltree_range){1, 10, true},
					    &c->bt);
		} else if (yamltree_key_is(k, "ea_ev")) {
			seen.ea_ev = v;
			yamltree_get_double(&p->yt, v, "ea_ev", (struct yamltree_range){0, 5, true},
					    &c->ea_ev);
		} else if (yamltree_key_is(k, "type")) {
			if ((e = get_enum(p, v, "type", capacitor_type_names)) >= 0) {
				c->type = (enum capacitor_type)e;
			}
		} else if (yamltree_key_is(k, "self_heating")) {
			seen.self_heating = yamltree_is_null(v) ? NULL : v;
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
		} else if (yamltree_key_is(k, "life_cap_years")) {
			yamltree_get_double(&p->yt, v, "life_cap_years",
					    (struct yamltree_range){0, 100, true},
					    &c->life_cap_years);
		} else if (yamltree_key_is(k, "review")) {
			parse_review(p, v, c);
		} else if (yamltree_key_is(k, "validity_low_c")) {
			seen.validity_low_c = v;
			yamltree_get_double(&p->yt, v, "validity_low_c",
					    (struct yamltree_range){-55, 150, false},
					    &c->validity_low_c);
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
