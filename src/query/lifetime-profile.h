/*
 * A capacitor's temperature profile for a design review: hours per temperature bin of the
 * temperature the model ages the part at, from the same replay as the lifetime report
 * (lifetime-report.h), with each bin's share of the consumed life and the temperature that
 * stands for the bin in a mission-profile table (`temp_c,hours` rows a manufacturer's
 * calculator or `thermlog lifetime calc --profile-csv` reads back to the same consumed life).
 */
#ifndef LIFETIME_PROFILE_H
#define LIFETIME_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "buf.h"
#include "json.h"
#include "lifetime-report.h"
#include "lifetime.h"

#define LIFETIME_PROFILE_BIN_K     5.0   // default bin width
#define LIFETIME_PROFILE_MIN_BIN_K 0.1   // narrower bins than a sensor's noise say nothing
#define LIFETIME_PROFILE_MAX_BIN_K 100.0 // a bin over the whole rated range
#define LIFETIME_PROFILE_MAX_BINS  20000 // bins one profile may span (width vs range)

/** One bin [from_c, to_c) of the model temperature (sensor + self-heating). */
struct lifetime_profile_bin {
	double from_c, to_c; // multiples of the bin width
	double hours;
	double consumed_fraction; // the bin's part of D: sum of hours / L(T) over its samples
	// The constant model temperature that consumes the bin's part of D in the bin's hours
	// (inside [from_c, to_c)): the bin's row in a mission profile. NAN for an empty bin.
	double temp_c;
};

/** One capacitor's profile over the window of its report entry. */
struct lifetime_profile_entry {
	const struct lifetime_report_entry *e; // borrowed: the report's figures and warnings
	struct lifetime_profile_bin *bins;     // owned: contiguous, lowest to highest, none empty
					       // at either end; NULL when nothing was observed
	size_t n_bins;
	double hours;             // sum of the bins' hours (= e->r.observed_h up to rounding)
	double consumed_fraction; // sum of the bins' parts (= e->r.consumed_fraction, rounding)
};

struct lifetime_profile {
	double bin_k;
	size_t n;
	struct lifetime_profile_entry *entries; // owned; the report's order
};

/**
 * Whether @bin_k is a usable width (LIFETIME_PROFILE_MIN_BIN_K..MAX_BIN_K); false with *err
 * newly allocated naming @what (the option or parameter: "--bin", "'bin'").
 */
bool lifetime_profile_bin_check(double bin_k, const char *what, char **err);

/**
 * Bins @pts (sensor temperatures with hours, any order) by the model temperature
 * (sensor + p->rise_k) into [k·@bin_k, (k+1)·@bin_k) bins, each bin's damage summed with
 * @p's own life function. Pure. Fills @pe's bins, hours and consumed_fraction (pe->e is left
 * as it is). Returns 0, or -E2BIG when the bins would exceed LIFETIME_PROFILE_MAX_BINS.
 */
int lifetime_profile_bin(const struct lifetime_params *p, const struct lifetime_point *pts,
			 size_t n, double bin_k, struct lifetime_profile_entry *pe);

/**
 * The profiles of a computed report's capacitors (@capacitor: only the one of that name,
 * NULL for all); @rep stays borrowed and must outlive @out. Returns 0, -ENOENT when no
 * capacitor has that name, -EINVAL for a bad rating or bin width, -E2BIG for too many bins;
 * *err newly allocated then (caller frees).
 */
int lifetime_profile_build(const struct lifetime_report *rep, double bin_k, const char *capacitor,
			   struct lifetime_profile *out, char **err);
void lifetime_profile_finish(struct lifetime_profile *pr); // accepts a zeroed struct
/**
 * Whether @pe's bins have measured edges beside the model's: the sensor's temperature is the
 * model's minus one constant self-heating (not with none, nor with a measured ripple's rise
 * per sample).
 */
bool lifetime_profile_measured_edges(const struct lifetime_profile_entry *pe);

/**
 * The JSON of `thermlog lifetime profile --json` (and GET /api/v1/lifetime/profile):
 * {"bin_k", "capacitors": [{"name", "sensor", "basis", "basis_reason", "self_heating_k",
 * "hours", "coverage", "consumed_fraction", "equivalent_temp_c", "equivalent_effective_temp_c",
 * "life_uncapped_h", "band" (lifetime_report_write_band()), "bins": [{"from_c", "to_c",
 * "hours", "share", "consumed_fraction", "consumed_share", "temp_c"} (+ "measured_from_c",
 * "measured_to_c" with measured edges: lifetime_profile_measured_edges())],
 * "warnings": [{"code", "message"}]}]}. The top-level figures are the report's own (as
 * `thermlog lifetime --json` has them, measured scale, effective beside); the bins are on the
 * model temperature; share and consumed_share are fractions of the hours and of D.
 */
void lifetime_profile_write_json(const struct lifetime_profile *pr, struct json *out);
/**
 * The report and profile over the store, written as the JSON above: the arguments of
 * lifetime_report_compute() plus @bin_k and @capacitor; 0 or -errno with *err.
 */
int lifetime_profile_json(struct store *store, const struct config *cfg, int64_t from, int64_t to,
			  bool include_unsynced, int64_t now, double bin_k, const char *capacitor,
			  struct json *out, char **err);

/**
 * @pe as CSV (RFC 4180, CRLF): a header "temp_c,hours", then one row per non-empty bin: the
 * bin's temp_c and hours, shortest round-trip decimals.
 */
void lifetime_profile_write_csv(const struct lifetime_profile_entry *pe, struct buf *out);

/**
 * Reads a profile CSV: an optional header "temp_c,hours", then rows TEMP,HOURS (°C, positive
 * hours; blank lines skipped). Returns true with a newly allocated array, or false with *err
 * naming the line (caller frees).
 */
bool lifetime_profile_read_csv(FILE *in, struct lifetime_point **pts, size_t *n, char **err);

#endif
