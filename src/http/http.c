/*
 * libmicrohttpd glue: a thread per connection with bounded connections, time-outs and memory,
 * store connections handed to requests by cost, translating requests to api_handle() and its
 * responses back. Only this file includes <microhttpd.h> (and GnuTLS, to explain refusals).
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>

#include "version.h" // HAVE_GNUTLS
#if HAVE_GNUTLS
#include <gnutls/gnutls.h>
#endif

#include "api.h"
#include "clock.h"
#include "log.h"
#include "session.h"
#include "xalloc.h"

#define CONNECTION_TIMEOUT_S 15
#define CONNECTION_MEMORY    (32 * 1024) // bounds the request line and headers too
#define STREAM_BLOCK         8192
#define FILE_MAX             (1024 * 1024) // token and PEM files
#define BODY_MAX             (64 * 1024) // a GET body is discarded up to this, then the connection closed
// A chunked run body over API_RUN_BODY_MAX is read on (and dropped) up to this to answer 413.
#define RUN_BODY_DISCARD_MAX (1024 * 1024)
#define RUN_BODY_TOO_LARGE   "the body exceeds 65536 bytes"
#define HEAD_TIMEOUT_S       5    // a request head (and TLS handshake) must be in within this
#define LISTEN_BACKLOG       64   // connections the kernel queues for accept()
#define HEAVY_QUEUE          4    // heavy requests that may wait for a slot; more get 503
#define HEAVY_WAIT_MS        5000 // how long they may wait (whole seconds)
#define HEAVY_SLOTS          2    // heavy requests computed at once; more get 503
#define RETRY_AFTER_S        "2"
#define PENDING_THRESHOLD    (64 * 1024)        // JSON answers from this size count as pending
#define PENDING_MAX          (16 * 1024 * 1024) // pending answers beyond which heavy ones wait
#define ANSWER_MAX           (24 * 1024 * 1024) // one JSON answer at most (API.md)

struct store_slot {
	struct api_database db; // opened by the API layer, retried after a failure
	bool busy;
};

struct http {
	struct MHD_Daemon *mhd;
	const struct config *cfg;
	// Read-only store connections: one for the quick reads (status, channels), taken in turn,
	// and HEAVY_SLOTS for statistics, series, lifetime and exports, taken only when free
	// (else 503). Each has SQLite's bounded page cache; the API layer opens them.
	pthread_mutex_t slot_lock;
	pthread_cond_t slot_free;
	struct store_slot light, heavy[HEAVY_SLOTS];
	uint64_t completed;     // requests finished (http_completed()); atomic
	size_t pending_bytes;   // large JSON answers built but not yet sent; under slot_lock
	unsigned heavy_waiting; // heavy requests waiting for a slot; under slot_lock
	char *token;
	unsigned char session_key[SESSION_KEY_LEN]; // signs the dashboard's sign-in cookies
	char *tls_cert, *tls_key;                   // PEM text; libmicrohttpd keeps pointers to it
	char *host, *board;
	bool started; // libmicrohttpd messages after start are per-connection noise
	bool tls;
	bool local_socket;           // the daemon's Unix socket: no TLS, no token, peer credentials
	const struct api_runs *runs; // set and read atomically: http_set_runs() may come later
	unsigned port;
	struct api_context ctx;
	// The configuration requests read, swapped on a reload that keeps the server: each
	// request counts itself on the entry it started with, so a replaced configuration is
	// freed only once no request reads it (http_config_in_use()).
	pthread_mutex_t cfg_lock;
	struct cfg_use *uses; // newest (the current configuration) first
	// Open connections, for the per-address limit and the request-head deadline.
	pthread_mutex_t conn_lock;
	pthread_cond_t conn_stop;
	struct conn_state *conns;
	unsigned limit, per_address;
	bool stopping;
	pthread_t reaper;
	bool reaper_started;
};

struct cfg_use {
	const struct config *cfg;
	unsigned users;
	struct cfg_use *next;
};

/*
 * Per-connection state: created when a socket is accepted and freed when it closes, whatever
 * happened to the request, so a request libmicrohttpd gives up on before our handler runs
 * (a pool exhausted by hundreds of query parameters) leaks nothing.
 */
struct conn_state {
	char *target; // the raw URI of the request being received, until the handler takes it
	// The rest is under http->conn_lock: read by the accept policy and the head reaper.
	struct conn_state *prev, *next;
	int fd;
	unsigned char addr[16]; // the client address; an IPv6 /64 as one (the rest zero)
	int64_t head_by_ms;     // monotonic: the request head must be in by then...
	bool head_done;         // ...unless it is
	bool answered;          // its request's response is queued (set atomically by the handler)
	bool cut;               // shut down (deadline or room for a new client); closing
};

/* Per-request state, created on the access handler's first call. */
struct request_state {
	char *target;
	bool answered;
	size_t body_bytes;
	struct buf form; // POST /login, /api/v1/runs: the body, up to its limit + 1 bytes
};

static void handle_mhd_log(void *cls, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static void handle_mhd_log(void *cls, const char *fmt, va_list ap) {
	const struct http *http = cls;
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	size_t n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) {
		msg[--n] = '\0';
	}
	// Start-up messages (a bind failure) matter; later ones are clients hanging up.
	if (http && http->started) {
		log_debug("http: %s", msg);
	} else {
		log_error("http: %s", msg);
	}
}

static int64_t mono_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The address a per-address limit counts: IPv4 (also v4-mapped) whole, IPv6 by its /64, a Unix
 * socket peer by its process (SO_PEERCRED on @fd; every local peer shares the socket's one
 * address, so keying by it would make all local clients share one client's quota).
 */
static void address_key(const struct sockaddr *sa, int fd, unsigned char key[16]) {
	memset(key, 0, 16);
	if (sa && sa->sa_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		memcpy(key, a, IN6_IS_ADDR_V4MAPPED(a) ? 16 : 8);
	} else if (sa && sa->sa_family == AF_UNIX) {
		struct ucred cred = {0};
		socklen_t len = sizeof(cred);
		if (fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			cred = (struct ucred){0};
		}
		key[0] = 0x01; // apart from IP keys, which have no process in bytes 8..11
		memcpy(key + 4, &cred.uid, sizeof(cred.uid));
		memcpy(key + 8, &cred.pid, sizeof(cred.pid));
	}
}

/* Shuts a connection's socket down; libmicrohttpd then closes it. Under conn_lock. */
static void cut_connection(struct conn_state *cs) {
	if (!cs->cut) {
		cs->cut = true;
		shutdown(cs->fd, SHUT_RDWR);
	}
}

/* Whether the client of a connection waiting for a request head has closed its end already. */
static bool peer_closed(const struct conn_state *cs) {
	struct pollfd p = {.fd = cs->fd, .events = POLLRDHUP};
	return cs->fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/*
 * How many open connections (not cut) have @key (NULL: any), the oldest of them still without
 * a complete request head into *@oldest. A connection waiting for a head whose client closed it
 * is cut here instead of counted until libmicrohttpd notices. Under conn_lock.
 */
static unsigned count_open(struct http *http, const unsigned char *key,
			   struct conn_state **oldest) {
	unsigned n = 0;
	*oldest = NULL;
	for (struct conn_state *cs = http->conns; cs; cs = cs->next) {
		if (cs->cut || (key && memcmp(cs->addr, key, 16) != 0)) {
			continue;
		}
		if (!cs->head_done && peer_closed(cs)) {
			cut_connection(cs);
			continue;
		}
		if (cs->head_done && __atomic_load_n(&cs->answered, __ATOMIC_ACQUIRE) &&
		    peer_closed(cs)) {
			// answered and closed by its client, until libmicrohttpd notices: gone for
			// the count, not cut (a client that half-closed still reads its answer)
			continue;
		}
		n++;
		if (!cs->head_done && (!*oldest || cs->head_by_ms <= (*oldest)->head_by_ms)) {
			*oldest = cs;
		}
	}
	return n;
}

/*
 * Admits a new client. When its address (an IPv6 /64 as one) holds its share of the connections
 * already, the oldest of them still without a complete request head makes room; so does the
 * oldest such of any address at the connection limit. Only when every one is being answered is
 * the new client refused. Every local client shares 127.0.0.1: so one of them holding
 * half-sent requests, or idle ones, cannot lock the others (the same user and process, too) out
 * of the dashboard and /metrics, and clients that send a request at once are never the oldest.
 */
static enum MHD_Result handle_accept(void *cls, const struct sockaddr *addr, socklen_t len) {
	struct http *http = cls;
	// A Unix socket peer's process is known only once it is accepted: handle_connection().
	bool local = addr && addr->sa_family == AF_UNIX;
	unsigned char key[16];
	address_key(addr, -1, key);
	enum MHD_Result ret = MHD_YES;
	pthread_mutex_lock(&http->conn_lock);
	struct conn_state *oldest_same = NULL, *oldest = NULL;
	unsigned same = local ? 0 : count_open(http, key, &oldest_same);
	unsigned open = count_open(http, NULL, &oldest);
	if (same >= http->per_address) {
		if (oldest_same) {
			cut_connection(oldest_same);
		} else {
			ret = MHD_NO;
		}
	} else if (open >= http->limit) {
		if (oldest) {
			cut_connection(oldest);
		} else {
			ret = MHD_NO;
		}
	}
	pthread_mutex_unlock(&http->conn_lock);
	return ret;
}

static void handle_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			      enum MHD_ConnectionNotificationCode toe) {
	struct http *http = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		struct conn_state *cs = xcalloc(1, sizeof(*cs));
		const union MHD_ConnectionInfo *info =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		cs->fd = info ? info->connect_fd : -1;
		info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		const struct sockaddr *sa = info ? info->client_addr : NULL;
		address_key(sa, cs->fd, cs->addr);
		cs->head_by_ms = mono_ms() + HEAD_TIMEOUT_S * 1000;
		pthread_mutex_lock(&http->conn_lock);
		// The per-address limit for a Unix socket peer, which handle_accept() could not
		// key: the peer's oldest connection without a request makes room, else this one
		// goes.
		struct conn_state *oldest;
		if (sa && sa->sa_family == AF_UNIX &&
		    count_open(http, cs->addr, &oldest) >= http->per_address) {
			cut_connection(oldest ? oldest : cs);
		}
		cs->next = http->conns;
		if (cs->next) {
			cs->next->prev = cs;
		}
		http->conns = cs;
		pthread_cond_signal(&http->conn_stop); // a new deadline for the reaper
		pthread_mutex_unlock(&http->conn_lock);
		*socket_context = cs;
		return;
	}
	struct conn_state *cs = *socket_context;
	if (cs) {
		pthread_mutex_lock(&http->conn_lock);
		if (cs->prev) {
			cs->prev->next = cs->next;
		} else {
			http->conns = cs->next;
		}
		if (cs->next) {
			cs->next->prev = cs->prev;
		}
		pthread_mutex_unlock(&http->conn_lock);
		free(cs->target);
		free(cs);
		*socket_context = NULL;
	}
}

/* Marks the request head as in (@done), or starts the deadline for the next one. */
static void head_state(struct http *http, struct conn_state *cs, bool done) {
	pthread_mutex_lock(&http->conn_lock);
	cs->head_done = done;
	__atomic_store_n(&cs->answered, false, __ATOMIC_RELEASE); // a new request, or none yet
	cs->head_by_ms = mono_ms() + HEAD_TIMEOUT_S * 1000;
	if (!done) {
		pthread_cond_signal(&http->conn_stop); // a new deadline for the reaper
	}
	pthread_mutex_unlock(&http->conn_lock);
}

/*
 * Cuts connections whose request head (or TLS handshake) is not complete within
 * HEAD_TIMEOUT_S of their opening or of the previous answer, however they trickle. It sleeps
 * until the earliest such deadline, or, with none, until a connection opens or is answered:
 * an idle server costs no wake-ups.
 */
static void *reap_heads(void *arg) {
	struct http *http = arg;
	pthread_mutex_lock(&http->conn_lock);
	while (!http->stopping) {
		int64_t now = mono_ms(), next = INT64_MAX;
		for (struct conn_state *cs = http->conns; cs; cs = cs->next) {
			if (cs->head_done || cs->cut) {
				continue;
			}
			if (now >= cs->head_by_ms) {
				cut_connection(cs);
			} else if (cs->head_by_ms < next) {
				next = cs->head_by_ms;
			}
		}
		if (next == INT64_MAX) {
			pthread_cond_wait(&http->conn_stop, &http->conn_lock);
			continue;
		}
		struct timespec until; // conn_stop waits on the monotonic clock
		clock_gettime(CLOCK_MONOTONIC, &until);
		int64_t ns = until.tv_nsec + (next - now) * 1000000;
		until.tv_sec += ns / 1000000000;
		until.tv_nsec = ns % 1000000000;
		pthread_cond_timedwait(&http->conn_stop, &http->conn_lock, &until);
	}
	pthread_mutex_unlock(&http->conn_lock);
	return NULL;
}

static struct conn_state *conn_state(struct MHD_Connection *conn) {
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return info ? info->socket_context : NULL;
}

/*
 * Answers a request target over the limits at once, on the socket, and shuts the socket down.
 * libmicrohttpd splits the query into its connection pool after this callback; hundreds of
 * parameters exhaust the pool, and then it neither answers nor closes until the time-out.
 * Over TLS the bytes would have to be encrypted, so the connection is only shut down there.
 */
static void refuse_target(struct http *http, struct MHD_Connection *conn, const char *uri) {
	struct api_response resp;
	if (api_target_within_limits(uri, &resp)) {
		return;
	}
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (info) {
		char head[256];
		int n = snprintf(head, sizeof(head),
				 "HTTP/1.1 %u %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
				 "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
				 resp.status, MHD_get_reason_phrase_for(resp.status),
				 resp.content_type, resp.body.len);
		if (!http->tls && n > 0 && (size_t)n < sizeof(head)) {
			// A fresh connection's send buffer holds these few hundred bytes.
			if (send(info->connect_fd, head, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) ==
			    n) {
				send(info->connect_fd, resp.body.data, resp.body.len,
				     MSG_NOSIGNAL | MSG_DONTWAIT);
			}
		}
		shutdown(info->connect_fd, SHUT_RDWR); // libmicrohttpd then closes it
	}
	api_response_finish(&resp);
}

/* The raw URI, before libmicrohttpd splits and decodes it; kept with the connection. */
static void *handle_uri(void *cls, const char *uri, struct MHD_Connection *conn) {
	struct conn_state *cs = conn_state(conn);
	if (cs) {
		free(cs->target);
		cs->target = xstrdup(uri);
	}
	refuse_target(cls, conn, uri);
	return NULL;
}

static void handle_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			     enum MHD_RequestTerminationCode code) {
	struct request_state *st = *con_cls;
	if (st) {
		free(st->target);
		if (st->form.data) {
			explicit_bzero(st->form.data, st->form.len); // it holds a token
		}
		buf_finish(&st->form);
		free(st);
		*con_cls = NULL;
	}
	struct conn_state *cs = conn_state(conn);
	if (cs) {
		head_state(cls, cs, false); // the next request on this connection has its deadline
	}
	struct http *http = cls;
	__atomic_add_fetch(&http->completed, 1, __ATOMIC_RELAXED);
}

uint64_t http_completed(const struct http *http) {
	return http ? __atomic_load_n(&http->completed, __ATOMIC_RELAXED) : 0;
}

/* A streamed export holds its heavy store connection until the response is freed. */
struct export_stream {
	struct http *http;
	struct store_slot *slot;
	struct export *export;
};

static ssize_t handle_export_read(void *cls, uint64_t pos, char *buf, size_t max) {
	const struct export_stream *es = cls;
	ssize_t n = api_export_read(es->export, buf, max);
	// Returning 0 would make libmicrohttpd spin; export_read() returns 0 only at the end.
	if (n == 0) {
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	if (n < 0) {
		log_warn("http: CSV export failed while streaming; closing the connection");
		return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	return n;
}

/* A heavy slot nobody uses while unsent answers are within budget, or NULL. Under slot_lock. */
static struct store_slot *free_heavy(struct http *http) {
	for (size_t i = 0; i < HEAVY_SLOTS && http->pending_bytes < PENDING_MAX; i++) {
		if (!http->heavy[i].busy) {
			return &http->heavy[i];
		}
	}
	return NULL;
}

/*
 * Takes a store connection for a request of @cost into *out (NULL for none needed): the light
 * one in turn (its reads take milliseconds), or a heavy one, waiting up to HEAVY_WAIT_MS among at
 * most HEAVY_QUEUE others. False when none came free in time, the queue is full or the pending
 * answers are at their budget: the caller answers 503.
 */
static bool slot_acquire(struct http *http, enum api_cost cost, int64_t now,
			 struct store_slot **out) {
	*out = NULL;
	if (cost == API_COST_NONE) {
		return true;
	}
	struct store_slot *slot = NULL;
	pthread_mutex_lock(&http->slot_lock);
	if (cost == API_COST_LIGHT) {
		while (http->light.busy) {
			pthread_cond_wait(&http->slot_free, &http->slot_lock);
		}
		slot = &http->light;
	} else if (http->pending_bytes < PENDING_MAX) {
		slot = free_heavy(http);
		// A few may wait their turn (the dashboard asks for three series at once);
		// beyond that, or after HEAVY_WAIT_MS, the answer is 503.
		if (!slot && http->heavy_waiting < HEAVY_QUEUE) {
			struct timespec until;
			clock_gettime(CLOCK_MONOTONIC, &until);
			until.tv_sec += HEAVY_WAIT_MS / 1000;
			http->heavy_waiting++;
			while (!(slot = free_heavy(http)) &&
			       pthread_cond_timedwait(&http->slot_free, &http->slot_lock, &until) ==
				       0) {
			}
			http->heavy_waiting--;
		}
	}
	if (slot) {
		slot->busy = true;
	}
	pthread_mutex_unlock(&http->slot_lock);
	if (!slot) {
		return false;
	}
	api_database_get(&slot->db, now); // ours alone now: opened outside the lock
	*out = slot;
	return true;
}

static void slot_release(struct http *http, struct store_slot *slot) {
	if (!slot) {
		return;
	}
	api_database_idle(&slot->db); // still ours alone: outside the lock
	pthread_mutex_lock(&http->slot_lock);
	slot->busy = false;
	pthread_cond_broadcast(&http->slot_free);
	pthread_mutex_unlock(&http->slot_lock);
}

static void handle_export_free(void *cls) {
	struct export_stream *es = cls;
	api_export_destroy(es->export);
	slot_release(es->http, es->slot);
	free(es);
}

/* A large JSON answer, counted against PENDING_MAX until libmicrohttpd has sent it. */
struct pending_body {
	struct http *http;
	char *data;
	size_t len;
};

static ssize_t handle_body_read(void *cls, uint64_t pos, char *buf, size_t max) {
	const struct pending_body *pb = cls;
	if (pos >= pb->len) {
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	size_t n = pb->len - (size_t)pos < max ? pb->len - (size_t)pos : max;
	memcpy(buf, pb->data + pos, n);
	return (ssize_t)n;
}

static void handle_body_free(void *cls) {
	struct pending_body *pb = cls;
	pthread_mutex_lock(&pb->http->slot_lock);
	pb->http->pending_bytes -= pb->len;
	pthread_mutex_unlock(&pb->http->slot_lock);
	free(pb->data);
	free(pb);
}

/* The response for @resp; an export takes @slot along (released when it is freed). */
static struct MHD_Response *build_response(struct http *http, struct api_response *resp,
					   struct store_slot **slot) {
	struct MHD_Response *r;
	if (resp->export) {
		struct export_stream *es = xcalloc(1, sizeof(*es));
		*es = (struct export_stream){.http = http, .slot = *slot, .export = resp->export};
		r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK,
						      handle_export_read, es, handle_export_free);
		if (r) {
			resp->export = NULL; // the response owns it now, and the store slot
			*slot = NULL;
		} else {
			free(es);
		}
	} else if (resp->static_body) {
		r = MHD_create_response_from_buffer(resp->static_len, (void *)resp->static_body,
						    MHD_RESPMEM_PERSISTENT);
	} else if (resp->body.len >= PENDING_THRESHOLD) {
		struct pending_body *pb = xcalloc(1, sizeof(*pb));
		pb->http = http;
		pb->len = resp->body.len;
		pb->data = buf_steal(&resp->body);
		pthread_mutex_lock(&http->slot_lock);
		http->pending_bytes += pb->len;
		pthread_mutex_unlock(&http->slot_lock);
		r = MHD_create_response_from_callback(pb->len, STREAM_BLOCK, handle_body_read, pb,
						      handle_body_free);
		if (!r) {
			handle_body_free(pb);
		}
	} else {
		size_t len = resp->body.len;
		r = MHD_create_response_from_buffer(len, buf_steal(&resp->body),
						    MHD_RESPMEM_MUST_FREE);
	}
	if (!r) {
		return NULL;
	}
	if (resp->content_type && resp->status != 304) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
	}
	if (resp->cache_control) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, resp->cache_control);
	}
	if (resp->etag[0]) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, resp->etag);
	}
	if (resp->content_encoding && resp->status != 304) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING,
					resp->content_encoding);
	}
	if (resp->vary_accept_encoding) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
	}
	if (resp->allow) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, resp->allow);
	}
	if (resp->authenticate) {
		char value[128];
		snprintf(value, sizeof(value), "Bearer realm=\"thermlog\"%s%s%s",
			 resp->auth_error ? ", error=\"" : "",
			 resp->auth_error ? resp->auth_error : "", resp->auth_error ? "\"" : "");
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, value);
	}
	if (resp->location) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, resp->location);
	}
	if (resp->set_cookie) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, resp->set_cookie);
	}
	if (resp->filename) {
		char value[256];
		snprintf(value, sizeof(value), "attachment; filename=\"%s\"", resp->filename);
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, value);
	}
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	return r;
}

/*
 * Whether a request's body is declared larger than @max, or comes chunked (size unknown) when
 * @chunked_ok is false.
 */
static bool body_too_large(struct MHD_Connection *conn, unsigned long long max, bool chunked_ok) {
	const char *te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_TRANSFER_ENCODING);
	if (te && strcasecmp(te, "identity") != 0) {
		return !chunked_ok;
	}
	const char *cl =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (!cl) {
		return false;
	}
	char *end;
	errno = 0;
	unsigned long long n = strtoull(cl, &end, 10);
	return errno != 0 || n > max;
}

/*
 * MHD_queue_response() that marks the connection answered: once its client closes, the
 * per-address count leaves it out (a closed connection frees its share at once, not when
 * libmicrohttpd's completion comes, which a loaded machine delays).
 */
static enum MHD_Result queue_answer(struct MHD_Connection *conn, unsigned status,
				    struct MHD_Response *r) {
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	struct conn_state *cs = ret == MHD_YES ? conn_state(conn) : NULL;
	if (cs) {
		__atomic_store_n(&cs->answered, true, __ATOMIC_RELEASE);
	}
	return ret;
}

/* Queues a JSON error answer from http.c itself (no API state involved); closes the connection
 * unless @retry_after is set (a 503 the client may repeat on the same connection). */
static enum MHD_Result queue_status_retry(struct MHD_Connection *conn, unsigned status,
					  const char *message, const char *retry_after) {
	char body[256];
	int n = snprintf(body, sizeof(body), "{\"error\":\"%s\"}\n", message);
	struct MHD_Response *r =
		MHD_create_response_from_buffer((size_t)n, body, MHD_RESPMEM_MUST_COPY);
	if (!r) {
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (retry_after) {
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, retry_after);
	} else {
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	}
	enum MHD_Result ret = queue_answer(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result queue_status(struct MHD_Connection *conn, unsigned status,
				    const char *message) {
	return queue_status_retry(conn, status, message, NULL);
}

/* The caller's pid on the Unix socket (SO_PEERCRED), or 0. */
static int64_t peer_pid(struct MHD_Connection *conn) {
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (!info || getsockopt(info->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		return 0;
	}
	return cred.pid;
}

static enum MHD_Result handle_request(void *cls, struct MHD_Connection *conn, const char *url,
				      const char *method, const char *version,
				      const char *upload_data, size_t *upload_data_size,
				      void **con_cls) {
	struct http *http = cls;
	struct request_state *st = *con_cls;
	bool read_only = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	bool first = !st;
	if (first) {
		struct conn_state *cs = conn_state(conn);
		if (!cs || !cs->target) {
			return MHD_NO; // the URI callback runs first: cannot happen
		}
		st = xcalloc(1, sizeof(*st));
		st->target = cs->target; // the request owns it now
		cs->target = NULL;
		*con_cls = st;
		head_state(http, cs, true);
	}
	// The requests with a body we read: the dashboard's sign-in form and the run endpoints.
	bool login = strcmp(method, "POST") == 0 && strncmp(st->target, "/login", 6) == 0 &&
		     (st->target[6] == '\0' || st->target[6] == '?');
	bool runs_post =
		strcmp(method, "POST") == 0 && strncmp(st->target, "/api/v1/runs", 12) == 0;
	if (first) {
		// A GET body means nothing, a sign-in form is small: one declared too large, or
		// of unknown size, is refused before it is read (libmicrohttpd cannot answer in
		// mid-body; else it is read up to BODY_MAX and the connection closed unanswered).
		if (((read_only || login) && body_too_large(conn, BODY_MAX, false)) ||
		    (runs_post && body_too_large(conn, API_RUN_BODY_MAX, true))) {
			st->answered = true;
			return queue_status(conn, 413,
					    read_only ? "a GET or HEAD request carries no body"
					    : login   ? "the sign-in form is larger than 4 KiB"
						      : RUN_BODY_TOO_LARGE);
		}
		// Answering before the whole request is in makes libmicrohttpd close the
		// connection, so GET and HEAD wait for the next call (keep-alive works); other
		// methods get their 405 at once without reading a body.
		if (read_only || login || runs_post) {
			return MHD_YES;
		}
	} else if (*upload_data_size > 0) {
		if ((login && st->form.len <= API_LOGIN_MAX) ||
		    (runs_post && st->form.len <= API_RUN_BODY_MAX)) {
			buf_append(&st->form, upload_data, *upload_data_size);
		}
		st->body_bytes += *upload_data_size;
		*upload_data_size = 0; // a GET body means nothing here: discard, within bounds
		return st->body_bytes <= (runs_post ? RUN_BODY_DISCARD_MAX : BODY_MAX)
			       ? MHD_YES
			       : MHD_NO; // Content-Length lied, or a chunked body went on and on
	}
	if (st->answered) {
		return MHD_YES;
	}
	st->answered = true;
	if (runs_post && st->body_bytes > API_RUN_BODY_MAX) { // chunked: its size is known now
		return queue_status(conn, 413, RUN_BODY_TOO_LARGE);
	}

	int64_t now = (int64_t)time(NULL);
	struct store_slot *slot;
	if (!slot_acquire(http, api_target_cost(st->target), now, &slot)) {
		return queue_status_retry(
			conn, 503,
			"busy with other statistics, series or exports: retry in a moment",
			RETRY_AFTER_S);
	}
	struct api_request req = {
		.method = method,
		.target = st->target,
		.authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_AUTHORIZATION),
		.if_none_match = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_IF_NONE_MATCH),
		.accept_encoding = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							       MHD_HTTP_HEADER_ACCEPT_ENCODING),
		.cookie =
			MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_COOKIE),
		.body = st->form.data,
		.body_len = st->form.len,
		.peer_pid = http->local_socket ? peer_pid(conn) : 0,
		.now = now,
	};
	pthread_mutex_lock(&http->cfg_lock);
	struct cfg_use *use = http->uses;
	use->users++;
	pthread_mutex_unlock(&http->cfg_lock);
	struct api_context ctx = http->ctx;
	ctx.cfg = use->cfg;
	ctx.store = slot ? slot->db.store : NULL;
	ctx.runs = __atomic_load_n(&http->runs, __ATOMIC_ACQUIRE);
	struct api_response resp;
	api_handle(&ctx, &req, &resp);
	pthread_mutex_lock(&http->cfg_lock);
	use->users--;
	pthread_mutex_unlock(&http->cfg_lock);
	enum MHD_Result ret = MHD_NO;
	if (resp.body.len > ANSWER_MAX) {
		ret = queue_status(conn, 413,
				   "the answer would exceed 24 MiB: ask for fewer channels, fewer "
				   "points or a shorter window");
	} else {
		struct MHD_Response *r = build_response(http, &resp, &slot);
		if (r) {
			ret = queue_answer(conn, resp.status, r);
			MHD_destroy_response(r);
		}
	}
	slot_release(http, slot); // an export keeps its slot until it is sent
	api_response_finish(&resp);
	return ret;
}

/* Reads a small whole file into a new NUL-terminated string; NULL (logged) on error. */
static char *read_small_file(const char *path, const char *what) {
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		log_errno("could not open %s %s", what, path);
		return NULL;
	}
	struct buf b;
	buf_init(&b);
	char chunk[4096];
	ssize_t n;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		buf_append(&b, chunk, (size_t)n);
		if (b.len > FILE_MAX) {
			log_error("%s %s is larger than %d bytes", what, path, FILE_MAX);
			n = -2;
			break;
		}
	}
	if (n == -1) {
		log_errno("could not read %s %s", what, path);
	}
	close(fd);
	if (n < 0) {
		buf_finish(&b);
		return NULL;
	}
	if (b.len == 0 || strlen(b.data) != b.len) {
		log_error("%s %s is %s", what, path,
			  b.len == 0 ? "empty" : "binary (contains a NUL byte)");
		buf_finish(&b);
		return NULL;
	}
	return buf_steal(&b);
}

static char *load_token(const struct http_config *hc) {
	if (hc->token) {
		return xstrdup(hc->token);
	}
	char *text = read_small_file(hc->token_file, "http.token_file");
	if (!text) {
		return NULL;
	}
	struct stat st;
	if (stat(hc->token_file, &st) == 0 && (st.st_mode & 0077)) {
		log_warn(
			"http.token_file %s is readable by group or others (mode %03o): chmod 600 it",
			hc->token_file, (unsigned)(st.st_mode & 0777));
	}
	size_t n = strlen(text);
	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ')) {
		text[--n] = '\0';
	}
	if (n == 0) {
		log_error("http.token_file %s holds no token", hc->token_file);
		free(text);
		return NULL;
	}
	return text;
}

/*
 * Parses "127.0.0.1:PORT", "[::1]:PORT", "0.0.0.0:PORT", "[::]:PORT" or "localhost:PORT".
 */
static bool parse_listen(const char *text, struct sockaddr_storage *ss, socklen_t *len) {
	memset(ss, 0, sizeof(*ss));
	const char *colon = strrchr(text, ':');
	if (!colon || colon == text) {
		return false;
	}
	char *end;
	errno = 0;
	long port = strtol(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end || errno || port < 0 || port > 65535) {
		return false;
	}
	char host[64];
	size_t host_len = (size_t)(colon - text);
	if (host_len >= sizeof(host)) {
		return false;
	}
	memcpy(host, text, host_len);
	host[host_len] = '\0';
	if (host[0] == '[') {
		if (host_len < 3 || host[host_len - 1] != ']') {
			return false;
		}
		host[host_len - 1] = '\0';
		struct sockaddr_in6 *sa = (struct sockaddr_in6 *)ss;
		sa->sin6_family = AF_INET6;
		sa->sin6_port = htons((uint16_t)port);
		*len = sizeof(*sa);
		return inet_pton(AF_INET6, host + 1, &sa->sin6_addr) == 1;
	}
	struct sockaddr_in *sa = (struct sockaddr_in *)ss;
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	*len = sizeof(*sa);
	if (strcmp(host, "localhost") == 0) {
		sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return true;
	}
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1;
}

/* Loopback (127/8, ::1, ::ffff:127/104) and local (AF_UNIX) sockets need no token. */
static bool address_is_local(const struct sockaddr *sa) {
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) {
			return true;
		}
		return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
	}
	return sa->sa_family == AF_UNIX;
}

static unsigned address_port(const struct sockaddr *sa) {
	if (sa->sa_family == AF_INET) {
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	}
	if (sa->sa_family == AF_INET6) {
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	}
	return 0;
}

/*
 * Loads the certificate, key and priorities into GnuTLS as libmicrohttpd will, so that a
 * refusal names the file or the part of the priority string and GnuTLS' reason (libmicrohttpd
 * only says the server did not start). True when all load.
 */
static bool tls_check(const struct http_config *hc, const char *cert, const char *key,
		      const char *priorities) {
#if HAVE_GNUTLS
	gnutls_priority_t prio;
	const char *where = NULL;
	int rc = gnutls_priority_init(&prio, priorities, &where);
	if (rc < 0) {
		log_error("http.tls_priorities: GnuTLS rejects '%s' at '%s': %s", priorities,
			  where ? where : "", gnutls_strerror(rc));
		return false;
	}
	gnutls_priority_deinit(prio);
	gnutls_certificate_credentials_t cred;
	if (gnutls_certificate_allocate_credentials(&cred) < 0) {
		log_error("http: GnuTLS could not allocate credentials");
		return false;
	}
	gnutls_datum_t c = {(unsigned char *)cert, (unsigned)strlen(cert)};
	gnutls_datum_t k = {(unsigned char *)key, (unsigned)strlen(key)};
	rc = gnutls_certificate_set_x509_key_mem(cred, &c, &k, GNUTLS_X509_FMT_PEM);
	gnutls_certificate_free_credentials(cred);
	if (rc < 0) {
		log_error("http: GnuTLS cannot use http.tls_cert %s with http.tls_key %s: %s",
			  hc->tls_cert, hc->tls_key, gnutls_strerror(rc));
		return false;
	}
#endif
	return true;
}

/* A listening socket on @ss; -1 (logged, naming @where) on error. */
static int bind_listen(const struct sockaddr_storage *ss, socklen_t len, const char *where) {
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		log_errno("http: could not create a socket for %s", where);
		return -1;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss->ss_family == AF_INET6) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (bind(fd, (const struct sockaddr *)ss, len) < 0 || listen(fd, 64) < 0) {
		log_errno("http: could not listen on %s", where);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The server's secrets: the bearer token and a new sign-in key, the TLS certificate and key
 * (checked with their priorities, into *@priorities), and the warning for clear text off the
 * loopback. *@tls_out: whether it serves HTTPS. False after the message.
 */
static bool secure(struct http *http, const struct http_config *hc, bool local, bool local_socket,
		   const char *where, bool *tls_out, const char **priorities) {
	if (hc->token || hc->token_file) {
		http->token = load_token(hc);
		if (!http->token) {
			return false;
		}
		// A new secret per start: a restart signs every browser out, never in.
		if (getrandom(http->session_key, sizeof(http->session_key), 0) !=
		    (ssize_t)sizeof(http->session_key)) {
			log_errno("http: could not draw the sign-in secret");
			return false;
		}
	}
	bool tls = !local_socket && hc->tls_cert && hc->tls_key;
	*tls_out = tls;
	if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		log_error(
			"http: this libmicrohttpd has no TLS support; use a reverse proxy for TLS");
		return false;
	}
	if (tls) {
		http->tls_cert = read_small_file(hc->tls_cert, "http.tls_cert");
		http->tls_key = read_small_file(hc->tls_key, "http.tls_key");
		if (!http->tls_cert || !http->tls_key) {
			return false;
		}
		*priorities = hc->tls_priorities ? hc->tls_priorities : HTTP_TLS_PRIORITIES;
		if (!tls_check(hc, http->tls_cert, http->tls_key, *priorities)) {
			return false;
		}
	}
	if (!local && !tls) {
		log_warn(
			"http: serving %s without TLS: the bearer token and the data cross the network in clear text; set http.tls_cert and http.tls_key, or use a reverse proxy with TLS",
			where);
	}
	return true;
}

/* libmicrohttpd's server on @listen_fd, its options from the configuration; http->mhd NULL
 * when it does not start. */
static void start_mhd(struct http *http, const struct sockaddr_storage *ss, int listen_fd, bool tls,
		      const char *priorities) {
	const struct http_config *hc = &http->cfg->http;
	// A thread per connection: a heavy request computes on its own connection's thread, so
	// /metrics, /api/v1/latest and the dashboard never queue behind it (a pool thread serving
	// several connections would not: one busy with a year of statistics serves none of its
	// others). Connections are few and bounded; the store slots bound the heavy work.
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	if (!tls) {
		flags |= MHD_USE_THREAD_PER_CONNECTION;
	}
	flags |= MHD_is_feature_supported(MHD_FEATURE_POLL) == MHD_YES ? MHD_USE_POLL : 0;
	if (ss->ss_family == AF_INET6) {
		flags |= MHD_USE_IPv6;
	}
	if (tls) {
		flags |= MHD_USE_TLS;
	}
	http->tls = tls;
	unsigned limit = hc->connection_limit ? hc->connection_limit : 32;
	http->limit = limit;
	http->per_address = limit / 4 > 2 ? limit / 4 : 2;
	/*
	 * handle_accept() keeps to @limit; libmicrohttpd's own limit must leave room for the
	 * connections cut but not yet closed, which it counts until their threads have ended.
	 * When the process could not run for a while (a loaded board), the whole listen backlog
	 * is accepted in one go, each connection cutting an older idle one, before any cut
	 * connection's thread has run: with less room than a full backlog, libmicrohttpd closed
	 * the newest clients itself (a reset), although they asked at once. Over TLS a pool
	 * thread holds one connection and accepts the next only once it is free, so a full pool
	 * leaves a client waiting in the backlog, never closed: the pool needs less room.
	 */
	unsigned mhd_limit = tls ? limit + limit / 2 + 1 : limit + LISTEN_BACKLOG + 1;
	/*
	 * Over TLS the threads are made once, one per connection libmicrohttpd admits (it gives
	 * each pool thread an equal share of its limit, here 1, and a full thread stops
	 * accepting), so a connection still has a thread to itself. GnuTLS (3.7) keeps the random
	 * generator state of every thread that ever used it until the process exits, about 224
	 * bytes each: a new thread per TLS connection grew the daemon without bound.
	 */
	struct MHD_OptionItem pool =
		tls ? (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, mhd_limit, NULL}
		    : (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	struct MHD_OptionItem opts[] = {
		// The logger first, so messages from option parsing go through it too.
		{MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)handle_mhd_log, http},
		{MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)handle_connection, http},
		{MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)handle_uri, http},
		{MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)handle_completed, http},
		{MHD_OPTION_CONNECTION_LIMIT, mhd_limit, NULL},
		{MHD_OPTION_CONNECTION_TIMEOUT, CONNECTION_TIMEOUT_S, NULL},
		{MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONNECTION_MEMORY, NULL},
		{MHD_OPTION_LISTEN_BACKLOG_SIZE, LISTEN_BACKLOG, NULL},
		{MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL},
		pool,
		tls ? (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, http->tls_cert}
		    : (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL},
		tls ? (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, http->tls_key}
		    : (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL},
		tls ? (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)priorities}
		    : (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL},
		{MHD_OPTION_END, 0, NULL},
	};

	// The server thread inherits our signal mask: block everything so signals reach the
	// daemon's main thread, never the HTTP thread.
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	http->mhd = MHD_start_daemon(flags, 0, handle_accept, http, handle_request, http,
				     MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (http->mhd) {
		http->reaper_started = pthread_create(&http->reaper, NULL, reap_heads, http) == 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static struct http *create(const struct config *cfg, struct live *live, const char *db_path,
			   int listen_fd, bool local_socket) {
	const struct http_config *hc = &cfg->http;
	struct http *http = xcalloc(1, sizeof(*http));
	http->cfg = cfg;
	http->local_socket = local_socket;
	api_database_init(&http->light.db, db_path);
	for (size_t i = 0; i < HEAVY_SLOTS; i++) {
		api_database_init(&http->heavy[i].db, db_path);
	}
	pthread_mutex_init(&http->cfg_lock, NULL);
	pthread_mutex_init(&http->conn_lock, NULL);
	pthread_mutex_init(&http->slot_lock, NULL);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); // timed waits immune to clock steps
	pthread_cond_init(&http->slot_free, &attr);
	pthread_cond_init(&http->conn_stop, &attr);
	pthread_condattr_destroy(&attr);
	http->uses = xcalloc(1, sizeof(*http->uses));
	http->uses->cfg = cfg;
	int own_fd = -1; // a socket bound here, closed here should the server not start

	struct sockaddr_storage ss;
	socklen_t ss_len = sizeof(ss);
	const char *where = hc->listen;
	if (listen_fd >= 0) {
		if (getsockname(listen_fd, (struct sockaddr *)&ss, &ss_len) < 0) {
			log_errno("http: socket-activated fd %d is not a socket", listen_fd);
			goto err;
		}
		where = local_socket ? "the Unix socket" : "an inherited listening socket";
		if (local_socket) {
			own_fd = listen_fd; // ours from now on: closed should the server not start
		}
	} else if (!hc->listen || !parse_listen(hc->listen, &ss, &ss_len)) {
		log_error(
			"http.listen: cannot read '%s' as ADDRESS:PORT (127.0.0.1:9470, [::1]:9470, 0.0.0.0:9470)",
			hc->listen ? hc->listen : "");
		goto err;
	} else {
		// Bound here rather than by libmicrohttpd, whose error names "port 0".
		listen_fd = bind_listen(&ss, ss_len, hc->listen);
		if (listen_fd < 0) {
			goto err;
		}
		own_fd = listen_fd;
	}
	bool local = address_is_local((struct sockaddr *)&ss);

	// One set of rules with check-config; here with the socket's real address.
	char *problems = NULL;
	if (!config_validate_http(cfg, local, &problems)) {
		for (char *line = strtok(problems, "\n"); line; line = strtok(NULL, "\n")) {
			log_error("%s", line);
		}
		free(problems);
		goto err;
	}
	bool tls = false;
	const char *priorities = NULL;
	if (!secure(http, hc, local, local_socket, where, &tls, &priorities)) {
		goto err;
	}

	char host[256];
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		http->host = xstrdup(host);
	}
	http->board = clock_board_model(cfg->sysfs_root ? cfg->sysfs_root : "/sys");
	http->ctx = (struct api_context){.cfg = cfg,
					 .live = live,
					 .token = http->token,
					 .session_key = http->token ? http->session_key : NULL,
					 .host = http->host,
					 .board = http->board,
					 .local = local_socket,
					 .db_path = http->light.db.path};
#ifdef M_MMAP_THRESHOLD
	// Answers of megabytes are built and freed per request on many threads. A fixed mmap
	// threshold returns each to the system when freed; glibc would otherwise raise it after
	// the first such free and keep later ones in per-thread heaps.
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
	// The first open may fail when the daemon has not created the database yet: retried.
	api_database_get(&http->light.db, (int64_t)time(NULL));

	start_mhd(http, &ss, listen_fd, tls, priorities);
	if (!http->mhd) {
		log_error("http: could not start the server on %s", where);
		goto err;
	}
	http->started = true;
	own_fd = -1; // libmicrohttpd's now

	const union MHD_DaemonInfo *info =
		MHD_get_daemon_info(http->mhd, MHD_DAEMON_INFO_LISTEN_FD);
	ss_len = sizeof(ss);
	if (info && getsockname(info->listen_fd, (struct sockaddr *)&ss, &ss_len) == 0) {
		http->port = address_port((struct sockaddr *)&ss);
	}
	log_info("http: serving %s%s on %s (port %u)", tls ? "HTTPS" : "HTTP",
		 http->token ? " with a bearer token" : "", where, http->port);
	return http;

err:
	if (own_fd >= 0) {
		close(own_fd);
	}
	http_destroy(http);
	return NULL;
}

struct http *http_create(const struct config *cfg, struct live *live, const char *db_path,
			 int listen_fd) {
	return create(cfg, live, db_path, listen_fd, false);
}

struct http *http_create_local(const struct config *cfg, struct live *live, const char *db_path,
			       int listen_fd) {
	return create(cfg, live, db_path, listen_fd, true);
}

void http_set_runs(struct http *http, const struct api_runs *runs) {
	if (http) {
		__atomic_store_n(&http->runs, runs, __ATOMIC_RELEASE);
	}
}

unsigned http_port(const struct http *http) {
	return http->port;
}

void http_destroy(struct http *http) {
	if (!http) {
		return;
	}
	// No grace period: the caller may be the sampling loop, which must not wait for
	// idle keep-alive clients. libmicrohttpd lets a running handler finish.
	if (http->reaper_started) {
		pthread_mutex_lock(&http->conn_lock);
		http->stopping = true;
		pthread_cond_signal(&http->conn_stop);
		pthread_mutex_unlock(&http->conn_lock);
		pthread_join(http->reaper, NULL);
	}
	if (http->mhd) {
		MHD_stop_daemon(http->mhd); // closes the listening socket too
	}
	pthread_cond_destroy(&http->conn_stop);
	pthread_mutex_destroy(&http->conn_lock);
	api_database_finish(&http->light.db);
	for (size_t i = 0; i < HEAVY_SLOTS; i++) {
		api_database_finish(&http->heavy[i].db);
	}
	pthread_cond_destroy(&http->slot_free);
	pthread_mutex_destroy(&http->slot_lock);
	if (http->token) {
		explicit_bzero(http->token, strlen(http->token));
	}
	free(http->token);
	explicit_bzero(http->session_key, sizeof(http->session_key));
	free(http->tls_cert);
	if (http->tls_key) {
		explicit_bzero(http->tls_key, strlen(http->tls_key));
	}
	free(http->tls_key);
	free(http->host);
	free(http->board);
	while (http->uses) {
		struct cfg_use *next = http->uses->next;
		free(http->uses);
		http->uses = next;
	}
	pthread_mutex_destroy(&http->cfg_lock);
	free(http);
}

int http_stop_accepting(struct http *http) {
	if (!http || !http->mhd) {
		return -1;
	}
	MHD_socket fd = MHD_quiesce_daemon(http->mhd);
	return fd == MHD_INVALID_SOCKET ? -1 : fd;
}

static bool same_string(const char *a, const char *b) {
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Whether the file at @path still holds @text (NULL text: no file expected). */
static bool same_file(const char *path, const char *text, const char *what) {
	if (!path || !text) {
		return !path && !text;
	}
	char *now = read_small_file(path, what);
	bool same = now && strcmp(now, text) == 0;
	if (now) {
		explicit_bzero(now, strlen(now));
	}
	free(now);
	return same;
}

bool http_config_unchanged(const struct http *http, const struct config *next) {
	const struct http_config *a = &http->cfg->http, *b = &next->http;
	if (!same_string(a->listen, b->listen) || !same_string(a->token, b->token) ||
	    !same_string(a->token_file, b->token_file) || a->metrics_public != b->metrics_public ||
	    !same_string(a->tls_cert, b->tls_cert) || !same_string(a->tls_key, b->tls_key) ||
	    !same_string(a->tls_priorities, b->tls_priorities) || a->max_points != b->max_points ||
	    a->max_window_s != b->max_window_s || a->connection_limit != b->connection_limit ||
	    !same_string(http->cfg->sysfs_root, next->sysfs_root)) { // the board model
		return false;
	}
	// The same paths may hold a rotated token, certificate or key.
	if (b->token_file) {
		char *token = load_token(b);
		bool same = token && http->token && strcmp(token, http->token) == 0;
		if (token) {
			explicit_bzero(token, strlen(token));
		}
		free(token);
		if (!same) {
			return false;
		}
	}
	return same_file(b->tls_cert, http->tls_cert, "http.tls_cert") &&
	       same_file(b->tls_key, http->tls_key, "http.tls_key");
}

void http_set_config(struct http *http, const struct config *cfg) {
	struct cfg_use *use = xcalloc(1, sizeof(*use));
	use->cfg = cfg;
	pthread_mutex_lock(&http->cfg_lock);
	use->next = http->uses;
	http->uses = use;
	http->cfg = cfg;
	pthread_mutex_unlock(&http->cfg_lock);
}

bool http_config_in_use(struct http *http, const struct config *cfg) {
	bool in_use = false;
	pthread_mutex_lock(&http->cfg_lock);
	for (struct cfg_use **p = &http->uses; *p;) {
		struct cfg_use *use = *p;
		if (use != http->uses && use->users == 0) {
			*p = use->next; // replaced and no longer read
			free(use);
			continue;
		}
		in_use |= use->cfg == cfg;
		p = &use->next;
	}
	pthread_mutex_unlock(&http->cfg_lock);
	return in_use;
}
