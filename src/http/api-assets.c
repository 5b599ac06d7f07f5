/* The API's dashboard assets: the embedded files, with ETags and gzip when accepted. */
#include "api-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web.h"

/* Dashboard assets ------------------------------------------------------------------------- */

/* Whether an If-None-Match list names @etag (weak comparison, as RFC 9110 asks for it). */
static bool etag_listed(const char *list, const char *etag) {
	size_t etag_len = strlen(etag);
	const char *p = list;
	while (*p) {
		p += strspn(p, " \t,");
		if (*p == '*') {
			return true;
		}
		if (strncmp(p, "W/", 2) == 0) {
			p += 2;
		}
		size_t len = strcspn(p, ",");
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t')) {
			len--;
		}
		if (len == etag_len && memcmp(p, etag, len) == 0) {
			return true;
		}
		p += strcspn(p, ",");
	}
	return false;
}

/* Whether Accept-Encoding allows gzip: listed (or "*") with a nonzero q. */
static bool gzip_accepted(const char *header) {
	if (!header) {
		return false;
	}
	int gzip = -1, star = -1; // -1 = not mentioned, else q > 0
	const char *p = header;
	while (*p) {
		p += strspn(p, " \t,");
		size_t len = strcspn(p, ",");
		size_t name_len = strcspn(p, ";, \t");
		bool allowed = true;
		const char *q = memchr(p, ';', len);
		if (q) {
			q++;
			q += strspn(q, " \t");
			if ((q[0] == 'q' || q[0] == 'Q') && q[1] == '=') {
				allowed = strtod(q + 2, NULL) > 0;
			}
		}
		if ((name_len == 4 && strncasecmp(p, "gzip", 4) == 0) ||
		    (name_len == 6 && strncasecmp(p, "x-gzip", 6) == 0)) {
			gzip = allowed;
		} else if (name_len == 1 && *p == '*') {
			star = allowed;
		}
		p += len;
	}
	return gzip == 1 || (gzip == -1 && star == 1);
}

void api_handle_asset(struct request *r, const struct web_asset *asset) {
	struct api_response *resp = r->resp;
	// The dashboard takes no parameters, but cache-busting queries are harmless.
	bool gz = asset->gz && gzip_accepted(r->req->accept_encoding);
	// A strong ETag names one representation, so the gzip variant gets its own.
	size_t n = strlen(asset->etag);
	if (gz && n >= 2 && n + 4 < sizeof(resp->etag) && asset->etag[n - 1] == '"') {
		snprintf(resp->etag, sizeof(resp->etag), "%.*s-gz\"", (int)(n - 1), asset->etag);
	} else {
		snprintf(resp->etag, sizeof(resp->etag), "%s", asset->etag);
	}
	resp->content_type = asset->content_type;
	resp->cache_control = "no-cache"; // revalidate with the ETag: cheap, never stale
	resp->vary_accept_encoding = asset->gz != NULL;
	if (r->req->if_none_match && (etag_listed(r->req->if_none_match, resp->etag) ||
				      etag_listed(r->req->if_none_match, asset->etag))) {
		resp->status = 304;
		return;
	}
	resp->status = 200;
	if (gz) {
		resp->content_encoding = "gzip";
		resp->static_body = asset->gz;
		resp->static_len = asset->gz_len;
	} else {
		resp->static_body = asset->data;
		resp->static_len = asset->len;
	}
}
