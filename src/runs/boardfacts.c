/*
 * A database's board facts (boardfacts.h): the configuration's board: and roles: written to the
 * state as JSON and read back, and the board the daemon recorded (boardinfo's object) read for
 * what the report and the verdict show of it.
 */
#include "boardfacts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "jsonread.h"
#include "log.h"
#include "xalloc.h"

static bool declares(const struct config *cfg) {
	return cfg && (cfg->board.declared || cfg->n_roles > 0);
}

int boardfacts_keep_declared(struct store *store, const struct config *cfg) {
	if (!declares(cfg)) {
		return 0;
	}
	const struct board_config *b = &cfg->board;
	struct buf out = {0};
	struct json j;
	json_init(&j, &out, false);
	json_object_begin(&j);
	json_field_string(&j, "name", b->name);
	json_field_string(&j, "cooling", b->cooling);
	json_field_string(&j, "notes", b->notes);
	json_key(&j, "sdk");
	json_object_begin(&j);
	for (size_t i = 0; i < b->n_sdk; i++) {
		json_field_string(&j, b->sdk[i].name, b->sdk[i].version);
	}
	json_object_end(&j);
	json_key(&j, "roles");
	json_object_begin(&j);
	for (size_t i = 0; i < cfg->n_roles; i++) {
		json_field_string(&j, cfg->roles[i].key, role_key(cfg->roles[i].role));
	}
	json_object_end(&j);
	json_object_end(&j);
	int rc = store_state_set(store, BOARDFACTS_DECLARED_KEY, out.data);
	buf_finish(&out);
	return rc;
}

int boardfacts_keep_recorded(struct store *store, const char *json) {
	return store_state_set(store, BOARDFACTS_RECORDED_KEY, json);
}

static char *text_of(const struct jsonread_node *obj, const char *key) {
	const char *s = jsonread_string(jsonread_get(obj, key));
	return s && *s ? xstrdup(s) : NULL;
}

static double number_of(const struct jsonread_node *obj, const char *key) {
	const struct jsonread_node *v = jsonread_get(obj, key);
	return v && v->kind == JSONREAD_NUMBER ? v->number : NAN;
}

/* The declared part from the configuration itself. */
static void declared_from_config(const struct config *cfg, struct boardfacts *f) {
	const struct board_config *b = &cfg->board;
	f->declared = true;
	f->board.name = b->name ? xstrdup(b->name) : NULL;
	f->board.cooling = b->cooling ? xstrdup(b->cooling) : NULL;
	f->board.notes = b->notes ? xstrdup(b->notes) : NULL;
	for (size_t i = 0; i < b->n_sdk && i < CONFIG_BOARD_SDK_MAX; i++) {
		f->board.sdk[i].name = xstrdup(b->sdk[i].name);
		f->board.sdk[i].version = xstrdup(b->sdk[i].version);
		f->board.n_sdk++;
	}
	f->roles = xcalloc(cfg->n_roles + 1, sizeof(*f->roles));
	for (size_t i = 0; i < cfg->n_roles; i++) {
		f->roles[f->n_roles++] =
			(struct role_override){xstrdup(cfg->roles[i].key), cfg->roles[i].role};
	}
}

/* Parses the state @key of @store; NULL when absent or not a JSON object (said). */
static struct jsonread_node *state_object(struct store *store, const char *key, int *rc) {
	char *text = NULL;
	*rc = store_state_get(store, key, &text);
	if (*rc == -ENOENT) {
		*rc = 0;
		return NULL;
	}
	struct jsonread_node *tree = NULL;
	if (*rc == 0) {
		struct jsonread_error err;
		size_t len = strlen(text);
		tree = jsonread_parse(text, len, len, &err);
		if (!tree || tree->kind != JSONREAD_OBJECT) {
			log_warn("the database's state %s is not a JSON object: left out", key);
			jsonread_node_free(tree);
			tree = NULL;
		}
	}
	free(text);
	return tree;
}

static void declared_from_state(const struct jsonread_node *t, struct boardfacts *f) {
	struct board_config *b = &f->board;
	f->declared = true;
	b->name = text_of(t, "name");
	b->cooling = text_of(t, "cooling");
	b->notes = text_of(t, "notes");
	const struct jsonread_node *sdk = jsonread_get(t, "sdk");
	for (size_t i = 0; sdk && sdk->kind == JSONREAD_OBJECT && i + 1 < sdk->n &&
			   b->n_sdk < CONFIG_BOARD_SDK_MAX;
	     i += 2) {
		const char *v = jsonread_string(sdk->items[i + 1]);
		if (v) {
			b->sdk[b->n_sdk].name = xstrdup(sdk->items[i]->text);
			b->sdk[b->n_sdk++].version = xstrdup(v);
		}
	}
	const struct jsonread_node *roles = jsonread_get(t, "roles");
	size_t n = roles && roles->kind == JSONREAD_OBJECT ? roles->n / 2 : 0;
	f->roles = xcalloc(n + 1, sizeof(*f->roles));
	for (size_t i = 0; i < n; i++) {
		enum role r;
		if (role_parse(jsonread_string(roles->items[2 * i + 1]), &r)) {
			f->roles[f->n_roles++] =
				(struct role_override){xstrdup(roles->items[2 * i]->text), r};
		}
	}
}

/* "a, b, c": a JSON array of strings joined. */
static char *joined(const struct jsonread_node *list) {
	struct buf b = {0};
	for (size_t i = 0; list && list->kind == JSONREAD_ARRAY && i < list->n; i++) {
		const char *s = jsonread_string(list->items[i]);
		if (s) {
			buf_printf(&b, "%s%s", b.len ? ", " : "", s);
		}
	}
	if (b.len == 0) {
		buf_finish(&b);
		return NULL;
	}
	return buf_steal(&b);
}

static void add_clock(struct boardfacts *f, const char *key, const char *cpus, double max_hz,
		      const char *governor, double upthreshold) {
	if (f->n_clocks >= BOARDFACTS_MAX_CLOCKS) {
		return;
	}
	struct boardfacts_clock *c = &f->clocks[f->n_clocks++];
	snprintf(c->key, sizeof(c->key), "%s", key);
	snprintf(c->cpus, sizeof(c->cpus), "%s", cpus ? cpus : "");
	c->max_hz = max_hz;
	if (governor && isfinite(upthreshold)) {
		snprintf(c->governor, sizeof(c->governor), "%s upthreshold=%.0f", governor,
			 upthreshold);
	} else {
		snprintf(c->governor, sizeof(c->governor), "%s", governor ? governor : "");
	}
}

/* The highest of a list of frequencies, NAN for none. */
static double highest(const struct jsonread_node *list) {
	double max = NAN;
	for (size_t i = 0; list && list->kind == JSONREAD_ARRAY && i < list->n; i++) {
		double v = list->items[i]->kind == JSONREAD_NUMBER ? list->items[i]->number : NAN;
		max = isnan(max) || v > max ? v : max;
	}
	return max;
}

static void recorded_from_state(const struct jsonread_node *t, struct boardfacts *f) {
	f->recorded = true;
	f->model = text_of(t, "model");
	f->compatible = joined(jsonread_get(t, "compatible"));
	f->kernel = text_of(t, "kernel");
	f->npu_driver = text_of(t, "npu_driver");
	f->ram_bytes = number_of(t, "ram_bytes");
	const struct jsonread_node *cpu = jsonread_get(t, "cpufreq");
	for (size_t i = 0; cpu && cpu->kind == JSONREAD_ARRAY && i < cpu->n; i++) {
		const struct jsonread_node *p = cpu->items[i];
		const char *policy = jsonread_string(jsonread_get(p, "policy"));
		if (policy) {
			char key[80];
			snprintf(key, sizeof(key), "cpufreq/%s", policy);
			add_clock(f, key, jsonread_string(jsonread_get(p, "cpus")),
				  number_of(p, "cpuinfo_max_hz"),
				  jsonread_string(jsonread_get(p, "governor")), NAN);
		}
	}
	const struct jsonread_node *dev = jsonread_get(t, "devfreq");
	for (size_t i = 0; dev && dev->kind == JSONREAD_ARRAY && i < dev->n; i++) {
		const struct jsonread_node *d = dev->items[i];
		const char *name = jsonread_string(jsonread_get(d, "name"));
		if (name) {
			char key[80], *end;
			snprintf(key, sizeof(key), "devfreq/%s", name);
			double max = highest(jsonread_get(d, "frequencies_hz"));
			const char *up = jsonread_string(
				jsonread_get(jsonread_get(d, "tunables"), "upthreshold"));
			double upthreshold = up ? strtod(up, &end) : NAN;
			add_clock(f, key, NULL, isnan(max) ? number_of(d, "max_hz") : max,
				  jsonread_string(jsonread_get(d, "governor")),
				  up && end != up ? upthreshold : NAN);
		}
	}
}

int boardfacts_read(struct store *store, const struct config *cfg, struct boardfacts *out) {
	*out = (struct boardfacts){.ram_bytes = NAN};
	int rc = 0;
	if (declares(cfg)) {
		declared_from_config(cfg, out);
	} else {
		struct jsonread_node *t = state_object(store, BOARDFACTS_DECLARED_KEY, &rc);
		if (t) {
			declared_from_state(t, out);
		}
		jsonread_node_free(t);
	}
	if (rc == 0) {
		struct jsonread_node *t = state_object(store, BOARDFACTS_RECORDED_KEY, &rc);
		if (t) {
			recorded_from_state(t, out);
		}
		jsonread_node_free(t);
	}
	return rc;
}

void boardfacts_finish(struct boardfacts *f) {
	if (!f) {
		return;
	}
	config_board_finish(&f->board);
	for (size_t i = 0; i < f->n_roles; i++) {
		free((char *)f->roles[i].key);
	}
	free(f->roles);
	free(f->model);
	free(f->compatible);
	free(f->kernel);
	free(f->npu_driver);
	*f = (struct boardfacts){0};
}

double boardfacts_max_hz(const struct boardfacts *f, const char *key) {
	for (size_t i = 0; i < f->n_clocks; i++) {
		if (strcmp(f->clocks[i].key, key) == 0) {
			return f->clocks[i].max_hz;
		}
	}
	return NAN;
}
