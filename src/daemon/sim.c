/*
 * The simulated ROCK 5C. The model is a linear first-order (RC) response to NPU jobs, so each
 * job's heat is a closed form and the state at any t is computed without stepping through time:
 * seeking a week back for the backfill costs the same as the present.
 */
#include "sim.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "simboard.h"
#include "simload.h"
#include "simsensor.h"
#include "timefmt.h"
#include "xalloc.h"

#define WINDOW_S  1800  // one job may start in each 30-minute window
#define BLOCK_S   14400 // bursts: a 4-hour block is busy or idle
#define DAY_S     86400
#define TAIL_WINS 8 // windows of past jobs still warming the board (4 h: > 15 time constants)

/* Whole windows' counter sums from the boot on, filled as times are asked for. */
struct sim_prefix {
	int64_t w0;                 // the boot's window
	struct window_sums *before; // before[i]: the sums of windows w0 .. w0 + i - 1
	size_t n, cap;
};

struct sim {
	char *root;
	int fd;
	uint64_t seed;
	struct sim_prefix prefix;
	struct simboard *board; // --board: the board answers to work; NULL: the timetable
	const int64_t *big_opp; // the big cores' OPPs (the timetable's, or the board's)
	size_t n_big;
};

struct job {
	int64_t start, end;
	double intensity; // scales every rise: some networks are heavier
};

/* The job of window @w, if any: busy blocks run a job in 3 of 4 windows. */
static bool window_job(uint64_t seed, int64_t w, struct job *job) {
	int64_t block = timefmt_floor_div(w * WINDOW_S, BLOCK_S);
	if (sim_unit(sim_hash(seed, (uint64_t)block, 'B')) >= 0.5) {
		return false;
	}
	uint64_t h = sim_hash(seed, (uint64_t)w, 'J');
	if (sim_unit(h) >= 0.75) {
		return false;
	}
	job->start = w * WINDOW_S + (int64_t)(sim_mix(h) % 240);
	job->end = job->start + SIM_JOB_S;
	job->intensity = 0.86 + 0.2 * sim_unit(sim_mix(h ^ 1));
	return true;
}

/* Step response of a first-order lag with time constant @tau_s, @x seconds after the step. */
static double lag(double x, double tau_s) {
	return x > 0 ? 1 - exp(-x / tau_s) : 0;
}

/* Response to one job: the rise starts at start and is cancelled from end on (superposition). */
static double job_response(const struct job *job, int64_t t, double tau_s) {
	return job->intensity *
	       (lag((double)(t - job->start), tau_s) - lag((double)(t - job->end), tau_s));
}

/* Per zone: idle offset (°C), rise at full job load (K), time constant (s). */
static const struct {
	double offset_c, rise_k, tau_s;
} zone_model[SIM_ZONE_COUNT] = {
	[SIM_ZONE_SOC] = {0.2, 23, 240},      [SIM_ZONE_BIGCORE0] = {0.4, 28, 150},
	[SIM_ZONE_BIGCORE1] = {0.3, 27, 150}, [SIM_ZONE_LITTLECORE] = {-0.4, 12, 240},
	[SIM_ZONE_CENTER] = {-0.1, 18, 300},  [SIM_ZONE_GPU] = {-0.3, 10, 300},
	[SIM_ZONE_NPU] = {0.0, 31, 120},
};

#define TC_TAU_S    900.0 // the capacitor sits on the board, away from the SoC: slower
#define TC_RISE_K   13.0
#define TC_OFFSET_C 6.5
#define CJ_OFFSET_C -7.0
#define CJ_RISE_K   4.0

static const int64_t little_opp_khz[] = {408000,  600000,  816000,  1008000,
					 1200000, 1416000, 1608000, 1800000};
static const int64_t big_opp_khz[] = {408000,  600000,  816000,  1008000, 1200000, 1416000,
				      1608000, 1800000, 2016000, 2208000, 2256000};
#define N_LITTLE (sizeof(little_opp_khz) / sizeof(little_opp_khz[0]))
#define N_BIG    (sizeof(big_opp_khz) / sizeof(big_opp_khz[0]))

/* The idle board's temperature at @t: 39 °C with a small daily swing. */
static double idle_c(uint64_t seed, int64_t t) {
	double phase = 2 * M_PI * sim_unit(sim_hash(seed, 0, 'P'));
	return 39.0 + 0.5 * sin(2 * M_PI * (double)(t % DAY_S) / DAY_S + phase);
}

/* --- throttling: the big cores' passive trip --- */

#define BIG_STEP_K 2.0 // step_wise: one cooling state more per 2 K over the trip

/* The big policies and their zones: policy4 under bigcore0-thermal, policy6 under bigcore1. */
static const enum sim_zone big_zone[SIM_POLICY_COUNT] = {
	[SIM_POLICY_BIG0] = SIM_ZONE_BIGCORE0, [SIM_POLICY_BIG1] = SIM_ZONE_BIGCORE1};

/*
 * When the job of window @w holds policy @p's cooling device at state s or deeper:
 * [enter[s], leave[s]) for s = 1..SIM_COOL_STATES-1 (empty when enter == leave). The zone's
 * response to its own job (the job's rise over the idle board at its start, without noise) is
 * monotonic: rising during the job and falling after it, so each crossing is a closed form.
 * The next job's intervals start at least 5 minutes after this one's end; they never overlap.
 */
struct cool_steps {
	int64_t enter[SIM_COOL_STATES], leave[SIM_COOL_STATES];
};

static bool window_cooling(uint64_t seed, int64_t w, int p, struct cool_steps *out) {
	memset(out, 0, sizeof(*out));
	struct job job;
	if (p == SIM_POLICY_LITTLE || !window_job(seed, w, &job)) {
		return false;
	}
	int z = big_zone[p];
	double tau = zone_model[z].tau_s;
	double base = idle_c(seed, job.start) + zone_model[z].offset_c;
	double rise = zone_model[z].rise_k * job.intensity;
	double peak = rise * (1 - exp(-(double)SIM_JOB_S / tau)); // over base, at the job's end
	bool any = false;
	for (int st = 1; st < SIM_COOL_STATES; st++) {
		double up = SIM_BIG_TRIP_MC / 1000.0 + (st - 1) * BIG_STEP_K - base;
		double down = up - SIM_BIG_HYST_MC / 1000.0;
		if (up >= peak || down <= 0) {
			break;
		}
		// The first whole second at or over the step, and the first below it minus hyst.
		out->enter[st] = job.start + (int64_t)ceil(-tau * log(1 - up / rise));
		out->leave[st] = job.end + (int64_t)ceil(tau * log(peak / down));
		out->enter[st] = out->enter[st] < job.end ? out->enter[st] : job.end - 1;
		any = true;
	}
	return any;
}

/* The cooling state policy @p is at, at @t: from the jobs of @t's window and the one before. */
static int cool_state_at(uint64_t seed, int p, int64_t t) {
	int state = 0;
	int64_t w_now = timefmt_floor_div(t, WINDOW_S);
	for (int64_t w = w_now - 1; w <= w_now; w++) {
		struct cool_steps c;
		if (!window_cooling(seed, w, p, &c)) {
			continue;
		}
		for (int st = 1; st < SIM_COOL_STATES; st++) {
			state += t >= c.enter[st] && t < c.leave[st];
		}
	}
	return state;
}

static void model_load(uint64_t seed, int64_t t, struct sim_state *out);

void sim_model(uint64_t seed, int64_t t, struct sim_state *out) {
	memset(out, 0, sizeof(*out));
	double idle = idle_c(seed, t);

	double heat[SIM_ZONE_COUNT] = {0}, tc_heat = 0, cj_heat = 0;
	int64_t w_now = timefmt_floor_div(t, WINDOW_S);
	for (int64_t w = w_now - TAIL_WINS; w <= w_now; w++) {
		struct job job;
		if (!window_job(seed, w, &job) || job.start > t) {
			continue;
		}
		if (t >= job.start && t < job.end) {
			out->npu_busy = true;
		}
		for (int z = 0; z < SIM_ZONE_COUNT; z++) {
			heat[z] +=
				zone_model[z].rise_k * job_response(&job, t, zone_model[z].tau_s);
		}
		tc_heat += TC_RISE_K * job_response(&job, t, TC_TAU_S);
		cj_heat += CJ_RISE_K * job_response(&job, t, TC_TAU_S);
	}
	for (int z = 0; z < SIM_ZONE_COUNT; z++) {
		out->zone_c[z] = idle + zone_model[z].offset_c + heat[z] +
				 sim_noise(seed, (uint64_t)z, t, 0.1);
		out->zone_mc[z] = sim_tsadc_mc(out->zone_c[z]);
	}
	double tc_c = idle + TC_OFFSET_C + tc_heat + sim_noise(seed, 100, t, 0.1);
	out->tc_raw = (int32_t)lround(tc_c / 0.25);
	double cj_c = idle + CJ_OFFSET_C + cj_heat + sim_noise(seed, 101, t, 0.05);
	out->tc_ambient_raw = (int32_t)lround(cj_c / 0.0625);

	// pwm-fan bound to soc-thermal's 60 °C trip (ROCK 5C BSP): one level per 3 K above 57 °C.
	double soc = out->zone_mc[SIM_ZONE_SOC] / 1000.0;
	out->fan_state = soc < 57 ? 0 : soc >= 66 ? 4 : 1 + (int)((soc - 57) / 3);

	uint64_t h = sim_hash(seed, (uint64_t)t, 'F');
	if (out->npu_busy) {
		// Pre- and post-processing keep the big cores near their top OPPs.
		out->cpu_khz[SIM_POLICY_LITTLE] = little_opp_khz[N_LITTLE - 1 - h % 3];
		out->cpu_khz[SIM_POLICY_BIG0] = big_opp_khz[N_BIG - 1 - (h >> 8) % 3];
		out->cpu_khz[SIM_POLICY_BIG1] = big_opp_khz[N_BIG - 1 - (h >> 16) % 3];
		out->npu_hz = SIM_NPU_BUSY_HZ;
		out->gpu_hz = 300000000LL + 100000000LL * (int64_t)((h >> 24) % 4);
		out->dmc_hz = 2112000000LL;
	} else {
		// Mostly at the bottom OPP, with the occasional housekeeping blip.
		out->cpu_khz[SIM_POLICY_LITTLE] = little_opp_khz[(h % 8) < 5 ? 0 : (h % 8) - 4];
		out->cpu_khz[SIM_POLICY_BIG0] = big_opp_khz[((h >> 8) % 8) < 6 ? 0 : 2];
		out->cpu_khz[SIM_POLICY_BIG1] = big_opp_khz[((h >> 16) % 8) < 7 ? 0 : 2];
		out->npu_hz = 300000000LL;
		out->gpu_hz = 300000000LL;
		out->dmc_hz = ((h >> 24) % 8) < 6 ? 528000000LL : 1068000000LL;
	}
	// The big cores' caps: each cooling state takes one OPP off the top (cpufreq_cooling).
	for (int p = 0; p < SIM_POLICY_COUNT; p++) {
		size_t n = p == SIM_POLICY_LITTLE ? N_LITTLE : N_BIG;
		const int64_t *opp = p == SIM_POLICY_LITTLE ? little_opp_khz : big_opp_khz;
		out->cool_state[p] = cool_state_at(seed, p, t);
		out->cap_khz[p] = opp[n - 1 - (size_t)out->cool_state[p]];
		if (out->cpu_khz[p] > out->cap_khz[p]) {
			out->cpu_khz[p] = out->cap_khz[p];
		}
	}
	model_load(seed, t, out);

	// The 5 V rail droops under load.
	sim_saradc(seed, t, 5.10 - 0.08 * heat[SIM_ZONE_NPU] / zone_model[SIM_ZONE_NPU].rise_k,
		   out->saradc_raw);
}

/* --- the workload's runs --- */

#define RERANK_SLOT_S 600

/* The "sdxl-image" run around the NPU job of window @w, if any. */
static bool sdxl_run(uint64_t seed, int64_t w, struct sim_run *run, struct job *job) {
	if (!window_job(seed, w, job)) {
		return false;
	}
	uint64_t h = sim_hash(seed, (uint64_t)w, 'S');
	// Pre and post stay under the 40 s before a window and 45 s after the latest job end,
	// so two runs of the label never overlap.
	*run = (struct sim_run){.label = "sdxl-image",
				.start = job->start - 10 - (int64_t)(h % 31),
				.end = job->end + 5 + (int64_t)((h >> 8) % 11),
				.exit_code = sim_unit(sim_mix(h)) < 1.0 / 6 ? 1 : 0};
	return true;
}

/* The "reranker" run of 10-minute slot @k, if any. */
static bool rerank_run(uint64_t seed, int64_t k, struct sim_run *run) {
	uint64_t h = sim_hash(seed, (uint64_t)k, 'R');
	if (sim_unit(h) >= 0.5) {
		return false;
	}
	int64_t start = k * RERANK_SLOT_S + (int64_t)(sim_mix(h) % 400);
	*run = (struct sim_run){.label = "reranker",
				.start = start,
				.end = start + 30 + (int64_t)((sim_mix(h) >> 16) % 121),
				.exit_code = sim_unit(sim_mix(h ^ 2)) < 1.0 / 12 ? 2 : 0};
	return true;
}

static int cmp_run(const void *a, const void *b) {
	const struct sim_run *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start ? 1 : strcmp(x->label, y->label);
}

size_t sim_runs(uint64_t seed, int64_t from, int64_t to, struct sim_run *out, size_t cap) {
	size_t n = 0;
	struct sim_run run;
	struct job job;
	for (int64_t w = timefmt_floor_div(from, WINDOW_S);
	     w <= timefmt_floor_div(to, WINDOW_S) + 1; w++) {
		if (sdxl_run(seed, w, &run, &job) && run.start >= from && run.start < to) {
			if (n < cap) {
				out[n] = run;
			}
			n++;
		}
	}
	for (int64_t k = timefmt_floor_div(from, RERANK_SLOT_S);
	     k <= timefmt_floor_div(to, RERANK_SLOT_S); k++) {
		if (rerank_run(seed, k, &run) && run.start >= from && run.start < to) {
			if (n < cap) {
				out[n] = run;
			}
			n++;
		}
	}
	if (out && n > 0) {
		qsort(out, n < cap ? n : cap, sizeof(*out), cmp_run);
	}
	return n;
}

/* Whether a run is under way at @t (started before it) or ends at @t, or a cooling device is
 * above state 0. */
static bool busy_at(uint64_t seed, int64_t t) {
	for (int p = 0; p < SIM_POLICY_COUNT; p++) {
		if (p != SIM_POLICY_LITTLE && cool_state_at(seed, p, t) > 0) {
			return true;
		}
	}
	// An hour holds at most three sdxl-image windows' runs and seven reranker slots'.
	struct sim_run runs[16];
	size_t n = sim_runs(seed, t - 3600, t, runs, 16);
	for (size_t i = 0; i < n && i < 16; i++) {
		if (runs[i].end >= t) {
			return true;
		}
	}
	return false;
}

int64_t sim_quiet_minute(uint64_t seed, int64_t t) {
	int64_t m = timefmt_floor_div(t, 60) * 60;
	while (busy_at(seed, m)) {
		m -= 60;
	}
	return m;
}

double sim_power_w(uint64_t seed, int64_t t) {
	double w = 2.95 + sim_noise(seed, 300, t, 0.05);
	struct sim_run run;
	struct job job;
	for (int64_t win = timefmt_floor_div(t, WINDOW_S) - 1;
	     win <= timefmt_floor_div(t, WINDOW_S) + 1; win++) {
		if (sdxl_run(seed, win, &run, &job) && t >= run.start && t < run.end) {
			// The NPU at 1.0 GHz draws most; loading and saving keep the big cores
			// busy.
			w += t >= job.start && t < job.end ? 6.2 * job.intensity : 1.8;
		}
	}
	int64_t k = timefmt_floor_div(t, RERANK_SLOT_S);
	if (rerank_run(seed, k, &run) && t >= run.start && t < run.end) {
		w += 2.4;
	}
	return w;
}

/* --- load: the CPUs' and the NPU cores' busy shares --- */

/*
 * What the workload of one window adds to each CPU's busy share, in whole percent, over an
 * interval in whole seconds, so the ticks of proc/stat (1/100 s) are exact integer sums:
 * loading the model keeps cpu4 busy and cpu5 half so, the NPU job feeds the big cores, saving
 * the image is cpu6's, and the reranker tokenizes on the little cores.
 */
struct load_phase {
	int64_t from, to;
	int pct[SIM_CPUS];
	bool rerank; // the reranker, whose model also runs on NPU core 2
};

#define MAX_PHASES 6 // model load, job, save, and up to three reranker runs

/* The phases of window @w's runs: each lies in [w * WINDOW_S - 40, (w + 1) * WINDOW_S). */
static size_t window_phases(uint64_t seed, int64_t w, struct load_phase *out) {
	size_t n = 0;
	struct sim_run run;
	struct job job;
	if (sdxl_run(seed, w, &run, &job)) {
		out[n++] = (struct load_phase){
			run.start, job.start, {8, 8, 8, 8, 85, 35, 5, 5}, false};
		out[n++] = (struct load_phase){
			job.start, job.end, {12, 12, 12, 12, 40, 40, 40, 40}, false};
		out[n++] = (struct load_phase){job.end, run.end, {6, 6, 6, 6, 5, 5, 80, 30}, false};
	}
	for (int64_t k = w * (WINDOW_S / RERANK_SLOT_S); k < (w + 1) * (WINDOW_S / RERANK_SLOT_S);
	     k++) {
		if (rerank_run(seed, k, &run)) {
			out[n++] = (struct load_phase){
				run.start, run.end, {50, 50, 45, 45, 0, 20, 0, 0}, true};
		}
	}
	return n;
}

/* Housekeeping: each CPU's busy share while window @w's workload is idle, %. */
static void window_base(uint64_t seed, int64_t w, int pct[SIM_CPUS]) {
	uint64_t h = sim_hash(seed, (uint64_t)w, 'L');
	for (int c = 0; c < SIM_CPUS; c++) {
		pct[c] = c == 0 ? 3 + (int)(h % 3) : c < 4 ? 1 + (int)((h >> (4 * c)) % 2) : 1;
	}
}

static int64_t overlap_s(int64_t a, int64_t b, int64_t from, int64_t to) {
	int64_t lo = a > from ? a : from, hi = b < to ? b : to;
	return hi > lo ? hi - lo : 0;
}

/*
 * What window @w contributes to the counters over [@from, @to): each CPU's busy ticks (percent
 * times seconds) and each policy's seconds at cooling state s or deeper (s = 1..).
 */
struct window_sums {
	int64_t busy[SIM_CPUS];
	int64_t deep_s[SIM_POLICY_COUNT][SIM_COOL_STATES];
};

static void window_sums(uint64_t seed, int64_t w, int64_t from, int64_t to,
			struct window_sums *out) {
	memset(out, 0, sizeof(*out));
	int base[SIM_CPUS];
	window_base(seed, w, base);
	int64_t idle_s = overlap_s(w * WINDOW_S, (w + 1) * WINDOW_S, from, to);
	struct load_phase ph[MAX_PHASES];
	size_t n = window_phases(seed, w, ph);
	for (int c = 0; c < SIM_CPUS; c++) {
		out->busy[c] = base[c] * idle_s;
		for (size_t i = 0; i < n; i++) {
			out->busy[c] += ph[i].pct[c] * overlap_s(ph[i].from, ph[i].to, from, to);
		}
	}
	for (int p = 0; p < SIM_POLICY_COUNT; p++) {
		struct cool_steps cs;
		if (!window_cooling(seed, w, p, &cs)) {
			continue;
		}
		for (int st = 1; st < SIM_COOL_STATES; st++) {
			out->deep_s[p][st] = overlap_s(cs.enter[st], cs.leave[st], from, to);
		}
	}
}

static void sums_add(struct window_sums *to, const struct window_sums *x) {
	for (int c = 0; c < SIM_CPUS; c++) {
		to->busy[c] += x->busy[c];
	}
	for (int p = 0; p < SIM_POLICY_COUNT; p++) {
		for (int st = 0; st < SIM_COOL_STATES; st++) {
			to->deep_s[p][st] += x->deep_s[p][st];
		}
	}
}

static void model_load(uint64_t seed, int64_t t, struct sim_state *out) {
	int64_t w_now = timefmt_floor_div(t, WINDOW_S);
	window_base(seed, w_now, out->cpu_busy_pct);
	bool rerank = false;
	for (int64_t w = w_now - 1; w <= w_now + 1; w++) {
		struct load_phase ph[MAX_PHASES];
		size_t n = window_phases(seed, w, ph);
		for (size_t i = 0; i < n; i++) {
			if (t < ph[i].from || t >= ph[i].to) {
				continue;
			}
			rerank = rerank || ph[i].rerank;
			for (int c = 0; c < SIM_CPUS; c++) {
				out->cpu_busy_pct[c] += ph[i].pct[c];
			}
		}
	}
	// The driver's own load window: a snapshot that wanders a little around the job's split.
	uint64_t h = sim_hash(seed, (uint64_t)t, 'N');
	if (out->npu_busy) {
		out->npu_load_pct[0] = 80 + (int)(h % 15);
		out->npu_load_pct[1] = 76 + (int)((h >> 8) % 15);
		out->npu_load_pct[2] = 38 + (int)((h >> 16) % 20);
	}
	if (rerank) { // the reranker's small model runs on core 2
		out->npu_load_pct[2] += 30 + (int)((h >> 24) % 10);
		out->npu_load_pct[2] = out->npu_load_pct[2] > 100 ? 100 : out->npu_load_pct[2];
	}
}

/* --- the tree --- */

static const char *const zone_types[SIM_ZONE_COUNT] = {
	"soc-thermal",    "bigcore0-thermal", "bigcore1-thermal", "littlecore-thermal",
	"center-thermal", "gpu-thermal",      "npu-thermal",
};

static const char *const cooling_types[] = {
	"cpufreq-cpu0", "cpufreq-cpu4", "cpufreq-cpu6", "devfreq-fb000000.gpu", "pwm-fan",
};
static const int cooling_max[] = {7, 10, 10, 7, 4};
#define N_COOLING (sizeof(cooling_types) / sizeof(cooling_types[0]))
#define FAN_CDEV  4

/* Whether the board has its pwm-fan (the last cooling device): a passive board has none. */
static bool has_fan(const struct sim *sim) {
	return !sim->board || sim->board->p.cooling != SIMBOARD_COOLING_PASSIVE;
}

static size_t n_cooling(const struct sim *sim) {
	return has_fan(sim) ? N_COOLING : N_COOLING - 1;
}

/* Cooling device @c's max_state: the big cores' take one OPP off their table per state. */
static int max_state(const struct sim *sim, size_t c) {
	return c == 1 || c == 2 ? (int)sim->n_big - 1 : cooling_max[c];
}

static const int policy_cpu[SIM_POLICY_COUNT] = {0, 4, 6};
static const char *const policy_cpus[SIM_POLICY_COUNT] = {"0 1 2 3", "4 5", "6 7"};

const char *sim_policy_name(enum sim_policy p) {
	static const char *const names[SIM_POLICY_COUNT] = {"policy0", "policy4", "policy6"};
	return names[p];
}

const char *sim_policy_cpus(enum sim_policy p) {
	return policy_cpus[p];
}

#define SARADC_DIR "devices/platform/fec10000.saradc"
#define TC_DIR     "devices/platform/feb20000.spi/spi_master/spi2/spi2.0"

static int mkdirs(int fd, const char *path) {
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdirat(fd, buf, 0755) < 0 && errno != EEXIST) {
				return -errno;
			}
			if (c == '\0') {
				return 0;
			}
			*p = c;
		}
	}
}

/*
 * Rewrites a file in place. Not O_TRUNC: ext4 flushes a file truncated to zero and rewritten
 * at close (auto_da_alloc), which made the week's backfill wait on the disk.
 */
static int put(int fd, const char *path, mode_t mode, const char *text, size_t len) {
	int f = openat(fd, path, O_WRONLY | O_CREAT | O_CLOEXEC, mode);
	if (f < 0) {
		return -errno;
	}
	ssize_t n = pwrite(f, text, len, 0);
	int err = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	if (err == 0 && ftruncate(f, (off_t)len) < 0) {
		err = -errno;
	}
	close(f);
	return err;
}

static int __attribute__((format(printf, 3, 0)))
vputf(struct sim *sim, const char *path, const char *fmt, va_list ap) {
	char text[512];
	int len = vsnprintf(text, sizeof(text), fmt, ap);
	int err = put(sim->fd, path, 0644, text, (size_t)len);
	if (err == -ENOENT) {
		char dir[512];
		snprintf(dir, sizeof(dir), "%s", path);
		*strrchr(dir, '/') = '\0';
		err = mkdirs(sim->fd, dir);
		if (err == 0) {
			err = put(sim->fd, path, 0644, text, (size_t)len);
		}
	}
	return err;
}

/* Writes printf output to @path under the tree, creating parent directories. */
static int __attribute__((format(printf, 3, 4)))
putf(struct sim *sim, const char *path, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	int err = vputf(sim, path, fmt, ap);
	va_end(ap);
	return err;
}

/* putf() to file @name in directory @dir. */
static int __attribute__((format(printf, 4, 5)))
put_attr(struct sim *sim, const char *dir, const char *name, const char *fmt, ...) {
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	va_list ap;
	va_start(ap, fmt);
	int err = vputf(sim, path, fmt, ap);
	va_end(ap);
	return err;
}

static int link_to(struct sim *sim, const char *target, const char *path) {
	char dir[512];
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	int err = mkdirs(sim->fd, dir);
	if (err == 0 && symlinkat(target, sim->fd, path) < 0 && errno != EEXIST) {
		err = -errno;
	}
	return err;
}

static void list_khz(char *out, size_t size, const int64_t *khz, size_t n) {
	size_t len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++) {
		len += (size_t)snprintf(out + len, size - len, "%s%lld", i ? " " : "",
					(long long)khz[i]);
	}
}

static int build_thermal(struct sim *sim) {
	int err = 0;
	char p[256], t[512];
	for (int z = 0; z < SIM_ZONE_COUNT; z++) {
		snprintf(p, sizeof(p), "devices/virtual/thermal/thermal_zone%d", z);
		err |= put_attr(sim, p, "type", "%s\n", zone_types[z]);
		err |= put_attr(sim, p, "mode", "enabled\n");
		err |= put_attr(sim, p, "policy", "step_wise\n");
		err |= put_attr(sim, p, "available_policies",
				"fair_share bang_bang step_wise user_space power_allocator\n");
		snprintf(t, sizeof(t), "../../devices/virtual/thermal/thermal_zone%d", z);
		snprintf(p, sizeof(p), "class/thermal/thermal_zone%d", z);
		err |= link_to(sim, t, p);
	}
	// Only soc-thermal has trips on the BSP; the ROCK 5C moves trip 0 to 60 °C for the fan.
	static const struct {
		int temp;
		const char *type;
	} trips[] = {{60000, "passive"}, {85000, "passive"}, {115000, "critical"}};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "devices/virtual/thermal/thermal_zone0/trip_point_%d_temp",
			 i);
		err |= putf(sim, p, "%d\n", trips[i].temp);
		snprintf(p, sizeof(p), "devices/virtual/thermal/thermal_zone0/trip_point_%d_type",
			 i);
		err |= putf(sim, p, "%s\n", trips[i].type);
		snprintf(p, sizeof(p), "devices/virtual/thermal/thermal_zone0/trip_point_%d_hyst",
			 i);
		err |= putf(sim, p, "2000\n");
	}
	if (has_fan(sim)) {
		err |= putf(sim, "devices/virtual/thermal/thermal_zone0/cdev0_trip_point", "0\n");
		err |= putf(sim, "devices/virtual/thermal/thermal_zone0/cdev0_weight", "0\n");
		err |= link_to(sim, "../cooling_device4",
			       "devices/virtual/thermal/thermal_zone0/cdev0");
	}
	// The big-core zones: a passive trip the NPU jobs cross (lowered from mainline's 75 °C, as
	// the fan's is, so the demo throttles), the critical one, and each zone's cpufreq cooling
	// device bound at the passive trip (policy4's cooling_device1, policy6's cooling_device2).
	for (int z = SIM_ZONE_BIGCORE0; z <= SIM_ZONE_BIGCORE1; z++) {
		static const struct {
			int temp;
			const char *type;
		} big_trips[] = {{SIM_BIG_TRIP_MC, "passive"}, {115000, "critical"}};
		for (int i = 0; i < 2; i++) {
			snprintf(p, sizeof(p),
				 "devices/virtual/thermal/thermal_zone%d/trip_point_%d_temp", z, i);
			err |= putf(sim, p, "%d\n", big_trips[i].temp);
			snprintf(p, sizeof(p),
				 "devices/virtual/thermal/thermal_zone%d/trip_point_%d_type", z, i);
			err |= putf(sim, p, "%s\n", big_trips[i].type);
			snprintf(p, sizeof(p),
				 "devices/virtual/thermal/thermal_zone%d/trip_point_%d_hyst", z, i);
			err |= putf(sim, p, "%d\n", SIM_BIG_HYST_MC);
		}
		snprintf(p, sizeof(p), "devices/virtual/thermal/thermal_zone%d/cdev0_trip_point",
			 z);
		err |= putf(sim, p, "0\n");
		snprintf(p, sizeof(p), "devices/virtual/thermal/thermal_zone%d/cdev0_weight", z);
		err |= putf(sim, p, "1024\n");
		snprintf(t, sizeof(t), "../cooling_device%d", z); // zone 1 -> cdev1, 2 -> cdev2
		snprintf(p, sizeof(p), "devices/virtual/thermal/thermal_zone%d/cdev0", z);
		err |= link_to(sim, t, p);
	}
	for (size_t c = 0; c < n_cooling(sim); c++) {
		snprintf(p, sizeof(p), "devices/virtual/thermal/cooling_device%zu", c);
		err |= put_attr(sim, p, "type", "%s\n", cooling_types[c]);
		err |= put_attr(sim, p, "max_state", "%d\n", max_state(sim, c));
		err |= put_attr(sim, p, "cur_state", "0\n");
		snprintf(t, sizeof(t), "../../devices/virtual/thermal/cooling_device%zu", c);
		snprintf(p, sizeof(p), "class/thermal/cooling_device%zu", c);
		err |= link_to(sim, t, p);
	}
	return err;
}

static int build_cpufreq(struct sim *sim) {
	int err = 0;
	char p[256], t[512], list[256];
	for (int i = 0; i < SIM_POLICY_COUNT; i++) {
		const int64_t *opp = i == SIM_POLICY_LITTLE ? little_opp_khz : sim->big_opp;
		size_t n = i == SIM_POLICY_LITTLE ? N_LITTLE : sim->n_big;
		static const char *const files[] = {"affected_cpus", "related_cpus"};
		snprintf(p, sizeof(p), "devices/system/cpu/cpufreq/policy%d", policy_cpu[i]);
		for (size_t f = 0; f < 2; f++) {
			err |= put_attr(sim, p, files[f], "%s\n", policy_cpus[i]);
		}
		list_khz(list, sizeof(list), opp, n);
		// The kernel leaves a trailing space.
		err |= put_attr(sim, p, "scaling_available_frequencies", "%s \n", list);
		err |= put_attr(sim, p, "cpuinfo_min_freq", "%lld\n", (long long)opp[0]);
		err |= put_attr(sim, p, "scaling_min_freq", "%lld\n", (long long)opp[0]);
		err |= put_attr(sim, p, "cpuinfo_max_freq", "%lld\n", (long long)opp[n - 1]);
		err |= put_attr(sim, p, "scaling_max_freq", "%lld\n", (long long)opp[n - 1]);
		err |= put_attr(sim, p, "cpuinfo_transition_latency", "40000\n");
		err |= put_attr(sim, p, "scaling_driver", "cpufreq-dt\n");
		err |= put_attr(sim, p, "scaling_governor", "schedutil\n");
		err |= put_attr(
			sim, p, "scaling_available_governors",
			"conservative ondemand userspace powersave performance schedutil\n");
		err |= put_attr(sim, p, "scaling_setspeed", "<unsupported>\n");
	}
	for (int cpu = 0; cpu < 8; cpu++) {
		int policy = cpu < 4 ? 0 : cpu < 6 ? 4 : 6;
		snprintf(t, sizeof(t), "../cpufreq/policy%d", policy);
		snprintf(p, sizeof(p), "devices/system/cpu/cpu%d/cpufreq", cpu);
		err |= link_to(sim, t, p);
		snprintf(p, sizeof(p), "devices/system/cpu/cpu%d/online", cpu);
		err |= putf(sim, p, "1\n");
	}
	err |= putf(sim, "devices/system/cpu/online", "0-7\n");
	err |= putf(sim, "devices/system/cpu/possible", "0-7\n");
	err |= putf(sim, "devices/system/cpu/present", "0-7\n");
	return err;
}

static const struct {
	const char *name, *dir, *governor, *freqs;
} devfreqs[] = {
	{"dmc", "devices/platform/dmc/devfreq/dmc", "dmc_ondemand",
	 "528000000 1068000000 1560000000 2112000000"},
	{"fb000000.gpu", "devices/platform/fb000000.gpu/devfreq/fb000000.gpu", "simple_ondemand",
	 "300000000 400000000 500000000 600000000 700000000 800000000 900000000 1000000000"},
	{"fdab0000.npu", "devices/platform/fdab0000.npu/devfreq/fdab0000.npu", "rknpu_ondemand",
	 "300000000 400000000 500000000 600000000 700000000 800000000 900000000 1000000000"},
};
#define N_DEVFREQ 3

static int build_devfreq(struct sim *sim) {
	int err = 0;
	char p[256], t[512];
	for (int i = 0; i < N_DEVFREQ; i++) {
		const char *d = devfreqs[i].dir;
		err |= put_attr(sim, d, "name", "%s\n", devfreqs[i].name);
		err |= put_attr(sim, d, "governor", "%s\n", devfreqs[i].governor);
		err |= put_attr(sim, d, "available_governors",
				"rknpu_ondemand dmc_ondemand userspace powersave performance "
				"simple_ondemand\n");
		err |= put_attr(sim, d, "available_frequencies", "%s\n", devfreqs[i].freqs);
		const char *last = strrchr(devfreqs[i].freqs, ' ') + 1;
		err |= put_attr(sim, d, "min_freq", "%.*s\n", (int)strcspn(devfreqs[i].freqs, " "),
				devfreqs[i].freqs);
		err |= put_attr(sim, d, "max_freq", "%s\n", last);
		err |= put_attr(sim, d, "polling_interval", "50\n");
		snprintf(t, sizeof(t), "../../%s", d);
		snprintf(p, sizeof(p), "class/devfreq/%s", devfreqs[i].name);
		err |= link_to(sim, t, p);
	}
	return err;
}

static int build_iio(struct sim *sim) {
	int err = 0;
	char p[512];
	// The devicetree nodes the devices point to, for matching on compatible.
	static const char saradc_compat[] = "rockchip,rk3588-saradc";
	static const char tc_compat[] = "maxim,max31855k";
	// The board's name, NUL-terminated as the kernel prints device-tree strings.
	err |= mkdirs(sim->fd, "firmware/devicetree/base");
	err |= put(sim->fd, "firmware/devicetree/base/model", 0444, "Radxa ROCK 5C", 14);
	err |= mkdirs(sim->fd, "firmware/devicetree/base/saradc@fec10000");
	err |= put(sim->fd, "firmware/devicetree/base/saradc@fec10000/compatible", 0444,
		   saradc_compat, sizeof(saradc_compat));
	err |= mkdirs(sim->fd, "firmware/devicetree/base/spi@feb20000/thermocouple@0");
	err |= put(sim->fd, "firmware/devicetree/base/spi@feb20000/thermocouple@0/compatible", 0444,
		   tc_compat, sizeof(tc_compat));

	err |= putf(sim, SARADC_DIR "/iio:device0/name", "fec10000.saradc\n");
	err |= putf(sim, SARADC_DIR "/iio:device0/in_voltage_scale", "0.439453125\n");
	err |= link_to(sim, "../../../firmware/devicetree/base/saradc@fec10000",
		       SARADC_DIR "/of_node");
	err |= link_to(sim, "../../../../firmware/devicetree/base/saradc@fec10000",
		       SARADC_DIR "/iio:device0/of_node");
	err |= link_to(sim, "../../../" SARADC_DIR "/iio:device0", "bus/iio/devices/iio:device0");

	err |= putf(sim, TC_DIR "/iio:device1/name", "maxim_thermocouple\n");
	err |= putf(sim, TC_DIR "/iio:device1/in_temp_scale", "250\n");
	err |= putf(sim, TC_DIR "/iio:device1/in_temp_ambient_scale", "62.500000\n");
	err |= putf(sim, TC_DIR "/iio:device1/in_temp_thermocouple_type", "K\n");
	snprintf(p, sizeof(p), "%s", TC_DIR "/iio:device1/of_node");
	err |= link_to(sim,
		       "../../../../../../../firmware/devicetree/base/spi@feb20000/thermocouple@0",
		       p);
	err |= link_to(sim, "../../../" TC_DIR "/iio:device1", "bus/iio/devices/iio:device1");
	return err;
}

/* An INA226 on the 5 V input (hwmon ina2xx driver): 25 mW power steps at a 1 mA current LSB. */
#define INA_DIR "devices/platform/feb40000.i2c/i2c-4/4-0040/hwmon/hwmon0"

static int build_hwmon(struct sim *sim) {
	int err = putf(sim, INA_DIR "/name", "ina226\n");
	err |= putf(sim, INA_DIR "/shunt_resistor", "10000\n");
	err |= putf(sim, INA_DIR "/update_interval", "2\n");
	err |= link_to(sim, "../../" INA_DIR, "class/hwmon/hwmon0");
	return err;
}

/* The counters' sums from the boot to @t: whole windows from the prefix, the last three cut. */
static void counter_sums(struct sim *sim, int64_t t, struct window_sums *out) {
	struct sim_prefix *pf = &sim->prefix;
	int64_t boot = pf->w0 * WINDOW_S, w_now = timefmt_floor_div(t, WINDOW_S);
	memset(out, 0, sizeof(*out));
	if (w_now - 1 > pf->w0) {
		size_t need = (size_t)(w_now - 1 - pf->w0); // windows w0 .. w_now - 2 are whole
		if (need + 1 > pf->cap) {
			pf->cap = need + 1 > 2 * pf->cap ? need + 1 : 2 * pf->cap;
			pf->before = xrealloc(pf->before, pf->cap * sizeof(*pf->before));
		}
		if (pf->n == 0) {
			memset(&pf->before[0], 0, sizeof(pf->before[0]));
			pf->n = 1;
		}
		for (; pf->n <= need; pf->n++) {
			struct window_sums ws;
			window_sums(sim->seed, pf->w0 + (int64_t)pf->n - 1, boot, INT64_MAX, &ws);
			pf->before[pf->n] = pf->before[pf->n - 1];
			sums_add(&pf->before[pf->n], &ws);
		}
		*out = pf->before[need];
	}
	for (int64_t w = w_now - 1; w <= w_now + 1; w++) {
		if (w >= pf->w0) {
			struct window_sums ws;
			window_sums(sim->seed, w, boot, t, &ws);
			sums_add(out, &ws);
		}
	}
}

/* proc/stat: each CPU's ticks since the boot, its busy ones split as a kernel's would be. */
static int write_stat(struct sim *sim, int64_t t, const int64_t busy_ticks[SIM_CPUS]) {
	int64_t up = t - sim->prefix.w0 * WINDOW_S;
	int64_t total = up > 0 ? 100 * up : 0;
	int64_t f[SIM_CPUS + 1][7] = {{0}}; // user system idle iowait irq softirq; all CPUs first
	for (int c = 0; c < SIM_CPUS; c++) {
		int64_t busy = busy_ticks[c], *x = f[c + 1];
		x[1] = busy / 5;                  // system
		x[4] = busy / 50;                 // irq
		x[5] = busy / 40;                 // softirq
		x[0] = busy - x[1] - x[4] - x[5]; // user
		x[3] = total / 400;               // iowait
		x[2] = total - busy - x[3];       // idle
		for (int k = 0; k < 6; k++) {
			f[0][k] += x[k];
		}
	}
	char text[2048];
	size_t len = 0;
	for (int c = 0; c <= SIM_CPUS; c++) {
		char name[8];
		snprintf(name, sizeof(name), c ? "cpu%d" : "cpu ", c - 1);
		const int64_t *x = f[c];
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"%s %lld 0 %lld %lld %lld %lld %lld 0 0 0\n", name,
					(long long)x[0], (long long)x[1], (long long)x[2],
					(long long)x[3], (long long)x[4], (long long)x[5]);
	}
	len += (size_t)snprintf(text + len, sizeof(text) - len,
				"intr 0\nctxt %lld\nbtime %lld\nprocesses %lld\nprocs_running 1\n"
				"procs_blocked 0\nsoftirq 0\n",
				(long long)(total * 3), (long long)(sim->prefix.w0 * WINDOW_S),
				(long long)(up > 0 ? up / 7 : 0));
	int err = put(sim->fd, "proc/stat", 0444, text, len);
	if (err == -ENOENT) {
		err = mkdirs(sim->fd, "proc");
		err = err ? err : put(sim->fd, "proc/stat", 0444, text, len);
	}
	return err;
}

/* Each cooling device's time at each state since the boot, ms: what time_in_state_ms shows. */
typedef int64_t sim_residency[N_COOLING][SIMBOARD_MAX_STATES];

/* The timetable's residencies at @t, from the counters' sums: every device's time at state 0 but
 * what the big policies spent deeper; the GPU's never leaves state 0. */
static void timetable_residency(const struct sim *sim, int64_t t, const struct window_sums *sums,
				sim_residency tis) {
	int64_t up_ms = 1000 * (t > sim->prefix.w0 * WINDOW_S ? t - sim->prefix.w0 * WINDOW_S : 0);
	memset(tis, 0, sizeof(sim_residency));
	for (size_t c = 0; c < N_COOLING; c++) {
		// cooling_device0-2 are policy0, 4 and 6's
		const int64_t *deep = c < SIM_POLICY_COUNT ? sums->deep_s[c] : NULL;
		tis[c][0] = up_ms - (deep ? 1000 * deep[1] : 0);
		for (int st = 1; deep && st < SIM_COOL_STATES; st++) {
			int64_t deeper = st + 1 < SIM_COOL_STATES ? deep[st + 1] : 0;
			tis[c][st] = 1000 * (deep[st] - deeper);
		}
	}
}

/* The cpufreq and devfreq cooling devices' stats/time_in_state_ms (the fan keeps none). */
static int write_cooling_stats(struct sim *sim, sim_residency tis) {
	int err = 0;
	for (size_t c = 0; c < N_COOLING && err == 0; c++) {
		if (c == FAN_CDEV) {
			continue;
		}
		char text[1024], p[128];
		size_t len = 0;
		for (int st = 0; st <= max_state(sim, c); st++) {
			int64_t here = st < SIMBOARD_MAX_STATES ? tis[c][st] : 0;
			len += (size_t)snprintf(text + len, sizeof(text) - len, "state%d\t%lld\n",
						st, (long long)here);
		}
		snprintf(p, sizeof(p),
			 "devices/virtual/thermal/cooling_device%zu/stats/time_in_state_ms", c);
		err = put(sim->fd, p, 0444, text, len);
		if (err == -ENOENT) {
			*strrchr(p, '/') = '\0';
			err = mkdirs(sim->fd, p);
			snprintf(p, sizeof(p),
				 "devices/virtual/thermal/cooling_device%zu/stats/time_in_state_ms",
				 c);
			err = err ? err : put(sim->fd, p, 0444, text, len);
		}
	}
	return err;
}

/*
 * Writes the board's state @s at @t into the tree: the counters (@busy ticks per CPU, @tis), the
 * caps and states, the NPU's load, the zones, the fan, the clocks, the ADCs and the draw @watts.
 */
static int write_state(struct sim *sim, int64_t t, const struct sim_state *s_in,
		       const int64_t busy[SIM_CPUS], sim_residency tis, double watts) {
	const struct sim_state s = *s_in;
	char p[512];
	int err = write_stat(sim, t, busy);
	err = err ? err : write_cooling_stats(sim, tis);
	for (int i = 0; i < SIM_POLICY_COUNT; i++) {
		snprintf(p, sizeof(p), "devices/system/cpu/cpufreq/policy%d/scaling_max_freq",
			 policy_cpu[i]);
		err = err ? err : putf(sim, p, "%lld\n", (long long)s.cap_khz[i]);
		snprintf(p, sizeof(p), "devices/virtual/thermal/cooling_device%d/cur_state", i);
		err = err ? err : putf(sim, p, "%d\n", s.cool_state[i]);
	}
	err = err ? err
		  : putf(sim, "debug/rknpu/load",
			 "NPU load:  Core0: %3d%%, Core1: %3d%%, Core2: %3d%%,\n",
			 s.npu_load_pct[0], s.npu_load_pct[1], s.npu_load_pct[2]);
	for (int z = 0; z < SIM_ZONE_COUNT; z++) {
		snprintf(p, sizeof(p), "devices/virtual/thermal/thermal_zone%d/temp", z);
		err = err ? err : putf(sim, p, "%d\n", (int)s.zone_mc[z]);
	}
	if (has_fan(sim)) {
		snprintf(p, sizeof(p), "devices/virtual/thermal/cooling_device%d/cur_state",
			 FAN_CDEV);
		err = err ? err : putf(sim, p, "%d\n", s.fan_state);
	}
	for (int i = 0; i < SIM_POLICY_COUNT; i++) {
		snprintf(p, sizeof(p), "devices/system/cpu/cpufreq/policy%d/scaling_cur_freq",
			 policy_cpu[i]);
		err = err ? err : putf(sim, p, "%lld\n", (long long)s.cpu_khz[i]);
	}
	const int64_t dev_hz[N_DEVFREQ] = {s.dmc_hz, s.gpu_hz, s.npu_hz};
	for (int i = 0; i < N_DEVFREQ; i++) {
		const char *d = devfreqs[i].dir;
		long long hz = (long long)dev_hz[i];
		err = err ? err : put_attr(sim, d, "cur_freq", "%lld\n", hz);
		err = err ? err : put_attr(sim, d, "target_freq", "%lld\n", hz);
		// The vendor NPU driver reports a constant 100 % (platform brief §3).
		int load = i == 2 ? 100 : s.npu_busy ? 60 : 5;
		err = err ? err : put_attr(sim, d, "load", "%d@%lldHz\n", load, hz);
	}
	for (int i = 0; i < SIM_SARADC_CHANNELS; i++) {
		snprintf(p, sizeof(p), SARADC_DIR "/iio:device0/in_voltage%d_raw", i);
		err = err ? err : putf(sim, p, "%d\n", (int)s.saradc_raw[i]);
	}
	err = err ? err : putf(sim, TC_DIR "/iio:device1/in_temp_raw", "%d\n", (int)s.tc_raw);
	err = err ? err
		  : putf(sim, TC_DIR "/iio:device1/in_temp_ambient_raw", "%d\n",
			 (int)s.tc_ambient_raw);
	long long uw = 25000LL * llround(watts / 0.025);
	err = err ? err : putf(sim, INA_DIR "/power1_input", "%lld\n", uw);
	return err;
}

/* A board's cpufreq policies' stats/time_in_state ("<kHz> <10 ms units>" per OPP), as a kernel
 * with CONFIG_CPU_FREQ_STAT keeps it: what a run's clock residency is counted from. */
static int write_cpufreq_stats(struct sim *sim, const struct simboard *b) {
	int err = 0;
	for (int pol = 0; pol < SIM_POLICY_COUNT && err == 0; pol++) {
		size_t n;
		const int64_t *opp =
			pol == SIM_POLICY_LITTLE ? simboard_little_opp(&n) : simboard_big_opp(&n);
		char text[1024], p[128];
		size_t len = 0;
		for (size_t i = 0; i < n; i++) {
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%lld %lld\n",
						(long long)opp[i],
						(long long)(b->opp_ms[pol][i] / 10));
		}
		snprintf(p, sizeof(p), "devices/system/cpu/cpufreq/policy%d/stats/time_in_state",
			 policy_cpu[pol]);
		err = put(sim->fd, p, 0444, text, len);
		if (err == -ENOENT) {
			snprintf(p, sizeof(p), "devices/system/cpu/cpufreq/policy%d/stats",
				 policy_cpu[pol]);
			err = mkdirs(sim->fd, p);
			snprintf(p, sizeof(p),
				 "devices/system/cpu/cpufreq/policy%d/stats/time_in_state",
				 policy_cpu[pol]);
			err = err ? err : put(sim->fd, p, 0444, text, len);
		}
	}
	return err;
}

/* The board under work at @t_ms: stepped over the interval since its last write with the mean
 * load declared meanwhile. */
static int write_board(struct sim *sim, int64_t t_ms) {
	struct simboard *b = sim->board;
	struct simboard_load load;
	simload_collect(sim->fd, b->t_ms, t_ms, &load);
	simboard_step(b, &load, t_ms);
	struct sim_state s;
	simboard_state(b, sim->seed, &s);
	int64_t busy[SIM_CPUS];
	for (int c = 0; c < SIM_CPUS; c++) {
		busy[c] = (int64_t)b->busy_ticks[c];
	}
	sim_residency tis = {{0}};
	for (int pol = 0; pol < SIM_POLICY_COUNT; pol++) {
		memcpy(tis[pol], b->state_ms[pol], sizeof(b->state_ms[pol]));
	}
	// The GPU's devfreq cooling never leaves state 0: its time is the uptime.
	tis[3][0] = b->state_ms[SIM_POLICY_LITTLE][0];
	int err = write_cpufreq_stats(sim, b);
	if (err < 0) {
		return err;
	}
	return write_state(sim, timefmt_floor_div(t_ms, 1000), &s, busy, tis,
			   simboard_power_w(b, sim->seed));
}

int sim_write_ms(struct sim *sim, int64_t t_ms) {
	if (sim->board) {
		return write_board(sim, t_ms);
	}
	return sim_write(sim, timefmt_floor_div(t_ms, 1000));
}

int sim_write(struct sim *sim, int64_t t) {
	if (sim->board) {
		return write_board(sim, t * 1000);
	}
	struct sim_state s;
	sim_model(sim->seed, t, &s);
	struct window_sums sums;
	counter_sums(sim, t, &sums);
	sim_residency tis;
	timetable_residency(sim, t, &sums, tis);
	return write_state(sim, t, &s, sums.busy, tis, sim_power_w(sim->seed, t));
}

/* The files a board under work has beyond the timetable's tree: what a campaign's fingerprint
 * reads (RAM, kernel, command line, compatible, the NPU driver, the DMC's tunables), its own
 * description (sim/board) and the directory declared work goes to (simload.h). */
static int build_board(struct sim *sim, const struct simboard_params *bp) {
	static const char compat[] = "radxa,rock-5c\0rockchip,rk3588s";
	int err = put(sim->fd, "firmware/devicetree/base/compatible", 0444, compat, sizeof(compat));
	err |= putf(sim, "proc/meminfo",
		    "MemTotal:        8029836 kB\nMemFree:         7400112 kB\n"
		    "MemAvailable:    7612440 kB\nSwapTotal:       4014916 kB\n"
		    "SwapFree:        4014916 kB\n");
	err |= putf(sim, "proc/sys/kernel/osrelease", "6.1.75-rk3588-sim\n");
	err |= putf(sim, "proc/cmdline", "root=/dev/mmcblk0p2 rootwait console=ttyS2,1500000 rw\n");
	err |= putf(sim, "debug/rknpu/version", "RKNPU driver: v0.9.6\n");
	err |= put_attr(sim, devfreqs[0].dir, "upthreshold", "40\n");
	err |= put_attr(sim, devfreqs[0].dir, "downdifferential", "20\n");
	err |= mkdirs(sim->fd, SIMLOAD_DIR);
	err |= putf(sim, "sim/board", "ambient_c %g\nbig_max_khz %lld\ncooling %s\ntime_scale %g\n",
		    bp->ambient_c,
		    (long long)(bp->big_max_khz ? bp->big_max_khz : sim->big_opp[sim->n_big - 1]),
		    bp->cooling == SIMBOARD_COOLING_PASSIVE ? "passive" : "fan", bp->time_scale);
	return err;
}

struct sim *sim_create(const char *parent, uint64_t seed, int64_t t) {
	return sim_create_board(parent, seed, t, NULL);
}

struct sim *sim_create_board(const char *parent, uint64_t seed, int64_t t,
			     const struct simboard_params *board) {
	if (!parent) {
		// A RAM file system when there is one: the tree is rewritten every cycle.
		parent = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR")
			 : access("/dev/shm", W_OK) == 0       ? "/dev/shm"
							       : "/tmp";
	}
	struct sim *sim = xcalloc(1, sizeof(*sim));
	sim->seed = seed;
	sim->fd = -1;
	sim->prefix.w0 = timefmt_floor_div(t, WINDOW_S) - 8 * DAY_S / WINDOW_S; // the boot
	sim->big_opp = big_opp_khz;
	sim->n_big = N_BIG;
	if (board) {
		sim->board = xcalloc(1, sizeof(*sim->board));
		simboard_init(sim->board, board, t * 1000, t - sim->prefix.w0 * WINDOW_S);
		sim->big_opp = simboard_big_opp(&sim->n_big);
	}
	sim->root = xasprintf("%s/thermlog-sim.XXXXXX", parent);
	if (!mkdtemp(sim->root)) {
		log_errno("could not create the simulated sysfs tree in %s", parent);
		free(sim->root);
		free(sim);
		return NULL;
	}
	sim->fd = open(sim->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sim->fd < 0) {
		log_errno("could not open %s", sim->root);
		goto err_tree;
	}
	int err = build_thermal(sim) | build_cpufreq(sim) | build_devfreq(sim) | build_iio(sim) |
		  build_hwmon(sim) | (board ? build_board(sim, board) : 0);
	if (err == 0) {
		err = sim_write(sim, t);
	}
	if (err != 0) {
		log_error("could not build the simulated sysfs tree in %s", sim->root);
		goto err_tree;
	}
	return sim;
err_tree:
	sim_destroy(sim);
	return NULL;
}

const char *sim_root(const struct sim *sim) {
	return sim->root;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
}

void sim_destroy(struct sim *sim) {
	if (!sim) {
		return;
	}
	if (sim->fd >= 0) {
		close(sim->fd);
	}
	if (nftw(sim->root, remove_entry, 16, FTW_DEPTH | FTW_PHYS) < 0) {
		log_errno("could not remove %s", sim->root);
	}
	free(sim->prefix.before);
	free(sim->board);
	free(sim->root);
	free(sim);
}
