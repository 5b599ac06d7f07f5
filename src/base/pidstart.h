/*
 * When a process started, from procfs: what tells a live process from another that got its pid
 * after it ended (the daemon's watched runs, a campaign's runner).
 */
#ifndef PIDSTART_H
#define PIDSTART_H

#include <stdbool.h>
#include <stdint.h>

/**
 * The start time of process @pid (field 22 of @procfs_root/PID/stat, clock ticks after boot)
 * in *ticks: 0, -ENOENT when there is no such process, or another negative errno. procfs
 * never blocks; a stand-in tree's file is opened so that it cannot either.
 */
int pidstart_ticks(const char *procfs_root, int64_t pid, uint64_t *ticks);

/**
 * Whether process @pid runs now and is the one that started at @ticks (0: not known, the pid
 * alone decides): gone when no process has the pid, or the one that has it started otherwise.
 */
bool pidstart_alive(const char *procfs_root, int64_t pid, uint64_t ticks);

#endif
