/* Options kept as given: a text option's argument, a flag's being given, the others refused. */
#include <stdbool.h>

#include "plainopt.h"
#include "test.h"

int main(void) {
	const char *db = NULL;
	bool json = false, csv = false;
	const struct plain_option list[] = {
		{'d', &db, NULL},
		{300, NULL, &json},
		{301, NULL, &csv},
		{0},
	};
	char first[] = "first.db", second[] = "second.db";
	ok(plain_option_keep(list, 'd', first) && db == first, "a text option keeps its argument");
	ok(plain_option_keep(list, 'd', second) && db == second, "given again: the last one");
	ok(plain_option_keep(list, 300, NULL) && json && !csv, "a flag is set, no other");
	ok(!plain_option_keep(list, 'x', first) && db == second && !csv,
	   "an option of no entry: false, nothing kept");
	ok(!plain_option_keep(list, 0, first) && db == second, "the end of the list is no entry");
	ok(!plain_option_keep(NULL, 'd', first), "a NULL list keeps nothing");
	return test_done();
}
