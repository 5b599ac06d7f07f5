/*
 * The board: and roles: sections of the configuration: what the configuration declares of its
 * board (a name, the cooling, SDK versions, notes) and the channels' roles given by hand, over
 * the YAML toolkit with the parser state config.c shares with it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "config-internal.h"
#include "xalloc.h"
#include "yamltree.h"

/* board: sdk: {NAME: VERSION, ...}. */
static void parse_sdk(struct parser *p, const struct yamltree_node *map, struct board_config *b) {
	if (!yamltree_check_mapping(&p->yt, map, "board.sdk", NULL)) {
		return;
	}
	if (map->n / 2 > CONFIG_BOARD_SDK_MAX) {
		yamltree_error_node(&p->yt, map, "board.sdk: at most %d entries",
				    CONFIG_BOARD_SDK_MAX);
		return;
	}
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *k = map->items[i], *v = map->items[i + 1];
		if (k->kind != YAMLTREE_SCALAR) {
			continue; // reported by yamltree_check_mapping()
		}
		char *name = NULL, *version = NULL;
		yamltree_get_text(&p->yt, k, "board.sdk", &name);
		yamltree_get_text(&p->yt, v, "board.sdk version", &version);
		if (name && version) {
			b->sdk[b->n_sdk].name = name;
			b->sdk[b->n_sdk++].version = version;
		} else {
			free(name);
			free(version);
		}
	}
}

void config_parse_board(struct parser *p, const struct yamltree_node *map) {
	static const char *const keys[] = {"name", "cooling", "sdk", "notes", NULL};
	struct board_config *b = &p->cfg->board;
	if (!yamltree_check_mapping(&p->yt, map, "board", keys)) {
		return;
	}
	b->declared = true;
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *k = map->items[i], *v = map->items[i + 1];
		if (yamltree_key_is(k, "name")) {
			yamltree_get_optional_text(&p->yt, v, "board.name", &b->name);
		} else if (yamltree_key_is(k, "cooling")) {
			yamltree_get_optional_text(&p->yt, v, "board.cooling", &b->cooling);
		} else if (yamltree_key_is(k, "notes")) {
			yamltree_get_optional_text(&p->yt, v, "board.notes", &b->notes);
		} else if (yamltree_key_is(k, "sdk")) {
			parse_sdk(p, v, b);
		}
	}
}

static int compare_roles(const void *a, const void *b) {
	return strcmp(((const struct config_role *)a)->key, ((const struct config_role *)b)->key);
}

/* The role names as a list for an error: "big-zone, little-zone, ...". */
static void role_names(char *out, size_t len) {
	size_t at = 0;
	out[0] = '\0';
	for (int r = 0; r < ROLE_COUNT && at < len; r++) {
		at += (size_t)snprintf(out + at, len - at, "%s%s", r ? ", " : "",
				       role_key((enum role)r));
	}
}

void config_parse_roles(struct parser *p, const struct yamltree_node *map) {
	struct config *cfg = p->cfg;
	if (!yamltree_check_mapping(&p->yt, map, "roles", NULL)) {
		return;
	}
	cfg->roles = xrealloc(cfg->roles, (cfg->n_roles + map->n / 2 + 1) * sizeof(*cfg->roles));
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yamltree_node *k = map->items[i], *v = map->items[i + 1];
		if (k->kind != YAMLTREE_SCALAR) {
			continue;
		}
		if (!channel_key_valid(k->text)) {
			yamltree_error_node(&p->yt, k,
					    "roles: '%s' is not a channel key (e.g. "
					    "thermal/bigcore0-thermal)",
					    k->text);
			continue;
		}
		enum role r;
		if (!yamltree_want_scalar(&p->yt, v, "roles", "a role name")) {
			continue;
		}
		if (!role_parse(v->text, &r)) {
			char names[400];
			role_names(names, sizeof(names));
			yamltree_error_node(&p->yt, v, "roles: %s: unknown role '%s' (one of %s)",
					    k->text, v->text, names);
			continue;
		}
		cfg->roles[cfg->n_roles++] = (struct config_role){xstrdup(k->text), r};
	}
	qsort(cfg->roles, cfg->n_roles, sizeof(*cfg->roles), compare_roles);
}

void config_board_finish(struct board_config *b) {
	free(b->name);
	free(b->cooling);
	free(b->notes);
	for (size_t i = 0; i < b->n_sdk; i++) {
		free(b->sdk[i].name);
		free(b->sdk[i].version);
	}
	*b = (struct board_config){0};
}

void config_board_free(struct config *cfg) {
	config_board_finish(&cfg->board);
	for (size_t i = 0; i < cfg->n_roles; i++) {
		free(cfg->roles[i].key);
	}
	free(cfg->roles);
	cfg->roles = NULL;
	cfg->n_roles = 0;
}
