/*
 * oldyear: DAYS of bench/store-wear's simulated board (sim_model(), seed 42, one-minute
 * cycles from 2026-01-01T00:00:00Z, one boot, the clock synced) on five of its channels, in
 * the layout of the thermlog whose store was at schema 10, the last before the chunks: the
 * migrations 1 to 10, a packed row of values a cycle (the hour's first in the absolute form,
 * the others against the row before), the hourly rollups with their histograms and the days
 * merged into cycle_days and rollup_days, as that thermlog's store_maintain() left them after
 * store-wear's fill(): every hour but the last rolled up, every day but the last merged,
 * nothing pruned. Deterministic: the same file's content every run, for answers the previous
 * thermlog made once on it (tests/cli/test-convert-answers.py).
 *
 * usage: oldyear PATH DAYS
 */
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "codec.h"
#include "sim.h"
#include "sql/store-migrations.h"
#include "xalloc.h"

#define OLD_VERSION 10         // the last schema before the chunks (sql/0011-chunks.sql)
#define T_START     1767225600 // store-wear's year: 2026-01-01T00:00:00Z
#define SEED        42         // store-wear's
#define DAY         86400
#define HOUR        3600
#define PER_HOUR    60
#define PER_DAY     (24 * PER_HOUR)
#define RAW_KEEP    (400LL * DAY) // store-wear's retention: nothing of the year pruned
#define BOOT_ID     "0b5e7a52-1f6c-4d0e-9a43-1c2d3e4f5a6b"

/* Five of store-wear's 25 channels: a zone, the capacitor's thermocouple, a state, clocks. */
static const struct {
	const char *key;
	enum channel_kind kind;
	double resolution;
} chans[] = {
	{"thermal/soc-thermal", CHANNEL_KIND_TEMPERATURE, 0.001},
	{"iio/maxim_thermocouple/temp", CHANNEL_KIND_TEMPERATURE, 0.25},
	{"cooling/pwm-fan", CHANNEL_KIND_STATE, 1},
	{"cpufreq/policy4", CHANNEL_KIND_FREQUENCY, 1000},
	{"devfreq/fdab0000.npu", CHANNEL_KIND_FREQUENCY, 1},
};
#define N_CH ((int)(sizeof(chans) / sizeof(chans[0])))

/* The channels' values at @t as integers of their resolutions, as store-wear stores them. */
static void values_at(int64_t t, int64_t *q) {
	struct sim_state s;
	sim_model(SEED, t, &s);
	q[0] = s.zone_mc[SIM_ZONE_SOC];
	q[1] = s.tc_raw;
	q[2] = s.fan_state;
	q[3] = s.cpu_khz[1]; // policy4: kHz = Hz / 1000
	q[4] = s.npu_hz;
}

static void sql(sqlite3 *db, const char *text) {
	char *err = NULL;
	if (sqlite3_exec(db, text, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "oldyear: %s: %s\n", text, err);
		exit(1);
	}
}

static void step(sqlite3 *db, sqlite3_stmt *st) {
	if (sqlite3_step(st) != SQLITE_DONE) {
		fprintf(stderr, "oldyear: %s\n", sqlite3_errmsg(db));
		exit(1);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

static int cmp_q(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The summary of @n values taken at @ts, as a rollup row keyed @key (an hour or a day). */
static void put_summary(sqlite3 *db, sqlite3_stmt *st, int64_t key, int channel, const int64_t *q,
			const int64_t *ts, size_t n) {
	static int64_t sorted[PER_DAY];
	static uint8_t blob[PER_DAY * 2 * CODEC_VARINT_MAX];
	int64_t sum = 0, min = q[0], max = q[0], max_ts = ts[0];
	for (size_t i = 0; i < n; i++) {
		sum += q[i];
		min = q[i] < min ? q[i] : min;
		if (q[i] > max) { // the first time it is reached
			max = q[i];
			max_ts = ts[i];
		}
	}
	memcpy(sorted, q, n * sizeof(*q));
	qsort(sorted, n, sizeof(*sorted), cmp_q);
	size_t len = codec_hist_encode_values(blob, sorted, n);
	sqlite3_bind_int64(st, 1, key);
	sqlite3_bind_int(st, 2, channel);
	sqlite3_bind_int64(st, 3, (int64_t)n);
	sqlite3_bind_int64(st, 4, sum);
	sqlite3_bind_int64(st, 5, min);
	sqlite3_bind_int64(st, 6, max);
	sqlite3_bind_int64(st, 7, max_ts);
	sqlite3_bind_int64(st, 8, 0);
	sqlite3_bind_blob(st, 9, blob, (int)len, SQLITE_STATIC);
	step(db, st);
}

struct writer {
	sqlite3 *db;
	sqlite3_stmt *cycle, *row, *hour, *day, *cycle_day;
	int64_t day_q[N_CH][PER_DAY], day_ts[PER_DAY];
	size_t n_day;
};

static void prepare(struct writer *w, sqlite3_stmt **st, const char *text) {
	if (sqlite3_prepare_v2(w->db, text, -1, st, NULL) != SQLITE_OK) {
		fprintf(stderr, "oldyear: %s: %s\n", text, sqlite3_errmsg(w->db));
		exit(1);
	}
}

/* The day from @day (up to @end): its cycles and rows, its values kept in @w. */
static void write_day(struct writer *w, int64_t day, int64_t end) {
	struct codec_pair pairs[N_CH], prev[N_CH];
	uint8_t blob[CODEC_ROW_MAX(N_CH)];
	w->n_day = 0;
	for (int64_t t = day; t < day + DAY && t < end; t += 60) {
		int64_t q[N_CH];
		values_at(t, q);
		for (int c = 0; c < N_CH; c++) {
			pairs[c] = (struct codec_pair){c + 1, q[c]};
			w->day_q[c][w->n_day] = q[c];
		}
		w->day_ts[w->n_day] = t;
		bool first = (t - day) % HOUR == 0;
		size_t len = first ? codec_pairs_encode(blob, pairs, N_CH)
				   : codec_row_encode(blob, pairs, N_CH, prev, N_CH);
		memcpy(prev, pairs, sizeof(pairs));
		sqlite3_bind_int64(w->cycle, 1, t);
		step(w->db, w->cycle);
		sqlite3_bind_int64(w->row, 1, t);
		sqlite3_bind_blob(w->row, 2, blob, (int)len, SQLITE_STATIC);
		step(w->db, w->row);
		w->n_day++;
	}
}

/* The hourly rollups of the day just written, those before @horizon. */
static void roll_hours(struct writer *w, int64_t horizon) {
	for (size_t h = 0; h < w->n_day; h += PER_HOUR) {
		size_t n = w->n_day - h < PER_HOUR ? w->n_day - h : PER_HOUR;
		if (w->day_ts[h] >= horizon) {
			return;
		}
		for (int c = 0; c < N_CH; c++) {
			put_summary(w->db, w->hour, w->day_ts[h], c + 1, &w->day_q[c][h],
				    &w->day_ts[h], n);
		}
	}
}

/* The day just written, merged: its cycles' summary and each channel's day. */
static void merge_day(struct writer *w, int64_t day) {
	static int64_t gaps[PER_DAY];
	static uint8_t blob[PER_DAY * 2 * CODEC_VARINT_MAX];
	for (size_t i = 1; i < w->n_day; i++) {
		gaps[i - 1] = w->day_ts[i] - w->day_ts[i - 1];
	}
	qsort(gaps, w->n_day - 1, sizeof(*gaps), cmp_q);
	size_t len = codec_hist_encode_values(blob, gaps, w->n_day - 1);
	sqlite3_bind_int64(w->cycle_day, 1, day);
	sqlite3_bind_int64(w->cycle_day, 2, (int64_t)w->n_day);
	sqlite3_bind_int64(w->cycle_day, 3, 0);
	sqlite3_bind_int64(w->cycle_day, 4, w->day_ts[0]);
	sqlite3_bind_int64(w->cycle_day, 5, w->day_ts[w->n_day - 1]);
	sqlite3_bind_blob(w->cycle_day, 6, blob, (int)len, SQLITE_STATIC);
	step(w->db, w->cycle_day);
	for (int c = 0; c < N_CH; c++) {
		put_summary(w->db, w->day, day, c + 1, w->day_q[c], w->day_ts, w->n_day);
	}
}

/* The schema, the boot and the channels (last_seen: the hour of their last cycle, as that
 * thermlog's writer moved it once an hour). */
static void write_header(sqlite3 *db, int64_t end) {
	sql(db, "PRAGMA page_size = 2048; PRAGMA journal_mode = WAL; BEGIN"); // its new files'
	for (int v = 0; v < OLD_VERSION; v++) {
		sql(db, store_migrations[v]);
	}
	char *text = xasprintf("PRAGMA user_version = %d; PRAGMA application_id = 1414024263; "
			       "INSERT INTO boots (id, boot_id) VALUES (1, '%s')",
			       OLD_VERSION, BOOT_ID);
	sql(db, text);
	free(text);
	for (int c = 0; c < N_CH; c++) {
		text = xasprintf(
			"INSERT INTO channels (id, key, source, label, kind, unit, "
			"resolution, first_seen, last_seen) VALUES (%d, '%s', 'sim', '%s', "
			"'%s', '%s', %.17g, %lld, %lld)",
			c + 1, chans[c].key, chans[c].key, channel_kind_name(chans[c].kind),
			channel_kind_unit(chans[c].kind), chans[c].resolution, (long long)T_START,
			(long long)((end - 60) / HOUR * HOUR));
		sql(db, text);
		free(text);
	}
}

int main(int argc, char **argv) {
	if (argc != 3 || atol(argv[2]) < 2) {
		fprintf(stderr, "usage: oldyear PATH DAYS (DAYS >= 2)\n");
		return 2;
	}
	const char *path = argv[1];
	int64_t end = T_START + atol(argv[2]) * DAY;
	remove(path);
	struct writer *w = xcalloc(1, sizeof(*w));
	if (sqlite3_open(path, &w->db) != SQLITE_OK) {
		fprintf(stderr, "oldyear: %s: %s\n", path, sqlite3_errmsg(w->db));
		return 1;
	}
	write_header(w->db, end);
	prepare(w, &w->cycle, "INSERT INTO cycles (ts, boot, clock) VALUES (?1, 1, 1)");
	prepare(w, &w->row, "INSERT INTO samples (ts, clock, data) VALUES (?1, 1, ?2)");
	prepare(w, &w->hour,
		"INSERT INTO rollups (hour, channel_id, count, sum, min, max, max_ts, "
		"unsynced, hist) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
	prepare(w, &w->day,
		"INSERT INTO rollup_days (day, channel_id, count, sum, min, max, "
		"max_ts, unsynced, hist) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
	prepare(w, &w->cycle_day,
		"INSERT INTO cycle_days (day, cycles, unsynced, first_ts, "
		"last_ts, spacing) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	// store-wear's last store_maintain(end) rolls up every hour but the last cycle's and
	// merges every whole day before it.
	int64_t horizon = end - HOUR, merged = end - DAY;
	for (int64_t day = T_START; day < end; day += DAY) {
		write_day(w, day, end);
		roll_hours(w, horizon);
		if (day + DAY <= merged) {
			merge_day(w, day);
		}
	}
	char *state = xasprintf("INSERT INTO state (key, value) VALUES ('store.rollup_horizon', "
				"'%lld'), ('store.day_horizon', '%lld'), ('store.raw_horizon', "
				"'%lld')",
				(long long)horizon, (long long)merged,
				(long long)((end - RAW_KEEP) / HOUR * HOUR));
	sql(w->db, state);
	free(state);
	sql(w->db, "COMMIT");
	sqlite3_stmt *all[] = {w->cycle, w->row, w->hour, w->day, w->cycle_day};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		sqlite3_finalize(all[i]);
	}
	int rc = sqlite3_close(w->db);
	free(w);
	return rc == SQLITE_OK ? 0 : 1;
}
