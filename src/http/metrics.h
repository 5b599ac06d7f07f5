/* Prometheus text exposition (format 0.0.4) of the last cycle in memory. */
#ifndef METRICS_H
#define METRICS_H

#include "buf.h"
#include "live.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/**
 * Appends the exposition of @snap to @out: one gauge family per unit (temperature in celsius,
 * frequency in hertz, ...) with key, label and source labels, per-capacitor life, and the
 * daemon's health. A channel whose last reading failed gets no sample (never a fake 0); its
 * thermlog_channel_ok is 0 instead. Pure: no clock, no I/O.
 */
void metrics_write(const struct live_snapshot *snap, struct buf *out);

#endif
