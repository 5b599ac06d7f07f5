/*
 * Configuration: built-in defaults overridden by a YAML file. The YAML toolkit (yamltree.c)
 * turns the text into a small tree (rejecting aliases, anchors, tags and extra documents on the
 * way); here one parse_<section>() per mapping applies thermlog's schema, collecting every
 * error as FILE:LINE:COL: problem.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "channel.h"
#include "config-internal.h"
#include "xalloc.h"
#include "yamltree.h"

#define CONFIG_MAX_BYTES (1024 * 1024) // a config is a few KiB; the cap bounds memory and time

#define DAY_S  86400LL
#define YEAR_S (365LL * DAY_S)

/* The schema's parser: the YAML toolkit's error list and the configuration being filled. */

/* --- glob patterns --- */

static const char *const source_names[SOURCE_COUNT] = {
	[SOURCE_THERMAL] = "thermal", [SOURCE_CPUFREQ] = "cpufreq", [SOURCE_DEVFREQ] = "devfreq",
	[SOURCE_IIO] = "iio",         [SOURCE_HWMON] = "hwmon",     [SOURCE_MEMINFO] = "meminfo",
	[SOURCE_LOAD] = "load",
};

/* A source's keys start with its name; the thermal source's cooling devices' with this. */
static const char *const source_extra_prefix[SOURCE_COUNT] = {[SOURCE_THERMAL] = "cooling"};

/* NULL if @pat is a usable fnmatch() pattern for channel keys, else the problem. */
static const char *glob_problem(const char *pat) {
	if (!*pat) {
		return "an empty pattern matches nothing";
	}
	for (size_t i = 0; pat[i]; i++) {
		unsigned char c = (unsigned char)pat[i];
		if (c == ' ') {
			return "channel keys never contain spaces";
		}
		if (c < 0x21 || c > 0x7e) {
			return "channel keys are printable ASCII";
		}
		if (c == '\\') {
			if (!pat[i + 1]) {
				return "a trailing '\\' escapes nothing";
			}
			i++;
		} else if (c == '[') {
			size_t j = i + 1;
			if (pat[j] == '!' || pat[j] == '^') {
				j++;
			}
			if (pat[j] == ']') {
				j++; // a leading ']' is a member, not the end
			}
			while (pat[j] && pat[j] != ']') {
				j++;
			}
			if (!pat[j]) {
				return "unbalanced '[': a bracket expression needs its ']'";
			}
			i = j;
		}
	}
	return NULL;
}

/* Whether the literal start of @pat, up to its first '/', names a prefix of @source's keys. */
static bool glob_fits_source(const char *pat, enum source_id source) {
	size_t lit = strcspn(pat, "*?[\\");
	const char *slash = memchr(pat, '/', lit);
	if (!slash) {
		return true; // "*soc*" may match anything
	}
	const char *const pre[] = {source_names[source], source_extra_prefix[source]};
	for (size_t i = 0; i < 2 && pre[i]; i++) {
		if (strlen(pre[i]) == (size_t)(slash - pat) &&
		    strncmp(pat, pre[i], strlen(pre[i])) == 0) {
			return true;
		}
	}
	return false;
}

static void free_strv(char **v) {
	for (char **q = v; q && *q; q++) {
		free(*q);
	}
	free(v);
}

static char **empty_strv(void) {
	return xcalloc(1, sizeof(char *));
}

/*
 * A sequence of globs on channel keys at @section into *slot (replaced only when it parses);
 * with @source, each must be able to match that source's keys.
 */
static void parse_glob_seq(struct parser *p, const struct yamltree_node *seq, const char *section,
			   const enum source_id *source, char ***slot) {
	if (!yamltree_check_sequence(&p->yt, seq, section)) {
		return;
	}
	char **v = xcalloc(seq->n + 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < seq->n; i++) {
		const struct yamltree_node *item = seq->items[i];
		if (!yamltree_want_scalar(&p->yt, item, section, "a glob pattern")) {
			continue;
		}
		const char *problem = glob_problem(item->text);
		if (problem) {
			yamltree_error_node(&p->yt, item, "%s: bad glob '%s': %s", section,
					    item->text, problem);
			continue;
		}
		if (source && !glob_fits_source(item->text, *source)) {
			const char *extra = source_extra_prefix[*source];
			yamltree_error_node(
				&p->yt, item,
				"%s: '%s' can never match: %s channel keys start with %s/%s%s%s",
				section, item->text, source_names[*source], source_names[*source],
				extra ? " or " : "", extra ? extra : "", extra ? "/" : "");
			continue;
		}
		v[n++] = xstrdup(item->text);
	}
	free_strv(*slot);
	*slot = v;
}

static void parse_globs(struct parser *p, const struct yamltree_node *seq, const char *key,
			enum source_id source, char ***slot) {
	char section[64];
	snprintf(section, sizeof(section), "sources.%s.%s", source_names[source], key);
	if (yamltree_is_null(seq)) {
		free_strv(*slot);
		*slot = empty_strv();
		return;
	}
	parse_glob_seq(p, seq, section, &source, slot);
}

/* --- sections --- */

static void parse_source(struct parser *p, const struct yamltree_node *map, enum source_id id) {
	static const char *const keys[] = {"enabled", "include", "exclude", NULL};
	char section[32];
	snprintf(section, sizeof(section), "sources.%s", source_names[id]);
	struct source_config *src = &p->cfg->sources[id];
	if (!yamltree_check_mapping(&p->yt, map, section, keys)) {
		return;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *k = map->items[i], *v = map->items[i + 1];
		if (yamltree_key_is(k, "enabled")) {
			yamltree_get_bool(&p->yt, v, "enabled", &src->enabled);
		} else if (yamltree_key_is(k, "include")) {
			parse_globs(p, v, "include", id, &src->include);
		} else if (yamltree_key_is(k, "exclude")) {
			parse_globs(p, v, "exclude", id, &src->exclude);
		}
	}
}

static void parse_sources(struct parser *p, const struct yamltree_node *map) {
	const char *keys[SOURCE_COUNT + 1];
	for (int id = 0; id < SOURCE_COUNT; id++) {
		keys[id] = source_names[id];
	}
	keys[SOURCE_COUNT] = NULL;
	if (!yamltree_check_mapping(&p->yt, map, "sources", keys)) {
		return;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		for (int id = 0; id < SOURCE_COUNT; id++) {
			if (yamltree_key_is(map->items[i], source_names[id])) {
				parse_source(p, map->items[i + 1], (enum source_id)id);
			}
		}
	}
}

/* "ADDR:PORT" with a dotted IPv4 address or a bracketed IPv6 one; NULL if fine, else why not. */
static const char *listen_problem(const char *s) {
	char addr[INET6_ADDRSTRLEN + 1];
	const char *port;
	unsigned char bin[sizeof(struct in6_addr)];
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':') {
			return "an IPv6 address goes in brackets followed by :PORT, e.g. [::1]:9470";
		}
		size_t n = (size_t)(close - s - 1);
		if (n == 0 || n >= sizeof(addr)) {
			return "not an IPv6 address";
		}
		memcpy(addr, s + 1, n);
		addr[n] = '\0';
		if (inet_pton(AF_INET6, addr, bin) != 1) {
			return "not an IPv6 address";
		}
		port = close + 2;
	} else {
		const char *colon = strrchr(s, ':');
		if (!colon) {
			return "expected ADDRESS:PORT, e.g. 127.0.0.1:9470";
		}
		size_t n = (size_t)(colon - s);
		if (memchr(s, ':', n)) {
			return "an IPv6 address goes in brackets, e.g. [::1]:9470";
		}
		if (n == 0 || n >= sizeof(addr)) {
			return "not an IPv4 address (host names are not resolved)";
		}
		memcpy(addr, s, n);
		addr[n] = '\0';
		if (inet_pton(AF_INET, addr, bin) != 1) {
			return "not an IPv4 address (host names are not resolved)";
		}
		port = colon + 1;
	}
	size_t digits = strspn(port, "0123456789");
	// Port 0 asks for any free port, as --listen allows (the log names the one bound).
	if (digits == 0 || port[digits] != '\0' || digits > 5 || atoi(port) > 65535) {
		return "the port must be a number from 0 to 65535";
	}
	return NULL;
}

/* A bearer token travels in an HTTP header: visible ASCII only. */
static bool token_valid(const char *s) {
	for (const char *q = s; *q; q++) {
		if (*q < 0x21 || *q > 0x7e) {
			return false;
		}
	}
	return *s != '\0';
}

/*
 * An optional string of http (the token or a file's path) into *@slot and where it stands into
 * *@at; returns the node that set it, NULL when it is unset.
 */
static const struct yamltree_node *http_string(struct parser *p, const struct yamltree_node *v,
					       const char *key, char **slot,
					       struct config_mark *at) {
	*at = (struct config_mark){(unsigned)v->line, (unsigned)v->col};
	yamltree_get_optional_string(&p->yt, v, key, slot);
	return *slot ? v : NULL;
}

static void parse_http(struct parser *p, const struct yamltree_node *map) {
	static const char *const keys[] = {"listen",           "token",      "token_file",
					   "metrics_public",   "tls_cert",   "tls_key",
					   "tls_priorities",   "max_points", "max_window",
					   "connection_limit", NULL};
	struct http_config *http = &p->cfg->http;
	if (!yamltree_check_mapping(&p->yt, map, "http", keys)) {
		return;
	}
	const struct yamltree_node *token = NULL, *token_file = NULL, *cert = NULL, *key = NULL;
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *k = map->items[i], *v = map->items[i + 1];
		struct config_mark at = {(unsigned)v->line, (unsigned)v->col};
		if (yamltree_key_is(k, "listen")) {
			http->listen_at = at;
			if (yamltree_want_scalar(&p->yt, v, "listen", "ADDRESS:PORT")) {
				const char *problem = listen_problem(v->text);
				if (problem) {
					yamltree_error_node(&p->yt, v, "listen: '%s': %s", v->text,
							    problem);
				} else {
					yamltree_get_string(&p->yt, v, "listen", &http->listen);
				}
			}
		} else if (yamltree_key_is(k, "token")) {
			http->token_at = at;
			if (!yamltree_is_null(v) && v->kind == YAMLTREE_SCALAR &&
			    !token_valid(v->text)) {
				yamltree_error_node(&p->yt, v,
						    "token: must be visible ASCII without spaces");
			} else {
				token = http_string(p, v, "token", &http->token, &http->token_at);
			}
		} else if (yamltree_key_is(k, "token_file")) {
			token_file = http_string(p, v, "token_file", &http->token_file,
						 &http->token_file_at);
		} else if (yamltree_key_is(k, "metrics_public")) {
			yamltree_get_bool(&p->yt, v, "metrics_public", &http->metrics_public);
		} else if (yamltree_key_is(k, "tls_cert")) {
			cert = http_string(p, v, "tls_cert", &http->tls_cert, &http->tls_cert_at);
		} else if (yamltree_key_is(k, "tls_key")) {
			key = http_string(p, v, "tls_key", &http->tls_key, &http->tls_key_at);
		} else if (yamltree_key_is(k, "tls_priorities")) {
			yamltree_get_optional_string(&p->yt, v, "tls_priorities",
						     &http->tls_priorities);
		} else if (yamltree_key_is(k, "max_points")) {
			yamltree_get_uint(&p->yt, v, "max_points", 2, 1000000, &http->max_points);
		} else if (yamltree_key_is(k, "max_window")) {
			yamltree_get_duration_s(&p->yt, v, "max_window", 60, 100 * YEAR_S,
						&http->max_window_s);
		} else if (yamltree_key_is(k, "connection_limit")) {
			yamltree_get_uint(&p->yt, v, "connection_limit", 1, 65536,
					  &http->connection_limit);
		}
	}
	if (token && token_file) {
		yamltree_error_node(&p->yt, token_file,
				    "token_file: give either token or token_file, not both");
	}
	if (cert && !key) {
		yamltree_error_node(&p->yt, cert, "tls_cert: needs tls_key as well");
	} else if (key && !cert) {
		yamltree_error_node(&p->yt, key, "tls_key: needs tls_cert as well");
	}
}

static void parse_retention(struct parser *p, const struct yamltree_node *map) {
	static const char *const keys[] = {"raw", NULL};
	if (!yamltree_check_mapping(&p->yt, map, "retention", keys)) {
		return;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		if (yamltree_key_is(map->items[i], "raw")) {
			yamltree_get_duration_s(&p->yt, map->items[i + 1], "raw", 3600,
						100 * YEAR_S, &p->cfg->retention_raw_s);
		}
	}
}

/* runs.peak_channels: a non-empty sequence of globs on channel keys of any source. */
static void parse_peak_channels(struct parser *p, const struct yamltree_node *seq, char ***slot) {
	const char *section = "runs.peak_channels";
	if (seq->kind == YAMLTREE_SEQUENCE && seq->n == 0) {
		yamltree_error_node(&p->yt, seq,
				    "%s: expected at least one glob, such as 'thermal/*'", section);
		return;
	}
	parse_glob_seq(p, seq, section, NULL, slot);
}

static void parse_runs(struct parser *p, const struct yamltree_node *map) {
	static const char *const keys[] = {
		"socket",     "interval", "power_channel", "metrics_labels", "peak_channels",
		"max_active", NULL};
	if (!yamltree_check_mapping(&p->yt, map, "runs", keys)) {
		return;
	}
	struct runs_config *rc = &p->cfg->runs;
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *k = map->items[i], *v = map->items[i + 1];
		if (yamltree_key_is(k, "socket")) {
			if (!yamltree_want_scalar(&p->yt, v, "socket", "an absolute path")) {
				continue;
			}
			if (v->text[0] != '/' || v->len > CONFIG_SOCKET_PATH_MAX) {
				yamltree_error_node(
					&p->yt, v,
					"socket: expected an absolute path of at most %d "
					"bytes, got '%s'",
					CONFIG_SOCKET_PATH_MAX, v->text);
				continue;
			}
			free(rc->socket);
			rc->socket = xstrdup(v->text);
		} else if (yamltree_key_is(k, "interval")) {
			yamltree_get_duration(&p->yt, v, "interval", 1000, 3600 * 1000,
					      &rc->interval_ms);
		} else if (yamltree_key_is(k, "peak_channels")) {
			parse_peak_channels(p, v, &rc->peak_channels);
		} else if (yamltree_key_is(k, "metrics_labels")) {
			yamltree_get_uint(&p->yt, v, "metrics_labels", 1, CONFIG_METRICS_LABELS_MAX,
					  &rc->metrics_labels);
		} else if (yamltree_key_is(k, "max_active")) {
			yamltree_get_uint(&p->yt, v, "max_active", 1, CONFIG_RUNS_MAX_ACTIVE_MAX,
					  &rc->max_active);
		} else if (yamltree_key_is(k, "power_channel")) {
			if (!yamltree_want_scalar(&p->yt, v, "power_channel",
						  "a channel key or 'auto'")) {
				continue;
			}
			if (strcmp(v->text, "auto") == 0) {
				free(rc->power_channel);
				rc->power_channel = NULL;
			} else if (!channel_key_valid(v->text)) {
				yamltree_error_node(
					&p->yt, v,
					"power_channel: expected a channel key such as "
					"hwmon/ina226-i2c-4-40/power1, or 'auto', got '%s'",
					v->text);
			} else {
				free(rc->power_channel);
				rc->power_channel = xstrdup(v->text);
			}
		}
	}
}

/* A linear correction's gain into *@gain: a number in @range but 0, which would erase readings. */
static void get_gain(struct parser *p, const struct yamltree_node *v, struct yamltree_range range,
		     double *gain) {
	double g = *gain;
	yamltree_get_double(&p->yt, v, "gain", range, &g);
	if (g == 0) {
		yamltree_error_node(&p->yt, v, "gain: 0 would turn every reading into the offset");
	} else {
		*gain = g;
	}
}

static void parse_channel(struct parser *p, const struct yamltree_node *k,
			  const struct yamltree_node *map, struct channel_override *o) {
	static const char *const keys[] = {"label", "enabled", "offset", "gain", NULL};
	const struct yamltree_range any = {-1e9, 1e9, false};
	if (!yamltree_check_mapping(&p->yt, map, k->text, keys)) {
		return;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *key = map->items[i], *v = map->items[i + 1];
		if (yamltree_key_is(key, "label")) {
			yamltree_get_optional_text(&p->yt, v, "label", &o->label);
		} else if (yamltree_key_is(key, "enabled")) {
			yamltree_get_bool(&p->yt, v, "enabled", &o->enabled);
		} else if (yamltree_key_is(key, "offset")) {
			yamltree_get_double(&p->yt, v, "offset", any, &o->offset);
		} else if (yamltree_key_is(key, "gain")) {
			get_gain(p, v, any, &o->gain);
		}
	}
}

static int compare_overrides(const void *a, const void *b) {
	return strcmp(((const struct channel_override *)a)->key,
		      ((const struct channel_override *)b)->key);
}

static void parse_channels(struct parser *p, const struct yamltree_node *map) {
	struct config *cfg = p->cfg;
	if (!yamltree_check_mapping(&p->yt, map, "channels", NULL)) {
		return;
	}
	cfg->channels = xrealloc(cfg->channels,
				 (cfg->n_channels + map->n / 2 + 1) * sizeof(*cfg->channels));
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *k = map->items[i], *v = map->items[i + 1];
		if (k->kind != YAMLTREE_SCALAR) {
			continue; // reported by yamltree_check_mapping()
		}
		if (!channel_key_valid(k->text)) {
			yamltree_error_node(
				&p->yt, k,
				"channels: '%s' is not a channel key (1 to %d printable ASCII characters, no spaces, e.g. thermal/soc-thermal)",
				k->text, CHANNEL_KEY_MAX);
			continue;
		}
		struct channel_override *o = &cfg->channels[cfg->n_channels++];
		*o = (struct channel_override){.key = xstrdup(k->text), .enabled = true, .gain = 1};
		parse_channel(p, k, v, o);
	}
	// Sorted for config_channel_override()'s binary search; duplicates were errors above.
	qsort(cfg->channels, cfg->n_channels, sizeof(*cfg->channels), compare_overrides);
}

/* IIO names and channel stems become part of sysfs file names: no '/' and no spaces. */
static bool iio_name_valid(const char *s) {
	for (const char *q = s; *q; q++) {
		if (*q < 0x21 || *q > 0x7e || *q == '/') {
			return false;
		}
	}
	return *s != '\0';
}

/* "voltage2", "temp", "current0_i": lower-case type, optional index and modifier. */
static bool iio_channel_valid(const char *s) {
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz");
	return n > 0 && strspn(s + n, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(s + n) &&
	       s[strlen(s) - 1] != '_';
}

static void parse_linear(struct parser *p, const struct yamltree_node *map,
			 struct iio_channel_config *c) {
	static const char *const keys[] = {"gain", "offset", NULL};
	const struct yamltree_range any = {-1e12, 1e12, false};
	if (!yamltree_check_mapping(&p->yt, map, "linear", keys)) {
		return;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *k = map->items[i], *v = map->items[i + 1];
		if (yamltree_key_is(k, "gain")) {
			get_gain(p, v, any, &c->gain);
		} else if (yamltree_key_is(k, "offset")) {
			yamltree_get_double(&p->yt, v, "offset", any, &c->offset);
		}
	}
}

/*
 * The IIO name under @key into *@out: a scalar (@what, as the error for another node says) that
 * @valid accepts; else the error says it is not @hint.
 */
static void get_iio_name(struct parser *p, const struct yamltree_node *v, const char *key,
			 const char *what, const char *hint, bool (*valid)(const char *s),
			 char **out) {
	if (yamltree_want_scalar(&p->yt, v, key, what) && !valid(v->text)) {
		yamltree_error_node(&p->yt, v, "%s: '%s' is not %s", key, v->text, hint);
	} else {
		yamltree_get_string(&p->yt, v, key, out);
	}
}

static void parse_iio_channel(struct parser *p, const struct yamltree_node *map,
			      struct iio_channel_config *c) {
	static const char *const keys[] = {"device", "channel", "label", "unit", "linear", NULL};
	if (!yamltree_check_entry(&p->yt, map, "iio_channels", "device and channel",
				  "iio_channels entry", keys)) {
		return;
	}
	bool has_device = false, has_channel = false;
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *k = map->items[i], *v = map->items[i + 1];
		if (yamltree_key_is(k, "device")) {
			has_device = true;
			get_iio_name(p, v, "device", "an IIO device name",
				     "an IIO device name (its 'name' file, or iio:deviceN)",
				     iio_name_valid, &c->device);
		} else if (yamltree_key_is(k, "channel")) {
			has_channel = true;
			get_iio_name(p, v, "channel", "an IIO channel like voltage2",
				     "an IIO channel (e.g. voltage2 for in_voltage2_raw)",
				     iio_channel_valid, &c->channel);
		} else if (yamltree_key_is(k, "label")) {
			yamltree_get_optional_text(&p->yt, v, "label", &c->label);
		} else if (yamltree_key_is(k, "unit")) {
			if (yamltree_want_scalar(&p->yt, v, "unit", "a unit name")) {
				const char *unit = channel_unit_lookup(v->text);
				if (!unit) {
					yamltree_error_node(
						&p->yt, v,
						"unit: unknown unit '%s' (e.g. celsius, volts, amperes, watts, hertz)",
						v->text);
				} else {
					c->unit = unit;
				}
			}
		} else if (yamltree_key_is(k, "linear")) {
			parse_linear(p, v, c);
		}
	}
	if (!has_device) {
		yamltree_error_node(&p->yt, map, "iio_channels entry: 'device' is required");
	}
	if (!has_channel) {
		yamltree_error_node(&p->yt, map, "iio_channels entry: 'channel' is required");
	}
}

static void parse_iio_channels(struct parser *p, const struct yamltree_node *seq) {
	struct config *cfg = p->cfg;
	if (!yamltree_check_sequence(&p->yt, seq, "iio_channels")) {
		return;
	}
	cfg->iio_channels = xrealloc(cfg->iio_channels, (cfg->n_iio_channels + seq->n + 1) *
								sizeof(*cfg->iio_channels));
	for (size_t i = 0; i < seq->n; i++) {
		struct iio_channel_config *c = &cfg->iio_channels[cfg->n_iio_channels++];
		*c = (struct iio_channel_config){.unit = "volts", .gain = 1};
		parse_iio_channel(p, seq->items[i], c);
		for (size_t j = 0; c->device && c->channel && j + 1 < cfg->n_iio_channels; j++) {
			const struct iio_channel_config *o = &cfg->iio_channels[j];
			if (o->device && o->channel && strcmp(o->device, c->device) == 0 &&
			    strcmp(o->channel, c->channel) == 0) {
				yamltree_error_node(&p->yt, seq->items[i],
						    "iio_channels: %s %s is configured twice",
						    c->device, c->channel);
				break;
			}
		}
	}
}

/* The top level's sections, each read by its own parser. */
static const struct {
	const char *key;
	void (*parse)(struct parser *p, const struct yamltree_node *v);
} root_sections[] = {
	{"retention", parse_retention},
	{"http", parse_http},
	{"sources", parse_sources},
	{"channels", parse_channels},
	{"iio_channels", parse_iio_channels},
	{"capacitors", config_parse_capacitors},
	{"runs", parse_runs},
	{"board", config_parse_board},
	{"roles", config_parse_roles},
};

/* One key of the top level: a duration, a path, or a section. */
static void parse_root_key(struct parser *p, const struct yamltree_node *k,
			   const struct yamltree_node *v) {
	struct config *cfg = p->cfg;
	const struct {
		const char *key;
		char **slot;
	} paths[] = {
		{"database", &cfg->database},
		{"sysfs_root", &cfg->sysfs_root},
		{"procfs_root", &cfg->procfs_root},
		{"debugfs_root", &cfg->debugfs_root},
	};
	if (yamltree_key_is(k, "interval")) {
		yamltree_get_duration(&p->yt, v, "interval", 1000, DAY_S * 1000, &cfg->interval_ms);
		return;
	}
	if (yamltree_key_is(k, "rescan")) {
		yamltree_get_duration_s(&p->yt, v, "rescan", 1, DAY_S, &cfg->rescan_s);
		return;
	}
	for (size_t j = 0; j < sizeof(paths) / sizeof(paths[0]); j++) {
		if (yamltree_key_is(k, paths[j].key)) {
			yamltree_get_string(&p->yt, v, paths[j].key, paths[j].slot);
			return;
		}
	}
	for (size_t j = 0; j < sizeof(root_sections) / sizeof(root_sections[0]); j++) {
		if (yamltree_key_is(k, root_sections[j].key)) {
			root_sections[j].parse(p, v);
			return;
		}
	}
}

static void parse_root(struct parser *p, const struct yamltree_node *map) {
	static const char *const keys[] = {
		"interval", "database", "sysfs_root", "procfs_root", "debugfs_root", "retention",
		"rescan",   "http",     "sources",    "channels",    "iio_channels", "capacitors",
		"runs",     "board",    "roles",      NULL};
	if (map->kind != YAMLTREE_MAPPING && !yamltree_is_null(map) && map->kind != YAMLTREE_BAD) {
		yamltree_error_node(&p->yt, map,
				    "the configuration must be a mapping of keys to values, got %s",
				    yamltree_describe(map));
		return;
	}
	if (!yamltree_check_mapping(&p->yt, map, "the top level", keys)) {
		return;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		parse_root_key(p, map->items[i], map->items[i + 1]);
	}
}

/* --- public --- */

void config_init(struct config *cfg) {
	*cfg = (struct config){
		.interval_ms = 60000,
		.database = xstrdup(CONFIG_DEFAULT_DATABASE),
		.sysfs_root = xstrdup("/sys"),
		.procfs_root = xstrdup("/proc"),
		.debugfs_root = xstrdup("/sys/kernel/debug"),
		.retention_raw_s = 0, // every value kept: the chunks take less room than rollups
		.rescan_s = 300,
		.http =
			{
				.listen = xstrdup(CONFIG_DEFAULT_LISTEN),
				.max_points = 5000,
				.max_window_s = 400 * DAY_S,
				.connection_limit = 32,
			},
		.runs = {.socket = xstrdup(CONFIG_DEFAULT_RUNS_SOCKET),
			 .interval_ms = 5000,
			 .metrics_labels = CONFIG_METRICS_LABELS_DEFAULT,
			 .max_active = CONFIG_RUNS_MAX_ACTIVE_DEFAULT},
	};
	cfg->runs.peak_channels = xcalloc(2, sizeof(char *));
	cfg->runs.peak_channels[0] = xstrdup("thermal/*");
	for (int i = 0; i < SOURCE_COUNT; i++) {
		cfg->sources[i] = (struct source_config){
			.enabled = true,
			.include = empty_strv(),
			.exclude = empty_strv(),
		};
	}
}

void config_finish(struct config *cfg) {
	if (!cfg) {
		return;
	}
	free(cfg->path);
	free(cfg->database);
	free(cfg->sysfs_root);
	free(cfg->procfs_root);
	free(cfg->debugfs_root);
	free(cfg->http.listen);
	free(cfg->http.token);
	free(cfg->http.token_file);
	free(cfg->http.tls_cert);
	free(cfg->http.tls_key);
	free(cfg->http.tls_priorities);
	free(cfg->runs.socket);
	free(cfg->runs.power_channel);
	free_strv(cfg->runs.peak_channels);
	for (int i = 0; i < SOURCE_COUNT; i++) {
		free_strv(cfg->sources[i].include);
		free_strv(cfg->sources[i].exclude);
	}
	for (size_t i = 0; i < cfg->n_channels; i++) {
		free(cfg->channels[i].key);
		free(cfg->channels[i].label);
	}
	free(cfg->channels);
	for (size_t i = 0; i < cfg->n_iio_channels; i++) {
		free(cfg->iio_channels[i].device);
		free(cfg->iio_channels[i].channel);
		free(cfg->iio_channels[i].label);
	}
	free(cfg->iio_channels);
	config_capacitors_free(cfg);
	config_board_free(cfg);
	*cfg = (struct config){0};
}

bool config_load_string(struct config *cfg, const char *name, const char *text, size_t len,
			char **errors) {
	struct parser p = {.yt = {.name = name}, .cfg = cfg};
	struct yamltree_node *root = NULL;
	if (len > CONFIG_MAX_BYTES) {
		yamltree_error_at(&p.yt, 1, 1, "file too large: %zu bytes, the limit is %d KiB",
				  len, CONFIG_MAX_BYTES / 1024);
		goto out;
	}
	if (yamltree_build(&p.yt, text, len, &root) && root) {
		parse_root(&p, root);
	}
	yamltree_node_free(root);
out:;
	bool good = p.yt.n_errors == 0 && p.yt.dropped == 0;
	yamltree_flush_errors(&p.yt, errors);
	return good;
}

bool config_load(struct config *cfg, const char *path, char **errors) {
	free(cfg->path);
	cfg->path = xstrdup(path);
	char *text = NULL;
	size_t len = 0;
	int rc = yamltree_read_file(path, CONFIG_MAX_BYTES, &text, &len);
	if (rc < 0) {
		struct buf b;
		buf_init(&b);
		if (errors && *errors) {
			buf_puts(&b, *errors);
			free(*errors);
		}
		buf_printf(&b, "%s:1:1: could not read the configuration: %s\n", path,
			   strerror(-rc));
		if (errors) {
			*errors = buf_steal(&b);
		} else {
			buf_finish(&b);
		}
		return false;
	}
	bool good = config_load_string(cfg, path, text, len, errors);
	free(text);
	return good;
}

/* --- whole-configuration checks --- */

__attribute__((format(printf, 4, 5))) static void
problem_at(struct buf *b, const char *name, struct config_mark at, const char *fmt, ...) {
	if (at.line) {
		buf_printf(b, "%s:%u:%u: ", name, at.line, at.col);
	} else {
		buf_printf(b, "%s: ", name);
	}
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
	buf_putc(b, '\n');
}

/* Reads a small file the configuration names; NULL with the problem added to @b. */
static char *read_named_file(struct buf *b, const char *name, struct config_mark at,
			     const char *key, const char *path) {
	char *text = NULL;
	size_t len = 0;
	int rc = yamltree_read_file(path, CONFIG_MAX_BYTES, &text, &len);
	if (rc < 0) {
		problem_at(b, name, at, "%s: cannot read '%s': %s", key, path, strerror(-rc));
		return NULL;
	}
	const char *why = len == 0                 ? "the file is empty"
			  : len > CONFIG_MAX_BYTES ? "the file is larger than 1 MiB"
			  : strlen(text) != len    ? "the file is binary (contains a NUL byte)"
						   : NULL;
	if (why) {
		problem_at(b, name, at, "%s: '%s': %s", key, path, why);
		free(text);
		return NULL;
	}
	return text;
}

bool config_listen_is_loopback(const char *listen) {
	// Only the address matters here: a flag may ask for port 0 (any free port).
	char addr[INET6_ADDRSTRLEN + 1];
	const char *end = !listen            ? NULL
			  : listen[0] == '[' ? strchr(listen, ']')
					     : strrchr(listen, ':');
	const char *start = listen && listen[0] == '[' ? listen + 1 : listen;
	if (!end || end < start || (size_t)(end - start) >= sizeof(addr)) {
		return false;
	}
	size_t n = (size_t)(end - start);
	memcpy(addr, start, n);
	addr[n] = '\0';
	struct in_addr in4;
	struct in6_addr in6;
	if (strcmp(addr, "localhost") == 0) {
		return true; // the server binds it as 127.0.0.1
	}
	if (inet_pton(AF_INET, addr, &in4) == 1) {
		return (ntohl(in4.s_addr) >> 24) == 127;
	}
	if (inet_pton(AF_INET6, addr, &in6) == 1) {
		return IN6_IS_ADDR_LOOPBACK(&in6) ||
		       (IN6_IS_ADDR_V4MAPPED(&in6) && in6.s6_addr[12] == 127);
	}
	return false;
}

bool config_validate_http(const struct config *cfg, int local, char **errors) {
	const struct http_config *hc = &cfg->http;
	const char *name = cfg->path ? cfg->path : "configuration";
	struct buf b;
	buf_init(&b);
	char *token = NULL;
	struct config_mark token_at = hc->token_at;
	if (hc->token) {
		token = xstrdup(hc->token);
	} else if (hc->token_file) {
		token_at = hc->token_file_at;
		token = read_named_file(&b, name, hc->token_file_at, "http.token_file",
					hc->token_file);
		size_t n = token ? strlen(token) : 0;
		while (n > 0 &&
		       (token[n - 1] == '\n' || token[n - 1] == '\r' || token[n - 1] == ' ')) {
			token[--n] = '\0';
		}
	}
	const char *key = hc->token ? "http.token" : "http.token_file";
	if (token && !token_valid(token)) {
		problem_at(&b, name, token_at, "%s: the token must be visible ASCII without spaces",
			   key);
	} else if (token && strlen(token) < CONFIG_TOKEN_MIN_LEN) {
		problem_at(
			&b, name, token_at,
			"%s: the token has %zu characters, at least %d are required (e.g. `openssl rand -hex 32`)",
			key, strlen(token), CONFIG_TOKEN_MIN_LEN);
	}
	if (token) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
	if (local < 0) {
		local = config_listen_is_loopback(hc->listen);
	}
	if (!local && !hc->token && !hc->token_file) {
		problem_at(
			&b, name, hc->listen_at,
			"http.listen: '%s' is not a loopback address, so a token is required: set http.token or http.token_file (or listen on 127.0.0.1 behind an SSH tunnel or a reverse proxy)",
			hc->listen ? hc->listen : "the socket-activated listener");
	}
	if (hc->tls_cert && !hc->tls_key) {
		problem_at(&b, name, hc->tls_cert_at, "http.tls_cert: needs http.tls_key as well");
	} else if (hc->tls_key && !hc->tls_cert) {
		problem_at(&b, name, hc->tls_key_at, "http.tls_key: needs http.tls_cert as well");
	}
	if (hc->tls_cert) {
		free(read_named_file(&b, name, hc->tls_cert_at, "http.tls_cert", hc->tls_cert));
	}
	if (hc->tls_key) {
		char *pem = read_named_file(&b, name, hc->tls_key_at, "http.tls_key", hc->tls_key);
		if (pem) {
			explicit_bzero(pem, strlen(pem));
		}
		free(pem);
	}
	bool good = b.len == 0;
	if (!good && errors) {
		if (*errors) {
			char *all = xasprintf("%s%s", *errors, b.data);
			free(*errors);
			*errors = all;
		} else {
			*errors = buf_steal(&b);
		}
	}
	buf_finish(&b);
	return good;
}

bool config_validate(const struct config *cfg, char **errors) {
	return config_validate_http(cfg, -1, errors);
}

char *config_warnings(const struct config *cfg, int64_t now) {
	struct buf b;
	buf_init(&b);
	config_capacitor_warnings(cfg, now, &b);
	return b.len > 0 ? buf_steal(&b) : NULL;
}

const char *config_source_name(enum source_id id) {
	return (unsigned)id < SOURCE_COUNT ? source_names[id] : "unknown";
}

const struct channel_override *config_channel_override(const struct config *cfg, const char *key) {
	if (cfg->n_channels == 0) {
		return NULL;
	}
	struct channel_override probe = {.key = (char *)key};
	return bsearch(&probe, cfg->channels, cfg->n_channels, sizeof(*cfg->channels),
		       compare_overrides);
}

static bool matches_any(char *const *globs, const char *key) {
	for (char *const *g = globs; g && *g; g++) {
		if (fnmatch(*g, key, 0) == 0) {
			return true;
		}
	}
	return false;
}

bool config_peak_channel(const struct config *cfg, const char *key) {
	return matches_any(cfg->runs.peak_channels, key);
}

bool config_channel_wanted(const struct config *cfg, enum source_id source, const char *key) {
	if ((unsigned)source >= SOURCE_COUNT) {
		return false;
	}
	const struct source_config *src = &cfg->sources[source];
	if (!src->enabled) {
		return false;
	}
	if (src->include && src->include[0] && !matches_any(src->include, key)) {
		return false;
	}
	if (matches_any(src->exclude, key)) {
		return false;
	}
	const struct channel_override *o = config_channel_override(cfg, key);
	return !o || o->enabled;
}
