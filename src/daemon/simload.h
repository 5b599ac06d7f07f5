/*
 * Work declared on the simulated board, both sides of the format in one place: a program
 * (thermlog-simload, the tests' step commands) writes one file into the tree's sim/work/ for as
 * long as it runs, holding a lock on it; the simulator reads them all before each write of the
 * tree and heats the board with their mean load over the interval (simboard.h). A file whose
 * lock is gone belongs to a process that ended: killed, it ends when it is first seen unlocked.
 *
 *     thermlog-simload 1
 *     start_ms 1787000000123
 *     cpu 4-7 100
 *     npu 0-2 80
 *     end_ms 1787000002123      (appended when the program ends)
 */
#ifndef SIMLOAD_H
#define SIMLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "simboard.h"

#define SIMLOAD_DIR     "sim/work" // under the simulated tree's root
#define SIMLOAD_MAX_LEN 4096       // a declaration file at most

/** One program's declared work: from start_ms to end_ms (0: still running). */
struct simload_decl {
	int64_t start_ms, end_ms;
	struct simboard_load load; // each CPU's and NPU core's share, %, 0 .. 100
};

/**
 * Reads a declaration file's text. True with @out filled; false with *err (newly allocated)
 * naming the line and what is wrong with it.
 */
bool simload_parse(const char *text, size_t len, struct simload_decl *out, char **err);

/** Appends a declaration's text (without the end_ms line) to @out. */
void simload_format(const struct simload_decl *d, struct buf *out);

/**
 * Reads a CPU or NPU core list with its share, "LIST=PCT": LIST is "all", "N" or "A-B";
 * @count CPUs or cores. Adds PCT to each of @pct. False when it does not read.
 */
bool simload_spec(const char *spec, double *pct, int count);

/**
 * Declares @d (start_ms set) under the tree at @root: writes it under a hidden name, locks it,
 * then renames it into sim/work/, so the simulator never sees it unlocked while the program
 * runs. Returns the locked file's fd (keep it open while the work goes on), or -errno.
 */
int simload_declare(const char *root, const struct simload_decl *d);

/** Ends the declaration open as @fd at @end_ms (appends end_ms) and closes @fd. 0 or -errno. */
int simload_end(int fd, int64_t end_ms);

/**
 * The mean load over [@from_ms, @to_ms) of every declaration under the tree open as @root_fd,
 * into @out (zeroed first): each declaration counts for the part of the interval it covered,
 * summed per CPU and core (at most 100 %). A declaration whose lock is gone ends at its end_ms,
 * or at @to_ms when it has none (its process was killed); one ended by @to_ms is removed. An
 * unreadable file is logged once and removed.
 */
void simload_collect(int root_fd, int64_t from_ms, int64_t to_ms, struct simboard_load *out);

#endif
