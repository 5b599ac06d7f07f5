/* timefmt: durations, ISO 8601 / unix / relative times, and formatting, against known epochs. */
#include "test.h"
#include "timefmt.h"

static void duration_ok(const char *s, int64_t want) {
	int64_t ms = -1;
	char what[128];
	snprintf(what, sizeof(what), "duration '%s' parses", s);
	ok(timefmt_parse_duration_ms(s, &ms), what);
	snprintf(what, sizeof(what), "duration '%s' = %lld ms", s, (long long)want);
	is_int(ms, want, what);
}

static void duration_bad(const char *s) {
	int64_t ms = 42;
	char what[128];
	snprintf(what, sizeof(what), "duration '%s' rejected", s);
	ok(!timefmt_parse_duration_ms(s, &ms) && ms == 42, what);
}

static void test_durations(void) {
	duration_ok("500ms", 500);
	duration_ok("60s", 60000);
	duration_ok("1m", 60000);
	duration_ok("2h", 7200000);
	duration_ok("7d", 604800000);
	duration_ok("1w", 604800000);
	duration_ok("400d", 400LL * 86400 * 1000);
	duration_ok("1h30m", 5400000);
	duration_ok("1m500ms", 60500);
	duration_ok("0s", 0);
	duration_ok("9223372036854775807ms", INT64_MAX);
	duration_bad("60");
	duration_bad("");
	duration_bad("-5s");
	duration_bad("+5s");
	duration_bad("5 s");
	duration_bad(" 5s");
	duration_bad("5s ");
	duration_bad("1.5h");
	duration_bad("5y");
	duration_bad("5sec");
	duration_bad("5S");
	duration_bad("s");
	duration_bad("1h30");
	duration_bad("9223372036854775808ms");
	duration_bad("9223372036854776s");
	duration_bad("9223372036854775807ms1ms");
	ok(!timefmt_parse_duration_ms(NULL, &(int64_t){0}), "NULL duration rejected");
}

static void time_ok(const char *s, int64_t now, int64_t want) {
	int64_t ts = -12345;
	char what[160];
	snprintf(what, sizeof(what), "time '%s' parses", s);
	ok(timefmt_parse_time(s, now, &ts), what);
	snprintf(what, sizeof(what), "time '%s' = %lld", s, (long long)want);
	is_int(ts, want, what);
}

static void time_bad(const char *s) {
	int64_t ts = 42;
	char what[160];
	snprintf(what, sizeof(what), "time '%s' rejected", s);
	ok(!timefmt_parse_time(s, 1787184000, &ts) && ts == 42, what);
}

static void test_times(void) {
	const int64_t now = 1787184000; // 2026-08-20T00:00:00Z (Python calendar.timegm)
	time_ok("2026-08-20T00:00:00Z", 0, 1787184000);
	time_ok("2026-08-20t00:00:00z", 0, 1787184000);
	time_ok("2026-08-20 00:00:00Z", 0, 1787184000);
	time_ok("2026-08-20T00:00Z", 0, 1787184000);
	time_ok("2026-08-20T02:00:00+02:00", 0, 1787184000);
	time_ok("2026-08-20T02:00:00+0200", 0, 1787184000);
	time_ok("2026-08-20T02:00:00+02", 0, 1787184000);
	time_ok("2026-08-19T19:30:00-04:30", 0, 1787184000);
	time_ok("2026-08-20T00:00:00.999Z", 0, 1787184000);
	time_ok("2026-08-20", 0, 1787184000);
	time_ok("2024-02-29T12:34:56Z", 0, 1709210096);
	time_ok("2000-03-01", 0, 951868800);
	time_ok("1969-12-31T23:59:59Z", 0, -1);
	time_ok("9999-12-31T23:59:59Z", 0, 253402300799);
	time_ok("0001-01-01", 0, -62135596800);
	time_ok("1787000000", 0, 1787000000);
	time_ok("0", 5, 0);
	time_ok("now", now, now);
	time_ok("-24h", now, now - 86400);
	time_ok("-7d", now, now - 7 * 86400);
	time_ok("-90m", now, now - 5400);
	time_ok("-1500ms", now, now - 2);
	time_bad("");
	time_bad("yesterday");
	time_bad("2026-08-20T00:00:00"); // no zone: would depend on the machine
	time_bad("2026-02-29");          // not a leap year
	time_bad("2026-13-01");
	time_bad("2026-00-10");
	time_bad("2026-04-31");
	time_bad("2026-08-20T24:00:00Z");
	time_bad("2026-08-20T23:60:00Z");
	time_bad("2026-08-20T23:59:60Z");
	time_bad("2026-08-20T00:00:00+25:00");
	time_bad("2026-08-20T00:00:00Z junk");
	time_bad("2026-8-20");
	time_bad("26-08-20");
	time_bad("2026-08-20T");
	time_bad("2026-08-20T00:00:00.Z");
	time_bad("-24");
	time_bad("-");
	time_bad("+24h");
	time_bad("1787000000.5");
	time_bad("99999999999999999999");
	time_bad("NOW");
}

static void test_date(void) {
	int64_t ts = 0;
	ok(timefmt_parse_date("2026-01-15", &ts), "date parses");
	is_int(ts, 1768435200, "2026-01-15 = 1768435200");
	ok(!timefmt_parse_date("2026-01-15T00:00:00Z", &ts), "date rejects a time");
	ok(!timefmt_parse_date("2026-02-30", &ts), "date rejects Feb 30");
	ok(!timefmt_parse_date("1787000000", &ts), "date rejects unix seconds");
	ok(timefmt_parse_date("2000-02-29", &ts), "2000 is a leap year");
	ok(!timefmt_parse_date("1900-02-29", &ts), "1900 is not a leap year");
}

static void iso_is(int64_t ts, const char *want) {
	char out[TIMEFMT_ISO_LEN];
	char what[160];
	timefmt_iso(ts, out);
	snprintf(what, sizeof(what), "iso %lld", (long long)ts);
	is_str(out, want, what);
}

static void test_iso(void) {
	iso_is(0, "1970-01-01T00:00:00Z");
	iso_is(1787184000, "2026-08-20T00:00:00Z");
	iso_is(1787000000, "2026-08-17T20:53:20Z");
	iso_is(1709210096, "2024-02-29T12:34:56Z");
	iso_is(-1, "1969-12-31T23:59:59Z");
	iso_is(-62135596800, "0001-01-01T00:00:00Z");
	iso_is(253402300799, "9999-12-31T23:59:59Z");
	char out[TIMEFMT_ISO_LEN];
	timefmt_iso(INT64_MIN, out);
	ok(strlen(out) < TIMEFMT_ISO_LEN - 1 && out[strlen(out) - 1] == 'Z', "INT64_MIN fits");
	timefmt_iso(INT64_MAX, out);
	ok(strlen(out) < TIMEFMT_ISO_LEN - 1 && out[strlen(out) - 1] == 'Z', "INT64_MAX fits");
	// Round trip over a spread of instants, including every day of a leap year.
	bool all = true;
	for (int64_t t = -86400LL * 800; t < 86400LL * 366 * 60; t += 86400 * 7 + 3601) {
		int64_t back = 0;
		timefmt_iso(t, out);
		if (!timefmt_parse_time(out, 0, &back) || back != t) {
			all = false;
			printf("# round trip failed at %lld (%s)\n", (long long)t, out);
			break;
		}
	}
	ok(all, "iso -> parse round trips");
}

static void iso_ms_is(int64_t ms, const char *want) {
	char out[TIMEFMT_ISO_LEN];
	timefmt_iso_ms(ms, out);
	is_str(out, want, want);
}

static void test_iso_ms(void) {
	iso_ms_is(0, "1970-01-01T00:00:00Z");
	iso_ms_is(1787184000000, "2026-08-20T00:00:00Z");
	iso_ms_is(1787184000250, "2026-08-20T00:00:00.250Z");
	iso_ms_is(1787184000007, "2026-08-20T00:00:00.007Z");
	iso_ms_is(-1, "1969-12-31T23:59:59.999Z");
	iso_ms_is(-1000, "1969-12-31T23:59:59Z");
	iso_ms_is(-1001, "1969-12-31T23:59:58.999Z");
}

static void test_floor(void) {
	is_int(timefmt_floor_div(7, 2), 3, "7 / 2 floors to 3");
	is_int(timefmt_floor_div(-7, 2), -4, "-7 / 2 floors to -4");
	is_int(timefmt_floor_div(-8, 2), -4, "-8 / 2 is -4");
	is_int(timefmt_floor_div(0, 60), 0, "0 / 60 is 0");
	is_int(timefmt_floor_div(-1, 60), -1, "-1 s is in minute -1");
	is_int(timefmt_floor(1787187599, 3600), 1787184000, "the start of its hour");
	is_int(timefmt_floor(1787184000, 3600), 1787184000, "an hour's start is its own floor");
	is_int(timefmt_floor(-1, 86400), -86400, "1969-12-31T23:59:59Z is in the day before 1970");
	is_int(timefmt_floor(-86400, 86400), -86400, "a day's start before 1970 is its own floor");
	is_int(timefmt_ceil(1787184001, 3600), 1787187600, "ceil goes to the next hour");
	is_int(timefmt_ceil(1787184000, 3600), 1787184000, "an hour's start is its own ceil");
	is_int(timefmt_ceil(-86399, 86400), 0, "ceil of a time on 1969-12-31 is 1970-01-01");
	bool all = true;
	for (int64_t t = -3 * 86400; t < 3 * 86400; t += 997) {
		int64_t f = timefmt_floor(t, 3600), c = timefmt_ceil(t, 3600);
		if (f > t || t - f >= 3600 || f % 3600 != 0 || c < t || c - t >= 3600 ||
		    c % 3600 != 0 || timefmt_floor_div(t, 3600) * 3600 != f) {
			all = false;
			printf("# floor/ceil wrong at %lld\n", (long long)t);
			break;
		}
	}
	ok(all, "floor and ceil bracket every time, before 1970 too");
	// At the 64-bit limits (a crafted database's stamps): held there, never wrapped around.
	is_int(timefmt_floor(INT64_MIN, 3600), INT64_MIN, "the floor of INT64_MIN is held there");
	is_int(timefmt_floor(INT64_MIN + 1, 86400), INT64_MIN, "and of a time just after it");
	is_int(timefmt_ceil(INT64_MAX, 3600), INT64_MAX, "the ceil of INT64_MAX is held there");
	is_int(timefmt_ceil(INT64_MAX - 1, 86400), INT64_MAX, "and of a time just before it");
	is_int(timefmt_floor(INT64_MAX, 3600), INT64_MAX - INT64_MAX % 3600, "INT64_MAX's hour");
	char iso[TIMEFMT_ISO_LEN];
	timefmt_iso(INT64_MIN, iso);
	ok(iso[0] == '-', "INT64_MIN formats (a year far before 0)");
	timefmt_iso(INT64_MAX, iso);
	ok(strlen(iso) > 20, "INT64_MAX formats (a year far after 9999)");
	timefmt_iso_ms(INT64_MIN, iso);
	ok(iso[0] == '-', "and in ms");
}

int main(void) {
	test_durations();
	test_iso_ms();
	test_floor();
	test_times();
	test_date();
	test_iso();
	return test_done();
}
