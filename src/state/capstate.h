/*
 * One capacitor's running damage as the daemon's tracker (capwatch) fills it and the live
 * snapshot publishes it. A header of its own that reaches neither the store nor the live module.
 */
#ifndef CAPSTATE_H
#define CAPSTATE_H

/** One capacitor's running damage, kept by the daemon. */
struct capstate {
	const char *name; // copied by live_publish_capacitors()
	const char *sensor;
	double consumed_fraction; // D, over the samples
	double consumed_total;    // D plus the time in service no sample stands for (= D without
				  // in_service)
	double remaining_h;       // (1 - D) * L_eff, NAN when unknown
	double effective_life_h;
	double observed_h;
};

#endif
