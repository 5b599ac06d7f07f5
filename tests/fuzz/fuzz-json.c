/*
 * libFuzzer target for the strict JSON reader: any input is either refused with a position
 * inside it, or read into a tree that jsonread_write() writes back (compact and pretty) and
 * the reader reads again into the same tree.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"
#include "jsonread.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct jsonread_error err;
	struct jsonread_node *root = jsonread_parse((const char *)data, size, JSONREAD_MAX_LEN, &err);
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
	jsonread_node_free(root);
	return 0;
}
