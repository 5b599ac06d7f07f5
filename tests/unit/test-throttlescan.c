/* The throttle readings over the ROCK 5C fixture, and the pure parsers behind them. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "sampler.h"
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
	struct throttlescan *ts = throttlescan_create(root);
	throttlescan_read(ts, in, NULL);
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
	is_int(in->n_zones, 1, "one zone can explain a cap: the six with no trip are not read");
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
	throttlescan_destroy(ts);
	free(in);
	close(root);
}

static void write_text(int dir, const char *path, const char *text) {
	int fd = openat(dir, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ok(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text), path);
	close(fd);
}

/* Replaces @rel under @dir by an empty directory: reading it fails, as an inactive policy's. */
static bool file_to_dir(const char *dir, const char *rel) {
	char *path = xasprintf("%s/%s", dir, rel);
	bool done = unlink(path) == 0 && mkdir(path, 0755) == 0;
	free(path);
	return done;
}

/* A copy of the ROCK 5C fixture in @dir (a mkdtemp() template), opened. */
static int scratch_fixture(char *dir) {
	ok(mkdtemp(dir) != NULL, "a scratch tree");
	char *cmd = xasprintf("cp -a fixtures/rock5c/. '%s'", dir);
	ok(system(cmd) == 0, "copy the fixture");
	free(cmd);
	return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void remove_scratch(const char *dir) {
	char *cmd = xasprintf("rm -rf '%s'", dir);
	ok(system(cmd) == 0, "remove the scratch tree");
	free(cmd);
}

/*
 * A copy of the fixture's moving files: each read sees the caps, temperatures and cooling
 * states of its cycle, while the topology (trips, bindings, maxima) is the one found at create.
 */
static void test_cycles(void) {
	char dir[] = "/tmp/thermlog-throttlescan-XXXXXX";
	int root = scratch_fixture(dir);
	struct throttlescan *ts = throttlescan_create(root);
	struct throttle_input *in = xcalloc(1, sizeof(*in));
	size_t nd, nz, nc;
	throttlescan_counts(ts, &nd, &nz, &nc);
	ok(nd == 6 && nz == 1 && nc == 5, "six domains, one zone, five cooling devices found once");
	write_text(root, "devices/system/cpu/cpufreq/policy6/scaling_max_freq", "1800000\n");
	write_text(root, "class/thermal/thermal_zone0/temp", "61250\n");
	write_text(root, "class/thermal/cooling_device2/cur_state", "3\n");
	write_text(root, "class/thermal/thermal_zone0/trip_point_0_temp", "70000\n");
	throttlescan_read(ts, in, NULL);
	const struct throttle_domain_reading *d = domain(in, "cpufreq/policy6");
	ok(d && d->cap_hz == 1800000000 && d->max_hz == 2256000000 && throttle_capped(d),
	   "the next cycle sees policy6 capped at 1.8 GHz");
	ok(in->zones[0].valid && in->zones[0].temp_mc == 61250, "and soc-thermal at 61.25 °C");
	ok(in->cdevs[2].cur_state == 3, "and cpufreq-cpu6 at state 3");
	is_int(in->zones[0].trips[0].temp_mc, 60000, "a trip is the one found at create");
	// all of policy6's CPUs offline: the kernel answers its reads with EBUSY; here its
	// scaling_max_freq is a directory, which reads fail on as well
	ok(file_to_dir(dir, "devices/system/cpu/cpufreq/policy6/scaling_max_freq"),
	   "policy6 goes offline");
	write_text(root, "class/thermal/thermal_zone0/temp", "garbage\n");
	throttlescan_read(ts, in, NULL);
	ok(!domain(in, "cpufreq/policy6") && in->n_domains == 5, "an offline policy is left out");
	ok(!in->zones[0].valid, "an unreadable temperature is invalid, the zone kept");
	throttlescan_destroy(ts);
	ts = throttlescan_create(root);
	throttlescan_read(ts, in, NULL);
	is_int(in->zones[0].trips[0].temp_mc, 70000, "a new create sees the moved trip");
	throttlescan_destroy(ts);
	free(in);
	close(root);
	remove_scratch(dir);
}

/* A sampler of @dir with the thermal source only, @yaml_more appended to its configuration. */
static struct sampler *thermal_sampler(struct config *cfg, const char *dir, const char *more) {
	config_init(cfg);
	char *yaml = xasprintf("sources:\n  hwmon: {enabled: false}\n  cpufreq: {enabled: false}\n"
			       "  devfreq: {enabled: false}\n  iio: {enabled: false}\n"
			       "  meminfo: {enabled: false}\n  load: {enabled: false}\n%s",
			       more);
	char *errors = NULL;
	ok(config_load_string(cfg, "t.yaml", yaml, strlen(yaml), &errors), "the configuration");
	free(errors);
	free(yaml);
	free(cfg->sysfs_root);
	cfg->sysfs_root = xstrdup(dir);
	return sampler_create(cfg);
}

/*
 * What the sampler read in its last pass (a zone's temperature, a device's state) is taken
 * from it, not read again; raw, whatever the channel's calibration; the rest (and all of it
 * without a sampler, or for a channel the configuration left out) from the files.
 */
static void test_same_pass(void) {
	char dir[] = "/tmp/thermlog-throttlescan-XXXXXX";
	int root = scratch_fixture(dir);
	struct config cfg;
	struct sampler *s = thermal_sampler(&cfg, dir,
					    "channels:\n  thermal/soc-thermal: {offset: 5}\n"
					    "  cooling/pwm-fan: {enabled: false}\n");
	struct throttlescan *ts = throttlescan_create(sampler_root_fd(s));
	struct throttle_input *in = xcalloc(1, sizeof(*in));
	write_text(root, "class/thermal/thermal_zone0/temp", "61250\n");
	write_text(root, "class/thermal/cooling_device2/cur_state", "3\n");
	write_text(root, "class/thermal/cooling_device4/cur_state", "2\n");
	const struct channel *ch;
	const struct reading *rd;
	sampler_read(s, 0, &ch, &rd);
	// the files move after the sampler's pass: the sampler's readings are this cycle's
	write_text(root, "class/thermal/thermal_zone0/temp", "71000\n");
	write_text(root, "class/thermal/cooling_device2/cur_state", "1\n");
	write_text(root, "class/thermal/cooling_device4/cur_state", "4\n");
	throttlescan_read(ts, in, s);
	ok(in->zones[0].valid && in->zones[0].temp_mc == 61250,
	   "soc-thermal as the sampler read it, raw (its +5 °C calibration not in it)");
	is_int(in->cdevs[2].cur_state, 3, "cpufreq-cpu6's state as the sampler read it");
	is_int(in->cdevs[4].cur_state, 4, "pwm-fan, left out of the channels, read from its file");
	throttlescan_read(ts, in, NULL);
	ok(in->zones[0].temp_mc == 71000 && in->cdevs[2].cur_state == 1,
	   "without the sampler, every file is read");
	write_text(root, "class/thermal/thermal_zone0/temp", "garbage\n");
	sampler_read(s, 0, &ch, &rd);
	write_text(root, "class/thermal/thermal_zone0/temp", "52000\n");
	throttlescan_read(ts, in, s);
	ok(in->zones[0].valid && in->zones[0].temp_mc == 52000,
	   "a value the sampler failed to read is read from the file");
	throttlescan_destroy(ts);
	sampler_destroy(s);
	config_finish(&cfg);
	free(in);
	close(root);
	remove_scratch(dir);
}

/* Whole-board signals: x86 thermal_throttle counters, the Raspberry Pi's under-voltage alarm. */
static void test_board(void) {
	int root = open("fixtures/x86", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct throttlescan *ts = throttlescan_create(root);
	struct throttle_input *in = xcalloc(1, sizeof(*in));
	throttlescan_read(ts, in, NULL);
	const struct throttle_board_reading *b = &in->board;
	ok(b->n_cpus == 4 && b->cpus[0].cpu == 0 && b->cpus[3].cpu == 3,
	   "x86: four CPUs' thermal_throttle counters");
	ok(b->cpus[0].events == 2 + 17 && b->cpus[3].events == 11 + 17,
	   "events: core plus package throttle counts");
	ok(b->cpus[0].time_ms == 212 && b->cpus[3].time_ms == 212,
	   "time: the larger of the core and package totals");
	ok(!b->has_alarm, "no under-voltage alarm on x86");
	ok(in->n_zones == 0, "x86_pkg_temp's trips at 0 (not programmed) and iwlwifi's at -274000 "
			     "(invalid) explain nothing");
	throttlescan_destroy(ts);
	close(root);

	root = open("fixtures/rock5c", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ts = throttlescan_create(root);
	throttlescan_read(ts, in, NULL);
	ok(in->board.n_cpus == 0 && !in->board.has_alarm, "the ROCK 5C has neither signal");
	throttlescan_destroy(ts);
	close(root);

	char dir[] = "/tmp/thermlog-rpi-XXXXXX";
	ok(mkdtemp(dir) != NULL, "a Raspberry Pi tree");
	root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ok(mkdirat(root, "class", 0755) == 0 && mkdirat(root, "class/hwmon", 0755) == 0 &&
		   mkdirat(root, "class/hwmon/hwmon1", 0755) == 0,
	   "class/hwmon/hwmon1");
	write_text(root, "class/hwmon/hwmon1/name", "rpi_volt\n");
	write_text(root, "class/hwmon/hwmon1/in0_lcrit_alarm", "0\n");
	ts = throttlescan_create(root);
	throttlescan_read(ts, in, NULL);
	ok(in->board.has_alarm && !in->board.alarm, "rpi_volt: in0_lcrit_alarm read, clear");
	write_text(root, "class/hwmon/hwmon1/in0_lcrit_alarm", "1\n");
	throttlescan_read(ts, in, NULL);
	ok(in->board.has_alarm && in->board.alarm, "and set: under-voltage now");
	throttlescan_destroy(ts);
	close(root);
	char *cmd = xasprintf("rm -rf '%s'", dir);
	ok(system(cmd) == 0, "remove the tree");
	free(cmd);
	free(in);
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

/*
 * The ROCK 5C's big-core zone bound to its policy's cooling device (as a vendor kernel binds
 * bigcore1-thermal to cpufreq-cpu6 at a passive trip), soc-thermal hotter over its own passive
 * trip but bound only to the fan: the episode of policy6 names bigcore1-thermal.
 */
static void test_bound_zone(void) {
	char dir[] = "/tmp/thermlog-throttlescan-XXXXXX";
	int root = scratch_fixture(dir);
	const char *z2 = "devices/virtual/thermal/thermal_zone2/";
	const char *files[][2] = {
		{"trip_point_0_temp", "60000\n"}, {"trip_point_0_type", "passive\n"},
		{"trip_point_0_hyst", "2000\n"},  {"cdev0_trip_point", "0\n"},
		{"cdev0_weight", "0\n"},          {"temp", "61000\n"}};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *rel = xasprintf("%s%s", z2, files[i][0]);
		write_text(root, rel, files[i][1]);
		free(rel);
	}
	char *link = xasprintf("%s/%scdev0", dir, z2);
	ok(symlink("../cooling_device2", link) == 0, "bigcore1-thermal's cdev0: cooling_device2");
	free(link);
	struct throttlescan *ts = throttlescan_create(root);
	struct throttle_input *in = xcalloc(1, sizeof(*in));
	struct throttle_tracker *t = throttle_tracker_create();
	throttlescan_read(ts, in, NULL);
	is_int(in->n_zones, 2, "soc-thermal and bigcore1-thermal can explain a cap");
	in->ts = 1;
	throttle_tracker_update(t, in);
	write_text(root, "devices/system/cpu/cpufreq/policy6/scaling_max_freq", "1800000\n");
	write_text(root, "class/thermal/thermal_zone0/temp", "66000\n");
	write_text(root, "class/thermal/cooling_device2/cur_state", "2\n");
	throttlescan_read(ts, in, NULL);
	in->ts = 61;
	throttle_tracker_update(t, in);
	size_t n;
	struct throttle_episode *const *eps = throttle_tracker_episodes(t, &n);
	is_int(n, 1, "policy6's episode opens");
	is_str(n ? eps[0]->zone : NULL, "bigcore1-thermal",
	       "it names bigcore1-thermal (61 °C, bound to cpufreq-cpu6), not soc-thermal (66 °C, "
	       "bound to the fan)");
	throttle_tracker_destroy(t);
	throttlescan_destroy(ts);
	free(in);
	close(root);
	remove_scratch(dir);
}

/* The reading of channel @key in the sampler's last pass, or NULL. */
static const struct reading *reading_of(struct sampler *s, const char *key) {
	const struct channel *ch;
	const struct reading *rd;
	size_t n = sampler_read(s, 0, &ch, &rd);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ch[i].key, key) == 0) {
			return &rd[i];
		}
	}
	return NULL;
}

/*
 * One plausibility rule for samples and throttle episodes: a zone at 9.2e15 °C and a cooling
 * state above its max_state are refused by the sampler and by throttle detection alike, whether
 * throttle detection takes the sampler's pass or reads the files.
 */
static void test_implausible(void) {
	char dir[] = "/tmp/thermlog-throttlescan-XXXXXX";
	int root = scratch_fixture(dir);
	struct config cfg;
	struct sampler *s = thermal_sampler(&cfg, dir, "");
	struct throttlescan *ts = throttlescan_create(sampler_root_fd(s));
	struct throttle_input *in = xcalloc(1, sizeof(*in));
	write_text(root, "class/thermal/thermal_zone0/temp", "9200000000000000000\n");
	write_text(root, "class/thermal/cooling_device4/cur_state", "7\n"); // max_state 4
	const struct reading *temp = reading_of(s, "thermal/soc-thermal");
	ok(temp && temp->err == -ERANGE, "the sampler refuses soc-thermal at 9.2e15 °C");
	const struct reading *fan = reading_of(s, "cooling/pwm-fan");
	ok(fan && fan->err == -ERANGE, "and pwm-fan at state 7 of max_state 4");
	for (int pass = 0; pass < 2; pass++) {
		throttlescan_read(ts, in, pass ? NULL : s);
		ok(!in->zones[0].valid,
		   pass ? "so does throttle detection reading the files"
			: "so does throttle detection after the sampler's pass");
		is_int(in->cdevs[4].cur_state, -1, "the state above max_state is not read as one");
	}
	write_text(root, "class/thermal/cooling_device4/cur_state", "4\n");
	throttlescan_read(ts, in, NULL);
	is_int(in->cdevs[4].cur_state, 4, "max_state itself is a state");
	throttlescan_destroy(ts);
	sampler_destroy(s);
	config_finish(&cfg);
	free(in);
	close(root);
	remove_scratch(dir);
}

/*
 * Past a limit nothing is dropped without a word: 40 more zones with a passive trip, 40 more
 * cooling devices, a zone with 14 trips and 13 bindings: throttlescan_limits() names each
 * (what the daemon logs once), and reads the first ones as before.
 */
static void test_limits(void) {
	char dir[] = "/tmp/thermlog-throttlescan-XXXXXX";
	int root = scratch_fixture(dir);
	struct throttlescan *ts = throttlescan_create(root);
	ok(throttlescan_limits(ts) == NULL, "the fixture fits: no limit said");
	throttlescan_destroy(ts);
	char *cmd = xasprintf(
		"cd '%s/class/thermal' && for i in $(seq 100 139); do "
		"mkdir thermal_zone$i cooling_device$i && echo z$i > thermal_zone$i/type && "
		"echo 40000 > thermal_zone$i/temp && echo passive > thermal_zone$i/trip_point_0_type "
		"&& echo 80000 > thermal_zone$i/trip_point_0_temp && echo Fan > "
		"cooling_device$i/type && echo 0 > cooling_device$i/cur_state; done && "
		"z=thermal_zone0 && for k in $(seq 3 13); do echo passive > $z/trip_point_${k}_type "
		"&& echo 90000 > $z/trip_point_${k}_temp; done && for k in $(seq 1 12); do "
		"ln -s ../cooling_device10$k $z/cdev$k; done",
		dir);
	ok(system(cmd) == 0, "40 zones and 40 cooling devices more, 14 trips, 13 bindings");
	free(cmd);
	ts = throttlescan_create(root);
	size_t domains, zones, cdevs;
	throttlescan_counts(ts, &domains, &zones, &cdevs);
	is_int(zones, THROTTLE_MAX_ZONES, "32 zones read");
	is_int(cdevs, THROTTLE_MAX_CDEVS, "32 cooling devices read");
	const char *limits = throttlescan_limits(ts);
	ok(limits != NULL, "a limit said");
	printf("# %s\n", limits ? limits : "(none)");
	// the fixture's one zone that explains a cap and 31 of the 40 more are read
	ok(limits && strstr(limits, "9 thermal zones past the first 32 left out "
				    "(thermal_zone131 on"),
	   "the zones left out: how many, from which");
	// the fixture's five and 27 of the 40 more
	ok(limits && strstr(limits, "13 cooling devices past the first 32 left out "
				    "(cooling_device127 on"),
	   "the cooling devices left out");
	ok(limits && strstr(limits, "trips past the first 12 left out in thermal_zone0 (and 0"),
	   "the trips left out");
	ok(limits && strstr(limits, "bindings past the first 12 left out in thermal_zone0 (and 0"),
	   "the bindings left out");
	struct throttle_input *in = xcalloc(1, sizeof(*in));
	throttlescan_read(ts, in, NULL);
	is_int(in->zones[0].n_trips, THROTTLE_MAX_TRIPS, "the first 12 trips read");
	is_int(in->zones[0].n_binds, THROTTLE_MAX_BINDS, "the first 12 bindings read");
	free(in);
	throttlescan_destroy(ts);
	close(root);
	remove_scratch(dir);
}

int main(int argc, char **argv) {
	test_seed(argc, argv);
	test_limits();
	test_fixture();
	test_cycles();
	test_same_pass();
	test_bound_zone();
	test_board();
	test_parsers();
	test_implausible();
	return test_done();
}
