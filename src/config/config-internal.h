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

/*
 * Whether @map is a mapping entry of sequence @section with only @keys (NULL-terminated);
 * otherwise reports it (@required names what an entry needs, @name what it is) and says false.
 */
bool config_entry_mapping(struct parser *p, const struct yamltree_node *map, const char *section,
			  const char *required, const char *name, const char *const *keys);

/* capacitors: (config-capacitor.c): appends each entry to p->cfg->capacitors. */
void config_parse_capacitors(struct parser *p, const struct yamltree_node *seq);
/* Frees cfg->capacitors and what each entry owns. */
void config_capacitors_free(struct config *cfg);
/* Appends config_warnings()' lines about the capacitors to @out. */
void config_capacitor_warnings(const struct config *cfg, int64_t now, struct buf *out);

#endif
