/* Looks up the dashboard assets that web/embed.py compiled into the binary. */
#include "web.h"

#include <stdlib.h>
#include <string.h>

static int compare_path(const void *key, const void *elem) {
	const struct web_asset *asset = elem;
	return strcmp(key, asset->path);
}

const struct web_asset *web_asset_find(const char *path) {
	if (!path) {
		return NULL;
	}
	if (strcmp(path, "/") == 0) {
		path = "/index.html";
	}
	size_t n;
	const struct web_asset *table = web_assets(&n);
	return bsearch(path, table, n, sizeof(*table), compare_path);
}
