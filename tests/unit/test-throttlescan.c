/* The throttle readings over the ROCK 5C fixture, and the pure parsers behind them. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "throttlescan.h"
#include "xalloc.h"

static const struct throttle_domain_reading *domain(const struct throttle_input *in,
						    const char *name) {
	for (size_t i = 0; i < in->n_domains; i++) {
		if (strcmp(in->domains[i].name, name) == 0) {
			return &in->domains[i];
		}
	}
	return NULL;
}

static void test_fixture(void) {
	int root = open("fixtures/rock5c", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ok(root >= 0, "open the fixture");
	struct throttle_input *in = xcalloc(1, sizeof(*in));
	throttlescan_read(root, in);
	is_int(in->n_domains, 6, "three policies and three devfreq devices");
	const struct throttle_domain_reading *d = domain(in, "cpufreq/policy6");
	ok(d && d->cap_hz == 2256000000 && d->max_hz == 2256000000,
	   "policy6: scaling_max_freq and cpuinfo_max_freq in Hz");
	ok(d && !throttle_capped(d), "at its maximum: not capped");
	d = domain(in, "devfreq/fb000000.gpu");
	ok(d && d->cap_hz == 1000000000 && d->max_hz == 1000000000,
	   "the GPU: max_freq and the top of available_frequencies");
	d = domain(in, "devfreq/dmc");
	ok(d && d->max_hz == 2112000000, "dmc's top frequency");
	is_int(in->n_zones, 7, "seven zones");
	const struct throttle_zone_reading *z = &in->zones[0];
	is_str(z->name, "soc-thermal", "zone 0 by its type");
	ok(z->valid && z->temp_mc == 43461, "its temperature");
	is_int(z->n_trips, 3, "three trips");
	ok(z->trips[0].passive && z->trips[0].temp_mc == 60000 && z->trips[0].hyst_mc == 2000,
	   "trip 0: passive at 60 °C, hyst 2 °C");
	ok(!z->trips[2].passive && z->trips[2].temp_mc == 115000, "trip 2 is critical");
	ok(z->n_binds == 1 && z->binds[0].cdev == 4 && z->binds[0].trip == 0,
	   "bound to cooling_device4 at trip 0");
	is_int(in->n_cdevs, 5, "five cooling devices");
	const struct throttle_cdev_reading *c = &in->cdevs[2];
	ok(c->dev == 2 && strcmp(c->type, "cpufreq-cpu6") == 0 && c->caps,
	   "cooling_device2 is cpufreq-cpu6, a capping device");
	is_str(c->domain, "cpufreq/policy6", "it caps the policy holding CPU 6");
	is_str(in->cdevs[1].domain, "cpufreq/policy4", "cpufreq-cpu4 caps policy4");
	is_str(in->cdevs[3].domain, "devfreq/fb000000.gpu", "the GPU's devfreq cooling");
	ok(!in->cdevs[4].caps && in->cdevs[4].cur_state == 1, "the fan caps nothing, at state 1");
	c = &in->cdevs[1];
	ok(c->counters && c->n_states == 11 && c->state_ms[1] == 52000,
	   "time_in_state_ms read per state");
	free(in);
	close(root);
}

static void test_parsers(void) {
	int64_t hz;
	ok(throttlescan_top_frequency("300000000 1000000000 400000000", &hz) && hz == 1000000000,
	   "the highest frequency, in any order");
	ok(!throttlescan_top_frequency("", &hz) && !throttlescan_top_frequency("none", &hz),
	   "no frequency");
	const char *names[] = {"policy0", "policy4", "policy6"};
	const char *cpus[] = {"0 1 2 3", "4 5", "6 7"};
	char out[THROTTLE_NAME_LEN];
	throttlescan_cdev_domain("cpufreq-cpu7", names, cpus, 3, out);
	is_str(out, "cpufreq/policy6", "cpufreq-cpu7: the policy of CPU 7");
	throttlescan_cdev_domain("thermal-cpufreq-1", names, cpus, 3, out);
	is_str(out, "cpufreq/policy4", "thermal-cpufreq-1: the second policy");
	throttlescan_cdev_domain("thermal-cpufreq-3", names, cpus, 3, out);
	is_str(out, "", "no fourth policy");
	throttlescan_cdev_domain("cpufreq-cpu9", names, cpus, 3, out);
	is_str(out, "", "no policy holds CPU 9");
	throttlescan_cdev_domain("devfreq-fdab0000.npu", names, cpus, 3, out);
	is_str(out, "devfreq/fdab0000.npu", "devfreq-NAME");
	throttlescan_cdev_domain("pwm-fan", names, cpus, 3, out);
	is_str(out, "", "a fan names no domain");
}

int main(int argc, char **argv) {
	test_seed(argc, argv);
	test_fixture();
	test_parsers();
	return test_done();
}
