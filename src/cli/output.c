/*
 * Files the CLI writes (export -o, report -o, backup): the target is checked against the
 * database by device and inode, written as a temporary file in the same directory and renamed
 * into place only when complete, so a failure never leaves a half file over anything.
 */
#include "cli-output.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xalloc.h"

static bool same_file(const struct stat *a, const struct stat *b) {
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* True when @path is (or would become) the database or one of its companion files. */
bool cli_output_is_database(const char *path, const char *db_path) {
	static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
	struct stat target, db;
	bool exists = stat(path, &target) == 0;
	if (!db_path || strcmp(db_path, ":memory:") == 0) {
		return false;
	}
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		char *name = xasprintf("%s%s", db_path, suffixes[i]);
		bool hit = exists && stat(name, &db) == 0 && same_file(&target, &db);
		free(name);
		if (hit) {
			return true;
		}
	}
	// "X-wal" where X is the database (under any name): SQLite may create it at any time.
	size_t len = strlen(path);
	for (size_t i = 1; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t n = strlen(suffixes[i]);
		if (len > n && strcmp(path + len - n, suffixes[i]) == 0) {
			char *base = xstrndup(path, len - n);
			struct stat b;
			bool hit = stat(base, &b) == 0 && stat(db_path, &db) == 0 &&
				   same_file(&b, &db);
			free(base);
			if (hit) {
				return true;
			}
		}
	}
	return false;
}

bool cli_output_open(struct cli_output *out, const char *cmd, const char *path, const char *db_path,
		     bool force, mode_t mode) {
	*out = (struct cli_output){.force = force};
	if (!*path) {
		fprintf(stderr, "thermlog %s: the file name is empty\n", cmd);
		return false;
	}
	if (cli_output_is_database(path, db_path)) {
		fprintf(stderr,
			"thermlog %s: %s is the database %s or one of its files; refusing to write "
			"it%s\n",
			cmd, path, db_path,
			strcmp(cmd, "backup") == 0 ? "" : " (even with --force)");
		return false;
	}
	struct stat sb;
	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "thermlog %s: %s is a directory; name a file\n", cmd, path);
		return false;
	}
	if (stat(path, &sb) == 0 && (S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode))) {
		// A pipe or a device (/dev/stdout, /dev/null) replaces nothing: write into it,
		// never rename a file over the node.
		out->f = fopen(path, "w");
		if (!out->f) {
			fprintf(stderr, "thermlog %s: could not open %s: %s\n", cmd, path,
				strerror(errno));
			return false;
		}
		out->path = xstrdup(path);
		return true;
	}
	if (!force && lstat(path, &sb) == 0) {
		// backup has no --force: it never replaces a file
		fprintf(stderr, "thermlog %s: %s exists; refusing to overwrite it (%s)\n", cmd,
			path, strcmp(cmd, "backup") == 0 ? "name a new file" : "--force does");
		return false;
	}
	// --force through a symbolic link replaces the file it names, not the link.
	char *real = force ? realpath(path, NULL) : NULL;
	if (real) {
		path = real;
	}
	char *copy = xstrdup(path);
	out->tmp = xasprintf("%s/.thermlog-%s.XXXXXX", dirname(copy), cmd);
	free(copy);
	int fd = mkstemp(out->tmp);
	if (fd < 0) {
		fprintf(stderr, "thermlog %s: could not create a file beside %s: %s\n", cmd, path,
			strerror(errno));
		free(out->tmp);
		out->tmp = NULL;
		free(real);
		return false;
	}
	if (mode == 0) {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	fchmod(fd, mode);
	out->f = fdopen(fd, "w");
	out->path = xstrdup(path);
	free(real);
	return true;
}

/* "thermlog CMD: could not VERB PATH: reason", with nothing left behind; false. */
static bool commit_failed(struct cli_output *out, const char *cmd, const char *verb, int err) {
	fprintf(stderr, "thermlog %s: could not %s %s: %s\n", cmd, verb, out->path, strerror(err));
	cli_output_abort(out);
	return false;
}

bool cli_output_commit(struct cli_output *out, const char *cmd) {
	bool good = true; // a file written by another writer (the backup) was closed already
	int err = 0;
	if (out->f) {
		// A pipe or a device cannot be synced and is not renamed.
		good = fflush(out->f) == 0 && !ferror(out->f) &&
		       (!out->tmp || fsync(fileno(out->f)) == 0);
		err = errno;
		if (fclose(out->f) != 0 && good) {
			good = false;
			err = errno;
		}
		out->f = NULL;
	}
	if (!good) {
		return commit_failed(out, cmd, "write", err);
	}
	if (!out->tmp) {
		free(out->path);
		out->path = NULL;
		return true;
	}
	// Without --force, link() fails if the target appeared meanwhile: never replace it.
	int rc = out->force ? rename(out->tmp, out->path) : link(out->tmp, out->path);
	if (rc != 0) {
		return commit_failed(out, cmd, "create", errno);
	}
	if (!out->force) {
		unlink(out->tmp);
	}
	free(out->tmp);
	out->tmp = NULL;
	free(out->path);
	out->path = NULL;
	return true;
}

void cli_output_abort(struct cli_output *out) {
	if (out->f) {
		fclose(out->f);
		out->f = NULL;
	}
	if (out->tmp) {
		unlink(out->tmp);
	}
	free(out->tmp);
	free(out->path);
	out->tmp = out->path = NULL;
}

FILE *cli_input_open(const char *path) {
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		return NULL;
	}
	int flags = fcntl(fd, F_GETFL);
	FILE *in =
		flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 ? fdopen(fd, "r") : NULL;
	if (!in) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return in;
}
