/* The JSON writer: structure, escaping and number round-trips. */
#include <stdlib.h>

#include "buf.h"
#include "json.h"
#include "test.h"

static void test_structure(void) {
	struct buf b;
	buf_init(&b);
	struct json j;
	json_init(&j, &b, false);
	json_object_begin(&j);
	json_key(&j, "a");
	json_array_begin(&j);
	json_int(&j, -3);
	json_double(&j, 0.1);
	json_null(&j);
	json_bool(&j, true);
	json_array_end(&j);
	json_key(&j, "s");
	json_string(&j, "q\"\\\n\x01");
	json_key(&j, "nan");
	json_double(&j, NAN);
	json_key(&j, "empty");
	json_object_begin(&j);
	json_object_end(&j);
	json_object_end(&j);
	is_str(b.data,
	       "{\"a\":[-3,0.1,null,true],\"s\":\"q\\\"\\\\\\n\\u0001\",\"nan\":null,\"empty\":{}}",
	       "compact object with escapes and null for NaN");
	buf_finish(&b);
}

static void test_pretty(void) {
	struct buf b;
	buf_init(&b);
	struct json j;
	json_init(&j, &b, true);
	json_object_begin(&j);
	json_key(&j, "k");
	json_array_begin(&j);
	json_int(&j, 1);
	json_int(&j, 2);
	json_array_end(&j);
	json_object_end(&j);
	is_str(b.data, "{\n  \"k\": [\n    1,\n    2\n  ]\n}",
	       "pretty printing indents two spaces");
	buf_finish(&b);
}

/* Each field writer equals json_key() and its value call, compact and pretty alike. */
static void test_fields(void) {
	for (int pretty = 0; pretty <= 1; pretty++) {
		struct buf by_field, by_key;
		buf_init(&by_field);
		buf_init(&by_key);
		struct json f, k;
		json_init(&f, &by_field, pretty);
		json_init(&k, &by_key, pretty);
		json_object_begin(&f);
		json_field_string(&f, "s", "a\"b");
		json_field_string(&f, "none", NULL);
		json_field_int(&f, "i", -42);
		json_field_double(&f, "d", 0.1);
		json_field_double(&f, "nan", NAN);
		json_field_fixed(&f, "x", 2.0 / 3.0, 3);
		json_field_bool(&f, "b", false);
		json_field_null(&f, "n");
		json_field_raw(&f, "r", "{\"a\":[1]}");
		json_field_raw(&f, "no_r", NULL);
		json_field_int_or_null(&f, "known_i", true, 7);
		json_field_int_or_null(&f, "absent_i", false, 7);
		json_field_double_or_null(&f, "known_d", true, 1.5);
		json_field_double_or_null(&f, "absent_d", false, 1.5);
		json_object_end(&f);

		json_object_begin(&k);
		json_key(&k, "s");
		json_string(&k, "a\"b");
		json_key(&k, "none");
		json_null(&k);
		json_key(&k, "i");
		json_int(&k, -42);
		json_key(&k, "d");
		json_double(&k, 0.1);
		json_key(&k, "nan");
		json_null(&k);
		json_key(&k, "x");
		json_fixed(&k, 2.0 / 3.0, 3);
		json_key(&k, "b");
		json_bool(&k, false);
		json_key(&k, "n");
		json_null(&k);
		json_key(&k, "r");
		json_raw(&k, "{\"a\":[1]}");
		json_key(&k, "no_r");
		json_null(&k);
		json_key(&k, "known_i");
		json_int(&k, 7);
		json_key(&k, "absent_i");
		json_null(&k);
		json_key(&k, "known_d");
		json_double(&k, 1.5);
		json_key(&k, "absent_d");
		json_null(&k);
		json_object_end(&k);

		is_str(by_field.data, by_key.data,
		       pretty ? "field writers match key + value (pretty)"
			      : "field writers match key + value (compact)");
		buf_finish(&by_field);
		buf_finish(&by_key);
	}

	struct buf b;
	buf_init(&b);
	struct json j;
	json_init(&j, &b, false);
	json_object_begin(&j);
	json_field_int(&j, "id", 3);
	json_field_string(&j, "label", "x");
	json_field_fixed(&j, "s", 1.23456, 2);
	json_field_bool(&j, "ok", true);
	json_field_raw(&j, "tags", "[\"a\"]");
	json_field_raw(&j, "argv", NULL);
	json_field_time(&j, "t", 1787184000);
	json_field_time_ms(&j, "t_ms", INT64_C(1787184000250));
	json_field_time_ms(&j, "whole_ms", INT64_C(1787184000000));
	json_field_time_or_null(&j, "no_t", false, 1787184000);
	json_field_time_ms_or_null(&j, "t_ms2", true, INT64_C(1787184000001));
	json_field_int_or_null(&j, "exit", false, 0);
	json_field_double_or_null(&j, "c", true, 41.5);
	json_object_end(&j);
	is_str(b.data,
	       "{\"id\":3,\"label\":\"x\",\"s\":1.23,\"ok\":true,\"tags\":[\"a\"],\"argv\":null,\"t\":\"2026-08-20T00:00:00Z\",\"t_ms\":\"2026-08-20T00:00:00.250Z\",\"whole_ms\":\"2026-08-20T00:00:00Z\",\"no_t\":null,\"t_ms2\":\"2026-08-20T00:00:00.001Z\",\"exit\":null,\"c\":41.5}",
	       "field writers: the bytes of an object");
	buf_finish(&b);
}

static void test_doubles(void) {
	char text[32];
	const double values[] = {75.769, 1e-9, 2400000000.0, -0.25, 1.0 / 3.0, 131400};
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		json_format_double(text, values[i]);
		ok(strtod(text, NULL) == values[i], "double round-trips exactly");
	}
	json_format_double(text, 75.769);
	is_str(text, "75.769", "shortest form kept");
	json_format_double(text, 131400);
	is_str(text, "131400", "integers print without exponent");
	// json_decimal: a value known to some decimals, without the float noise behind them
	const struct {
		double v;
		int digits;
		const char *want;
	} dec[] = {{13853.531249999998, 5, "13853.53125"},
		   {70.79050000000001, 5, "70.7905"},
		   {12, 3, "12"},
		   {-0.0000001, 3, "0"},
		   {52.20074999999999, 5, "52.20075"}};
	for (size_t i = 0; i < sizeof(dec) / sizeof(dec[0]); i++) {
		struct buf b;
		buf_init(&b);
		struct json j;
		json_init(&j, &b, false);
		json_decimal(&j, dec[i].v, dec[i].digits);
		is_str(b.data, dec[i].want,
		       "json_decimal: the digits known, trailing zeros dropped");
		buf_finish(&b);
	}
}

static void put_caret(struct buf *b, unsigned char c) {
	buf_printf(b, "^%c", c + '@');
}

/* The escaping loop behind json_escape, report_escape_xml and the metrics' label values. */
static void test_escaped(void) {
	static const char *const escapes[128] = {['&'] = "&amp;", [0x7f] = "DEL"};
	struct buf b;
	buf_init(&b);
	buf_put_escaped(&b, "a&b\x01\x7f\xc3\xa9\t", escapes, put_caret);
	is_str(b.data, "a&amp;b^ADEL\xc3\xa9^I", "named escapes, control bytes, UTF-8 kept");
	buf_clear(&b);
	buf_put_escaped(&b, "&\x01\n", escapes, NULL);
	is_str(b.data, "&amp;\x01\n", "no control writer: control bytes kept");
	buf_clear(&b);
	json_escape(&b, "\"\\\n\r\t\x1f\x7f");
	is_str(b.data, "\\\"\\\\\\n\\r\\t\\u001f\x7f", "json_escape: DEL is not escaped");
	buf_finish(&b);
}

/* A list of strings: each in its order, escaped, NULL as null, [] for none; as the loop. */
static void test_strings(void) {
	struct buf b;
	buf_init(&b);
	struct json j;
	json_init(&j, &b, false);
	char *strings[] = {"a\"b", "c\\d\n", NULL, "\x01\xc3\xa9"};
	json_object_begin(&j);
	json_field_strings(&j, "s", strings, 4);
	json_field_strings(&j, "none", NULL, 0);
	json_key(&j, "bare");
	json_strings(&j, strings + 1, 1);
	json_object_end(&j);
	is_str(b.data,
	       "{\"s\":[\"a\\\"b\",\"c\\\\d\\n\",null,\"\\u0001\xc3\xa9\"],\"none\":[],"
	       "\"bare\":[\"c\\\\d\\n\"]}",
	       "strings: escaped, UTF-8 kept, NULL as null, none as []");
	// pretty: the same text as the loop of array_begin, json_string a string, array_end
	struct buf by_loop;
	buf_init(&by_loop);
	buf_clear(&b);
	struct json k;
	json_init(&j, &b, true);
	json_init(&k, &by_loop, true);
	json_object_begin(&j);
	json_field_strings(&j, "s", strings, 2);
	json_field_strings(&j, "none", strings, 0);
	json_object_end(&j);
	json_object_begin(&k);
	json_key(&k, "s");
	json_array_begin(&k);
	json_string(&k, strings[0]);
	json_string(&k, strings[1]);
	json_array_end(&k);
	json_key(&k, "none");
	json_array_begin(&k);
	json_array_end(&k);
	json_object_end(&k);
	is_str(b.data, by_loop.data, "strings, pretty: the bytes of the loop they replace");
	buf_finish(&by_loop);
	buf_finish(&b);
}

int main(void) {
	test_structure();
	test_escaped();
	test_pretty();
	test_fields();
	test_doubles();
	test_strings();
	return test_done();
}
