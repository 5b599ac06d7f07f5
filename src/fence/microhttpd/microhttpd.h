/* Only src/http/ is built with microhttpd: include <microhttpd.h> there, or ask that layer. */
#error "<microhttpd.h> has its one home in src/http/ (docs/ARCHITECTURE.md)"
