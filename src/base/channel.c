/* Channel names and rules shared by the sources, the store and the importers. */
#include "channel.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "unit.h"
#include "xalloc.h"

/*
 * Each kind's name, the unit its values are stored in and its physical bounds in that unit:
 * wide enough for any real sensor (a type K thermocouple reads to 1372 °C, a counter of joules
 * runs for years), narrow enough to catch an overflowed or negative sysfs integer.
 */
static const struct {
	const char *name, *unit;
	double min, max;
} kinds[CHANNEL_KIND_OTHER + 1] = {
	[CHANNEL_KIND_TEMPERATURE] = {"temperature", "celsius", -273.15, 2000},
	[CHANNEL_KIND_FREQUENCY] = {"frequency", "hertz", 0, 1e12},
	[CHANNEL_KIND_VOLTAGE] = {"voltage", "volts", -1e5, 1e5},
	[CHANNEL_KIND_CURRENT] = {"current", "amperes", -1e5, 1e5},
	[CHANNEL_KIND_POWER] = {"power", "watts", -1e8, 1e8},
	[CHANNEL_KIND_ENERGY] = {"energy", "joules", 0, 1e15},
	[CHANNEL_KIND_FAN] = {"fan", "rpm", 0, 1e6},
	[CHANNEL_KIND_HUMIDITY] = {"humidity", "percent", 0, 100},
	[CHANNEL_KIND_STATE] = {"state", "state", 0, 1e6},
	[CHANNEL_KIND_MEMORY] = {"memory", "bytes", 0, 1e15},
	[CHANNEL_KIND_LOAD] = {"load", "percent", 0, 100},
	[CHANNEL_KIND_OTHER] = {"other", "1", -INFINITY, INFINITY},
};

const char *channel_kind_name(enum channel_kind kind) {
	return kinds[kind].name;
}

bool channel_kind_parse(const char *name, enum channel_kind *out) {
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(name, kinds[i].name) == 0) {
			*out = (enum channel_kind)i;
			return true;
		}
	}
	return false;
}

const char *channel_kind_unit(enum channel_kind kind) {
	return kinds[kind].unit;
}

enum channel_kind channel_kind_of_unit(const char *unit) {
	if (strcmp(unit, "millivolts") == 0) {
		return CHANNEL_KIND_VOLTAGE;
	}
	for (int k = 0; k <= CHANNEL_KIND_OTHER; k++) {
		if (strcmp(kinds[k].unit, unit) == 0) {
			return (enum channel_kind)k;
		}
	}
	return CHANNEL_KIND_OTHER;
}

const char *channel_unit_lookup(const char *name) {
	const struct unit_info *u = unit_lookup(name); // the known units are the registry's
	return u ? u->name : NULL;
}

bool channel_plausible(const struct channel *c, double value) {
	if (!isfinite(value)) {
		return false;
	}
	// Representable: the store keeps llround(value / resolution), exact below 2^53.
	if (c->resolution > 0 && fabs(value / c->resolution) >= 9007199254740992.0) {
		return false;
	}
	if (c->has_max && value > c->max) {
		return false;
	}
	if (c->kind > CHANNEL_KIND_OTHER || !c->unit || strcmp(c->unit, kinds[c->kind].unit) != 0) {
		return true; // a configured unit of its own: no bounds known
	}
	return value >= kinds[c->kind].min && value <= kinds[c->kind].max;
}

bool channel_key_valid(const char *key) {
	size_t n = 0;
	for (const char *p = key; *p; p++, n++) {
		if (*p <= ' ' || *p > '~') {
			return false;
		}
	}
	return n > 0 && n <= CHANNEL_KEY_MAX;
}

void channel_finish(struct channel *c) {
	free(c->key);
	free(c->source);
	free(c->label);
	free(c->path);
	free(c->meta);
	*c = (struct channel){0};
}

static char *dup_or_null(const char *s) {
	return s ? xstrdup(s) : NULL;
}

void channel_copy(struct channel *dst, const struct channel *src) {
	*dst = *src;
	dst->key = dup_or_null(src->key);
	dst->source = dup_or_null(src->source);
	dst->label = dup_or_null(src->label);
	dst->path = dup_or_null(src->path);
	dst->meta = dup_or_null(src->meta);
}

struct channel *channel_list_copy(const struct channel *src, size_t n) {
	struct channel *list = xcalloc(n ? n : 1, sizeof(*list));
	for (size_t i = 0; i < n; i++) {
		channel_copy(&list[i], &src[i]);
	}
	return list;
}

void channel_list_free(struct channel *list, size_t n) {
	for (size_t i = 0; list && i < n; i++) {
		channel_finish(&list[i]);
	}
	free(list);
}

bool channel_list_same_keys(const struct channel *a, size_t na, const struct channel *b,
			    size_t nb) {
	if (na != nb) {
		return false;
	}
	for (size_t i = 0; i < na; i++) {
		if (strcmp(a[i].key, b[i].key) != 0) {
			return false;
		}
	}
	return true;
}

/* True when @x is within a relative 1e-9 of a whole number. */
static bool nearly_whole(double x) {
	return fabs(x - nearbyint(x)) <= 1e-9 * fmax(1, fabs(x));
}

bool channel_common_resolution(double a, double b, double *out, int64_t *factor) {
	if (!(a > 0) || !(b > 0) || !isfinite(a) || !isfinite(b)) {
		return false;
	}
	for (int64_t m = 1; m <= 1000000; m++) {
		if (nearly_whole((double)m * b / a)) {
			*factor = m;
			*out = m == 1 ? a : a / (double)m;
			// 0.1 / 10 is 0.010000000000000002: keep the decimal the user would write
			double digits = ceil(-log10(*out) - 1e-9);
			if (digits > 0 && digits < 16) {
				double p = pow(10, digits);
				double r = nearbyint(*out * p) / p;
				if (fabs(r - *out) <= 1e-12 * *out) {
					*out = r;
				}
			}
			return true;
		}
	}
	return false;
}

bool reading_failed(const struct reading *r) {
	return r->err != 0 && !r->pending;
}

void channel_json_identity(struct json *j, const struct channel *c) {
	json_field_string(j, "key", c->key);
	json_field_string(j, "label", c->label ? c->label : c->key);
	json_field_string(j, "source", c->source);
	json_field_string(j, "kind", channel_kind_name(c->kind));
	json_field_string(j, "unit", c->unit);
}

void channel_json_reading(struct json *j, const struct channel *c, const struct reading *r) {
	channel_json_identity(j, c);
	json_field_double_or_null(j, "value", r->err == 0, r->value);
	json_field_string(j, "error", r->err ? strerror(-r->err) : NULL); // NULL: null
}
