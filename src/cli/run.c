/*
 * thermlog run: marks a job as a run through the daemon's Unix socket (runs.socket). The
 * wrapper form runs the command itself, forwards signals, collects its peak RSS with wait4()
 * and passes its exit status through, recorded or not; `run start` and `run stop` serve
 * orchestrators whose jobs are not our children.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "jobcsv.h"
#include "json.h"
#include "jsonread.h"
#include "runmetric.h"
#include "runtag.h"
#include "runwire.h"
#include "sha256.h"
#include "timefmt.h"
#include "unit.h"
#include "xalloc.h"

#define REPLY_MAX      (256 * 1024)
#define IO_TIMEOUT_S   15
#define KILL_GRACE_S   10 // after --timeout's SIGTERM, SIGKILL follows this much later
#define EXIT_NOT_FOUND 127
#define EXIT_NOT_EXEC  126
#define RETRY_MS       5000 // a refused or busy request is tried again for this long

/* --- talking to the daemon ------------------------------------------------------------------ */

struct reply {
	int status; // HTTP status, 0 = no answer
	char *body; // NUL-terminated, or NULL
};

/*
 * Sends @method @path with @body (NULL: none, for GET) on the socket. Returns 0 with @out filled,
 * or a negative errno with a reason in *why (static): the daemon is not there or did not answer
 * (-EPROTO: the request went out but no answer came back).
 */
static int call(const char *socket_path, const char *method, const char *path, const char *body,
		struct reply *out, const char **why) {
	*out = (struct reply){0};
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

/*
 * call(), tried again with back-off for up to RETRY_MS while the daemon is busy or full (HTTP
 * 503, 429), refuses or cuts the connection, or (@idempotent only: the request may have been
 * served) sent no answer. A missing socket is not retried: no daemon is there.
 */
static int call_retry(const char *sock, const char *method, const char *path, const char *body,
		      bool idempotent, struct reply *out, const char **why) {
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
		*out = (struct reply){0};
		// Spread over [pause/2, pause): clients refused together do not come back together.
		int64_t ms = pause_ms / 2 + (int64_t)((unsigned)rand() % (unsigned)(pause_ms / 2));
		ms = ms < left ? ms : left;
		struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
		}
		pause_ms = pause_ms * 2 < 1000 ? pause_ms * 2 : 1000;
	}
}

static int post(const char *sock, const char *path, const char *body, bool idempotent,
		struct reply *out, const char **why) {
	return call_retry(sock, "POST", path, body, idempotent, out, why);
}

/*
 * A new request id (32 hex digits) into @out: the daemon records a start retried with the same
 * id once. Seeds rand() for the back-off too.
 */
static void new_request_id(char out[33]) {
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

/* A string or number member of the reply's JSON object (a number as written), or NULL. */
static char *reply_field(const char *body, const char *key) {
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

/* --- arguments ------------------------------------------------------------------------------ */

struct run_args {
	const char *label;
	struct runtag_list tags; // --tag KEY=VALUE
	int64_t timeout_ms;      // 0 = none
	int64_t pid;             // run start --pid
	bool pid_given;
	struct runmetric_set metrics; // --metric
};

/* --metric NAME=VALUE[UNIT] into @a's metrics; false after saying why. */
static bool add_metric(struct run_args *a, const char *cmd, const char *text) {
	char *err = NULL;
	if (runmetric_parse_assignment(text, &a->metrics, &err)) {
		return true;
	}
	struct buf shown = {0};
	buf_put_printable(&shown, err, strlen(err));
	fprintf(stderr, "thermlog %s: --metric: %s\n", cmd, shown.data);
	buf_finish(&shown);
	free(err);
	return false;
}

/*
 * The metrics the stop's reply (the run's object) lacks of those @sent: a name whose unit in
 * the database is another (the daemon keeps one unit a name). Said on stderr, one a line.
 */
static void metrics_not_recorded(const char *cmd, const char *reply,
				 const struct runmetric_set *sent) {
	struct jsonread_error err;
	struct jsonread_node *root =
		reply ? jsonread_parse(reply, strlen(reply), JSONREAD_MAX_LEN, &err) : NULL;
	const struct jsonread_node *got = jsonread_get(root, "metrics");
	for (size_t i = 0; i < sent->n; i++) {
		if (!jsonread_get(got, sent->m[i].name)) {
			struct buf name = {0};
			buf_put_printable(&name, sent->m[i].name, strlen(sent->m[i].name));
			fprintf(stderr,
				"thermlog %s: metric '%s' was NOT recorded: the database keeps it in "
				"another unit than '%s' (thermlog runs stats names it)\n",
				cmd, name.data, sent->m[i].unit);
			buf_finish(&name);
		}
	}
	jsonread_node_free(root);
}

/* --- THERMLOG_METRICS: the wrapped command's own metrics ------------------------------------ */

/*
 * A private empty file for the command's metrics, in $TMPDIR (else /tmp), mode 0600; its path
 * newly allocated, or NULL (said why: the command runs without THERMLOG_METRICS).
 */
static char *metrics_file_create(void) {
	const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *path = xasprintf("%s/thermlog-metrics.XXXXXX", dir);
	int fd = mkstemp(path); // O_EXCL, mode 0600
	if (fd < 0) {
		fprintf(stderr,
			"thermlog run: could not create a metrics file in %s: %s; the command "
			"runs without THERMLOG_METRICS\n",
			dir, strerror(errno));
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

/*
 * Reads the metrics file @path the command wrote into @set (its metrics replace those of
 * --metric of the same name), says each bad line on stderr, and removes the file. The command
 * may have replaced it: only a regular file is read (no FIFO to block on, no link followed).
 */
static void metrics_file_read(const char *path, struct runmetric_set *set) {
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0 || errno != ENOENT) {
			fprintf(stderr,
				"thermlog run: THERMLOG_METRICS (%s) is no longer a regular "
				"file: its metrics are not read\n",
				path);
		}
		if (fd >= 0) {
			close(fd);
		}
		unlink(path);
		return;
	}
	if (st.st_size > RUNMETRIC_FILE_MAX) {
		fprintf(stderr,
			"thermlog run: THERMLOG_METRICS holds %lld bytes, more than %d: its "
			"metrics are not read\n",
			(long long)st.st_size, RUNMETRIC_FILE_MAX);
	} else {
		struct buf text = {0}, errors = {0};
		char chunk[4096];
		ssize_t n;
		while (text.len <= RUNMETRIC_FILE_MAX && (n = read(fd, chunk, sizeof(chunk))) > 0) {
			buf_append(&text, chunk, (size_t)n);
		}
		if (runmetric_parse_file(text.data ? text.data : "", text.len, "THERMLOG_METRICS",
					 set, &errors) > 0) {
			for (char *line = errors.data, *nl; line && *line; line = nl + 1) {
				nl = strchr(line, '\n');
				fprintf(stderr,
					"thermlog run: %.*s (left out; the run and its other "
					"metrics are kept)\n",
					(int)(nl - line), line);
			}
		}
		buf_finish(&text);
		buf_finish(&errors);
	}
	close(fd);
	unlink(path);
}

static bool add_tag(struct run_args *a, const char *kv) {
	char *err = NULL;
	if (runtag_parse(kv, &a->tags, &err)) {
		return true;
	}
	struct buf shown = {0};
	buf_put_printable(&shown, kv, strlen(kv));
	fprintf(stderr, "thermlog run: --tag %s: %s\n", shown.data, err);
	buf_finish(&shown);
	free(err);
	return false;
}

static char *socket_of(struct cli_context *ctx) {
	const struct config *cfg = cli_setup(ctx) == CLI_EXIT_OK ? cli_config(ctx) : NULL;
	return cfg ? xstrdup(cfg->runs.socket) : NULL;
}

/*
 * Whether the daemon on @sock records into the database --db names (true without --db). When
 * it serves another, or cannot say which, says so on stderr, @what ending the line, and returns
 * false. An unreachable daemon returns true: the request that follows says it is not there.
 */
static bool daemon_serves_db(struct cli_context *ctx, const char *sock, const char *cmd,
			     const char *what) {
	if (!ctx->db_path) {
		return true;
	}
	struct reply r;
	const char *why;
	if (call_retry(sock, "GET", "/api/v1/status", NULL, true, &r, &why) < 0) {
		return true;
	}
	char *served = r.status == 200 ? reply_field(r.body, "database_path") : NULL;
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

/* The executable execvp() would run for @cmd, or NULL. Newly allocated. */
static char *find_exe(const char *cmd) {
	if (strchr(cmd, '/')) {
		return realpath(cmd, NULL);
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

#define EXE_HASH_MAX (1LL << 31) // larger executables go unhashed

/*
 * The sha256 of the regular file @path as 64 hex digits in @hex, hashed here as the caller
 * (the daemon never opens a path a client names). False when it is not a readable regular
 * file of at most EXE_HASH_MAX bytes.
 */
static bool exe_sha256(const char *path, char hex[2 * SHA256_DIGEST_LEN + 1]) {
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

/* --- the wrapper ---------------------------------------------------------------------------- */

/*
 * The signals passed on to the command, as a shell passes them to a foreground job: whatever
 * `kill` may send the wrapper that the job should see. SIGTSTP stops the command, and the
 * wrapper stops when the command does (wait4 WUNTRACED); continued, it continues the command.
 * SIGKILL and SIGSTOP cannot be caught; SIGCHLD, SIGTTIN and SIGTTOU concern the wrapper itself.
 */
static const int forwarded[] = {SIGHUP,   SIGINT,  SIGQUIT, SIGTERM, SIGUSR1,   SIGUSR2,
				SIGWINCH, SIGTSTP, SIGALRM, SIGPIPE, SIGVTALRM, SIGPROF,
				SIGURG,   SIGXCPU, SIGXFSZ, SIGPWR};
#define N_FORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))

static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t self_pid;
static volatile sig_atomic_t timed_out;
static volatile sig_atomic_t has_timeout;

/*
 * Passes a signal on to the command, unless the terminal sent it to the whole process group
 * already (SI_KERNEL) or the wrapper raised it itself (a write to a closed pipe). With
 * --timeout, the timer's SIGALRM (SI_KERNEL) ends the command: SIGTERM, then SIGKILL.
 */
static void handle_signal(int sig, siginfo_t *info, void *uctx) {
	(void)uctx;
	int saved = errno;
	pid_t pid = (pid_t)child_pid;
	bool from_kernel = info && info->si_code == SI_KERNEL;
	if (sig == SIGALRM && from_kernel && has_timeout && pid > 0) {
		if (!timed_out) {
			timed_out = 1;
			kill(pid, SIGTERM);
			alarm(KILL_GRACE_S);
		} else {
			kill(pid, SIGKILL);
		}
	} else if (pid > 0 && !from_kernel && !(info && info->si_pid == (pid_t)self_pid)) {
		kill(pid, sig);
	}
	errno = saved;
}

/* A real-time signal is passed on too: the same handler for SIGRTMIN..SIGRTMAX. */
static int n_signals(void) {
	return (int)N_FORWARDED + (SIGRTMAX - SIGRTMIN + 1);
}

static int signal_at(int i) {
	return i < (int)N_FORWARDED ? forwarded[i] : SIGRTMIN + (i - (int)N_FORWARDED);
}

static double now_s(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Runs argv: forks, and in the child execs it with the signal actions it would have had without
 * the wrapper. Returns the child's pid, with *exec_err the errno of a failed exec (0: it runs),
 * or -1 when fork failed.
 */
static pid_t spawn(char **argv, const struct sigaction *old, const sigset_t *old_mask,
		   int *exec_err) {
	*exec_err = 0;
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		pfd[0] = pfd[1] = -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < n_signals(); i++) {
			sigaction(signal_at(i), &old[i], NULL);
		}
		sigprocmask(SIG_SETMASK, old_mask, NULL);
		execvp(argv[0], argv);
		int err = errno;
		if (pfd[1] >= 0) {
			ssize_t n = write(pfd[1], &err, sizeof(err));
			(void)n;
		}
		// The parent says why (exec_err), recorded with the run or not.
		_exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXEC);
	}
	if (pfd[1] >= 0) {
		close(pfd[1]);
	}
	if (pid > 0 && pfd[0] >= 0) {
		// Blocks until the exec (closing the pipe) or its failure: the forwarded signals
		// are blocked meanwhile, so no EINTR, and none is lost.
		ssize_t n;
		while ((n = read(pfd[0], exec_err, sizeof(*exec_err))) < 0 && errno == EINTR) {
		}
		if (n != (ssize_t)sizeof(*exec_err)) {
			*exec_err = 0;
		}
	}
	if (pfd[0] >= 0) {
		close(pfd[0]);
	}
	return pid;
}

/*
 * Why a command could not start, as the run records it and the wrapper says it: the caller's
 * path and the cause, never the daemon's; escaped and capped by the one rule of a run's error
 * (a path with a line feed or of 600 bytes is still a stop the daemon takes). Newly allocated.
 */
static char *exec_error(const char *argv0, int err) {
	char *raw = xasprintf("%s: %s (%s)", argv0, strerror(err),
			      err == ENOENT ? "command not found" : "not executable");
	char *text = jobcsv_error_text(raw);
	free(raw);
	return text;
}

/* How the command ended, as the stop request tells the daemon; @error: why it never ran. */
static void stop_body(struct buf *out, int status, const struct rusage *ru, const char *error,
		      const struct runmetric_set *metrics) {
	struct runwire_stop stop = {
		.has_status = timed_out,
		.status = RUN_STATUS_TIMEOUT,
		.has_exit_code = WIFEXITED(status),
		.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0,
		.has_signal = !WIFEXITED(status) && WIFSIGNALED(status),
		.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0,
		.rss_max_bytes = (int64_t)ru->ru_maxrss * 1024, // Linux: kilobytes
		.error = error,
		.metrics = *metrics, // borrowed: written, never freed here
	};
	runwire_stop_write(&stop, out);
}

/*
 * The socket of a daemon that serves the database --db names, for @cmd (@what ends the message
 * when it serves another); NULL with the exit code in *@rc after the message.
 */
static char *serving_socket(struct cli_context *ctx, const char *cmd, const char *what, int *rc) {
	char *sock = socket_of(ctx);
	if (!sock) {
		*rc = CLI_EXIT_USAGE;
		return NULL;
	}
	if (!daemon_serves_db(ctx, sock, cmd, what)) {
		free(sock);
		*rc = CLI_EXIT_FAILURE;
		return NULL;
	}
	return sock;
}

/* Posts a wrapped command's start: the run's id (newly allocated), or NULL after saying why. */
static char *send_start(struct cli_context *ctx, const char *sock, const struct buf *body) {
	struct reply r = {0};
	const char *why = NULL;
	char *id = NULL;
	if (!daemon_serves_db(ctx, sock, "run", "this run is NOT recorded")) {
		// said why
	} else if (post(sock, "/api/v1/runs", body->data, true, &r, &why) < 0) {
		fprintf(stderr,
			"thermlog run: the daemon is not reachable at %s (%s): this run is NOT "
			"recorded\n",
			sock, why);
	} else if (r.status != 201 || !(id = reply_field(r.body, "id"))) {
		char *err = reply_field(r.body, "error");
		fprintf(stderr,
			"thermlog run: the daemon refused the run (HTTP %d: %s): this run "
			"is NOT recorded\n",
			r.status, err ? err : "no reason given");
		free(err);
	}
	free(r.body);
	return id;
}

/* Posts a wrapped command's end to run @id, then says on stderr how the run was recorded. */
static void send_end(const char *sock, const char *id, const char *label, int status,
		     const struct rusage *ru, const char *error,
		     const struct runmetric_set *metrics) {
	struct reply r = {0};
	const char *why = NULL;
	int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	struct buf stop = {0};
	stop_body(&stop, status, ru, error, metrics);
	char *path = xasprintf("/api/v1/runs/%s/stop", id);
	if (post(sock, path, stop.data, false, &r, &why) < 0) {
		fprintf(stderr,
			"thermlog run: the daemon is not reachable at %s (%s): the end of run "
			"%s is NOT recorded (it will show as lost)\n",
			sock, why, id);
		if (error) {
			fprintf(stderr, "thermlog run: %s\n", error);
		}
	} else if (r.status != 200) {
		char *err = reply_field(r.body, "error");
		fprintf(stderr,
			"thermlog run: the daemon refused the end of run %s (HTTP %d: %s)\n", id,
			r.status, err ? err : "no reason given");
		free(err);
		if (error) {
			fprintf(stderr, "thermlog run: %s\n", error);
		}
	} else if (error) {
		char *st = reply_field(r.body, "status");
		fprintf(stderr, "thermlog run: %s; recorded as run %s (%s, exit %d)\n", error, id,
			st ? st : "?", exit_code);
		free(st);
		metrics_not_recorded("run", r.body, metrics);
	} else {
		char *st = reply_field(r.body, "status");
		char *dur = reply_field(r.body, "duration_s");
		char *temp = reply_field(r.body, "temp_max_c");
		char *energy = reply_field(r.body, "energy_j");
		char *method = reply_field(r.body, "energy_method");
		fprintf(stderr, "thermlog run: run %s (%s) %s", id, label, st ? st : "?");
		if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
			fprintf(stderr, " (exit %d)", WEXITSTATUS(status));
		} else if (WIFSIGNALED(status)) {
			fprintf(stderr, " (%s)", strsignal(WTERMSIG(status)));
		}
		double rss_factor; // peak RSS reads as memory does everywhere (unit.h)
		const char *rss_symbol = unit_symbol("bytes", &rss_factor);
		fprintf(stderr, " in %s s, peak %s%s, energy %s%s%s%s, peak RSS %.*f %s\n",
			dur ? dur : "?", temp ? temp : "unknown", temp ? " °C" : "",
			energy ? energy : "unknown", energy ? " J" : "", method ? " by " : "",
			method ? method : "", unit_places("bytes", false),
			(double)ru->ru_maxrss * 1024 * rss_factor, rss_symbol);
		metrics_not_recorded("run", r.body, metrics);
		free(st);
		free(dur);
		free(temp);
		free(energy);
		free(method);
	}
	free(r.body);
	free(path);
	buf_finish(&stop);
}

static int wrap(struct cli_context *ctx, struct run_args *a, int argc, char **argv) {
	char *sock = socket_of(ctx);
	if (!sock) {
		return CLI_EXIT_USAGE;
	}
	char request_id[33];
	new_request_id(request_id);
	// NULL when there is none to run: the run is still recorded, as failed with 127 or 126.
	char *exe = find_exe(argv[0]);
	const char *slash = strrchr(argv[0], '/');
	const char *label = a->label ? a->label : (slash && slash[1] ? slash + 1 : argv[0]);
	char hex[2 * SHA256_DIGEST_LEN + 1];
	struct buf tags_json = {0};
	runtag_list_json(&a->tags, &tags_json);
	char *tags = buf_steal(&tags_json);
	struct buf args = {0}, body = {0};
	runwire_argv(&args, argv, (size_t)argc);
	struct runwire_start start = {
		.label = label,
		.tags = tags,
		.argv = args.data,
		.exe = exe,
		.exe_sha256 = exe && exe_sha256(exe, hex) ? hex : NULL,
		.request_id = request_id,
	};
	runwire_start_write(&start, &body);
	buf_finish(&args);
	free(tags);
	free(exe);

	// The handlers are in place and the signals blocked before the start is sent, so none is
	// lost: not one that comes as soon as the run is recorded (a supervisor that saw it
	// running), nor between fork and exec, nor before child_pid is known.
	struct sigaction act = {.sa_sigaction = handle_signal, .sa_flags = SA_SIGINFO | SA_RESTART};
	sigemptyset(&act.sa_mask);
	sigset_t block, old_mask;
	sigemptyset(&block);
	for (int i = 0; i < n_signals(); i++) {
		sigaddset(&act.sa_mask, signal_at(i));
		sigaddset(&block, signal_at(i));
	}
	sigprocmask(SIG_BLOCK, &block, &old_mask);
	struct sigaction *old = xcalloc((size_t)n_signals(), sizeof(*old));
	for (int i = 0; i < n_signals(); i++) {
		sigaction(signal_at(i), &act, &old[i]);
	}

	// Recorded or not, the command runs: a missing daemon only costs the record.
	char *id = send_start(ctx, sock, &body);
	buf_finish(&body);

	self_pid = getpid();
	has_timeout = a->timeout_ms > 0;
	char *metrics_path = metrics_file_create();
	if (metrics_path) {
		setenv("THERMLOG_METRICS", metrics_path, 1); // the command's, through execvp()
	}
	double t0 = now_s();
	int exec_err = 0;
	pid_t pid = spawn(argv, old, &old_mask, &exec_err);
	free(old);
	if (pid < 0) {
		fprintf(stderr, "thermlog run: cannot fork: %s\n", strerror(errno));
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		if (metrics_path) {
			unlink(metrics_path);
		}
		free(metrics_path);
		free(id);
		free(sock);
		return CLI_EXIT_FAILURE;
	}
	child_pid = pid;
	if (a->timeout_ms > 0 && !exec_err) {
		struct itimerval it = {.it_value = {.tv_sec = a->timeout_ms / 1000,
						    .tv_usec = (a->timeout_ms % 1000) * 1000}};
		setitimer(ITIMER_REAL, &it, NULL);
	}
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	int status = 0;
	struct rusage ru = {0};
	for (;;) {
		if (wait4(pid, &status, WUNTRACED, &ru) < 0) {
			if (errno == EINTR) {
				continue;
			}
			fprintf(stderr, "thermlog run: wait4: %s\n", strerror(errno));
			status = EXIT_NOT_EXEC << 8;
			break;
		}
		if (!WIFSTOPPED(status)) {
			break;
		}
		// The command stopped (SIGTSTP, SIGSTOP): so does the wrapper, so that a shell sees
		// its job stopped; continued (fg, bg, SIGCONT), it continues the command.
		raise(SIGSTOP);
		kill(pid, SIGCONT);
	}
	child_pid = 0;
	alarm(0);
	double took = now_s() - t0;
	int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	char *error = exec_err ? exec_error(argv[0], exec_err) : NULL;
	if (metrics_path) {
		metrics_file_read(metrics_path, &a->metrics);
		free(metrics_path);
	}

	if (id) {
		send_end(sock, id, label, status, &ru, error, &a->metrics);
	} else {
		const char *how = timed_out             ? "timeout"
				  : WIFSIGNALED(status) ? "signaled"
				  : exit_code == 0      ? "ok"
							: "failed";
		if (error) {
			fprintf(stderr, "thermlog run: %s (not recorded)\n", error);
		} else {
			fprintf(stderr, "thermlog run: %s %s after %.3f s (not recorded)\n", label,
				how, took);
		}
	}
	free(error);
	free(id);
	free(sock);
	return exit_code;
}

/* --- start and stop ------------------------------------------------------------------------- */

/* Says on stderr that the daemon refused `thermlog @cmd`, with its reason if it gave one. */
static void refused(const char *cmd, const struct reply *r) {
	char *err = reply_field(r->body, "error");
	fprintf(stderr, "thermlog %s: HTTP %d: %s\n", cmd, r->status,
		err ? err : "no reason given");
	free(err);
}

/*
 * POSTs @body to @path on the daemon's socket for `thermlog @cmd`. Returns true with *r
 * filled (the caller frees r->body) when the daemon answered @want; otherwise says why on stderr,
 * @not_done ending the line when the daemon is not reachable, and returns false.
 */
static bool request(const char *sock, const char *cmd, const char *path, const char *body, int want,
		    bool idempotent, const char *not_done, struct reply *r) {
	const char *why;
	if (post(sock, path, body, idempotent, r, &why) < 0) {
		fprintf(stderr, "thermlog %s: the daemon is not reachable at %s (%s)%s\n", cmd,
			sock, why, not_done);
		return false;
	}
	if (r->status != want) {
		refused(cmd, r);
		return false;
	}
	return true;
}

static int start(struct cli_context *ctx, struct run_args *a) {
	if (!a->label) {
		fprintf(stderr, "thermlog run start: --label is required\n");
		return CLI_EXIT_USAGE;
	}
	// A run watched through a process that is not there would only end as lost.
	if (a->pid_given && kill((pid_t)a->pid, 0) < 0 && errno == ESRCH) {
		fprintf(stderr, "thermlog run start: --pid %" PRId64 ": no such process\n", a->pid);
		return CLI_EXIT_USAGE;
	}
	int rc;
	char *sock = serving_socket(ctx, "run start", "no run was started", &rc);
	if (!sock) {
		return rc;
	}
	char request_id[33];
	new_request_id(request_id);
	struct buf tags_json = {0};
	runtag_list_json(&a->tags, &tags_json);
	char *tags = buf_steal(&tags_json);
	struct buf body = {0};
	// This process exits at once: the run is watched only through --pid ("pid": null: none).
	struct runwire_start start = {.label = a->label,
				      .tags = tags,
				      .has_pid = true,
				      .pid = a->pid_given ? a->pid : 0,
				      .request_id = request_id};
	runwire_start_write(&start, &body);
	free(tags);
	struct reply r = {0};
	rc = CLI_EXIT_FAILURE;
	if (request(sock, "run start", "/api/v1/runs", body.data, 201, true, ": no run was started",
		    &r)) {
		char *id = reply_field(r.body, "id");
		if (id) {
			printf("%s\n", id);
			rc = CLI_EXIT_OK;
		} else {
			refused("run start", &r);
		}
		free(id);
	}
	free(r.body);
	buf_finish(&body);
	free(sock);
	return rc;
}

static int stop(struct cli_context *ctx, const char *id_text, int exit_code, const char *status,
		const struct runmetric_set *metrics) {
	char *end;
	errno = 0;
	long long id = strtoll(id_text, &end, 10);
	if (errno || *end || id <= 0) {
		fprintf(stderr, "thermlog run stop: '%s' is not a run id\n", id_text);
		return CLI_EXIT_USAGE;
	}
	int rc;
	char *sock = serving_socket(ctx, "run stop", "no run was stopped", &rc);
	if (!sock) {
		return rc;
	}
	struct runwire_stop how = {.has_exit_code = exit_code >= 0,
				   .exit_code = exit_code,
				   .rss_max_bytes = -1,
				   .metrics = *metrics}; // borrowed: written, never freed here
	how.has_status = status && run_status_parse(status, &how.status);
	struct buf body = {0};
	runwire_stop_write(&how, &body);
	char *path = xasprintf("/api/v1/runs/%lld/stop", id);
	struct reply r = {0};
	rc = CLI_EXIT_FAILURE;
	if (request(sock, "run stop", path, body.data, 200, false, "", &r)) {
		printf("%s", r.body);
		metrics_not_recorded("run stop", r.body, metrics);
		rc = CLI_EXIT_OK;
	}
	free(r.body);
	free(path);
	buf_finish(&body);
	free(sock);
	return rc;
}

static const char usage_text[] =
	"usage: thermlog run [--label L] [--tag K=V]... [--metric NAME=VALUE[UNIT]]...\n"
	"                    [--timeout DUR] -- CMD [ARGS...]\n"
	"       thermlog run start --label L [--tag K=V]... [--pid PID]\n"
	"       thermlog run stop ID (--exit N | --status ok|failed) [--metric NAME=VALUE[UNIT]]...\n"
	"\n"
	"Records a run through thermlogd's socket (runs.socket). The wrapper exits with\n"
	"CMD's status (128+N when a signal N ended it) and runs CMD even when the daemon\n"
	"is not reachable. CMD may write its own metrics, lines \"NAME VALUE [UNIT]\" or\n"
	"one JSON object, to the file $THERMLOG_METRICS names. See thermlog(1).\n";

enum { OPT_LABEL = 512, OPT_TAG, OPT_TIMEOUT, OPT_PID, OPT_EXIT, OPT_STATUS, OPT_METRIC };

static const struct option run_options[] = {
	{"label", required_argument, NULL, OPT_LABEL},
	{"tag", required_argument, NULL, OPT_TAG},
	{"metric", required_argument, NULL, OPT_METRIC},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"pid", required_argument, NULL, OPT_PID},
	{"exit", required_argument, NULL, OPT_EXIT},
	{"status", required_argument, NULL, OPT_STATUS},
	CLI_OPTION_HELP,
	{0},
};

/* What `thermlog run` (start, stop) was given besides its run_args. */
struct run_cli {
	struct run_args a;
	const char *cmd; // "run", "run start" or "run stop": what --metric's messages say
	int exit_code;   // --exit, -1 without
	const char *status;
	bool timeout_given, exit_given;
};

/* --exit @arg of `thermlog @cmd` into o->exit_code: false after the message. */
static bool exit_option(struct run_cli *o, const char *cmd, const char *arg) {
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (errno || *end || !*arg || v < 0 || v > 255) {
		fprintf(stderr, "thermlog %s: --exit %s: expected 0..255\n", cmd, arg);
		return false;
	}
	o->exit_code = (int)v;
	o->exit_given = true;
	return true;
}

/* One option of `thermlog run` into @o: false after its message. */
static bool run_option(struct run_cli *o, int c, const char *arg) {
	char *end;
	switch (c) {
	case OPT_LABEL:
		if (!jobcsv_label_valid(arg)) {
			fprintf(stderr, "thermlog run: --label: expected " JOBCSV_LABEL_RULE "\n");
			return false;
		}
		o->a.label = arg;
		return true;
	case OPT_TAG:
		return add_tag(&o->a, arg);
	case OPT_METRIC:
		return add_metric(&o->a, o->cmd, arg);
	case OPT_TIMEOUT:
		if (!timefmt_parse_duration_ms(arg, &o->a.timeout_ms) || o->a.timeout_ms <= 0) {
			fprintf(stderr,
				"thermlog run: --timeout %s: expected a duration such as 30s or "
				"25m\n",
				arg);
			return false;
		}
		o->timeout_given = true;
		return true;
	case OPT_PID:
		errno = 0;
		o->a.pid = strtoll(arg, &end, 10);
		if (errno || *end || o->a.pid <= 0 || o->a.pid > INT_MAX) {
			fprintf(stderr, "thermlog run: --pid %s: expected a process id\n", arg);
			return false;
		}
		o->a.pid_given = true;
		return true;
	case OPT_EXIT:
		return exit_option(o, "run", arg);
	default: // OPT_STATUS
		if (strcmp(arg, "ok") != 0 && strcmp(arg, "failed") != 0) {
			fprintf(stderr, "thermlog run: --status %s: expected ok or failed\n", arg);
			return false;
		}
		o->status = arg;
		return true;
	}
}

/* `thermlog run stop`: the id may come before or after the options ("run stop 12 --exit 3"). */
static int stop_cmd(struct cli_context *ctx, struct run_cli *o, int argc, char **argv) {
	const char *stop_id = NULL;
	while (optind < argc) {
		if (stop_id) {
			fprintf(stderr, "thermlog run stop: unexpected argument '%s'\n",
				argv[optind]);
			return CLI_EXIT_USAGE;
		}
		stop_id = argv[optind++];
		int c;
		while ((c = getopt_long(argc, argv, "+", run_options, NULL)) != -1) {
			bool good;
			if (c == OPT_EXIT) {
				good = exit_option(o, "run stop", optarg);
			} else if (c == OPT_STATUS &&
				   (strcmp(optarg, "ok") == 0 || strcmp(optarg, "failed") == 0)) {
				o->status = optarg;
				good = true;
			} else if (c == OPT_METRIC) {
				good = add_metric(&o->a, "run stop", optarg);
			} else {
				fputs(usage_text, stderr);
				good = false;
			}
			if (!good) {
				return CLI_EXIT_USAGE;
			}
		}
	}
	if (!stop_id || o->exit_given == (o->status != NULL) || o->a.label || o->a.tags.n ||
	    o->timeout_given || o->a.pid_given) {
		fprintf(stderr, "thermlog run stop: needs ID and one of --exit N or --status "
				"ok|failed\n");
		return CLI_EXIT_USAGE;
	}
	return stop(ctx, stop_id, o->exit_code, o->status, &o->a.metrics);
}

/* `thermlog run [options] -- CMD [ARGS...]`: the @rest words of @args after the options. */
static int wrap_cmd(struct cli_context *ctx, struct run_cli *o, int rest, char **args) {
	if (rest == 0 || o->a.pid_given || o->exit_given || o->status) {
		fputs(usage_text, stderr);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(args[0], "--") == 0) {
		args++;
		rest--;
	}
	if (rest == 0) {
		fputs(usage_text, stderr);
		return CLI_EXIT_USAGE;
	}
	char **cmd = xcalloc((size_t)rest + 1, sizeof(*cmd));
	memcpy(cmd, args, (size_t)rest * sizeof(*cmd));
	int rc = wrap(ctx, &o->a, rest, cmd);
	free(cmd);
	return rc;
}

int cli_run(struct cli_context *ctx, int argc, char **argv) {
	struct run_cli o = {.cmd = "run", .exit_code = -1};
	int rc = CLI_EXIT_USAGE;
	int c;
	// "run start ..." and "run stop ...": the word comes first, its options after it.
	const char *sub =
		argc > 1 && (strcmp(argv[1], "start") == 0 || strcmp(argv[1], "stop") == 0)
			? argv[1]
			: NULL;
	if (sub) {
		o.cmd = strcmp(sub, "stop") == 0 ? "run stop" : "run start";
		argv++;
		argc--;
	}
	// "+": options end at the command, whose own options are its business.
	while ((c = getopt_long(argc, argv, "+", run_options, NULL)) != -1) {
		if (c == 'h' || c == '?') { // --help, or an option getopt_long refused
			rc = cli_usage(c, usage_text);
			goto out;
		}
		if (!run_option(&o, c, optarg)) {
			goto out;
		}
	}
	int rest = argc - optind;
	if (sub && strcmp(sub, "start") == 0) {
		if (rest > 0 || o.timeout_given || o.exit_given || o.status || o.a.metrics.n) {
			fprintf(stderr,
				"thermlog run start: takes --label, --tag and --pid only (a run's "
				"metrics come with its stop: run stop ID --metric ...)\n");
			goto out;
		}
		rc = start(ctx, &o.a);
	} else if (sub) {
		rc = stop_cmd(ctx, &o, argc, argv);
	} else {
		rc = wrap_cmd(ctx, &o, rest, argv + optind);
	}
out:
	runtag_list_finish(&o.a.tags);
	runmetric_set_finish(&o.a.metrics);
	return rc;
}

/* --- runs metric ---------------------------------------------------------------------------- */

static const char metric_usage[] =
	"usage: thermlog runs metric ID NAME=VALUE[UNIT]...\n"
	"Adds metrics to run ID (running or ended) through thermlogd's socket (runs.socket):\n"
	"figures known only after the run, such as an output's deviation checked later. A\n"
	"metric without a unit takes the one recorded for its name; another unit is refused.\n";

int cli_runs_metric(struct cli_context *ctx, int argc, char **argv) {
	static const struct option longopts[] = {CLI_OPTION_HELP, {0}};
	int c;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		return cli_usage(c, metric_usage);
	}
	if (argc - optind < 2) {
		fputs(metric_usage, stderr);
		return CLI_EXIT_USAGE;
	}
	char *end;
	errno = 0;
	long long id = strtoll(argv[optind], &end, 10);
	if (errno || *end || id <= 0) {
		fprintf(stderr, "thermlog runs metric: '%s' is not a run id\n", argv[optind]);
		return CLI_EXIT_USAGE;
	}
	struct run_args a = {0};
	int rc = CLI_EXIT_USAGE;
	for (int i = optind + 1; i < argc; i++) {
		if (!add_metric(&a, "runs metric", argv[i])) {
			goto out;
		}
	}
	char *sock = serving_socket(ctx, "runs metric", "no metric was recorded", &rc);
	if (!sock) {
		goto out;
	}
	struct buf body = {0};
	runwire_metrics_write(&a.metrics, &body);
	char *path = xasprintf("/api/v1/runs/%lld/metrics", id);
	struct reply r = {0};
	rc = CLI_EXIT_FAILURE;
	if (request(sock, "runs metric", path, body.data, 200, true, ": no metric was recorded",
		    &r)) {
		printf("%s", r.body);
		rc = CLI_EXIT_OK;
	}
	free(r.body);
	free(path);
	buf_finish(&body);
	free(sock);
out:
	runmetric_set_finish(&a.metrics);
	return rc;
}
