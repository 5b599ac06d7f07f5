/*
 * libFuzzer target: arbitrary request targets through api_handle() (target parsing,
 * percent-decoding, parameter validation, time parsing, the store-backed endpoints over a
 * small in-memory history). Every answer must be a known status; errors must be JSON objects.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "log.h"
#include "src/http/api-internal.h" // the target parser and token compare, private to http/
#include "store.h"
#include "timefmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW 1787000000LL

static struct config cfg;
static struct live *live;
static struct store *store;

static struct channel channels[] = {
	{.key = "thermal/soc-thermal",
	 .source = "thermal",
	 .label = "SoC",
	 .kind = CHANNEL_KIND_TEMPERATURE,
	 .unit = "celsius",
	 .resolution = 0.001},
	{.key = "cpufreq/policy4",
	 .source = "cpufreq",
	 .label = "A76",
	 .kind = CHANNEL_KIND_FREQUENCY,
	 .unit = "hertz",
	 .resolution = 1000},
};

static void setup(void) {
	log_init(LOG_LEVEL_ERROR);
	config_init(&cfg);
	live = live_create();
	if (store_open(&store, ":memory:", STORE_MODE_WRITE) < 0) {
		abort();
	}
	// Three hours of minutes, so windows, rollups and peaks have something to chew on.
	for (int64_t ts = NOW - 3 * 3600; ts < NOW; ts += 60) {
		struct reading rd[] = {{.value = 40 + (double)(ts % 997) / 100},
				       {.value = 1800000000}};
		struct cycle c = {.ts = ts,
				  .clock = CLOCK_STATE_SYNCED,
				  .n = 2,
				  .channels = channels,
				  .readings = rd};
		store_write_cycle(store, &c);
		live_publish(live, &c, &(struct live_health){.cycles_total = 1});
	}
	store_maintain(store, NOW, 400 * 86400LL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	if (!live) {
		setup();
	}
	// The first byte picks a route prefix so the fuzzer reaches every endpoint's validation.
	static const char *const prefixes[] = {"",
					       "/api/v1/stats?",
					       "/api/v1/samples?",
					       "/api/v1/peak?",
					       "/api/v1/export.csv?",
					       "/api/v1/lifetime?",
					       "/metrics?",
					       "/?"};
	size_t n_prefixes = sizeof(prefixes) / sizeof(prefixes[0]);
	const char *prefix = size ? prefixes[data[0] % n_prefixes] : "";
	size_t plen = strlen(prefix);
	char *target = malloc(plen + size + 1);
	memcpy(target, prefix, plen);
	if (size > 1) {
		memcpy(target + plen, data + 1, size - 1);
	}
	target[plen + (size ? size - 1 : 0)] = '\0';

	struct api_context ctx = {.cfg = &cfg, .live = live, .store = store};
	struct api_request req = {.method = "GET", .target = target, .now = NOW};
	struct api_response resp;
	api_handle(&ctx, &req, &resp);
	static const unsigned known[] = {200, 303, 304, 400, 401, 403,
					 404, 405, 413, 414, 500, 503};
	int good = 0;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		good |= resp.status == known[i];
	}
	if (!good || (resp.status >= 400 && (!resp.body.data || resp.body.data[0] != '{'))) {
		abort();
	}
	if (resp.export) {
		char buf[4096];
		while (api_export_read(resp.export, buf, sizeof(buf)) > 0) {
		}
	}
	api_response_finish(&resp);

	// Each decoded value also goes through the time parser on its own.
	struct api_target t;
	char *err = NULL;
	if (api_parse_target(target, &t, &err)) {
		for (size_t i = 0; i < t.n_params; i++) {
			int64_t ts;
			if (t.params[i].value) {
				timefmt_parse_time(t.params[i].value, NOW, &ts);
			}
		}
		api_target_finish(&t);
	}
	free(err);
	free(target);
	return 0;
}
