/*
 * What the files of the configuration schema share (private to src/config/): the parser state
 * and the helpers config.c offers the sections kept in files of their own.
 */
#ifndef CONFIG_INTERNAL_H
#define CONFIG_INTERNAL_H

#include <stdbool.h>

#include "config.h"
#include "yamltree.h"

struct buf;

/* The schema's parser: the YAML toolkit's error list and the configuration being filled. */
struct parser {
	struct yamltree yt;
	struct config *cfg;
};

/* capacitors: (config-capacitor.c): appends each entry to p->cfg->capacitors. */
void config_parse_capacitors(struct parser *p, const struct yamltree_node *seq);
/* Frees cfg->capacitors and what each entry owns. */
void config_capacitors_free(struct config *cfg);
/* board: and roles: (config-board.c): fill p->cfg->board and p->cfg->roles (sorted by key). */
void config_parse_board(struct parser *p, const struct yamltree_node *map);
void config_parse_roles(struct parser *p, const struct yamltree_node *map);
/* Frees cfg->board and cfg->roles. */
void config_board_free(struct config *cfg);
/* Appends config_warnings()' lines about the capacitors to @out. */
void config_capacitor_warnings(const struct config *cfg, int64_t now, struct buf *out);

#endif
