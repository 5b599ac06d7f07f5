/* Talking to the daemon's Unix socket (cli-daemon.h). */
#include "cli-daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "jsonread.h"
#include "xalloc.h"

#define REPLY_MAX    (256 * 1024)
#define IO_TIMEOUT_S 15
#define RETRY_MS     5000        // a refused or busy request is tried again for this long
#define EXE_HASH_MAX (1LL << 31) // larger executables go unhashed

/*
 * Sends @method @path with @body (NULL: none, for GET) on the socket. Returns 0 with @out filled,
 * or a negative errno with a reason in *why (static): the daemon is not there or did not answer
 * (-EPROTO: the request went out but no answer came back).
 */
static int call(const char *socket_path, const char *method, const char *path, const char *body,
		struct cli_reply *out, const char **why) {
	*out = (struct cli_reply){0};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(socket_path) >= sizeof(sa.sun_path)) {
		*why = "the socket path is too long";
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, socket_path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*why = strerror(errno);
		return -errno;
	}
	struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;
		close(fd);
		*why = strerror(err);
		return -err;
	}
	struct buf req = {0};
	if (body) {
		buf_printf(&req,
			   "%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
			   "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
			   method, path, strlen(body), body);
	} else {
		buf_printf(&req, "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
			   method, path);
	}
	size_t sent = 0;
	while (sent < req.len) {
		ssize_t n = send(fd, req.data + sent, req.len - sent, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			int err = errno;
			buf_finish(&req);
			close(fd);
			*why = strerror(err);
			return -err;
		}
		sent += (size_t)n;
	}
	buf_finish(&req);
	struct buf resp = {0};
	char chunk[4096];
	for (;;) {
		ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0 || resp.len > REPLY_MAX) {
			break;
		}
		buf_append(&resp, chunk, (size_t)n);
	}
	close(fd);
	buf_putc(&resp, '\0');
	int status = 0;
	if (sscanf(resp.data, "HTTP/1.%*d %d", &status) != 1) {
		buf_finish(&resp);
		*why = "no HTTP answer on the socket";
		return -EPROTO;
	}
	const char *sep = strstr(resp.data, "\r\n\r\n");
	out->status = status;
	out->body = xstrdup(sep ? sep + 4 : "");
	buf_finish(&resp);
	return 0;
}

static int64_t mono_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cli_daemon_call(const char *sock, const char *method, const char *path, const char *body,
		    bool idempotent, struct cli_reply *out, const char **why) {
	int64_t until = mono_ms() + RETRY_MS;
	int64_t pause_ms = 20;
	for (;;) {
		int rc = call(sock, method, path, body, out, why);
		bool again = rc == -ECONNREFUSED || rc == -EAGAIN || rc == -ECONNRESET ||
			     rc == -EPIPE || (rc == -EPROTO && idempotent) ||
			     (rc == 0 && (out->status == 503 || out->status == 429));
		int64_t left = until - mono_ms();
		if (!again || left <= 0) {
			return rc;
		}
		free(out->body);
		*out = (struct cli_reply){0};
		// Spread over [pause/2, pause): clients refused together do not come back together.
		int64_t ms = pause_ms / 2 + (int64_t)((unsigned)rand() % (unsigned)(pause_ms / 2));
		ms = ms < left ? ms : left;
		struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
		}
		pause_ms = pause_ms * 2 < 1000 ? pause_ms * 2 : 1000;
	}
}

void cli_request_id(char out[33]) {
	unsigned char raw[16];
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		// No entropy to be had: the pid and the clock still tell concurrent runs apart.
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t a = (uint64_t)getpid(),
			 b = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		memcpy(raw, &a, 8);
		memcpy(raw + 8, &b, 8);
	}
	unsigned seed = 0;
	for (size_t i = 0; i < sizeof(raw); i++) {
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
		seed = seed * 31 + raw[i];
	}
	srand(seed);
}

char *cli_reply_field(const char *body, const char *key) {
	struct jsonread_error err;
	struct jsonread_node *root =
		body ? jsonread_parse(body, strlen(body), JSONREAD_MAX_LEN, &err) : NULL;
	const struct jsonread_node *v = jsonread_get(root, key);
	char *value = v && (v->kind == JSONREAD_STRING || v->kind == JSONREAD_NUMBER)
			      ? xstrdup(v->text)
			      : NULL;
	jsonread_node_free(root);
	return value;
}

char *cli_daemon_socket(struct cli_context *ctx) {
	const struct config *cfg = cli_setup(ctx) == CLI_EXIT_OK ? cli_config(ctx) : NULL;
	return cfg ? xstrdup(cfg->runs.socket) : NULL;
}

bool cli_daemon_serves_db(struct cli_context *ctx, const char *sock, const char *cmd,
			  const char *what) {
	if (!ctx->db_path) {
		return true;
	}
	struct cli_reply r;
	const char *why;
	if (cli_daemon_call(sock, "GET", "/api/v1/status", NULL, true, &r, &why) < 0) {
		return true;
	}
	char *served = r.status == 200 ? cli_reply_field(r.body, "database_path") : NULL;
	free(r.body);
	struct stat want, got;
	bool same = served && stat(ctx->db_path, &want) == 0 && stat(served, &got) == 0 &&
		    want.st_dev == got.st_dev && want.st_ino == got.st_ino;
	if (!served) {
		fprintf(stderr,
			"thermlog %s: the daemon at %s does not say which database it records "
			"into, so --db %s cannot be honoured: %s\n",
			cmd, sock, ctx->db_path, what);
	} else if (!same) {
		fprintf(stderr,
			"thermlog %s: the daemon at %s records into %s, not into --db %s: %s\n",
			cmd, sock, served, ctx->db_path, what);
	}
	free(served);
	return same;
}

char *cli_daemon_serving(struct cli_context *ctx, const char *cmd, const char *what, int *rc) {
	char *sock = cli_daemon_socket(ctx);
	if (!sock) {
		*rc = CLI_EXIT_USAGE;
		return NULL;
	}
	if (!cli_daemon_serves_db(ctx, sock, cmd, what)) {
		free(sock);
		*rc = CLI_EXIT_FAILURE;
		return NULL;
	}
	return sock;
}

void cli_daemon_refused(const char *cmd, const struct cli_reply *r) {
	char *err = cli_reply_field(r->body, "error");
	fprintf(stderr, "thermlog %s: HTTP %d: %s\n", cmd, r->status,
		err ? err : "no reason given");
	free(err);
}

bool cli_daemon_request(const char *sock, const char *cmd, const char *path, const char *body,
			int want, bool idempotent, const char *not_done, struct cli_reply *r) {
	const char *why;
	if (cli_daemon_call(sock, "POST", path, body, idempotent, r, &why) < 0) {
		fprintf(stderr, "thermlog %s: the daemon is not reachable at %s (%s)%s\n", cmd,
			sock, why, not_done);
		return false;
	}
	if (r->status != want) {
		cli_daemon_refused(cmd, r);
		return false;
	}
	return true;
}

char *cli_find_exe(const char *cmd, const char *cwd) {
	if (strchr(cmd, '/')) {
		if (cmd[0] == '/' || !cwd) {
			return realpath(cmd, NULL);
		}
		char *at = xasprintf("%s/%s", cwd, cmd);
		char *found = realpath(at, NULL);
		free(at);
		return found;
	}
	const char *path = getenv("PATH");
	char *copy = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	char *found = NULL;
	for (char *save = NULL, *dir = strtok_r(copy, ":", &save); dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		char *candidate = xasprintf("%s/%s", *dir ? dir : ".", cmd);
		if (access(candidate, X_OK) == 0) {
			found = realpath(candidate, NULL);
		}
		free(candidate);
	}
	free(copy);
	return found;
}

bool cli_exe_sha256(const char *path, char hex[2 * SHA256_DIGEST_LEN + 1]) {
	int fd = path ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > EXE_HASH_MAX) {
		if (fd >= 0) {
			close(fd);
		}
		return false;
	}
	struct sha256 h;
	sha256_init(&h);
	unsigned char chunk[65536];
	ssize_t got;
	while ((got = read(fd, chunk, sizeof(chunk))) > 0) {
		sha256_update(&h, chunk, (size_t)got);
	}
	close(fd);
	unsigned char digest[SHA256_DIGEST_LEN];
	sha256_final(&h, digest);
	for (size_t i = 0; i < SHA256_DIGEST_LEN; i++) {
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
	}
	return got == 0;
}
