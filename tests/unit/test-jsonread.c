/* The strict JSON reader: what it accepts, what it refuses, and where it says the fault is. */
#include "jsonread.h"

#include "buf.h"
#include "test.h"

static struct jsonread_node *parse(const char *text, struct jsonread_error *err) {
	return jsonread_parse(text, strlen(text), JSONREAD_MAX_LEN, err);
}

/* @text is refused at @line:@col with a message containing @want. */
static void refused(const char *text, size_t line, size_t col, const char *want) {
	struct jsonread_error err;
	struct jsonread_node *n = parse(text, &err);
	char what[200];
	snprintf(what, sizeof(what), "refused: %s", text);
	if (!ok(n == NULL, what)) {
		jsonread_node_free(n);
		return;
	}
	snprintf(what, sizeof(what), "names the fault: %s", want);
	ok(strstr(err.msg, want) != NULL, what);
	if (!strstr(err.msg, want)) {
		printf("#   got \"%s\"\n", err.msg);
	}
	is_int(err.line, line, "line");
	is_int(err.col, col, "column");
}

static void test_values(void) {
	struct jsonread_error err;
	struct jsonread_node *n = parse(
		" {\"a\": [1, -2.5e3, 0, true, false, null], \"b\": {\"c\": \"d\"}, \"\": \"\"}\n",
		&err);
	if (!ok(n != NULL, "an object of every kind")) {
		printf("#   %s\n", err.msg);
		return;
	}
	is_int(n->kind, JSONREAD_OBJECT, "root is an object");
	is_int(n->n, 6, "three members, key and value each");
	const struct jsonread_node *a = jsonread_get(n, "a");
	ok(a && a->kind == JSONREAD_ARRAY && a->n == 6, "array of six");
	is_str(a->items[0]->text, "1", "a number keeps its literal");
	is_near(a->items[1]->number, -2500, 0, "and its value");
	int64_t x = 0;
	ok(jsonread_int(a->items[0], 0, 10, &x) && x == 1, "an integer in range");
	ok(!jsonread_int(a->items[1], -10000, 10000, &x), "a fraction or exponent is no integer");
	ok(!jsonread_int(a->items[0], 2, 10, &x), "out of range");
	is_int(a->items[3]->kind, JSONREAD_TRUE, "true");
	is_int(a->items[5]->kind, JSONREAD_NULL, "null");
	is_str(jsonread_string(jsonread_get(jsonread_get(n, "b"), "c")), "d", "nested string");
	is_str(jsonread_string(jsonread_get(n, "")), "", "empty key and value");
	ok(jsonread_get(n, "z") == NULL, "absent key");
	is_int(a->line, 1, "line of a");
	is_int(a->col, 8, "column of a");
	is_int(a->offset, 7, "offset of a");
	is_str(jsonread_describe(a), "an array", "describe");
	jsonread_node_free(n);

	n = parse("[\"x\",\n  {\"k\":\n\t\"v\"}]", &err);
	ok(n && n->items[1]->line == 2 && n->items[1]->col == 3, "line:column after a newline");
	ok(n && n->items[1]->items[1]->line == 3 && n->items[1]->items[1]->col == 2,
	   "a value on its own line");
	jsonread_node_free(n);

	n = parse("\"\\ud83d\\udd25 \\u00e9\\n\\\"\\/\\\\\\b\\f\\r\\t\"", &err);
	is_str(n ? n->text : NULL, "\xf0\x9f\x94\xa5 \xc3\xa9\n\"/\\\b\f\r\t",
	       "surrogate pair and escapes decoded to UTF-8");
	jsonread_node_free(n);
	n = parse("\"\xf0\x9f\x94\xa5\xe2\x82\xac\"", &err);
	is_str(n ? n->text : NULL, "\xf0\x9f\x94\xa5\xe2\x82\xac", "raw UTF-8 passes");
	jsonread_node_free(n);
	n = parse("-0", &err);
	ok(n && n->kind == JSONREAD_NUMBER, "-0 is a number");
	jsonread_node_free(n);
}

static void test_refused(void) {
	refused("", 1, 1, "expected a value, got the end");
	refused("{\"a\":1,\"a\":2}", 1, 8, "duplicate key 'a'");
	refused("{\"a\":1} x", 1, 9, "trailing text");
	refused("{\"a\":1}{}", 1, 8, "trailing text");
	refused("\"\\ud83d\"", 1, 2, "lone high surrogate");
	refused("\"\\ud83dx\"", 1, 2, "lone high surrogate");
	refused("\"\\ud83d\\u0041\"", 1, 2, "lone high surrogate");
	refused("\"\\udd25\"", 1, 2, "lone low surrogate");
	refused("\"a\x1b\"", 1, 3, "control character 0x1b");
	refused("\"a\nb\"", 1, 3, "control character 0x0a");
	refused("\"\xc3\"", 1, 2, "invalid UTF-8");
	refused("\"\xc0\xaf\"", 1, 2, "invalid UTF-8");         // overlong '/'
	refused("\"\xed\xa0\x80\"", 1, 2, "invalid UTF-8");     // a surrogate as UTF-8
	refused("\"\xf4\x90\x80\x80\"", 1, 2, "invalid UTF-8"); // beyond U+10FFFF
	refused("\"\\u0000\"", 1, 2, "\\u0000");
	refused("\"\\x41\"", 1, 2, "bad escape");
	refused("\"\\u12g4\"", 1, 2, "four hex digits");
	refused("\"abc", 1, 1, "unterminated string");
	refused("01", 1, 1, "leading zero");
	refused("[-]", 1, 2, "expected a digit");
	refused("1.", 1, 1, "after '.'");
	refused("1e+", 1, 1, "exponent");
	refused("1e999", 1, 1, "out of range");
	refused("[1,]", 1, 4, "expected a value");
	refused("{\"a\" 1}", 1, 6, "expected ':'");
	refused("{a:1}", 1, 2, "expected a string key");
	refused("{\"a\":1,}", 1, 8, "expected a string key");
	refused("[1 2]", 1, 4, "expected ',' or ']'");
	refused("truex", 1, 1, "expected a value");
	refused("nul", 1, 1, "expected a value");
	refused("&a [1]", 1, 1, "expected a value, got '&'");
	refused("{\"a\": 'x'}", 1, 7, "got '''");
	refused("NaN", 1, 1, "expected a value");
	refused("\n\n  [1,\n x]", 4, 2, "got 'x'");
	refused("\xef\xbb\xbf{}", 1, 1, "got 0xef"); // RFC 8259: no byte order mark

	char deep[80] = "";
	for (int i = 0; i < JSONREAD_MAX_DEPTH; i++) {
		strcat(deep, "[");
	}
	for (int i = 0; i < JSONREAD_MAX_DEPTH; i++) {
		strcat(deep, "]");
	}
	struct jsonread_error err;
	struct jsonread_node *n = parse(deep, &err);
	ok(n != NULL, "nesting at the limit is read");
	jsonread_node_free(n);
	memmove(deep + 1, deep, strlen(deep) + 1);
	deep[0] = '[';
	strcat(deep, "]");
	refused(deep, 1, JSONREAD_MAX_DEPTH + 1, "nested deeper than");

	struct buf big;
	buf_init(&big);
	buf_putc(&big, '"');
	while (big.len < JSONREAD_MAX_LEN) {
		buf_putc(&big, 'x');
	}
	buf_putc(&big, '"');
	n = jsonread_parse(big.data, big.len, JSONREAD_MAX_LEN, &err);
	ok(n == NULL && strstr(err.msg, "exceeds 65536 bytes"), "over the limit: refused unread");
	jsonread_node_free(n);
	n = jsonread_parse(big.data, big.len, big.len, &err);
	ok(n != NULL && n->len == JSONREAD_MAX_LEN - 1, "a larger limit reads it");
	jsonread_node_free(n);
	buf_finish(&big);

	// An embedded NUL is no part of a value: the length counts, not the terminator.
	n = jsonread_parse("[1]\0", 4, JSONREAD_MAX_LEN, &err);
	ok(n == NULL && strstr(err.msg, "trailing text after the value: 0x00"), "a NUL after it");
	jsonread_node_free(n);
}

int main(void) {
	test_values();
	test_refused();
	return test_done();
}
