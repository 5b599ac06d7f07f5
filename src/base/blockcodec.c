/*
 * The compacted history's byte formats (blockcodec.h): series of integers (delta, common
 * divisor, zigzag, the shortest of five packings), a chunk's presence runs and a block's map.
 */
#include "blockcodec.h"

#include <stdlib.h>
#include <string.h>

#include "codec.h"

enum packing {
	PACK_VARINT,    // a varint a value
	PACK_FOR,       // varint base, width w, then (u - base) in w bits each
	PACK_PFOR,      // width w, exception count, u's low w bits each, then (gap, u >> w) each
	PACK_RICE,      // k, then each u as (u >> k) ones, a zero and its k low bits
	PACK_RICE_RUNS, // k, then Rice codes of each nonzero u and of (0, length - 1) a zero run
	PACK_COUNT,
};

#define RICE_UNARY_MAX 64 // the longest quotient a Rice code may have (encoder and decoder)

static inline size_t varint_len(uint64_t v) {
	return 1 + (size_t)(63 - __builtin_clzll(v | 1)) / 7;
}

static inline unsigned bit_width(uint64_t v) {
	return v ? 64 - (unsigned)__builtin_clzll(v) : 0;
}

static uint64_t gcd(uint64_t a, uint64_t b) {
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* --- bits, least significant first ------------------------------------------------------- */

struct bitw {
	uint8_t *out;
	size_t len;
	uint64_t buf;
	unsigned n; // bits in buf, < 8 between calls
};

static void bitw_put(struct bitw *w, uint64_t v, unsigned k) {
	if (k > 56) {
		bitw_put(w, v & 0xffffffffu, 32);
		bitw_put(w, v >> 32, k - 32);
		return;
	}
	if (k == 0) {
		return;
	}
	w->buf |= (v & ((UINT64_C(1) << k) - 1)) << w->n;
	w->n += k;
	while (w->n >= 8) {
		w->out[w->len++] = (uint8_t)w->buf;
		w->buf >>= 8;
		w->n -= 8;
	}
}

static void bitw_ones(struct bitw *w, uint64_t count) {
	while (count > 0) {
		unsigned c = count > 56 ? 56 : (unsigned)count;
		bitw_put(w, (UINT64_C(1) << c) - 1, c);
		count -= c;
	}
}

static size_t bitw_end(struct bitw *w) {
	if (w->n > 0) {
		w->out[w->len++] = (uint8_t)w->buf;
		w->buf = 0;
		w->n = 0;
	}
	return w->len;
}

struct bitr {
	const uint8_t *p, *end;
	uint64_t buf;
	unsigned n; // bits in buf
	bool bad;
};

static inline void bitr_fill(struct bitr *r) {
	while (r->n <= 56 && r->p < r->end) {
		r->buf |= (uint64_t)*r->p++ << r->n;
		r->n += 8;
	}
}

static uint64_t bitr_get(struct bitr *r, unsigned k) {
	if (k > 56) {
		uint64_t lo = bitr_get(r, 32);
		return lo | bitr_get(r, k - 32) << 32;
	}
	if (k == 0) {
		return 0;
	}
	bitr_fill(r);
	if (r->n < k) {
		r->bad = true;
		return 0;
	}
	uint64_t v = r->buf & ((UINT64_C(1) << k) - 1);
	r->buf >>= k;
	r->n -= k;
	return v;
}

/* Ones up to the next zero (consumed), at most RICE_UNARY_MAX. */
static uint64_t bitr_unary(struct bitr *r) {
	uint64_t count = 0;
	for (;;) {
		bitr_fill(r);
		if (r->n == 0) {
			r->bad = true;
			return 0;
		}
		unsigned ones = ~r->buf == 0 ? 64 : (unsigned)__builtin_ctzll(~r->buf);
		if (ones < r->n) {
			count += ones;
			r->buf = ones + 1 < 64 ? r->buf >> (ones + 1) : 0;
			r->n -= ones + 1;
			r->bad = r->bad || count > RICE_UNARY_MAX;
			return count;
		}
		count += r->n;
		r->buf = 0;
		r->n = 0;
		if (count > RICE_UNARY_MAX) {
			r->bad = true;
			return 0;
		}
	}
}

/*
 * A Rice code of parameter @k: its quotient into *@quot, and its value (the quotient shifted
 * over the k low bits). A code the buffer holds whole is taken in one step, else bitr_unary()
 * and bitr_get() read it: the same bits either way.
 */
static inline uint64_t rice_get(struct bitr *r, unsigned k, uint64_t *quot) {
	bitr_fill(r);
	uint64_t zeros = ~r->buf;
	unsigned ones = zeros ? (unsigned)__builtin_ctzll(zeros) : 64;
	if (ones + 1 + k <= r->n) {
		unsigned len = ones + 1 + k;
		uint64_t low = r->buf >> ones >> 1 & ((UINT64_C(1) << k) - 1);
		r->buf = len < 64 ? r->buf >> len : 0;
		r->n -= len;
		*quot = ones;
		return (uint64_t)ones << k | low;
	}
	*quot = bitr_unary(r);
	return *quot << k | bitr_get(r, k);
}

/* The bytes read so far: a bit reader ends at the byte holding its last bit. */
static const uint8_t *bitr_pos(const struct bitr *r) {
	return r->p - r->n / 8;
}

/* --- the packings' sizes, exactly as written ------------------------------------------------ */

static size_t size_varint(const uint64_t *u, size_t m) {
	size_t s = 1;
	for (size_t i = 0; i < m; i++) {
		s += varint_len(u[i]);
	}
	return s;
}

static size_t size_for(const uint64_t *u, size_t m, uint64_t *base, unsigned *width) {
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < m; i++) {
		lo = u[i] < lo ? u[i] : lo;
		hi = u[i] > hi ? u[i] : hi;
	}
	*base = lo;
	*width = bit_width(hi - lo);
	return 2 + varint_len(lo) + (m * *width + 7) / 8;
}

/* The best patched width: w low bits a value, the larger ones as (gap, u >> w) exceptions. */
static size_t size_pfor(const uint64_t *u, size_t m, unsigned *width) {
	size_t best = SIZE_MAX;
	unsigned max_w = 0;
	for (size_t i = 0; i < m; i++) {
		unsigned b = bit_width(u[i]);
		max_w = b > max_w ? b : max_w;
	}
	for (unsigned w = 0; w < 64 && w <= max_w; w++) {
		size_t exc = 0, bytes = 0, last = SIZE_MAX;
		for (size_t i = 0; i < m; i++) {
			if (u[i] >> w) {
				bytes += varint_len(i - (last + 1)) + varint_len(u[i] >> w);
				last = i;
				exc++;
			}
		}
		size_t s = 2 + varint_len(exc) + (m * w + 7) / 8 + bytes;
		if (s < best) {
			best = s;
			*width = w;
		}
	}
	return best;
}

/*
 * The symbols the Rice packings code: the values, or with runs each run of zeros as a zero and
 * its length less one.
 */
struct symbols {
	const uint64_t *u;
	size_t m, i;
	bool runs;
	bool held; // a zero run's length is the next symbol
	uint64_t length;
};

static bool symbols_next(struct symbols *s, uint64_t *sym) {
	if (s->held) {
		s->held = false;
		*sym = s->length;
		return true;
	}
	if (s->i >= s->m) {
		return false;
	}
	*sym = s->u[s->i];
	if (s->runs && *sym == 0) {
		size_t j = s->i;
		while (j < s->m && s->u[j] == 0) {
			j++;
		}
		s->length = j - s->i - 1;
		s->held = true;
		s->i = j;
		return true;
	}
	s->i++;
	return true;
}

/* The best Rice parameter: SIZE_MAX when no k keeps every quotient within RICE_UNARY_MAX. */
static size_t size_rice(const uint64_t *u, size_t m, bool runs, unsigned *k_out) {
	size_t best = SIZE_MAX;
	uint64_t hi = runs ? m : 0; // a run's length is below m
	for (size_t i = 0; i < m; i++) {
		hi = u[i] > hi ? u[i] : hi;
	}
	// Past the widest symbol every larger k only adds bits.
	for (unsigned k = 0; k < 64 && k <= bit_width(hi); k++) {
		uint64_t bits = 0, sym;
		bool ok = true;
		struct symbols it = {.u = u, .m = m, .runs = runs};
		while (ok && symbols_next(&it, &sym)) {
			ok = sym >> k <= RICE_UNARY_MAX;
			bits += (sym >> k) + 1 + k;
		}
		if (ok && (bits + 7) / 8 + 2 < best) {
			best = (size_t)(bits + 7) / 8 + 2;
			*k_out = k;
		}
	}
	return best;
}

/* --- series ---------------------------------------------------------------------------------- */

static size_t write_packing(uint8_t *out, const uint64_t *u, size_t m) {
	uint64_t base;
	unsigned w_for, w_pfor = 0, k_rice = 0, k_runs = 0;
	size_t sizes[PACK_COUNT] = {
		[PACK_VARINT] = size_varint(u, m),
		[PACK_FOR] = size_for(u, m, &base, &w_for),
		[PACK_PFOR] = size_pfor(u, m, &w_pfor),
		[PACK_RICE] = size_rice(u, m, false, &k_rice),
		[PACK_RICE_RUNS] = size_rice(u, m, true, &k_runs),
	};
	enum packing best = PACK_VARINT;
	for (int p = 1; p < PACK_COUNT; p++) {
		best = sizes[p] < sizes[best] ? (enum packing)p : best;
	}
	out[0] = (uint8_t)best;
	size_t len = 1;
	struct bitw w = {.out = out};
	switch (best) {
	case PACK_VARINT:
		for (size_t i = 0; i < m; i++) {
			len += codec_put_varint(out + len, u[i]);
		}
		return len;
	case PACK_FOR:
		len += codec_put_varint(out + len, base);
		out[len++] = (uint8_t)w_for;
		w.len = len;
		for (size_t i = 0; i < m; i++) {
			bitw_put(&w, u[i] - base, w_for);
		}
		return bitw_end(&w);
	case PACK_PFOR: {
		out[len++] = (uint8_t)w_pfor;
		size_t exc = 0;
		for (size_t i = 0; i < m; i++) {
			exc += (u[i] >> w_pfor) != 0;
		}
		len += codec_put_varint(out + len, exc);
		w.len = len;
		for (size_t i = 0; i < m; i++) {
			bitw_put(&w, u[i], w_pfor);
		}
		len = bitw_end(&w);
		size_t last = SIZE_MAX;
		for (size_t i = 0; i < m; i++) {
			if (u[i] >> w_pfor) {
				len += codec_put_varint(out + len, i - (last + 1));
				len += codec_put_varint(out + len, u[i] >> w_pfor);
				last = i;
			}
		}
		return len;
	}
	case PACK_RICE:
	case PACK_RICE_RUNS: {
		unsigned k = best == PACK_RICE ? k_rice : k_runs;
		out[len++] = (uint8_t)k;
		w.len = len;
		struct symbols it = {.u = u, .m = m, .runs = best == PACK_RICE_RUNS};
		uint64_t sym;
		while (symbols_next(&it, &sym)) {
			bitw_ones(&w, sym >> k);
			bitw_put(&w, 0, 1);
			bitw_put(&w, sym, k);
		}
		return bitw_end(&w);
	}
	case PACK_COUNT:
		break;
	}
	return len;
}

size_t blockcodec_series_encode(uint8_t *out, const int64_t *v, size_t n, uint64_t *scratch) {
	if (n == 0) {
		return 0;
	}
	size_t len = codec_put_varint(out, codec_zigzag(v[0]));
	if (n == 1) {
		return len;
	}
	uint64_t g = 0;
	for (size_t i = 1; i < n; i++) {
		int64_t d = (int64_t)((uint64_t)v[i] - (uint64_t)v[i - 1]);
		g = gcd(g, d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d);
	}
	g = g > INT64_MAX ? 1 : g; // every difference is 0 or INT64_MIN: not divided
	len += codec_put_varint(out + len, g);
	if (g == 0) {
		return len; // every value is the first
	}
	for (size_t i = 1; i < n; i++) {
		int64_t d = (int64_t)((uint64_t)v[i] - (uint64_t)v[i - 1]);
		scratch[i - 1] = codec_zigzag(d / (int64_t)g);
	}
	return len + write_packing(out + len, scratch, n - 1);
}

/*
 * Reads the packing of @m quotients at *@p into @u: the first @want of them (with want < m the
 * rest is neither read nor checked, and *@p is left anywhere); false when damaged.
 */
static bool read_packing(const uint8_t **p, const uint8_t *end, uint64_t *u, size_t m,
			 size_t want) {
	if (*p >= end) {
		return false;
	}
	enum packing packing = (enum packing) * (*p)++;
	struct bitr r = {.end = end};
	switch (packing) {
	case PACK_VARINT:
		for (size_t i = 0; i < want; i++) {
			if (!codec_get_varint(p, end, &u[i])) {
				return false;
			}
		}
		return true;
	case PACK_FOR: {
		uint64_t base;
		if (!codec_get_varint(p, end, &base) || *p >= end || **p > 64) {
			return false;
		}
		unsigned w = *(*p)++;
		if ((size_t)(end - *p) < (m / 8) * w) { // cheap bound before the loop
			return false;
		}
		r.p = *p;
		for (size_t i = 0; i < want && !r.bad; i++) {
			u[i] = base + bitr_get(&r, w);
		}
		*p = bitr_pos(&r);
		return !r.bad;
	}
	case PACK_PFOR: {
		uint64_t exc;
		if (*p >= end || **p > 63) {
			return false;
		}
		unsigned w = *(*p)++;
		if (!codec_get_varint(p, end, &exc) || exc > m ||
		    (size_t)(end - *p) < (m / 8) * w) {
			return false;
		}
		r.p = *p;
		for (size_t i = 0; i < want && !r.bad; i++) {
			u[i] = bitr_get(&r, w);
		}
		if (want < m) { // the exceptions follow the m values' bits
			size_t bytes = (m * w + 7) / 8;
			if (r.bad || (size_t)(end - *p) < bytes) {
				return false;
			}
			r.p = *p + bytes;
			r.n = 0;
		}
		*p = bitr_pos(&r);
		uint64_t at = 0;
		// Those after the values wanted are left unread (all are read, and checked, else).
		for (uint64_t e = 0; e < exc && !r.bad && (want == m || at < want); e++) {
			uint64_t gap, high;
			if (!codec_get_varint(p, end, &gap) || !codec_get_varint(p, end, &high) ||
			    gap >= m - at || high == 0 || (w > 0 && high >> (64 - w))) {
				return false;
			}
			at += gap;
			if (at < want) {
				u[at] |= high << w;
			}
			at++;
		}
		return !r.bad;
	}
	case PACK_RICE:
	case PACK_RICE_RUNS: {
		if (*p >= end || **p > 63) {
			return false;
		}
		unsigned k = *(*p)++;
		r.p = *p;
		for (size_t i = 0; i < want && !r.bad;) {
			uint64_t quot, s = rice_get(&r, k, &quot);
			if (packing == PACK_RICE || s != 0) {
				u[i++] = s;
				continue;
			}
			uint64_t run = rice_get(&r, k, &quot) + 1;
			if (r.bad || quot > (UINT64_MAX >> k) || run == 0 || run > m - i) {
				return false;
			}
			memset(&u[i], 0, run * sizeof(*u));
			i += run;
		}
		*p = bitr_pos(&r);
		return !r.bad;
	}
	case PACK_COUNT:
		break;
	}
	return false;
}

/* Reads a series of @n values at *@p, the first @want of them (want <= n) into @v. */
static bool series_decode(const uint8_t **p, const uint8_t *end, int64_t *v, size_t n,
			  size_t want) {
	if (n == 0 || want == 0) {
		return true;
	}
	uint64_t first, g;
	if (!codec_get_varint(p, end, &first)) {
		return false;
	}
	v[0] = codec_unzigzag(first);
	if (n == 1) {
		return true;
	}
	if (!codec_get_varint(p, end, &g) || g > INT64_MAX) {
		return false;
	}
	if (g == 0) {
		for (size_t i = 1; i < want; i++) {
			v[i] = v[0];
		}
		return true;
	}
	// The quotients go into v itself, read back in place: u[i] is read before v[i] is written.
	uint64_t *u = (uint64_t *)v + 1;
	if (!read_packing(p, end, u, n - 1, want - 1)) {
		return false;
	}
	uint64_t at = (uint64_t)v[0];
	for (size_t i = 1; i < want; i++) {
		at += (uint64_t)codec_unzigzag(u[i - 1]) *
		      g; // wraps as the encoder's difference did
		v[i] = (int64_t)at;
	}
	return true;
}

bool blockcodec_series_decode(const uint8_t **p, const uint8_t *end, int64_t *v, size_t n) {
	return series_decode(p, end, v, n, n);
}

/* --- chunks ---------------------------------------------------------------------------------- */

/*
 * A chunk's values: as a series (VALUES_SERIES), or (VALUES_PALETTE) as their distinct values,
 * ascending, and each value's rank among them, both series: a sensor that steps by an uneven
 * quantum (a TSADC's 923 or 924 m°C) or among a few levels (a clock's OPPs) has ranks that
 * differ by 0 or 1 where its differences have no common divisor.
 */
enum values_form { VALUES_SERIES, VALUES_PALETTE };

static int cmp_i64(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The distinct values of @q, ascending, into @palette; returns how many. */
static size_t palette_of(const int64_t *q, size_t n, int64_t *palette) {
	memcpy(palette, q, n * sizeof(*q));
	qsort(palette, n, sizeof(*palette), cmp_i64);
	size_t d = 0;
	for (size_t i = 0; i < n; i++) {
		if (d == 0 || palette[i] != palette[d - 1]) {
			palette[d++] = palette[i];
		}
	}
	return d;
}

static size_t encode_values(uint8_t *out, const int64_t *q, size_t n, uint64_t *scratch) {
	out[0] = VALUES_SERIES;
	size_t plain = 1 + blockcodec_series_encode(out + 1, q, n, scratch);
	if (n < 3) {
		return plain;
	}
	// Written behind the plain form, kept if shorter: the buffer holds both (BLOCKCODEC_*_MAX).
	int64_t *palette = (int64_t *)(scratch + n), *ranks = (int64_t *)(scratch + 2 * n);
	size_t d = palette_of(q, n, palette);
	for (size_t i = 0; i < n; i++) {
		size_t lo = 0, hi = d;
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;
			if (palette[mid] <= q[i]) {
				lo = mid;
			} else {
				hi = mid;
			}
		}
		ranks[i] = (int64_t)lo;
	}
	uint8_t *alt = out + plain;
	alt[0] = VALUES_PALETTE;
	size_t len = 1 + codec_put_varint(alt + 1, d);
	len += blockcodec_series_encode(alt + len, palette, d, scratch);
	len += blockcodec_series_encode(alt + len, ranks, n, scratch);
	if (len >= plain) {
		return plain;
	}
	memmove(out, alt, len);
	return len;
}

/* Reads a chunk's @n values at *@p, the first @want, with @scratch of @n entries (a palette). */
static bool decode_values(const uint8_t **p, const uint8_t *end, int64_t *q, size_t n, size_t want,
			  int64_t *scratch) {
	if (*p >= end) {
		return false;
	}
	enum values_form form = (enum values_form) * (*p)++;
	if (form == VALUES_SERIES) {
		return series_decode(p, end, q, n, want);
	}
	uint64_t d;
	if (form != VALUES_PALETTE || !codec_get_varint(p, end, &d) || d == 0 || d > n ||
	    !blockcodec_series_decode(p, end, scratch, (size_t)d) ||
	    !series_decode(p, end, q, n, want)) {
		return false;
	}
	for (size_t i = 0; i < want; i++) {
		if (q[i] < 0 || (uint64_t)q[i] >= d) {
			return false;
		}
		q[i] = scratch[q[i]];
	}
	return true;
}

/*
 * The presence of a chunk's values as run lengths, present first: with @out NULL counts the
 * runs, else writes their lengths and returns the bytes written.
 */
static size_t presence_runs(uint8_t *out, size_t first, size_t cycles, const uint32_t *idx,
			    size_t n) {
	size_t runs = 0, len = 0, run = 0, i = 0;
	bool state = true;
	for (size_t at = first; at < first + cycles; at++) {
		bool here = i < n && idx[i] == at;
		if (here != state) {
			runs++;
			len += out ? codec_put_varint(out + len, run) : 0;
			state = here;
			run = 0;
		}
		run++;
		i += here;
	}
	runs++;
	len += out ? codec_put_varint(out + len, run) : 0;
	return out ? len : runs;
}

static bool read_header(const uint8_t **p, const uint8_t *end, uint8_t id, size_t *first,
			size_t *count) {
	uint64_t f, c;
	if (*p >= end || **p != id) {
		return false;
	}
	(*p)++;
	if (!codec_get_varint(p, end, &f) || !codec_get_varint(p, end, &c) || f > UINT32_MAX ||
	    c > UINT32_MAX) {
		return false;
	}
	*first = (size_t)f;
	*count = (size_t)c;
	return true;
}

size_t blockcodec_chunk_encode(uint8_t *out, size_t first, size_t cycles, const uint32_t *idx,
			       const int64_t *q, size_t n, uint64_t *scratch) {
	if (n > cycles || first > UINT32_MAX || cycles > UINT32_MAX - first) {
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (idx[i] < first || idx[i] >= first + cycles || (i > 0 && idx[i] <= idx[i - 1])) {
			return 0;
		}
	}
	out[0] = BLOCKCODEC_CHUNK;
	size_t len = 1 + codec_put_varint(out + 1, first);
	len += codec_put_varint(out + len, cycles);
	if (n == cycles) {
		len += codec_put_varint(out + len, 0); // no runs: every cycle holds a value
	} else {
		// Runs alternate present and absent from a present one, which alone may be empty.
		len += codec_put_varint(out + len, presence_runs(NULL, first, cycles, idx, n));
		len += presence_runs(out + len, first, cycles, idx, n);
	}
	return len + (n > 0 ? encode_values(out + len, q, n, scratch) : 0);
}

bool blockcodec_chunk_header(const uint8_t *p, size_t len, struct blockcodec_chunk *out) {
	*out = (struct blockcodec_chunk){0};
	return read_header(&p, p + len, BLOCKCODEC_CHUNK, &out->first, &out->cycles);
}

bool blockcodec_chunk_decode_until(const uint8_t *p, size_t len, size_t max_cycles, size_t until,
				   uint32_t *idx, int64_t *q, int64_t *scratch,
				   struct blockcodec_chunk *out) {
	const uint8_t *end = p + len;
	*out = (struct blockcodec_chunk){0};
	uint64_t n_runs;
	if (!read_header(&p, end, BLOCKCODEC_CHUNK, &out->first, &out->cycles) ||
	    out->cycles > max_cycles || !codec_get_varint(&p, end, &n_runs) ||
	    n_runs > out->cycles + 1) {
		return false;
	}
	// n values in all, the first want of them (those before @until) with their indexes
	size_t n = 0, want = 0;
	if (n_runs == 0) {
		n = out->cycles;
		want = until <= out->first ? 0 : until - out->first < n ? until - out->first : n;
		for (size_t i = 0; i < want; i++) {
			idx[i] = (uint32_t)(out->first + i);
		}
	} else {
		size_t at = 0;
		for (uint64_t r = 0; r < n_runs; r++) {
			uint64_t length;
			if (!codec_get_varint(&p, end, &length) || length > out->cycles - at ||
			    (r > 0 && length == 0)) {
				return false;
			}
			for (uint64_t i = 0; r % 2 == 0 && i < length; i++) {
				size_t cycle = out->first + at + (size_t)i;
				if (cycle < until) {
					idx[want++] = (uint32_t)cycle;
				}
			}
			n += r % 2 == 0 ? (size_t)length : 0;
			at += (size_t)length;
		}
		if (at != out->cycles) {
			return false;
		}
	}
	out->n = want;
	if (want < n) { // the values from @until on are neither read nor checked
		return want == 0 || decode_values(&p, end, q, n, want, scratch);
	}
	return (n == 0 || decode_values(&p, end, q, n, n, scratch)) && p == end;
}

bool blockcodec_chunk_decode(const uint8_t *p, size_t len, size_t max_cycles, uint32_t *idx,
			     int64_t *q, int64_t *scratch, struct blockcodec_chunk *out) {
	return blockcodec_chunk_decode_until(p, len, max_cycles, SIZE_MAX, idx, q, scratch, out);
}

/* --- maps ------------------------------------------------------------------------------------ */

/* Writes the runs of equal values of @v[0..@n): their count, then (value, length) each. */
static size_t put_runs(uint8_t *out, const int64_t *v, size_t n) {
	size_t runs = 0, len;
	for (size_t i = 1; i <= n; i++) {
		runs += i == n || v[i] != v[i - 1];
	}
	len = codec_put_varint(out, n ? runs : 0);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && v[j] == v[i]) {
			j++;
		}
		len += codec_put_varint(out + len, (uint64_t)v[i]);
		len += codec_put_varint(out + len, j - i);
		i = j;
	}
	return len;
}

size_t blockcodec_map_encode(uint8_t *out, size_t first, const struct blockcodec_cycle *cycles,
			     size_t n, int64_t *ts, uint64_t *scratch) {
	if (first > UINT32_MAX || n > UINT32_MAX - first) {
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if ((i > 0 && cycles[i].ts <= cycles[i - 1].ts) || cycles[i].clock < 0 ||
		    cycles[i].clock > 2 || cycles[i].boot < 0) {
			return 0;
		}
		ts[i] = cycles[i].ts;
	}
	out[0] = BLOCKCODEC_MAP;
	size_t len = 1 + codec_put_varint(out + 1, first);
	len += codec_put_varint(out + len, n);
	len += blockcodec_series_encode(out + len, ts, n, scratch);
	for (size_t i = 0; i < n; i++) {
		ts[i] = cycles[i].clock;
	}
	len += put_runs(out + len, ts, n);
	for (size_t i = 0; i < n; i++) {
		ts[i] = cycles[i].boot;
	}
	return len + put_runs(out + len, ts, n);
}

bool blockcodec_map_header(const uint8_t *p, size_t len, struct blockcodec_map *out) {
	*out = (struct blockcodec_map){0};
	return read_header(&p, p + len, BLOCKCODEC_MAP, &out->first, &out->n);
}

/* Reads runs of values (at most @max each) over @n cycles, each given to @set(i, value). */
static bool read_runs(const uint8_t **p, const uint8_t *end, size_t n, uint64_t max,
		      struct blockcodec_cycle *cycles, bool clock) {
	uint64_t n_runs;
	if (!codec_get_varint(p, end, &n_runs) || n_runs > n) {
		return false;
	}
	size_t at = 0;
	for (uint64_t r = 0; r < n_runs; r++) {
		uint64_t value, length;
		if (!codec_get_varint(p, end, &value) || !codec_get_varint(p, end, &length) ||
		    value > max || length == 0 || length > n - at) {
			return false;
		}
		for (uint64_t i = 0; i < length; i++, at++) {
			if (clock) {
				cycles[at].clock = (int)value;
			} else {
				cycles[at].boot = (int64_t)value;
			}
		}
	}
	return at == n;
}

bool blockcodec_map_decode(const uint8_t *p, size_t len, size_t max,
			   struct blockcodec_cycle *cycles, int64_t *ts,
			   struct blockcodec_map *out) {
	const uint8_t *end = p + len;
	*out = (struct blockcodec_map){0};
	if (!read_header(&p, end, BLOCKCODEC_MAP, &out->first, &out->n) || out->n > max ||
	    !blockcodec_series_decode(&p, end, ts, out->n)) {
		return false;
	}
	for (size_t i = 0; i < out->n; i++) {
		if (i > 0 && ts[i] <= ts[i - 1]) {
			return false;
		}
		cycles[i] = (struct blockcodec_cycle){.ts = ts[i]};
	}
	return read_runs(&p, end, out->n, 2, cycles, true) &&
	       read_runs(&p, end, out->n, INT64_MAX, cycles, false) && p == end;
}
