/*
 * Temperature profiles (lifetime-profile.c): the COSEL mission-profile vector, bin edges and
 * alignment, self-heating, the CSV written and read back, and the profile over a seeded
 * store against the lifetime report's own figures.
 */
#include "lifetime-profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fixture.h"
#include "store.h"
#include "test.h"

static struct capacitor_config cap(double life_h, double temp_c) {
	struct capacitor_config c;
	config_capacitor_init(&c);
	c.name = "C1";
	c.sensor = "thermal/soc-thermal";
	c.rated_life_h = life_h;
	c.rated_temp_c = temp_c;
	return c;
}

static struct lifetime_params params(const struct capacitor_config *cc) {
	struct lifetime_params p;
	char *err = NULL;
	if (!lifetime_params_init(&p, cc, &err)) {
		printf("Bail out! %s\n", err);
		exit(1);
	}
	return p;
}

/* COSEL's worked example: 1000 h @105 °C, 8 h each at 45 / 55 / 65 °C, B_t = 2 -> 57.2 °C. */
static void test_cosel(void) {
	struct capacitor_config cc = cap(1000, 105);
	struct lifetime_params p = params(&cc);
	const struct lifetime_point pts[] = {{45, 8}, {55, 8}, {65, 8}};
	struct lifetime_profile_entry pe = {0};
	is_int(lifetime_profile_bin(&p, pts, 3, 5, &pe), 0, "COSEL: binned");
	is_int(pe.n_bins, 5, "COSEL: 5 K bins from [45,50) to [65,70), the empty ones between");
	double want_from[] = {45, 50, 55, 60, 65}, want_h[] = {8, 0, 8, 0, 8};
	for (size_t b = 0; b < pe.n_bins && b < 5; b++) {
		char what[96];
		snprintf(what, sizeof(what), "COSEL: bin %zu is [%g,%g) with %g h", b, want_from[b],
			 want_from[b] + 5, want_h[b]);
		ok(pe.bins[b].from_c == want_from[b] && pe.bins[b].to_c == want_from[b] + 5 &&
			   pe.bins[b].hours == want_h[b],
		   what);
	}
	ok(pe.bins[0].temp_c == 45 && pe.bins[2].temp_c == 55 && pe.bins[4].temp_c == 65,
	   "COSEL: a bin of one temperature stands at that temperature");
	ok(isnan(pe.bins[1].temp_c) && pe.bins[1].consumed_fraction == 0,
	   "COSEL: an empty bin has no temperature and no damage");
	// L = sum A / sum (A / L_a): L_a = 64000, 32000, 16000 h
	double d = 8.0 / 64000 + 8.0 / 32000 + 8.0 / 16000;
	is_near(pe.consumed_fraction, d, 1e-15, "COSEL: consumed = sum A / L_a");
	is_near(pe.hours, 24, 0, "COSEL: 24 h in all");
	double t_eq = lifetime_temp_for_life(&p, pe.hours / pe.consumed_fraction);
	is_near(t_eq, 57.2239, 1e-5, "COSEL: equivalent temperature 57.2 °C");
	ok(fabs(t_eq - 57.2) < 0.05, "COSEL: 57.2 °C to the source's rounding");
	// The calculator's own figure over the same steps agrees.
	struct lifetime_acc acc;
	lifetime_acc_init(&acc);
	for (size_t i = 0; i < 3; i++) {
		lifetime_acc_add(&acc, &p, pts[i].temp_c, pts[i].dt_h);
	}
	struct lifetime_result r;
	lifetime_summarize(&p, &acc, 0, &r);
	is_near(r.equivalent_temp_c, t_eq, 1e-12, "COSEL: the same T_eq as lifetime_summarize()");
	free(pe.bins);
}

/* Edges: multiples of the width, a value on an edge in the upper bin, negative temperatures. */
static void test_edges(void) {
	struct capacitor_config cc = cap(2000, 105);
	struct lifetime_params p = params(&cc);
	const struct lifetime_point pts[] = {{50, 1}, {49.999, 1}, {51.9, 2}, {52, 0.5}};
	struct lifetime_profile_entry pe = {0};
	lifetime_profile_bin(&p, pts, 4, 2, &pe);
	ok(pe.n_bins == 3 && pe.bins[0].from_c == 48 && pe.bins[0].hours == 1 &&
		   pe.bins[1].from_c == 50 && pe.bins[1].to_c == 52 && pe.bins[1].hours == 3 &&
		   pe.bins[2].from_c == 52 && pe.bins[2].hours == 0.5,
	   "2 K bins: 49.999 in [48,50), 50 and 51.9 in [50,52), 52 in [52,54)");
	free(pe.bins);

	const struct lifetime_point cold[] = {{-7.5, 1}, {-2.5, 1}};
	lifetime_profile_bin(&p, cold, 2, 5, &pe);
	ok(pe.n_bins == 2 && pe.bins[0].from_c == -10 && pe.bins[0].to_c == -5 &&
		   pe.bins[1].from_c == -5 && pe.bins[1].to_c == 0,
	   "below 0 °C: [-10,-5) and [-5,0)");
	free(pe.bins);

	const struct lifetime_point fine[] = {{45.31, 1}, {45.42, 1}};
	lifetime_profile_bin(&p, fine, 2, 0.1, &pe);
	ok(pe.n_bins == 2 && pe.bins[0].from_c == 45.3 && pe.bins[0].to_c == 45.4 &&
		   pe.bins[1].to_c == 45.5,
	   "0.1 K edges read as their decimals (45.3, not 45.300000000000004)");
	free(pe.bins);

	const struct lifetime_point wide[] = {{-100, 1}, {400, 1}};
	is_int(lifetime_profile_bin(&p, wide, 2, 0.01, &pe), -E2BIG, "too many bins refused");
	ok(pe.bins == NULL && pe.n_bins == 0, "nothing allocated when refused");

	lifetime_profile_bin(&p, NULL, 0, 5, &pe);
	ok(pe.n_bins == 0 && pe.bins == NULL && pe.hours == 0, "no points: no bins");

	char *err = NULL;
	ok(!lifetime_profile_bin_check(0, "--bin", &err) && err && strstr(err, "--bin") &&
		   strstr(err, "got 0"),
	   "width 0 refused, naming the option");
	free(err);
	err = NULL;
	ok(!lifetime_profile_bin_check(-5, "--bin", &err), "a negative width refused");
	free(err);
	err = NULL;
	ok(!lifetime_profile_bin_check(NAN, "--bin", &err), "NAN refused");
	free(err);
	ok(lifetime_profile_bin_check(5, "--bin", &err) &&
		   lifetime_profile_bin_check(0.1, "x", &err),
	   "5 and 0.1 K accepted");
}

/* Bins of the model temperature: the rise shifts every value before binning. */
static void test_self_heating(void) {
	struct capacitor_config cc = cap(2000, 105);
	cc.self_heating = SELF_HEATING_RISE;
	cc.rise_k = 3;
	struct lifetime_params p = params(&cc);
	const struct lifetime_point pts[] = {{46, 2}, {47.5, 1}, {48.5, 1}};
	struct lifetime_profile_entry pe = {0};
	lifetime_profile_bin(&p, pts, 3, 5, &pe);
	ok(pe.n_bins == 2 && pe.bins[0].from_c == 45 && pe.bins[0].hours == 2 &&
		   pe.bins[1].from_c == 50 && pe.bins[1].hours == 2,
	   "+3 K: measured 46 in [45,50), 47.5 and 48.5 (50.5, 51.5) in [50,55)");
	double d = 2 / lifetime_life_at(&p, 46) + 1 / lifetime_life_at(&p, 47.5) +
		   1 / lifetime_life_at(&p, 48.5);
	is_near(pe.consumed_fraction, d, 1e-14, "damage with the rise, as the model ages it");
	ok(pe.bins[1].temp_c > 50.5 && pe.bins[1].temp_c < 51.5,
	   "a bin's temperature lies between its model temperatures");
	free(pe.bins);
}

/* The CSV written, read back, and the reader's errors. */
static void test_csv(void) {
	struct capacitor_config cc = cap(2000, 105);
	struct lifetime_params p = params(&cc);
	const struct lifetime_point pts[] = {
		{41.25, 3.5}, {43.75, 1.0 / 60}, {58.5, 2}, {61, 7}, {61.5, 1}};
	struct lifetime_profile_entry pe = {0};
	lifetime_profile_bin(&p, pts, 5, 5, &pe);
	struct buf b;
	buf_init(&b);
	lifetime_profile_write_csv(&pe, &b);
	ok(strncmp(b.data, "temp_c,hours\r\n", 14) == 0, "the CSV's header");
	FILE *in = fmemopen(b.data, b.len, "r");
	struct lifetime_point *back = NULL;
	size_t n = 0;
	char *err = NULL;
	ok(lifetime_profile_read_csv(in, &back, &n, &err), "the CSV reads back");
	fclose(in);
	is_int(n, 3, "one row per non-empty bin ([40,45) [55,60) [60,65))");
	struct lifetime_acc acc;
	lifetime_acc_init(&acc);
	for (size_t i = 0; i < n; i++) {
		lifetime_acc_add(&acc, &p, back[i].temp_c, back[i].dt_h);
	}
	struct lifetime_result r;
	lifetime_summarize(&p, &acc, 0, &r);
	is_near(r.consumed_fraction, pe.consumed_fraction, 1e-14,
		"the rows' damage is the profile's (round trip)");
	is_near(r.observed_h, pe.hours, 1e-15, "the rows' hours are the profile's");
	free(back);
	free(pe.bins);
	buf_finish(&b);

	static const struct {
		const char *text, *want;
	} bad[] = {
		{"temp_c,hours\r\n45,8\r\n55\r\n",
		 "line 3: expected TEMP_C,HOURS (2 fields), got 1"},
		{"45,eight\n", "line 1: expected TEMP_C,HOURS as numbers"},
		{"temp_c,hours\n", "no rows"},
		{"\n\n", "no rows"},
		{"45,0\n", "line 1: hours must be positive"},
		{"45,-1\n", "line 1: hours must be positive"},
		{"900,1\n", "line 1: temperature 900 °C is out of range"},
		{"45,8\ntemp_c,hours\n", "line 2: expected TEMP_C,HOURS as numbers"},
		{"\"45,8\n", "line 1"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		in = fmemopen((void *)bad[i].text, strlen(bad[i].text), "r");
		err = NULL;
		bool good = lifetime_profile_read_csv(in, &back, &n, &err);
		fclose(in);
		char what[128];
		snprintf(what, sizeof(what), "bad CSV %zu: %s", i, bad[i].want);
		ok(!good && back == NULL && n == 0 && err && strstr(err, bad[i].want), what);
		if (err && !strstr(err, bad[i].want)) {
			printf("#   got %s\n", err);
		}
		free(err);
	}
	const char *plain = "45,8\n\n55,8\r\n65,8\n";
	in = fmemopen((void *)plain, strlen(plain), "r");
	ok(lifetime_profile_read_csv(in, &back, &n, &err) && n == 3 && back[2].temp_c == 65,
	   "no header, a blank line and CRLF are fine");
	fclose(in);
	free(back);
}

/* Over a seeded store: the bins add up to the report's hours and consumed life. */
static void test_over_store(void) {
	struct store *store = fixture_store(rng);
	if (!store) {
		printf("Bail out! no fixture store\n");
		exit(1);
	}
	struct capacitor_config caps[] = {cap(2000, 105), cap(5000, 105), cap(2000, 105)};
	caps[1].name = "C2 rise";
	caps[1].self_heating = SELF_HEATING_RISE;
	caps[1].rise_k = 4;
	caps[2].name = "C3 missing";
	caps[2].sensor = "thermal/none";
	struct config cfg = {.interval_ms = 60000, .capacitors = caps, .n_capacitors = 3};
	static const char *const passes[] = {"raw", "merged days", "pruned to rollups"};
	for (int pass = 0; pass < 3; pass++) {
		const char *when = passes[pass];
		if (pass == 1) {
			store_maintain(store, FIXTURE_T0 + 10 * 86400, 400 * 86400);
		} else if (pass == 2) { // the first day's raw samples pruned: hours from rollups
			store_maintain(store, FIXTURE_T0 + 86400, 86400 - 12 * 3600);
		}
		struct lifetime_report rep;
		char *err = NULL;
		int rc = lifetime_report_compute(store, &cfg, INT64_MIN, INT64_MAX, false, 0, &rep,
						 &err);
		is_int(rc, 0, "report computed");
		struct lifetime_profile pr;
		is_int(lifetime_profile_build(&rep, 5, NULL, &pr, &err), 0, "profile built");
		is_int(pr.n, 3, "one profile per capacitor");
		for (size_t i = 0; i < 2 && i < pr.n; i++) {
			const struct lifetime_profile_entry *pe = &pr.entries[i];
			char what[160];
			snprintf(what, sizeof(what),
				 "%s, %s: the bins' hours are the observed hours", when,
				 pe->e->cc->name);
			is_near(pe->hours, pe->e->r.observed_h, 1e-12, what);
			snprintf(what, sizeof(what), "%s, %s: the bins' damage is the report's D",
				 when, pe->e->cc->name);
			is_near(pe->consumed_fraction, pe->e->r.consumed_fraction, 1e-12, what);
			ok(pe->n_bins > 1 && pe->bins[0].hours > 0 &&
				   pe->bins[pe->n_bins - 1].hours > 0,
			   "bins start and end non-empty");
		}
		ok(pr.n == 3 && pr.entries[2].n_bins == 0, "a missing sensor has no bins");
		if (pass == 2) {
			const struct lifetime_result *r = &rep.entries[0].r;
			bool trimmed = false;
			for (size_t k = 0; k < r->n_warnings; k++) {
				trimmed = trimmed ||
					  r->warnings[k].code == LIFETIME_WARN_HISTORY_TRIMMED;
			}
			ok(trimmed, "pruned: the report reads rollups (history_trimmed)");
		}
		struct buf b;
		buf_init(&b);
		struct json j;
		json_init(&j, &b, false);
		lifetime_profile_write_json(&pr, &j);
		ok(strstr(b.data, "\"bin_k\":5,\"capacitors\":[{\"name\":\"C1\"") &&
			   strstr(b.data, "\"measured_from_c\"") &&
			   strstr(b.data, "\"code\":\"sensor_not_found\""),
		   "JSON: names, measured edges with the rise, the report's warnings");
		buf_finish(&b);
		lifetime_profile_finish(&pr);

		is_int(lifetime_profile_build(&rep, 5, "C2 rise", &pr, &err), 0, "one capacitor");
		ok(pr.n == 1 && strcmp(pr.entries[0].e->cc->name, "C2 rise") == 0,
		   "the one asked for");
		lifetime_profile_finish(&pr);
		err = NULL;
		is_int(lifetime_profile_build(&rep, 5, "C9", &pr, &err), -ENOENT,
		       "an unknown capacitor");
		ok(err && strstr(err, "'C9'") && strstr(err, "'C2 rise'"),
		   "the message lists the configured names");
		free(err);
		lifetime_report_finish(&rep);
	}

	// An empty window: no bins, the report's no_data warning.
	struct lifetime_report rep;
	char *err = NULL;
	lifetime_report_compute(store, &cfg, 1000, 2000, false, 0, &rep, &err);
	struct lifetime_profile pr;
	lifetime_profile_build(&rep, 5, NULL, &pr, &err);
	ok(pr.n == 3 && pr.entries[0].n_bins == 0 && pr.entries[0].e->r.n_warnings > 0 &&
		   pr.entries[0].e->r.warnings[0].code == LIFETIME_WARN_NO_DATA,
	   "an empty window: no bins, no_data");
	lifetime_profile_finish(&pr);
	lifetime_report_finish(&rep);
	store_close(store);
}

int main(int argc, char **argv) {
	test_seed(argc, argv);
	test_cosel();
	test_edges();
	test_self_heating();
	test_csv();
	test_over_store();
	return test_done();
}
