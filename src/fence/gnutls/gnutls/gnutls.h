/* Only src/http/ is built with gnutls: include <gnutls/gnutls.h> there, or ask that layer. */
#error "<gnutls/gnutls.h> has its one home in src/http/ (docs/ARCHITECTURE.md)"
