/*
 * The API's authentication: the bearer token or the dashboard's session cookie, and the
 * dashboard's sign-in form that sets the cookie.
 */
#include "api-internal.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "metrics.h"
#include "session.h"
#include "web.h"

static void redirect(struct api_response *resp, const char *location) {
	buf_clear(&resp->body);
	buf_printf(&resp->body, "see %s\n", location);
	resp->status = 303;
	resp->content_type = "text/plain; charset=utf-8";
	resp->cache_control = "no-store";
	resp->location = location;
}

/*
 * The dashboard's sign-in, answered before authentication: GET shows the form, POST of
 * token=TOKEN (a form) sets a session cookie derived from the token and goes to the
 * dashboard, since a browser cannot send an Authorization header when it navigates.
 */
void api_handle_login(struct request *r) {
	const struct api_context *ctx = r->ctx;
	const struct api_request *req = r->req;
	struct api_response *resp = r->resp;
	bool read_only = strcmp(req->method, "POST") != 0; // GET or HEAD (routes[] in api.c)
	if (!ctx->token || !ctx->session_key) {
		redirect(resp, "./"); // nothing to sign in to
		return;
	}
	const struct web_asset *page = web_asset_find("/login.html");
	if (read_only) {
		if (page) {
			api_handle_asset(r, page);
		} else {
			api_respond_error(resp, 404, NULL, "no sign-in page in this build");
		}
		return;
	}
	if (req->body_len > API_LOGIN_MAX) {
		api_respond_error(resp, 413, NULL, "the sign-in form is larger than %d bytes",
				  API_LOGIN_MAX);
		return;
	}
	// The form is application/x-www-form-urlencoded: a query string without the '?'.
	struct buf target;
	buf_init(&target);
	buf_printf(&target, "/login?");
	buf_append(&target, req->body ? req->body : "", req->body ? req->body_len : 0);
	struct api_target form = {0};
	char *err = NULL;
	const char *given = NULL;
	if (api_parse_target(target.data, &form, &err)) {
		for (size_t i = 0; i < form.n_params; i++) {
			if (strcmp(form.params[i].key, "token") == 0 && form.params[i].value) {
				given = form.params[i].value;
			}
		}
	}
	if (given && api_token_equal(given, ctx->token)) {
		char value[SESSION_VALUE_MAX];
		session_value(ctx->session_key, ctx->token, req->now + SESSION_MAX_AGE_S, value);
		struct buf c;
		buf_init(&c);
		// Secure only over TLS, where the browser would otherwise refuse to store it.
		buf_printf(&c, "%s=%s; Path=/; Max-Age=%d; HttpOnly; SameSite=Strict%s",
			   SESSION_COOKIE, value, SESSION_MAX_AGE_S,
			   ctx->cfg->http.tls_cert ? "; Secure" : "");
		resp->set_cookie = buf_steal(&c);
		redirect(resp, "./");
	} else {
		redirect(resp, "login?failed");
	}
	free(err);
	for (size_t i = 0; i < form.n_params; i++) {
		if (form.params[i].value) { // a token, right or nearly so: leave no copy behind
			explicit_bzero(form.params[i].value, strlen(form.params[i].value));
		}
	}
	api_target_finish(&form);
	explicit_bzero(target.data, target.len);
	buf_finish(&target);
}

bool api_authorized(const struct api_context *ctx, const struct api_request *req, const char *path,
		    struct api_response *resp) {
	if (!ctx->token) {
		return true;
	}
	if (ctx->cfg->http.metrics_public && strcmp(path, "/metrics") == 0) {
		return true;
	}
	if (strcmp(path, "/favicon.svg") == 0) {
		return true; // the sign-in page's icon, public anyway
	}
	const char *h = req->authorization;
	// A browser signed in through /login carries the session cookie instead of the header.
	if (!h && ctx->session_key &&
	    session_check(ctx->session_key, ctx->token, req->cookie, req->now)) {
		return true;
	}
	if (!h && ctx->session_key &&
	    (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0)) {
		redirect(resp, "login"); // a person opening the dashboard: to the sign-in form
		return false;
	}
	resp->authenticate = true;
	if (!h) {
		api_respond_error(
			resp, 401, NULL,
			"this server needs a bearer token: send 'Authorization: Bearer TOKEN'");
		return false;
	}
	// The scheme is case-insensitive (RFC 9110); one or more spaces follow it.
	if (strncasecmp(h, "Bearer ", 7) != 0) {
		resp->auth_error = "invalid_request";
		api_respond_error(
			resp, 401, NULL,
			"the Authorization header must use the Bearer scheme: 'Authorization: Bearer TOKEN'");
		return false;
	}
	const char *given = h + 7;
	given += strspn(given, " ");
	if (!api_token_equal(given, ctx->token)) {
		resp->auth_error = "invalid_token";
		api_respond_error(resp, 401, NULL, "wrong bearer token");
		return false;
	}
	resp->authenticate = false;
	return true;
}
