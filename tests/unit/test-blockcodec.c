/*
 * The compacted history's byte formats: a series against known bytes, every packing chosen where
 * it is the shortest and each round-tripped, chunks of every presence pattern, maps of clocks
 * and boots, and damaged or cut input refused rather than misread.
 */
#include "blockcodec.h"

#include "codec.h"
#include "test.h"

#define N_MAX 4096

static uint8_t buf[BLOCKCODEC_CHUNK_MAX(N_MAX) + BLOCKCODEC_MAP_MAX(N_MAX)];
static uint64_t scratch[BLOCKCODEC_SCRATCH(N_MAX)];
static int64_t palette[N_MAX];

/* The packing a series of @n > 1 values was written with: the byte after its two varints. */
static int packing_of(const uint8_t *p, size_t len) {
	const uint8_t *end = p + len;
	uint64_t v;
	if (!codec_get_varint(&p, end, &v) || !codec_get_varint(&p, end, &v) || p >= end) {
		return -1;
	}
	return *p;
}

/*
 * Chunk @chunk (@len bytes) of @q at @idx[0..n) over [@first, @first + @cycles) decoded up to
 * each of 64 cycles or so (blockcodec_chunk_decode_until()): the values before it, exactly.
 */
static bool prefixes_read(const uint8_t *chunk, size_t len, size_t first, size_t cycles,
			  const uint32_t *idx, const int64_t *q, size_t n) {
	static uint32_t idx_back[N_MAX];
	static int64_t q_back[N_MAX];
	size_t step = 1 + cycles / 64;
	for (size_t until = first; until <= first + cycles + step; until += step) {
		size_t want = 0;
		while (want < n && idx[want] < until) {
			want++;
		}
		struct blockcodec_chunk c;
		if (!blockcodec_chunk_decode_until(chunk, len, cycles, until, idx_back, q_back,
						   palette, &c) ||
		    c.n != want || c.first != first || c.cycles != cycles) {
			return false;
		}
		for (size_t i = 0; i < want; i++) {
			if (idx_back[i] != idx[i] || q_back[i] != q[i]) {
				return false;
			}
		}
	}
	return true;
}

/* Series @v[0..n) (n > 0) coded at @series as a chunk's values, every cycle present: its prefixes.
 */
static bool series_prefixes(const uint8_t *series, size_t len, const int64_t *v, size_t n) {
	static uint8_t chunk[sizeof(buf)];
	static uint32_t idx[N_MAX];
	size_t at = 0;
	chunk[at++] = BLOCKCODEC_CHUNK;
	at += codec_put_varint(chunk + at, 0); // first
	at += codec_put_varint(chunk + at, n); // cycles
	at += codec_put_varint(chunk + at, 0); // no runs: every cycle present
	chunk[at++] = 0;                       // the values as a series (no palette)
	memcpy(chunk + at, series, len);
	for (size_t i = 0; i < n; i++) {
		idx[i] = (uint32_t)i;
	}
	return prefixes_read(chunk, at + len, 0, n, idx, v, n);
}

static bool series_round_trip(const int64_t *v, size_t n, size_t *len_out) {
	static int64_t back[N_MAX];
	size_t len = blockcodec_series_encode(buf, v, n, scratch);
	const uint8_t *p = buf;
	bool ok = blockcodec_series_decode(&p, buf + len, back, n) && p == buf + len;
	for (size_t i = 0; ok && i < n; i++) {
		ok = back[i] == v[i];
	}
	ok = ok && (n == 0 || series_prefixes(buf, len, v, n));
	if (len_out) {
		*len_out = len;
	}
	return ok;
}

static void test_series_bytes(void) {
	int64_t v[] = {100, 160, 220};
	size_t len = blockcodec_series_encode(buf, v, 3, scratch);
	// zigzag 100 = 200 (c8 01), divisor 60 (3c), varints (0) of zigzag 1 = 2 twice
	static const uint8_t want[] = {0xc8, 0x01, 0x3c, 0x00, 0x02, 0x02};
	ok(len == sizeof(want) && memcmp(buf, want, len) == 0,
	   "100 160 220: first, divisor 60, two varints");
	int64_t same[] = {-5, -5, -5, -5};
	len = blockcodec_series_encode(buf, same, 4, scratch);
	ok(len == 2 && buf[0] == 9 && buf[1] == 0, "a constant series is its value and divisor 0");
	ok(series_round_trip(same, 4, NULL), "a constant series reads back");
	is_int(blockcodec_series_encode(buf, v, 0, scratch), 0, "an empty series is no bytes");
	ok(series_round_trip(v, 1, &len) && len == 2, "one value is its varint");
}

static void test_series_packings(void) {
	static int64_t v[N_MAX];
	size_t len;
	// one huge step: its varint beats a frame, an exception or a long quotient
	int64_t huge[] = {0, INT64_C(1) << 50};
	ok(series_round_trip(huge, 2, &len) && packing_of(buf, len) == 0, "varint: one huge step");
	// a steady clock: every step 60 s, divisor 60, zero bits a value over the frame
	for (size_t i = 0; i < 240; i++) {
		v[i] = 1767225600 + 60 * (int64_t)i;
	}
	ok(series_round_trip(v, 240, &len) && packing_of(buf, len) == 1 && len <= 9,
	   "frame of reference: 240 steady times in a few bytes");
	// small noise with rare large jumps: a narrow width and exceptions
	for (size_t i = 0; i < 1000; i++) {
		int64_t step = (int64_t)(rng() % 5) - 2;
		v[i] = (i ? v[i - 1] : 40000) + (i % 250 == 7 ? 900000 : step);
	}
	ok(series_round_trip(v, 1000, &len) && packing_of(buf, len) == 2,
	   "patched frame: noise with rare jumps");
	// geometric steps: Rice codes
	for (size_t i = 0; i < 1000; i++) {
		uint64_t r = rng();
		int64_t step = (int64_t)(__builtin_ctzll(r | (UINT64_C(1) << 40)) * 3);
		v[i] = (i ? v[i - 1] : 0) + (r & (UINT64_C(1) << 63) ? step : -step);
	}
	ok(series_round_trip(v, 1000, &len) && packing_of(buf, len) == 3, "Rice: geometric steps");
	// a fan's state stepping now and then: short runs of zeros between small steps
	for (size_t i = 0; i < 1000; i++) {
		uint64_t r = rng();
		int64_t step = r % 8 ? 0 : (int64_t)(r / 8 % 3 + 1) * (r & (1u << 20) ? 1 : -1);
		v[i] = (i ? v[i - 1] : 50000) + step * 125;
	}
	ok(series_round_trip(v, 1000, &len) && packing_of(buf, len) == 4,
	   "Rice with runs: occasional small steps");
	// a frequency held for long stretches: a step of 1392 MHz every 40 values
	for (size_t i = 0; i < 1000; i++) {
		v[i] = i / 40 % 2 ? 1800000 : 408000;
	}
	ok(series_round_trip(v, 1000, &len) && len < 64,
	   "a frequency held for 40 values at a time: under 64 bytes");
	// the extremes: differences that wrap, a divisor of 2^63
	int64_t ext[] = {INT64_MIN, INT64_MAX, 0, INT64_MIN, INT64_MIN, -1, 1, INT64_MAX};
	ok(series_round_trip(ext, sizeof(ext) / sizeof(ext[0]), NULL), "the extremes read back");
	int64_t half[] = {0, INT64_MIN, 0, INT64_MIN};
	ok(series_round_trip(half, 4, NULL), "steps of 2^63 read back");
	// seeded series of every width
	bool all = true;
	for (int round = 0; round < 200 && all; round++) {
		size_t n = 1 + rng() % 600;
		unsigned shift = (unsigned)(rng() % 64);
		for (size_t i = 0; i < n; i++) {
			v[i] = (int64_t)((rng() >> shift) * (rng() % 3 == 0 ? 1000 : 1));
		}
		all = series_round_trip(v, n, NULL);
	}
	ok(all, "200 seeded series of every width read back");
}

static bool chunk_round_trip(size_t first, size_t cycles, const uint32_t *idx, const int64_t *q,
			     size_t n) {
	static uint32_t idx_back[N_MAX];
	static int64_t q_back[N_MAX];
	size_t len = blockcodec_chunk_encode(buf, first, cycles, idx, q, n, scratch);
	struct blockcodec_chunk c, h;
	bool ok = len > 0 &&
		  blockcodec_chunk_decode(buf, len, cycles, idx_back, q_back, palette, &c) &&
		  c.first == first && c.cycles == cycles && c.n == n &&
		  blockcodec_chunk_header(buf, len, &h) && h.first == first && h.cycles == cycles;
	for (size_t i = 0; ok && i < n; i++) {
		ok = idx_back[i] == idx[i] && q_back[i] == q[i];
	}
	return ok && prefixes_read(buf, len, first, cycles, idx, q, n);
}

static void test_chunks(void) {
	static uint32_t idx[N_MAX];
	static int64_t q[N_MAX];
	for (size_t i = 0; i < 240; i++) {
		idx[i] = (uint32_t)(10 + i);
		q[i] = 45000 + (int64_t)(i % 7) * 125;
	}
	ok(chunk_round_trip(10, 240, idx, q, 240), "every cycle present");
	ok(chunk_round_trip(10, 240, idx, q, 0), "no cycle present");
	ok(chunk_round_trip(10, 241, idx, q, 240), "the last cycle absent");
	ok(chunk_round_trip(9, 241, idx, q, 240), "the first cycle absent");
	size_t n = 0;
	for (uint32_t c = 0; c < 500; c++) {
		if (c % 3 != 1) {
			idx[n] = c;
			q[n++] = (int64_t)c * -7;
		}
	}
	ok(chunk_round_trip(0, 500, idx, q, n), "every third cycle absent");
	// A TSADC's steps of 923 or 924 m°C have no common divisor; their ranks step by one.
	int64_t temp = 45000;
	for (size_t i = 0; i < 240; i++) {
		idx[i] = (uint32_t)i;
		uint64_t r = rng() % 10; // mostly steady, as a zone is between two readings
		temp += r == 0 ? 923 : r == 1 ? -924 : r == 2 ? 924 : r == 3 ? -923 : 0;
		q[i] = temp;
	}
	size_t plain = blockcodec_series_encode(buf, q, 240, scratch) + 5;
	size_t len = blockcodec_chunk_encode(buf, 0, 240, idx, q, 240, scratch);
	printf("# series %zu bytes, chunk %zu\n", plain, len);
	ok(chunk_round_trip(0, 240, idx, q, 240) && len < plain * 2 / 3,
	   "uneven quanta: a palette and ranks, under two thirds of the series");
	uint32_t bad[] = {5, 4};
	int64_t two[] = {1, 2};
	is_int(blockcodec_chunk_encode(buf, 0, 10, bad, two, 2, scratch), 0,
	       "indexes that do not ascend are refused");
	uint32_t outside[] = {3, 12};
	is_int(blockcodec_chunk_encode(buf, 0, 10, outside, two, 2, scratch), 0,
	       "an index past the range is refused");
	bool all = true;
	for (int round = 0; round < 200 && all; round++) {
		size_t cycles = 1 + rng() % 1000, first = rng() % 5000;
		n = 0;
		unsigned density = (unsigned)(rng() % 4);
		for (size_t c = 0; c < cycles; c++) {
			if (density == 0 || rng() % 4 < density) {
				idx[n] = (uint32_t)(first + c);
				q[n++] = (int64_t)(rng() >> (rng() % 64));
			}
		}
		all = chunk_round_trip(first, cycles, idx, q, n);
	}
	ok(all, "200 seeded chunks of every density read back");
}

static void test_damage(void) {
	static uint32_t idx[N_MAX];
	static int64_t q[N_MAX];
	for (size_t i = 0; i < 240; i++) {
		idx[i] = (uint32_t)i;
		q[i] = (int64_t)(rng() % 1000);
	}
	idx[239] = 300;
	size_t len = blockcodec_chunk_encode(buf, 0, 400, idx, q, 240, scratch);
	struct blockcodec_chunk c;
	bool any = false;
	for (size_t cut = 0; cut < len; cut++) {
		any = any || blockcodec_chunk_decode(buf, cut, 400, idx, q, palette, &c);
	}
	ok(!any, "every cut of a chunk is refused");
	ok(!blockcodec_chunk_decode(buf, len, 399, idx, q, palette, &c),
	   "a chunk over more cycles than the reader holds is refused");
	buf[0] = BLOCKCODEC_MAP;
	ok(!blockcodec_chunk_decode(buf, len, 400, idx, q, palette, &c), "a map is no chunk");
	// random bytes never read past their end (checked by the sanitizers) and rarely decode
	static uint8_t junk[512];
	size_t decoded = 0;
	for (int round = 0; round < 20000; round++) {
		size_t n = rng() % sizeof(junk);
		for (size_t i = 0; i < n; i++) {
			junk[i] = (uint8_t)rng();
		}
		junk[0] = round % 2 ? BLOCKCODEC_CHUNK : BLOCKCODEC_MAP;
		struct blockcodec_cycle cycles[64];
		int64_t ts[64];
		struct blockcodec_map m;
		decoded += blockcodec_chunk_decode(junk, n, N_MAX, idx, q, palette, &c);
		decoded += blockcodec_map_decode(junk, n, 64, cycles, ts, &m);
	}
	ok(decoded < 2000, "random bytes are mostly refused, never misread past their end");
}

static void test_maps(void) {
	static struct blockcodec_cycle in[N_MAX], back[N_MAX];
	static int64_t ts[N_MAX];
	int64_t t = 1767225600;
	for (size_t i = 0; i < 240; i++) {
		in[i] = (struct blockcodec_cycle){.ts = t, .clock = 1, .boot = 3};
		t += 60;
	}
	size_t len = blockcodec_map_encode(buf, 0, in, 240, ts, scratch);
	struct blockcodec_map m;
	bool same = len > 0 && len <= 24 && blockcodec_map_decode(buf, len, 240, back, ts, &m) &&
		    m.n == 240 && m.first == 0;
	for (size_t i = 0; same && i < 240; i++) {
		same = back[i].ts == in[i].ts && back[i].clock == 1 && back[i].boot == 3;
	}
	ok(same, "four steady hours of one boot in 24 bytes at most");
	// fast samples in ms with jitter, a reboot, an unsynced stretch, imported cycles
	t = INT64_C(1767225600000);
	for (size_t i = 0; i < 3000; i++) {
		t += 1000 + (int64_t)(rng() % 9) - 4;
		in[i] = (struct blockcodec_cycle){
			.ts = t,
			.clock = i > 1000 && i < 1200 ? 2
				 : i < 10             ? 0
						      : 1,
			.boot = i < 2000   ? 7
				: i < 2900 ? 8
					   : 0,
		};
	}
	len = blockcodec_map_encode(buf, 17, in, 3000, ts, scratch);
	same = len > 0 && blockcodec_map_decode(buf, len, 3000, back, ts, &m) && m.n == 3000 &&
	       m.first == 17 && blockcodec_map_header(buf, len, &m) && m.first == 17 && m.n == 3000;
	for (size_t i = 0; same && i < 3000; i++) {
		same = back[i].ts == in[i].ts && back[i].clock == in[i].clock &&
		       back[i].boot == in[i].boot;
	}
	ok(same, "3000 jittered fast samples with clock states and boots read back");
	ok(!blockcodec_map_decode(buf, len, 2999, back, ts, &m),
	   "a map of more cycles than the reader holds is refused");
	in[5].ts = in[4].ts;
	is_int(blockcodec_map_encode(buf, 0, in, 10, ts, scratch), 0,
	       "times that do not ascend are refused");
	in[5].ts = in[4].ts + 1;
	in[6].clock = 3;
	is_int(blockcodec_map_encode(buf, 0, in, 10, ts, scratch), 0,
	       "a clock state out of range is refused");
}

int main(void) {
	test_series_bytes();
	test_series_packings();
	test_chunks();
	test_damage();
	test_maps();
	printf("1..%d\n", test_count);
	return test_failed ? 1 : 0;
}
