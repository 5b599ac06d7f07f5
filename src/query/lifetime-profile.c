/*
 * Temperature profiles of the configured capacitors (lifetime-profile.h): the lifetime report's
 * time per stored temperature, binned by the temperature the model ages the part at.
 */
#include "lifetime-profile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "textdist.h"
#include "xalloc.h"

bool lifetime_profile_bin_check(double bin_k, const char *what, char **err) {
	if (!isfinite(bin_k) || bin_k < LIFETIME_PROFILE_MIN_BIN_K ||
	    bin_k > LIFETIME_PROFILE_MAX_BIN_K) {
		*err = xasprintf("%s: the bin width must be a number of kelvin from %g to %g (got "
				 "%g)",
				 what, LIFETIME_PROFILE_MIN_BIN_K, LIFETIME_PROFILE_MAX_BIN_K,
				 bin_k);
		return false;
	}
	return true;
}

/* The bin of @model_c: a temperature within 1e-9 of a bin's lower edge is on it. */
static int64_t bin_index(double model_c, double bin_k) {
	return (int64_t)floor(model_c / bin_k + 1e-9);
}

/* The edge k * @bin_k as the double nearest its decimal (to 1e-6 K): 45.3, not 45.300000000004. */
static double bin_edge(int64_t k, double bin_k) {
	return nearbyint((double)k * bin_k * 1e6) / 1e6;
}

int lifetime_profile_bin(const struct lifetime_params *p, const struct lifetime_point *pts,
			 size_t n, double bin_k, struct lifetime_profile_entry *pe) {
	pe->bins = NULL;
	pe->n_bins = 0;
	pe->hours = pe->consumed_fraction = 0;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(pts[i].temp_c) || !(pts[i].dt_h > 0)) {
			continue; // no time: the damage sum skips it too
		}
		int64_t k = bin_index(pts[i].temp_c + p->rise_k, bin_k);
		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
	}
	if (lo > hi) {
		return 0;
	}
	if (hi - lo >= LIFETIME_PROFILE_MAX_BINS) {
		return -E2BIG;
	}
	size_t nb = (size_t)(hi - lo + 1);
	struct lifetime_sum *hours = xcalloc(nb, sizeof(*hours));
	struct lifetime_sum *damage = xcalloc(nb, sizeof(*damage));
	double *only = xcalloc(nb, sizeof(*only)); // the one model temperature seen, else NAN
	bool *seen = xcalloc(nb, sizeof(*seen));
	struct lifetime_sum total_h = {0}, total_d = {0};
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(pts[i].temp_c) || !(pts[i].dt_h > 0)) {
			continue;
		}
		double model_c = pts[i].temp_c + p->rise_k;
		double life = lifetime_life_at_model(p, model_c);
		if (!(life > 0)) {
			continue;
		}
		size_t b = (size_t)(bin_index(model_c, bin_k) - lo);
		lifetime_sum_add(&hours[b], pts[i].dt_h);
		lifetime_sum_add(&damage[b], pts[i].dt_h / life);
		lifetime_sum_add(&total_h, pts[i].dt_h);
		lifetime_sum_add(&total_d, pts[i].dt_h / life);
		only[b] = !seen[b] || only[b] == model_c ? model_c : NAN;
		seen[b] = true;
	}
	pe->bins = xcalloc(nb, sizeof(*pe->bins));
	pe->n_bins = nb;
	for (size_t b = 0; b < nb; b++) {
		struct lifetime_profile_bin *bin = &pe->bins[b];
		bin->from_c = bin_edge(lo + (int64_t)b, bin_k);
		bin->to_c = bin_edge(lo + (int64_t)b + 1, bin_k);
		bin->hours = lifetime_sum_value(&hours[b]);
		bin->consumed_fraction = lifetime_sum_value(&damage[b]);
		bin->temp_c = NAN;
		if (seen[b] && bin->consumed_fraction > 0) {
			// One temperature is its own; otherwise the bin's COSEL temperature.
			bin->temp_c = !isnan(only[b])
					      ? only[b]
					      : lifetime_temp_for_life(
							p, bin->hours / bin->consumed_fraction);
		}
	}
	pe->hours = lifetime_sum_value(&total_h);
	pe->consumed_fraction = lifetime_sum_value(&total_d);
	free(seen);
	free(only);
	free(damage);
	free(hours);
	return 0;
}

bool lifetime_profile_measured_edges(const struct lifetime_profile_entry *pe) {
	double rise = pe->e->r.self_heating_k;
	return isfinite(rise) && rise != 0 && !pe->e->model_temps;
}

void lifetime_profile_finish(struct lifetime_profile *pr) {
	for (size_t i = 0; i < pr->n; i++) {
		free(pr->entries[i].bins);
	}
	free(pr->entries);
	*pr = (struct lifetime_profile){0};
}

/* "a, b, c": the configured names, for an unknown one. */
/* "; did you mean 'A'? (configured: 'A', 'B')": the near names, then every configured one. */
static char *names_of(const struct lifetime_report *rep, const char *capacitor) {
	struct buf b;
	buf_init(&b);
	struct textdist_near near;
	textdist_near_init(&near, capacitor);
	for (size_t i = 0; i < rep->n; i++) {
		textdist_near_offer(&near, rep->entries[i].cc->name, rep->entries[i].cc->name);
	}
	textdist_near_write(&near, true, &b);
	buf_puts(&b, " (configured: ");
	for (size_t i = 0; i < rep->n; i++) {
		buf_printf(&b, "%s'%s'", i ? ", " : "", rep->entries[i].cc->name);
	}
	buf_puts(&b, rep->n ? ")" : "none)");
	char *s = xstrdup(b.data);
	buf_finish(&b);
	return s;
}

int lifetime_profile_build(const struct lifetime_report *rep, double bin_k, const char *capacitor,
			   struct lifetime_profile *out, char **err) {
	*out = (struct lifetime_profile){.bin_k = bin_k};
	if (!lifetime_profile_bin_check(bin_k, "bin", err)) {
		return -EINVAL;
	}
	out->entries = xcalloc(rep->n ? rep->n : 1, sizeof(*out->entries));
	for (size_t i = 0; i < rep->n; i++) {
		const struct lifetime_report_entry *e = &rep->entries[i];
		if (capacitor && strcmp(e->cc->name, capacitor) != 0) {
			continue;
		}
		struct lifetime_profile_entry *pe = &out->entries[out->n++];
		pe->e = e;
		if (e->n_temps == 0) {
			continue; // the report's warnings say why (no data, sensor, rating)
		}
		struct lifetime_params p;
		char *perr = NULL;
		if (!lifetime_params_init(&p, e->cc, &perr)) {
			*err = xasprintf("capacitor '%s': %s", e->cc->name, perr);
			free(perr);
			lifetime_profile_finish(out);
			return -EINVAL;
		}
		// With a measured ripple each sample has its own rise: the report kept the model
		// temperatures themselves, nothing is added to them.
		const struct lifetime_point *pts = e->model_temps ? e->model_temps : e->temps;
		size_t n_pts = e->model_temps ? e->n_model_temps : e->n_temps;
		if (e->model_temps) {
			p.rise_k = 0;
		}
		if (lifetime_profile_bin(&p, pts, n_pts, bin_k, pe) < 0) {
			*err = xasprintf("capacitor '%s': %g K bins over %.1f to %.1f °C would be "
					 "more than %d: choose a wider bin",
					 e->cc->name, bin_k, pts[0].temp_c + p.rise_k,
					 pts[n_pts - 1].temp_c + p.rise_k,
					 LIFETIME_PROFILE_MAX_BINS);
			lifetime_profile_finish(out);
			return -E2BIG;
		}
	}
	if (capacitor && out->n == 0) {
		char *names = names_of(rep, capacitor);
		*err = xasprintf("no capacitor named '%s' is configured%s", capacitor, names);
		free(names);
		lifetime_profile_finish(out);
		return -ENOENT;
	}
	return 0;
}

static double share(double part, double whole) {
	return whole > 0 ? part / whole : NAN;
}

static void write_bins(const struct lifetime_profile_entry *pe, struct json *out) {
	double rise = pe->e->r.self_heating_k;
	bool measured = lifetime_profile_measured_edges(pe);
	json_array_begin(out);
	for (size_t b = 0; b < pe->n_bins; b++) {
		const struct lifetime_profile_bin *bin = &pe->bins[b];
		json_object_begin(out);
		json_field_double(out, "from_c", bin->from_c);
		json_field_double(out, "to_c", bin->to_c);
		json_field_double(out, "hours", bin->hours);
		json_field_double(out, "share", share(bin->hours, pe->hours));
		json_field_double(out, "consumed_fraction", bin->consumed_fraction);
		json_field_double(out, "consumed_share",
				  share(bin->consumed_fraction, pe->consumed_fraction));
		json_field_double(out, "temp_c", bin->temp_c);
		if (measured) {
			// The same bin on the sensor's scale: the measured temperatures in it.
			json_field_double(out, "measured_from_c", bin->from_c - rise);
			json_field_double(out, "measured_to_c", bin->to_c - rise);
		}
		json_object_end(out);
	}
	json_array_end(out);
}

void lifetime_profile_write_json(const struct lifetime_profile *pr, struct json *out) {
	json_object_begin(out);
	json_field_double(out, "bin_k", pr->bin_k);
	json_key(out, "capacitors");
	json_array_begin(out);
	for (size_t i = 0; i < pr->n; i++) {
		const struct lifetime_profile_entry *pe = &pr->entries[i];
		const struct lifetime_report_entry *e = pe->e;
		const struct lifetime_result *r = &e->r;
		json_object_begin(out);
		lifetime_report_write_part(e, out);
		json_field_double(out, "self_heating_k", r->self_heating_k);
		json_field_double(out, "hours", r->observed_h);
		json_field_double(out, "coverage", e->coverage);
		json_field_double(out, "consumed_fraction", r->consumed_fraction);
		json_field_double(out, "equivalent_temp_c", r->equivalent_temp_c);
		json_field_double(out, "equivalent_effective_temp_c",
				  r->equivalent_temp_c + r->self_heating_k);
		json_field_double(out, "life_uncapped_h", r->life_uncapped_h);
		json_key(out, "band");
		lifetime_report_write_band(r, out);
		json_key(out, "bins");
		write_bins(pe, out);
		json_key(out, "warnings");
		lifetime_report_write_warnings(r, out);
		json_object_end(out);
	}
	json_array_end(out);
	json_object_end(out);
}

int lifetime_profile_json(struct store *store, const struct config *cfg, int64_t from, int64_t to,
			  bool include_unsynced, int64_t now, double bin_k, const char *capacitor,
			  struct json *out, char **err) {
	if (!lifetime_profile_bin_check(bin_k, "bin", err)) {
		return -EINVAL;
	}
	struct lifetime_report rep;
	int rc = lifetime_report_compute(store, cfg, from, to, include_unsynced, now, &rep, err);
	if (rc < 0) {
		return rc;
	}
	struct lifetime_profile pr;
	rc = lifetime_profile_build(&rep, bin_k, capacitor, &pr, err);
	if (rc == 0) {
		lifetime_profile_write_json(&pr, out);
		lifetime_profile_finish(&pr);
	}
	lifetime_report_finish(&rep);
	return rc;
}

static void csv_number(struct buf *out, double v, bool first) {
	char text[32];
	json_format_double(text, v);
	csv_field(out, text, strlen(text), first);
}

void lifetime_profile_write_csv(const struct lifetime_profile_entry *pe, struct buf *out) {
	csv_field(out, "temp_c", 6, true);
	csv_field(out, "hours", 5, false);
	csv_end_record(out);
	for (size_t b = 0; b < pe->n_bins; b++) {
		const struct lifetime_profile_bin *bin = &pe->bins[b];
		if (!(bin->hours > 0) || !isfinite(bin->temp_c)) {
			continue;
		}
		csv_number(out, bin->temp_c, true);
		csv_number(out, bin->hours, false);
		csv_end_record(out);
	}
}

/* A whole field as a finite number. */
static bool field_number(const char *s, double *v) {
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	return end != s && *end == '\0' && errno != ERANGE && isfinite(*v);
}

bool lifetime_profile_read_csv(FILE *in, struct lifetime_point **pts, size_t *n, char **err) {
	*pts = NULL;
	*n = 0;
	size_t cap = 0;
	struct csv_reader r;
	csv_reader_init(&r, in);
	int rc;
	bool first = true;
	*err = NULL;
	while ((rc = csv_read(&r)) == 1) {
		bool header = first && r.n_fields == 2 && strcmp(r.fields[0], "temp_c") == 0 &&
			      strcmp(r.fields[1], "hours") == 0;
		first = false;
		if (header) {
			continue;
		}
		double t, h;
		if (r.n_fields != 2) {
			*err = xasprintf("line %lu: expected TEMP_C,HOURS (2 fields), got %zu",
					 r.line, r.n_fields);
			break;
		}
		if (!field_number(r.fields[0], &t) || !field_number(r.fields[1], &h)) {
			*err = xasprintf("line %lu: expected TEMP_C,HOURS as numbers, e.g. 65,8",
					 r.line);
			break;
		}
		if (!(t > -LIFETIME_KELVIN_OFFSET) || !(t < 500)) {
			*err = xasprintf("line %lu: temperature %g °C is out of range", r.line, t);
			break;
		}
		if (!(h > 0)) {
			*err = xasprintf("line %lu: hours must be positive (got %g)", r.line, h);
			break;
		}
		*pts = xgrow(*pts, &cap, *n + 1, sizeof(**pts));
		(*pts)[(*n)++] = (struct lifetime_point){t, h};
	}
	if (rc < 0) {
		*err = xstrdup(r.error);
	} else if (!*err && *n == 0) {
		*err = xstrdup("no rows: expected a header temp_c,hours and rows TEMP_C,HOURS");
	}
	csv_reader_finish(&r);
	if (*err) {
		free(*pts);
		*pts = NULL;
		*n = 0;
		return false;
	}
	return true;
}
