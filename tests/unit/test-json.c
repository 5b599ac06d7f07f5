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
}

int main(void) {
	test_structure();
	test_pretty();
	test_doubles();
	return test_done();
}
