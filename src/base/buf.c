/* Growable buffer used by the JSON, CSV and HTML writers. */
#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

void buf_init(struct buf *b) {
	*b = (struct buf){0};
}

void buf_finish(struct buf *b) {
	free(b->data);
	*b = (struct buf){0};
}

char *buf_steal(struct buf *b) {
	char *p = b->data ? b->data : xstrdup("");
	*b = (struct buf){0};
	return p;
}

void buf_clear(struct buf *b) {
	b->len = 0;
	if (b->data) {
		b->data[0] = '\0';
	}
}

static void reserve(struct buf *b, size_t extra) {
	b->data = xgrow(b->data, &b->cap, b->len + extra + 1, 1);
}

void buf_append(struct buf *b, const void *data, size_t len) {
	reserve(b, len);
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void buf_puts(struct buf *b, const char *s) {
	buf_append(b, s, strlen(s));
}

void buf_putc(struct buf *b, char c) {
	buf_append(b, &c, 1);
}

void buf_vprintf(struct buf *b, const char *fmt, va_list ap) {
	va_list copy;
	va_copy(copy, ap);
	int n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	if (n <= 0) {
		return;
	}
	reserve(b, (size_t)n);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void buf_printf(struct buf *b, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void buf_vprintf_printable(struct buf *b, const char *fmt, va_list ap) {
	struct buf raw;
	buf_init(&raw);
	buf_vprintf(&raw, fmt, ap);
	buf_put_printable(b, raw.data, raw.len);
	buf_finish(&raw);
}

void buf_put_printable(struct buf *b, const char *s, size_t len) {
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\n') {
			buf_puts(b, "\\n");
		} else if (c < 0x20 || c == 0x7f) {
			buf_printf(b, "\\x%02x", c);
		} else {
			buf_putc(b, (char)c);
		}
	}
}

void buf_put_escaped(struct buf *b, const char *s, const char *const escapes[128],
		     buf_control_fn control) {
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 128 && escapes[*p]) {
			buf_puts(b, escapes[*p]);
		} else if (*p < 0x20 && control) {
			control(b, *p);
		} else {
			buf_putc(b, (char)*p);
		}
	}
}
