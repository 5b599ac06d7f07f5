/* For the benchmarks: a new database with a chosen page size, to compare layouts in one run. */
#ifndef BENCH_DB_H
#define BENCH_DB_H

#include <sqlite3.h>
#include <stdio.h>
#include <unistd.h>

/*
 * Replaces @path by an empty database of @page_size byte pages that carries thermlog's
 * application id, so store_open() takes it as new (schema 0) but keeps its page size.
 * @page_size 0 leaves @path absent: store_open() then creates it with its own default.
 * Returns 0, or -1 after printing why.
 */
static inline int bench_db_create(const char *path, int page_size) {
	char name[4096];
	const char *suffixes[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%s%s", path, suffixes[i]);
		unlink(name);
	}
	if (page_size == 0) {
		return 0;
	}
	sqlite3 *db;
	char sql[128];
	snprintf(sql, sizeof(sql), "PRAGMA page_size = %d; PRAGMA application_id = 1414024263",
		 page_size); // 0x54484c47, "THLG"
	int rc = sqlite3_open(path, &db);
	if (rc == SQLITE_OK) {
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
	if (rc != SQLITE_OK) {
		fprintf(stderr, "%s: %s\n", path, sqlite3_errmsg(db));
	}
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}

#endif
