/* Embedded dashboard assets: lookup, content types, ETags and the gzip variants. */
#include <stdint.h>
#include <string.h>

#include "test.h"
#include "web.h"

/* CRC-32 as gzip's trailer stores it (RFC 1952), bitwise: the test needs no zlib. */
static uint32_t crc32_of(const unsigned char *p, size_t n) {
	uint32_t crc = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++) {
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
		}
	}
	return ~crc;
}

static uint32_t le32(const unsigned char *p) {
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void check_lookup(void) {
	const struct web_asset *index = web_asset_find("/index.html");
	ok(index != NULL, "/index.html is embedded");
	ok(web_asset_find("/") == index, "/ maps to /index.html");
	is_str(index ? index->content_type : NULL, "text/html; charset=utf-8", "html content type");
	ok(index && index->len > 15 && memcmp(index->data, "<!doctype html>", 15) == 0,
	   "index.html starts with its doctype");

	const struct web_asset *js = web_asset_find("/app.js");
	is_str(js ? js->content_type : NULL, "text/javascript; charset=utf-8", "js content type");
	const struct web_asset *css = web_asset_find("/style.css");
	is_str(css ? css->content_type : NULL, "text/css; charset=utf-8", "css content type");
	const struct web_asset *svg = web_asset_find("/favicon.svg");
	is_str(svg ? svg->content_type : NULL, "image/svg+xml", "svg content type");

	const struct web_asset *dy = web_asset_find("/vendor/dygraph.min.js");
	ok(dy != NULL && dy->len > 50000, "dygraphs is embedded whole");
	ok(dy && memmem(dy->data, dy->len, "Dygraph", 7) != NULL, "dygraphs bytes are the library");
	ok(web_asset_find("/vendor/dygraph.min.css") != NULL, "dygraphs css is embedded");

	ok(web_asset_find("/missing.js") == NULL, "unknown path: NULL");
	ok(web_asset_find("") == NULL, "empty path: NULL");
	ok(web_asset_find(NULL) == NULL, "NULL path: NULL");
	ok(web_asset_find("index.html") == NULL, "relative path: NULL");
	ok(web_asset_find("/index.html?x=1") == NULL, "query string is the caller's to strip");
	ok(web_asset_find("/../index.html") == NULL, "no path normalisation");
	ok(web_asset_find("/meson.build") == NULL, "build files are not assets");
}

static void check_table(void) {
	size_t n;
	const struct web_asset *a = web_assets(&n);
	ok(n >= 6, "at least six assets");
	bool sorted = true, etags_unique = true, etags_quoted = true, gz_ok = true, found = true;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && strcmp(a[i - 1].path, a[i].path) >= 0) {
			sorted = false;
		}
		size_t elen = strlen(a[i].etag);
		if (elen < 10 || a[i].etag[0] != '"' || a[i].etag[elen - 1] != '"') {
			etags_quoted = false;
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(a[i].etag, a[j].etag) == 0) {
				etags_unique = false;
			}
		}
		if (web_asset_find(a[i].path) != &a[i]) {
			found = false;
		}
		if (!a[i].gz) {
			continue;
		}
		/* RFC 1952: magic, deflate, and a trailer holding the CRC-32 and size of the input.
		 */
		const unsigned char *g = a[i].gz;
		size_t gl = a[i].gz_len;
		if (gl < 18 || g[0] != 0x1f || g[1] != 0x8b || g[2] != 8 || gl >= a[i].len ||
		    le32(g + gl - 8) != crc32_of(a[i].data, a[i].len) ||
		    le32(g + gl - 4) != (uint32_t)a[i].len) {
			printf("# bad gzip variant of %s\n", a[i].path);
			gz_ok = false;
		}
	}
	ok(sorted, "table sorted by path, no repeats");
	ok(found, "every listed asset is found by its path");
	ok(etags_quoted, "ETags are quoted strong tags");
	ok(etags_unique, "ETags differ per content");
	ok(gz_ok, "gzip variants carry the CRC-32 and length of the plain bytes");

	const struct web_asset *index = web_asset_find("/");
	ok(index && index->gz && index->gz_len < index->len, "html has a smaller gzip variant");
	const struct web_asset *dy = web_asset_find("/vendor/dygraph.min.js");
	ok(dy && dy->gz && dy->gz_len < 60000, "dygraphs gzip under 60 KB");
}

int main(void) {
	check_lookup();
	check_table();
	return test_done();
}
