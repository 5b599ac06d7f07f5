/* A campaign's order, resume point, gate verdict and time left (campaignplan.h): pure. */
#include "campaignplan.h"

#include <math.h>
#include <string.h>

#include "unit.h"

/* Step @s's k-th slot (0-based): its warmup runs first, then its repetitions. */
static struct campaignplan_slot kth(const struct campaignplan_step *s, uint32_t step, unsigned k) {
	if (k < s->warmup) {
		return (struct campaignplan_slot){.step = step, .rep = k + 1, .warmup = true};
	}
	return (struct campaignplan_slot){.step = step, .rep = k - s->warmup + 1};
}

size_t campaignplan_slots(const struct campaignplan_step *steps, size_t n, bool interleaved,
			  struct campaignplan_slot *out, size_t cap) {
	size_t count = 0;
	unsigned rounds = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned k = steps[i].warmup + steps[i].repetitions;
		rounds = k > rounds ? k : rounds;
	}
	if (!interleaved) {
		for (size_t i = 0; i < n; i++) {
			for (unsigned k = 0; k < steps[i].warmup + steps[i].repetitions; k++) {
				if (out && count < cap) {
					out[count] = kth(&steps[i], (uint32_t)i, k);
				}
				count++;
			}
		}
		return count;
	}
	for (unsigned k = 0; k < rounds; k++) {
		for (size_t i = 0; i < n; i++) {
			if (k < steps[i].warmup + steps[i].repetitions) {
				if (out && count < cap) {
					out[count] = kth(&steps[i], (uint32_t)i, k);
				}
				count++;
			}
		}
	}
	return count;
}

bool campaignplan_same(const struct campaignplan_slot *a, const struct campaignplan_slot *b) {
	return a->step == b->step && a->rep == b->rep && a->warmup == b->warmup;
}

size_t campaignplan_resume(const struct campaignplan_slot *plan, size_t n,
			   const struct campaignplan_slot *ended, size_t n_ended) {
	for (size_t i = 0; i < n; i++) {
		bool done = false;
		for (size_t k = 0; k < n_ended && !done; k++) {
			done = campaignplan_same(&plan[i], &ended[k]);
		}
		if (!done) {
			return i;
		}
	}
	return n;
}

/* --- the gate ----------------------------------------------------------------------------- */

void campaigngate_check(const struct campaigngate_input *in, struct campaigngate_verdict *out) {
	*out = (struct campaigngate_verdict){.state = CAMPAIGNGATE_PASS};
	const struct campaigngate_zone *hot = NULL, *cold = NULL, *missing = NULL;
	double hot_k = 0, cold_k = 0;
	for (size_t i = 0; i < in->n_zones; i++) {
		const struct campaigngate_zone *z = &in->zones[i];
		if (!z->present || !isfinite(z->now_c)) {
			missing = missing ? missing : z;
			continue;
		}
		double off = z->now_c - z->baseline_c;
		if (off > in->tolerance_k && off > hot_k) {
			hot = z;
			hot_k = off;
		} else if (off < -in->tolerance_k && off < cold_k) {
			cold = z;
			cold_k = off;
		}
	}
	if (in->open_episode) {
		out->state = CAMPAIGNGATE_THROTTLED;
	} else if (in->cooling) {
		out->state = CAMPAIGNGATE_COOLING;
	} else if (missing) {
		out->state = CAMPAIGNGATE_NO_DATA;
		out->zone = missing;
	} else if (hot) {
		out->state = CAMPAIGNGATE_HOT;
		out->zone = hot;
		out->off_k = hot_k;
	} else if (cold) {
		out->state = CAMPAIGNGATE_COLD;
		out->zone = cold;
		out->off_k = cold_k;
	}
}

const char *campaigngate_state_name(enum campaigngate_state state) {
	static const char *const names[] = {"pass", "throttled", "cooling",
					    "hot",  "cold",      "no_data"};
	return names[state];
}

void campaigngate_describe(const struct campaigngate_input *in,
			   const struct campaigngate_verdict *v, struct buf *out) {
	double factor;
	const char *c = unit_symbol("celsius", &factor);
	switch (v->state) {
	case CAMPAIGNGATE_PASS:
		buf_printf(out, "passed: every zone within ± %g K of its idle baseline",
			   in->tolerance_k);
		break;
	case CAMPAIGNGATE_THROTTLED:
		buf_printf(out, "%s is throttled", in->open_episode);
		break;
	case CAMPAIGNGATE_COOLING:
		buf_printf(out, "%s at state %lld (a passive trip's cooling)", in->cooling,
			   (long long)in->cooling_state);
		break;
	case CAMPAIGNGATE_NO_DATA:
		buf_printf(out, "%s has no reading", v->zone->key);
		break;
	case CAMPAIGNGATE_HOT:
	case CAMPAIGNGATE_COLD:
		buf_printf(out, "%s %.1f %s, %.1f K %s its idle baseline %.1f (± %g K)",
			   v->zone->key, v->zone->now_c * factor, c, fabs(v->off_k),
			   v->state == CAMPAIGNGATE_HOT ? "over" : "under",
			   v->zone->baseline_c * factor, in->tolerance_k);
		break;
	}
}

double campaignplan_eta_s(const struct campaignplan_slot *todo, size_t n, const double *mean_s,
			  const double *wait_s, double fallback_s) {
	double total = 0;
	for (size_t i = 0; i < n; i++) {
		double m = mean_s[todo[i].step], w = wait_s[todo[i].step];
		total += isfinite(m) ? m + (isfinite(w) ? w : 0) : fallback_s;
	}
	return total;
}
