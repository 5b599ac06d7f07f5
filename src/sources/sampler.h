/* The sampler: discovers channels from every enabled source and reads them all once per cycle. */
#ifndef SAMPLER_H
#define SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "channel.h"
#include "config.h"

struct sampler;

/**
 * Opens cfg->sysfs_root and discovers every channel. @cfg is borrowed and must outlive the
 * sampler (swap with sampler_set_config() on reload). Returns NULL if the root cannot be
 * opened (logged).
 */
struct sampler *sampler_create(const struct config *cfg);
void sampler_destroy(struct sampler *sampler); // accepts NULL

/** Replaces the borrowed config and rescans. */
void sampler_set_config(struct sampler *sampler, const struct config *cfg);

/** Re-discovers channels now: new ones appear, vanished ones drop out of the list. */
void sampler_rescan(struct sampler *sampler);
/**
 * Names the channel list sampler_read() returns: it changes with every rescan and reload, and
 * no two lists of the process share one, so equal versions mean the same channels, described
 * the same. Never 0.
 */
uint64_t sampler_channels_version(const struct sampler *sampler);

/** The sysfs root the sampler reads (an O_DIRECTORY fd it owns), for readers beside it. */
int sampler_root_fd(const struct sampler *sampler);

/**
 * Reads every channel once. @mono_s (a monotonic clock) drives the periodic rescan, which also
 * happens after a read reports a vanished object. Returns the channel count; *channels and
 * *readings stay valid until the next sampler call. A failing channel carries err != 0 and is
 * logged only when its state changes.
 */
size_t sampler_read(struct sampler *sampler, int64_t mono_s, const struct channel **channels,
		    const struct reading **readings);

/**
 * The integer the last sampler_read() read from the sysfs file @path (relative to the root,
 * as a channel's path), before any scaling or calibration, for readers beside the sampler that
 * need the same file in the same cycle (throttle detection: zone temperatures, cooling
 * states), so it is read once. False when no channel of that pass read the file whole as an
 * integer, or its read failed. *@hint caches where the channel stood (SIZE_MAX at first); a
 * stale hint only costs a search.
 */
bool sampler_file_int(const struct sampler *sampler, const char *path, size_t *hint, int64_t *raw);

#endif
