/*
 * The store's byte formats (codec.h): varints, zigzag, packed pairs (absolute, or against the
 * row before), histogram blobs.
 */
#include "codec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t codec_put_varint(uint8_t *p, uint64_t v) {
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

bool codec_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
	uint64_t r = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*p >= end) {
			return false;
		}
		uint8_t b = *(*p)++;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

static inline size_t varint_len(uint64_t v) {
	return 1 + (size_t)(63 - __builtin_clzll(v | 1)) / 7; // 7 bits a byte
}

/*
 * The run form's cost beyond the values: the marker and each run's (gap, length), or SIZE_MAX
 * when the ids cannot be runs (negative or not strictly ascending).
 */
static size_t runs_overhead(const struct codec_pair *pairs, size_t n) {
	size_t len = 1;
	int64_t last = -1;
	for (size_t i = 0; i < n;) {
		if (pairs[i].id <= last) {
			return SIZE_MAX;
		}
		size_t j = i + 1;
		while (j < n && pairs[j].id == pairs[j - 1].id + 1) {
			j++;
		}
		len += varint_len((uint64_t)(pairs[i].id - last - 1)) + varint_len(j - i);
		last = pairs[j - 1].id;
		i = j;
	}
	return len;
}

/* The coded value of pairs[i]: zigzag q, or with @base zigzag of q less the base's q. */
struct value_coder {
	const struct codec_pair *base;
	size_t n_base, at;
};

static inline uint64_t code_value(struct value_coder *c, const struct codec_pair *pair) {
	if (!c->base) {
		return codec_zigzag(pair->q);
	}
	while (c->at < c->n_base && c->base[c->at].id < pair->id) {
		c->at++;
	}
	uint64_t bq =
		c->at < c->n_base && c->base[c->at].id == pair->id ? (uint64_t)c->base[c->at].q : 0;
	return codec_zigzag((int64_t)((uint64_t)pair->q - bq));
}

/* Writes the runs of @pairs with their values coded by @c; returns the length. */
static size_t put_runs(uint8_t *out, const struct codec_pair *pairs, size_t n,
		       struct value_coder c) {
	size_t len = 0;
	int64_t last = -1;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && pairs[j].id == pairs[j - 1].id + 1) {
			j++;
		}
		len += codec_put_varint(out + len, (uint64_t)(pairs[i].id - last - 1));
		len += codec_put_varint(out + len, j - i);
		for (; i < j; i++) {
			len += codec_put_varint(out + len, code_value(&c, &pairs[i]));
		}
		last = pairs[j - 1].id;
	}
	return len;
}

/* The pair form's cost of the ids. */
static size_t pairs_overhead(const struct codec_pair *pairs, size_t n) {
	size_t ids = 0;
	int64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		ids += varint_len((uint64_t)pairs[i].id - (uint64_t)prev);
		prev = pairs[i].id;
	}
	return ids;
}

/* The shorter absolute form; @runs is runs_overhead(). */
static size_t encode_absolute(uint8_t *out, const struct codec_pair *pairs, size_t n, size_t runs) {
	size_t ids = pairs_overhead(pairs, n);
	// A pair row never starts with 0 unless its first id is 0, which the runs always take.
	if (runs <= ids || (n > 0 && pairs[0].id == 0)) {
		out[0] = CODEC_ROW_RUNS;
		return 1 + put_runs(out + 1, pairs, n, (struct value_coder){0});
	}
	size_t len = 0;
	int64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		len += codec_put_varint(out + len, (uint64_t)pairs[i].id - (uint64_t)prev);
		len += codec_put_varint(out + len, codec_zigzag(pairs[i].q));
		prev = pairs[i].id;
	}
	return len;
}

size_t codec_pairs_encode(uint8_t *out, const struct codec_pair *pairs, size_t n) {
	return encode_absolute(out, pairs, n, runs_overhead(pairs, n));
}

size_t codec_row_encode(uint8_t *out, const struct codec_pair *pairs, size_t n,
			const struct codec_pair *base, size_t n_base) {
	size_t runs = runs_overhead(pairs, n);
	if (!base || n_base == 0 || runs == SIZE_MAX) {
		return encode_absolute(out, pairs, n, runs);
	}
	// The values decide: both forms code the ids alike (the delta form as runs).
	struct value_coder delta = {.base = base, .n_base = n_base};
	size_t abs_len = 0, delta_len = 0;
	for (size_t i = 0; i < n; i++) {
		abs_len += varint_len(codec_zigzag(pairs[i].q));
		delta_len += varint_len(code_value(&delta, &pairs[i]));
	}
	// Only where shorter: values that moved far stay absolute and cost no more than before.
	size_t ids = pairs_overhead(pairs, n);
	if (CODEC_ROW_DELTA_LEN + runs - 1 + delta_len >= (runs < ids ? runs : ids) + abs_len) {
		return encode_absolute(out, pairs, n, runs);
	}
	memset(out, 0, CODEC_ROW_DELTA_LEN);
	delta.at = 0;
	return CODEC_ROW_DELTA_LEN + put_runs(out + CODEC_ROW_DELTA_LEN, pairs, n, delta);
}

bool codec_row_is_delta(const uint8_t *p, size_t len) {
	static const uint8_t marker[CODEC_ROW_DELTA_LEN] = {0};
	return len >= CODEC_ROW_DELTA_LEN && memcmp(p, marker, CODEC_ROW_DELTA_LEN) == 0;
}

bool codec_pair_next(struct codec_pair_iter *it, struct codec_pair *out) {
	if (!it->started) {
		it->started = true;
		if (codec_row_is_delta(it->p, (size_t)(it->end - it->p))) {
			if (!it->base) {
				it->bad = true;
				return false;
			}
			it->p += CODEC_ROW_DELTA_LEN;
			it->runs = true;
			it->delta = true;
			it->id = -1;
		} else if (it->p < it->end && *it->p == CODEC_ROW_RUNS) {
			it->p++;
			it->runs = true;
			it->id = -1;
		}
	}
	if (it->p >= it->end) {
		it->bad = it->left > 0; // a run cut short at a value's end
		return false;
	}
	uint64_t delta, zq;
	if (it->runs) {
		if (it->left == 0) {
			uint64_t gap, len;
			if (!codec_get_varint(&it->p, it->end, &gap) ||
			    !codec_get_varint(&it->p, it->end, &len) || len == 0) {
				it->bad = true;
				return false;
			}
			it->id = (int64_t)((uint64_t)it->id + gap);
			it->left = len;
		}
		if (!codec_get_varint(&it->p, it->end, &zq)) {
			it->bad = true;
			return false;
		}
		it->left--;
		it->id++;
		*out = (struct codec_pair){it->id, codec_unzigzag(zq)};
		if (it->delta) {
			while (it->at < it->n_base && it->base[it->at].id < it->id) {
				it->at++;
			}
			if (it->at < it->n_base && it->base[it->at].id == it->id) {
				out->q = (int64_t)((uint64_t)out->q + (uint64_t)it->base[it->at].q);
			}
		}
		return true;
	}
	if (!codec_get_varint(&it->p, it->end, &delta) || !codec_get_varint(&it->p, it->end, &zq)) {
		it->bad = true;
		return false;
	}
	it->id = (int64_t)((uint64_t)it->id + delta);
	out->id = it->id;
	out->q = codec_unzigzag(zq);
	return true;
}

/* codec_get_varint() inline, the one-byte case first: most values of a row are one byte. */
static inline bool get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
	const uint8_t *q = *p;
	if (q < end && *q < 0x80) {
		*v = *q;
		*p = q + 1;
		return true;
	}
	uint64_t r = 0;
	for (unsigned shift = 0; shift < 64 && q < end; shift += 7) {
		uint8_t b = *q++;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			*p = q;
			return true;
		}
	}
	*p = q;
	return false;
}

size_t codec_row_decode(struct codec_pair *out, const uint8_t *p, size_t len,
			const struct codec_pair *base, size_t n_base, bool *bad) {
	const uint8_t *end = p + len;
	size_t n = 0;
	*bad = false;
	bool delta = codec_row_is_delta(p, len);
	if (delta && !base) {
		*bad = true;
		return 0;
	}
	if (delta) {
		p += CODEC_ROW_DELTA_LEN;
	} else if (p < end && *p == CODEC_ROW_RUNS) {
		p++;
	} else {
		int64_t id = 0;
		while (p < end) {
			uint64_t d, zq;
			if (!get_varint(&p, end, &d) || !get_varint(&p, end, &zq)) {
				*bad = true;
				return n;
			}
			id = (int64_t)((uint64_t)id + d);
			out[n++] = (struct codec_pair){id, codec_unzigzag(zq)};
		}
		return n;
	}
	int64_t id = -1;
	size_t at = 0;
	while (p < end) {
		uint64_t gap, run;
		if (!get_varint(&p, end, &gap) || !get_varint(&p, end, &run) || run == 0) {
			*bad = true;
			return n;
		}
		id = (int64_t)((uint64_t)id + gap);
		for (; run > 0; run--) {
			uint64_t zq;
			if (!get_varint(&p, end, &zq)) {
				*bad = true;
				return n;
			}
			id++;
			int64_t q = codec_unzigzag(zq);
			if (delta) {
				while (at < n_base && base[at].id < id) {
					at++;
				}
				if (at < n_base && base[at].id == id) {
					q = (int64_t)((uint64_t)q + (uint64_t)base[at].q);
				}
			}
			out[n++] = (struct codec_pair){id, q};
		}
	}
	return n;
}

size_t codec_hist_encode_values(uint8_t *out, const int64_t *sorted, size_t n) {
	size_t len = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && sorted[j] == sorted[i]) {
			j++;
		}
		uint64_t q = i == 0 ? codec_zigzag(sorted[i])
				    : (uint64_t)sorted[i] - (uint64_t)sorted[i - 1];
		len += codec_put_varint(out + len, q);
		len += codec_put_varint(out + len, (uint64_t)(j - i));
		i = j;
	}
	return len;
}

static int cmp_bin(const void *a, const void *b) {
	const struct codec_bin *x = a, *y = b;
	return (x->q > y->q) - (x->q < y->q);
}

size_t codec_hist_encode_bins(uint8_t *out, struct codec_bin *bins, size_t n) {
	if (n > 1) { // qsort() wants a real array even for no element
		qsort(bins, n, sizeof(*bins), cmp_bin);
	}
	size_t len = 0;
	int64_t prev = 0;
	for (size_t i = 0; i < n;) {
		int64_t q = bins[i].q, count = 0;
		for (; i < n && bins[i].q == q; i++) {
			count += bins[i].count;
		}
		uint64_t dq = len == 0 ? codec_zigzag(q) : (uint64_t)q - (uint64_t)prev;
		len += codec_put_varint(out + len, dq);
		len += codec_put_varint(out + len, (uint64_t)count);
		prev = q;
	}
	return len;
}

bool codec_hist_next(struct codec_hist_iter *it, struct codec_bin *out) {
	if (it->p >= it->end) {
		return false;
	}
	uint64_t dq, count;
	if (!codec_get_varint(&it->p, it->end, &dq) || !codec_get_varint(&it->p, it->end, &count)) {
		it->bad = true;
		return false;
	}
	it->q = it->n == 0 ? (uint64_t)codec_unzigzag(dq) : it->q + dq;
	it->n++;
	*out = (struct codec_bin){(int64_t)it->q, (int64_t)count};
	return true;
}
