/* Only src/config/ is built with yaml: include <yaml.h> there, or ask that layer. */
#error "<yaml.h> has its one home in src/config/ (docs/ARCHITECTURE.md)"
