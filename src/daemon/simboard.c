/*
 * The simulated board under declared work: a linear first-order (RC) lag per zone toward the
 * temperature the current draw would hold it at, stepped exactly over each interval (the lag of
 * a constant input over dt is 1 - exp(-dt/tau), whatever dt is), with the big cores' step_wise
 * throttling and the fan closing the loop: a cap lowers the clock, the clock the draw, the draw
 * the heat.
 */
#include "simboard.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* The RK3588's OPPs: the big cores' table to 2.4 GHz, as a board sold at 2.4 GHz lists it. */
static const int64_t big_opp_khz[] = {408000,  600000,  816000,  1008000, 1200000,
				      1416000, 1608000, 1800000, 2016000, 2208000,
				      2256000, 2304000, 2352000, 2400000};
static const int64_t little_opp_khz[] = {408000,  600000,  816000,  1008000,
					 1200000, 1416000, 1608000, 1800000};
#define N_BIG    (sizeof(big_opp_khz) / sizeof(big_opp_khz[0]))
#define N_LITTLE (sizeof(little_opp_khz) / sizeof(little_opp_khz[0]))
_Static_assert(N_BIG <= SIMBOARD_MAX_OPPS && N_BIG <= SIMBOARD_MAX_STATES, "a table too long");

const int64_t *simboard_big_opp(size_t *n) {
	*n = N_BIG;
	return big_opp_khz;
}

const int64_t *simboard_little_opp(size_t *n) {
	*n = N_LITTLE;
	return little_opp_khz;
}

/* The heat sources: the three CPU clusters and the NPU, each's draw at full load and clock. */
enum source { SRC_LITTLE, SRC_BIG0, SRC_BIG1, SRC_NPU, SRC_COUNT };
static const double full_w[SRC_COUNT] = {1.2, 2.6, 2.6, 5.5};

/*
 * Per zone: its idle rise over the ambient (K, the idle board's ~3 W), its time constant (s of
 * the board's time) and what each source at full draw adds to its steady temperature (K, fan
 * off): the big-core zones sit on their clusters, the NPU zone on the NPU, the rest between.
 */
static const struct {
	double idle_k, tau_s, rise_k[SRC_COUNT];
} zone[SIM_ZONE_COUNT] = {
	[SIM_ZONE_SOC] = {14.2, 240, {3, 7, 7, 18}},
	[SIM_ZONE_BIGCORE0] = {14.4, 150, {2, 24, 7, 8}},
	[SIM_ZONE_BIGCORE1] = {14.3, 150, {2, 7, 24, 8}},
	[SIM_ZONE_LITTLECORE] = {13.6, 240, {9, 4, 4, 5}},
	[SIM_ZONE_CENTER] = {13.9, 300, {3, 6, 6, 9}},
	[SIM_ZONE_GPU] = {13.7, 300, {2, 4, 4, 6}},
	[SIM_ZONE_NPU] = {14.0, 120, {1, 5, 5, 27}},
};

#define IDLE_W         2.95  // the board's draw with nothing running
#define FAN_W          0.12  // per fan level
#define FAN_RELIEF     0.06  // each fan level takes this share off every rise under load
#define PASSIVE_FACTOR 1.25  // the heatsink alone holds the heat longer and higher
#define TC_TAU_S       900.0 // the capacitor's thermocouple, away from the SoC: slower
#define TC_IDLE_K      6.5
#define TC_SHARE       0.45 // of soc-thermal's rise over its idle
#define CJ_IDLE_K      0.5  // the MAX31855's cold junction: the air, warmed a little
#define CJ_SHARE       0.08
#define BIG_STEP_K     2.0 // step_wise: one cooling state more per 2 K over the trip
#define BUSY_MIN_PCT   2.0 // below this a cluster's governor stays at the bottom OPP

/* Housekeeping: what each CPU is busy with when nothing is declared, %. */
static const double base_pct[SIM_CPUS] = {3, 1, 1, 1, 1, 1, 1, 1};

void simboard_params_default(struct simboard_params *p) {
	*p = (struct simboard_params){
		.ambient_c = 25, .cooling = SIMBOARD_COOLING_FAN, .time_scale = 1};
}

/* A decimal number filling @s whole, within [lo, hi]. */
static bool number(const char *s, double lo, double hi, double *out) {
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !isfinite(v) || v < lo || v > hi || strpbrk(s, "xXnN")) {
		return false;
	}
	*out = v;
	return true;
}

/* One KEY=VALUE of @spec; false with *err set. */
static bool param(char *kv, struct simboard_params *p, char **err) {
	char *eq = strchr(kv, '=');
	if (!eq) {
		*err = xasprintf("'%s': expected KEY=VALUE", kv);
		return false;
	}
	*eq = '\0';
	const char *key = kv, *value = eq + 1;
	double v;
	if (strcmp(key, "ambient") == 0) {
		if (!number(value, -20, 60, &v)) {
			*err = xasprintf("ambient=%s: expected °C from -20 to 60", value);
			return false;
		}
		p->ambient_c = v;
	} else if (strcmp(key, "big_max") == 0) {
		bool found = false;
		if (number(value, 1, 1e6, &v)) {
			for (size_t i = 0; i < N_BIG; i++) {
				found = found || big_opp_khz[i] == (int64_t)llround(v * 1000);
			}
		}
		if (!found) {
			*err = xasprintf("big_max=%s: expected one of the big cores' OPPs in MHz "
					 "(408 .. 2400, e.g. 2304)",
					 value);
			return false;
		}
		p->big_max_khz = (int64_t)llround(v * 1000);
	} else if (strcmp(key, "cooling") == 0) {
		if (strcmp(value, "fan") == 0) {
			p->cooling = SIMBOARD_COOLING_FAN;
		} else if (strcmp(value, "passive") == 0) {
			p->cooling = SIMBOARD_COOLING_PASSIVE;
		} else {
			*err = xasprintf("cooling=%s: expected fan or passive", value);
			return false;
		}
	} else if (strcmp(key, "time_scale") == 0) {
		if (!number(value, 1, 3600, &v)) {
			*err = xasprintf("time_scale=%s: expected 1 to 3600", value);
			return false;
		}
		p->time_scale = v;
	} else {
		*err = xasprintf("unknown key '%s' (ambient, big_max, cooling, time_scale)", key);
		return false;
	}
	return true;
}

bool simboard_params_parse(const char *spec, struct simboard_params *p, char **err) {
	*err = NULL;
	char *copy = xstrdup(spec);
	bool ok = *copy != '\0';
	if (!ok) {
		*err = xstrdup("empty: expected KEY=VALUE[,KEY=VALUE...]");
	}
	for (char *save = NULL, *kv = strtok_r(copy, ",", &save); ok && kv;
	     kv = strtok_r(NULL, ",", &save)) {
		ok = param(kv, p, err);
	}
	free(copy);
	return ok;
}

/* The mean of CPUs [@from, @to) of @load, %. */
static double cluster_pct(const struct simboard_load *load, int from, int to) {
	double sum = 0;
	for (int c = from; c < to; c++) {
		sum += load->cpu_pct[c];
	}
	return sum / (to - from);
}

static const int cluster_cpus[SIM_POLICY_COUNT][2] = {{0, 4}, {4, 6}, {6, 8}};

/* The highest OPP of @opp (@n) at or below @khz, or the lowest. */
static size_t opp_at_or_below(const int64_t *opp, size_t n, int64_t khz) {
	size_t i = 0;
	while (i + 1 < n && opp[i + 1] <= khz) {
		i++;
	}
	return i;
}

/*
 * The clock schedutil gives cluster @p at load @pct under its cooling state: the lowest OPP
 * giving 1.25 times the load's share of the highest clock the chip reaches, never above the
 * cap (one OPP off the table's top per state) nor the binned maximum.
 */
static int64_t governor_khz(const struct simboard *b, int p, double pct) {
	size_t n;
	const int64_t *opp =
		p == SIM_POLICY_LITTLE ? simboard_little_opp(&n) : simboard_big_opp(&n);
	int64_t reach = opp[n - 1];
	if (p != SIM_POLICY_LITTLE && b->p.big_max_khz > 0) {
		reach = b->p.big_max_khz;
	}
	int64_t cap = opp[n - 1 - (size_t)b->cool_state[p]];
	int64_t limit = cap < reach ? cap : reach;
	if (pct < BUSY_MIN_PCT) {
		return opp[0];
	}
	double want = (double)reach * fmin(1.0, 1.25 * pct / 100);
	size_t i = 0;
	while (i + 1 < n && (double)opp[i] < want) {
		i++;
	}
	return opp[i] < limit ? opp[i] : opp[opp_at_or_below(opp, n, limit)];
}

/* The cooling state step_wise settles at for a big zone at @temp_c, from @state. */
static int step_wise(double temp_c, int state, int max_state) {
	double trip = SIM_BIG_TRIP_MC / 1000.0, hyst = SIM_BIG_HYST_MC / 1000.0;
	int up = temp_c >= trip ? 1 + (int)((temp_c - trip) / BIG_STEP_K) : 0;
	if (up > state) {
		state = up;
	}
	while (state > 0 && temp_c < trip + (state - 1) * BIG_STEP_K - hyst) {
		state--;
	}
	return state < max_state ? state : max_state;
}

static double relief(const struct simboard *b) {
	return b->p.cooling == SIMBOARD_COOLING_PASSIVE ? PASSIVE_FACTOR
							: 1 - FAN_RELIEF * b->fan_state;
}

/*
 * The clocks the governors pick under @load (housekeeping added, into b->load) and the caps the
 * board has, and each source's draw over its full draw into @share; returns the board's draw.
 */
static double draw(struct simboard *b, const struct simboard_load *load, double share[SRC_COUNT]) {
	struct simboard_load with_base = *load;
	for (int c = 0; c < SIM_CPUS; c++) {
		with_base.cpu_pct[c] = fmin(100, fmax(0, load->cpu_pct[c]) + base_pct[c]);
	}
	for (int k = 0; k < SIM_NPU_CORES; k++) {
		with_base.npu_pct[k] = fmin(100, fmax(0, load->npu_pct[k]));
	}
	b->load = with_base;
	double w = IDLE_W + FAN_W * b->fan_state;
	for (int pol = 0; pol < SIM_POLICY_COUNT; pol++) {
		size_t n;
		const int64_t *opp =
			pol == SIM_POLICY_LITTLE ? simboard_little_opp(&n) : simboard_big_opp(&n);
		double pct = cluster_pct(&with_base, cluster_cpus[pol][0], cluster_cpus[pol][1]);
		b->cpu_khz[pol] = governor_khz(b, pol, pct);
		double f = (double)b->cpu_khz[pol] / (double)opp[n - 1];
		share[pol] = pct / 100 * f * f; // dynamic power: about C V^2 f, V rising with f
	}
	share[SRC_NPU] = 0;
	for (int k = 0; k < SIM_NPU_CORES; k++) {
		share[SRC_NPU] += with_base.npu_pct[k] / 100 / SIM_NPU_CORES;
	}
	for (int s = 0; s < SRC_COUNT; s++) {
		w += full_w[s] * share[s];
	}
	return w;
}

/* Zone @z's steady rise over the ambient under the draws @share. */
static double steady_k(const struct simboard *b, int z, const double share[SRC_COUNT]) {
	double k = zone[z].idle_k, r = relief(b);
	for (int s = 0; s < SRC_COUNT; s++) {
		k += r * zone[z].rise_k[s] * share[s];
	}
	return k;
}

void simboard_init(struct simboard *b, const struct simboard_params *p, int64_t t_ms,
		   int64_t uptime_s) {
	memset(b, 0, sizeof(*b));
	b->p = *p;
	b->t_ms = t_ms;
	struct simboard_load none = {{0}, {0}};
	double share[SRC_COUNT];
	b->power_w = draw(b, &none, share); // housekeeping alone
	for (int z = 0; z < SIM_ZONE_COUNT; z++) {
		b->excess_k[z] = steady_k(b, z, share);
	}
	b->tc_k = TC_IDLE_K;
	b->cj_k = CJ_IDLE_K;
	for (int c = 0; c < SIM_CPUS; c++) {
		b->busy_ticks[c] = base_pct[c] * (double)uptime_s;
	}
	for (int pol = 0; pol < SIM_POLICY_COUNT; pol++) {
		b->state_ms[pol][0] = uptime_s * 1000;
		b->opp_ms[pol][0] = uptime_s * 1000; // an idle uptime at the bottom OPP
	}
}

void simboard_step(struct simboard *b, const struct simboard_load *load, int64_t t_ms) {
	if (t_ms <= b->t_ms) {
		return;
	}
	int64_t dt_ms = t_ms - b->t_ms;
	double dt_s = (double)dt_ms / 1000 * b->p.time_scale; // the board's time
	for (int pol = 0; pol < SIM_POLICY_COUNT; pol++) {
		b->state_ms[pol][b->cool_state[pol]] += dt_ms;
	}
	// The clocks and the draw over the interval, under the caps it began with.
	double share[SRC_COUNT];
	b->power_w = draw(b, load, share);
	for (int c = 0; c < SIM_CPUS; c++) {
		b->busy_ticks[c] += b->load.cpu_pct[c] * (double)dt_ms / 1000;
	}
	for (int pol = 0; pol < SIM_POLICY_COUNT; pol++) {
		size_t n;
		const int64_t *opp =
			pol == SIM_POLICY_LITTLE ? simboard_little_opp(&n) : simboard_big_opp(&n);
		b->opp_ms[pol][opp_at_or_below(opp, n, b->cpu_khz[pol])] += dt_ms;
	}
	// Each zone toward its steady temperature under that draw.
	for (int z = 0; z < SIM_ZONE_COUNT; z++) {
		double steady = steady_k(b, z, share);
		double keep = exp(-dt_s / zone[z].tau_s);
		b->excess_k[z] = steady + (b->excess_k[z] - steady) * keep;
	}
	double soc_rise = b->excess_k[SIM_ZONE_SOC] - zone[SIM_ZONE_SOC].idle_k;
	double keep = exp(-dt_s / TC_TAU_S);
	b->tc_k = TC_IDLE_K + TC_SHARE * soc_rise +
		  (b->tc_k - TC_IDLE_K - TC_SHARE * soc_rise) * keep;
	b->cj_k = CJ_IDLE_K + CJ_SHARE * soc_rise +
		  (b->cj_k - CJ_IDLE_K - CJ_SHARE * soc_rise) * keep;
	// The governors of the thermal zones act on what they read at the interval's end.
	size_t n_big;
	simboard_big_opp(&n_big);
	for (int pol = SIM_POLICY_BIG0; pol < SIM_POLICY_COUNT; pol++) {
		enum sim_zone z = pol == SIM_POLICY_BIG0 ? SIM_ZONE_BIGCORE0 : SIM_ZONE_BIGCORE1;
		b->cool_state[pol] = step_wise(b->p.ambient_c + b->excess_k[z], b->cool_state[pol],
					       (int)n_big - 1);
	}
	// pwm-fan on soc-thermal's 60 °C trip (ROCK 5C BSP): one level per 3 K above 57 °C.
	double soc = b->p.ambient_c + b->excess_k[SIM_ZONE_SOC];
	b->fan_state = b->p.cooling == SIMBOARD_COOLING_PASSIVE ? 0
		       : soc < 57                               ? 0
		       : soc >= 66                              ? 4
								: 1 + (int)((soc - 57) / 3);
	b->t_ms = t_ms;
}

static int32_t rounded_pct(double pct) {
	return (int32_t)lround(fmin(100, fmax(0, pct)));
}

void simboard_state(const struct simboard *b, uint64_t seed, struct sim_state *out) {
	memset(out, 0, sizeof(*out));
	int64_t t = b->t_ms / 1000;
	for (int z = 0; z < SIM_ZONE_COUNT; z++) {
		out->zone_c[z] =
			b->p.ambient_c + b->excess_k[z] + sim_noise(seed, (uint64_t)z, t, 0.1);
		out->zone_mc[z] = sim_tsadc_mc(out->zone_c[z]);
	}
	double tc_c = b->p.ambient_c + b->tc_k + sim_noise(seed, 100, t, 0.1);
	out->tc_raw = (int32_t)lround(tc_c / 0.25);
	double cj_c = b->p.ambient_c + b->cj_k + sim_noise(seed, 101, t, 0.05);
	out->tc_ambient_raw = (int32_t)lround(cj_c / 0.0625);
	out->fan_state = b->fan_state;
	size_t n;
	const int64_t *big = simboard_big_opp(&n);
	for (int pol = 0; pol < SIM_POLICY_COUNT; pol++) {
		out->cpu_khz[pol] = b->cpu_khz[pol];
		out->cool_state[pol] = b->cool_state[pol];
		out->cap_khz[pol] = pol == SIM_POLICY_LITTLE
					    ? little_opp_khz[N_LITTLE - 1]
					    : big[n - 1 - (size_t)b->cool_state[pol]];
	}
	bool npu_busy = false, busy = false;
	for (int k = 0; k < SIM_NPU_CORES; k++) {
		out->npu_load_pct[k] = rounded_pct(b->load.npu_pct[k]);
		npu_busy = npu_busy || out->npu_load_pct[k] > 0;
	}
	for (int c = 0; c < SIM_CPUS; c++) {
		out->cpu_busy_pct[c] = rounded_pct(b->load.cpu_pct[c]);
		busy = busy || out->cpu_busy_pct[c] > 20;
	}
	out->npu_busy = npu_busy;
	out->npu_hz = npu_busy ? SIM_NPU_BUSY_HZ : 300000000LL;
	out->gpu_hz = 300000000LL;
	out->dmc_hz = npu_busy || busy ? 2112000000LL : 528000000LL;
	// The 5 V rail droops with the draw.
	sim_saradc(seed, t, 5.10 - 0.012 * (b->power_w - IDLE_W), out->saradc_raw);
}

double simboard_power_w(const struct simboard *b, uint64_t seed) {
	return b->power_w + sim_noise(seed, 300, b->t_ms / 1000, 0.05);
}
