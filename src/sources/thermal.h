/*
 * The thermal driver's one function for other modules of its layer: a zone's trips as JSON,
 * which the zone's metadata and a campaign's fingerprint (boardinfo.c) both write.
 */
#ifndef THERMAL_H
#define THERMAL_H

struct json;

/**
 * Appends "trips": the thermal zone @dir's trips as [{"type", "temp", "hyst"}] in °C (unreadable
 * ones skipped), as a zone's metadata and a campaign's fingerprint say them.
 */
void thermal_trips_json(int root_fd, const char *dir, struct json *j);

#endif
