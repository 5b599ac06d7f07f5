/* A run's names: the one text rule, and tags as KEY=VALUE pairs over a JSON object. */
#include "runtag.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "jsonread.h"
#include "xalloc.h"

bool runtag_text_valid(const char *s, size_t len, size_t max) {
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)s[i] < ' ' || s[i] == 0x7f) {
			return false;
		}
	}
	// Valid UTF-8 too: every answer writes it as JSON, which must read back.
	return len > 0 && len <= max && jsonread_utf8_valid(s, len);
}

bool runtag_name_valid(const char *s) {
	return runtag_text_valid(s, strlen(s), RUNTAG_TEXT_MAX);
}

void runtag_put(struct runtag_list *list, const char *key, const char *value) {
	for (size_t i = 0; i < list->n; i++) {
		if (strcmp(list->tags[i].key, key) == 0) {
			free(list->tags[i].value);
			list->tags[i].value = xstrdup(value);
			return;
		}
	}
	list->tags = xgrow(list->tags, &list->cap, list->n + 1, sizeof(*list->tags));
	list->tags[list->n++] = (struct runtag){xstrdup(key), xstrdup(value)};
}

bool runtag_parse(const char *kv, struct runtag_list *list, char **err) {
	const char *eq = strchr(kv, '=');
	if (!eq || eq == kv) {
		*err = xstrdup("expected KEY=VALUE");
		return false;
	}
	char *key = xstrndup(kv, (size_t)(eq - kv));
	bool good = runtag_name_valid(key) && runtag_name_valid(eq + 1);
	if (good) {
		runtag_put(list, key, eq + 1);
	} else {
		*err = xstrdup("key and value: expected " RUNTAG_TEXT_RULE);
	}
	free(key);
	return good;
}

void runtag_list_finish(struct runtag_list *list) {
	if (!list) {
		return;
	}
	for (size_t i = 0; i < list->n; i++) {
		free(list->tags[i].key);
		free(list->tags[i].value);
	}
	free(list->tags);
	*list = (struct runtag_list){0};
}

void runtag_list_json(const struct runtag_list *list, struct buf *out) {
	struct json j;
	json_init(&j, out, false);
	json_object_begin(&j);
	for (size_t i = 0; i < list->n; i++) {
		json_field_string(&j, list->tags[i].key, list->tags[i].value);
	}
	json_object_end(&j);
}

/* The stored tags as a tree, or NULL when there are none or they are not an object. */
static struct jsonread_node *tags_tree(const char *tags_json) {
	if (!tags_json) {
		return NULL;
	}
	struct jsonread_error err;
	size_t len = strlen(tags_json);
	struct jsonread_node *tree = jsonread_parse(tags_json, len, len, &err);
	if (tree && tree->kind != JSONREAD_OBJECT) {
		jsonread_node_free(tree);
		return NULL;
	}
	return tree;
}

bool runtag_match(const char *tags_json, const struct runtag_list *want) {
	if (want->n == 0) {
		return true;
	}
	struct jsonread_node *tree = tags_tree(tags_json);
	bool all = tree != NULL;
	for (size_t i = 0; all && i < want->n; i++) {
		const char *v = jsonread_string(jsonread_get(tree, want->tags[i].key));
		all = v && strcmp(v, want->tags[i].value) == 0;
	}
	jsonread_node_free(tree);
	return all;
}

char *runtag_value(const char *tags_json, const char *key) {
	struct jsonread_node *tree = tags_tree(tags_json);
	const char *v = jsonread_string(jsonread_get(tree, key));
	char *value = v ? xstrdup(v) : NULL;
	jsonread_node_free(tree);
	return value;
}
