/* Files the CLI writes: never over the database, never over a file without --force, never half. */
#ifndef CLI_OUTPUT_H
#define CLI_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct cli_output {
	char *path; // the target
	char *tmp;  // the temporary file beside it, renamed over @path on success; NULL for a FIFO
		    // or device
	FILE *f;
	bool force;
};

/**
 * Opens a temporary file beside @path with @mode (0 = 0666 minus the umask) for a command named
 * @cmd. Refused with a message (returns false) when @path is the database @db_path or its
 * -wal, -shm or -journal file (by device and inode, also for a -wal/-shm that does not exist
 * yet), when @path is a directory, or when @path exists and @force is false. A FIFO or
 * character device (/dev/stdout) is opened and written in place (@tmp stays NULL: a caller
 * that writes by name must refuse it). With @force, a symbolic link's target is replaced.
 */
bool cli_output_open(struct cli_output *out, const char *cmd, const char *path, const char *db_path,
		     bool force, mode_t mode);
/**
 * Flushes, syncs and renames the file into place (f may have been closed and set to NULL by a
 * caller that wrote @tmp by name); false after a message, with nothing left behind.
 */
bool cli_output_commit(struct cli_output *out, const char *cmd);
/**
 * Whether @path is (or would become) the database @db_path or its -wal, -shm or -journal file,
 * by device and inode: the check cli_output_open() makes, for a second database a command reads.
 */
bool cli_output_is_database(const char *path, const char *db_path);
/** Removes the temporary file; accepts a zeroed or committed struct. */
void cli_output_abort(struct cli_output *out);

/**
 * Opens @path to read (an import, a job log, a profile): a FIFO opens at once, so one nobody
 * writes reads as empty instead of blocking for ever in open() (a process substitution's
 * <(...) still reads what its writer sends). NULL with errno set, as fopen().
 */
FILE *cli_input_open(const char *path);

#endif
