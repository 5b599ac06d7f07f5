/*
 * The store's byte formats: varints and zigzag against known bytes, packed pairs and histogram
 * blobs round-tripped over seeded data, and damaged input detected rather than misread.
 */
#include "codec.h"

#include "test.h"

static void test_varint(void) {
	uint8_t b[CODEC_VARINT_MAX];
	is_int(codec_put_varint(b, 0), 1, "0 is one byte");
	is_int(codec_put_varint(b, 300), 2, "300 is two bytes");
	ok(b[0] == 0xac && b[1] == 0x02, "300 = ac 02 (LEB128)");
	is_int(codec_put_varint(b, UINT64_MAX), CODEC_VARINT_MAX, "2^64-1 is the longest");
	const uint8_t *p = b;
	uint64_t v = 0;
	ok(codec_get_varint(&p, b + CODEC_VARINT_MAX, &v) && v == UINT64_MAX && p == b + 10,
	   "2^64-1 reads back");
	p = b;
	ok(!codec_get_varint(&p, b + 3, &v), "a truncated varint is refused");
	uint8_t endless[11];
	memset(endless, 0x80, sizeof(endless));
	p = endless;
	ok(!codec_get_varint(&p, endless + sizeof(endless), &v), "more than 64 bits is refused");

	is_int(codec_zigzag(0), 0, "zigzag 0");
	is_int(codec_zigzag(-1), 1, "zigzag -1");
	is_int(codec_zigzag(1), 2, "zigzag 1");
	is_int(codec_zigzag(-2), 3, "zigzag -2");
	ok(codec_unzigzag(codec_zigzag(INT64_MIN)) == INT64_MIN &&
		   codec_unzigzag(codec_zigzag(INT64_MAX)) == INT64_MAX,
	   "zigzag round-trips the extremes");
}

static void test_pairs(void) {
	enum { N = 200 };
	struct codec_pair in[N];
	int64_t id = 0;
	for (size_t i = 0; i < N; i++) {
		id += 1 + (int64_t)(rng() % 1000);
		int64_t q = (int64_t)(rng() >> 1) >> (rng() % 63);
		in[i] = (struct codec_pair){id, rng() & 1 ? q : -q};
	}
	in[0].q = INT64_MIN;
	in[1].q = INT64_MAX;
	uint8_t buf[N * 2 * CODEC_VARINT_MAX];
	size_t len = codec_pairs_encode(buf, in, N);
	struct codec_pair_iter it = {.p = buf, .end = buf + len};
	struct codec_pair out;
	size_t n = 0;
	bool same = true;
	while (codec_pair_next(&it, &out)) {
		same = same && n < N && out.id == in[n].id && out.q == in[n].q;
		n++;
	}
	ok(same && n == N && !it.bad, "200 seeded pairs round-trip");

	struct codec_pair small[] = {{3, 45000}, {4, -2}, {9, 0}};
	len = codec_pairs_encode(buf, small, 3);
	// id 3, zigzag(45000) = 90000 in three bytes; +1, zigzag(-2) = 3; +5, 0
	is_int(len, 1 + 3 + 1 + 1 + 1 + 1, "ids as deltas, values zigzagged: 8 bytes");
	it = (struct codec_pair_iter){.p = buf, .end = buf + len - 1}; // the last byte lost
	n = 0;
	while (codec_pair_next(&it, &out)) {
		n++;
	}
	ok(n == 2 && it.bad, "a damaged row stops at the damage and says so");
}

/* Round-trips @in[0..n) and returns the encoded length, 0 when it did not come back whole. */
static size_t round_trip(const struct codec_pair *in, size_t n, uint8_t *buf) {
	size_t len = codec_pairs_encode(buf, in, n);
	struct codec_pair_iter it = {.p = buf, .end = buf + len};
	struct codec_pair out;
	size_t k = 0;
	bool same = true;
	while (codec_pair_next(&it, &out)) {
		same = same && k < n && out.id == in[k].id && out.q == in[k].q;
		k++;
	}
	return same && k == n && !it.bad ? len : 0;
}

/*
 * Runs of consecutive ids (a cycle of every channel) are written as (gap, length) and the
 * values, behind a leading 0 byte that a pair row can never start with; pair rows written
 * before stay readable, and the shorter form is chosen.
 */
static void test_runs(void) {
	enum { N = 300 };
	struct codec_pair in[N];
	uint8_t buf[N * 2 * CODEC_VARINT_MAX + 1];
	for (size_t i = 0; i < 25; i++) {
		in[i] = (struct codec_pair){(int64_t)i + 1, 45000 + (int64_t)i}; // three bytes each
	}
	size_t len = round_trip(in, 25, buf);
	is_int(len, 3 + 25 * 3, "25 consecutive channels: marker, one run, the values");
	ok(buf[0] == 0 && buf[1] == 1 && buf[2] == 25, "the run starts at id 1 and is 25 long");

	struct codec_pair two_runs[] = {{1, 5}, {2, -5}, {3, 0}, {7, 1}, {8, 2}};
	len = round_trip(two_runs, 5, buf);
	// 0; gap 0 (1 = 0 + 1 + 0), length 3, three values; gap 3 (7 = 3 + 1 + 3), length 2, two
	is_int(len, 1 + 2 + 3 + 2 + 2, "two runs: 10 bytes, as many as pairs");
	ok(buf[0] == 0, "runs when not longer than pairs");

	struct codec_pair zero[] = {{0, 7}, {1, 8}};
	ok(round_trip(zero, 2, buf) > 0 && buf[0] == 0, "id 0 is written as a run");

	struct codec_pair sparse[] = {{3, 45000}, {40, -2}, {900, 0}};
	len = round_trip(sparse, 3, buf);
	ok(len > 0 && buf[0] != 0, "scattered ids stay pairs (a run each would be longer)");

	// A row written before the runs: (3, 45000), (4, -2), (9, 0) as id deltas and zigzag.
	const uint8_t old[] = {0x03, 0x90, 0xbf, 0x05, 0x01, 0x03, 0x05, 0x00};
	struct codec_pair_iter it = {.p = old, .end = old + sizeof(old)};
	struct codec_pair out, got[3];
	size_t n = 0;
	while (n < 3 && codec_pair_next(&it, &out)) {
		got[n++] = out;
	}
	ok(n == 3 && !codec_pair_next(&it, &out) && !it.bad && got[0].id == 3 &&
		   got[0].q == 45000 && got[1].id == 4 && got[1].q == -2 && got[2].id == 9 &&
		   got[2].q == 0,
	   "a pair row written before still reads");

	len = round_trip(in, 25, buf);
	it = (struct codec_pair_iter){.p = buf, .end = buf + len - 1}; // the last byte lost
	n = 0;
	while (codec_pair_next(&it, &out)) {
		n++;
	}
	ok(n == 24 && it.bad, "a damaged run stops at the damage and says so");
	struct codec_pair small_run[] = {{1, 0}, {2, 0}, {3, 0}};
	len = round_trip(small_run, 3, buf);
	it = (struct codec_pair_iter){.p = buf, .end = buf + len - 1}; // the last value lost
	n = 0;
	while (codec_pair_next(&it, &out)) {
		n++;
	}
	ok(n == 2 && it.bad, "a run cut at a value's end is damage too");
	const uint8_t empty_run[] = {0x00, 0x00, 0x00, 0x02};
	it = (struct codec_pair_iter){.p = empty_run, .end = empty_run + sizeof(empty_run)};
	ok(!codec_pair_next(&it, &out) && it.bad, "a run of length 0 is damage");

	// Seeded: most of 300 channels present, a value of any size each.
	bool all = true;
	for (int round = 0; round < 50; round++) {
		size_t m = 0;
		for (int64_t id = 1; id <= N; id++) {
			if (rng() % 10 != 0) {
				int64_t q = (int64_t)(rng() >> 1) >> (rng() % 63);
				in[m++] = (struct codec_pair){id, rng() & 1 ? q : -q};
			}
		}
		all = all && round_trip(in, m, buf) > 0;
	}
	ok(all, "50 seeded rows of most of 300 channels round-trip");
}

/* Decodes @len bytes against @base; the pairs read, -1 on damage. */
static int decode_row(const uint8_t *buf, size_t len, const struct codec_pair *base, size_t n_base,
		      struct codec_pair *out, size_t cap) {
	struct codec_pair_iter it = {.p = buf, .end = buf + len, .base = base, .n_base = n_base};
	struct codec_pair p;
	size_t n = 0;
	while (codec_pair_next(&it, &p)) {
		if (n < cap) {
			out[n] = p;
		}
		n++;
	}
	return it.bad ? -1 : (int)n;
}

static bool same_pairs(const struct codec_pair *a, const struct codec_pair *b, size_t n) {
	for (size_t i = 0; i < n; i++) {
		if (a[i].id != b[i].id || a[i].q != b[i].q) {
			return false;
		}
	}
	return true;
}

/*
 * The delta form: a row coded against the row before it (its base), taken only where shorter,
 * behind three 0 bytes that no row of the other forms starts with.
 */
static void test_delta(void) {
	enum { N = 25 };
	struct codec_pair base[N], row[N], out[N + 1];
	uint8_t buf[CODEC_ROW_MAX(N)], abs[CODEC_ROW_MAX(N)];
	for (size_t i = 0; i < N; i++) {
		base[i] = (struct codec_pair){(int64_t)i + 1, 1800000000 + (int64_t)i * 1000};
		row[i] = (struct codec_pair){(int64_t)i + 1, base[i].q + (int64_t)(i % 5) - 2};
	}
	size_t len = codec_row_encode(buf, row, N, base, N);
	size_t alen = codec_pairs_encode(abs, row, N);
	ok(codec_row_is_delta(buf, len) && buf[0] == 0 && buf[1] == 0 && buf[2] == 0,
	   "a row close to its base is a delta row: three 0 bytes first");
	is_int(len, CODEC_ROW_DELTA_LEN + 2 + N, "then one run and a byte a value");
	ok(len < alen, "shorter than the absolute row");
	ok(decode_row(buf, len, base, N, out, N) == N && same_pairs(out, row, N),
	   "decoded against its base it is the row");
	ok(decode_row(buf, len, NULL, 0, out, N) < 0, "without a base it is damage");
	bool bad = false;
	ok(codec_row_decode(out, buf, len, NULL, 0, &bad) == 0 && bad,
	   "also to the whole-row decoder");
	ok(decode_row(buf, len - 1, base, N, out, N) < 0, "cut short it is damage");
	ok(!codec_row_is_delta(abs, alen) && decode_row(abs, alen, base, N, out, N) == N &&
		   same_pairs(out, row, N),
	   "an absolute row ignores a base");

	// A channel the base lacks is coded against 0; one the row lacks is skipped.
	struct codec_pair sparse_base[] = {{2, 100000}, {3, 70000}, {9, 5}};
	struct codec_pair sparse[] = {{1, 44}, {2, 100001}, {3, 70001}, {4, 72}, {5, 73}, {6, 3}};
	len = codec_row_encode(buf, sparse, 6, sparse_base, 3);
	ok(codec_row_is_delta(buf, len) && decode_row(buf, len, sparse_base, 3, out, 6) == 6 &&
		   same_pairs(out, sparse, 6),
	   "channels new to the row are coded absolute inside it");

	// A row no closer to its base stays absolute; the extremes wrap modulo 2^64 and come back.
	struct codec_pair far_base[] = {{1, 0}, {2, 0}, {3, 70000}};
	struct codec_pair far[] = {{1, 1000000000000000}, {2, -1000000000000000}, {3, 1}};
	len = codec_row_encode(buf, far, 3, far_base, 3);
	ok(!codec_row_is_delta(buf, len) && decode_row(buf, len, far_base, 3, out, 3) == 3 &&
		   same_pairs(out, far, 3),
	   "a row no closer to its base stays absolute");
	struct codec_pair wrap_base[] = {{1, INT64_MAX}, {2, INT64_MIN}, {3, 5}, {4, 6}, {5, 7}};
	struct codec_pair wrap[] = {{1, INT64_MIN}, {2, INT64_MAX}, {3, 5}, {4, 6}, {5, 7}};
	len = codec_row_encode(buf, wrap, 5, wrap_base, 5);
	ok(codec_row_is_delta(buf, len) && decode_row(buf, len, wrap_base, 5, out, 5) == 5 &&
		   same_pairs(out, wrap, 5),
	   "differences past the int64 range wrap and read back");

	// No row of the older forms reads as a delta row: a run row of id 0 has a run length.
	struct codec_pair zero[] = {{0, 0}, {1, 0}};
	alen = codec_pairs_encode(abs, zero, 2);
	ok(!codec_row_is_delta(abs, alen) && decode_row(abs, alen, NULL, 0, out, 2) == 2 &&
		   same_pairs(out, zero, 2),
	   "a run row starting at id 0 with zeros is no delta row");

	// Seeded: rows of a random walk over most of 300 channels, each against the one before.
	enum { M = 300 };
	static struct codec_pair walk[2][M], got[M];
	static uint8_t wbuf[CODEC_ROW_MAX(M)];
	size_t n_prev = 0;
	bool all = true;
	int deltas = 0;
	for (int round = 0; round < 200; round++) {
		struct codec_pair *cur = walk[round % 2], *prev = walk[(round + 1) % 2];
		size_t m = 0, b = 0;
		for (int64_t id = 1; id <= M; id++) {
			if (rng() % 10 == 0) {
				continue;
			}
			while (b < n_prev && prev[b].id < id) {
				b++;
			}
			int64_t q = b < n_prev && prev[b].id == id ? prev[b].q
								   : (int64_t)(rng() % 90000);
			int64_t step = (int64_t)(rng() % 7) - 3;
			cur[m++] = (struct codec_pair){
				id, rng() % 50 ? q + step : (int64_t)(rng() >> 1) - INT64_MAX / 2};
		}
		size_t l = codec_row_encode(wbuf, cur, m, round ? prev : NULL, n_prev);
		deltas += codec_row_is_delta(wbuf, l);
		all = all && decode_row(wbuf, l, prev, n_prev, got, M) == (int)m &&
		      same_pairs(got, cur, m);
		// The whole-row decoder reads the same, and stops at damage as the iterator does.
		static struct codec_pair whole[CODEC_ROW_MAX(M)];
		all = all && codec_row_decode(whole, wbuf, l, prev, n_prev, &bad) == m && !bad &&
		      same_pairs(whole, cur, m);
		all = all && codec_row_decode(whole, wbuf, l - 1, prev, n_prev, &bad) < m && bad;
		n_prev = m;
	}
	ok(all && deltas > 150, "200 seeded rows against the row before round-trip");
}

static int cmp_i64(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void test_hist(void) {
	enum { N = 500 };
	int64_t values[N];
	struct codec_bin bins[N];
	for (size_t i = 0; i < N; i++) {
		values[i] = 40000 + (int64_t)(rng() % 50) * 1000 - 60000;
		bins[i] = (struct codec_bin){values[i], 1};
	}
	qsort(values, N, sizeof(*values), cmp_i64);
	uint8_t a[N * 2 * CODEC_VARINT_MAX], b[N * 2 * CODEC_VARINT_MAX];
	size_t la = codec_hist_encode_values(a, values, N);
	size_t lb = codec_hist_encode_bins(b, bins, N);
	ok(la == lb && memcmp(a, b, la) == 0,
	   "from sorted values and from unsorted bins: same blob");

	struct codec_hist_iter it = {.p = a, .end = a + la};
	struct codec_bin bin;
	int64_t total = 0, prev = INT64_MIN;
	bool ascending = true;
	size_t k = 0;
	while (codec_hist_next(&it, &bin)) {
		ascending = ascending && bin.q > prev;
		prev = bin.q;
		// every value of the bin is in the sorted input at the running position
		for (int64_t c = 0; c < bin.count; c++) {
			ascending = ascending && values[k++] == bin.q;
		}
		total += bin.count;
	}
	ok(ascending && !it.bad, "bins ascend and match the values");
	is_int(total, N, "counts add up to the values");

	struct codec_bin two[] = {{7, 2}, {-3, 1}, {7, 3}};
	uint8_t c[6 * CODEC_VARINT_MAX];
	size_t lc = codec_hist_encode_bins(c, two, 3);
	const uint8_t want[] = {0x05, 0x01, 0x0a, 0x05}; // zigzag(-3) = 5, x1; +10, x5
	ok(lc == sizeof(want) && memcmp(c, want, lc) == 0, "merged bins: 05 01 0a 05");
	it = (struct codec_hist_iter){.p = c, .end = c + lc - 1};
	size_t n = 0;
	while (codec_hist_next(&it, &bin)) {
		n++;
	}
	ok(n == 1 && it.bad, "a damaged histogram says so");
}

int main(int argc, char **argv) {
	test_seed(argc, argv);
	test_varint();
	test_pairs();
	test_runs();
	test_delta();
	test_hist();
	return test_done();
}
