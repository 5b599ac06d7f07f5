/* The seam between the sampler and its sources: a static ops table, sensors, sysfs reading. */
#ifndef SOURCE_H
#define SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "channel.h"
#include "config.h"

struct sampler;

/** pread(2), or a test double that fails chosen files with a chosen errno. */
typedef ssize_t (*source_pread_fn)(int fd, void *buf, size_t len, off_t off);

/** A monotonic clock in ns, or a test double. */
typedef int64_t (*source_clock_fn)(void);

/** What the sources see of the sampler. */
struct source_ctx {
	int root_fd;           // the sysfs root, O_DIRECTORY
	int proc_fd;           // the procfs root, O_DIRECTORY; -1 = could not be opened
	char *proc_root;       // its absolute path, for channel paths; NULL with proc_fd -1
	source_clock_fn clock; // rates: when a counter was read
	const struct config *cfg;
	source_pread_fn pread;
	uint64_t pass; // sampler_read() calls: sensors of one pass may share a file read
	/* Each driver's own state across its sensors, behind the driver (source_ctx_priv()):
	 * what only its .c knows, as a sensor's is behind sensor_priv(). */
	void *driver[SOURCE_COUNT];
};

/** How to read one channel; parallel to its struct channel. */
struct sensor {
	const struct source_ops *ops;
	enum source_id config_id; // which `sources:` entry governs it
	const char *path;         // borrowed from the channel: the value file
	int fd;                   // held open on channel.path; -1 = open on the next read
	/* value = (raw + raw_offset) * scale / divisor, then cal_gain * value + cal_offset */
	double raw_offset, scale, divisor;
	double cal_gain, cal_offset; // `channels:` override
	int absent_err;              // configured but not found: read gives this; 0 = present
	int last_err;                // for logging on state change
	bool expect_absent; // a vanished reading is expected (an offline CPU): no rescan, debug
	const char *why;    // set by a read that gives -EBADMSG: what is wrong with the text
	bool err_said;      // the read said its error itself (once for a file's channels)
	/* A rate from cumulative counters: until the driver has a previous read (which its carry
	 * op keeps across rescans) the read gives -EAGAIN (no value, never a fake 0), logged at
	 * debug level only. */
	bool rate;
	void *priv; // the driver's own state of this channel (sensor_priv()); freed with it
	/* source_read_scaled(): the integer its file held at the pass raw_pass (0 = none) */
	int64_t raw;
	uint64_t raw_pass;
};

struct buf;
struct json;

struct sensor_key_slot;

struct sensor_list {
	struct channel *channels; // parallel arrays of n
	struct sensor *sensors;
	size_t n, cap;
	/* The keys taken, hashed (sensor_list_add() is O(1) however many channels share a
	 * name); dropped by sensor_list_seal() once discovery is over. */
	struct sensor_key_slot *index;
	size_t index_n, index_cap;
};

/* A source driver; its name is its id's (config_source_name()). */
struct source_ops {
	enum source_id config_id;
	/** Appends every channel it finds; never opens the value files (reads do, lazily). */
	void (*discover)(struct source_ctx *ctx, struct sensor_list *out);
	/** Reads one value in the channel's unit (before calibration); 0 or a negative errno. */
	int (*read)(struct source_ctx *ctx, struct sensor *sensor, double *value);
	/** Drops global state (libsensors); may be NULL. */
	void (*cleanup)(struct source_ctx *ctx);
	/** What a rescan keeps of the old sensor of the same key in the new (a rate's previous
	 * reading, so a rescan costs it no value); may be NULL. */
	void (*carry)(struct sensor *fresh, const struct sensor *old);
};

/** The driver of @id (the sampler's table, indexed by enum source_id); NULL for a bad id. */
const struct source_ops *source_driver(enum source_id id);

/**
 * Appends a channel with the given identity; every string is copied. A key that is already in
 * the list gets "#2", "#3" ... (the next free one: O(1) on average, however many share it) Returns
 * the new sensor (fds closed, scale 1, divisor 1, gains identity) for the caller to fill in; its
 * channel's meta is NULL.
 */
struct sensor *sensor_list_add(struct sensor_list *list, const struct source_ops *ops,
			       const char *key, const char *source, const char *label,
			       enum channel_kind kind, double resolution, const char *path);
/** sensor_list_add() of channel "@source/@name" (made a valid key), labelled @name. */
struct sensor *sensor_list_add_named(struct sensor_list *list, const struct source_ops *ops,
				     const char *source, const char *name, enum channel_kind kind,
				     double resolution, const char *path);
/** Starts a channel's metadata: a compact JSON object written by @j into @meta (initialised here).
 */
void source_meta_begin(struct buf *meta, struct json *j);
/** Closes the object and hands its text to the channel added last to @list, which owns it. */
void source_meta_end(struct sensor_list *list, struct buf *meta, struct json *j);
/** Adds @key with the text of the sysfs file @path (under 64 bytes) when it reads non-empty. */
void source_meta_text(int root_fd, const char *path, struct json *j, const char *key);
/** Adds @key with the integer in the sysfs file @path when it reads and parses. */
void source_meta_int(int root_fd, const char *path, struct json *j, const char *key);
/** Closes the fds and frees everything; accepts a zeroed list. */
void sensor_list_finish(struct sensor_list *list);
/** Ends discovery: frees the keys' index (a later sensor_list_add() builds it again). */
void sensor_list_seal(struct sensor_list *list);
/**
 * True when SIGTERM or SIGINT waits, blocked (the daemon reads them from a signalfd): a
 * discovery walking thousands of entries stops early, so the daemon stops at once.
 */
bool source_stop_pending(void);
/** Closes a sensor's fds and frees its driver state. */
void sensor_finish(struct sensor *sensor);
/** The driver state of @sensor: @size zeroed bytes, allocated at the first call (discovery). */
void *sensor_priv(struct sensor *sensor, size_t size);
/**
 * The driver-wide state of driver @id (chrony's RCL_SetDriverData): @size zeroed bytes,
 * allocated at the first call, the same block after; freed by source_ctx_priv_free() (a
 * driver's cleanup may, the sampler does at its end).
 */
void *source_ctx_priv(struct source_ctx *ctx, enum source_id id, size_t size);
/** Frees driver @id's state: the next source_ctx_priv() gives a new zeroed block. */
void source_ctx_priv_free(struct source_ctx *ctx, enum source_id id);

/**
 * Parses a sysfs integer: optional '-', digits, an optional trailing newline, nothing else.
 * Returns 0, -ENODATA (empty), -EBADMSG (anything else) or -ERANGE (overflow).
 */
int sysfs_parse_int(const char *text, size_t len, int64_t *out);
/**
 * Reads a whole small attribute relative to @root_fd into @buf (NUL-terminated, the trailing
 * newline removed). Returns the length, or a negative errno (-ENOBUFS if it does not fit).
 */
int sysfs_read_text(int root_fd, const char *path, char *buf, size_t size);
/**
 * The whole attribute @path relative to @root_fd as a new string, its trailing white space
 * removed, through sysfs_read_text(): NULL when it cannot be read or holds more than @max bytes
 * without that white space.
 */
char *sysfs_read_alloc(int root_fd, const char *path, size_t max);
/**
 * Opens @path (relative to @dir_fd, or absolute) into *fd, read-only and non-blocking (no FIFO
 * in its place can stall a cycle), unless *fd (-1 = none) is open on it already and the file
 * was not replaced since: a rename over it unlinks the old inode, which a test's or the
 * simulator's tree does and sysfs or procfs never. 0 or -errno (*fd then -1).
 */
int sysfs_hold(int *fd, int dir_fd, const char *path);
/** sysfs_read_text() + sysfs_parse_int(). */
int sysfs_read_int(int root_fd, const char *path, int64_t *out);
/** True if @path (relative to @root_fd) exists, following links. */
bool sysfs_exists(int root_fd, const char *path);

/**
 * Reads the integer at sensor->fd through ctx->pread (opening sensor->path first if the fd is
 * closed) and converts it with raw_offset/scale/divisor. On a read error the fd is closed, so the
 * next read reopens it. Returns 0 or a negative errno.
 */
int source_read_scaled(struct source_ctx *ctx, struct sensor *sensor, double *value);

/** Sorts names like "thermal_zone10" after "thermal_zone2": by prefix, then number. */
int source_name_cmp(const char *a, const char *b);
/**
 * Lists directory @dir (relative to @root_fd): names starting with @prefix (every name not
 * starting with '.' if NULL), sorted with source_name_cmp(). Returns a NULL-terminated array
 * (caller frees each and the array), or NULL if the directory cannot be opened (errno set).
 */
char **source_list_dir(int root_fd, const char *dir, const char *prefix);
void source_free_names(char **names);
typedef void (*source_entry_fn)(struct source_ctx *ctx, struct sensor_list *out, const char *name);
/** Calls @fn for each name source_list_dir() lists in @dir with @prefix, in its order. */
void source_discover_each(struct source_ctx *ctx, struct sensor_list *out, const char *dir,
			  const char *prefix, source_entry_fn fn);
/* Called with an entry's NAME, the path of the file read and its text, which @fn takes. */
typedef void (*source_text_fn)(void *ctx, const char *name, const char *path, char *text);
/**
 * For each NAME source_list_dir() lists in @dir with @prefix whose @dir/NAME/@file reads
 * (sysfs_read_alloc(), at most @max bytes), in its order: @fn.
 */
void source_read_each(int root_fd, const char *dir, const char *prefix, const char *file,
		      size_t max, source_text_fn fn, void *ctx);
/** Replaces every byte that is not printable ASCII, or a space, with '_' (keys must not hold any).
 */
void source_key_sanitize(char *s);

/** The test seam: every sysfs value read goes through @fn (pread(2) by default). */
void sampler_set_pread(struct sampler *sampler, source_pread_fn fn);
/** The test seam for rates: @fn replaces CLOCK_MONOTONIC (NULL restores it). */
void sampler_set_clock(struct sampler *sampler, source_clock_fn fn);

#endif
