/*
 * libFuzzer target for the compacted history's byte formats (blockcodec.h): any bytes decoded as
 * a chunk (whole, or up to a cycle) or a map either fail cleanly or yield values within the
 * reader's bounds, a chunk read up to a cycle the values of its whole decode before it; and the
 * input read as values and a presence pattern round-trips through the encoder exactly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blockcodec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_CYCLES 2048

static uint32_t idx[MAX_CYCLES], idx_back[MAX_CYCLES];
static int64_t q[MAX_CYCLES], q_back[MAX_CYCLES], ts[MAX_CYCLES];
static uint64_t scratch[BLOCKCODEC_SCRATCH(MAX_CYCLES)];
static int64_t palette[MAX_CYCLES];
static struct blockcodec_cycle cycles[MAX_CYCLES], cycles_back[MAX_CYCLES];
static uint8_t out[BLOCKCODEC_CHUNK_MAX(MAX_CYCLES) + BLOCKCODEC_MAP_MAX(MAX_CYCLES)];

/* Chunk @c's indexes @ix: within its cycles, ascending. */
static void check_chunk(const struct blockcodec_chunk *c, const uint32_t *ix) {
	if (c->n > c->cycles || c->cycles > MAX_CYCLES) {
		abort();
	}
	for (size_t i = 0; i < c->n; i++) {
		if (ix[i] < c->first || ix[i] >= c->first + c->cycles ||
		    (i > 0 && ix[i] <= ix[i - 1])) {
			abort();
		}
	}
}

/* The input as blobs: each must be refused or decode within the bounds given. */
static void decode_any(const uint8_t *data, size_t size) {
	struct blockcodec_chunk c, u;
	bool whole = blockcodec_chunk_decode(data, size, MAX_CYCLES, idx, q, palette, &c);
	if (whole) {
		check_chunk(&c, idx);
	}
	// Up to a cycle the last byte names: the values before it, as the whole decode read them.
	size_t until = size > 0 ? (size_t)data[size - 1] * 8 : 0;
	if (blockcodec_chunk_decode_until(data, size, MAX_CYCLES, until, idx_back, q_back, palette,
					  &u)) {
		check_chunk(&u, idx_back);
		size_t before = 0;
		while (whole && before < c.n && idx[before] < until) {
			before++;
		}
		if (whole && u.n != before) {
			abort();
		}
		for (size_t i = 0; whole && i < u.n; i++) {
			if (idx_back[i] != idx[i] || q_back[i] != q[i] || idx_back[i] >= until) {
				abort();
			}
		}
	} else if (whole) {
		abort(); // what reads whole reads up to any cycle
	}
	struct blockcodec_map m;
	if (blockcodec_map_decode(data, size, MAX_CYCLES, cycles, ts, &m)) {
		for (size_t i = 0; i < m.n; i++) {
			if (cycles[i].clock < 0 || cycles[i].clock > 2 || cycles[i].boot < 0 ||
			    (i > 0 && cycles[i].ts <= cycles[i - 1].ts)) {
				abort();
			}
		}
	}
}

/*
 * The input as a chunk to write: a byte of presence per cycle (odd: present) and the values as
 * 8-byte words, small ones widened by the first byte's shift so every width is reached.
 */
static void round_trip(const uint8_t *data, size_t size) {
	if (size < 2) {
		return;
	}
	unsigned shift = data[0] % 64;
	size_t n_cycles = (size - 1) / 9;
	n_cycles = n_cycles > MAX_CYCLES ? MAX_CYCLES : n_cycles;
	size_t n = 0;
	int64_t t = 0;
	for (size_t i = 0; i < n_cycles; i++) {
		const uint8_t *p = data + 1 + n_cycles + 8 * i;
		uint64_t w = 0;
		memcpy(&w, p, 8);
		t += 1 + (int64_t)(w & 0xffff);
		cycles[i] = (struct blockcodec_cycle){.ts = t, .clock = (int)(w % 3), .boot = 0};
		if (data[1 + i] & 1) {
			idx[n] = (uint32_t)i;
			q[n++] = (int64_t)(data[1 + i] & 2
						   ? w
						   : (uint64_t)((int64_t)(int8_t)w) << shift);
		}
	}
	size_t len = blockcodec_chunk_encode(out, 0, n_cycles, idx, q, n, scratch);
	struct blockcodec_chunk c;
	if (len == 0 ||
	    !blockcodec_chunk_decode(out, len, n_cycles, idx_back, q_back, palette, &c) ||
	    c.n != n || c.cycles != n_cycles) {
		abort();
	}
	for (size_t i = 0; i < n; i++) {
		if (idx_back[i] != idx[i] || q_back[i] != q[i]) {
			abort();
		}
	}
	len = blockcodec_map_encode(out, 3, cycles, n_cycles, ts, scratch);
	struct blockcodec_map m;
	if (len == 0 || !blockcodec_map_decode(out, len, n_cycles, cycles_back, ts, &m) ||
	    m.n != n_cycles || m.first != 3) {
		abort();
	}
	for (size_t i = 0; i < n_cycles; i++) {
		if (cycles_back[i].ts != cycles[i].ts || cycles_back[i].clock != cycles[i].clock) {
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	decode_any(data, size);
	round_trip(data, size);
	return 0;
}
