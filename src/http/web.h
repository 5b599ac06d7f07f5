/* The dashboard's static assets, embedded into the binary at build time (no run-time paths). */
#ifndef WEB_H
#define WEB_H

#include <stddef.h>

/** One embedded file; every field points into read-only static storage. */
struct web_asset {
	const char *path;         // URL path, "/index.html", "/vendor/dygraph.min.js"
	const char *content_type; // "text/html; charset=utf-8", ...
	const unsigned char *data;
	size_t len;
	const unsigned char
		*gz; // the same bytes gzip-compressed, NULL when gzip does not shrink them
	size_t gz_len;
	const char *etag; // a strong entity tag with its quotes, '"<hash of data>"'
};

/**
 * The asset served at URL path @path (without query string), or NULL if there is none.
 * "/" maps to "/index.html". The returned asset lives as long as the program.
 */
const struct web_asset *web_asset_find(const char *path);

/** All assets, for listing and tests; *@n receives their count. */
const struct web_asset *web_assets(size_t *n);

#endif
