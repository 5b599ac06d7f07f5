/* thermlog lifetime: capacitor life from the stored history, and a calculator without one. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli-options.h"
#include "cli-output.h"
#include "cli.h"
#include "json.h"
#include "lifetime-profile.h"
#include "lifetime-report.h"
#include "lifetime.h"
#include "query.h"
#include "store.h"
#include "table.h"
#include "timefmt.h"
#include "xalloc.h"

static const char calc_usage[] =
	"usage: thermlog lifetime calc --rated-life-h H --rated-temp-c T\n"
	"                              (--temp-c T | --profile T:HOURS[,T:HOURS...]\n"
	"                               | --profile-csv FILE)\n"
	"                              [--model bt|arrhenius] [--bt B] [--ea-ev E]\n"
	"                              [--type wet|polymer] [--self-heating-k K]\n"
	"                              [--cap-years Y] [--uncertainty-k K] [--json]\n"
	"\n"
	"Expected life of an electrolytic capacitor rated H hours at T °C, at a constant\n"
	"temperature or over a profile of (temperature, hours) steps (Miner's rule). Years are\n"
	"of 8760 h; lives above the cap (15 years) are reported capped and uncapped.\n"
	"--profile-csv reads the steps from a CSV file of temp_c,hours rows (- for standard\n"
	"input), such as `thermlog lifetime profile --csv` writes. Lives are also given for the\n"
	"temperature K cooler and hotter (--uncertainty-k, default 2 K: a thermocouple).\n";

static const char history_usage[] =
	"usage: thermlog [--db PATH] [-c FILE] lifetime [--from T] [--to T] [--include-unsynced]\n"
	"                [--json]\n"
	"       thermlog lifetime profile --help\n"
	"       thermlog lifetime series --help\n"
	"       thermlog lifetime calc --help\n"
	"\n"
	"Consumed and remaining life of every configured capacitor from the stored temperature\n"
	"history (the whole history by default). T: ISO 8601, unix seconds, -7d, now.\n";

static bool parse_number(const char *opt, const char *s, double *out) {
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) {
		fprintf(stderr, "thermlog lifetime calc: %s: '%s' is not a number\n", opt, s);
		return false;
	}
	*out = v;
	return true;
}

/* A keyword option of calc: @parsed says whether @s was one of @expected; false with the message.
 */
static bool keyword_option(bool parsed, const char *opt, const char *s, const char *expected) {
	if (!parsed) {
		fprintf(stderr, "thermlog lifetime calc: %s '%s': expected %s\n", opt, s, expected);
	}
	return parsed;
}

static void print_hours(const char *what, double h) {
	printf("%-28s %.0f h (%.2f years of 8760 h)\n", what, h, h / LIFETIME_HOURS_PER_YEAR);
}

/* One line per warning, after "NAME: " when @name is given. */
static void print_warnings(const struct lifetime_result *r, const char *name) {
	for (size_t i = 0; i < r->n_warnings; i++) {
		printf("%s%swarning [%s]: %s\n", name ? name : "", name ? ": " : "",
		       lifetime_warning_name(r->warnings[i].code), r->warnings[i].message);
	}
}

/* The steps of --profile-csv FILE (- = standard input); false with the message printed. */
static bool read_profile_csv(const char *path, struct lifetime_point **pts, size_t *n) {
	bool std_in = strcmp(path, "-") == 0;
	FILE *in = std_in ? stdin : cli_input_open(path);
	if (!in) {
		fprintf(stderr, "thermlog lifetime calc: --profile-csv %s: %s\n", path,
			strerror(errno));
		return false;
	}
	char *err = NULL;
	bool good = lifetime_profile_read_csv(in, pts, n, &err);
	if (!good) {
		fprintf(stderr, "thermlog lifetime calc: --profile-csv %s: %s\n", path, err);
		free(err);
	}
	if (!std_in) {
		fclose(in);
	}
	return good;
}

enum calc_opt {
	OPT_LIFE = 1000,
	OPT_TEMP_RATED,
	OPT_TEMP,
	OPT_PROFILE,
	OPT_PROFILE_CSV,
	OPT_MODEL,
	OPT_BT,
	OPT_EA,
	OPT_TYPE,
	OPT_SELF,
	OPT_CAP,
	OPT_UNCERTAINTY,
};

/* The steps of calc: --profile, --profile-csv or one hour at --temp-c; false with the message. */
static bool calc_points(const char *profile, const char *profile_csv, double temp,
			struct lifetime_point **pts, size_t *n) {
	char *err = NULL;
	if (profile) {
		if (!lifetime_profile_parse(profile, pts, n, &err)) {
			fprintf(stderr, "thermlog lifetime calc: --profile: %s\n", err);
			free(err);
			return false;
		}
		return true;
	}
	if (profile_csv) {
		return read_profile_csv(profile_csv, pts, n);
	}
	*pts = xcalloc(1, sizeof(**pts));
	(*pts)[0] = (struct lifetime_point){temp, 1};
	*n = 1;
	return true;
}

/* lifetime calc --json. */
static void print_calc_json(const struct lifetime_params *p, const struct lifetime_result *r) {
	// The calculator has no part age: only the life cap applies, not the remaining-life one.
	bool capped = r->life_uncapped_h > p->life_cap_h;
	struct buf b;
	buf_init(&b);
	struct json j;
	json_init(&j, &b, true);
	json_object_begin(&j);
	json_field_double(&j, "life_h", r->life_h);
	json_field_double(&j, "life_uncapped_h", r->life_uncapped_h);
	json_field_bool(&j, "capped", capped);
	json_field_double(&j, "equivalent_temp_c", r->equivalent_temp_c);
	json_field_double(&j, "life_at_mean_temp_h", r->life_at_mean_temp_h);
	json_field_double(&j, "consumed_fraction_per_hour", r->rate_per_h);
	json_key(&j, "warnings");
	lifetime_report_write_warnings(r, &j);
	json_field_double(&j, "self_heating_k", p->rise_k);
	json_field_double(&j, "equivalent_effective_temp_c", r->equivalent_temp_c + p->rise_k);
	json_key(&j, "band");
	lifetime_report_write_band(r, &j);
	json_object_end(&j);
	buf_putc(&b, '\n');
	fputs(b.data, stdout);
	buf_finish(&b);
}

/* lifetime calc's text: a profile's or one temperature's life, the band, the warnings. */
static void print_calc_text(const struct lifetime_params *p, const struct lifetime_result *r,
			    bool profile, size_t n, double temp) {
	bool capped = r->life_uncapped_h > p->life_cap_h;
	if (profile) {
		if (p->rise_k != 0) {
			printf("profile: %zu steps over %.6g h, mean %.2f °C measured, %.2f °C "
			       "effective (%+g K)\n",
			       n, r->observed_h, r->mean_temp_c, r->mean_temp_c + p->rise_k,
			       p->rise_k);
		} else {
			printf("profile: %zu steps over %.6g h, mean %.2f °C\n", n, r->observed_h,
			       r->mean_temp_c);
		}
		print_hours("effective life (Miner):", r->life_h);
		if (capped) {
			print_hours("  uncapped (theoretical):", r->life_uncapped_h);
		}
		if (p->rise_k != 0) {
			printf("%-28s %.2f °C measured, %.2f °C effective\n",
			       "equivalent temperature:", r->equivalent_temp_c,
			       r->equivalent_temp_c + p->rise_k);
		} else {
			printf("%-28s %.2f °C\n", "equivalent temperature:", r->equivalent_temp_c);
		}
		print_hours("life at the mean temp.:", r->life_at_mean_temp_h);
		printf("%-28s %.1f %% longer than Miner's\n", "  mean-temperature estimate",
		       100 * (r->life_at_mean_temp_h / r->life_uncapped_h - 1));
	} else {
		char what[96];
		if (p->rise_k != 0) {
			snprintf(what, sizeof(what),
				 "life at %g °C measured, %g °C effective (%+g K):", temp,
				 temp + p->rise_k, p->rise_k);
		} else {
			snprintf(what, sizeof(what), "life at %g °C:", temp);
		}
		print_hours(what, r->life_h);
		if (capped) {
			print_hours("  uncapped (theoretical):", r->life_uncapped_h);
		}
	}
	printf("%-28s %.0f-%.0f h (the temperature %g K hotter and cooler; uncapped)\n",
	       "  sensor uncertainty:", r->band.life_uncapped_h[0], r->band.life_uncapped_h[1],
	       r->band.uncertainty_k);
	printf("%-28s %.6g\n", "consumed per hour:", r->rate_per_h);
	print_warnings(r, NULL);
}

/* What calc's options say. */
struct calc_args {
	struct capacitor_config cc; // the capacitor described by the options
	double temp;
	bool have_life, have_rated;
};

/* One option of calc that sets a number or a keyword (a cli_option_fn). */
static int calc_option(void *state, int opt, char *arg) {
	struct calc_args *c = state;
	bool good = true;
	switch (opt) {
	case OPT_LIFE:
		good = parse_number("--rated-life-h", arg, &c->cc.rated_life_h);
		c->have_life = true;
		break;
	case OPT_TEMP_RATED:
		good = parse_number("--rated-temp-c", arg, &c->cc.rated_temp_c);
		c->have_rated = true;
		break;
	case OPT_TEMP:
		good = parse_number("--temp-c", arg, &c->temp);
		if (good && !(c->temp > -LIFETIME_KELVIN_OFFSET && c->temp < 500)) {
			fprintf(stderr, "thermlog lifetime calc: --temp-c %g °C is out of range\n",
				c->temp);
			good = false;
		}
		break;
	case OPT_MODEL:
		good = keyword_option(lifetime_model_parse(arg, &c->cc.model), "--model", arg,
				      "bt or arrhenius");
		break;
	case OPT_BT:
		good = parse_number("--bt", arg, &c->cc.bt);
		break;
	case OPT_EA:
		good = parse_number("--ea-ev", arg, &c->cc.ea_ev);
		break;
	case OPT_TYPE:
		good = keyword_option(capacitor_type_parse(arg, &c->cc.type), "--type", arg,
				      "wet or polymer");
		break;
	case OPT_SELF:
		good = parse_number("--self-heating-k", arg, &c->cc.rise_k);
		c->cc.self_heating = SELF_HEATING_RISE;
		break;
	case OPT_CAP:
		good = parse_number("--cap-years", arg, &c->cc.life_cap_years);
		break;
	case OPT_UNCERTAINTY:
		good = parse_number("--uncertainty-k", arg, &c->cc.uncertainty_k);
		break;
	default: // --help, or an option getopt_long refused
		return 0;
	}
	return good ? 1 : -1;
}

static int cmd_calc(struct cli_context *ctx, int argc, char **argv) {
	(void)ctx; // the calculator reads no configuration and no database
	static const struct option opts[] = {
		{"rated-life-h", required_argument, NULL, OPT_LIFE},
		{"rated-temp-c", required_argument, NULL, OPT_TEMP_RATED},
		{"temp-c", required_argument, NULL, OPT_TEMP},
		{"profile", required_argument, NULL, OPT_PROFILE},
		{"profile-csv", required_argument, NULL, OPT_PROFILE_CSV},
		{"model", required_argument, NULL, OPT_MODEL},
		{"bt", required_argument, NULL, OPT_BT},
		{"ea-ev", required_argument, NULL, OPT_EA},
		{"type", required_argument, NULL, OPT_TYPE},
		{"self-heating-k", required_argument, NULL, OPT_SELF},
		{"cap-years", required_argument, NULL, OPT_CAP},
		{"uncertainty-k", required_argument, NULL, OPT_UNCERTAINTY},
		CLI_OPTION_JSON,
		CLI_OPTION_HELP,
		{0},
	};
	struct calc_args c = {.temp = NAN};
	config_capacitor_init(&c.cc);
	c.cc.name = "calc";
	c.cc.sensor = "";
	c.cc.rated_life_h = NAN;
	c.cc.rated_temp_c = NAN;
	const char *profile = NULL, *profile_csv = NULL;
	bool json = false;
	const struct plain_option plain[] = {
		{OPT_PROFILE, &profile, NULL},
		{OPT_PROFILE_CSV, &profile_csv, NULL},
		{CLI_OPT_JSON, NULL, &json},
		{0},
	};
	int rc;
	if (!cli_read_options("lifetime calc", calc_usage, "", opts, plain, calc_option, &c, argc,
			      argv, &rc)) {
		return rc;
	}
	if (!c.have_life || !c.have_rated) {
		fprintf(stderr,
			"thermlog lifetime calc: --rated-life-h and --rated-temp-c are "
			"required\n%s",
			calc_usage);
		return CLI_EXIT_USAGE;
	}
	if ((profile != NULL) + (profile_csv != NULL) + !isnan(c.temp) != 1) {
		fprintf(stderr,
			"thermlog lifetime calc: give one of --temp-c, --profile or --profile-csv\n%s",
			calc_usage);
		return CLI_EXIT_USAGE;
	}

	static const struct lifetime_names flags = {
		.rated_life_h = "--rated-life-h",
		.rated_temp_c = "--rated-temp-c",
		.model = "--model ",
		.bt = "--bt",
		.ea_ev = "--ea-ev",
		.rise_k = "--self-heating-k",
		.life_cap_years = "--cap-years",
		.uncertainty_k = "--uncertainty-k",
	};
	struct lifetime_params p;
	char *err = NULL;
	if (!lifetime_params_init_named(&p, &c.cc, &flags, &err)) {
		fprintf(stderr, "thermlog lifetime calc: %s\n", err);
		free(err);
		return CLI_EXIT_USAGE;
	}
	struct lifetime_point *pts = NULL;
	size_t n = 0;
	if (!calc_points(profile, profile_csv, c.temp, &pts, &n)) {
		return CLI_EXIT_USAGE;
	}
	struct lifetime_acc acc;
	lifetime_acc_init(&acc);
	for (size_t i = 0; i < n; i++) {
		lifetime_acc_add(&acc, &p, pts[i].temp_c, pts[i].dt_h);
	}
	free(pts);
	struct lifetime_result r;
	lifetime_summarize(&p, &acc, 0, &r);
	if (json) {
		print_calc_json(&p, &r);
	} else {
		print_calc_text(&p, &r, profile || profile_csv, n, c.temp);
	}
	return CLI_EXIT_OK;
}

/* Whether an entry has figures to show: observed time and a finite damage sum. */
static bool has_data(const struct lifetime_report_entry *e) {
	return e->r.observed_h > 0 && isfinite(e->r.consumed_fraction) && isfinite(e->r.life_h);
}

static bool has_review(const struct capacitor_config *cc) {
	for (int k = 0; k < CAPACITOR_REVIEW_N; k++) {
		if (cc->review[k]) {
			return true;
		}
	}
	return false;
}

/*
 * The design-review notes (review: in the configuration), when any capacitor has some: every
 * capacitor and every key, "not recorded" where a note is missing.
 */
static void print_reviews(const struct lifetime_report *rep) {
	bool any = false;
	for (size_t i = 0; i < rep->n && !any; i++) {
		any = has_review(rep->entries[i].cc);
	}
	if (!any) {
		return;
	}
	struct buf scratch;
	buf_init(&scratch);
	for (size_t i = 0; i < rep->n; i++) {
		const struct capacitor_config *cc = rep->entries[i].cc;
		buf_clear(&scratch);
		printf("%s: design review:\n", table_printable(&scratch, cc->name));
		struct table t;
		table_init(&t, 2);
		for (int k = 0; k < CAPACITOR_REVIEW_N; k++) {
			table_row(&t);
			table_set(&t, 0, "%s", capacitor_review_keys[k]);
			table_set(&t, 1, "%s", cc->review[k] ? cc->review[k] : "not recorded");
		}
		table_print_stdout(&t, 2);
	}
	buf_finish(&scratch);
}

/* "120000-131400 h": a band of hours, capped ends marked as the table marks them. */
static void band_text(char *out, size_t len, const double h[2], double cap_h) {
	snprintf(out, len, "%s%.0f-%s%.0f h", h[0] >= cap_h ? "*" : "", h[0],
		 h[1] >= cap_h ? "*" : "", h[1]);
}

/*
 * What the capacitor review adds per capacitor: the temperature it ages at and why, the band
 * of the sensor's uncertainty, the voltage term, a measured ripple beside the constant one,
 * and the self-heating checked against the measurements.
 */
static void print_review_figures(const struct lifetime_report_entry *e) {
	const struct lifetime_result *r = &e->r;
	const char *name = e->cc->name;
	if (e->basis_reason) {
		printf("%s: ages at the %s temperature (%s): %s\n", name,
		       temp_basis_name(e->cc->basis), e->sensor_key, e->basis_reason);
	}
	if (!has_data(e)) {
		return;
	}
	double cap_h = lifetime_cap_years(e->cc) * LIFETIME_HOURS_PER_YEAR;
	char life[64], remaining[64];
	band_text(life, sizeof(life), r->band.life_h, cap_h);
	band_text(remaining, sizeof(remaining), r->band.remaining_h, cap_h);
	printf("%s: ±%g K: effective life %s (uncapped %.0f-%.0f h), remaining %s (the reading "
	       "%g K hotter and cooler)\n",
	       name, r->band.uncertainty_k, life, r->band.life_uncapped_h[0],
	       r->band.life_uncapped_h[1], remaining, r->band.uncertainty_k);
	const struct capacitor_voltage *v = &e->cc->voltage;
	if (!isnan(v->applied_v)) {
		printf("%s: voltage term (%g V / %g V)^-%g = x%.3f applied to every life\n", name,
		       v->applied_v, v->rated_v, v->exponent, r->voltage_factor);
	}
	if (e->cc->ripple_from.channel) {
		printf("%s: ripple measured on %s: consumed %.5f (mean self-heating %+.2f K)", name,
		       e->load_key, r->consumed_fraction, r->self_heating_k);
		if (isfinite(r->consumed_constant_ripple)) {
			printf("; with the constant %g A: %.5f", e->cc->current_a,
			       r->consumed_constant_ripple);
		}
		printf("\n");
	}
	const struct capcheck_rise_result *c = &e->check;
	if (e->has_check && c->paired) {
		printf("%s: self-heating measured (case - ambient) %.2f K mean, p95 %.2f K over "
		       "%.1f h",
		       name, c->measured_mean_k, c->measured_p95_k, c->hours);
		if (isfinite(c->modelled_mean_k)) {
			printf("; modelled %.2f K: %s (tolerance %.2f K)", c->modelled_mean_k,
			       c->mismatch ? "DISAGREE" : "agree", c->tolerance_k);
		}
		printf("\n");
	}
}

static void print_table(const struct lifetime_report *rep) {
	static const char *const head[] = {"capacitor", "sensor",         "observed",
					   "consumed",  "effective life", "T_eq",
					   "life@mean", "life@p95",       "remaining"};
	struct table t;
	table_init(&t, 9);
	table_head(&t, head, 9);
	table_align_right(&t, 2, 9);
	for (size_t i = 0; i < rep->n; i++) {
		const struct lifetime_report_entry *e = &rep->entries[i];
		const struct lifetime_result *r = &e->r;
		table_row(&t);
		table_set(&t, 0, "%s", e->cc->name);
		table_set(&t, 1, "%s", e->sensor_key);
		if (!has_data(e)) {
			// The warnings below say why (sensor not found, empty window).
			table_set(&t, 2, "no data");
			continue;
		}
		table_set(&t, 2, "%.1f h", r->observed_h);
		// ~: includes time in service before the history, extrapolated (see its warning)
		table_set(&t, 3, r->consumed_extrapolated > 0 ? "%.5f~" : "%.5f",
			  r->consumed_total);
		table_set(&t, 4, "%.0f h %s%.1fy", r->life_h, r->capped ? "*" : "",
			  r->life_h / LIFETIME_HOURS_PER_YEAR);
		table_set(&t, 5, "%.1f°C", r->equivalent_temp_c);
		table_set(&t, 6, "%.0f h", r->life_at_mean_temp_h);
		table_set(&t, 7, "%.0f h", e->life_at_p95_temp_h);
		table_set(&t, 8, "%.0f h %.1fy", r->remaining_h,
			  r->remaining_h / LIFETIME_HOURS_PER_YEAR);
	}
	table_print_stdout(&t, 0);
	printf("years of 8760 h; life@mean and life@p95 at the time-weighted mean and p95 "
	       "temperature; * capped at the seal-ageing limit; ~ with time in service before "
	       "the history, extrapolated. Reductions of 10/20/30 K at T_eq:\n");
	for (size_t i = 0; i < rep->n; i++) {
		const struct lifetime_report_entry *e = &rep->entries[i];
		const struct lifetime_result *r = &e->r;
		if (!has_data(e)) {
			continue;
		}
		printf("  %s:", e->cc->name);
		// Relative lives are uncapped figures: bound them by the seal-ageing cap, marked *.
		double cap_h = lifetime_cap_years(e->cc) * LIFETIME_HOURS_PER_YEAR;
		for (int k = 1; k < LIFETIME_N_RELATIVE; k++) {
			double h = r->relative[k].life_h;
			printf("  -%g K: x%.2f (%s%.0f h)", r->relative[k].reduction_k,
			       r->relative[k].factor, h > cap_h ? "*" : "", h > cap_h ? cap_h : h);
		}
		printf("\n");
	}
	for (size_t i = 0; i < rep->n; i++) {
		const struct lifetime_report_entry *e = &rep->entries[i];
		const struct lifetime_result *r = &e->r;
		if (!has_data(e) || r->self_heating_k == 0) {
			continue;
		}
		// The table's temperatures are the sensor's; the model ages the part hotter.
		printf("%s: measured / effective (%+g K self-heating): T_eq %.1f / %.1f °C, mean %.1f / "
		       "%.1f °C, p95 %.1f / %.1f °C\n",
		       e->cc->name, r->self_heating_k, r->equivalent_temp_c,
		       r->equivalent_temp_c + r->self_heating_k, r->mean_temp_c,
		       r->mean_temp_c + r->self_heating_k, e->p95_temp_c,
		       e->p95_temp_c + r->self_heating_k);
	}
	for (size_t i = 0; i < rep->n; i++) {
		const struct lifetime_result *r = &rep->entries[i].r;
		if (has_data(&rep->entries[i]) && r->past_life) {
			printf("%s: PAST ITS ESTIMATED LIFE: %.0f %% of its wear-out life consumed%s; "
			       "replace it or check it\n",
			       rep->entries[i].cc->name, 100 * r->consumed_total,
			       r->consumed_extrapolated > 0 ? " (partly extrapolated)" : "");
		}
	}
	for (size_t i = 0; i < rep->n; i++) {
		print_review_figures(&rep->entries[i]);
	}
	print_reviews(rep);
	for (size_t i = 0; i < rep->n; i++) {
		print_warnings(&rep->entries[i].r, rep->entries[i].cc->name);
	}
}

/* --from (@opt CLI_OPT_FROM) or --to of @cmd; false with the message printed. */
static bool parse_time(const char *cmd, int opt, const char *arg, int64_t now, int64_t *from,
		       int64_t *to) {
	bool is_from = opt == CLI_OPT_FROM;
	return cli_time_option(cmd, is_from ? "--from" : "--to", arg, now, is_from ? from : to);
}

/* The window as stats checks it (an end left out is now); false with the message printed. */
static bool window_ok(const char *cmd, int64_t from, int64_t to, int64_t now) {
	if (from == INT64_MIN && to == INT64_MAX) {
		return true;
	}
	static const char *const names[] = {"--from", "--to"};
	char *err = NULL;
	int bad;
	if (query_window_check(from, to != INT64_MAX ? to : now, to == INT64_MAX, 0, names, &bad,
			       &err) < 0) {
		fprintf(stderr, "thermlog %s: %s\n", cmd, err);
		free(err);
		return false;
	}
	return true;
}

/* What lifetime and lifetime profile read: the report over the configuration and store. */
struct history {
	struct lifetime_report rep;
	bool computed; // rep holds a report
};

/*
 * Sets the history up (cli_setup(): the configuration and the read-only database) and computes
 * its report over [@from, @to) into @h: CLI_EXIT_OK, or the exit code after a message.
 * history_finish() @h either way.
 */
static int history_report(struct cli_context *ctx, const char *cmd, int64_t from, int64_t to,
			  bool include_unsynced, int64_t now, struct history *h) {
	*h = (struct history){0};
	int rc = cli_setup(ctx);
	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	const struct config *cfg = &ctx->cfg;
	if (cfg->n_capacitors == 0) {
		fprintf(stderr,
			"thermlog %s: no capacitors configured (add a 'capacitors:' section to %s)\n",
			cmd, cfg->path ? cfg->path : CONFIG_DEFAULT_PATH);
	}
	char *err = NULL;
	if (lifetime_report_compute(ctx->store, cfg, from, to, include_unsynced, now, &h->rep,
				    &err) < 0) {
		fprintf(stderr, "thermlog %s: %s\n", cmd, err);
		free(err);
		return CLI_EXIT_FAILURE;
	}
	h->computed = true;
	return CLI_EXIT_OK;
}

static void history_finish(struct history *h) {
	if (h->computed) {
		lifetime_report_finish(&h->rep);
	}
}

static const char profile_usage[] =
	"usage: thermlog [--db PATH] [-c FILE] lifetime profile [--from T] [--to T]\n"
	"                [--include-unsynced] [--capacitor NAME] [--bin K] [--json | --csv]\n"
	"\n"
	"Per configured capacitor: hours per temperature bin of the temperature the model ages\n"
	"it at (bins K kelvin wide, default 5, aligned to multiples of K), each bin's share of\n"
	"the consumed life, and the equivalent constant temperature, from the same replay as\n"
	"`thermlog lifetime`. --csv writes one capacitor's profile as temp_c,hours rows for a\n"
	"manufacturer's calculator or `thermlog lifetime calc --profile-csv`. T: ISO 8601,\n"
	"unix seconds, -7d, now.\n";

/* "[45,50)", the bin's edges shifted by @shift. */
static void bin_label(char *out, size_t len, const struct lifetime_profile_bin *b, double shift) {
	snprintf(out, len, "[%g,%g)", b->from_c - shift, b->to_c - shift);
}

static void print_profile_entry(const struct lifetime_profile_entry *pe) {
	const struct lifetime_report_entry *e = pe->e;
	const struct lifetime_result *r = &e->r;
	double rise = r->self_heating_k;
	bool measured = lifetime_profile_measured_edges(pe);
	printf("%s (sensor %s, %s):", e->cc->name, e->sensor_key, temp_basis_name(e->cc->basis));
	if (pe->n_bins == 0 || !has_data(e)) {
		printf(" no data in the window\n");
		return;
	}
	printf(" %.1f h, coverage %.1f %%, consumed %.5f, T_eq %.1f °C", r->observed_h,
	       100 * e->coverage, r->consumed_fraction, r->equivalent_temp_c);
	if (measured) {
		printf(" measured, %.1f °C effective (%+g K)", r->equivalent_temp_c + rise, rise);
	}
	printf("\n");
	const char *head[] = {measured ? "effective °C" : "bin °C",
			      "measured °C",
			      "hours",
			      "time",
			      "consumed",
			      "T_bin"};
	size_t cols = measured ? 6 : 5;
	const char *const *names =
		measured ? head
			 : (const char *const[]){head[0], head[2], head[3], head[4], head[5]};
	struct table t;
	table_init(&t, cols);
	table_head(&t, names, cols);
	table_align_right(&t, measured ? 2 : 1, cols);
	for (size_t b = 0; b < pe->n_bins; b++) {
		const struct lifetime_profile_bin *bin = &pe->bins[b];
		char label[64];
		size_t c = 0;
		table_row(&t);
		bin_label(label, sizeof(label), bin, 0);
		table_set(&t, c++, "%s", label);
		if (measured) {
			bin_label(label, sizeof(label), bin, rise);
			table_set(&t, c++, "%s", label);
		}
		table_set(&t, c++, "%.1f h", bin->hours);
		table_set(&t, c++, "%.1f %%", 100 * bin->hours / pe->hours);
		table_set(&t, c++, "%.1f %%", 100 * bin->consumed_fraction / pe->consumed_fraction);
		if (isfinite(bin->temp_c)) {
			table_set(&t, c, "%.1f", bin->temp_c);
		} else {
			table_set(&t, c, "-");
		}
	}
	table_print_stdout(&t, 2);
}

static void print_profile(const struct lifetime_profile *pr) {
	bool any = false;
	for (size_t i = 0; i < pr->n; i++) {
		print_profile_entry(&pr->entries[i]);
		any = any || pr->entries[i].n_bins > 0;
	}
	if (any) {
		printf("hours of the temperature the model ages the part at (the sensor's plus any "
		       "self-heating), in %g K bins; time and consumed: the bin's share of the hours "
		       "and of the consumed life; T_bin: the constant temperature that consumes the "
		       "bin's share in its hours (its --csv row)\n",
		       pr->bin_k);
	}
	for (size_t i = 0; i < pr->n; i++) {
		print_warnings(&pr->entries[i].e->r, pr->entries[i].e->cc->name);
	}
}

/* --csv: the one capacitor's rows; an exit code. */
static int print_profile_csv(const struct lifetime_profile *pr, const struct lifetime_report *rep) {
	if (pr->n != 1) {
		fprintf(stderr,
			"thermlog lifetime profile: --csv writes one capacitor's profile: choose "
			"it with --capacitor NAME (%zu configured)\n",
			rep->n);
		return CLI_EXIT_USAGE;
	}
	const struct lifetime_profile_entry *pe = &pr->entries[0];
	if (pe->n_bins == 0) {
		fprintf(stderr,
			"thermlog lifetime profile: %s: no temperature samples in the window: no "
			"profile to write\n",
			pe->e->cc->name);
		return CLI_EXIT_FAILURE;
	}
	struct buf b;
	buf_init(&b);
	lifetime_profile_write_csv(pe, &b);
	fputs(b.data, stdout);
	buf_finish(&b);
	return CLI_EXIT_OK;
}

/* --bin K; false with the message printed. */
static bool parse_bin(const char *arg, double *bin_k) {
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (end == arg || *end != '\0' || errno == ERANGE) {
		fprintf(stderr,
			"thermlog lifetime profile: --bin '%s': expected a bin width in kelvin, "
			"e.g. 5\n",
			arg);
		return false;
	}
	char *err = NULL;
	if (!lifetime_profile_bin_check(v, "--bin", &err)) {
		fprintf(stderr, "thermlog lifetime profile: %s\n", err);
		free(err);
		return false;
	}
	*bin_k = v;
	return true;
}

/* What the options of lifetime, lifetime profile and lifetime series say. */
struct history_args {
	const char *cmd; // the name in the messages
	int64_t now, from, to;
	bool include_unsynced, json, csv;
	const char *capacitor;
	double bin_k;
	struct plain_option plain[5]; // the options kept as given
};

static void history_args_init(struct history_args *a, const char *cmd) {
	*a = (struct history_args){
		.cmd = cmd,
		.now = (int64_t)time(NULL),
		.from = INT64_MIN,
		.to = INT64_MAX,
		.bin_k = LIFETIME_PROFILE_BIN_K,
		.plain = {{CLI_OPT_UNSYNCED, NULL, &a->include_unsynced},
			  {'c', &a->capacitor, NULL},
			  {CLI_OPT_JSON, NULL, &a->json},
			  {'v', NULL, &a->csv}},
	};
}

/* --from, --to and --bin of the three: each command's options table says which it takes. */
static int history_option(void *state, int opt, char *arg) {
	struct history_args *a = state;
	bool good;
	switch (opt) {
	case CLI_OPT_FROM:
	case CLI_OPT_TO:
		good = parse_time(a->cmd, opt, arg, a->now, &a->from, &a->to);
		break;
	case 'b':
		good = parse_bin(arg, &a->bin_k);
		break;
	default: // --help, or an option getopt_long refused
		return 0;
	}
	return good ? 1 : -1;
}

/*
 * Reads the options of @cmd, one of the three (@opts its table), into @a, checks them as the
 * command would and computes the history they ask for into @h (history_report()): false when
 * the command ends with *@rc, with nothing to finish.
 */
static bool history_read(struct cli_context *ctx, struct history_args *a, struct history *h,
			 const char *cmd, const char *usage, const struct option *opts, int argc,
			 char **argv, int *rc) {
	history_args_init(a, cmd);
	if (!cli_read_options(cmd, usage, "", opts, a->plain, history_option, a, argc, argv, rc)) {
		return false;
	}
	*rc = CLI_EXIT_USAGE;
	if (a->json && a->csv) { // lifetime profile: the others take no --csv
		fprintf(stderr, "thermlog %s: give --json or --csv, not both\n", cmd);
		return false;
	}
	if (!window_ok(cmd, a->from, a->to, a->now)) {
		return false;
	}
	*rc = history_report(ctx, cmd, a->from, a->to, a->include_unsynced, a->now, h);
	return *rc == CLI_EXIT_OK;
}

static int cmd_profile(struct cli_context *ctx, int argc, char **argv) {
	static const char cmd[] = "lifetime profile";
	static const struct option opts[] = {
		CLI_OPTIONS_FROM_TO,
		CLI_OPTION_UNSYNCED,
		{"capacitor", required_argument, NULL, 'c'},
		{"bin", required_argument, NULL, 'b'},
		CLI_OPTION_JSON,
		{"csv", no_argument, NULL, 'v'},
		CLI_OPTION_HELP,
		{0},
	};
	struct history_args a;
	struct history h;
	int rc;
	if (!history_read(ctx, &a, &h, cmd, profile_usage, opts, argc, argv, &rc)) {
		return rc;
	}
	struct lifetime_profile pr;
	char *err = NULL;
	int brc = lifetime_profile_build(&h.rep, a.bin_k, a.capacitor, &pr, &err);
	if (brc < 0) {
		fprintf(stderr, "thermlog %s: %s\n", cmd, err);
		free(err);
		rc = brc == -ENOENT || brc == -E2BIG ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
		goto out;
	}
	rc = CLI_EXIT_OK;
	if (a.json) {
		struct buf b;
		buf_init(&b);
		struct json j;
		json_init(&j, &b, true);
		lifetime_profile_write_json(&pr, &j);
		buf_putc(&b, '\n');
		fputs(b.data, stdout);
		buf_finish(&b);
	} else if (a.csv) {
		rc = print_profile_csv(&pr, &h.rep);
	} else {
		print_profile(&pr);
	}
	lifetime_profile_finish(&pr);
out:
	history_finish(&h);
	return rc;
}

static const char series_usage[] =
	"usage: thermlog [--db PATH] [-c FILE] lifetime series [--from T] [--to T] [--json]\n"
	"\n"
	"Per configured capacitor: the life consumed from the window's start to each of up to\n"
	"12 points evenly spaced over it (each `thermlog lifetime --from T0 --to T`), with the\n"
	"band of the sensor's uncertainty: the consumed-life chart of the design review and\n"
	"the dashboard. T: ISO 8601, unix seconds, -7d, now.\n";

static void print_series(const struct lifetime_report *rep, const struct lifetime_series *series) {
	static const char *const head[] = {"up to (UTC)", "observed", "consumed", "band"};
	for (size_t i = 0; i < rep->n; i++) {
		const struct lifetime_series *s = &series[i];
		printf("%s (sensor %s, %s):%s\n", rep->entries[i].cc->name,
		       rep->entries[i].sensor_key, temp_basis_name(rep->entries[i].cc->basis),
		       s->n ? "" : " no data in the window");
		if (s->n == 0) {
			continue;
		}
		struct table t;
		table_init(&t, 4);
		table_head(&t, head, 4);
		table_align_right(&t, 1, 4);
		for (size_t k = 0; k < s->n; k++) {
			char at[TIMEFMT_ISO_LEN];
			timefmt_iso(s->to[k], at);
			table_row(&t);
			table_set(&t, 0, "%s", at);
			table_set(&t, 1, "%.1f h", s->observed_h[k]);
			table_set(&t, 2, "%.6f", s->consumed[k]);
			table_set(&t, 3, "%.6f-%.6f", s->consumed_band[k][1],
				  s->consumed_band[k][0]);
		}
		table_print_stdout(&t, 2);
	}
	printf("consumed: the life consumed from the window's start (observed time, not "
	       "extrapolated); band: with the reading uncertainty_k cooler and hotter\n");
}

static int cmd_series(struct cli_context *ctx, int argc, char **argv) {
	static const char cmd[] = "lifetime series";
	static const struct option opts[] = {
		CLI_OPTIONS_FROM_TO,
		CLI_OPTION_JSON,
		CLI_OPTION_HELP,
		{0},
	};
	struct history_args a;
	struct history h;
	int rc;
	if (!history_read(ctx, &a, &h, cmd, series_usage, opts, argc, argv, &rc)) {
		return rc;
	}
	char *err = NULL;
	if (a.json) {
		struct buf b;
		buf_init(&b);
		struct json j;
		json_init(&j, &b, true);
		if (lifetime_series_json(ctx->store, &ctx->cfg, a.from, a.to, a.now, &j, &err) ==
		    0) {
			buf_putc(&b, '\n');
			fputs(b.data, stdout);
		}
		buf_finish(&b);
	} else {
		struct lifetime_series *series = xcalloc(h.rep.n ? h.rep.n : 1, sizeof(*series));
		if (h.rep.to <= h.rep.from ||
		    lifetime_report_series(ctx->store, &ctx->cfg, a.from, a.now, &h.rep, series,
					   &err) == 0) {
			print_series(&h.rep, series);
		}
		free(series);
	}
	if (err) {
		fprintf(stderr, "thermlog %s: %s\n", cmd, err);
		free(err);
		rc = CLI_EXIT_FAILURE;
	}
	history_finish(&h);
	return rc;
}

int cli_lifetime(struct cli_context *ctx, int argc, char **argv) {
	/* The subcommands, each with what it needs; lifetime itself reads the store (main.c). */
	static const struct cli_command lifetime_commands[] = {
		{.name = "calc", .run = cmd_calc, .needs = CLI_NEEDS_NONE},
		{.name = "profile", .run = cmd_profile, .needs = CLI_NEEDS_READ},
		{.name = "series", .run = cmd_series, .needs = CLI_NEEDS_READ},
	};
	int rc;
	if (cli_subcommand(ctx, lifetime_commands,
			   sizeof(lifetime_commands) / sizeof(lifetime_commands[0]), argc, argv,
			   &rc)) {
		return rc;
	}
	static const struct option opts[] = {
		CLI_OPTIONS_FROM_TO, CLI_OPTION_UNSYNCED, CLI_OPTION_JSON, CLI_OPTION_HELP, {0},
	};
	struct history_args a;
	struct history h;
	if (!history_read(ctx, &a, &h, "lifetime", history_usage, opts, argc, argv, &rc)) {
		return rc;
	}
	if (a.json) {
		struct buf b;
		buf_init(&b);
		struct json j;
		json_init(&j, &b, true);
		lifetime_report_write_json(&h.rep, &j);
		buf_putc(&b, '\n');
		fputs(b.data, stdout);
		buf_finish(&b);
	} else if (h.rep.n > 0) {
		print_table(&h.rep);
	}
	history_finish(&h);
	return CLI_EXIT_OK;
}
