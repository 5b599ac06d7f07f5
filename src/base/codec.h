/*
 * The store's byte formats, pure: LEB128 varints, zigzag for signed values, a cycle's packed
 * (channel id, value) pairs and the histogram blobs of the rollups. No SQLite, no allocation:
 * callers give a buffer of the documented size.
 */
#ifndef CODEC_H
#define CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CODEC_VARINT_MAX 10 // bytes of the longest varint (a 64-bit value)

/** Writes @v as a varint at @p (up to CODEC_VARINT_MAX bytes); returns its length. */
size_t codec_put_varint(uint8_t *p, uint64_t v);
/** Reads a varint at *@p before @end and advances *@p; false when truncated or too long. */
bool codec_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v);
/**
 * Signed to unsigned so small magnitudes stay short: 0, -1, 1, -2 -> 0, 1, 2, 3. Inline here:
 * decoding calls it per value, and the library's -fPIC objects never inline an exported one.
 */
static inline uint64_t codec_zigzag(int64_t v) {
	return v < 0 ? ~((uint64_t)v << 1) : (uint64_t)v << 1;
}
static inline int64_t codec_unzigzag(uint64_t u) {
	return u & 1 ? (int64_t) ~(u >> 1) : (int64_t)(u >> 1);
}

/** One stored value of a cycle: the channel id and the value as an integer of resolutions. */
struct codec_pair {
	int64_t id;
	int64_t q;
};

/**
 * A sample row's data, @pairs sorted by id, ascending and distinct (ids >= 0), in the shorter
 * of two absolute forms (the runs on a tie):
 *  - pairs: (id delta, zigzag q) varints, the first delta from 0 (the form rows had first);
 *  - runs: the byte CODEC_ROW_RUNS, then per run of consecutive ids (gap, length) and the
 *    length's zigzag q varints; a run starts at the previous run's last id + 1 + gap (the
 *    first run after -1), so a cycle of every channel costs three bytes of ids.
 * A pair row cannot start with 0 (channel ids start at 1), so the byte tells the forms apart.
 * @out holds at least CODEC_ROW_MAX(n) bytes. Returns the length written.
 */
#define CODEC_ROW_RUNS   0x00
#define CODEC_ROW_MAX(n) (2 * CODEC_VARINT_MAX * (n) + CODEC_ROW_DELTA_LEN)
size_t codec_pairs_encode(uint8_t *out, const struct codec_pair *pairs, size_t n);

/**
 * A sample row against the row before it (@base, sorted like @pairs; NULL or 0 pairs: none):
 * the shortest of the two absolute forms and the delta form, which is CODEC_ROW_DELTA_LEN
 * zero bytes (a run form row whose first run is an empty one at id 0, which no row written
 * in the run form has: runs are never empty) and then the run form of zigzag(q - base q),
 * the base q being 0 for a channel the base lacks. Differences wrap modulo 2^64, so any q
 * comes back. @out holds at least CODEC_ROW_MAX(n) bytes. Returns the length written.
 */
#define CODEC_ROW_DELTA_LEN 3
size_t codec_row_encode(uint8_t *out, const struct codec_pair *pairs, size_t n,
			const struct codec_pair *base, size_t n_base);

/** Whether a sample row's data (@len bytes at @p) is in the delta form. */
bool codec_row_is_delta(const uint8_t *p, size_t len);

/**
 * Iterates a sample row's data, any form; initialise with .p and .end (and for a row that may
 * be in the delta form, .base and .n_base: the row before it, decoded), the rest zero. A delta
 * row without a base is damage.
 */
struct codec_pair_iter {
	const uint8_t *p, *end;
	const struct codec_pair *base; // the previous row's pairs by id ascending, or NULL
	size_t n_base;
	int64_t id;
	bool bad;      // on damage: cut short, an empty run, a delta row without a base
	bool started;  // the form was read
	bool runs;     // the row is in the run form (or the delta form)
	bool delta;    // the row is in the delta form
	uint64_t left; // values left in the current run
	size_t at;     // the position in base of the current id
};
/** The next pair; false at the end or on damage (it->bad set). */
bool codec_pair_next(struct codec_pair_iter *it, struct codec_pair *out);

/**
 * A whole sample row at once, as codec_pair_next() reads it and faster: the pairs into @out,
 * which holds at least @len of them (a pair takes a byte at least); @base as .base of the
 * iterator. Returns the pairs read; *@bad set on damage, then the pairs before it.
 */
size_t codec_row_decode(struct codec_pair *out, const uint8_t *p, size_t len,
			const struct codec_pair *base, size_t n_base, bool *bad);

/** One histogram bin: a value and how many times it occurred. */
struct codec_bin {
	int64_t q, count;
};

/**
 * A histogram blob: (q delta, count) pairs by q ascending, the first q zigzag encoded. From
 * @sorted values (ascending, repeats counted): codec_hist_encode_values(); from @bins in any
 * order with repeated values (sorted in place and merged): codec_hist_encode_bins(). @out
 * holds at least n * 2 * CODEC_VARINT_MAX bytes. Return the length written.
 */
size_t codec_hist_encode_values(uint8_t *out, const int64_t *sorted, size_t n);
size_t codec_hist_encode_bins(uint8_t *out, struct codec_bin *bins, size_t n);

/** Iterates a histogram blob; initialise with .p and .end, the rest zero. */
struct codec_hist_iter {
	const uint8_t *p, *end;
	uint64_t q;
	size_t n; // bins read so far
	bool bad; // set on damage
};
/** The next bin; false at the end or on damage (it->bad set). */
bool codec_hist_next(struct codec_hist_iter *it, struct codec_bin *out);

#endif
