/*
 * The wrapper (cli-wrap.h): a command run as a recorded run, for `thermlog run` and a campaign's
 * steps. Forwards signals, collects the command's peak RSS with wait4() and its metrics from
 * THERMLOG_METRICS, and passes its exit status through, recorded or not.
 */
#include "cli-wrap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "cli-daemon.h"
#include "jobcsv.h"
#include "jsonread.h"
#include "runwire.h"
#include "unit.h"
#include "xalloc.h"

#define KILL_GRACE_S   10 // after --timeout's SIGTERM, SIGKILL follows this much later
#define EXIT_NOT_FOUND 127
#define EXIT_NOT_EXEC  126

void cli_metrics_not_recorded(const char *cmd, const char *reply,
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
static char *metrics_file_create(const char *cmd) {
	const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *path = xasprintf("%s/thermlog-metrics.XXXXXX", dir);
	int fd = mkstemp(path); // O_EXCL, mode 0600
	if (fd < 0) {
		fprintf(stderr,
			"thermlog %s: could not create a metrics file in %s: %s; the command "
			"runs without THERMLOG_METRICS\n",
			cmd, dir, strerror(errno));
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
static void metrics_file_read(const char *cmd, const char *path, struct runmetric_set *set) {
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0 || errno != ENOENT) {
			fprintf(stderr,
				"thermlog %s: THERMLOG_METRICS (%s) is no longer a regular "
				"file: its metrics are not read\n",
				cmd, path);
		}
		if (fd >= 0) {
			close(fd);
		}
		unlink(path);
		return;
	}
	if (st.st_size > RUNMETRIC_FILE_MAX) {
		fprintf(stderr,
			"thermlog %s: THERMLOG_METRICS holds %lld bytes, more than %d: its "
			"metrics are not read\n",
			cmd, (long long)st.st_size, RUNMETRIC_FILE_MAX);
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
					"thermlog %s: %.*s (left out; the run and its other "
					"metrics are kept)\n",
					cmd, (int)(nl - line), line);
			}
		}
		buf_finish(&text);
		buf_finish(&errors);
	}
	close(fd);
	unlink(path);
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
static volatile sig_atomic_t interrupted; // the last SIGINT, SIGTERM or SIGHUP

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
	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
		interrupted = sig; // heeded only with interrupt_loses
	}
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
 * Runs @w's argv: forks, and in the child execs it (in @w's cwd) with the signal actions it would
 * have had without the wrapper. Returns the child's pid, with *exec_err the errno of a failed exec
 * (0: it runs), or -1 when fork failed.
 */
static pid_t spawn(const struct cli_wrap *w, const struct sigaction *old, const sigset_t *old_mask,
		   int *exec_err) {
	char **argv = w->argv;
	pid_t parent = getpid();
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
		int err = 0;
		// A wrapper killed outright takes its command with it: its run shows lost, and no
		// orphan goes on working (heating a board a campaign then measures).
		if (w->die_with_parent &&
		    (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)) {
			_exit(EXIT_NOT_EXEC);
		}
		if (w->cwd && chdir(w->cwd) < 0) {
			err = errno;
		} else {
			execvp(argv[0], argv);
			err = errno;
		}
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
 * The wrapper's own signal actions back after the command (a campaign wraps one command after
 * another): @old, allocated by the caller and freed here, and the mask @old_mask.
 */
static void restore(struct sigaction *old, const sigset_t *old_mask) {
	for (int i = 0; i < n_signals(); i++) {
		sigaction(signal_at(i), &old[i], NULL);
	}
	free(old);
	sigprocmask(SIG_SETMASK, old_mask, NULL);
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
		.has_status = timed_out != 0,
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

/* Posts a wrapped command's start: the run's id (newly allocated), or NULL after saying why. */
static char *send_start(struct cli_context *ctx, const struct cli_wrap *w, const struct buf *body) {
	const char *sock = w->sock, *cmd = w->cmd;
	struct cli_reply r = {0};
	const char *why = NULL;
	char *id = NULL;
	if (!cli_daemon_serves_db(ctx, sock, cmd, "this run is NOT recorded")) {
		// said why
	} else if (cli_daemon_call(sock, "POST", "/api/v1/runs", body->data, true, &r, &why) < 0) {
		fprintf(stderr,
			"thermlog %s: the daemon is not reachable at %s (%s): this run is NOT "
			"recorded\n",
			cmd, sock, why);
	} else if (r.status != 201 || !(id = cli_reply_field(r.body, "id"))) {
		char *err = cli_reply_field(r.body, "error");
		fprintf(stderr,
			"thermlog %s: the daemon refused the run (HTTP %d: %s): this run "
			"is NOT recorded\n",
			cmd, r.status, err ? err : "no reason given");
		free(err);
	}
	free(r.body);
	return id;
}

/* The line `thermlog run` ends with on stderr: how run @id was recorded, from the stop's reply. */
static void summary(const char *cmd, const struct cli_reply *r, const char *id, const char *label,
		    int status, const struct rusage *ru) {
	char *st = cli_reply_field(r->body, "status");
	char *dur = cli_reply_field(r->body, "duration_s");
	char *temp = cli_reply_field(r->body, "temp_max_c");
	char *energy = cli_reply_field(r->body, "energy_j");
	char *method = cli_reply_field(r->body, "energy_method");
	fprintf(stderr, "thermlog %s: run %s (%s) %s", cmd, id, label, st ? st : "?");
	if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		fprintf(stderr, " (exit %d)", WEXITSTATUS(status));
	} else if (WIFSIGNALED(status)) {
		fprintf(stderr, " (%s)", strsignal(WTERMSIG(status)));
	}
	double rss_factor; // peak RSS reads as memory does everywhere (unit.h)
	const char *rss_symbol = unit_symbol("bytes", &rss_factor);
	fprintf(stderr, " in %s s, peak %s%s, energy %s%s%s%s, peak RSS %.*f %s\n", dur ? dur : "?",
		temp ? temp : "unknown", temp ? " °C" : "", energy ? energy : "unknown",
		energy ? " J" : "", method ? " by " : "", method ? method : "",
		unit_places("bytes", false), (double)ru->ru_maxrss * 1024 * rss_factor, rss_symbol);
	free(st);
	free(dur);
	free(temp);
	free(energy);
	free(method);
}

/*
 * Posts a wrapped command's end to run @w's @out->id (the stop's reply into @out), then says on
 * stderr how the run was recorded (without @w->quiet: its summary too).
 */
static void send_end(const struct cli_wrap *w, const char *label, const struct rusage *ru,
		     const char *error, const struct runmetric_set *metrics,
		     struct cli_wrap_result *out) {
	struct cli_reply r = {0};
	const char *why = NULL, *cmd = w->cmd, *id = out->id;
	int status = out->status;
	struct buf stop = {0};
	stop_body(&stop, status, ru, error, metrics);
	char *path = xasprintf("/api/v1/runs/%s/stop", id);
	if (cli_daemon_call(w->sock, "POST", path, stop.data, false, &r, &why) < 0) {
		fprintf(stderr,
			"thermlog %s: the daemon is not reachable at %s (%s): the end of run "
			"%s is NOT recorded (it will show as lost)\n",
			cmd, w->sock, why, id);
		if (error) {
			fprintf(stderr, "thermlog %s: %s\n", cmd, error);
		}
	} else if (r.status != 200) {
		char *err = cli_reply_field(r.body, "error");
		fprintf(stderr, "thermlog %s: the daemon refused the end of run %s (HTTP %d: %s)\n",
			cmd, id, r.status, err ? err : "no reason given");
		free(err);
		if (error) {
			fprintf(stderr, "thermlog %s: %s\n", cmd, error);
		}
	} else {
		out->end_recorded = true;
		if (error) {
			char *st = cli_reply_field(r.body, "status");
			fprintf(stderr, "thermlog %s: %s; recorded as run %s (%s, exit %d)\n", cmd,
				error, id, st ? st : "?", out->exit_code);
			free(st);
		} else if (!w->quiet) {
			summary(cmd, &r, id, label, status, ru);
		}
		cli_metrics_not_recorded(cmd, r.body, metrics);
		out->reply = r.body;
		r.body = NULL;
	}
	free(r.body);
	free(path);
	buf_finish(&stop);
}

/* The start's body of @w: label, tags, argv and the executable with its sha256. */
static void start_body(const struct cli_wrap *w, const char *label, struct buf *body) {
	char request_id[33];
	cli_request_id(request_id);
	// NULL when there is none to run: the run is still recorded, as failed with 127 or 126.
	char *exe = cli_find_exe(w->argv[0], w->cwd);
	char hex[2 * SHA256_DIGEST_LEN + 1];
	struct buf args = {0};
	runwire_argv(&args, w->argv, (size_t)w->argc);
	struct runwire_start start = {
		.label = label,
		.tags = w->tags,
		.argv = args.data,
		.exe = exe,
		.exe_sha256 = exe && cli_exe_sha256(exe, hex) ? hex : NULL,
		.request_id = request_id,
	};
	runwire_start_write(&start, body);
	buf_finish(&args);
	free(exe);
}

/* Waits for the command @pid; its status and rusage into @out and @ru. */
static void wait_command(const char *cmd, pid_t pid, struct cli_wrap_result *out,
			 struct rusage *ru) {
	int status = 0;
	for (;;) {
		if (wait4(pid, &status, WUNTRACED, ru) < 0) {
			if (errno == EINTR) {
				continue;
			}
			fprintf(stderr, "thermlog %s: wait4: %s\n", cmd, strerror(errno));
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
	out->status = status;
	out->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int cli_wrap_run(struct cli_context *ctx, const struct cli_wrap *w, struct runmetric_set *metrics,
		 struct cli_wrap_result *out) {
	*out = (struct cli_wrap_result){0};
	const char *slash = strrchr(w->argv[0], '/');
	const char *label = w->label ? w->label : (slash && slash[1] ? slash + 1 : w->argv[0]);
	struct buf body = {0};
	start_body(w, label, &body);

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
	out->id = send_start(ctx, w, &body);
	buf_finish(&body);
	if (!out->id && w->recorded_only) {
		restore(old, &old_mask);
		return CLI_EXIT_OK;
	}
	out->ran = true;
	if (out->id && w->started) {
		w->started(w->started_ctx, out->id);
	}

	self_pid = getpid();
	has_timeout = w->timeout_ms > 0;
	timed_out = 0;
	interrupted = 0;
	char *metrics_path = metrics_file_create(w->cmd);
	if (metrics_path) {
		setenv("THERMLOG_METRICS", metrics_path, 1); // the command's, through execvp()
	}
	double t0 = now_s();
	int exec_err = 0;
	pid_t pid = spawn(w, old, &old_mask, &exec_err);
	if (pid < 0) {
		fprintf(stderr, "thermlog %s: cannot fork: %s\n", w->cmd, strerror(errno));
		restore(old, &old_mask);
		if (metrics_path) {
			unlink(metrics_path);
		}
		free(metrics_path);
		return CLI_EXIT_FAILURE;
	}
	child_pid = pid;
	if (w->timeout_ms > 0 && !exec_err) {
		struct itimerval it = {.it_value = {.tv_sec = w->timeout_ms / 1000,
						    .tv_usec = (w->timeout_ms % 1000) * 1000}};
		setitimer(ITIMER_REAL, &it, NULL);
	}
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	struct rusage ru = {0};
	wait_command(w->cmd, pid, out, &ru);
	child_pid = 0;
	alarm(0);
	restore(old, &old_mask);
	out->took_s = now_s() - t0;
	out->timed_out = timed_out != 0;
	char *error = exec_err ? exec_error(w->argv[0], exec_err) : NULL;
	if (metrics_path) {
		metrics_file_read(w->cmd, metrics_path, metrics);
		free(metrics_path);
	}
	if (w->interrupt_loses && interrupted) {
		// Cut from outside: no stop, so the daemon records the run lost when this process
		// is gone, and whoever resumes runs it again.
		out->interrupted = interrupted;
	} else if (out->id) {
		send_end(w, label, &ru, error, metrics, out);
	} else {
		const char *how = out->timed_out             ? "timeout"
				  : WIFSIGNALED(out->status) ? "signaled"
				  : out->exit_code == 0      ? "ok"
							     : "failed";
		if (error) {
			fprintf(stderr, "thermlog %s: %s (not recorded)\n", w->cmd, error);
		} else {
			fprintf(stderr, "thermlog %s: %s %s after %.3f s (not recorded)\n", w->cmd,
				label, how, out->took_s);
		}
	}
	free(error);
	return CLI_EXIT_OK;
}

void cli_wrap_result_finish(struct cli_wrap_result *r) {
	free(r->id);
	free(r->reply);
	*r = (struct cli_wrap_result){0};
}
