/*
 * The RSS floor of thermlogd's libraries: a program linking exactly what thermlogd links (the
 * same dependencies, flags and build), which only touches one symbol of each library so the
 * linker keeps it, prints "ready" and waits for a signal. bench/daemon-rss.py measures it beside
 * the daemon in the same run. usage: rss-floor
 */
#include <gnutls/gnutls.h>
#include <math.h>
#include <microhttpd.h>
#include <sensors/sensors.h>
#include <sqlite3.h>
#include <stdio.h>
#include <unistd.h>
#include <yaml.h>

#include "version.h"

int main(void) {
	volatile double x = 2.0; // a libm call the compiler cannot fold
	printf("ready: sqlite %s, yaml %s, microhttpd %s, sensors %s, m %g", sqlite3_libversion(),
	       yaml_get_version_string(), MHD_get_version(), libsensors_version, log(x));
#if HAVE_GNUTLS
	printf(", gnutls %s", gnutls_check_version(NULL));
#endif
	printf("\n");
	fflush(stdout);
	pause(); // until SIGTERM
	return 0;
}
