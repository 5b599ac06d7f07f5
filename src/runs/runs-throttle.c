/*
 * A run's throttling: the stored throttle episodes clipped to its interval (the kernel's
 * counters where they counted it), the board's share and the share of the domains the run
 * loaded (runs-internal.h).
 */
#include "runs-internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonread.h"
#include "xalloc.h"

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

/*
 * A run's throttled time per domain, exact where the kernel counted it: a domain whose capping
 * cooling device's time_in_state_ms moved during the run (the run's figures, cooling.devices:
 * the counters read at its start and stop) was capped that long, the most of its devices'
 * (method time_in_state_ms). Elsewhere the episodes clipped to the run (method episodes), whose
 * ends are cycle stamps: one cycle either way, the spacing from an episode's last cycle to
 * its end. Averaged over runs the episodes alone read low by half a cycle (a cap is first
 * seen by the cycle after it).
 */
static void count_exactly(struct throttle_report *r, const struct jsonread_node *tree) {
	for (size_t i = 0; i < r->n_domains; i++) {
		struct throttle_report_domain *d = &r->domains[i];
		d->method = "episodes";
		d->uncertainty_ms = -1;
		for (size_t k = 0; k < r->n; k++) {
			const struct throttle_episode *ep = &r->episodes[k];
			int64_t cycle_ms = (ep->end - ep->last_seen) * 1000;
			if (strcmp(ep->domain, d->name) == 0 && ep->end &&
			    cycle_ms > d->uncertainty_ms) {
				d->uncertainty_ms = cycle_ms;
			}
		}
	}
	const struct jsonread_node *devs = jsonread_get(jsonread_get(tree, "cooling"), "devices");
	for (size_t i = 0; devs && devs->kind == JSONREAD_ARRAY && i < devs->n; i++) {
		const char *domain = jsonread_string(jsonread_get(devs->items[i], "domain"));
		const struct jsonread_node *active = jsonread_get(devs->items[i], "active_s");
		int64_t ms = active && active->kind == JSONREAD_NUMBER && active->number >= 0
				     ? llround(active->number * 1000)
				     : 0;
		if (!domain || ms <= 0 || ms > r->to_ms - r->from_ms) {
			continue; // no time counted, or more than the run lasted (a counter reset)
		}
		struct throttle_report_domain *d = throttle_report_domain(r, domain);
		if (strcmp(d->method ? d->method : "", "time_in_state_ms") != 0 ||
		    ms > d->throttled_ms) {
			d->throttled_ms = ms;
		}
		d->method = "time_in_state_ms";
		d->uncertainty_ms = 0;
		d->share = (double)ms / (double)(r->to_ms - r->from_ms);
	}
	throttle_report_sort_domains(r);
}

static void add_loaded(struct runs_loaded *l, const char *domain) {
	if (l->n < RUNS_LOADED_MAX) {
		snprintf(l->domains[l->n++], THROTTLE_NAME_LEN, "%s", domain);
	}
}

/* Whether a load figure {"mean_pct": ...} says busy. */
static bool busy(const struct jsonread_node *figure) {
	const struct jsonread_node *m = jsonread_get(figure, "mean_pct");
	return m && m->kind == JSONREAD_NUMBER && m->number >= RUNS_LOADED_PCT;
}

struct jsonread_node *runs_figures_parse(const char *figures) {
	struct jsonread_error err;
	size_t len = figures ? strlen(figures) : 0;
	return len ? jsonread_parse(figures, len, len, &err) : NULL;
}

/* The domains the run's figures (parsed: @tree) say it loaded. */
static void loaded_of(const struct jsonread_node *tree, struct runs_loaded *out) {
	*out = (struct runs_loaded){0};
	const struct jsonread_node *load = jsonread_get(tree, "load");
	if (load && load->kind == JSONREAD_OBJECT) {
		out->known = true;
		const struct jsonread_node *clusters = jsonread_get(load, "clusters");
		for (size_t i = 0; clusters && clusters->kind == JSONREAD_ARRAY && i < clusters->n;
		     i++) {
			const char *name =
				jsonread_string(jsonread_get(clusters->items[i], "name"));
			if (name && busy(clusters->items[i])) {
				char domain[THROTTLE_NAME_LEN];
				snprintf(domain, sizeof(domain), "cpufreq/%s", name);
				add_loaded(out, domain);
			}
		}
		const struct jsonread_node *npu = jsonread_get(load, "npu");
		bool npu_busy = false;
		for (size_t i = 0; npu && npu->kind == JSONREAD_ARRAY && i < npu->n; i++) {
			npu_busy = npu_busy || busy(npu->items[i]);
		}
		if (npu_busy) {
			add_loaded(out, "npu");
		}
	}
}

void runs_loaded_of(const char *figures, struct runs_loaded *out) {
	struct jsonread_node *tree = runs_figures_parse(figures);
	loaded_of(tree, out);
	jsonread_node_free(tree);
}

/* Whether throttle domain @domain is one of @l's: a cluster by name, the NPU's devfreq by "npu". */
static bool loaded(const struct runs_loaded *l, const char *domain) {
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->domains[i], domain) == 0 ||
		    (strcmp(l->domains[i], "npu") == 0 && strncmp(domain, "devfreq/", 8) == 0 &&
		     strstr(domain + 8, "npu"))) {
			return true;
		}
	}
	return false;
}

bool runs_run_throttle_parsed(const struct runs_episodes *e, const struct store_run *run,
			      const struct jsonread_node *figures, struct throttle_report *r,
			      struct runs_shares *shares) {
	*r = (struct throttle_report){0};
	*shares = (struct runs_shares){.board = NAN, .loaded = NAN};
	loaded_of(figures, &shares->loaded_domains);
	if (!e || !e->readable || !run->ended || run->start_ms < e->horizon_ms) {
		return false;
	}
	throttle_report_window(e->list, e->n, run->start_ms, run->end_ms, NULL, r);
	count_exactly(r, figures);
	shares->board = 0;
	double most_loaded = 0;
	for (size_t i = 0; i < r->n_domains; i++) {
		double s = r->domains[i].share;
		shares->board = s > shares->board ? s : shares->board;
		if (loaded(&shares->loaded_domains, r->domains[i].name) && s > most_loaded) {
			most_loaded = s;
		}
	}
	shares->loaded = shares->loaded_domains.known ? most_loaded : NAN;
	return true;
}

bool runs_run_throttle(const struct runs_episodes *e, const struct store_run *run,
		       struct throttle_report *r, struct runs_shares *shares) {
	struct jsonread_node *tree = runs_figures_parse(run->figures);
	bool known = runs_run_throttle_parsed(e, run, tree, r, shares);
	jsonread_node_free(tree);
	return known;
}

void runs_write_throttle(struct json *j, const struct runs_episodes *e,
			 const struct store_run *run) {
	struct throttle_report r;
	struct runs_shares shares;
	json_key(j, "throttle");
	if (!runs_run_throttle(e, run, &r, &shares)) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	json_field_double(j, "share", shares.board);
	json_field_double(j, "loaded_share", shares.loaded);
	json_key(j, "loaded_domains");
	if (shares.loaded_domains.known) {
		json_array_begin(j);
		for (size_t i = 0; i < shares.loaded_domains.n; i++) {
			json_string(j, shares.loaded_domains.domains[i]);
		}
		json_array_end(j);
	} else {
		json_null(j);
	}
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
