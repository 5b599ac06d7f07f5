/*
 * A channel's part on its board (role.h): names read for the zones and devfreq devices, the
 * cpufreq policies' hardware maxima sorted into tiers for the clusters, and the pairing of two
 * boards' channels by hand, by role, then by key.
 */
#include "role.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "xalloc.h"

static const struct {
	const char *name, *text;
} roles[ROLE_COUNT] = {
	[ROLE_NONE] = {"none", "no role"},
	[ROLE_ZONE_BIG] = {"big-zone", "big-core zone"},
	[ROLE_ZONE_LITTLE] = {"little-zone", "little-core zone"},
	[ROLE_ZONE_CPU] = {"cpu-zone", "CPU zone"},
	[ROLE_ZONE_NPU] = {"npu-zone", "NPU zone"},
	[ROLE_ZONE_SOC] = {"soc-zone", "SoC zone"},
	[ROLE_ZONE_GPU] = {"gpu-zone", "GPU zone"},
	[ROLE_AMBIENT] = {"ambient", "ambient"},
	[ROLE_CLUSTER_BIG] = {"big-cluster", "big cluster"},
	[ROLE_CLUSTER_LITTLE] = {"little-cluster", "little cluster"},
	[ROLE_CLUSTER_CPU] = {"cpu-cluster", "CPU cluster"},
	[ROLE_NPU] = {"npu", "NPU"},
	[ROLE_GPU] = {"gpu", "GPU"},
	[ROLE_DMC] = {"dmc", "memory controller (DMC)"},
};

const char *role_key(enum role r) {
	return r >= 0 && r < ROLE_COUNT ? roles[r].name : "none";
}

const char *role_text(enum role r) {
	return r >= 0 && r < ROLE_COUNT ? roles[r].text : "no role";
}

bool role_parse(const char *name, enum role *out) {
	for (int r = 0; name && r < ROLE_COUNT; r++) {
		if (strcmp(name, roles[r].name) == 0) {
			*out = (enum role)r;
			return true;
		}
	}
	return false;
}

/* Whether @s contains @word, ignoring case. */
static bool has(const char *s, const char *word) {
	size_t n = strlen(word);
	for (; s && *s; s++) {
		if (strncasecmp(s, word, n) == 0) {
			return true;
		}
	}
	return false;
}

/* A thermal zone's role by its type (the key after "thermal/"). */
static enum role zone_role(const char *type) {
	if (has(type, "ambient")) {
		return ROLE_AMBIENT;
	}
	if (has(type, "bigcore") || has(type, "big_core") || has(type, "big-core")) {
		return ROLE_ZONE_BIG;
	}
	if (has(type, "littlecore") || has(type, "little")) {
		return ROLE_ZONE_LITTLE;
	}
	if (has(type, "npu")) {
		return ROLE_ZONE_NPU;
	}
	if (has(type, "gpu")) {
		return ROLE_ZONE_GPU;
	}
	if (has(type, "soc")) {
		return ROLE_ZONE_SOC;
	}
	if (has(type, "x86_pkg") || has(type, "cpu")) {
		return ROLE_ZONE_CPU;
	}
	return ROLE_NONE;
}

/* A devfreq device's role by its name (the key after "devfreq/"). */
static enum role device_role(const char *name) {
	if (has(name, "npu")) {
		return ROLE_NPU;
	}
	if (has(name, "gpu") || has(name, "mali")) {
		return ROLE_GPU;
	}
	if (has(name, "dmc")) {
		return ROLE_DMC;
	}
	return ROLE_NONE;
}

/* One channel's role by its own name, or ROLE_NONE (cpufreq policies: by the topology). */
static enum role named_role(const struct role_channel *c) {
	const char *key = c->key;
	if (c->kind == CHANNEL_KIND_TEMPERATURE) {
		size_t len = strlen(key);
		if ((len >= 12 && strcmp(key + len - 12, "temp_ambient") == 0) ||
		    has(c->label, "ambient")) {
			return ROLE_AMBIENT;
		}
		return strncmp(key, "thermal/", 8) == 0 ? zone_role(key + 8) : ROLE_NONE;
	}
	if (c->kind == CHANNEL_KIND_FREQUENCY && strncmp(key, "devfreq/", 8) == 0) {
		return device_role(key + 8);
	}
	return ROLE_NONE;
}

static bool is_policy(const struct role_channel *c) {
	return c->kind == CHANNEL_KIND_FREQUENCY && strncmp(c->key, "cpufreq/", 8) == 0;
}

/* Maxima within this ratio of the tier's lowest are one tier (binning, preferred cores). */
#define ROLE_TIER_RATIO 1.15

static int cmp_double(const void *pa, const void *pb) {
	double a = *(const double *)pa, b = *(const double *)pb;
	return (a > b) - (a < b);
}

/* The cpufreq policies' roles: one tier of maxima is a board of one kind of core. */
static void cluster_roles(const struct role_channel *ch, size_t n, enum role *out) {
	double *max = xcalloc(n + 1, sizeof(*max));
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (is_policy(&ch[i]) && isfinite(ch[i].max_hz) && ch[i].max_hz > 0) {
			max[m++] = ch[i].max_hz;
		}
	}
	qsort(max, m, sizeof(*max), cmp_double);
	bool tiers = m > 1 && max[m - 1] > max[0] * ROLE_TIER_RATIO;
	for (size_t i = 0; i < n; i++) {
		if (!is_policy(&ch[i])) {
			continue;
		}
		double x = ch[i].max_hz;
		if (!(isfinite(x) && x > 0)) {
			out[i] = m == 0 ? ROLE_CLUSTER_CPU : ROLE_NONE; // none known: one kind
		} else if (!tiers) {
			out[i] = ROLE_CLUSTER_CPU;
		} else {
			out[i] = x <= max[0] * ROLE_TIER_RATIO ? ROLE_CLUSTER_LITTLE
							       : ROLE_CLUSTER_BIG;
		}
	}
	free(max);
}

void role_infer(const struct role_channel *ch, size_t n, const struct role_override *overrides,
		size_t n_overrides, enum role *out) {
	for (size_t i = 0; i < n; i++) {
		out[i] = named_role(&ch[i]);
	}
	cluster_roles(ch, n, out);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < n_overrides; k++) {
			if (strcmp(overrides[k].key, ch[i].key) == 0) {
				out[i] = overrides[k].role;
			}
		}
	}
}

/* The index of key @key among @n channels, or -1. */
static ssize_t find(const struct role_channel *c, size_t n, const char *key) {
	for (size_t i = 0; i < n; i++) {
		if (strcmp(c[i].key, key) == 0) {
			return (ssize_t)i;
		}
	}
	return -1;
}

/*
 * The rank (by key) of channel @i among the channels of its role and kind on its board, those
 * paired by hand included: a pair given by hand moves no other pair (bigcore1 stays with
 * bigcore1 when bigcore0 is paired by hand with something else).
 */
static size_t rank_of(const struct role_channel *c, const enum role *rc, size_t n, size_t i) {
	size_t rank = 0;
	for (size_t j = 0; j < n; j++) {
		rank += rc[j] == rc[i] && c[j].kind == c[i].kind && strcmp(c[j].key, c[i].key) < 0;
	}
	return rank;
}

/* The channel of role @r and kind @kind at rank @k on its board, unless it is @taken; or -1. */
static ssize_t nth_of_role(const struct role_channel *c, const enum role *rc, size_t n,
			   const bool *taken, enum role r, enum channel_kind kind, size_t k) {
	for (size_t i = 0; i < n; i++) {
		if (rc[i] == r && c[i].kind == kind && rank_of(c, rc, n, i) == k) {
			return taken[i] ? -1 : (ssize_t)i;
		}
	}
	return -1;
}

void role_pair(const struct role_channel *a, const enum role *ra, size_t na,
	       const struct role_channel *b, const enum role *rb, size_t nb,
	       const struct role_pair *by_hand, size_t n_by_hand, ssize_t *pair_of_a,
	       const char **why_of_a) {
	bool *hand_a = xcalloc(na + 1, sizeof(*hand_a)), *hand_b = xcalloc(nb + 1, sizeof(*hand_b));
	for (size_t i = 0; i < na; i++) {
		pair_of_a[i] = -1;
		if (why_of_a) {
			why_of_a[i] = NULL;
		}
	}
	for (size_t k = 0; k < n_by_hand; k++) {
		ssize_t i = find(a, na, by_hand[k].a), j = find(b, nb, by_hand[k].b);
		if (i >= 0 && j >= 0 && !hand_a[i] && !hand_b[j] && a[i].kind == b[j].kind) {
			pair_of_a[i] = j;
			hand_a[i] = hand_b[j] = true;
			if (why_of_a) {
				why_of_a[i] = "map";
			}
		}
	}
	for (size_t i = 0; i < na; i++) {
		if (hand_a[i]) {
			continue;
		}
		ssize_t j = -1;
		const char *why = NULL;
		if (ra[i] != ROLE_NONE) {
			j = nth_of_role(b, rb, nb, hand_b, ra[i], a[i].kind, rank_of(a, ra, na, i));
			why = "role";
		} else {
			j = find(b, nb, a[i].key);
			j = j >= 0 && (hand_b[j] || rb[j] != ROLE_NONE || b[j].kind != a[i].kind)
				    ? -1
				    : j;
			why = "key";
		}
		pair_of_a[i] = j;
		if (why_of_a && j >= 0) {
			why_of_a[i] = why;
		}
	}
	free(hand_a);
	free(hand_b);
}
