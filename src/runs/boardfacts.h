/*
 * What a database says of its board, beyond its history: what its configuration declared (the
 * board: section's name, cooling, SDK versions and notes, and the roles: map), kept in the
 * database's state by whoever wrote it with that configuration (the daemon at its start and
 * reload, an import), and the board as the daemon found it at its start (boardinfo.h: model,
 * compatible, kernel, RAM, clocks and governors, the NPU driver), read back for the report's
 * Board table and every comparison, so a job-log-only database names its board and a compared
 * database brings its own. A caller may rely on this header.
 */
#ifndef BOARDFACTS_H
#define BOARDFACTS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "role.h"
#include "store.h"

#define BOARDFACTS_DECLARED_KEY "board.declared" // the state keys
#define BOARDFACTS_RECORDED_KEY "board.recorded"

/**
 * Keeps @cfg's board: and roles: in @store's state (as JSON, {"name", "cooling", "notes",
 * "sdk": {NAME: VERSION}, "roles": {KEY: ROLE}}), replacing what was kept; nothing when @cfg
 * declares neither. 0 or a negative errno.
 */
int boardfacts_keep_declared(struct store *store, const struct config *cfg);
/** Keeps @json (boardinfo_json()'s object) as the board the daemon found. 0 or -errno. */
int boardfacts_keep_recorded(struct store *store, const char *json);

/** One cpufreq policy or devfreq device as the daemon found it. */
struct boardfacts_clock {
	char key[80];      // "cpufreq/policy4", "devfreq/dmc"
	char cpus[64];     // a policy's CPUs ("4-5"), "" for a device
	double max_hz;     // cpuinfo_max_freq, a device's highest frequency; NAN
	char governor[96]; // with the DMC's upthreshold where recorded ("dmc_ondemand
			   // upthreshold=40"), "" when not known
};

#define BOARDFACTS_MAX_CLOCKS 16

struct boardfacts {
	// Declared (the configuration's board: and roles:, the report's own first)
	bool declared;
	struct board_config board;   // its texts NULL when not said
	struct role_override *roles; // keys owned by the struct
	size_t n_roles;
	// Recorded (boardinfo at the daemon's start); NULL, NAN or none when not recorded
	bool recorded;
	char *model, *compatible, *kernel, *npu_driver; // compatible: its list joined by ", "
	double ram_bytes;
	struct boardfacts_clock clocks[BOARDFACTS_MAX_CLOCKS];
	size_t n_clocks;
};

/**
 * Reads @store's board facts into @out: the declared part from @cfg when it declares a board
 * or roles (the configuration of the database reported), else from the state; the recorded part
 * from the state. Malformed state is left out (logged). 0 or a negative errno; free @out with
 * boardfacts_finish() either way.
 */
int boardfacts_read(struct store *store, const struct config *cfg, struct boardfacts *out);
void boardfacts_finish(struct boardfacts *f); // accepts a zeroed struct

/** The recorded hardware maximum of clock @key, or NAN. */
double boardfacts_max_hz(const struct boardfacts *f, const char *key);

#endif
