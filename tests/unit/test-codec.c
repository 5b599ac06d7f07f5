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
	test_hist();
	return test_done();
}
