/* A run's load figures over hand-made samples: clusters, NPU cores, p95, what is absent. */
#include <string.h>

#include "buf.h"
#include "runload.h"
#include "test.h"

static char *written(struct runload *l) {
	struct buf out;
	buf_init(&out);
	struct json j;
	json_init(&j, &out, false);
	runload_write_json(l, &j, "m");
	return buf_steal(&out);
}

static void test_parse(void) {
	bool has[RUNLOAD_CPUS_MAX] = {0};
	ok(runload_parse_cpus("0 1 2 3\n", has) && has[0] && has[3] && !has[4],
	   "related_cpus \"0 1 2 3\"");
	memset(has, 0, sizeof(has));
	ok(runload_parse_cpus("4-5,7", has) && has[4] && has[5] && !has[6] && has[7],
	   "ranges and commas");
	memset(has, 0, sizeof(has));
	ok(!runload_parse_cpus("", has), "an empty list (all CPUs offline) is none");
	ok(!runload_parse_cpus("0 x", has), "not a CPU list");
	ok(!runload_parse_cpus("5-3", has), "a range going back");
	ok(!runload_parse_cpus("256", has), "a CPU past the limit");
}

static void test_figures(void) {
	struct runload *l = runload_create();
	bool c0[RUNLOAD_CPUS_MAX] = {0}, c4[RUNLOAD_CPUS_MAX] = {0}, c6[RUNLOAD_CPUS_MAX] = {0};
	runload_parse_cpus("0 1", c0);
	runload_parse_cpus("4 5", c4);
	runload_parse_cpus("6 7", c6);
	runload_add_cluster(l, "policy0", c0);
	runload_add_cluster(l, "policy4", c4);
	runload_add_cluster(l, "policy6", c6); // never a share: absent
	// five samples; cpu1 offline in the third (policy0 is cpu0's alone then)
	const double cpu0[] = {10, 20, 30, 40, 100}, cpu1[] = {0, 0, -1, 20, 100};
	const double npu0[] = {0, 50, 50, 100, 100};
	for (int i = 0; i < 5; i++) {
		int64_t ts = 1796000000000 + 1000 * i;
		runload_add(l, ts, "load/cpu", (cpu0[i] + (cpu1[i] < 0 ? 0 : cpu1[i])) / 2);
		runload_add(l, ts, "load/cpu0", cpu0[i]);
		if (cpu1[i] >= 0) {
			runload_add(l, ts, "load/cpu1", cpu1[i]);
		}
		runload_add(l, ts, "load/cpu4", 50);
		runload_add(l, ts, "load/rknpu/core0", npu0[i]);
		runload_add(l, ts, "load/rknpu/core1", 0);
		runload_add(l, ts, "load/fb000000.gpu", 99); // a devfreq load: no NPU core
		runload_add(l, ts, "thermal/soc", 45);
	}
	char *got = written(l);
	// policy0 means: 5 10 30 30 100 -> mean 35, p95 at h = 3.8: 30 + 0.8 * 70 = 86
	// load/cpu: 5 10 15 30 100 -> mean 32, p95 86
	// core0: 0 50 50 100 100 -> mean 60, p95 100
	is_str(got,
	       "{\"cpu\":{\"mean_pct\":32,\"p95_pct\":86,\"samples\":5},"
	       "\"clusters\":[{\"name\":\"policy0\",\"cpus\":\"0-1\",\"mean_pct\":35,"
	       "\"p95_pct\":86,\"samples\":5},{\"name\":\"policy4\",\"cpus\":\"4-5\","
	       "\"mean_pct\":50,\"p95_pct\":50,\"samples\":5}],"
	       "\"npu\":[{\"core\":\"core0\",\"channel\":\"load/rknpu/core0\",\"mean_pct\":60,"
	       "\"p95_pct\":100,\"samples\":5},{\"core\":\"core1\",\"channel\":"
	       "\"load/rknpu/core1\",\"mean_pct\":0,\"p95_pct\":0,\"samples\":5}],"
	       "\"method\":\"m\"}",
	       "clusters averaged per sample, an idle core 0, a cluster without a share absent");
	free(got);
	runload_destroy(l);

	l = runload_create();
	runload_add_cluster(l, "policy0", c0);
	runload_add(l, 1, "thermal/soc", 45);
	got = written(l);
	is_str(got, "null", "nothing measured: null, never 0");
	free(got);
	runload_destroy(l);

	l = runload_create();
	runload_add(l, 1, "load/rknpu", 12.5);
	runload_add(l, 2, "load/rknpu", 12.25);
	got = written(l);
	is_str(got,
	       "{\"npu\":[{\"core\":\"all\",\"channel\":\"load/rknpu\",\"mean_pct\":12.375,"
	       "\"p95_pct\":12.488,\"samples\":2}],\"method\":\"m\"}",
	       "a single-core NPU alone; to 0.001 %");
	free(got);
	runload_destroy(l);
	runload_destroy(NULL);
}

int main(int argc, char **argv) {
	test_seed(argc, argv);
	test_parse();
	test_figures();
	return test_done();
}
