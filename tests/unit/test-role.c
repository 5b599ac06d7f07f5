/*
 * Channel roles: an RK3588's zones, clusters and devfreq devices (the ROCK 5C fixture's keys and
 * its policies' cpuinfo_max_freq), a binned RK3588 (the top OPP gone on its big cores), an x86
 * board (x86_pkg_temp, one kind of core) and a Raspberry Pi; the pairing of two boards by role,
 * by hand and by key, and never with a namesake of another role.
 */
#include "role.h"
#include "test.h"

#define T CHANNEL_KIND_TEMPERATURE
#define F CHANNEL_KIND_FREQUENCY
#define M CHANNEL_KIND_MEMORY

static const struct role_channel rock5c[] = {
	{"thermal/soc-thermal", NULL, T, NAN},
	{"thermal/bigcore0-thermal", NULL, T, NAN},
	{"thermal/bigcore1-thermal", NULL, T, NAN},
	{"thermal/littlecore-thermal", NULL, T, NAN},
	{"thermal/center-thermal", NULL, T, NAN},
	{"thermal/gpu-thermal", NULL, T, NAN},
	{"thermal/npu-thermal", NULL, T, NAN},
	{"iio/maxim_thermocouple/temp", "C12 bulk capacitor (thermocouple)", T, NAN},
	{"iio/maxim_thermocouple/temp_ambient", "maxim_thermocouple temp_ambient", T, NAN},
	{"cpufreq/policy0", "CPU 0-3", F, 1800e6},
	{"cpufreq/policy4", "CPU 4-5", F, 2400e6},
	{"cpufreq/policy6", "CPU 6-7", F, 2400e6},
	{"devfreq/dmc", NULL, F, NAN},
	{"devfreq/fb000000.gpu", NULL, F, NAN},
	{"devfreq/fdab0000.npu", NULL, F, NAN},
	{"meminfo/available", NULL, M, NAN},
};
#define N_ROCK (sizeof(rock5c) / sizeof(rock5c[0]))

static const enum role rock5c_roles[N_ROCK] = {
	ROLE_ZONE_SOC,    ROLE_ZONE_BIG,    ROLE_ZONE_BIG, ROLE_ZONE_LITTLE, ROLE_NONE,
	ROLE_ZONE_GPU,    ROLE_ZONE_NPU,    ROLE_NONE,     ROLE_AMBIENT,     ROLE_CLUSTER_LITTLE,
	ROLE_CLUSTER_BIG, ROLE_CLUSTER_BIG, ROLE_DMC,      ROLE_GPU,         ROLE_NPU,
	ROLE_NONE,
};

static void test_infer(void) {
	enum role r[N_ROCK];
	role_infer(rock5c, N_ROCK, NULL, 0, r);
	for (size_t i = 0; i < N_ROCK; i++) {
		char what[128];
		snprintf(what, sizeof(what), "ROCK 5C: %s is a %s", rock5c[i].key,
			 role_text(rock5c_roles[i]));
		is_str(role_key(r[i]), role_key(rock5c_roles[i]), what);
	}
	// A binned board: 2304 and 2256 MHz on the big cores are one tier, the A55s another.
	struct role_channel binned[3] = {{"cpufreq/policy0", NULL, F, 1800e6},
					 {"cpufreq/policy4", NULL, F, 2304e6},
					 {"cpufreq/policy6", NULL, F, 2256e6}};
	enum role rb[3];
	role_infer(binned, 3, NULL, 0, rb);
	ok(rb[0] == ROLE_CLUSTER_LITTLE && rb[1] == ROLE_CLUSTER_BIG && rb[2] == ROLE_CLUSTER_BIG,
	   "a binned RK3588: policy0 little, policy4 and policy6 big");
	// x86: one kind of core (preferred cores a few % faster are no tier of their own).
	struct role_channel x86[4] = {{"thermal/x86_pkg_temp", NULL, T, NAN},
				      {"thermal/acpitz", NULL, T, NAN},
				      {"cpufreq/policy0", NULL, F, 4700e6},
				      {"cpufreq/policy1", NULL, F, 4600e6}};
	enum role rx[4];
	role_infer(x86, 4, NULL, 0, rx);
	ok(rx[0] == ROLE_ZONE_CPU && rx[1] == ROLE_NONE,
	   "x86: x86_pkg_temp a CPU zone, acpitz none");
	ok(rx[2] == ROLE_CLUSTER_CPU && rx[3] == ROLE_CLUSTER_CPU,
	   "x86: each policy a CPU cluster, neither big nor little");
	// No maximum known at all: one kind of core; some known, some not: those not, no role.
	struct role_channel unknown[2] = {{"cpufreq/policy0", NULL, F, NAN},
					  {"cpufreq/policy4", NULL, F, NAN}};
	role_infer(unknown, 2, NULL, 0, rb);
	ok(rb[0] == ROLE_CLUSTER_CPU && rb[1] == ROLE_CLUSTER_CPU,
	   "no maximum known: CPU clusters");
	// The configuration's roles: map overrides what is inferred.
	const struct role_override ov[] = {{"thermal/center-thermal", ROLE_ZONE_SOC},
					   {"cpufreq/policy0", ROLE_CLUSTER_BIG}};
	role_infer(rock5c, N_ROCK, ov, 2, r);
	ok(r[4] == ROLE_ZONE_SOC && r[9] == ROLE_CLUSTER_BIG, "roles: overrides the inference");
	enum role parsed;
	ok(role_parse("little-cluster", &parsed) && parsed == ROLE_CLUSTER_LITTLE,
	   "role names parse");
	ok(!role_parse("little", &parsed), "an unknown role name does not");
}

static void test_pair(void) {
	enum role ra[N_ROCK], rb[N_ROCK];
	role_infer(rock5c, N_ROCK, NULL, 0, ra);
	// Board B: the same model, binned: its big cores' top OPP gone.
	struct role_channel b[N_ROCK];
	memcpy(b, rock5c, sizeof(b));
	b[10].max_hz = b[11].max_hz = 2304e6;
	role_infer(b, N_ROCK, NULL, 0, rb);
	ssize_t pair[N_ROCK];
	const char *why[N_ROCK];
	role_pair(rock5c, ra, N_ROCK, b, rb, N_ROCK, NULL, 0, pair, why);
	bool same = true;
	for (size_t i = 0; i < N_ROCK; i++) {
		same = same && pair[i] == (ssize_t)i;
	}
	ok(same, "two ROCK 5Cs: every channel with its own");
	is_str(why[10], "role", "the big cluster by its role");
	is_str(why[4], "key", "center-thermal (no role) by its key");
	is_str(why[15], "key", "memory by its key");

	// An x86 board: its policy0 is no little cluster, its pkg zone neither big nor little.
	struct role_channel x86[4] = {{"thermal/x86_pkg_temp", NULL, T, NAN},
				      {"cpufreq/policy0", NULL, F, 4700e6},
				      {"cpufreq/policy1", NULL, F, 4600e6},
				      {"meminfo/available", NULL, M, NAN}};
	enum role rx[4];
	role_infer(x86, 4, NULL, 0, rx);
	role_pair(rock5c, ra, N_ROCK, x86, rx, 4, NULL, 0, pair, why);
	ok(pair[9] == -1, "RK3588 cpufreq/policy0 is not paired with x86 cpufreq/policy0");
	ok(pair[10] == -1 && pair[11] == -1 && pair[1] == -1, "nor the big cores or zones");
	ok(pair[15] == 3, "memory is memory");
	// By hand: the pkg zone stands for the big-core zone, the x86 policy0 for policy4.
	const struct role_pair hand[] = {{"thermal/bigcore0-thermal", "thermal/x86_pkg_temp"},
					 {"cpufreq/policy4", "cpufreq/policy0"}};
	role_pair(rock5c, ra, N_ROCK, x86, rx, 4, hand, 2, pair, why);
	ok(pair[1] == 0 && pair[10] == 1, "--map-channel pairs what it names");
	is_str(why[1], "map", "and says so");
	ok(pair[9] == -1 && pair[2] == -1, "and nothing else");
	// A pair by hand moves no other pair: bigcore0 with the SoC zone by hand, bigcore1 stays
	// with bigcore1, B's bigcore0 is left unpaired.
	const struct role_pair big_soc[] = {{"thermal/bigcore0-thermal", "thermal/soc-thermal"}};
	role_infer(rock5c, N_ROCK, NULL, 0, rb);
	role_pair(rock5c, ra, N_ROCK, rock5c, rb, N_ROCK, big_soc, 1, pair, why);
	ok(pair[1] == 0 && pair[2] == 2 && pair[0] == -1,
	   "--map-channel bigcore0=soc: bigcore1 still with bigcore1, the SoC zone unpaired");
	// Two of a role on one side, one on the other: the first by key, the second unpaired.
	struct role_channel one_big[1] = {{"thermal/bigcore-thermal", NULL, T, NAN}};
	enum role r1[1];
	role_infer(one_big, 1, NULL, 0, r1);
	role_pair(rock5c, ra, N_ROCK, one_big, r1, 1, NULL, 0, pair, NULL);
	ok(pair[1] == 0 && pair[2] == -1, "bigcore0 with the one big zone, bigcore1 unpaired");
}

int main(void) {
	test_infer();
	test_pair();
	return test_done();
}
