/* The simulated board's sensors: the TSADC's code table and seeded noise (simsensor.h). */
#include "simsensor.h"

#include <math.h>
#include <stddef.h>

uint64_t sim_mix(uint64_t x) {
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint64_t sim_hash(uint64_t seed, uint64_t a, uint64_t b) {
	return sim_mix(sim_mix(sim_mix(seed) ^ a) ^ b);
}

double sim_unit(uint64_t h) {
	return (double)(h >> 11) * 0x1.0p-53;
}

double sim_noise(uint64_t seed, uint64_t channel, int64_t t, double amplitude) {
	return amplitude * (2 * sim_unit(sim_hash(seed, channel, (uint64_t)t)) - 1);
}

/* RK3588 TSADC code table (rockchip_thermal.c): code -> m°C, linear between entries. */
static const struct {
	int code;
	int32_t mc;
} tsadc_table[] = {{215, -40000}, {285, 25000}, {350, 85000}, {395, 125000}};

int32_t sim_tsadc_mc(double celsius) {
	double mc = celsius * 1000;
	size_t n = sizeof(tsadc_table) / sizeof(tsadc_table[0]);
	if (mc <= tsadc_table[0].mc) {
		return tsadc_table[0].mc;
	}
	if (mc >= tsadc_table[n - 1].mc) {
		return tsadc_table[n - 1].mc; // the driver clamps at the table top
	}
	size_t i = 1;
	while (mc > tsadc_table[i].mc) {
		i++;
	}
	int dc = tsadc_table[i].code - tsadc_table[i - 1].code;
	int32_t dt = tsadc_table[i].mc - tsadc_table[i - 1].mc;
	long code = lround(tsadc_table[i - 1].code + (mc - tsadc_table[i - 1].mc) * dc / dt);
	// The driver interpolates in integers, as here.
	return tsadc_table[i - 1].mc +
	       (int32_t)((int64_t)dt * (code - tsadc_table[i - 1].code) / dc);
}

void sim_saradc(uint64_t seed, int64_t t, double rail_v, int32_t raw[SIM_SARADC_CHANNELS]) {
	uint64_t h = sim_hash(seed, (uint64_t)t, 'F');
	double ch2_mv = rail_v * 10.0 / 57.0 * 1000 + sim_noise(seed, 200, t, 1.5);
	raw[0] = 4095 - (int32_t)(h % 3);
	raw[1] = 4094 - (int32_t)((h >> 4) % 3);
	raw[2] = (int32_t)lround(ch2_mv / 0.439453125);
	raw[3] = 4095;
	for (int i = 4; i < SIM_SARADC_CHANNELS; i++) {
		raw[i] = (int32_t)((h >> (4 * i)) % 24);
	}
}
