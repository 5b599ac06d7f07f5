/*
 * libFuzzer target for the strict JSON reader: any input is either refused with a position
 * inside it, or read into a tree that jsonread_write() writes back (compact and pretty) and
 * the reader reads again into the same tree. A tree that is an object is also read as a run
 * start, a run stop and a metrics request (runwire.h): either refused with a message, or
 * accepted, and an accepted one written back reads the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"
#include "jsonread.h"
#include "runwire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(const struct jsonread_node *a, const struct jsonread_node *b) {
	if (a->kind != b->kind || a->n != b->n || a->len != b->len ||
	    (a->text && (!b->text || memcmp(a->text, b->text, a->len) != 0))) {
		return false;
	}
	for (size_t i = 0; i < a->n; i++) {
		if (!same(a->items[i], b->items[i])) {
			return false;
		}
	}
	return true;
}

static struct jsonread_node *reparse(const struct buf *b) {
	struct jsonread_error err;
	struct jsonread_node *n = jsonread_parse(b->data, b->len, SIZE_MAX, &err);
	if (!n) {
		abort(); // what runwire writes is JSON
	}
	return n;
}

static bool same_text(const char *a, const char *b) {
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void run_requests(const struct jsonread_node *root) {
	struct runwire_start_read in, again;
	char *msg = NULL;
	if (runwire_start_read(root, &in, &msg)) {
		struct buf b = {0};
		runwire_start_write(&in.s, &b);
		struct jsonread_node *n = reparse(&b);
		if (!runwire_start_read(n, &again, &msg) || !same_text(in.s.label, again.s.label) ||
		    !same_text(in.s.tags, again.s.tags) || !same_text(in.s.argv, again.s.argv) ||
		    in.s.has_pid != again.s.has_pid || in.s.pid != again.s.pid) {
			abort();
		}
		runwire_start_read_finish(&again);
		jsonread_node_free(n);
		buf_finish(&b);
	} else if (!msg || !msg[0]) {
		abort(); // a refusal says why
	}
	free(msg);
	msg = NULL;
	runwire_start_read_finish(&in);
	struct runwire_stop stop, back;
	if (runwire_stop_read(root, &stop, &msg)) {
		struct buf b = {0};
		runwire_stop_write(&stop, &b);
		struct jsonread_node *n = reparse(&b);
		if (!runwire_stop_read(n, &back, &msg) || back.has_status != stop.has_status ||
		    back.exit_code != stop.exit_code || back.signal != stop.signal ||
		    back.rss_max_bytes != stop.rss_max_bytes ||
		    !same_text(back.error, stop.error) || back.metrics.n != stop.metrics.n) {
			abort();
		}
		runwire_stop_finish(&back);
		jsonread_node_free(n);
		buf_finish(&b);
	} else if (!msg || !msg[0]) {
		abort();
	}
	runwire_stop_finish(&stop);
	free(msg);
	msg = NULL;
	struct runmetric_set metrics;
	if (runwire_metrics_read(root, &metrics, &msg)) {
		struct buf b = {0};
		runwire_metrics_write(&metrics, &b);
		struct jsonread_node *n = reparse(&b);
		struct runmetric_set again;
		if (!runwire_metrics_read(n, &again, &msg) || again.n != metrics.n) {
			abort();
		}
		runmetric_set_finish(&again);
		jsonread_node_free(n);
		buf_finish(&b);
	} else if (!msg || !msg[0]) {
		abort();
	}
	runmetric_set_finish(&metrics);
	free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct jsonread_error err;
	struct jsonread_node *root =
		jsonread_parse((const char *)data, size, JSONREAD_MAX_LEN, &err);
	if (!root) {
		if (err.offset > size || err.line == 0 || err.col == 0 || err.msg[0] == '\0') {
			abort(); // every refusal names a place inside the input and a reason
		}
		return 0;
	}
	for (int pretty = 0; pretty < 2; pretty++) {
		struct buf out;
		buf_init(&out);
		struct json j;
		json_init(&j, &out, pretty);
		jsonread_write(&j, root);
		struct jsonread_node *again = jsonread_parse(out.data, out.len, SIZE_MAX, &err);
		if (!again || !same(root, again)) {
			abort(); // what we read, we write back as the same value
		}
		jsonread_node_free(again);
		buf_finish(&out);
	}
	if (root->kind == JSONREAD_OBJECT) {
		run_requests(root);
	}
	jsonread_node_free(root);
	return 0;
}
