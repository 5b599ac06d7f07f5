/*
 * The daemon's running capacitor damage: per capacitor, updated per stored cycle, persisted
 * hourly, caught up from raw samples on start and recomputed when an import changed older
 * history. It replays through capreplay.c like the full report (lifetime-report.h), so their
 * figures agree to the bit; the report reads merged days of one steady spacing as histograms
 * instead, equal up to the rounding of the sums.
 */
#ifndef CAPWATCH_H
#define CAPWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capstate.h"
#include "config.h"
#include "cycle.h"
#include "lifetime.h"

struct store;

struct capwatch;

/**
 * Restores each configured capacitor's persisted state (store key "lifetime/<name>"; a state
 * written for a different rating is discarded) and catches up from the raw samples stored after
 * it. @cfg and @store are borrowed and must outlive the capwatch. Samples stand for what
 * struct lifetime_spacing decides, exactly as in the full recomputation. Returns NULL only
 * when the store cannot be read (logged); invalid capacitors are logged and left out.
 */
struct capwatch *capwatch_create(const struct config *cfg, struct store *store);
/** Adds a stored cycle (call after store_write_cycle() succeeded); unsynced cycles are skipped. */
void capwatch_update(struct capwatch *cw, const struct cycle *cycle);
/**
 * Writes the states through store_state_set() when something changed and at least an hour has
 * passed since the last write (the first call writes). @now: s since epoch. 0 or -errno.
 */
int capwatch_persist(struct capwatch *cw, int64_t now);
/** Fills up to @max entries (strings borrowed from the config); returns the number filled. */
size_t capwatch_states(struct capwatch *cw, struct capstate *out, size_t max);
void capwatch_destroy(struct capwatch *cw); // accepts NULL

#endif
