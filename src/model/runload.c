/* A run's load figures: mean and type-7 p95 of the busy shares per CPU cluster and NPU core. */
#include "runload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "runstats.h"
#include "stats.h"
#include "xalloc.h"

struct series {
	double *v;
	size_t n, cap;
};

static void series_add(struct series *s, double v) {
	s->v = xgrow(s->v, &s->cap, s->n + 1, sizeof(*s->v));
	s->v[s->n++] = v;
}

/* A channel with values: load/cpu (cpu -1), load/cpuN (cpu N), an NPU core (cpu -2). */
struct channel_values {
	char *key;
	int cpu;
	struct series s;
};

struct cluster {
	char *name;
	bool has[RUNLOAD_CPUS_MAX];
	double sum; // of the sample being read
	size_t n;
	struct series s;
};

struct runload {
	struct channel_values *ch;
	size_t n_ch, cap_ch;
	struct cluster *cl;
	size_t n_cl, cap_cl;
	int64_t ts_ms; // the sample being read
	bool open;
};

struct runload *runload_create(void) {
	return xcalloc(1, sizeof(struct runload));
}

void runload_destroy(struct runload *l) {
	if (!l) {
		return;
	}
	for (size_t i = 0; i < l->n_ch; i++) {
		free(l->ch[i].key);
		free(l->ch[i].s.v);
	}
	free(l->ch);
	for (size_t k = 0; k < l->n_cl; k++) {
		free(l->cl[k].name);
		free(l->cl[k].s.v);
	}
	free(l->cl);
	free(l);
}

bool runload_parse_cpus(const char *text, bool has[RUNLOAD_CPUS_MAX]) {
	size_t n = 0;
	for (const char *p = text; *p;) {
		if (*p == ' ' || *p == '\n' || *p == ',' || *p == '\t') {
			p++;
			continue;
		}
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;
		if (end == p || lo < 0 || lo >= RUNLOAD_CPUS_MAX) {
			return false;
		}
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p || hi < lo || hi >= RUNLOAD_CPUS_MAX) {
				return false;
			}
		}
		for (long c = lo; c <= hi; c++) {
			n += !has[c];
			has[c] = true;
		}
		p = end;
	}
	return n > 0;
}

void runload_add_cluster(struct runload *l, const char *name, const bool has[RUNLOAD_CPUS_MAX]) {
	l->cl = xgrow(l->cl, &l->cap_cl, l->n_cl + 1, sizeof(*l->cl));
	struct cluster *c = &l->cl[l->n_cl++];
	*c = (struct cluster){.name = xstrdup(name)};
	memcpy(c->has, has, sizeof(c->has));
}

/* The CPU of a load channel key: -1 for load/cpu, N for load/cpuN, -2 for an NPU core, -3 for
 * any other key. */
static int key_cpu(const char *key) {
	if (strcmp(key, "load/cpu") == 0) {
		return -1;
	}
	if (strcmp(key, "load/rknpu") == 0 || strncmp(key, "load/rknpu/core", 15) == 0) {
		return -2;
	}
	if (strncmp(key, "load/cpu", 8) == 0) {
		char *end;
		long c = strtol(key + 8, &end, 10);
		if (end != key + 8 && !*end && c >= 0 && c < RUNLOAD_CPUS_MAX) {
			return (int)c;
		}
	}
	return -3;
}

/* Closes the sample read so far: each cluster with a CPU share in it adds their mean. */
static void sample_end(struct runload *l) {
	for (size_t k = 0; k < l->n_cl; k++) {
		struct cluster *c = &l->cl[k];
		if (c->n > 0) {
			series_add(&c->s, c->sum / (double)c->n);
		}
		c->sum = 0;
		c->n = 0;
	}
	l->open = false;
}

void runload_add(struct runload *l, int64_t ts_ms, const char *key, double pct) {
	int cpu = key_cpu(key);
	if (cpu == -3 || !isfinite(pct)) {
		return;
	}
	if (l->open && ts_ms != l->ts_ms) {
		sample_end(l);
	}
	l->open = true;
	l->ts_ms = ts_ms;
	struct channel_values *ch = NULL;
	for (size_t i = 0; i < l->n_ch && !ch; i++) {
		ch = strcmp(l->ch[i].key, key) == 0 ? &l->ch[i] : NULL;
	}
	if (!ch) {
		l->ch = xgrow(l->ch, &l->cap_ch, l->n_ch + 1, sizeof(*l->ch));
		ch = &l->ch[l->n_ch++];
		*ch = (struct channel_values){.key = xstrdup(key), .cpu = cpu};
	}
	series_add(&ch->s, pct);
	for (size_t k = 0; cpu >= 0 && k < l->n_cl; k++) {
		if (l->cl[k].has[cpu]) {
			l->cl[k].sum += pct;
			l->cl[k].n++;
		}
	}
}

static int cmp_double(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* @v to 0.001, the double nearest that decimal (no float noise in the JSON). */
static double milli(double v) {
	return stats_value(llround(v * 1000), 0.001);
}

/* "mean_pct", "p95_pct" and "samples" of @s (at least one value). */
static void series_json(struct json *j, struct series *s) {
	qsort(s->v, s->n, sizeof(*s->v), cmp_double);
	double sum = 0;
	for (size_t i = 0; i < s->n; i++) {
		sum += s->v[i];
	}
	json_field_double(j, "mean_pct", milli(sum / (double)s->n));
	json_field_double(j, "p95_pct", milli(runstats_quantile_sorted(s->v, s->n, 95)));
	json_field_int(j, "samples", (int64_t)s->n);
}

/* "0-3", "4-5", "0,2,4-7": the CPUs of @has, consecutive ones as ranges. */
static void cpus_text(const bool has[RUNLOAD_CPUS_MAX], struct buf *out) {
	for (int c = 0; c < RUNLOAD_CPUS_MAX; c++) {
		if (!has[c]) {
			continue;
		}
		int last = c;
		while (last + 1 < RUNLOAD_CPUS_MAX && has[last + 1]) {
			last++;
		}
		buf_printf(out, out->len ? ",%d" : "%d", c);
		if (last > c) {
			buf_printf(out, "-%d", last);
		}
		c = last;
	}
}

void runload_write_json(struct runload *l, struct json *j, const char *method) {
	if (l->open) {
		sample_end(l);
	}
	struct channel_values *all = NULL;
	size_t n_npu = 0, n_cl = 0;
	for (size_t i = 0; i < l->n_ch; i++) {
		all = l->ch[i].cpu == -1 ? &l->ch[i] : all;
		n_npu += l->ch[i].cpu == -2;
	}
	for (size_t k = 0; k < l->n_cl; k++) {
		n_cl += l->cl[k].s.n > 0;
	}
	if (!all && n_npu == 0 && n_cl == 0) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	if (all) {
		json_key(j, "cpu");
		json_object_begin(j);
		series_json(j, &all->s);
		json_object_end(j);
	}
	if (n_cl > 0) {
		json_key(j, "clusters");
		json_array_begin(j);
		for (size_t k = 0; k < l->n_cl; k++) {
			if (l->cl[k].s.n == 0) {
				continue;
			}
			struct buf cpus;
			buf_init(&cpus);
			cpus_text(l->cl[k].has, &cpus);
			json_object_begin(j);
			json_field_string(j, "name", l->cl[k].name);
			json_field_string(j, "cpus", cpus.data);
			series_json(j, &l->cl[k].s);
			json_object_end(j);
			buf_finish(&cpus);
		}
		json_array_end(j);
	}
	if (n_npu > 0) {
		json_key(j, "npu");
		json_array_begin(j);
		for (size_t i = 0; i < l->n_ch; i++) {
			if (l->ch[i].cpu != -2) {
				continue;
			}
			const char *core = strrchr(l->ch[i].key, '/') + 1;
			json_object_begin(j);
			json_field_string(j, "core", strcmp(core, "rknpu") == 0 ? "all" : core);
			json_field_string(j, "channel", l->ch[i].key);
			series_json(j, &l->ch[i].s);
			json_object_end(j);
		}
		json_array_end(j);
	}
	json_field_string(j, "method", method);
	json_object_end(j);
}
