/*
 * thermlog-simload: work on the demo's simulated board (thermlogd --demo --board). Declares CPU
 * and NPU load in the simulated tree for as long as it runs (simload.h), so the board heats,
 * throttles and draws power as a real one would under that work; optionally reports figures
 * through THERMLOG_METRICS as a benchmark does. What a campaign's steps run on the demo.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jobcsv.h"
#include "simload.h"
#include "simsensor.h"
#include "timefmt.h"
#include "xalloc.h"

#define EXIT_USAGE  2
#define MAX_METRICS 16

static const char usage_text[] =
	"usage: thermlog-simload [--root DIR] [--cpu LIST=PCT]... [--npu LIST=PCT]...\n"
	"                        [--for DUR] [--jitter PCT] [--fail P] [--metric NAME=VALUE[UNIT]]...\n"
	"\n"
	"Declares work on the simulated board of thermlogd --demo --board for DUR (else until\n"
	"SIGTERM or SIGINT). LIST: all, N or A-B (CPUs 0-7, NPU cores 0-2). --jitter varies the\n"
	"duration and the metrics by up to PCT %, --fail exits 1 with probability P, both seeded\n"
	"by the campaign's step and repetition (THERMLOG_CAMPAIGN_STEP, _REP, _WARMUP), so a\n"
	"suite run twice does the same work. Metrics go to the file THERMLOG_METRICS names\n"
	"(else stdout) as NAME VALUE [UNIT] lines. The tree: --root, else THERMLOG_SIM_ROOT.\n";

struct metric {
	char *name, *unit;
	double value;
};

/* NAME=VALUE[UNIT] into @m; false when it does not read. */
static bool parse_metric(const char *arg, struct metric *m) {
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg) {
		return false;
	}
	char *end;
	double v = strtod(eq + 1, &end);
	if (end == eq + 1 || !isfinite(v) || strpbrk(eq + 1, "xX")) {
		return false;
	}
	m->name = xstrndup(arg, (size_t)(eq - arg));
	m->unit = *end ? xstrdup(end) : NULL;
	m->value = v;
	return jobcsv_label_valid(m->name) && (!m->unit || jobcsv_label_valid(m->unit));
}

/* A variate in [-1, 1) for @salt, from the campaign's step and repetition (0 without them). */
static double variate(char salt) {
	const char *step = getenv("THERMLOG_CAMPAIGN_STEP"), *rep = getenv("THERMLOG_CAMPAIGN_REP");
	const char *warm = getenv("THERMLOG_CAMPAIGN_WARMUP");
	if (!step || !rep) {
		return 0;
	}
	uint64_t h = 1469598103934665603ULL; // FNV-1a over "STEP/REP/WARMUP"
	char *key = xasprintf("%s/%s/%s", step, rep, warm ? warm : "0");
	for (const char *p = key; *p; p++) {
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	}
	free(key);
	uint64_t x = sim_hash(h, (uint64_t)salt, 0);
	return 2 * ((double)(x >> 11) * 0x1.0p-53) - 1;
}

static int64_t now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits @ms (< 0: for ever) or until SIGTERM/SIGINT (blocked): the signal, or 0. */
static int wait_for(int64_t ms, const sigset_t *set) {
	for (;;) {
		struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
		siginfo_t info;
		int sig = ms < 0 ? sigwaitinfo(set, &info) : sigtimedwait(set, &info, &ts);
		if (sig > 0) {
			return sig;
		}
		if (errno == EAGAIN) {
			return 0;
		}
		// EINTR: another signal; the time left is not kept, which a simulation can afford
	}
}

/* Writes the metrics, each scaled by the jitter, where THERMLOG_METRICS says (else stdout). */
static int write_metrics(const struct metric *m, size_t n, double jitter) {
	const char *path = getenv("THERMLOG_METRICS");
	FILE *f = path && *path ? fopen(path, "ae") : stdout;
	if (!f) {
		fprintf(stderr, "thermlog-simload: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		double v = m[i].value * (1 + jitter * variate((char)('m' + i)));
		fprintf(f, "%s %.6g%s%s\n", m[i].name, v, m[i].unit ? " " : "",
			m[i].unit ? m[i].unit : "");
	}
	int rc = f == stdout ? fflush(f) : fclose(f);
	return rc == 0 ? 0 : -1;
}

struct args {
	const char *root;
	struct simload_decl decl;
	int64_t for_ms; // < 0: until a signal
	double jitter, fail;
	struct metric metrics[MAX_METRICS];
	size_t n_metrics;
};

/* Reads the options into @a; an exit code, or -1 to go on. */
static int parse_args(int argc, char **argv, struct args *a) {
	static const struct option longopts[] = {
		{"root", required_argument, NULL, 'r'},
		{"cpu", required_argument, NULL, 'c'},
		{"npu", required_argument, NULL, 'n'},
		{"for", required_argument, NULL, 'f'},
		{"jitter", required_argument, NULL, 'j'},
		{"fail", required_argument, NULL, 'x'},
		{"metric", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		char *end = NULL;
		bool ok = true;
		switch (c) {
		case 'r':
			a->root = optarg;
			break;
		case 'c':
			ok = simload_spec(optarg, a->decl.load.cpu_pct, SIM_CPUS);
			break;
		case 'n':
			ok = simload_spec(optarg, a->decl.load.npu_pct, SIM_NPU_CORES);
			break;
		case 'f':
			ok = timefmt_parse_duration_ms(optarg, &a->for_ms) && a->for_ms >= 0;
			break;
		case 'j':
			a->jitter = strtod(optarg, &end) / 100;
			ok = end != optarg && !*end && a->jitter >= 0 && a->jitter < 1;
			break;
		case 'x':
			a->fail = strtod(optarg, &end);
			ok = end != optarg && !*end && a->fail >= 0 && a->fail <= 1;
			break;
		case 'm':
			ok = a->n_metrics < MAX_METRICS &&
			     parse_metric(optarg, &a->metrics[a->n_metrics++]);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return EXIT_USAGE;
		}
		if (!ok) {
			const struct option *o = longopts;
			while (o->val != c) {
				o++;
			}
			fprintf(stderr, "thermlog-simload: --%s %s: not understood\n%s", o->name,
				optarg, usage_text);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "thermlog-simload: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	a->root = a->root ? a->root : getenv("THERMLOG_SIM_ROOT");
	if (!a->root || !*a->root) {
		fprintf(stderr, "thermlog-simload: no simulated board: give --root DIR or set "
				"THERMLOG_SIM_ROOT (thermlogd --demo --board logs its tree)\n");
		return EXIT_USAGE;
	}
	return -1;
}

int main(int argc, char **argv) {
	struct args a = {.for_ms = -1};
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0) {
		goto out;
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	a.decl.start_ms = now_ms();
	int fd = simload_declare(a.root, &a.decl);
	if (fd < 0) {
		fprintf(stderr,
			"thermlog-simload: %s/%s: %s (is it the tree of thermlogd --demo --board?)\n",
			a.root, SIMLOAD_DIR, strerror(-fd));
		rc = 1;
		goto out;
	}
	int64_t ms = a.for_ms < 0 ? -1 : llround((double)a.for_ms * (1 + a.jitter * variate('d')));
	int sig = wait_for(ms, &set);
	int end = simload_end(fd, now_ms());
	if (end < 0) {
		fprintf(stderr, "thermlog-simload: could not end the declaration: %s\n",
			strerror(-end));
	}
	if (sig) {
		rc = 128 + sig;
		goto out;
	}
	rc = write_metrics(a.metrics, a.n_metrics, a.jitter) < 0 ? 1 : 0;
	if (rc == 0 && a.fail > 0 && (variate('x') + 1) / 2 < a.fail) {
		fprintf(stderr, "thermlog-simload: a simulated failure (--fail %g)\n", a.fail);
		rc = 1;
	}
out:
	for (size_t i = 0; i < a.n_metrics; i++) {
		free(a.metrics[i].name);
		free(a.metrics[i].unit);
	}
	return rc;
}
