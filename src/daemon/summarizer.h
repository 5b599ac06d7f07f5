/*
 * The runs' per-label summary for /metrics (runs_summary()), computed on a thread of its own
 * over its own read-only connection to the database: the loop only asks for it, so no number
 * of stored runs or labels costs a cycle, a run's start or its stop more than a request.
 */
#ifndef SUMMARIZER_H
#define SUMMARIZER_H

#include <stddef.h>
#include <stdint.h>

struct live;
struct summarizer;

/** Starts the thread; @live is borrowed and must outlive it. NULL when no thread starts. */
struct summarizer *summarizer_create(struct live *live);
/**
 * Asks for the summary of the database at @db_path (copied) with at most @max_labels labels,
 * published to live once read: it returns at once. Asked again while one is read, it reads
 * once more after it. A new @generation (the database reopened or replaced) opens it again.
 */
void summarizer_request(struct summarizer *s, const char *db_path, size_t max_labels,
			uint64_t generation);
/** Waits for the summary under way, if any, and stops the thread; accepts NULL. */
void summarizer_destroy(struct summarizer *s);

#endif
