/*
 * WAL checkpoints off the writer's thread. A checkpoint copies the WAL's pages into the database
 * file and syncs both: on a busy or slow disk that takes seconds, and SQLite's auto-checkpoint
 * runs it inside the commit that crossed the threshold, on the daemon's sampling loop. Here a
 * thread with its own connection to the file runs it instead, woken by the writer's WAL hook.
 * Passive, it copies the frames no reader still needs and never waits for anyone; the writer's
 * next commit after a complete one starts the WAL over (journal_size_limit truncates it).
 */
#include "store-internal.h"
#include "worker.h"

struct store_checkpointer {
	sqlite3 *db; // its own connection to the writer's file
	char *path;
	int pages;             // the WAL size in pages from which a checkpoint is due
	struct worker *worker; // runs checkpoint_once() when woken
	bool warned;           // a failed checkpoint was logged: the next ones go to debug
};

/* The writer's WAL hook, after each commit: wakes the thread once the WAL holds @pages. */
static int on_commit(void *arg, sqlite3 *db, const char *name, int pages) {
	struct store_checkpointer *c = arg;
	if (pages >= c->pages) {
		worker_wake(c->worker);
	}
	return SQLITE_OK;
}

/* The worker's job. */
static void checkpoint_once(void *arg) {
	struct store_checkpointer *c = arg;
	int log_pages = 0, copied = 0;
	int rc = sqlite3_wal_checkpoint_v2(c->db, "main", SQLITE_CHECKPOINT_PASSIVE, &log_pages,
					   &copied);
	if (rc == SQLITE_OK || rc == SQLITE_BUSY) { // BUSY: another checkpoint was running
		log_debug("store: %s: checkpoint copied %d of %d WAL pages", c->path, copied,
			  log_pages);
		c->warned = false;
	} else if (!c->warned) {
		log_warn("store: %s: the WAL checkpoint failed (%s); the WAL grows until one "
			 "succeeds",
			 c->path, sqlite3_errmsg(c->db));
		c->warned = true;
	}
}

/* Stops the worker after the checkpoint under way, if one is, and frees the rest. */
static void checkpointer_free(struct store_checkpointer *c) {
	worker_stop(c->worker);
	sqlite3_close(c->db);
	free(c->path);
	free(c);
}

int store_checkpoint_aside(struct store *store, int pages) {
	if (store->mode != STORE_MODE_WRITE || store->checkpointer) {
		return -EINVAL;
	}
	struct store_checkpointer *c = xcalloc(1, sizeof(*c));
	c->path = xstrdup(store->path);
	c->pages = pages > 0 ? pages : WAL_CHECKPOINT_PAGES;
	int rc = sqlite3_open_v2(store->path, &c->db,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI,
				 NULL);
	if (rc == SQLITE_OK) {
		// Closed before the writer, it must leave the WAL and shm as the writer's last
		// close does (store_open()).
		int persist = 1;
		sqlite3_file_control(c->db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
		// A connection takes the file for WAL only at its first read; till then a
		// checkpoint through it does nothing.
		rc = sqlite3_exec(
			c->db, "PRAGMA wal_autocheckpoint = 0; SELECT count(*) FROM sqlite_master",
			NULL, NULL, NULL);
	}
	if (rc == SQLITE_OK) {
		c->worker = worker_start(checkpoint_once, c);
		rc = c->worker ? SQLITE_OK : SQLITE_ERROR;
	}
	if (rc != SQLITE_OK) {
		log_warn("store: %s: checkpoints stay in the commits: %s", store->path,
			 c->db ? sqlite3_errmsg(c->db) : "out of memory");
		checkpointer_free(c);
		return -EIO;
	}
	// From here the writer's commits only wake the thread.
	sqlite3_wal_autocheckpoint(store->db, 0);
	sqlite3_wal_hook(store->db, on_commit, c);
	store->checkpointer = c;
	return 0;
}

void store_checkpointer_stop(struct store *store) {
	struct store_checkpointer *c = store->checkpointer;
	if (!c) {
		return;
	}
	sqlite3_wal_hook(store->db, NULL, NULL);
	checkpointer_free(c);
	store->checkpointer = NULL;
	sqlite3_wal_autocheckpoint(store->db, WAL_CHECKPOINT_PAGES);
}
