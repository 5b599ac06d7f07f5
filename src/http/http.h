/* The HTTP server: libmicrohttpd on its own thread, serving the API, /metrics and the dashboard. */
#ifndef HTTP_H
#define HTTP_H

#include <stdint.h>

#include "config.h"
#include "live.h"

/*
 * The default GnuTLS priorities (http.tls_priorities overrides them): TLS 1.3 and 1.2 only,
 * forward-secret key exchange (ECDHE) and AEAD ciphers (AES-GCM, ChaCha20-Poly1305).
 */
#define HTTP_TLS_PRIORITIES                                                                 \
	"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:" \
	"+CHACHA20-POLY1305:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:-MAC-ALL:+AEAD"

struct http;

/**
 * Starts serving on cfg->http.listen ("127.0.0.1:9470", "[::1]:9470", "0.0.0.0:9470"), or on
 * @listen_fd (a socket-activated, listening socket; -1 = bind ourselves), which the server
 * then owns and closes. The server opens its own read-only connections to @db_path.
 * @cfg and @live are borrowed and must outlive the server. Returns NULL on error, logged:
 * a bad address, a bind failure, unreadable TLS or token files, a certificate, key or
 * http.tls_priorities GnuTLS refuses (with its reason), or a non-loopback address without
 * http.token / http.token_file.
 */
struct http *http_create(const struct config *cfg, struct live *live, const char *db_path,
			 int listen_fd);

/**
 * Serves the same API on @listen_fd, a listening AF_UNIX socket (runs.socket), which the server
 * owns from now on: no TLS and no token (the socket's file mode is the access control), and
 * each request knows its caller's pid (SO_PEERCRED) for the run endpoints. NULL on error.
 */
struct http *http_create_local(const struct config *cfg, struct live *live, const char *db_path,
			       int listen_fd);

struct api_runs;
/**
 * Makes POST /api/v1/runs and /api/v1/runs/{id}/stop call @runs (borrowed; must outlive the
 * server), or answer 503 with NULL. Safe while requests run.
 */
void http_set_runs(struct http *http, const struct api_runs *runs);

/** Stops at once, closing open connections (a running request finishes first). Accepts NULL. */
void http_destroy(struct http *http);

/**
 * Stops accepting; connections already open are served until http_destroy(). Returns the
 * listening socket, now the caller's to pass to a new server or close, or -1. Accepts NULL.
 */
int http_stop_accepting(struct http *http);

/**
 * Whether @next asks for exactly the server running (the same http settings and sysfs root,
 * and the same token, certificate and key in their files), so a reload can keep it and its
 * open connections with http_set_config().
 */
bool http_config_unchanged(const struct http *http, const struct config *next);

/**
 * Makes new requests read @cfg (borrowed; must outlive the server or a later swap). Requests
 * already running keep the configuration they started with: free a replaced one only when
 * http_config_in_use() says no request reads it any more. Never blocks on a request.
 */
void http_set_config(struct http *http, const struct config *cfg);

/** Whether @cfg is the current configuration or one a running request still reads. */
bool http_config_in_use(struct http *http, const struct config *cfg);

/** How many requests @http has finished (answered or cut) since it started; 0 for NULL. */
uint64_t http_completed(const struct http *http);

/** The port actually listened on (useful with port 0), or 0 for a non-IP socket. */
unsigned http_port(const struct http *http);

#endif
