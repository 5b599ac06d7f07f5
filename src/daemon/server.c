/* The daemon's HTTP server across reloads and database reopens (server.h). */
#include "server.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http.h"
#include "log.h"
#include "xalloc.h"

struct server {
	struct http *http;
	struct live *live;
	char *db_path;
	int activated_fd;        // socket-activated, or -1; each http_create() gets a dup
	struct config **retired; // replaced, but still read by a running HTTP request
	size_t n_retired;
	pthread_t *drains; // threads stopping replaced HTTP servers
	size_t n_drains;
	struct http *replaced; // between server_reload() and server_retire()
	struct http *local;    // on the Unix socket (runs.socket), or NULL
	const struct api_runs *runs;
};

/* Starts a server on a copy of @listen_fd, else of the socket-activated one, else binding. */
static struct http *start_on(struct server *s, const struct config *cfg, int listen_fd) {
	int fd = -1;
	if (listen_fd < 0) {
		listen_fd = s->activated_fd;
	}
	if (listen_fd >= 0) {
		fd = fcntl(listen_fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0) {
			log_errno("could not duplicate the activated socket");
			return NULL;
		}
	}
	struct http *http = http_create(cfg, s->live, s->db_path, fd);
	http_set_runs(http, s->runs);
	return http;
}

/* Keeps a replaced configuration until the HTTP server's running requests are done with it. */
static void retire_config(struct server *s, struct config *cfg) {
	s->retired = xrealloc(s->retired, (s->n_retired + 1) * sizeof(*s->retired));
	s->retired[s->n_retired++] = cfg;
}

/* Frees the retired configurations no request reads any more (all of them without a server). */
static void free_retired(struct server *s) {
	size_t kept = 0;
	for (size_t i = 0; i < s->n_retired; i++) {
		// The Unix socket's server reads the same configurations, and a draining server
		// may too while it has one: keep them until the drains are done.
		if ((s->http && http_config_in_use(s->http, s->retired[i])) ||
		    (s->local && (http_config_in_use(s->local, s->retired[i]) || s->n_drains))) {
			s->retired[kept++] = s->retired[i];
			continue;
		}
		config_finish(s->retired[i]);
		free(s->retired[i]);
	}
	s->n_retired = kept;
	if (kept == 0) {
		free(s->retired);
		s->retired = NULL;
	}
}

/* A replaced HTTP server and the configurations only it may still read, for a drain thread. */
struct drain {
	struct http *http;
	struct config **cfgs;
	size_t n_cfgs;
};

static void *run_drain(void *arg) {
	struct drain *dr = arg;
	http_destroy(dr->http); // waits for its running requests
	for (size_t i = 0; i < dr->n_cfgs; i++) {
		config_finish(dr->cfgs[i]);
		free(dr->cfgs[i]);
	}
	free(dr->cfgs);
	free(dr);
	return NULL;
}

/*
 * Destroys @http on a thread of its own (joined by reap_drains()), then frees @cfg (or NULL) and
 * the retired configurations, which only its requests could still read.
 */
static void drain_http(struct server *s, struct http *http, struct config *cfg) {
	struct drain *dr = xcalloc(1, sizeof(*dr));
	dr->http = http;
	if (s->local) {
		// The Unix socket's server may read them too: free_retired() decides.
		if (cfg) {
			retire_config(s, cfg);
		}
		cfg = NULL;
	} else {
		dr->cfgs = s->retired;
		dr->n_cfgs = s->n_retired;
		s->retired = NULL;
		s->n_retired = 0;
	}
	if (cfg) {
		dr->cfgs = xrealloc(dr->cfgs, (dr->n_cfgs + 1) * sizeof(*dr->cfgs));
		dr->cfgs[dr->n_cfgs++] = cfg;
	}
	pthread_t thread;
	if (pthread_create(&thread, NULL, run_drain, dr) != 0) {
		run_drain(dr); // no thread: here, then
		return;
	}
	s->drains = xrealloc(s->drains, (s->n_drains + 1) * sizeof(*s->drains));
	s->drains[s->n_drains++] = thread;
}

/* Joins the drain threads that are done (@wait: all of them). */
static void reap_drains(struct server *s, bool wait) {
	size_t kept = 0;
	for (size_t i = 0; i < s->n_drains; i++) {
		if (wait ? pthread_join(s->drains[i], NULL) != 0
			 : pthread_tryjoin_np(s->drains[i], NULL) != 0) {
			s->drains[kept++] = s->drains[i];
		}
	}
	s->n_drains = kept;
	if (kept == 0) {
		free(s->drains);
		s->drains = NULL;
	}
}

struct server *server_create(const struct config *cfg, struct live *live, const char *db_path,
			     int activated_fd) {
	struct server *s = xcalloc(1, sizeof(*s));
	s->live = live;
	s->db_path = xstrdup(db_path);
	s->activated_fd = activated_fd;
	s->http = start_on(s, cfg, -1);
	if (!s->http) {
		server_destroy(s);
		return NULL;
	}
	return s;
}

bool server_reload(struct server *s, const struct config *cur, const struct config *next) {
	s->replaced = NULL;
	if (s->local) {
		http_set_config(s->local, next);
	}
	if (s->http && http_config_unchanged(s->http, next)) {
		// Keep the server and its connections: requests read the new configuration from
		// now on, and the old one is freed once no running request reads it.
		http_set_config(s->http, next);
		return true;
	}
	// The old server stops accepting at once and finishes its requests on another thread, so
	// neither idle clients nor a long request hold up the sampling loop. The same address
	// keeps its listening socket (and the connections queued on it).
	struct http *old = s->http;
	int fd = http_stop_accepting(old);
	if (fd >= 0 && (s->activated_fd >= 0 || strcmp(next->http.listen, cur->http.listen) != 0)) {
		close(fd);
		fd = -1;
	}
	s->http = start_on(s, next, fd);
	if (!s->http) {
		s->http = start_on(s, cur, fd);
		if (s->local) {
			http_set_config(s->local, cur);
		}
		drain_http(s, old, NULL);
		if (fd >= 0) {
			close(fd);
		}
		return false;
	}
	if (fd >= 0) {
		close(fd); // the new server has its own copy
	}
	s->replaced = old;
	return true;
}

void server_retire(struct server *s, struct config *cur) {
	if (s->replaced) {
		drain_http(s, s->replaced, cur); // the old server borrowed the old configuration
		s->replaced = NULL;
	} else {
		retire_config(s, cur);
	}
}

void server_restart(struct server *s, const struct config *cfg) {
	// The read-only connections still point at the old file: a new server takes over the
	// listening socket (the same port, also when it was port 0) and the old one finishes its
	// requests on a drain thread.
	struct http *old = s->http;
	int fd = http_stop_accepting(old);
	s->http = start_on(s, cfg, fd);
	if (fd >= 0) {
		close(fd); // the new server has its own copy
	}
	drain_http(s, old, NULL);
	if (!s->http) {
		log_error("the HTTP server did not restart after the database was reopened");
	}
	if (s->local) {
		old = s->local;
		fd = http_stop_accepting(old);
		s->local = fd >= 0 ? http_create_local(cfg, s->live, s->db_path, fd) : NULL;
		http_set_runs(s->local, s->runs);
		drain_http(s, old, NULL);
	}
}

bool server_listen_local(struct server *s, const struct config *cfg, int fd) {
	s->local = http_create_local(cfg, s->live, s->db_path, fd);
	http_set_runs(s->local, s->runs);
	return s->local != NULL;
}

void server_set_runs(struct server *s, const struct api_runs *runs) {
	s->runs = runs;
	http_set_runs(s->http, runs);
	http_set_runs(s->local, runs);
}

void server_collect(struct server *s) {
	if (s->n_retired) {
		free_retired(s);
	}
	if (s->n_drains) {
		reap_drains(s, false);
	}
}

uint64_t server_completed(const struct server *s) {
	return s ? http_completed(s->http) + http_completed(s->local) : 0;
}

unsigned server_port(const struct server *s) {
	return s && s->http ? http_port(s->http) : 0;
}

void server_destroy(struct server *s) {
	if (!s) {
		return;
	}
	http_destroy(s->http);
	s->http = NULL;
	http_destroy(s->local);
	s->local = NULL;
	reap_drains(s, true);
	free_retired(s);
	reap_drains(s, true);
	if (s->activated_fd >= 0) {
		close(s->activated_fd);
	}
	free(s->db_path);
	free(s);
}
