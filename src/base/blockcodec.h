/*
 * The byte formats of the store's compacted history, pure: a block's map (the times, clock
 * states and boots of its cycles) and a channel's chunk (which of those cycles hold a value, and
 * the values). No SQLite, no allocation: callers give buffers of the documented sizes.
 *
 * A series of integers (the values of a chunk, the times of a map) is coded as its first value
 * (zigzag varint), then the differences between neighbours divided by their greatest common
 * divisor (a varint; 0 when every value equals the first), zigzagged, and packed by the
 * shortest of five packings behind a selector byte: varints, frame of reference (one bit width
 * over the smallest), patched frame of reference (a bit width, the larger values as
 * exceptions), Rice codes (a unary quotient and k low bits) and Rice codes with runs of zeros
 * (a zero then the run's length less one). Differences wrap modulo 2^64, so every int64 series
 * comes back exactly.
 */
#ifndef BLOCKCODEC_H
#define BLOCKCODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BLOCKCODEC_CHUNK 1 // the codec id a chunk's blob starts with
#define BLOCKCODEC_MAP   2 // the codec id a map's blob starts with

/** The longest a coded series of @n values can be: its header and the varint packing. */
#define BLOCKCODEC_SERIES_MAX(n) (2 + 3 * 10 + 10 * (size_t)(n))
/**
 * The room a chunk of @cycles cycles (any number of them present) is written in: codec id,
 * first, cycles, the presence runs (at most @cycles + 1 varints of up to 10 bytes) and the
 * values in both forms (the encoder keeps the shorter).
 */
#define BLOCKCODEC_CHUNK_MAX(cycles) \
	(1 + 20 + 10 + 10 * ((size_t)(cycles) + 1) + 12 + 3 * BLOCKCODEC_SERIES_MAX(cycles))
/** The scratch the chunk encoder needs for @n values, in uint64_t. */
#define BLOCKCODEC_SCRATCH(n) (3 * (size_t)(n))
/** The longest a map of @n cycles can be: its header, the times and two lists of runs. */
#define BLOCKCODEC_MAP_MAX(n) (1 + 20 + BLOCKCODEC_SERIES_MAX(n) + 2 * (10 + 20 * (size_t)(n)))

/**
 * Codes the series @v[0..@n) at @out (at least BLOCKCODEC_SERIES_MAX(n) bytes) with @scratch
 * (at least @n entries); returns the length written. @n 0 writes nothing.
 */
size_t blockcodec_series_encode(uint8_t *out, const int64_t *v, size_t n, uint64_t *scratch);
/**
 * Reads a series of exactly @n values (as many as its chunk says are present) at *@p before
 * @end into @v, advancing *@p; false when it is damaged or cut short (then @v holds garbage).
 */
bool blockcodec_series_decode(const uint8_t **p, const uint8_t *end, int64_t *v, size_t n);

/**
 * A channel's chunk: the cycles [@first, @first + @cycles) of its block (indexes into the
 * block's map), of which those at @idx[0..@n) (ascending, within the range) hold the values
 * @q[0..@n). The values are a series, or their distinct values (a palette, as a series) and
 * each one's rank among them (a series), whichever is shorter, behind a byte that says which.
 * @out holds at least BLOCKCODEC_CHUNK_MAX(cycles) bytes, @scratch BLOCKCODEC_SCRATCH(n)
 * entries. Returns the length, or 0 when @idx is not ascending within the range.
 */
size_t blockcodec_chunk_encode(uint8_t *out, size_t first, size_t cycles, const uint32_t *idx,
			       const int64_t *q, size_t n, uint64_t *scratch);

/** What a chunk's header says. */
struct blockcodec_chunk {
	size_t first, cycles; // the cycles of the block it covers
	size_t n;             // values present
};

/**
 * Decodes a chunk's @len bytes at @p covering at most @max_cycles cycles: its header into *out,
 * the indexes of the cycles holding a value (into the block, ascending) into @idx and the
 * values into @q, both holding at least @max_cycles entries (and @scratch as many, for a
 * palette). False when the blob is damaged, is not a chunk, or covers more than @max_cycles
 * cycles.
 */
bool blockcodec_chunk_decode(const uint8_t *p, size_t len, size_t max_cycles, uint32_t *idx,
			     int64_t *q, int64_t *scratch, struct blockcodec_chunk *out);
/**
 * blockcodec_chunk_decode() of the values of the cycles before @until (an index into the
 * block) alone: out->n counts those. The bytes of the values after them are neither read nor
 * checked (a chunk whose values all come before @until is checked whole).
 */
bool blockcodec_chunk_decode_until(const uint8_t *p, size_t len, size_t max_cycles, size_t until,
				   uint32_t *idx, int64_t *q, int64_t *scratch,
				   struct blockcodec_chunk *out);
/** Reads only a chunk's header (first, cycles; n is left 0); false when it is no chunk. */
bool blockcodec_chunk_header(const uint8_t *p, size_t len, struct blockcodec_chunk *out);

/** One cycle of a block's map. */
struct blockcodec_cycle {
	int64_t ts;   // s since epoch (a cycle) or ms (a fast sample)
	int64_t boot; // the boots row of the daemon that stored it, 0 for none (imported)
	int clock;    // enum clock_state: 0 unknown, 1 synced, 2 unsynced
};

/**
 * A map of @n cycles (strictly ascending ts) that are the cycles [@first, @first + @n) of their
 * block: the times as a series, then the clock states and the boots as runs. @out holds at least
 * BLOCKCODEC_MAP_MAX(n) bytes; @ts and @scratch are scratch of @n entries. Returns the length,
 * or 0 when ts does not ascend or a clock or a boot is out of range (clock 0..2, boot >= 0).
 */
size_t blockcodec_map_encode(uint8_t *out, size_t first, const struct blockcodec_cycle *cycles,
			     size_t n, int64_t *ts, uint64_t *scratch);

/** What a map's header says. */
struct blockcodec_map {
	size_t first, n;
};

/** Reads only a map's header; false when it is no map. */
bool blockcodec_map_header(const uint8_t *p, size_t len, struct blockcodec_map *out);
/**
 * Decodes a map's @len bytes at @p into *out and @cycles (at least @max entries, and @ts as
 * scratch of as many); false when it is damaged, is not a map, holds more than @max cycles or
 * times that do not ascend.
 */
bool blockcodec_map_decode(const uint8_t *p, size_t len, size_t max,
			   struct blockcodec_cycle *cycles, int64_t *ts,
			   struct blockcodec_map *out);

#endif
