/*
 * A small server for the HTTP integration tests: the real http module over a store it fills
 * with a deterministic history, plus one new cycle per second published to the store and
 * the live snapshot (as the daemon's loop does).
 *
 *   http-serve CONFIG DB [--days N] [--listen-fd FD]
 *
 * Prints "http://127.0.0.1:PORT/" once serving; SIGTERM or SIGINT stops it. Exit codes: 0 after
 * a clean stop, 1 on a runtime failure, 2 when http_create() refuses the configuration.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "http.h"
#include "live.h"
#include "log.h"
#include "store.h"

#define N_CHANNELS 4

static struct channel channels[N_CHANNELS] = {
	{.key = "thermal/soc-thermal",
	 .source = "thermal",
	 .label = "SoC",
	 .kind = CHANNEL_KIND_TEMPERATURE,
	 .unit = "celsius",
	 .resolution = 0.001},
	{.key = "thermal/npu-thermal",
	 .source = "thermal",
	 .label = "NPU",
	 .kind = CHANNEL_KIND_TEMPERATURE,
	 .unit = "celsius",
	 .resolution = 0.001},
	{.key = "cpufreq/policy4",
	 .source = "cpufreq",
	 .label = "A76 cluster 0",
	 .kind = CHANNEL_KIND_FREQUENCY,
	 .unit = "hertz",
	 .resolution = 1000},
	{.key = "iio/maxim_thermocouple/temp",
	 .source = "iio",
	 .label = "Thermocouple",
	 .kind = CHANNEL_KIND_TEMPERATURE,
	 .unit = "celsius",
	 .resolution = 0.25},
};

/* Deterministic values: a daily wave plus a per-minute wiggle, quantized to the resolution. */
static void values_at(int64_t ts, struct reading *rd) {
	double day = sin(2 * M_PI * (double)(ts % 86400) / 86400.0);
	double wiggle = (double)((ts / 60) % 7) - 3;
	double v[N_CHANNELS] = {
		45 + 8 * day + 0.1 * wiggle,
		50 + 10 * day + 0.2 * wiggle,
		(ts / 60) % 3 == 0 ? 2256000000.0 : 1800000000.0,
		30 + 5 * day,
	};
	for (int i = 0; i < N_CHANNELS; i++) {
		double r = channels[i].resolution;
		rd[i] = (struct reading){.value = round(v[i] / r) * r};
	}
}

static int write_cycle(struct store *store, struct live *live, int64_t ts,
		       struct live_health *health) {
	struct reading rd[N_CHANNELS];
	values_at(ts, rd);
	struct cycle cycle = {.ts = ts,
			      .clock = CLOCK_STATE_SYNCED,
			      .n = N_CHANNELS,
			      .channels = channels,
			      .readings = rd};
	int rc = store_write_cycle(store, &cycle);
	if (rc < 0 && rc != -EEXIST) {
		return rc;
	}
	if (live) {
		health->cycles_total++;
		live_publish(live, &cycle, health);
	}
	return 0;
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: http-serve CONFIG DB [--days N] [--listen-fd FD]\n");
		return 2;
	}
	log_init(LOG_LEVEL_INFO);
	int days = 2;
	int fd = -1; // a listening socket passed by the test (bound to port 0), else http.listen
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "--days") == 0 && i + 1 < argc) {
			days = atoi(argv[++i]);
		} else if (strcmp(argv[i], "--listen-fd") == 0 && i + 1 < argc) {
			fd = atoi(argv[++i]);
		}
	}

	struct config cfg;
	config_init(&cfg);
	char *errors = NULL;
	if (!config_load(&cfg, argv[1], &errors)) {
		fprintf(stderr, "%s", errors ? errors : "bad configuration\n");
		free(errors);
		config_finish(&cfg);
		return 2;
	}

	struct store *store = NULL;
	if (store_open(&store, argv[2], STORE_MODE_WRITE) < 0) {
		return 1;
	}
	int64_t now = (int64_t)time(NULL);
	int64_t start = now - now % 60 - (int64_t)days * 86400;
	store_begin(store);
	for (int64_t ts = start; ts < now - 1; ts += 60) {
		if (write_cycle(store, NULL, ts, NULL) < 0) {
			fprintf(stderr, "http-serve: could not store the history\n");
			return 1;
		}
	}
	store_commit(store);
	store_maintain(store, now, 400 * 86400LL);

	struct live *live = live_create();
	struct live_health health = {
		.started = now, .interval_ms = 1000, .clock = CLOCK_STATE_SYNCED};
	write_cycle(store, live, now, &health);

	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);

	struct http *http = http_create(&cfg, live, argv[2], fd);
	if (!http) {
		live_destroy(live);
		store_close(store);
		config_finish(&cfg);
		return 2;
	}
	printf("http://127.0.0.1:%u/\n", http_port(http));
	fflush(stdout);

	struct timespec second = {.tv_sec = 1};
	while (sigtimedwait(&stop, NULL, &second) < 0) {
		int64_t ts = (int64_t)time(NULL);
		if (write_cycle(store, live, ts, &health) < 0) {
			fprintf(stderr, "http-serve: could not store a cycle\n");
		}
	}
	http_destroy(http);
	live_destroy(live);
	store_close(store);
	config_finish(&cfg);
	return 0;
}
