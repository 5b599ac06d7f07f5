/* Only src/store/ is built with sqlite3: include <sqlite3.h> there, or ask that layer. */
#error "<sqlite3.h> has its one home in src/store/ (docs/ARCHITECTURE.md)"
