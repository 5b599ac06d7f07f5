/* What the store's unit tests share (store-fixture.h). */
#include "store-fixture.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>
#include <stdarg.h>

#include "log.h"
#include "xalloc.h"

char tmpdir[] = "/tmp/test-store-XXXXXX";

void store_fixture_begin(void) {
	log_init(LOG_LEVEL_ERROR);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(1);
	}
}

void store_fixture_end(void) {
	rmdir(tmpdir);
}

char *tmp_path(const char *name) {
	return xasprintf("%s/%s", tmpdir, name);
}

void remove_db(const char *path) {
	const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
	for (size_t i = 0; i < 4; i++) {
		char *p = xasprintf("%s%s", path, suffixes[i]);
		unlink(p);
		free(p);
	}
}

struct channel chans[N_CHANS] = {
	{FIXTURE_SOC_THERMAL, .label = "SoC", .path = "class/thermal/thermal_zone0/temp"},
	{FIXTURE_POLICY4, .label = "big cores 0"},
	{FIXTURE_PWM_FAN, .label = "fan", .meta = "{\"max_state\":4}"},
};

int put(struct store *store, int64_t ts, enum clock_state clock, const double *values,
	const int *errs) {
	struct reading r[N_CHANS];
	for (int i = 0; i < N_CHANS; i++) {
		r[i] = (struct reading){.value = values[i], .err = errs ? errs[i] : 0};
	}
	struct cycle c = {.ts = ts,
			  .boot_id = "3f1c0f7e-5b0a-4a43-9c1e-2f0d2b1a9e11",
			  .clock = clock,
			  .n = N_CHANS,
			  .channels = chans,
			  .readings = r};
	return store_write_cycle(store, &c);
}

int collect_sample(void *ctx, const struct store_sample *s) {
	struct collect *c = ctx;
	if (c->n < 256) {
		c->s[c->n] = *s;
	}
	c->n++;
	return c->stop_after && (int)c->n == c->stop_after ? 42 : 0;
}

int64_t channel_id(struct store *store, const char *key) {
	struct store_channel *list;
	size_t n;
	int64_t id = -1;
	if (store_channels(store, &list, &n) < 0) {
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(list[i].ch.key, key) == 0) {
			id = list[i].id;
		}
	}
	store_channels_free(list, n);
	return id;
}

int copy_file(const char *from, const char *to) {
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[4096];
	size_t n;
	int rc = in && out ? 0 : -errno;
	while (rc == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0) {
		rc = fwrite(buf, 1, n, out) == n ? 0 : -EIO;
	}
	if (in) {
		fclose(in);
	}
	if (out && fclose(out) != 0 && rc == 0) {
		rc = -EIO;
	}
	return rc;
}

int exec_raw(const char *path, const char *sql) {
	sqlite3 *db;
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	sqlite3_close(db);
	return rc;
}

int64_t query_raw(const char *path, const char *sql) {
	sqlite3 *db;
	sqlite3_stmt *st = NULL;
	int64_t v = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		v = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

int64_t query_fmt(const char *path, const char *fmt, ...) {
	char sql[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	return query_raw(path, sql);
}

bool integrity(const char *path) {
	return query_raw(path, "SELECT count(*) FROM pragma_integrity_check WHERE "
			       "integrity_check != 'ok'") == 0;
}

int collect_rollup(void *ctx, const struct store_rollup *r) {
	struct rollups *c = ctx;
	if (c->n < 64 && r->n_bins <= ROLLUP_BINS_MAX) {
		c->r[c->n] = *r;
		memcpy(c->bins_q[c->n], r->bin_q, r->n_bins * sizeof(int64_t));
		memcpy(c->bins_n[c->n], r->bin_count, r->n_bins * sizeof(int64_t));
	}
	c->n++;
	return 0;
}

void fill_hours(struct store *store, unsigned seed) {
	srand(seed);
	for (int i = 0; i < 3 * 180; i++) {
		double v[] = {40 + (rand() % 50) * 0.125, (408 + 96 * (rand() % 4)) * 1e6,
			      rand() % 5};
		int errs[] = {0, i % 7 == 3 ? -EIO : 0, 0};
		put(store, T0 + 20 * i, i % 5 == 4 ? CLOCK_STATE_UNSYNCED : CLOCK_STATE_SYNCED, v,
		    errs);
	}
}

void delta_history_init(struct delta_history *h, unsigned seed) {
	srand(seed);
	double temp = 45.0, freq = 1800e6, fan = 2;
	for (int i = 0; i < DELTA_ROWS; i++) {
		temp += (rand() % 9 - 4) * 0.077;
		if (rand() % 4 == 0) {
			freq = (408 + 96 * (rand() % 20)) * 1e6;
		}
		if (rand() % 10 == 0) {
			fan = rand() % 5;
		}
		h->ts[i] = T0 + 30 + 60 * i;
		h->v[i][0] = temp;
		h->v[i][1] = freq;
		h->v[i][2] = fan;
	}
}

int all_sample(void *ctx, const struct store_sample *s) {
	struct all_samples *a = ctx;
	a->s = xgrow(a->s, &a->cap, a->n + 1, sizeof(*a->s));
	a->s[a->n++] = *s;
	return 0;
}

struct all_samples scan_all(struct store *store, int64_t from, int64_t to, int *rc) {
	struct all_samples a = {0};
	*rc = store_scan_samples(store, from, to, NULL, 0, true, all_sample, &a);
	return a;
}

bool same_samples(const struct all_samples *a, const struct all_samples *b) {
	if (a->n != b->n) {
		return false;
	}
	for (size_t i = 0; i < a->n; i++) {
		if (a->s[i].ts != b->s[i].ts || a->s[i].channel_id != b->s[i].channel_id ||
		    a->s[i].q != b->s[i].q || a->s[i].clock != b->s[i].clock) {
			return false;
		}
	}
	return true;
}

bool matches_history(const struct all_samples *a, const struct delta_history *h,
		     const bool *present) {
	size_t k = 0;
	for (int i = 0; i < DELTA_ROWS; i++) {
		if (present && !present[i]) {
			continue;
		}
		for (int c = 0; c < N_CHANS; c++, k++) {
			int64_t want = llround(h->v[i][c] / chans[c].resolution);
			if (k >= a->n || a->s[k].ts != h->ts[i] || a->s[k].q != want) {
				return false;
			}
		}
	}
	return k == a->n;
}

void raw_rows_read(const char *path, struct raw_rows *r) {
	sqlite3 *db;
	sqlite3_stmt *st;
	r->n = 0;
	sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
	sqlite3_prepare_v2(db, "SELECT ts, data FROM samples ORDER BY ts", -1, &st, NULL);
	while (sqlite3_step(st) == SQLITE_ROW && r->n < 4 * DELTA_ROWS) {
		r->ts[r->n] = sqlite3_column_int64(st, 0);
		r->len[r->n] = (size_t)sqlite3_column_bytes(st, 1);
		r->data[r->n] = xcalloc(r->len[r->n] + 1, 1);
		memcpy(r->data[r->n], sqlite3_column_blob(st, 1), r->len[r->n]);
		r->n++;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
}

void raw_rows_free(struct raw_rows *r) {
	for (size_t i = 0; i < r->n; i++) {
		free(r->data[i]);
	}
	r->n = 0;
}

void raw_exec(const char *path, const char *sql) {
	sqlite3 *db;
	sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
	char *err = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		printf("# %s: %s\n", sql, err);
	}
	sqlite3_free(err);
	sqlite3_close(db);
}

struct store *delta_db(const char *path, const struct delta_history *h, const int *order) {
	remove_db(path);
	struct store *store;
	if (store_open(&store, path, STORE_MODE_WRITE) < 0) {
		return NULL;
	}
	for (int k = 0; k < DELTA_ROWS; k++) {
		int i = order ? order[k] : k;
		put(store, h->ts[i], CLOCK_STATE_SYNCED, h->v[i], NULL);
	}
	return store;
}
