/* A growable byte buffer, always NUL-terminated. */
#ifndef BUF_H
#define BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data; // NUL-terminated; NULL until the first append
	size_t len;
	size_t cap;
};

void buf_init(struct buf *b);
/** Frees the contents; accepts a zeroed buffer. */
void buf_finish(struct buf *b);
/** Hands the contents to the caller (who frees them) and resets @b. Never NULL. */
char *buf_steal(struct buf *b);
void buf_clear(struct buf *b);
void buf_append(struct buf *b, const void *data, size_t len);
void buf_puts(struct buf *b, const char *s);
void buf_putc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/**
 * Appends @len bytes of @s for a terminal or a one-line message: a line feed as "\\n", other
 * control characters (C0 and DEL) as "\\xNN", everything else as it is.
 */
void buf_put_printable(struct buf *b, const char *s, size_t len);
/** Appends the escape of control byte @c (C0) in a format that names no escape for it. */
typedef void (*buf_control_fn)(struct buf *b, unsigned char c);
/**
 * Appends @s with each ASCII byte that has an entry in @escapes replaced by that entry, each
 * other C0 control byte written by @control (kept as it is when @control is NULL), and every
 * other byte as it is.
 */
void buf_put_escaped(struct buf *b, const char *s, const char *const escapes[128],
		     buf_control_fn control);
void buf_vprintf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/** buf_vprintf(), its output passed through buf_put_printable(): one line, no control bytes. */
void buf_vprintf_printable(struct buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#endif
