/* Allocation helpers: out of memory on a 4 W board is not recoverable, so abort loudly. */
#include "xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(void) {
	static const char msg[] = "thermlog: out of memory\n";
	fputs(msg, stderr);
	abort();
}

void *xcalloc(size_t n, size_t size) {
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p) {
		oom();
	}
	return p;
}

void *xrealloc(void *ptr, size_t size) {
	void *p = realloc(ptr, size ? size : 1);
	if (!p) {
		oom();
	}
	return p;
}

void *xgrow(void *ptr, size_t *cap, size_t need, size_t size) {
	if (need <= *cap) {
		return ptr;
	}
	size_t n = *cap ? *cap : 8;
	while (n < need) {
		n *= 2;
	}
	if (n > ((size_t)-1) / size) {
		oom();
	}
	*cap = n;
	return xrealloc(ptr, n * size);
}

char *xstrdup(const char *s) {
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n) {
	char *p = xcalloc(1, n + 1);
	memcpy(p, s, n);
	return p;
}

char *xvasprintf(const char *fmt, va_list ap) {
	char *p = NULL;
	if (vasprintf(&p, fmt, ap) < 0) {
		oom();
	}
	return p;
}

char *xasprintf(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	char *p = xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}
