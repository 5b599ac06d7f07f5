/*
 * The daemon's HTTP server across its life: started at boot, handed over to a new server on a
 * reload or a database reopen (the same listening socket, so the port stays, also a port 0
 * one), while the replaced server finishes its running requests on a drain thread and replaced
 * configurations are freed once no request reads them. The sampling loop never waits for a
 * client.
 */
#ifndef SERVER_H
#define SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "live.h"

struct server;

/**
 * Starts serving @cfg (borrowed) with @live and the database at @db_path (copied), on
 * @activated_fd (socket activation, owned from now on; -1 = bind cfg->http.listen). NULL on
 * error, logged (the fd is closed).
 */
struct server *server_create(const struct config *cfg, struct live *live, const char *db_path,
			     int activated_fd);

/**
 * A reload, first step: serves @next (borrowed) from now on, keeping the running server when
 * its settings are unchanged, else starting a new one. False when the new one cannot start:
 * the running server and @cur stay, @next is the caller's to free.
 */
bool server_reload(struct server *s, const struct config *cur, const struct config *next);
/**
 * A reload, second step, once nothing else reads @cur: takes @cur (heap, from the caller) and
 * frees it when the replaced server and every request that read it are done.
 */
void server_retire(struct server *s, struct config *cur);

/** The database file was reopened: a new server on the same socket, with @cfg (borrowed). */
void server_restart(struct server *s, const struct config *cfg);

/**
 * Also serves on @fd, a listening AF_UNIX socket (owned from now on), with @cfg (borrowed;
 * reloads swap it like the TCP server's). False (logged) when that server does not start.
 */
bool server_listen_local(struct server *s, const struct config *cfg, int fd);

struct api_runs;
/** The run endpoints' implementation for every server from now on (borrowed), or NULL. */
void server_set_runs(struct server *s, const struct api_runs *runs);

/** Frees what finished requests and drained servers left; call once per cycle. */
void server_collect(struct server *s);

/**
 * A count that changes whenever the running servers (TCP and Unix socket) finish a request:
 * the daemon gives freed heap back after a cycle in which it changed.
 */
uint64_t server_completed(const struct server *s);

/** The port listened on (0 for a non-IP socket or no server). */
unsigned server_port(const struct server *s);

/** Stops serving, waits for every drain, frees the retired configurations. Accepts NULL. */
void server_destroy(struct server *s);

#endif
