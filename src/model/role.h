/*
 * A channel's part on its board, so two boards' channels are matched by what they do, not by
 * their names: the big-core zone with the big-core zone, the big cluster with the big cluster
 * (an RK3588's cpufreq/policy0 is its four A55 cores, an x86 board's one core: never the same
 * thing). Inferred from the zone's type, the devfreq device's name and the cluster topology (the
 * cpufreq policies' hardware maxima: the lowest of several is the little cluster, the others
 * big; one maximum for all is a board without big and little cores), overridable per channel
 * (the configuration's roles: map). Pure.
 */
#ifndef ROLE_H
#define ROLE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "channel.h"

enum role {
	ROLE_NONE, // no part two boards share by this rule: matched by its key alone
	ROLE_ZONE_BIG,
	ROLE_ZONE_LITTLE,
	ROLE_ZONE_CPU, // a CPU zone of a board without big and little cores (x86_pkg_temp)
	ROLE_ZONE_NPU,
	ROLE_ZONE_SOC,
	ROLE_ZONE_GPU,
	ROLE_AMBIENT, // the air around the board: an IIO ambient sensor, a cold junction
	ROLE_CLUSTER_BIG,
	ROLE_CLUSTER_LITTLE,
	ROLE_CLUSTER_CPU, // a cluster of a board without big and little cores
	ROLE_NPU,         // the NPU's devfreq device
	ROLE_GPU,
	ROLE_DMC, // the memory controller's devfreq device
	ROLE_COUNT
};

/** The role's name in the configuration and the JSON ("big-zone", "little-cluster", ...). */
const char *role_key(enum role r);
/** How the role reads in a sentence or a table ("big-core zone", "little cluster", ...). */
const char *role_text(enum role r);
/** @name ("big-zone", ...; "none" is ROLE_NONE) into *out; false for an unknown name. */
bool role_parse(const char *name, enum role *out);

/** What inference reads of a channel. */
struct role_channel {
	const char *key;   // "thermal/bigcore0-thermal", "cpufreq/policy4", "devfreq/dmc"
	const char *label; // may be NULL
	enum channel_kind kind;
	double max_hz; // a cpufreq policy's hardware maximum (cpuinfo_max_freq), else the highest
		       // clock it was seen at; NAN when neither is known
};

/** One channel's role given by hand (the configuration's roles: map). Borrowed strings. */
struct role_override {
	const char *key;
	enum role role;
};

/**
 * The role of each of the @n channels of one board into @out (n entries): @overrides first, then
 * by its key: a thermal zone by its type (bigcore, littlecore, npu, soc, gpu, x86_pkg_temp,
 * cpu), an ambient by its name (temp_ambient, ambient), a devfreq device by its name (npu, gpu,
 * dmc), a cpufreq policy by the topology of all of them (above).
 */
void role_infer(const struct role_channel *ch, size_t n, const struct role_override *overrides,
		size_t n_overrides, enum role *out);

/** A channel of one board paired by hand with a channel of the other (--map-channel A=B). */
struct role_pair {
	const char *a, *b; // keys; borrowed
};

/**
 * Pairs the @na channels of board A (roles @ra) with the @nb of board B (roles @rb): into
 * @pair_of_a (na entries) the index in B of A's counterpart, or -1 for none. First the pairs
 * given by hand; then the k-th channel of a role on A (by key order, those paired by hand
 * counted, so a pair by hand moves no other) with the k-th of the same role on B when that one
 * was not paired by hand; then a channel without a role with B's channel of the same key that
 * has no role either. A channel of one role is never paired with a namesake of another (an RK3588's
 * little cluster cpufreq/policy0 with an x86 board's cpufreq/policy0). Channels of different
 * kinds are never paired. @why_of_a (na entries, may be NULL) gets "map", "role" or "key".
 */
void role_pair(const struct role_channel *a, const enum role *ra, size_t na,
	       const struct role_channel *b, const enum role *rb, size_t nb,
	       const struct role_pair *by_hand, size_t n_by_hand, ssize_t *pair_of_a,
	       const char **why_of_a);

#endif
