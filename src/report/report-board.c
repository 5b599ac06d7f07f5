/*
 * The report's sections about the board itself (report-internal.h): the Board table (what the
 * configuration declared, what the daemon recorded, each clock's governor and maxima, each
 * label's executable, the window), the Load section (each CPU and NPU core over the window,
 * each label's CPU clusters and NPU cores while its runs were under way) and the Throttling
 * section (the window's episodes per domain, each label's throttled shares), all from the
 * answers report.c computed (stats, boardfacts, the runs' sides, throttle_report).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "report-internal.h"
#include "stats.h"
#include "timefmt.h"
#include "unit.h"
#include "xalloc.h"

/* ---- the Board table ---- */

/* A row named @name with @value(board) in each board's column. */
static void row(struct report_block *t, const struct report *rep, const char *name,
		char *(*value)(const struct report_board *b)) {
	report_row(t);
	report_cell(t, 0, "%s", name);
	for (size_t i = 0; i < rep->n_boards; i++) {
		char *v = value(&rep->boards[i]);
		report_cell(t, 1 + i, "%s", v ? v : "-");
		free(v);
	}
}

static char *or_text(const char *v, const char *none) {
	return xstrdup(v ? v : none);
}

static char *model(const struct report_board *b) {
	return or_text(b->facts.model ? b->facts.model : b->model,
		       "not recorded (no daemon start or run fingerprint)");
}

static char *declared_name(const struct report_board *b) {
	return or_text(b->facts.board.name, "not declared (board: in the configuration)");
}

static char *compatible(const struct report_board *b) {
	return or_text(b->facts.compatible, "not recorded");
}

static char *kernel(const struct report_board *b) {
	return or_text(b->facts.kernel ? b->facts.kernel : b->kernel, "not recorded");
}

static char *ram(const struct report_board *b) {
	if (!isfinite(b->facts.ram_bytes)) {
		return xstrdup("not recorded");
	}
	double factor;
	const char *symbol = unit_symbol("bytes", &factor);
	return xasprintf("%.*f %s", unit_places("bytes", false), b->facts.ram_bytes * factor,
			 symbol);
}

static char *npu_driver(const struct report_board *b) {
	return or_text(b->facts.npu_driver, "not shown by the kernel");
}

static char *cooling(const struct report_board *b) {
	return or_text(b->facts.board.cooling, "not declared");
}

static char *sdk(const struct report_board *b) {
	struct buf out = {0};
	for (size_t i = 0; i < b->facts.board.n_sdk; i++) {
		buf_printf(&out, "%s%s %s", i ? ", " : "", b->facts.board.sdk[i].name,
			   b->facts.board.sdk[i].version);
	}
	if (!out.len) {
		buf_puts(&out, "not declared");
	}
	return buf_steal(&out);
}

static char *notes(const struct report_board *b) {
	return or_text(b->facts.board.notes, "-");
}

/* "schedutil; 2400 MHz hardware, 2304 MHz reached": clock @k of @b's window. */
static char *clock_facts(const struct report_board *b, size_t k) {
	const struct channel *ch = query_selection_channel(&b->stats.sel, k);
	const struct verdict_board *vb = b->side ? runs_side_facts(b->side) : NULL;
	const struct verdict_clock *vc = NULL;
	const char *gov = NULL;
	for (size_t i = 0; vb && i < vb->side.n_clocks; i++) {
		vc = strcmp(vb->side.clocks[i].key, ch->key) == 0 ? &vb->side.clocks[i] : vc;
	}
	for (size_t i = 0; vb && i < vb->side.n_governors; i++) {
		gov = strcmp(vb->side.governors[i].key, ch->key) == 0 ? vb->side.governors[i].value
								      : gov;
	}
	double factor;
	const char *unit = unit_symbol(ch->unit, &factor);
	struct buf out = {0};
	buf_printf(&out, "%s; ", gov ? gov : "governor not recorded");
	if (vc && isfinite(vc->hw_max_hz)) {
		buf_printf(&out, "%.0f %s hardware, ", vc->hw_max_hz * factor, unit);
	}
	buf_printf(&out, "%.0f %s reached",
		   stats_value(b->stats.acc[k].max_q, ch->resolution) * factor, unit);
	return buf_steal(&out);
}

/* "cpufreq/policy4 (CPU 4-5), big cluster". */
static char *clock_name(const struct report_board *b, const struct channel *ch) {
	enum role r = report_role(b, ch->key);
	const char *label = report_label(ch);
	return xasprintf("%s%s%s%s%s%s", ch->key, *label ? " (" : "", label, *label ? ")" : "",
			 r != ROLE_NONE ? ", " : "", r != ROLE_NONE ? role_text(r) : "");
}

/* Each clock of the first board with its counterpart's facts, then the other's own. */
static void clock_rows(struct report_block *t, const struct report *rep) {
	const struct report_board *a = &rep->boards[0];
	for (size_t k = 0; k < a->stats.sel.n; k++) {
		const struct channel *ch = query_selection_channel(&a->stats.sel, k);
		if (ch->kind != CHANNEL_KIND_FREQUENCY || a->stats.acc[k].count == 0) {
			continue;
		}
		char *name = clock_name(a, ch), *v = clock_facts(a, k);
		report_row(t);
		report_cell(t, 0, "clock %s", name);
		report_cell(t, 1, "%s", v);
		free(name);
		free(v);
		if (rep->n_boards > 1) {
			ssize_t o = rep->pair[k];
			const struct report_board *b = &rep->boards[1];
			v = o >= 0 && b->stats.acc[o].count ? clock_facts(b, (size_t)o) : NULL;
			const char *there =
				o >= 0 ? query_selection_channel(&b->stats.sel, o)->key : "";
			report_cell(t, 2, "%s%s%s%s", v ? v : "no counterpart", o >= 0 ? " (" : "",
				    there, o >= 0 ? ")" : "");
			free(v);
		}
	}
	if (rep->n_boards < 2) {
		return;
	}
	const struct report_board *a0 = &rep->boards[0], *b = &rep->boards[1];
	for (size_t k = 0; k < b->stats.sel.n; k++) {
		const struct channel *ch = query_selection_channel(&b->stats.sel, k);
		bool paired = false;
		for (size_t i = 0; i < a0->stats.sel.n; i++) {
			paired = paired || rep->pair[i] == (ssize_t)k;
		}
		if (paired || ch->kind != CHANNEL_KIND_FREQUENCY || b->stats.acc[k].count == 0) {
			continue;
		}
		char *name = clock_name(b, ch), *v = clock_facts(b, k);
		report_row(t);
		report_cell(t, 0, "clock %s (B only)", name);
		report_cell(t, 1, "no counterpart");
		report_cell(t, 2, "%s", v);
		free(name);
		free(v);
	}
}

/* Each label's executable (its latest ok run's sha256), on either board. */
static void executable_rows(struct report_block *t, const struct report *rep) {
	for (size_t i = 0; i < rep->n_boards; i++) {
		const struct verdict_board *vb =
			rep->boards[i].side ? runs_side_facts(rep->boards[i].side) : NULL;
		for (size_t e = 0; vb && e < vb->n_exes; e++) {
			if (!*vb->exes[e].sha256) {
				continue;
			}
			report_row(t);
			report_cell(t, 0, "executable of %s", vb->exes[e].label);
			for (size_t j = 0; j < rep->n_boards; j++) {
				report_cell(t, 1 + j, "%s", j == i ? "" : "-");
			}
			report_cell(t, 1 + i, "sha256 %.16s...", vb->exes[e].sha256);
		}
	}
}

static void window_rows(const struct report *rep, struct report_block *t) {
	char a[TIMEFMT_ISO_LEN], b[TIMEFMT_ISO_LEN], s[64];
	size_t n = rep->n_boards;
	report_row(t);
	report_cell(t, 0, "database");
	for (size_t i = 0; i < n; i++) {
		report_cell(t, 1 + i, "%s", rep->boards[i].file);
	}
	report_row(t);
	report_cell(t, 0, "window");
	for (size_t i = 0; i < n; i++) {
		const struct report_board *bd = &rep->boards[i];
		if (bd->has_stats) {
			timefmt_iso(bd->stats.from, a);
			timefmt_iso(bd->stats.to, b);
			report_cell(t, 1 + i, "%s .. %s", a, b);
		} else {
			report_cell(t, 1 + i, "no history stored");
		}
	}
	static const char *const names[] = {"first sample", "last sample"};
	for (size_t e = 0; e < 2; e++) {
		report_row(t);
		report_cell(t, 0, "%s", names[e]);
		for (size_t i = 0; i < n; i++) {
			const struct report_board *bd = &rep->boards[i];
			if (!bd->empty) {
				timefmt_iso(e == 0 ? bd->first_ts : bd->last_ts, a);
				report_cell(t, 1 + i, "%s", a);
			} else {
				report_cell(t, 1 + i, "-");
			}
		}
	}
	report_row(t);
	report_cell(t, 0, "samples");
	for (size_t i = 0; i < n; i++) {
		const struct query_stats *st = &rep->boards[i].stats;
		report_cell(t, 1 + i, "%lld of %lld expected", (long long)st->cycles,
			    (long long)st->expected_cycles);
	}
	report_row(t);
	report_cell(t, 0, "coverage");
	for (size_t i = 0; i < n; i++) {
		const struct report_board *bd = &rep->boards[i];
		if (!bd->has_stats || bd->empty) {
			report_cell(t, 1 + i, "-");
			continue;
		}
		unit_duration(s, sizeof(s), (double)bd->stats.longest_gap_s);
		report_cell(t, 1 + i, "%.1f %%, %s%s", 100.0 * bd->stats.coverage,
			    bd->stats.longest_gap_s > 0 ? "longest gap " : "no gaps",
			    bd->stats.longest_gap_s > 0 ? s : "");
	}
	report_row(t);
	report_cell(t, 0, "interval");
	for (size_t i = 0; i < n; i++) {
		const struct query_stats *st = &rep->boards[i].stats;
		if (!rep->boards[i].has_stats || rep->boards[i].empty) {
			report_cell(t, 1 + i, "-");
		} else if (st->mixed_intervals) {
			report_cell(t, 1 + i, "%lld s (mixed: %lld to %lld s)",
				    (long long)st->interval_s, (long long)st->min_interval_s,
				    (long long)st->max_interval_s);
		} else {
			report_cell(t, 1 + i, "%lld s", (long long)st->interval_s);
		}
	}
	report_row(t);
	report_cell(t, 0, "unsynced cycles left out");
	for (size_t i = 0; i < n; i++) {
		report_cell(t, 1 + i, "%lld", (long long)rep->boards[i].stats.unsynced);
	}
}

void report_board_section(struct report_doc *doc, const struct report *rep) {
	report_section(doc, "Board and window");
	const char *head[3] = {"", rep->boards[0].name,
			       rep->n_boards > 1 ? rep->boards[1].name : ""};
	struct report_block *t = report_table(doc, 1 + rep->n_boards, head);
	for (size_t c = 0; c < t->cols; c++) {
		t->right[c] = false;
	}
	row(t, rep, "board", model);
	row(t, rep, "name", declared_name);
	row(t, rep, "compatible", compatible);
	row(t, rep, "kernel", kernel);
	row(t, rep, "RAM", ram);
	row(t, rep, "NPU driver", npu_driver);
	row(t, rep, "cooling", cooling);
	row(t, rep, "SDK versions", sdk);
	row(t, rep, "notes", notes);
	clock_rows(t, rep);
	executable_rows(t, rep);
	window_rows(rep, t);
	report_para(doc,
		    "The board as its configuration declares it (board:, kept in its database) and "
		    "as the daemon found it at its start (model, compatible, kernel, RAM, the NPU "
		    "driver), else as its latest run's fingerprint recorded it; each clock's "
		    "governor, its hardware maximum (cpuinfo_max_freq, the OPP table) and the "
		    "highest it reached in the window%s.",
		    rep->n_boards > 1 ? ", beside its counterpart on the other board (paired by "
					"role: the big cluster with the big cluster)"
				      : "");
}

/* ---- load ---- */

/* The cpufreq policy of @b whose CPUs (runs_policy_cpus()) hold CPU @cpu, or NULL. */
static const struct channel *cluster_of_cpu(const struct report_board *b, long cpu) {
	for (size_t k = 0; k < b->stats.sel.n; k++) {
		const struct channel *ch = query_selection_channel(&b->stats.sel, k);
		bool has[RUNLOAD_CPUS_MAX];
		if (runs_policy_cpus(ch, has) && cpu >= 0 && cpu < RUNLOAD_CPUS_MAX && has[cpu]) {
			return ch;
		}
	}
	return NULL;
}

/* The part a load channel belongs to: "little cluster (cpufreq/policy0)", "NPU". */
static char *load_part(const struct report_board *b, const char *key) {
	char *end;
	if (strncmp(key, "load/cpu", 8) == 0 && key[8] >= '0' && key[8] <= '9') {
		long cpu = strtol(key + 8, &end, 10);
		const struct channel *p = *end ? NULL : cluster_of_cpu(b, cpu);
		if (p) {
			enum role r = report_role(b, p->key);
			return xasprintf("%s (%s)", r != ROLE_NONE ? role_text(r) : "cluster",
					 p->key);
		}
		return xstrdup("CPU");
	}
	if (strcmp(key, "load/cpu") == 0) {
		return xstrdup("all CPUs");
	}
	if (strncmp(key, "load/rknpu", 10) == 0) {
		return xstrdup("NPU core");
	}
	return xstrdup("device");
}

/* Each load channel of the window: mean and p95 from the statistics. */
static size_t window_loads(struct report_doc *doc, const struct report_board *b) {
	static const char *const head[] = {"CPU or core", "part", "mean %", "p95 %", "max %"};
	struct report_block *t = NULL;
	const struct query_stats *s = &b->stats;
	size_t n = 0;
	for (size_t k = 0; k < s->sel.n; k++) {
		const struct channel *ch = query_selection_channel(&s->sel, k);
		if (ch->kind != CHANNEL_KIND_LOAD || s->acc[k].count == 0) {
			continue;
		}
		if (!t) {
			t = report_table(doc, 5, head);
			t->right[0] = t->right[1] = false;
		}
		char *part = load_part(b, ch->key);
		report_row(t);
		const char *label = report_label(ch);
		report_cell(t, 0, *label ? "%s (%s)" : "%s", ch->key, label);
		report_cell(t, 1, "%s", part);
		report_num(t, 2, query_stats_mean(s, k), 1);
		report_num(t, 3, query_stats_percentile(s, k, 95), 1);
		report_num(t, 4, stats_value(s->acc[k].max_q, ch->resolution), 1);
		free(part);
		n++;
	}
	return n;
}

/* The role of a per-test load figure: a cluster "cluster/policyN" is its policy's. */
static const char *figure_part(const struct report_board *b, const char *key, char *buf,
			       size_t len) {
	if (strncmp(key, "cluster/", 8) == 0) {
		char policy[96];
		snprintf(policy, sizeof(policy), "cpufreq/%s", key + 8);
		enum role r = report_role(b, policy);
		snprintf(buf, len, "%s", r != ROLE_NONE ? role_text(r) : "CPU cluster");
	} else {
		snprintf(buf, len, "NPU core");
	}
	return buf;
}

/* Each shown label's CPU clusters and NPU cores while its ok runs were under way. */
static size_t label_loads(struct report_doc *doc, const struct report *rep,
			  const struct report_board *b) {
	static const char *const head[] = {"label", "cluster or core", "part", "mean %", "p95 %"};
	const struct testfig_result *figs = b->side ? runs_side_figures(b->side) : NULL;
	struct report_block *t = NULL;
	size_t n = 0;
	for (size_t i = 0; figs && i < figs->n; i++) {
		const struct testfig_label *l = &figs->labels[i];
		if (!report_label_shown(&rep->opt, l->label)) {
			continue;
		}
		for (size_t k = 0; k < l->n_loads; k++) {
			const struct testfig_figure *f = &l->loads[k];
			if (f->samples == 0) {
				continue; // not sampled while its runs were under way
			}
			if (!t) {
				t = report_table(doc, 5, head);
				t->right[0] = t->right[1] = t->right[2] = false;
			}
			char part[64];
			report_row(t);
			report_cell(t, 0, "%s", l->label);
			report_cell(t, 1, f->label ? "%s (%s)" : "%s", f->key, f->label);
			report_cell(t, 2, "%s", figure_part(b, f->key, part, sizeof(part)));
			report_num(t, 3, f->mean, 1);
			report_num(t, 4, f->p95, 1);
			n++;
		}
	}
	return n;
}

void report_load_section(struct report_doc *doc, const struct report *rep, size_t bi) {
	const struct report_board *b = &rep->boards[bi];
	report_section_of(doc, rep, bi, "Load");
	if (window_loads(doc, b) == 0) {
		report_para(doc,
			    "No load (CPU or NPU core busy share) was sampled in this window.");
	} else {
		report_para(
			doc,
			"Each CPU (with the cluster it belongs to) and NPU core over the window: "
			"the busy share in %%, mean and p95 %s, max of the samples.",
			report_weight_text(b->stats.weight));
	}
	if (label_loads(doc, rep, b) > 0) {
		report_para(doc,
			    "Per test label, while its ok runs were under way (runs stats "
			    "--board): a cluster's load is the mean of its CPUs' at each cycle, "
			    "weighed by time; p95 the weighted inverted CDF.");
	}
}

/* ---- throttling ---- */

/* "thermal 12, cap 1": the causes of the window's episodes of domain @name. */
static void causes(const struct throttle_report *r, const char *name, struct buf *out) {
	size_t count[2] = {0};
	for (size_t i = 0; i < r->n; i++) {
		if (strcmp(r->episodes[i].domain, name) == 0 && r->episodes[i].cause < 2) {
			count[r->episodes[i].cause]++;
		}
	}
	static const enum throttle_cause order[] = {THROTTLE_CAUSE_THERMAL, THROTTLE_CAUSE_CAP};
	for (size_t i = 0; i < 2; i++) {
		if (count[order[i]]) {
			buf_printf(out, "%s%s %zu", out->len ? ", " : "",
				   throttle_cause_name(order[i]), count[order[i]]);
		}
	}
	if (!out->len) {
		buf_puts(out, "-");
	}
}

static size_t domain_rows(struct report_doc *doc, const struct report_board *b) {
	static const char *const head[] = {"domain",  "episodes",    "throttled",
					   "share %", "deepest cap", "cause"};
	const struct throttle_report *r = &b->throttle;
	struct report_block *t = NULL;
	for (size_t i = 0; i < r->n_domains; i++) {
		const struct throttle_report_domain *d = &r->domains[i];
		if (!t) {
			t = report_table(doc, 6, head);
			t->right[0] = t->right[4] = t->right[5] = false;
		}
		char span[32], cap[96];
		unit_duration(span, sizeof(span), (double)d->throttled_ms / 1000);
		throttle_report_cap(cap, sizeof(cap), d->min_hz, d->max_hz);
		enum role role = report_role(b, d->name);
		struct buf c = {0};
		causes(r, d->name, &c);
		report_row(t);
		report_cell(t, 0, "%s%s%s%s", d->name, role != ROLE_NONE ? " (" : "",
			    role != ROLE_NONE ? role_text(role) : "", role != ROLE_NONE ? ")" : "");
		report_cell(t, 1, "%lld", (long long)d->episodes);
		report_cell(t, 2, "%s", span);
		report_num(t, 3, 100 * d->share, 2);
		report_cell(t, 4, "%s", cap);
		report_cell(t, 5, "%s", c.data);
		buf_finish(&c);
	}
	return r->n_domains;
}

static size_t label_throttle_rows(struct report_doc *doc, const struct report *rep,
				  const struct report_board *b) {
	static const char *const head[] = {"label", "ok runs known", "board's share %",
					   "loaded domains' share %", "domains loaded"};
	const struct testfig_result *figs = b->side ? runs_side_figures(b->side) : NULL;
	struct report_block *t = NULL;
	size_t n = 0;
	for (size_t i = 0; figs && i < figs->n; i++) {
		const struct testfig_label *l = &figs->labels[i];
		if (!report_label_shown(&rep->opt, l->label) || l->throttle_runs == 0) {
			continue;
		}
		if (!t) {
			t = report_table(doc, 5, head);
			t->right[0] = t->right[4] = false;
		}
		struct buf d = {0};
		for (size_t k = 0; k < l->n_loaded_domains; k++) {
			buf_printf(&d, "%s%s", k ? ", " : "", l->loaded_domains[k]);
		}
		report_row(t);
		report_cell(t, 0, "%s", l->label);
		report_cell(t, 1, "%zu of %zu", l->throttle_runs, l->runs);
		report_num(t, 2, 100 * l->board_share, 1);
		report_num(t, 3, 100 * l->loaded_share, 1);
		report_cell(t, 4, "%s", d.len ? d.data : "none");
		buf_finish(&d);
		n++;
	}
	return n;
}

void report_throttle_section(struct report_doc *doc, const struct report *rep, size_t bi) {
	const struct report_board *b = &rep->boards[bi];
	report_section_of(doc, rep, bi, "Throttling");
	if (domain_rows(doc, b) == 0) {
		report_para(doc, "No throttle episode in this window: no frequency domain's "
				 "effective maximum was below its hardware maximum.");
	} else {
		report_para(
			doc,
			"The window's throttle episodes per frequency domain (as thermlog "
			"throttle): how many, the throttled time and its share of the window, the "
			"deepest cap and the cause (thermal: a passive trip crossed or a capping "
			"cooling device active; cap: neither).");
	}
	if (label_throttle_rows(doc, rep, b) > 0) {
		report_para(doc,
			    "Per test label, the share of its ok runs' time (weighed by their "
			    "durations) that any domain was capped (the board's) and that the "
			    "domains the run loaded (a CPU cluster or the NPU busy 25 %% or more) "
			    "were.");
	}
}
