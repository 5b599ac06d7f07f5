/*
 * The store's state (store-state.c): keys and values, and the marks by which the daemon's cycle
 * sees another connection's import and its own run writes.
 */

#include "store-fixture.h"
#include "test.h"

static void test_state(void) {
	struct store *store;
	store_open(&store, ":memory:", STORE_MODE_WRITE);
	is_int(store_state_set(store, "capwatch.c1", "{\"damage\":0.25}"), 0, "state set");
	is_int(store_state_set(store, "capwatch.c1", "{\"damage\":0.5}"), 0, "state overwrite");
	char *v;
	is_int(store_state_get(store, "capwatch.c1", &v), 0, "state get");
	is_str(v, "{\"damage\":0.5}", "latest value");
	free(v);
	store_close(store);
}

/*
 * The daemon's cycle reads neither the history generation nor the runs from the database
 * when nothing changed, yet sees an import by another connection after its next cycle, and
 * its own run writes at once.
 */
static void test_change_marks(void) {
	char *path = tmp_path("marks.db");
	struct store *daemon, *other;
	is_int(store_open(&daemon, path, STORE_MODE_WRITE), 0, "daemon connection");
	double v[] = {40, 1000000000, 1};
	put(daemon, T0, CLOCK_STATE_SYNCED, v, NULL);
	int64_t gen = -1;
	is_int(store_history_generation(daemon, &gen), 0, "generation read");
	is_int(gen, 0, "no import yet");
	struct store_runs_mark m0, m1, m2, m3;
	store_runs_mark(daemon, &m0);
	put(daemon, T0 + 60, CLOCK_STATE_SYNCED, v, NULL);
	store_runs_mark(daemon, &m1);
	ok(m0.others == m1.others && m0.own == m1.own, "own cycles leave the runs mark");

	is_int(store_open(&other, path, STORE_MODE_WRITE), 0, "import connection");
	int64_t soc = channel_id(other, "thermal/soc-thermal");
	is_int(store_insert_sample(other, T0 - 600, soc, 39000, NULL), 0, "import a value");
	struct store_run_import run = {.label = "job",
				       .status = RUN_STATUS_OK,
				       .import_key = "k1",
				       .start_ms = (T0 - 900) * 1000LL,
				       .end_ms = (T0 - 300) * 1000LL,
				       .exit_code = -1,
				       .energy_j = NAN,
				       .temp_max_c = NAN,
				       .rss_max_bytes = NAN};
	is_int(store_run_import(other, &run, NULL), 0, "import a run");
	store_close(other);

	put(daemon, T0 + 120, CLOCK_STATE_SYNCED, v, NULL);
	is_int(store_history_generation(daemon, &gen), 0, "generation read again");
	is_int(gen, 1, "the import is seen after the daemon's next cycle");
	store_runs_mark(daemon, &m2);
	ok(m2.others != m1.others, "the runs mark moved for the other connection's commit");

	struct store_run_new mine = {.label = "mine", .start_ms = (T0 + 130) * 1000LL};
	int64_t id;
	is_int(store_run_begin(daemon, &mine, &id), 0, "a run begins through the daemon");
	store_runs_mark(daemon, &m3);
	ok(m3.own != m2.own, "the runs mark moved at once for the daemon's own run");
	store_close(daemon);
	remove_db(path);
	free(path);
}

int main(void) {
	store_fixture_begin();
	test_state();
	test_change_marks();
	store_fixture_end();
	return test_done();
}
