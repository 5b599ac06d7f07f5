/*
 * A campaign's suite read through the YAML toolkit: one parse_<section>() per mapping, as the
 * configuration's parser has, then the checks across sections (a metric a step names against
 * the declared ones, duplicate labels, a warm step in an interleaved order); the canonical
 * JSON, its hash, and what changed between two suites.
 */
#include "campaign-suite.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobcsv.h"
#include "sha256.h"
#include "textdist.h"
#include "xalloc.h"
#include "yamltree.h"

struct parser {
	struct yamltree yt;
	struct campaign_suite *s;
};

/* Tag keys the runner sets on every run itself. */
static const char *const reserved_tags[] = {"campaign", "step", "rep", "start",
					    "warmup",   "gate", NULL};

static const char *const start_names[] = {"cold", "warm", "any", NULL};
static const char *const order_names[] = {"sequential", "interleaved", NULL};

const char *campaign_start_name(enum campaign_start start) {
	return start_names[start];
}

const char *campaign_order_name(enum campaign_order order) {
	return order_names[order];
}

/* A scalar that is one of @names (NULL-ended): its index, or -1 after the error. */
static int one_of(struct parser *p, const struct yamltree_node *v, const char *key,
		  const char *const *names) {
	if (!yamltree_want_scalar(&p->yt, v, key, "a word")) {
		return -1;
	}
	struct textdist_near near;
	textdist_near_init(&near, v->text);
	struct buf list = {0};
	for (int i = 0; names[i]; i++) {
		if (strcmp(names[i], v->text) == 0) {
			buf_finish(&list);
			return i;
		}
		textdist_near_offer(&near, names[i], names[i]);
		buf_printf(&list, "%s%s", i ? ", " : "", names[i]);
	}
	struct buf hint = {0};
	textdist_near_write(&near, true, &hint);
	yamltree_error_node(&p->yt, v, "%s: '%s' is not one of %s%s", key, v->text, list.data,
			    hint.data ? hint.data : "");
	buf_finish(&hint);
	buf_finish(&list);
	return -1;
}

/* A name (label, tag key or value, metric): the rule of labels. */
static bool name_ok(struct parser *p, const struct yamltree_node *v, const char *key) {
	if (!yamltree_want_scalar(&p->yt, v, key, "a name")) {
		return false;
	}
	if (!jobcsv_label_valid(v->text)) {
		yamltree_error_node(&p->yt, v, "%s: '%s': expected " JOBCSV_LABEL_RULE, key,
				    v->text);
		return false;
	}
	return true;
}

static void command_free(struct campaign_command *c) {
	for (size_t i = 0; c->argv && i < c->argc; i++) {
		free(c->argv[i]);
	}
	free(c->argv);
	*c = (struct campaign_command){0};
}

/* A command: a list of words (argv) or a string (/bin/sh -c). */
static void parse_command(struct parser *p, const struct yamltree_node *v, const char *key,
			  struct campaign_command *out) {
	command_free(out);
	if (v->kind == YAMLTREE_SCALAR && !yamltree_is_null(v)) {
		if (!*v->text) {
			yamltree_error_node(&p->yt, v, "%s: an empty command", key);
			return;
		}
		out->shell = true;
		out->argc = 3;
		out->argv = xcalloc(4, sizeof(*out->argv));
		out->argv[0] = xstrdup("/bin/sh");
		out->argv[1] = xstrdup("-c");
		out->argv[2] = xstrdup(v->text);
		return;
	}
	if (v->kind != YAMLTREE_SEQUENCE || v->n == 0) {
		if (v->kind != YAMLTREE_BAD) {
			yamltree_error_node(&p->yt, v,
					    "%s: expected a command: a list of words or a shell "
					    "string, got %s",
					    key,
					    v->kind == YAMLTREE_SEQUENCE ? "an empty list"
									 : yamltree_describe(v));
		}
		return;
	}
	if (!yamltree_check_sequence(&p->yt, v, key)) {
		return;
	}
	char **argv = xcalloc(v->n + 1, sizeof(*argv));
	for (size_t i = 0; i < v->n; i++) {
		if (!yamltree_want_scalar(&p->yt, v->items[i], key, "a word of the command")) {
			for (size_t j = 0; j < i; j++) {
				free(argv[j]);
			}
			free(argv);
			return;
		}
		argv[i] = xstrdup(v->items[i]->text);
	}
	out->argv = argv;
	out->argc = v->n;
}

static void pairs_free(struct campaign_pair *pairs, size_t n) {
	for (size_t i = 0; i < n; i++) {
		free(pairs[i].key);
		free(pairs[i].value);
	}
	free(pairs);
}

/*
 * A mapping of scalars into @pairs (replacing them). With @names, keys and values follow the
 * rule of labels and may not be a reserved tag key (tags).
 */
static void parse_pairs(struct parser *p, const struct yamltree_node *v, const char *section,
			bool names, struct campaign_pair **pairs, size_t *n) {
	pairs_free(*pairs, *n);
	*pairs = NULL;
	*n = 0;
	if (!yamltree_check_mapping(&p->yt, v, section, NULL)) {
		return;
	}
	*pairs = xcalloc(v->n / 2 + 1, sizeof(**pairs));
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct yamltree_node *k = v->items[i], *val = v->items[i + 1];
		if (k->kind != YAMLTREE_SCALAR ||
		    !yamltree_want_scalar(&p->yt, val, k->text, "a value (a word or a number)")) {
			continue;
		}
		if (names) {
			if (!name_ok(p, k, section) || !name_ok(p, val, k->text)) {
				continue;
			}
			bool reserved = false;
			for (const char *const *r = reserved_tags; *r; r++) {
				reserved = reserved || strcmp(*r, k->text) == 0;
			}
			if (reserved) {
				yamltree_error_node(&p->yt, k,
						    "%s: '%s' is a tag the campaign sets itself "
						    "(campaign, step, rep, start, warmup, gate)",
						    section, k->text);
				continue;
			}
		}
		(*pairs)[*n].key = xstrdup(k->text);
		(*pairs)[(*n)++].value = xstrdup(val->text);
	}
}

/* The metrics the suite declares: a mapping NAME: UNIT (empty: none), or a list of names. */
static void parse_metrics(struct parser *p, const struct yamltree_node *v) {
	struct campaign_suite *s = p->s;
	pairs_free(s->metrics, s->n_metrics); // a duplicate section (refused) comes again
	s->metrics = NULL;
	s->n_metrics = 0;
	s->metrics_declared = true;
	if (v->kind == YAMLTREE_SEQUENCE) {
		if (!yamltree_check_sequence(&p->yt, v, "metrics")) {
			return;
		}
		s->metrics = xcalloc(v->n + 1, sizeof(*s->metrics));
		for (size_t i = 0; i < v->n; i++) {
			if (name_ok(p, v->items[i], "metrics")) {
				s->metrics[s->n_metrics].key = xstrdup(v->items[i]->text);
				s->metrics[s->n_metrics++].value = xstrdup("");
			}
		}
		return;
	}
	if (!yamltree_check_mapping(&p->yt, v, "metrics", NULL)) {
		return;
	}
	s->metrics = xcalloc(v->n / 2 + 1, sizeof(*s->metrics));
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct yamltree_node *k = v->items[i], *unit = v->items[i + 1];
		if (k->kind != YAMLTREE_SCALAR || !name_ok(p, k, "metrics")) {
			continue;
		}
		if (!yamltree_is_null(unit) &&
		    !yamltree_want_scalar(&p->yt, unit, k->text, "a unit (e.g. ms)")) {
			continue;
		}
		s->metrics[s->n_metrics].key = xstrdup(k->text);
		s->metrics[s->n_metrics++].value =
			xstrdup(yamltree_is_null(unit) ? "" : unit->text);
	}
}

static void parse_idle(struct parser *p, const struct yamltree_node *v) {
	static const char *const keys[] = {"duration", "burst", "burst_command", NULL};
	if (!yamltree_check_mapping(&p->yt, v, "idle", keys)) {
		return;
	}
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct yamltree_node *k = v->items[i], *val = v->items[i + 1];
		if (yamltree_key_is(k, "duration")) {
			yamltree_get_duration(&p->yt, val, "idle.duration", 1000, 86400000,
					      &p->s->idle_ms);
		} else if (yamltree_key_is(k, "burst")) {
			yamltree_get_duration(&p->yt, val, "idle.burst", 0, 3600000,
					      &p->s->burst_ms);
		} else if (yamltree_key_is(k, "burst_command")) {
			parse_command(p, val, "idle.burst_command", &p->s->burst);
		}
	}
}

/* gate.zones: globs on channel keys. */
static void parse_zones(struct parser *p, const struct yamltree_node *v) {
	struct campaign_suite *s = p->s;
	if (!yamltree_check_sequence(&p->yt, v, "gate.zones") || v->n == 0) {
		if (v->kind == YAMLTREE_SEQUENCE) {
			yamltree_error_node(&p->yt, v, "gate.zones: an empty list watches nothing");
		}
		return;
	}
	for (size_t i = 0; i < s->n_zones; i++) {
		free(s->zones[i]);
	}
	free(s->zones);
	s->zones = xcalloc(v->n, sizeof(*s->zones));
	s->n_zones = 0;
	for (size_t i = 0; i < v->n; i++) {
		if (yamltree_want_scalar(&p->yt, v->items[i], "gate.zones", "a glob (thermal/*)")) {
			s->zones[s->n_zones++] = xstrdup(v->items[i]->text);
		}
	}
}

static void parse_gate(struct parser *p, const struct yamltree_node *v) {
	static const char *const keys[] = {"tolerance_k", "max_wait", "warm_up",
					   "warm_within", "zones",    NULL};
	if (!yamltree_check_mapping(&p->yt, v, "gate", keys)) {
		return;
	}
	struct campaign_suite *s = p->s;
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct yamltree_node *k = v->items[i], *val = v->items[i + 1];
		if (yamltree_key_is(k, "tolerance_k")) {
			yamltree_get_double(&p->yt, val, "gate.tolerance_k",
					    (struct yamltree_range){0, 50, true}, &s->tolerance_k);
		} else if (yamltree_key_is(k, "max_wait")) {
			yamltree_get_duration(&p->yt, val, "gate.max_wait", 0, 7 * 86400000LL,
					      &s->max_wait_ms);
		} else if (yamltree_key_is(k, "warm_within")) {
			yamltree_get_duration(&p->yt, val, "gate.warm_within", 1000, 86400000,
					      &s->warm_within_ms);
		} else if (yamltree_key_is(k, "warm_up")) {
			parse_command(p, val, "gate.warm_up", &s->warm_up);
		} else if (yamltree_key_is(k, "zones")) {
			parse_zones(p, val);
		}
	}
}

/*
 * A whole number from @min to CAMPAIGN_REPS_MAX: a negative one is named as such (the toolkit
 * would only say it is no integer).
 */
static void get_count(struct parser *p, const struct yamltree_node *v, const char *key,
		      unsigned min, unsigned *out) {
	if (v->kind == YAMLTREE_SCALAR && v->plain && v->text[0] == '-' &&
	    strspn(v->text + 1, "0123456789") == strlen(v->text + 1) && v->text[1]) {
		yamltree_error_node(&p->yt, v, "%s: must be %u or more, got %s (negative)", key,
				    min, v->text);
		return;
	}
	yamltree_get_uint(&p->yt, v, key, min, CAMPAIGN_REPS_MAX, out);
}

/* A step's metrics: names, each declared when the suite declares its metrics. */
static void parse_step_metrics(struct parser *p, const struct yamltree_node *v, const char *where,
			       struct campaign_step *step) {
	char *key = xasprintf("%s.metrics", where);
	if (!yamltree_check_sequence(&p->yt, v, key)) {
		free(key);
		return;
	}
	step->metrics = xcalloc(v->n + 1, sizeof(*step->metrics));
	for (size_t i = 0; i < v->n; i++) {
		const struct yamltree_node *m = v->items[i];
		if (!name_ok(p, m, key)) {
			continue;
		}
		bool known = !p->s->metrics_declared;
		struct textdist_near near;
		textdist_near_init(&near, m->text);
		struct buf list = {0};
		for (size_t j = 0; j < p->s->n_metrics && !known; j++) {
			known = strcmp(p->s->metrics[j].key, m->text) == 0;
			textdist_near_offer(&near, p->s->metrics[j].key, p->s->metrics[j].key);
			buf_printf(&list, "%s%s", j ? ", " : "", p->s->metrics[j].key);
		}
		if (!known) {
			struct buf hint = {0};
			textdist_near_write(&near, true, &hint);
			yamltree_error_node(&p->yt, m,
					    "%s: unknown metric '%s'%s (the suite's metrics: %s)",
					    key, m->text, hint.data ? hint.data : "",
					    list.data ? list.data : "none");
			buf_finish(&hint);
		}
		buf_finish(&list);
		if (known) {
			step->metrics[step->n_metrics++] = xstrdup(m->text);
		}
	}
	free(key);
}

static void parse_step(struct parser *p, const struct yamltree_node *v, size_t index) {
	static const char *const keys[] = {"label",   "command", "repetitions", "warmup", "start",
					   "timeout", "tags",    "metrics",     NULL};
	char where[96];
	snprintf(where, sizeof(where), "steps[%zu]", index);
	if (!yamltree_check_mapping(&p->yt, v, where, keys)) {
		if (yamltree_is_null(v)) {
			yamltree_error_node(&p->yt, v, "%s: an empty step", where);
		}
		return;
	}
	struct campaign_step *step = &p->s->steps[p->s->n_steps++];
	*step = (struct campaign_step){.repetitions = 1, .line = v->line, .col = v->col};
	const struct yamltree_node *label = NULL, *command = NULL, *metrics = NULL;
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct yamltree_node *k = v->items[i], *val = v->items[i + 1];
		if (yamltree_key_is(k, "label")) {
			label = val;
		} else if (yamltree_key_is(k, "command")) {
			command = val;
		} else if (yamltree_key_is(k, "metrics")) {
			metrics = val;
		}
	}
	if (label && name_ok(p, label, "label")) {
		step->label = xstrdup(label->text);
		snprintf(where, sizeof(where), "steps[%zu] (%.24s)", index, label->text);
	} else if (!label) {
		yamltree_error_node(&p->yt, v, "%s: no label: every step needs one", where);
	}
	if (!command) {
		yamltree_error_node(&p->yt, v,
				    "%s: no command: say what the step runs (a list of words or a "
				    "shell string)",
				    where);
	} else {
		char key[160];
		snprintf(key, sizeof(key), "%s.command", where);
		parse_command(p, command, key, &step->command);
	}
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct yamltree_node *k = v->items[i], *val = v->items[i + 1];
		char key[160];
		snprintf(key, sizeof(key), "%s.%s", where,
			 k->kind == YAMLTREE_SCALAR ? k->text : "?");
		if (yamltree_key_is(k, "repetitions")) {
			get_count(p, val, key, 1, &step->repetitions);
		} else if (yamltree_key_is(k, "warmup")) {
			get_count(p, val, key, 0, &step->warmup);
		} else if (yamltree_key_is(k, "start")) {
			int i_start = one_of(p, val, key, start_names);
			step->start = i_start < 0 ? step->start : (enum campaign_start)i_start;
			if (i_start == CAMPAIGN_START_WARM &&
			    p->s->order == CAMPAIGN_ORDER_INTERLEAVED) {
				yamltree_error_node(&p->yt, val,
						    "%s: a warm step needs order: sequential "
						    "(interleaving puts another step between its "
						    "repetitions)",
						    where);
			}
		} else if (yamltree_key_is(k, "timeout")) {
			yamltree_get_duration(&p->yt, val, key, 1000, 7 * 86400000LL,
					      &step->timeout_ms);
		} else if (yamltree_key_is(k, "tags")) {
			parse_pairs(p, val, key, true, &step->tags, &step->n_tags);
		}
	}
	if (metrics) {
		parse_step_metrics(p, metrics, where, step);
	}
}

static void parse_steps(struct parser *p, const struct yamltree_node *v) {
	if (yamltree_is_null(v)) {
		yamltree_error_node(&p->yt, v, "steps: no step to run");
		return;
	}
	if (!yamltree_check_sequence(&p->yt, v, "steps")) {
		return;
	}
	if (v->n == 0 || v->n > CAMPAIGN_STEPS_MAX) {
		yamltree_error_node(&p->yt, v, "steps: %s (at most %d)",
				    v->n ? "too many steps" : "no step to run", CAMPAIGN_STEPS_MAX);
		return;
	}
	p->s->steps = xcalloc(v->n, sizeof(*p->s->steps));
	for (size_t i = 0; i < v->n; i++) {
		parse_step(p, v->items[i], i);
	}
	// Labels are unique, and none is the idle baseline's or the burst's.
	for (size_t i = 0; i < p->s->n_steps; i++) {
		const struct campaign_step *a = &p->s->steps[i];
		if (!a->label) {
			continue;
		}
		if (strcmp(a->label, CAMPAIGN_IDLE_LABEL) == 0 ||
		    strcmp(a->label, CAMPAIGN_BURST_LABEL) == 0) {
			yamltree_error_at(&p->yt, a->line, a->col,
					  "steps[%zu]: the label '%s' is the campaign's own (the "
					  "idle baseline and its burst): choose another",
					  i, a->label);
		}
		for (size_t j = 0; j < i; j++) {
			if (p->s->steps[j].label && strcmp(p->s->steps[j].label, a->label) == 0) {
				yamltree_error_at(&p->yt, a->line, a->col,
						  "steps[%zu]: the label '%s' is steps[%zu]'s too "
						  "(line %zu): labels are unique",
						  i, a->label, j, p->s->steps[j].line);
			}
		}
	}
}

static void parse_root(struct parser *p, const struct yamltree_node *root) {
	static const char *const keys[] = {"name",  "locked", "idle",    "gate", "order",
					   "steps", "tags",   "metrics", NULL};
	if (!yamltree_check_mapping(&p->yt, root, "the suite", keys)) {
		if (yamltree_is_null(root)) {
			yamltree_error_node(&p->yt, root,
					    "an empty suite: it needs a name and steps");
		}
		return;
	}
	struct campaign_suite *s = p->s;
	const struct yamltree_node *steps = NULL;
	// The sections steps are checked against come first, wherever they are in the file.
	for (size_t i = 0; i + 1 < root->n; i += 2) {
		const struct yamltree_node *k = root->items[i], *v = root->items[i + 1];
		if (yamltree_key_is(k, "metrics")) {
			parse_metrics(p, v);
		} else if (yamltree_key_is(k, "order")) {
			int o = one_of(p, v, "order", order_names);
			s->order = o < 0 ? s->order : (enum campaign_order)o;
		}
	}
	bool named = false;
	for (size_t i = 0; i + 1 < root->n; i += 2) {
		const struct yamltree_node *k = root->items[i], *v = root->items[i + 1];
		if (yamltree_key_is(k, "name")) {
			named = name_ok(p, v, "name");
			if (named) {
				free(s->name); // a duplicate key (refused) comes again
				s->name = xstrdup(v->text);
			}
			named = true;
		} else if (yamltree_key_is(k, "locked")) {
			parse_pairs(p, v, "locked", false, &s->locked, &s->n_locked);
		} else if (yamltree_key_is(k, "tags")) {
			parse_pairs(p, v, "tags", true, &s->tags, &s->n_tags);
		} else if (yamltree_key_is(k, "idle")) {
			parse_idle(p, v);
		} else if (yamltree_key_is(k, "gate")) {
			parse_gate(p, v);
		} else if (yamltree_key_is(k, "steps")) {
			steps = v;
		}
	}
	if (!named) {
		yamltree_error_node(&p->yt, root,
				    "no name: the suite needs one (name: five-tests)");
	}
	if (steps) {
		parse_steps(p, steps);
	} else {
		yamltree_error_node(&p->yt, root, "no steps: the suite runs nothing");
	}
}

static void defaults(struct campaign_suite *s) {
	*s = (struct campaign_suite){
		.idle_ms = 5 * 60000,
		.burst_ms = 10000,
		.tolerance_k = 2,
		.max_wait_ms = 30 * 60000,
		.warm_within_ms = 30000,
	};
	s->zones = xcalloc(1, sizeof(*s->zones));
	s->zones[0] = xstrdup("thermal/*");
	s->n_zones = 1;
}

bool campaign_suite_parse(const char *name, const char *text, size_t len,
			  struct campaign_suite *out, char **errors) {
	defaults(out);
	struct parser p = {.yt = {.name = name}, .s = out};
	struct yamltree_node *root = NULL;
	if (len > CAMPAIGN_SUITE_MAX_BYTES) {
		yamltree_error_at(&p.yt, 1, 1, "file too large: %zu bytes, the limit is %d KiB",
				  len, CAMPAIGN_SUITE_MAX_BYTES / 1024);
	} else if (yamltree_build(&p.yt, text, len, &root)) {
		if (root) {
			parse_root(&p, root);
		} else {
			yamltree_error_at(&p.yt, 1, 1, "an empty suite: it needs a name and steps");
		}
	}
	yamltree_node_free(root);
	bool good = p.yt.n_errors == 0 && p.yt.dropped == 0;
	yamltree_flush_errors(&p.yt, errors);
	return good;
}

bool campaign_suite_load(const char *path, struct campaign_suite *out, char **errors) {
	char *text = NULL;
	size_t len = 0;
	int rc = yamltree_read_file(path, CAMPAIGN_SUITE_MAX_BYTES, &text, &len);
	if (rc < 0) {
		defaults(out);
		*errors = xasprintf("%s:1:1: could not read the suite: %s\n", path, strerror(-rc));
		return false;
	}
	bool good = campaign_suite_parse(path, text, len, out, errors);
	out->text = text;
	return good;
}

void campaign_suite_finish(struct campaign_suite *s) {
	free(s->name);
	free(s->text);
	pairs_free(s->locked, s->n_locked);
	pairs_free(s->tags, s->n_tags);
	pairs_free(s->metrics, s->n_metrics);
	command_free(&s->burst);
	command_free(&s->warm_up);
	for (size_t i = 0; i < s->n_zones; i++) {
		free(s->zones[i]);
	}
	free(s->zones);
	for (size_t i = 0; i < s->n_steps; i++) {
		struct campaign_step *st = &s->steps[i];
		free(st->label);
		command_free(&st->command);
		pairs_free(st->tags, st->n_tags);
		for (size_t j = 0; j < st->n_metrics; j++) {
			free(st->metrics[j]);
		}
		free(st->metrics);
	}
	free(s->steps);
	*s = (struct campaign_suite){0};
}

const struct campaign_step *campaign_suite_step(const struct campaign_suite *s, const char *label) {
	for (size_t i = 0; i < s->n_steps; i++) {
		if (s->steps[i].label && strcmp(s->steps[i].label, label) == 0) {
			return &s->steps[i];
		}
	}
	return NULL;
}

/* --- canonical JSON ---------------------------------------------------------------------- */

static void command_json(struct json *j, const char *key, const struct campaign_command *c) {
	json_key(j, key);
	if (!c->argv) {
		json_null(j);
		return;
	}
	if (c->shell) {
		json_string(j, c->argv[2]);
		return;
	}
	json_strings(j, c->argv, c->argc);
}

static void pairs_json(struct json *j, const char *key, const struct campaign_pair *pairs,
		       size_t n) {
	json_key(j, key);
	json_object_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_field_string(j, pairs[i].key, pairs[i].value);
	}
	json_object_end(j);
}

static void step_json(struct json *j, const struct campaign_step *st) {
	json_object_begin(j);
	json_field_string(j, "label", st->label);
	command_json(j, "command", &st->command);
	json_field_int(j, "repetitions", st->repetitions);
	json_field_int(j, "warmup", st->warmup);
	json_field_string(j, "start", campaign_start_name(st->start));
	json_field_int(j, "timeout_ms", st->timeout_ms);
	pairs_json(j, "tags", st->tags, st->n_tags);
	json_field_strings(j, "metrics", st->metrics, st->n_metrics);
	json_object_end(j);
}

void campaign_suite_json(const struct campaign_suite *s, struct json *j) {
	json_object_begin(j);
	json_field_string(j, "name", s->name);
	pairs_json(j, "locked", s->locked, s->n_locked);
	pairs_json(j, "tags", s->tags, s->n_tags);
	json_key(j, "metrics");
	if (s->metrics_declared) {
		json_object_begin(j);
		for (size_t i = 0; i < s->n_metrics; i++) {
			json_field_string(j, s->metrics[i].key, s->metrics[i].value);
		}
		json_object_end(j);
	} else {
		json_null(j);
	}
	json_key(j, "idle");
	json_object_begin(j);
	json_field_int(j, "duration_ms", s->idle_ms);
	json_field_int(j, "burst_ms", s->burst_ms);
	command_json(j, "burst_command", &s->burst);
	json_object_end(j);
	json_key(j, "gate");
	json_object_begin(j);
	json_field_double(j, "tolerance_k", s->tolerance_k);
	json_field_int(j, "max_wait_ms", s->max_wait_ms);
	json_field_int(j, "warm_within_ms", s->warm_within_ms);
	command_json(j, "warm_up", &s->warm_up);
	json_field_strings(j, "zones", s->zones, s->n_zones);
	json_object_end(j);
	json_field_string(j, "order", campaign_order_name(s->order));
	json_key(j, "steps");
	json_array_begin(j);
	for (size_t i = 0; i < s->n_steps; i++) {
		step_json(j, &s->steps[i]);
	}
	json_array_end(j);
	json_object_end(j);
}

void campaign_suite_hash(const struct campaign_suite *s, char hex[65]) {
	struct buf text = {0};
	struct json j;
	json_init(&j, &text, false);
	campaign_suite_json(s, &j);
	unsigned char digest[SHA256_DIGEST_LEN];
	sha256(text.data, text.len, digest);
	for (size_t i = 0; i < SHA256_DIGEST_LEN; i++) {
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
	}
	buf_finish(&text);
}

/* --- what changed ------------------------------------------------------------------------ */

struct diff {
	struct buf *out;
	bool any;
};

static void __attribute__((format(printf, 2, 3))) differ(struct diff *d, const char *fmt, ...) {
	if (d->any) {
		buf_puts(d->out, "; ");
	}
	d->any = true;
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf_printable(d->out, fmt, ap);
	va_end(ap);
}

/* The JSON text of one part of a suite, for comparing and showing it. */
static char *command_text(const struct campaign_command *c) {
	struct buf b = {0};
	struct json j;
	json_init(&j, &b, false);
	json_object_begin(&j);
	command_json(&j, "c", c);
	json_object_end(&j);
	char *t = xstrndup(b.data + 5, b.len - 6); // {"c":...}
	buf_finish(&b);
	return t;
}

static void compare_text(struct diff *d, const char *what, const char *a, const char *b) {
	if (strcmp(a ? a : "", b ? b : "") != 0) {
		differ(d, "%s %s -> %s", what, a ? a : "none", b ? b : "none");
	}
}

static void compare_command(struct diff *d, const char *what, const struct campaign_command *a,
			    const struct campaign_command *b) {
	char *ta = command_text(a), *tb = command_text(b);
	compare_text(d, what, ta, tb);
	free(ta);
	free(tb);
}

static void compare_pairs(struct diff *d, const char *what, const struct campaign_pair *a,
			  size_t na, const struct campaign_pair *b, size_t nb) {
	for (size_t i = 0; i < na; i++) {
		const char *other = NULL;
		for (size_t k = 0; k < nb && !other; k++) {
			other = strcmp(a[i].key, b[k].key) == 0 ? b[k].value : NULL;
		}
		if (!other) {
			differ(d, "%s.%s removed (was %s)", what, a[i].key, a[i].value);
		} else if (strcmp(other, a[i].value) != 0) {
			differ(d, "%s.%s %s -> %s", what, a[i].key, a[i].value, other);
		}
	}
	for (size_t k = 0; k < nb; k++) {
		bool known = false;
		for (size_t i = 0; i < na && !known; i++) {
			known = strcmp(a[i].key, b[k].key) == 0;
		}
		if (!known) {
			differ(d, "%s.%s added (%s)", what, b[k].key, b[k].value);
		}
	}
}

static void compare_step(struct diff *d, const struct campaign_step *a,
			 const struct campaign_step *b) {
	char what[256];
	snprintf(what, sizeof(what), "steps.%s", a->label);
	char *w = xasprintf("%s: command", what);
	compare_command(d, w, &a->command, &b->command);
	free(w);
	if (a->repetitions != b->repetitions) {
		differ(d, "%s: repetitions %u -> %u", what, a->repetitions, b->repetitions);
	}
	if (a->warmup != b->warmup) {
		differ(d, "%s: warmup %u -> %u", what, a->warmup, b->warmup);
	}
	if (a->start != b->start) {
		differ(d, "%s: start %s -> %s", what, campaign_start_name(a->start),
		       campaign_start_name(b->start));
	}
	if (a->timeout_ms != b->timeout_ms) {
		differ(d, "%s: timeout %lld ms -> %lld ms", what, (long long)a->timeout_ms,
		       (long long)b->timeout_ms);
	}
	w = xasprintf("%s: tags", what);
	compare_pairs(d, w, a->tags, a->n_tags, b->tags, b->n_tags);
	free(w);
	bool same = a->n_metrics == b->n_metrics;
	for (size_t i = 0; same && i < a->n_metrics; i++) {
		same = strcmp(a->metrics[i], b->metrics[i]) == 0;
	}
	if (!same) {
		differ(d, "%s: metrics changed", what);
	}
}

static void compare_settings(struct diff *d, const struct campaign_suite *a,
			     const struct campaign_suite *b) {
	compare_text(d, "name", a->name, b->name);
	compare_pairs(d, "locked", a->locked, a->n_locked, b->locked, b->n_locked);
	compare_pairs(d, "tags", a->tags, a->n_tags, b->tags, b->n_tags);
	compare_pairs(d, "metrics", a->metrics, a->n_metrics, b->metrics, b->n_metrics);
	if (a->idle_ms != b->idle_ms || a->burst_ms != b->burst_ms) {
		differ(d, "idle: duration %lld ms, burst %lld ms -> %lld ms, %lld ms",
		       (long long)a->idle_ms, (long long)a->burst_ms, (long long)b->idle_ms,
		       (long long)b->burst_ms);
	}
	compare_command(d, "idle.burst_command", &a->burst, &b->burst);
	if (a->tolerance_k != b->tolerance_k) {
		differ(d, "gate.tolerance_k %g -> %g", a->tolerance_k, b->tolerance_k);
	}
	if (a->max_wait_ms != b->max_wait_ms || a->warm_within_ms != b->warm_within_ms) {
		differ(d, "gate: max_wait %lld ms, warm_within %lld ms -> %lld ms, %lld ms",
		       (long long)a->max_wait_ms, (long long)a->warm_within_ms,
		       (long long)b->max_wait_ms, (long long)b->warm_within_ms);
	}
	compare_command(d, "gate.warm_up", &a->warm_up, &b->warm_up);
	bool zones = a->n_zones == b->n_zones;
	for (size_t i = 0; zones && i < a->n_zones; i++) {
		zones = strcmp(a->zones[i], b->zones[i]) == 0;
	}
	if (!zones) {
		differ(d, "gate.zones changed");
	}
	if (a->order != b->order) {
		differ(d, "order %s -> %s", campaign_order_name(a->order),
		       campaign_order_name(b->order));
	}
}

bool campaign_suite_diff(const struct campaign_suite *was, const struct campaign_suite *now,
			 struct buf *out) {
	struct diff d = {.out = out};
	compare_settings(&d, was, now);
	for (size_t i = 0; i < was->n_steps; i++) {
		const struct campaign_step *b = campaign_suite_step(now, was->steps[i].label);
		if (!b) {
			differ(&d, "step %s removed", was->steps[i].label);
		} else {
			compare_step(&d, &was->steps[i], b);
		}
	}
	for (size_t i = 0; i < now->n_steps; i++) {
		if (!campaign_suite_step(was, now->steps[i].label)) {
			differ(&d, "step %s added", now->steps[i].label);
		}
	}
	// The same steps in another order run another sequence.
	bool moved = false;
	for (size_t i = 0, k = 0; i < was->n_steps && k < now->n_steps; i++) {
		if (!campaign_suite_step(now, was->steps[i].label)) {
			continue;
		}
		while (k < now->n_steps && !campaign_suite_step(was, now->steps[k].label)) {
			k++;
		}
		moved = moved ||
			(k < now->n_steps && strcmp(was->steps[i].label, now->steps[k].label) != 0);
		k++;
	}
	if (moved) {
		differ(&d, "the steps' order changed");
	}
	return d.any;
}
