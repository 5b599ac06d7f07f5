/*
 * libFuzzer target for a run's metrics and the job log that carries them: any input read as a
 * THERMLOG_METRICS file, as NAME=VALUE[UNIT] and as a job log (metric: and tag: columns) keeps
 * only metrics and tags that follow the rules (a name of the label rule, a finite value, a valid
 * unit), names every bad line with a line inside the input, and a set written as JSON reads back
 * the same.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "jobcsv.h"
#include "json.h"
#include "jsonread.h"
#include "runmetric.h"
#include "runtag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_set(const struct runmetric_set *set) {
	for (size_t i = 0; i < set->n; i++) {
		const struct runmetric *m = &set->m[i];
		if (!runtag_name_valid(m->name) || !isfinite(m->value) ||
		    !runmetric_unit_valid(m->unit) || runmetric_find(set, m->name) != m) {
			abort();
		}
	}
	if (set->n > RUNMETRIC_MAX) {
		abort();
	}
	struct buf b = {0};
	struct json j;
	json_init(&j, &b, false);
	runmetric_write_json(set, &j);
	struct jsonread_error err;
	struct jsonread_node *n = jsonread_parse(b.data, b.len, SIZE_MAX, &err);
	struct runmetric_set back = {0};
	char *msg = NULL;
	if (!n || !runmetric_read_json(n, &back, &msg) || back.n != set->n) {
		abort(); // what is written reads back
	}
	for (size_t i = 0; i < set->n; i++) {
		const struct runmetric *m = runmetric_find(&back, set->m[i].name);
		if (!m || m->value != set->m[i].value || strcmp(m->unit, set->m[i].unit) != 0) {
			abort();
		}
	}
	runmetric_set_finish(&back);
	jsonread_node_free(n);
	buf_finish(&b);
}

static void as_file(const char *text, size_t size) {
	struct runmetric_set set = {0};
	struct buf errors = {0};
	size_t bad = runmetric_parse_file(text, size, "F", &set, &errors);
	if ((bad > 0) != (errors.len > 0)) {
		abort(); // every bad line is named, and only bad lines are
	}
	size_t lines = 1;
	for (size_t i = 0; i < size; i++) {
		lines += text[i] == '\n';
	}
	// Each error is one line "F:LINE: why" (or "F: N more bad lines not listed"); only its
	// start names a line: the why may quote the input's own bytes, "F:2" among them.
	for (const char *p = errors.data; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "F:", 2) != 0) {
			abort(); // every error names the file
		}
		if (p[2] >= '0' && p[2] <= '9') {
			unsigned long line = strtoul(p + 2, NULL, 10);
			if (line == 0 || line > lines) {
				abort(); // a line inside the input
			}
		}
	}
	check_set(&set);
	runmetric_set_finish(&set);
	buf_finish(&errors);
}

static void as_job_log(const uint8_t *data, size_t size) {
	FILE *in = fmemopen((void *)data, size, "r");
	if (!in) {
		return;
	}
	struct jobcsv log = {0};
	struct buf errors = {0};
	jobcsv_parse(in, "jobs.csv", "job", 1, &log, &errors);
	for (size_t i = 0; i < log.n; i++) {
		check_set(&log.rows[i].metrics);
		const struct runtag_list *t = &log.rows[i].tags;
		for (size_t k = 0; k < t->n; k++) {
			if (!runtag_name_valid(t->tags[k].key) ||
			    !runtag_name_valid(t->tags[k].value)) {
				abort(); // a tag follows the label rule
			}
		}
	}
	jobcsv_finish(&log);
	buf_finish(&errors);
	fclose(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	if (size > RUNMETRIC_FILE_MAX) {
		return 0;
	}
	as_file((const char *)data, size);
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	if (strlen(text) == size) {
		struct runmetric_set set = {0};
		char *err = NULL;
		if (!runmetric_parse_assignment(text, &set, &err) && (!err || !*err)) {
			abort(); // a refusal says why
		}
		check_set(&set);
		runmetric_set_finish(&set);
		free(err);
	}
	free(text);
	as_job_log(data, size);
	return 0;
}
