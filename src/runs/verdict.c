/*
 * Comparable or not (verdict.h): the rules over two sides' facts, and the facts read from a
 * store (the ambient channel's mean, the clocks' hardware maxima, governors, hashes).
 */
#include "verdict.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boardfacts.h"
#include "jsonread.h"
#include "query.h"
#include "stats.h"
#include "throttle-report.h"
#include "xalloc.h"

/* --- the rules ------------------------------------------------------------------------------ */

static void __attribute__((format(printf, 5, 6)))
reason(struct verdict *v, const char *code, char *a, char *b, const char *fmt, ...) {
	v->reasons = xrealloc(v->reasons, (v->n + 1) * sizeof(*v->reasons));
	va_list ap;
	va_start(ap, fmt);
	char *msg = xvasprintf(fmt, ap);
	va_end(ap);
	v->reasons[v->n++] = (struct verdict_reason){xstrdup(code), a, b, msg};
	v->comparable = false;
}

static char *number(double x) {
	if (!isfinite(x)) {
		return xstrdup("null");
	}
	char text[32];
	json_format_double(text, x);
	return xstrdup(text);
}

static char *string(const char *s) {
	struct buf b = {0};
	struct json j;
	json_init(&j, &b, false);
	json_string(&j, s);
	return buf_steal(&b);
}

static const struct verdict_clock *clock_of(const struct verdict_side *s, const char *key) {
	for (size_t i = 0; i < s->n_clocks; i++) {
		if (strcmp(s->clocks[i].key, key) == 0) {
			return &s->clocks[i];
		}
	}
	return NULL;
}

/* "cpufreq/policy4", or "cpufreq/policy4 and cpufreq/policy6 (the big cluster)" when paired
 * across names. */
static char *clock_name(const struct verdict_clock *ca, const struct verdict_clock *cb) {
	if (strcmp(ca->key, cb->key) == 0) {
		return xstrdup(ca->key);
	}
	return xasprintf("%s and %s (the %s)", ca->key, cb->key, role_text(ca->role));
}

/* Hardware maxima that differ, or a maximum a side did not reach under the test's load. */
static void judge_clock(const struct verdict_side *a, const struct verdict_side *b,
			const struct verdict_clock *ca, const struct verdict_clock *cb,
			struct verdict *v) {
	if (!isfinite(ca->hw_max_hz) || !isfinite(cb->hw_max_hz)) {
		return;
	}
	char *name = clock_name(ca, cb);
	if (ca->hw_max_hz != cb->hw_max_hz) {
		reason(v, "clock", number(ca->hw_max_hz), number(cb->hw_max_hz),
		       "%s: the hardware maxima differ: %.0f MHz on %s, %.0f MHz on %s "
		       "(binning, or another OPP table)",
		       name, ca->hw_max_hz / 1e6, a->name, cb->hw_max_hz / 1e6, b->name);
	} else if (ca->loaded && cb->loaded && ca->reached_hz != cb->reached_hz &&
		   (ca->reached_hz < ca->hw_max_hz || cb->reached_hz < cb->hw_max_hz)) {
		// Binning: one board held back below what the other reached under the same load. A
		// test that loads a cluster only part of the way leaves both below the maximum
		// alike: like for like.
		reason(v, "clock", number(ca->reached_hz), number(cb->reached_hz),
		       "%s: the highest clock reached under the test's load is %.0f MHz on %s "
		       "and %.0f MHz on %s, of %.0f MHz the hardware allows",
		       name, ca->reached_hz / 1e6, a->name, cb->reached_hz / 1e6, b->name,
		       ca->hw_max_hz / 1e6);
	}
	free(name);
}

static const char *governor_of(const struct verdict_side *s, const char *key) {
	for (size_t i = 0; i < s->n_governors; i++) {
		if (strcmp(s->governors[i].key, key) == 0) {
			return s->governors[i].value;
		}
	}
	return NULL;
}

/*
 * The governors of @a against @b's: a clock's with its counterpart's (@pair, by clock), a
 * governor of no clock with the same key; a clock without a counterpart is never compared.
 */
static void judge_governors(const struct verdict_side *a, const struct verdict_side *b,
			    const ssize_t *pair, struct verdict *v) {
	for (size_t i = 0; i < a->n_governors; i++) {
		const char *key = a->governors[i].key, *there = key;
		const struct verdict_clock *ca = clock_of(a, key), *cb = NULL;
		if (ca) {
			ssize_t k = pair[ca - a->clocks];
			if (k < 0) {
				continue;
			}
			cb = &b->clocks[k];
			there = cb->key;
		}
		const char *ga = a->governors[i].value, *gb = governor_of(b, there);
		if (gb && strcmp(ga, gb) != 0) {
			char *name = ca ? clock_name(ca, cb) : xstrdup(key);
			reason(v, "governor", string(ga), string(gb),
			       "%s: governor %s on %s, %s on %s", name, ga, a->name, gb, b->name);
			free(name);
		}
	}
}

/* Each clock of @a with its counterpart on @b: its maxima, then the governors. */
static void judge_clocks(const struct verdict_side *a, const struct verdict_side *b,
			 const struct role_pair *pairs, size_t n_pairs, struct verdict *v) {
	struct role_channel *ra = xcalloc(a->n_clocks + 1, sizeof(*ra)),
			    *rb = xcalloc(b->n_clocks + 1, sizeof(*rb));
	enum role *roles_a = xcalloc(a->n_clocks + 1, sizeof(*roles_a)),
		  *roles_b = xcalloc(b->n_clocks + 1, sizeof(*roles_b));
	for (size_t i = 0; i < a->n_clocks; i++) {
		ra[i] = (struct role_channel){a->clocks[i].key, NULL, CHANNEL_KIND_FREQUENCY, NAN};
		roles_a[i] = a->clocks[i].role;
	}
	for (size_t i = 0; i < b->n_clocks; i++) {
		rb[i] = (struct role_channel){b->clocks[i].key, NULL, CHANNEL_KIND_FREQUENCY, NAN};
		roles_b[i] = b->clocks[i].role;
	}
	ssize_t *pair = xcalloc(a->n_clocks + 1, sizeof(*pair));
	role_pair(ra, roles_a, a->n_clocks, rb, roles_b, b->n_clocks, pairs, n_pairs, pair, NULL);
	for (size_t i = 0; i < a->n_clocks; i++) {
		if (pair[i] >= 0) {
			judge_clock(a, b, &a->clocks[i], &b->clocks[pair[i]], v);
		}
	}
	judge_governors(a, b, pair, v);
	free(pair);
	free(ra);
	free(rb);
	free(roles_a);
	free(roles_b);
}

void verdict_judge_paired(const struct verdict_side *a, const struct verdict_side *b,
			  const struct role_pair *pairs, size_t n_pairs, struct verdict *v) {
	*v = (struct verdict){.comparable = true};
	double d = b->ambient_c - a->ambient_c;
	if (isfinite(d) && fabs(d) > VERDICT_AMBIENT_K) {
		reason(v, "ambient", number(a->ambient_c), number(b->ambient_c),
		       "the ambient differs by %+.2f K: %.2f °C on %s (%s), %.2f °C on %s (%s); more "
		       "than %.0f K moves every temperature and the throttling",
		       d, a->ambient_c, a->name, a->ambient_from, b->ambient_c, b->name,
		       b->ambient_from, VERDICT_AMBIENT_K);
	}
	judge_clocks(a, b, pairs, n_pairs, v);
	if (*a->exe_sha256 && *b->exe_sha256 && strcmp(a->exe_sha256, b->exe_sha256) != 0) {
		reason(v, "executable", string(a->exe_sha256), string(b->exe_sha256),
		       "the executable's sha256 differs: %.12s... on %s, %.12s... on %s",
		       a->exe_sha256, a->name, b->exe_sha256, b->name);
	}
	double pa = 100 * a->exposure, pb = 100 * b->exposure;
	if (isfinite(pa) && isfinite(pb) && fabs(pb - pa) > VERDICT_EXPOSURE_POINTS) {
		reason(v, "throttle", number(a->exposure), number(b->exposure),
		       "throttle exposure differs by %.1f points: the loaded domains were capped "
		       "%.1f %% of the runs' time on %s, %.1f %% on %s",
		       fabs(pb - pa), pa, a->name, pb, b->name);
	}
	if (*a->cooling && *b->cooling && strcmp(a->cooling, b->cooling) != 0) {
		reason(v, "cooling", string(a->cooling), string(b->cooling),
		       "the declared cooling differs: %s on %s, %s on %s", a->cooling, a->name,
		       b->cooling, b->name);
	}
}

void verdict_judge(const struct verdict_side *a, const struct verdict_side *b, struct verdict *v) {
	verdict_judge_paired(a, b, NULL, 0, v);
}

void verdict_finish(struct verdict *v) {
	for (size_t i = 0; v && i < v->n; i++) {
		free(v->reasons[i].code);
		free(v->reasons[i].a);
		free(v->reasons[i].b);
		free(v->reasons[i].message);
	}
	if (v) {
		free(v->reasons);
		*v = (struct verdict){0};
	}
}

void verdict_write_json(const struct verdict *v, struct json *j) {
	json_object_begin(j);
	json_field_bool(j, "comparable", v->comparable);
	json_key(j, "reasons");
	json_array_begin(j);
	for (size_t i = 0; i < v->n; i++) {
		json_object_begin(j);
		json_field_string(j, "code", v->reasons[i].code);
		json_field_raw(j, "a", v->reasons[i].a);
		json_field_raw(j, "b", v->reasons[i].b);
		json_field_string(j, "message", v->reasons[i].message);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

/* --- the facts from a store ------------------------------------------------------------------ */

static struct verdict_clock *side_clock(struct verdict_side *s, const char *key) {
	struct verdict_clock *c = (struct verdict_clock *)clock_of(s, key);
	if (!c && s->n_clocks < VERDICT_MAX_CLOCKS) {
		c = &s->clocks[s->n_clocks++];
		*c = (struct verdict_clock){.hw_max_hz = NAN, .reached_hz = NAN};
		snprintf(c->key, sizeof(c->key), "%s", key);
	}
	return c;
}

static double meta_number(const struct jsonread_node *meta, const char *key) {
	const struct jsonread_node *v = jsonread_get(meta, key);
	return v && v->kind == JSONREAD_NUMBER ? v->number : NAN;
}

/* The clocks and governors the channels' metadata records. */
static void from_channels(struct verdict_side *s, const struct store_channel *ch, size_t n) {
	for (size_t i = 0; i < n; i++) {
		const char *key = ch[i].ch.key;
		bool clock = strncmp(key, "cpufreq/", 8) == 0 || strncmp(key, "devfreq/", 8) == 0;
		if (!clock || ch[i].ch.kind != CHANNEL_KIND_FREQUENCY) {
			continue;
		}
		struct verdict_clock *c = side_clock(s, key);
		struct jsonread_error err;
		const char *meta = ch[i].ch.meta;
		size_t mlen = meta ? strlen(meta) : 0;
		struct jsonread_node *tree = mlen ? jsonread_parse(meta, mlen, mlen, &err) : NULL;
		double max = meta_number(tree, "max_hz");
		max = isfinite(max) ? max : meta_number(tree, "max_freq");
		if (c && isfinite(max)) {
			c->hw_max_hz = max;
		}
		const char *gov = jsonread_string(jsonread_get(tree, "governor"));
		if (gov && s->n_governors < VERDICT_MAX_GOVERNORS) {
			double up = meta_number(tree, "upthreshold");
			snprintf(s->governors[s->n_governors].key, 80, "%s", key);
			if (isfinite(up)) {
				snprintf(s->governors[s->n_governors].value, 64,
					 "%s upthreshold=%.0f", gov, up);
			} else {
				snprintf(s->governors[s->n_governors].value, 64, "%s", gov);
			}
			s->n_governors++;
		}
		jsonread_node_free(tree);
	}
}

/* What the runs recorded: the hardware maxima of the residency, each test's executable. */
static int run_fact(void *ctx, const struct store_run *run) {
	struct verdict_board *b = ctx;
	struct jsonread_error err;
	size_t len = run->figures ? strlen(run->figures) : 0;
	struct jsonread_node *tree = len ? jsonread_parse(run->figures, len, len, &err) : NULL;
	const struct jsonread_node *res = jsonread_get(tree, "residency");
	for (size_t i = 0; res && res->kind == JSONREAD_OBJECT && i + 1 < res->n; i += 2) {
		double max = meta_number(res->items[i + 1], "max_hz");
		const char *from = jsonread_string(jsonread_get(res->items[i + 1], "max_hz_from"));
		struct verdict_clock *c = side_clock(&b->side, res->items[i]->text);
		if (c && isfinite(max) && from && strcmp(from, "highest seen") != 0) {
			c->hw_max_hz = max; // the kernel's cpuinfo_max_freq or OPP table
		}
	}
	jsonread_node_free(tree);
	if (run->status != RUN_STATUS_OK || !run->fingerprint) {
		return 0;
	}
	len = strlen(run->fingerprint);
	tree = jsonread_parse(run->fingerprint, len, len, &err);
	const char *sha = jsonread_string(jsonread_get(tree, "exe_sha256"));
	size_t k = 0;
	while (k < b->n_exes && strcmp(b->exes[k].label, run->label) != 0) {
		k++;
	}
	if (k == b->n_exes) {
		b->exes = xrealloc(b->exes, (b->n_exes + 1) * sizeof(*b->exes));
		b->exes[b->n_exes++] = (struct verdict_exe){.label = xstrdup(run->label)};
	}
	snprintf(b->exes[k].sha256, sizeof(b->exes[k].sha256), "%s", sha ? sha : "");
	jsonread_node_free(tree);
	return 0;
}

/* The ambient channel's mean over [@from, @to) (0, 0: the whole history). */
static double ambient_mean(struct store *store, const char *key, int64_t from, int64_t to) {
	struct query_params p = {.has_from = from != 0,
				 .has_to = to != 0,
				 .from = from,
				 .to = to,
				 .channels = &key,
				 .n_channels = 1};
	struct query_stats st;
	char *err = NULL;
	double mean = NAN;
	if (query_stats_compute(store, &p, &st, &err) == 0 && st.sel.n == 1) {
		mean = query_stats_mean(&st, 0);
	}
	query_stats_finish(&st);
	free(err);
	return mean;
}

/*
 * The ambient among the @n channels of roles @roles: a temperature of the ambient role, one the
 * declared roles: map (@f) names first, else the first by key; NULL when none.
 */
static const char *ambient_of(const struct store_channel *ch, size_t n, const enum role *roles,
			      const struct boardfacts *f) {
	const char *best = NULL;
	bool best_declared = false;
	for (size_t i = 0; i < n; i++) {
		if (roles[i] != ROLE_AMBIENT || ch[i].ch.kind != CHANNEL_KIND_TEMPERATURE) {
			continue;
		}
		bool declared = false;
		for (size_t k = 0; k < f->n_roles; k++) {
			declared = declared || (strcmp(f->roles[k].key, ch[i].ch.key) == 0 &&
						f->roles[k].role == ROLE_AMBIENT);
		}
		if (!best || (declared && !best_declared) ||
		    (declared == best_declared && strcmp(ch[i].ch.key, best) < 0)) {
			best = ch[i].ch.key;
			best_declared = declared;
		}
	}
	return best;
}

/*
 * What the database says of its board: the declared cooling, the recorded hardware maxima where
 * nothing else gave one, and the roles (role_infer(): the declared roles: map over the
 * inference) of its clocks and of its channels, one rule for both: the clocks pair by them, the
 * ambient is the channel of the ambient role (its key into @ambient, borrowed from @ch).
 */
static int board_facts(struct store *store, const struct store_channel *ch, size_t n,
		       struct verdict_side *s, const char **ambient) {
	struct boardfacts f;
	int rc = boardfacts_read(store, NULL, &f);
	snprintf(s->cooling, sizeof(s->cooling), "%s", f.board.cooling ? f.board.cooling : "");
	// The side's clocks first (with their hardware maxima: the cluster tiers), then the
	// channels that are none of them.
	struct role_channel *rc_ch = xcalloc(s->n_clocks + n + 1, sizeof(*rc_ch));
	enum role *roles = xcalloc(s->n_clocks + n + 1, sizeof(*roles));
	for (size_t i = 0; i < s->n_clocks; i++) {
		struct verdict_clock *c = &s->clocks[i];
		if (isnan(c->hw_max_hz)) {
			c->hw_max_hz = boardfacts_max_hz(&f, c->key);
		}
		rc_ch[i] =
			(struct role_channel){c->key, NULL, CHANNEL_KIND_FREQUENCY, c->hw_max_hz};
	}
	size_t m = s->n_clocks;
	struct store_channel *others = xcalloc(n + 1, sizeof(*others));
	for (size_t i = 0; i < n; i++) {
		if (!clock_of(s, ch[i].ch.key)) {
			others[m - s->n_clocks] = ch[i];
			rc_ch[m++] = (struct role_channel){ch[i].ch.key, ch[i].ch.label,
							   ch[i].ch.kind, NAN};
		}
	}
	role_infer(rc_ch, m, f.roles, f.n_roles, roles);
	for (size_t i = 0; i < s->n_clocks; i++) {
		s->clocks[i].role = roles[i];
	}
	*ambient = ambient_of(others, m - s->n_clocks, roles + s->n_clocks, &f);
	free(others);
	free(rc_ch);
	free(roles);
	boardfacts_finish(&f);
	return rc;
}

int verdict_board_read(struct store *store, int64_t from, int64_t to, struct verdict_board *out) {
	*out = (struct verdict_board){0};
	struct verdict_side *s = &out->side;
	*s = (struct verdict_side){.ambient_c = NAN, .exposure = NAN};
	struct store_channel *ch = NULL;
	size_t n = 0;
	int rc = store_channels(store, &ch, &n);
	if (rc < 0) {
		return rc;
	}
	from_channels(s, ch, n);
	// Episodes carry the hardware maximum of each domain they capped.
	struct throttle_episode *eps = NULL;
	size_t n_eps = 0;
	if (throttle_report_list(store, INT64_MIN / 4, INT64_MAX / 4, &eps, &n_eps) == 0) {
		for (size_t i = 0; i < n_eps; i++) {
			struct verdict_clock *c =
				(struct verdict_clock *)clock_of(s, eps[i].domain);
			if (c && eps[i].max_hz > 0 && isnan(c->hw_max_hz)) {
				c->hw_max_hz = (double)eps[i].max_hz;
			}
		}
	}
	free(eps);
	rc = store_runs_scan(store, NULL, run_fact, out);
	const char *ambient = NULL;
	rc = rc == 0 ? board_facts(store, ch, n, s, &ambient) : rc;
	if (rc == 0 && ambient) {
		s->ambient_c = ambient_mean(store, ambient, from, to);
		snprintf(s->ambient_from, sizeof(s->ambient_from), "%s", ambient);
	}
	store_channels_free(ch, n);
	return rc;
}

void verdict_board_finish(struct verdict_board *b) {
	for (size_t i = 0; b && i < b->n_exes; i++) {
		free(b->exes[i].label);
	}
	if (b) {
		free(b->exes);
		*b = (struct verdict_board){0};
	}
}

void verdict_side_of(const struct verdict_board *b, const char *name, const char *label,
		     const struct testfig_label *fig, struct verdict_side *out) {
	*out = b->side;
	out->name = name;
	for (size_t i = 0; label && i < b->n_exes; i++) {
		if (strcmp(b->exes[i].label, label) == 0) {
			snprintf(out->exe_sha256, sizeof(out->exe_sha256), "%s", b->exes[i].sha256);
		}
	}
	for (size_t i = 0; fig && i < fig->n_clocks; i++) {
		struct verdict_clock *c = side_clock(out, fig->clocks[i].f.key);
		if (!c) {
			continue;
		}
		c->reached_hz = fig->clocks[i].f.max;
		for (size_t d = 0; d < fig->n_loaded_domains; d++) {
			const char *dom = fig->loaded_domains[d];
			c->loaded =
				c->loaded || strcmp(dom, c->key) == 0 ||
				(strcmp(dom, "npu") == 0 && strncmp(c->key, "devfreq/", 8) == 0 &&
				 strstr(c->key + 8, "npu"));
		}
	}
	out->exposure = fig ? fig->loaded_share : NAN;
}

int verdict_side_read(struct store *store, const char *name, int64_t from, int64_t to,
		      const char *label, const struct testfig_label *fig,
		      struct verdict_side *out) {
	struct verdict_board b;
	int rc = verdict_board_read(store, from, to, &b);
	verdict_side_of(&b, name, label, fig, out);
	verdict_board_finish(&b);
	return rc;
}
