/* A run's throttling: the stored throttle episodes clipped to its interval (runs-internal.h). */
#include "runs-internal.h"

#include <math.h>
#include <stdlib.h>

void runs_episodes_read(struct store *store, int64_t from_ms, int64_t to_ms,
			struct runs_episodes *e) {
	*e = (struct runs_episodes){0};
	int64_t horizon = 0;
	struct store_info info;
	e->readable = throttle_report_list(store, from_ms, to_ms, &e->list, &e->n) == 0 &&
		      store_raw_horizon(store, &horizon) == 0 && store_info(store, &info) == 0 &&
		      info.first_cycle > 0;
	e->horizon_ms =
		(e->readable && info.first_cycle > horizon ? info.first_cycle : horizon) * 1000;
}

void runs_episodes_finish(struct runs_episodes *e) {
	free(e->list);
	*e = (struct runs_episodes){0};
}

bool runs_run_throttle(const struct runs_episodes *e, const struct store_run *run,
		       struct throttle_report *r, double *share) {
	*r = (struct throttle_report){0};
	*share = NAN;
	if (!e || !e->readable || !run->ended || run->start_ms < e->horizon_ms) {
		return false;
	}
	throttle_report_window(e->list, e->n, run->start_ms, run->end_ms, NULL, r);
	*share = 0;
	for (size_t i = 0; i < r->n_domains; i++) {
		*share = r->domains[i].share > *share ? r->domains[i].share : *share;
	}
	return true;
}

void runs_write_throttle(struct json *j, const struct runs_episodes *e,
			 const struct store_run *run) {
	struct throttle_report r;
	double share;
	json_key(j, "throttle");
	if (!runs_run_throttle(e, run, &r, &share)) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	json_field_double(j, "share", share);
	json_key(j, "domains");
	json_array_begin(j);
	for (size_t i = 0; i < r.n_domains; i++) {
		const struct throttle_report_domain *d = &r.domains[i];
		if (d->throttled_ms > 0) { // not an episode that only touches the run's bounds
			throttle_report_write_domain(d, j);
		}
	}
	json_array_end(j);
	json_object_end(j);
	throttle_report_finish(&r);
}
