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
/** Signed to unsigned so small magnitudes stay short: 0, -1, 1, -2 -> 0, 1, 2, 3. */
uint64_t codec_zigzag(int64_t v);
int64_t codec_unzigzag(uint64_t u);

/** One stored value of a cycle: the channel id and the value as an integer of resolutions. */
struct codec_pair {
	int64_t id;
	int64_t q;
};

/**
 * A sample row's data: (id delta, zigzag q) pairs, @pairs sorted by id ascending. @out holds
 * at least n * 2 * CODEC_VARINT_MAX bytes. Returns the length written.
 */
size_t codec_pairs_encode(uint8_t *out, const struct codec_pair *pairs, size_t n);

/** Iterates a sample row's data; initialise with .p and .end, the rest zero. */
struct codec_pair_iter {
	const uint8_t *p, *end;
	int64_t id;
	bool bad; // set when the data ended inside a pair
};
/** The next pair; false at the end or on damage (it->bad set). */
bool codec_pair_next(struct codec_pair_iter *it, struct codec_pair *out);

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
