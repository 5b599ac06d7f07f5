/* Clock states from a fixture /run tree and a fake adjtimex; boot id parsing. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <unistd.h>

#include "clock.h"
#include "test.h"

#define BUILD 1780000000LL
#define NOW   1787000000LL

static int fake_status;
static int fake_result;
static int fake_adjtimex(struct timex *tx) {
	tx->status = fake_status;
	return fake_result;
}

static void touch(const char *root, const char *path, const char *text) {
	char full[512];
	snprintf(full, sizeof(full), "%s%s", root, path);
	FILE *f = fopen(full, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void mkdir_in(const char *root, const char *path) {
	char full[512];
	snprintf(full, sizeof(full), "%s%s", root, path);
	mkdir(full, 0755);
}

int main(void) {
	char root[] = "/tmp/test-clock.XXXXXX";
	ok(mkdtemp(root) != NULL, "fixture root");
	mkdir_in(root, "/run");
	struct clock_source src = {.root = root, .build_epoch = BUILD, .adjtimex = NULL};
	const char *why = NULL;

	is_int(clock_probe(&src, NOW, 0, &why), CLOCK_STATE_UNKNOWN, "no information: unknown");
	is_str(why, "no time synchronization information", "and says why");
	is_int(clock_probe(&src, BUILD - 1, 0, &why), CLOCK_STATE_UNSYNCED,
	       "before the build date: unsynced");
	is_int(clock_probe(&src, NOW, NOW, &why), CLOCK_STATE_UNSYNCED,
	       "at the last stored cycle: unsynced");
	is_int(clock_probe(&src, NOW, NOW - 60, NULL), CLOCK_STATE_UNKNOWN,
	       "after the last stored cycle: unknown again");

	mkdir_in(root, "/run/systemd");
	mkdir_in(root, "/run/systemd/timesync");
	is_int(clock_probe(&src, NOW, 0, &why), CLOCK_STATE_UNSYNCED,
	       "timesyncd present, not synchronized: unsynced");
	touch(root, "/run/systemd/timesync/synchronized", "");
	is_int(clock_probe(&src, NOW, 0, &why), CLOCK_STATE_SYNCED, "timesyncd synchronized");
	is_int(clock_probe(&src, NOW, NOW + 3600, &why), CLOCK_STATE_UNSYNCED,
	       "synchronized but behind the last stored cycle: unsynced");
	char path[512];
	snprintf(path, sizeof(path), "%s/run/systemd/timesync/synchronized", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/run/systemd/timesync", root);
	rmdir(path);

	// chrony: the kernel flag decides.
	mkdir_in(root, "/run/chrony");
	src.adjtimex = fake_adjtimex;
	fake_status = STA_UNSYNC;
	fake_result = TIME_ERROR;
	is_int(clock_probe(&src, NOW, 0, NULL), CLOCK_STATE_UNSYNCED,
	       "chrony present, kernel STA_UNSYNC: unsynced");
	fake_status = STA_PLL;
	fake_result = TIME_OK;
	is_int(clock_probe(&src, NOW, 0, NULL), CLOCK_STATE_SYNCED, "kernel clock synchronized");
	fake_result = -1; // ProtectClock= blocks adjtimex
	is_int(clock_probe(&src, NOW, 0, NULL), CLOCK_STATE_UNSYNCED,
	       "adjtimex refused, chrony present: unsynced");
	snprintf(path, sizeof(path), "%s/run/chrony", root);
	rmdir(path);
	is_int(clock_probe(&src, NOW, 0, NULL), CLOCK_STATE_UNKNOWN,
	       "adjtimex refused, no service: unknown");
	fake_result = TIME_OK;
	fake_status = STA_UNSYNC;
	is_int(clock_probe(&src, NOW, 0, NULL), CLOCK_STATE_UNKNOWN,
	       "unsynchronized kernel without a service (a VM): unknown");

	char id[CLOCK_BOOT_ID_LEN];
	ok(!clock_boot_id(root, id) && id[0] == '\0', "no boot_id file");
	mkdir_in(root, "/proc");
	mkdir_in(root, "/proc/sys");
	mkdir_in(root, "/proc/sys/kernel");
	mkdir_in(root, "/proc/sys/kernel/random");
	touch(root, "/proc/sys/kernel/random/boot_id", "918fb236-165d-4d9a-a766-2847ed9d6191\n");
	ok(clock_boot_id(root, id), "boot id read");
	is_str(id, "918fb236-165d-4d9a-a766-2847ed9d6191", "boot id without the newline");
	touch(root, "/proc/sys/kernel/random/boot_id", "918fb236-165d-4d9a-a766-2847ed9d619\n");
	ok(!clock_boot_id(root, id), "a short boot id is refused");
	touch(root, "/proc/sys/kernel/random/boot_id", "918fb236x165d-4d9a-a766-2847ed9d6191\n");
	ok(!clock_boot_id(root, id), "a malformed boot id is refused");
	ok(clock_boot_id("", id) && strlen(id) == 36, "the running system's boot id");

	struct clock_source real;
	clock_source_init(&real);
	ok(real.build_epoch > 1700000000 && real.adjtimex != NULL, "defaults for the real system");

	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	ok(system(path) == 0, "cleanup");
	return test_done();
}
