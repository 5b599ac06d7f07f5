/* The CLI's table formatter: widths by display column, alignment, units and numbers as shown. */
#include <math.h>
#include <stdlib.h>

#include "buf.h"
#include "table.h"
#include "test.h"

static void test_alignment(void) {
	struct buf b;
	buf_init(&b);
	struct table t;
	table_init(&t, 3);
	t.right[1] = true;
	table_row(&t);
	table_set(&t, 0, "channel");
	table_set(&t, 1, "unit");
	table_set(&t, 2, "max");
	table_row(&t);
	table_set(&t, 0, "soc");
	table_set(&t, 1, "°C"); // two bytes of UTF-8 for the degree sign, one column
	table_set(&t, 2, "%d", 42);
	table_row(&t); // a row with empty cells
	table_set(&t, 0, "%s", "thermal/gpu");
	table_print(&t, &b);
	// The header row stays left-aligned; no trailing spaces, also where the last cells are
	// empty.
	is_str(b.data,
	       "channel      unit  max\n"
	       "soc            °C  42\n"
	       "thermal/gpu\n",
	       "columns sized by display width, numbers right-aligned, header left");
	ok(t.cells == NULL && t.right == NULL, "printing frees the table");
	buf_finish(&b);
	table_finish(&t); // a printed table may be finished again
}

static void test_align_right(void) {
	struct buf b;
	buf_init(&b);
	struct table t;
	table_init(&t, 4);
	table_align_right(&t, 1, 3);
	ok(!t.right[0] && t.right[1] && t.right[2] && !t.right[3], "columns [1, 3) right-aligned");
	table_row(&t);
	table_set(&t, 0, "name");
	table_set(&t, 1, "min");
	table_set(&t, 2, "max");
	table_set(&t, 3, "note");
	table_row(&t);
	table_set(&t, 0, "a");
	table_set(&t, 1, "1.5");
	table_set(&t, 2, "12");
	table_set(&t, 3, "x");
	table_print(&t, &b);
	is_str(b.data,
	       "name  min  max  note\n"
	       "a     1.5   12  x\n",
	       "the aligned columns' numbers end under their header's end");
	buf_finish(&b);
}

static void test_units_and_numbers(void) {
	double f;
	is_str(table_unit("celsius", &f), "°C", "celsius reads as °C");
	is_near(f, 1, 0, "factor 1");
	is_str(table_unit("hertz", &f), "MHz", "hertz reads as MHz");
	is_near(f, 1e-6, 1e-18, "factor 1e-6");
	is_str(table_unit("state", &f), "state", "a column names a bare count's unit");
	is_str(table_unit(NULL, &f), "", "no unit: empty");
	is_str(table_unit("bytes", &f), "MiB", "memory reads in MiB, as thermlog sample shows it");
	struct channel mhz = {.key = "cpufreq/policy0", .unit = "hertz", .resolution = 1000};
	struct channel temp = {.key = "thermal/soc", .unit = "celsius", .resolution = 0.001};
	struct channel coarse = {.key = "x/v", .unit = "volts", .resolution = 0.25};
	is_int(table_digits(&mhz, 1e-6), 0, "frequencies in whole MHz");
	is_int(table_digits(&temp, 1), 3, "millidegrees: three places");
	is_int(table_digits(&coarse, 1), 2, "a quarter volt: two places");
	struct channel mem = {.key = "meminfo/available", .unit = "bytes", .resolution = 1024};
	is_int(table_digits(&mem, 1.0 / 1048576), 1, "memory to 0.1 MiB");
	char *text = table_value(&mem, 3199496192.0);
	is_str(text, "3051.3 MiB", "a memory value as sample shows it");
	free(text);
	struct channel tc = {.key = "iio/tc/temp", .unit = "celsius", .resolution = 0.0625};
	text = table_value(&tc, 23.5625);
	is_str(text, "23.5625 °C", "one reading keeps its resolution's places");
	free(text);
	char v[32];
	table_number(v, sizeof(v), 2400000000.0, 1e-6, 0);
	is_str(v, "2400", "2.4 GHz as 2400");
	table_number(v, sizeof(v), NAN, 1, 3);
	is_str(v, "-", "no value: -");
}

int main(void) {
	test_alignment();
	test_align_right();
	test_units_and_numbers();
	return test_done();
}
