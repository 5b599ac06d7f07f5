/*
 * The meminfo source: /proc/meminfo and /proc/vmstat of the ROCK 5C fixture (8 GB, zram swap)
 * through the real sampler, swap rates from counter deltas on a fake clock (the first read has
 * none: null, never 0), and the pure parsers.
 */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "config.h"
#include "meminfo.h"
#include "sampler.h"
#include "source.h"
#include "test.h"
#include "xalloc.h"

#define FIXTURE "fixtures/rock5c"

static int64_t fake_ns;

static int64_t fake_clock(void) {
	return fake_ns;
}

static void write_file(const char *path, const char *text) {
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("Bail out! could not write %s\n", path);
		exit(1);
	}
}

static char *read_fixture(const char *name) {
	char path[256];
	snprintf(path, sizeof(path), FIXTURE "/proc/%s", name);
	FILE *f = fopen(path, "r");
	if (!f) {
		printf("Bail out! %s missing\n", path);
		exit(1);
	}
	char *text = xcalloc(1, 65536);
	size_t n = fread(text, 1, 65535, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

/* The fixture's vmstat with pswpin/pswpout replaced. */
static void write_vmstat(const char *dir, long long in, long long out) {
	char *text = read_fixture("vmstat");
	struct buf b;
	buf_init(&b);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "pswpin ", 7) == 0) {
			buf_printf(&b, "pswpin %lld\n", in);
		} else if (strncmp(line, "pswpout ", 8) == 0) {
			buf_printf(&b, "pswpout %lld\n", out);
		} else {
			buf_printf(&b, "%s\n", line);
		}
	}
	char path[512];
	snprintf(path, sizeof(path), "%s/vmstat", dir);
	write_file(path, b.data);
	buf_finish(&b);
	free(text);
}

static ptrdiff_t find(const struct channel *ch, size_t n, const char *key) {
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ch[i].key, key) == 0) {
			return (ptrdiff_t)i;
		}
	}
	return -1;
}

static void make_config(struct config *cfg, const char *proc) {
	config_init(cfg);
	const char *yaml = "sources: {thermal: {enabled: false}, hwmon: {enabled: false}, "
			   "cpufreq: {enabled: false}, devfreq: {enabled: false}, "
			   "iio: {enabled: false}, load: {enabled: false}}\n";
	char *errors = NULL;
	if (!config_load_string(cfg, "test.yaml", yaml, strlen(yaml), &errors)) {
		printf("Bail out! config: %s\n", errors);
		exit(1);
	}
	free(cfg->sysfs_root);
	cfg->sysfs_root = xstrdup(FIXTURE);
	free(cfg->procfs_root);
	cfg->procfs_root = xstrdup(proc);
}

static int reads_from_start; // preads at offset 0: one per file read

static ssize_t counting_pread(int fd, void *buf, size_t len, off_t off) {
	reads_from_start += off == 0;
	return pread(fd, buf, len, off);
}

static void test_fixture(void) {
	char dir[] = "/tmp/thermlog-meminfo-XXXXXX";
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
	char path[512];
	char *meminfo = read_fixture("meminfo");
	snprintf(path, sizeof(path), "%s/meminfo", dir);
	write_file(path, meminfo);
	write_vmstat(dir, 84213, 197352);

	struct config cfg;
	make_config(&cfg, dir);
	struct sampler *s = sampler_create(&cfg);
	sampler_set_clock(s, fake_clock);
	fake_ns = INT64_C(1000) * 1000000000;
	const struct channel *ch;
	const struct reading *rd;
	size_t n = sampler_read(s, 0, &ch, &rd);
	is_int(n, 4, "four meminfo channels");
	ptrdiff_t avail = find(ch, n, "meminfo/available"), used = find(ch, n, "meminfo/swap_used");
	ptrdiff_t in = find(ch, n, "meminfo/swap_in"), out = find(ch, n, "meminfo/swap_out");
	ok(avail >= 0 && used >= 0 && in >= 0 && out >= 0, "keys meminfo/{available,swap_used,"
							   "swap_in,swap_out}");
	if (avail < 0 || used < 0 || in < 0 || out < 0) {
		return;
	}
	is_str(ch[avail].unit, "bytes", "available: bytes");
	is_str(channel_kind_name(ch[avail].kind), "memory", "available: kind memory");
	is_str(ch[avail].label, "memory available", "available: label");
	is_str(ch[in].unit, "pages_per_second", "swap in: pages per second");
	is_str(ch[avail].source, "meminfo", "source meminfo");
	snprintf(path, sizeof(path), "%s/meminfo", dir);
	char *real = realpath(dir, NULL);
	char *want_path = xasprintf("%s/meminfo", real);
	is_str(ch[avail].path, want_path, "path: the absolute file read");
	free(want_path);
	free(real);
	is_int(rd[avail].err, 0, "available reads");
	is_near(rd[avail].value, 3124508.0 * 1024, 0, "MemAvailable 3124508 kB in bytes");
	is_near(rd[used].value, (3963844.0 - 3512196) * 1024, 0,
		"swap used = SwapTotal - SwapFree in bytes");
	is_int(rd[in].err, -EAGAIN, "first read: no swap-in rate (null, not 0)");
	is_int(rd[out].err, -EAGAIN, "first read: no swap-out rate");

	// 60 s later 600 pages came in and 1200 went out: 10 and 20 pages/s.
	write_vmstat(dir, 84213 + 600, 197352 + 1200);
	fake_ns += INT64_C(60) * 1000000000;
	n = sampler_read(s, 60, &ch, &rd);
	is_int(rd[in].err, 0, "second read: a rate");
	is_near(rd[in].value, 10, 1e-12, "swap in: 600 pages / 60 s");
	is_near(rd[out].value, 20, 1e-12, "swap out: 1200 pages / 60 s");

	// A rescan keeps the history: the next read still has a rate.
	sampler_rescan(s);
	write_vmstat(dir, 84213 + 600 + 50, 197352 + 1200);
	fake_ns += INT64_C(5) * 1000000000;
	n = sampler_read(s, 65, &ch, &rd);
	is_int(rd[in].err, 0, "after a rescan: still a rate");
	is_near(rd[in].value, 10, 1e-12, "swap in: 50 pages / 5 s");
	is_near(rd[out].value, 0, 0, "swap out: idle is a real 0");

	// Four figures from two files: each file is read once a pass.
	sampler_set_pread(s, counting_pread);
	reads_from_start = 0;
	fake_ns += INT64_C(5) * 1000000000;
	sampler_read(s, 67, &ch, &rd);
	is_int(reads_from_start, 2, "one pass reads meminfo and vmstat once each");
	is_int(rd[avail].err, 0, "available still reads");
	is_int(rd[in].err, 0, "swap in still a rate");

	// A counter that went backwards has restarted: no rate for that read.
	write_vmstat(dir, 10, 197352 + 1200);
	fake_ns += INT64_C(5) * 1000000000;
	n = sampler_read(s, 70, &ch, &rd);
	is_int(rd[in].err, -EAGAIN, "counter went backwards: no rate");

	// A kernel without swap support has no SwapTotal: swap used fails on its own.
	snprintf(path, sizeof(path), "%s/meminfo", dir);
	write_file(path, "MemTotal:        7927692 kB\nMemAvailable:    3124508 kB\n");
	n = sampler_read(s, 75, &ch, &rd);
	is_int(rd[used].err, -ENOENT, "no SwapTotal: swap used is missing (-ENOENT)");
	is_int(rd[avail].err, 0, "memory available still reads");
	sampler_destroy(s);
	config_finish(&cfg);

	snprintf(path, sizeof(path), "%s/meminfo", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/vmstat", dir);
	unlink(path);
	rmdir(dir);
	free(meminfo);
}

static void test_no_proc(void) {
	struct config cfg;
	make_config(&cfg, "fixtures/no-such-proc");
	struct sampler *s = sampler_create(&cfg);
	ok(s != NULL, "a missing procfs root is not fatal");
	const struct channel *ch;
	const struct reading *rd;
	is_int(sampler_read(s, 0, &ch, &rd), 0, "no meminfo channels without procfs");
	sampler_destroy(s);
	config_finish(&cfg);

	config_init(&cfg);
	is_str(cfg.procfs_root, "/proc", "procfs_root defaults to /proc");
	config_finish(&cfg);
	config_init(&cfg);
	const char *yaml =
		"procfs_root: /srv/proc\nsources: {meminfo: {exclude: [meminfo/swap_*]}}\n";
	char *errors = NULL;
	ok(config_load_string(&cfg, "t.yaml", yaml, strlen(yaml), &errors), "procfs_root parses");
	is_str(cfg.procfs_root, "/srv/proc", "procfs_root set");
	ok(!config_channel_wanted(&cfg, SOURCE_MEMINFO, "meminfo/swap_in"), "meminfo exclude");
	ok(config_channel_wanted(&cfg, SOURCE_MEMINFO, "meminfo/available"), "meminfo include");
	free(errors);
	config_finish(&cfg);
}

static void test_parse(void) {
	char *text = read_fixture("meminfo");
	int64_t v = 0;
	is_int(meminfo_parse(text, "MemAvailable", true, &v), 0, "MemAvailable");
	is_int(v, INT64_C(3124508) * 1024, "kB to bytes");
	is_int(meminfo_parse(text, "MemTotal", true, &v), 0, "MemTotal");
	is_int(v, INT64_C(7927692) * 1024, "8 GB board: 7927692 kB");
	is_int(meminfo_parse(text, "Mem", true, &v), -ENOENT, "a prefix is not a name");
	is_int(meminfo_parse(text, "HugePages_Total", true, &v), -EBADMSG, "no kB: -EBADMSG");
	free(text);
	text = read_fixture("vmstat");
	is_int(meminfo_parse(text, "pswpin", false, &v), 0, "pswpin");
	is_int(v, 84213, "pswpin count");
	is_int(meminfo_parse(text, "pswp", false, &v), -ENOENT, "vmstat prefix");
	free(text);
	is_int(meminfo_parse("pswpin x\n", "pswpin", false, &v), -EBADMSG, "garbage count");

	double r = -1;
	is_int(meminfo_rate(false, 0, 0, 5, 10, &r), -EAGAIN, "no previous read: -EAGAIN");
	is_int(meminfo_rate(true, 5, 10, 5, 10, &r), -EAGAIN, "no time passed: -EAGAIN");
	is_int(meminfo_rate(true, 100, 0, 400, 2000000000, &r), 0, "rate");
	is_near(r, 150, 1e-12, "300 pages in 2 s");
}

int main(void) {
	test_parse();
	test_fixture();
	test_no_proc();
	return test_done();
}
