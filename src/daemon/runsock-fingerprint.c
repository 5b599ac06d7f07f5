/* A run's fingerprint: board, kernel, governors, argv, the executable's sha256, tags. */
#include "runsock-internal.h"

struct governor_writer {
	struct json *j;
	const char *key_prefix;
};

static void write_governor(void *ctx, const char *name, const char *path, char *gov) {
	(void)path;
	const struct governor_writer *w = ctx;
	char *key = xasprintf("%s/%s", w->key_prefix, name);
	json_field_string(w->j, key, gov);
	free(key);
	free(gov);
}

/* "@key_prefix/NAME": the governor in @dir/NAME/@file for each entry NAME starting @name_prefix. */
static void write_governors(struct json *j, int sysfs_fd, const char *dir, const char *name_prefix,
			    const char *file, const char *key_prefix) {
	struct governor_writer w = {.j = j, .key_prefix = key_prefix};
	source_read_each(sysfs_fd, dir, name_prefix, file, FILE_MAX, write_governor, &w);
}

/* The fingerprint of a run: board, kernel, governors, argv, the executable's sha256, tags. */
void runsock_fingerprint_json(struct runsock *rs, const struct runwire_start *start,
			      struct buf *out) {
	struct json j;
	json_init(&j, out, false);
	json_object_begin(&j);
	char *board = clock_board_model(rs->cfg->sysfs_root);
	json_field_string(&j, "board", board);
	free(board);
	struct utsname u;
	json_field_string(&j, "kernel", uname(&u) == 0 ? u.release : NULL);
	json_key(&j, "governors");
	json_object_begin(&j);
	write_governors(&j, rs->sysfs_fd, "devices/system/cpu/cpufreq", "policy",
			"scaling_governor", "cpufreq");
	write_governors(&j, rs->sysfs_fd, "class/devfreq", NULL, "governor", "devfreq");
	json_object_end(&j);
	json_field_raw(&j, "argv", start->argv);
	json_field_string(&j, "exe", start->exe);
	// The caller's digest: the daemon never opens a path a client names (a FIFO or a device
	// would stall the loop, and it could read files the caller cannot).
	json_field_string(&j, "exe_sha256", start->exe_sha256);
	json_field_raw(&j, "tags", start->tags);
	json_object_end(&j);
}

/*
 * The start time of process @pid (field 22 of @procfs_root/PID/stat, clock ticks after boot)
 * in *ticks: 0, -ENOENT when there is no such process, or another negative errno. procfs
 * never blocks; a stand-in tree's file is opened so that it cannot either.
 */
