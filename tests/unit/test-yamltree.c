/*
 * The YAML toolkit without thermlog's schema: the tree and its positions, typed getters, the
 * mapping checks with their suggestion, and errors reported as NAME:LINE:COL in file order.
 */
#include "yamltree.h"

#include <stdlib.h>
#include <string.h>

#include "test.h"

static struct yamltree_node *tree(struct yamltree *t, const char *text) {
	struct yamltree_node *root = NULL;
	ok(yamltree_build(t, text, strlen(text), &root) && root, "parsed");
	return root;
}

static const struct yamltree_node *value(const struct yamltree_node *map, const char *key) {
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		if (yamltree_key_is(map->items[i], key)) {
			return map->items[i + 1];
		}
	}
	return NULL;
}

static void test_tree_and_getters(void) {
	struct yamltree t = {.name = "t.yaml"};
	struct yamltree_node *root = tree(&t, "name: board\n"
					      "enabled: true\n"
					      "ratio: 0.25\n"
					      "every: 90s\n"
					      "list: [a, b]\n"
					      "empty:\n");
	is_int(root->kind, YAMLTREE_MAPPING, "the root is a mapping");
	const struct yamltree_node *every = value(root, "every");
	ok(every && every->line == 4 && every->col == 8, "positions are 1-based line and column");

	char *name = NULL;
	yamltree_get_string(&t, value(root, "name"), "name", &name);
	is_str(name, "board", "a string");
	bool enabled = false;
	yamltree_get_bool(&t, value(root, "enabled"), "enabled", &enabled);
	ok(enabled, "a boolean");
	double ratio = 0;
	yamltree_get_double(&t, value(root, "ratio"), "ratio", (struct yamltree_range){0, 1, true},
			    &ratio);
	is_near(ratio, 0.25, 0, "a number in its range");
	int64_t ms = 0;
	ok(yamltree_get_duration(&t, every, "every", 1000, 86400000, &ms) && ms == 90000,
	   "a duration in ms");
	char text[32];
	yamltree_format_duration(ms, text, sizeof(text));
	is_str(text, "90s", "and back as text");
	is_int(value(root, "list")->kind, YAMLTREE_SEQUENCE, "a flow list");
	ok(yamltree_is_null(value(root, "empty")), "an empty value is null");
	yamltree_get_optional_string(&t, value(root, "empty"), "empty", &name);
	ok(name == NULL, "which clears an optional string");
	is_int(t.n_errors, 0, "no errors");

	yamltree_get_double(&t, value(root, "ratio"), "ratio",
			    (struct yamltree_range){0.5, 1, false}, &ratio);
	yamltree_get_bool(&t, value(root, "name"), "name", &enabled);
	is_near(ratio, 0.25, 0, "out of range: the slot keeps its value");
	ok(enabled, "not a boolean: the slot keeps its value");
	char *errors = NULL;
	yamltree_flush_errors(&t, &errors);
	ok(errors && strstr(errors, "t.yaml:1:7: name: expected true or false, got 'board'") &&
		   strstr(errors, "t.yaml:3:8: ratio:"),
	   "errors name file, line and column");
	ok(errors && strstr(errors, "t.yaml:1:7") < strstr(errors, "t.yaml:3:8"),
	   "in file order, whatever order they were found in");
	free(errors);
	yamltree_node_free(root);
}

static void test_mapping_checks(void) {
	struct yamltree t = {.name = "m.yaml"};
	struct yamltree_node *root = tree(&t, "interval: 60s\nintervall: 5s\ninterval: 1s\n");
	static const char *const allowed[] = {"interval", "database", NULL};
	ok(yamltree_check_mapping(&t, root, "top level", allowed), "a mapping can be walked");
	char *errors = NULL;
	yamltree_flush_errors(&t, &errors);
	ok(errors && strstr(errors, "m.yaml:2:1: unknown key 'intervall' in top level: did you "
				    "mean 'interval'? (allowed: interval, database)"),
	   "an unknown key gets the nearest allowed one");
	ok(errors && strstr(errors, "m.yaml:3:1: duplicate key 'interval' in top level (first at "
				    "line 1)"),
	   "a duplicate key is reported where it repeats");
	free(errors);
	ok(!yamltree_check_sequence(&t, root, "list"), "a mapping is not a list");
	is_int(t.n_errors, 1, "and says so");
	yamltree_flush_errors(&t, NULL);
	yamltree_node_free(root);

	struct yamltree bad = {.name = "b.yaml"};
	struct yamltree_node *none = NULL;
	ok(!yamltree_build(&bad, "a: [1, 2\n", 9, &none), "a syntax error stops the parse");
	errors = NULL;
	yamltree_flush_errors(&bad, &errors);
	ok(errors && strncmp(errors, "b.yaml:", 7) == 0, "and is reported with its position");
	free(errors);
	yamltree_node_free(none);
}

int main(void) {
	test_tree_and_getters();
	test_mapping_checks();
	return test_done();
}
