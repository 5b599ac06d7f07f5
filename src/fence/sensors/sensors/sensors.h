/* Only src/sources/ is built with sensors: include <sensors/sensors.h> there, or ask that layer. */
#error "<sensors/sensors.h> has its one home in src/sources/ (docs/ARCHITECTURE.md)"
