/* Allocation that aborts on exhaustion, so constructors fail only for real reasons. */
#ifndef XALLOC_H
#define XALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xcalloc(size_t n, size_t size);
void *xrealloc(void *ptr, size_t size);
/** Grows an array of @n elements of @size to hold at least @need, doubling; updates *cap. */
void *xgrow(void *ptr, size_t *cap, size_t need, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/** printf into a newly allocated string; caller frees. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** The same with a va_list: the one "printf into a new string" every module uses. */
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
