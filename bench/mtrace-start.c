/*
 * Turns glibc's malloc trace on before main(), for bench/soak.py --heap-trace: LD_PRELOADed
 * after libc_malloc_debug.so.0 with MALLOC_TRACE naming where the trace goes (a FIFO the
 * soak reads), so the allocator's bytes in use can be read beside RssAnon.
 */
#include <mcheck.h>

__attribute__((constructor)) static void mtrace_start(void) {
	mtrace();
}
