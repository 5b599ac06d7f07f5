/*
 * The sd_notify(3) protocol without libsystemd: one AF_UNIX datagram per message to
 * $NOTIFY_SOCKET, and a watchdog timer at half of $WATCHDOG_USEC.
 */
#ifndef NOTIFY_H
#define NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

struct notify;

/**
 * Reads $NOTIFY_SOCKET ("/path" or "@abstract"), $WATCHDOG_USEC and $WATCHDOG_PID. Always
 * returns a handle: without $NOTIFY_SOCKET every call below does nothing.
 */
struct notify *notify_create(void);
void notify_destroy(struct notify *notify); // accepts NULL

/**
 * Sends @state ("READY=1", "STATUS=...", newline-separated assignments). Returns 0 when sent or
 * when there is no socket, or a negative errno (logged once; the daemon carries on).
 */
int notify_send(struct notify *notify, const char *state);
/** True when there is a service manager to tell (NOTIFY_SOCKET was set). */
bool notify_active(const struct notify *notify);
/** notify_send() with printf formatting. */
int notify_sendf(struct notify *notify, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * A CLOCK_MONOTONIC timerfd that expires every half watchdog period, for the main loop's poll
 * set, or -1 when the watchdog is off. The loop calls notify_watchdog() when it is readable, so
 * a hung loop stops the pings and systemd restarts the service.
 */
int notify_watchdog_fd(const struct notify *notify);
/** Consumes the timer expiry and sends WATCHDOG=1. */
void notify_watchdog(struct notify *notify);
/** The ping period in µs (half of $WATCHDOG_USEC), 0 when the watchdog is off. */
uint64_t notify_watchdog_period_us(const struct notify *notify);

#endif
