/*
 * What may differ between the x86-64 build and the arm64 boards: char signedness (arm64's char
 * is unsigned), 64-bit time_t past 2038, 64-bit values in printf and JSON, and the byte layout
 * of the store's packed rows. The fixtures fixtures/db/amd64.db and fixtures/db/arm64.db were
 * written by this program on each architecture (`test-portable --write FILE`); both must read
 * back the same table here, whichever architecture runs the test.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "fixture.h"
#include "json.h"
#include "log.h"
#include "store.h"
#include "test.h"
#include "timefmt.h"
#include "xalloc.h"

#define TS0      INT64_C(2147479200) // 2038-01-19T02:00:00Z: the hour before 32-bit time_t ends
#define N_CYCLES 150                 // one a minute, ending past 2^31 (2038-01-19T03:14:08Z)
#define N_CHAN   4

/* Bytes above 0x7f in a label: negative as a signed char (x86), positive on arm64. */
static struct channel chans[N_CHAN] = {
	{FIXTURE_THERMOCOUPLE, .label = "Geh\xc3\xa4use \xc2\xb0"
					"C"},
	{FIXTURE_SOC_THERMAL, .label = "SoC"},
	{FIXTURE_DMC, .label = "DMC"},
	// not the board's millivolts: volts at µV resolution, so values need more than 32 bits
	{.key = "iio/fec10000.saradc/voltage2",
	 .source = "iio",
	 .label = "ADC \xce\xbcV",
	 .kind = CHANNEL_KIND_VOLTAGE,
	 .unit = "volts",
	 .resolution = 0.000001},
};

/*
 * The quantized value of channel @c in cycle @i, or false when the reading is missing. Signs
 * alternate (zigzag), magnitudes span one to six varint bytes, and the DMC clock exceeds
 * 2^32 Hz so that a 32-bit long or int anywhere on the way would truncate it.
 */
static bool q_at(int i, int c, int64_t *q) {
	switch (c) {
	case 0:
		*q = (i % 2 ? -1 : 1) * (INT64_C(160) + i); // -40.25 .. 77.25 °C in 0.25 steps
		return true;
	case 1:
		*q = -45000 + i * 997; // m°C, negative first
		return i % 7 != 3;     // a sensor that fails now and then
	case 2:
		*q = INT64_C(2112000000) * (1 + i % 3); // up to 6.336 GHz
		return true;
	default:
		// ±2^40 µV: beyond 32 bits, still exact through the double a reading is
		*q = i % 2 ? -(INT64_C(1) << 40) + i : (INT64_C(1) << 40) - i;
		return true;
	}
}

static int write_table(struct store *store) {
	for (int i = 0; i < N_CYCLES; i++) {
		struct reading rd[N_CHAN];
		for (int c = 0; c < N_CHAN; c++) {
			int64_t q;
			bool have = q_at(i, c, &q);
			rd[c] = (struct reading){.value = (double)q * chans[c].resolution,
						 .err = have ? 0 : -EAGAIN};
		}
		struct cycle cycle = {.ts = TS0 + 60 * i,
				      .boot_id = "3f1c1ee0-5bd5-4c64-9d0f-5d0c5d4a2a11",
				      .clock = CLOCK_STATE_SYNCED,
				      .n = N_CHAN,
				      .channels = chans,
				      .readings = rd};
		int rc = store_write_cycle(store, &cycle);
		if (rc < 0) {
			return rc;
		}
	}
	return 0;
}

struct seen {
	int64_t ids[N_CHAN]; // store id of chans[c]
	int n, bad;
	char first_bad[200];
};

static int on_sample(void *ctx, const struct store_sample *s) {
	struct seen *seen = ctx;
	int i = (int)((s->ts - TS0) / 60), c = -1;
	for (int k = 0; k < N_CHAN; k++) {
		if (seen->ids[k] == s->channel_id) {
			c = k;
		}
	}
	int64_t want = 0;
	bool have =
		c >= 0 && (s->ts - TS0) % 60 == 0 && i >= 0 && i < N_CYCLES && q_at(i, c, &want);
	if (!have || s->q != want) {
		if (!seen->bad++) {
			snprintf(seen->first_bad, sizeof(seen->first_bad),
				 "ts %" PRId64 " channel %" PRId64 ": q %" PRId64 ", want %" PRId64,
				 s->ts, s->channel_id, s->q, want);
		}
	}
	seen->n++;
	return 0;
}

/* Reads the table back from @store: channels byte for byte, every sample, the rollups. */
static void check_table(struct store *store, const char *what) {
	char name[160];
	struct store_channel *list = NULL;
	size_t n = 0;
	struct seen seen = {0};
	is_int(store_channels(store, &list, &n), 0, what);
	is_int(n, N_CHAN, "four channels");
	for (size_t k = 0; k < n; k++) {
		for (int c = 0; c < N_CHAN; c++) {
			if (strcmp(list[k].ch.key, chans[c].key) == 0) {
				seen.ids[c] = list[k].id;
				snprintf(name, sizeof(name), "%s: label bytes kept", chans[c].key);
				is_str(list[k].ch.label, chans[c].label, name);
				snprintf(name, sizeof(name), "%s: resolution", chans[c].key);
				ok(list[k].ch.resolution == chans[c].resolution, name);
			}
		}
	}
	store_channels_free(list, n);

	is_int(store_scan_samples(store, TS0, TS0 + 60 * N_CYCLES, NULL, 0, false, on_sample,
				  &seen),
	       0, "scan the samples");
	int missing = N_CYCLES / 7 + (N_CYCLES % 7 > 3);
	is_int(seen.n, N_CYCLES * N_CHAN - missing,
	       "every stored sample, none of the failed reads");
	if (!ok(seen.bad == 0, "every sample has its exact 64-bit value")) {
		printf("#   %d wrong, first: %s\n", seen.bad, seen.first_bad);
	}
}

struct rollup_sums {
	int64_t dmc_id;
	int64_t count, sum_q, max_q, max_ts;
	size_t bins;
};

static int on_rollup(void *ctx, const struct store_rollup *r) {
	struct rollup_sums *sums = ctx;
	if (r->channel_id == sums->dmc_id && r->hour == TS0) {
		sums->count = r->count;
		sums->sum_q = r->sum_q;
		sums->max_q = r->max_q;
		sums->max_ts = r->max_ts;
		sums->bins = r->n_bins;
	}
	return 0;
}

/* The first full hour of the DMC clock: 60 values cycling over 2.112, 4.224, 6.336 GHz. */
static void check_rollup(struct store *store) {
	struct store_channel *list = NULL;
	size_t n = 0;
	struct rollup_sums sums = {0};
	store_channels(store, &list, &n);
	for (size_t k = 0; k < n; k++) {
		if (strcmp(list[k].ch.key, "devfreq/dmc") == 0) {
			sums.dmc_id = list[k].id;
		}
	}
	store_channels_free(list, n);
	is_int(store_scan_rollups(store, TS0, TS0 + 3600, NULL, 0, on_rollup, &sums), 0,
	       "scan the rollups");
	is_int(sums.count, 60, "rollup count");
	is_int(sums.sum_q, INT64_C(2112000000) * (20 * 1 + 20 * 2 + 20 * 3),
	       "rollup sum of 60 values above 2^31 (no 32-bit overflow)");
	is_int(sums.max_q, INT64_C(6336000000), "rollup max above 2^32");
	is_int(sums.max_ts, TS0 + 120, "rollup time of the max");
	is_int(sums.bins, 3, "rollup histogram: three distinct values");
}

static int copy_file(const char *from, const char *to) {
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char chunk[8192];
	size_t got;
	int rc = in && out ? 0 : -errno;
	while (rc == 0 && (got = fread(chunk, 1, sizeof(chunk), in)) > 0) {
		if (fwrite(chunk, 1, got, out) != got) {
			rc = -EIO;
		}
	}
	if (out && fclose(out) != 0) {
		rc = -EIO;
	}
	if (in) {
		fclose(in);
	}
	return rc;
}

static void test_written_here(void) {
	struct store *store = NULL;
	is_int(store_open(&store, ":memory:", STORE_MODE_WRITE), 0, "open :memory:");
	is_int(write_table(store), 0, "write 150 cycles across 2038-01-19T03:14:08Z");
	check_table(store, "channels written here");
	is_int(store_maintain(store, TS0 + 60 * N_CYCLES, 400 * 86400LL), 0, "roll up the hours");
	check_rollup(store);
	store_close(store);
}

/* A database written on the other architecture (a backup copied to a board, or back). */
static void test_fixture(const char *arch) {
	char src[64], dir[] = "/tmp/test-portable-XXXXXX", what[96];
	snprintf(src, sizeof(src), "fixtures/db/%s.db", arch);
	if (!ok(mkdtemp(dir) != NULL, "temp dir")) {
		return;
	}
	// A copy: opening the fixture itself would create -wal/-shm files in the source tree.
	char *path = xasprintf("%s/%s.db", dir, arch);
	snprintf(what, sizeof(what), "copy %s", src);
	is_int(copy_file(src, path), 0, what);
	struct store *store = NULL;
	snprintf(what, sizeof(what), "open the database written on %s", arch);
	// As a writer: the fixtures keep the schema they were written with, and the daemon's
	// migration must carry another architecture's packed rows forward unchanged.
	if (ok(store_open(&store, path, STORE_MODE_WRITE) == 0, what)) {
		snprintf(what, sizeof(what), "channels of the %s database", arch);
		check_table(store, what);
		check_rollup(store);
	}
	store_close(store);
	char *side = xasprintf("%s-wal", path);
	unlink(side);
	free(side);
	side = xasprintf("%s-shm", path);
	unlink(side);
	free(side);
	unlink(path);
	rmdir(dir);
	free(path);
}

static void test_time(void) {
	char iso[TIMEFMT_ISO_LEN];
	int64_t ts = 0;
	timefmt_iso(INT64_C(2147483648), iso);
	is_str(iso, "2038-01-19T03:14:08Z", "2^31 s formats past the 32-bit time_t end");
	ok(timefmt_parse_time("2038-01-19T03:14:08Z", 0, &ts), "parse a time past 2038");
	is_int(ts, INT64_C(2147483648), "... to 2^31");
	timefmt_iso(INT64_C(4102444800), iso);
	is_str(iso, "2100-01-01T00:00:00Z", "2100 formats");
	ok(timefmt_parse_time("2100-01-01", 0, &ts) && ts == INT64_C(4102444800), "2100 parses");
	ok(timefmt_parse_time("-30d", INT64_C(2147483648), &ts) &&
		   ts == INT64_C(2147483648) - 30 * 86400,
	   "relative times from a now past 2^31");
}

static void test_json(void) {
	struct buf b;
	struct json j;
	buf_init(&b);
	json_init(&j, &b, false);
	json_array_begin(&j);
	json_int(&j, INT64_MIN);
	json_int(&j, INT64_MAX);
	json_int(&j, INT64_C(6336000000));
	json_string(&j, "Geh\xc3\xa4use \xc2\xb0"
			"C\x1f\x7f");
	json_array_end(&j);
	is_str(b.data,
	       "[-9223372036854775808,9223372036854775807,6336000000,"
	       "\"Geh\xc3\xa4use \xc2\xb0"
	       "C\\u001f\x7f\"]",
	       "64-bit integers in full; bytes above 0x7f kept, controls escaped");
	buf_finish(&b);
}

int main(int argc, char **argv) {
	log_init(LOG_LEVEL_WARN);
	if (argc == 3 && strcmp(argv[1], "--write") == 0) {
		struct store *store = NULL;
		int rc = store_open(&store, argv[2], STORE_MODE_WRITE);
		rc = rc < 0 ? rc : write_table(store);
		rc = rc < 0 ? rc : store_maintain(store, TS0 + 60 * N_CYCLES, 400 * 86400LL);
		store_close(store);
		if (rc < 0) {
			fprintf(stderr, "test-portable: could not write %s: %s\n", argv[2],
				strerror(-rc));
			return 1;
		}
		// Closing checkpointed the WAL: the fixture is the one file.
		char *side = xasprintf("%s-wal", argv[2]);
		unlink(side);
		free(side);
		side = xasprintf("%s-shm", argv[2]);
		unlink(side);
		free(side);
		return 0;
	}
	printf("# char is %s, long %zu bits, time_t %zu bits\n",
	       CHAR_MIN < 0 ? "signed" : "unsigned", sizeof(long) * CHAR_BIT,
	       sizeof(time_t) * CHAR_BIT);
	ok(sizeof(time_t) == 8, "64-bit time_t");
	test_time();
	test_json();
	test_written_here();
	test_fixture("amd64");
	test_fixture("arm64");
	return test_done();
}
