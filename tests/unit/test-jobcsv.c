/* Job log CSV: times to the millisecond, status words and aliases, optional columns, and bad
 * rows named by line. */
#include <errno.h>

#include "jobcsv.h"
#include "test.h"

static int parse(const char *text, struct jobcsv *log, struct buf *errors) {
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	buf_init(errors);
	int rc = jobcsv_parse(in, "jobs.csv", "default", 1, log, errors);
	fclose(in);
	return rc;
}

static void test_times(void) {
	int64_t ms = 0;
	ok(jobcsv_parse_time_ms("1790812811.505", 1, &ms) && ms == 1790812811505, "unix with ms");
	ok(jobcsv_parse_time_ms("1790812811", 1, &ms) && ms == 1790812811000, "unix whole seconds");
	ok(jobcsv_parse_time_ms("1790812811.5", 1, &ms) && ms == 1790812811500, "unix .5");
	ok(jobcsv_parse_time_ms("1790812811.123456", 1, &ms) && ms == 1790812811123,
	   "unix µs: kept to the ms");
	ok(jobcsv_parse_time_ms("1790812811.9996", 1, &ms) && ms == 1790812812000,
	   "unix: rounded to the nearest ms");
	ok(jobcsv_parse_time_ms("2026-10-01T03:15:13.187Z", 1, &ms) && ms == 1790824513187,
	   "ISO with ms");
	ok(jobcsv_parse_time_ms("2026-10-01 05:15:13,187+02:00", 1, &ms) && ms == 1790824513187,
	   "ISO with a space, a comma and an offset");
	ok(jobcsv_parse_time_ms("2026-10-01T03:15:13Z", 1, &ms) && ms == 1790824513000,
	   "ISO whole seconds");
	ok(jobcsv_parse_time_ms("2026-10-01", 1, &ms) && ms == 1790812800000, "a date");
	ok(!jobcsv_parse_time_ms("-24h", 1, &ms), "relative times refused");
	ok(!jobcsv_parse_time_ms("now", 1, &ms), "now refused");
	ok(!jobcsv_parse_time_ms("1790812811.", 1, &ms), "a dot without digits");
	ok(!jobcsv_parse_time_ms("1790812811.5x", 1, &ms), "trailing garbage");
	ok(!jobcsv_parse_time_ms("2026-10-01T03:15:13", 1, &ms), "ISO without a zone");
	ok(!jobcsv_parse_time_ms("", 1, &ms), "empty");
	ok(!jobcsv_parse_time_ms("1790812811505", 1, &ms), "13 digits are no unix seconds");
	ok(jobcsv_parse_time_ms("1790812811505", 1000, &ms) && ms == 1790812811505, "unix ms");
	ok(jobcsv_parse_time_ms("1790812811505499", 1000000, &ms) && ms == 1790812811505,
	   "unix us, rounded to the ms (down)");
	ok(jobcsv_parse_time_ms("1790812811505500", 1000000, &ms) && ms == 1790812811506,
	   "unix us, rounded to the ms (up)");
	ok(!jobcsv_parse_time_ms("1790812811505.5", 1000, &ms), "ms take no fraction");
	ok(jobcsv_parse_time_ms("2026-10-01T03:15:13.187Z", 1000, &ms) && ms == 1790824513187,
	   "ISO is ISO whatever the unit");

	enum run_status st;
	ok(jobcsv_parse_status("Completed", &st) && st == RUN_STATUS_OK, "completed = ok");
	ok(jobcsv_parse_status("SUCCESS", &st) && st == RUN_STATUS_OK, "success = ok");
	ok(jobcsv_parse_status("error", &st) && st == RUN_STATUS_FAILED, "error = failed");
	ok(jobcsv_parse_status("signaled", &st) && st == RUN_STATUS_SIGNALED, "signaled");
	ok(!jobcsv_parse_status("running", &st), "running refused: a log has finished runs");
	ok(!jobcsv_parse_status("", &st), "empty status refused");
}

static void test_good(void) {
	struct jobcsv log;
	struct buf errors;
	const char *text = "\xEF\xBB\xBF"
			   "host,Status,end,start,label,exit_code\r\n"
			   "rock5c,ok,1790813128.191,1790812811.505,sdxl,0\r\n"
			   "\r\n"
			   "rock5c,failed,2026-10-01T03:20:18.146Z,2026-10-01T03:15:13.187Z,,3\r\n"
			   "rock5c,timeout,1790900000,1790896400,\"rerank, large\",\r\n";
	is_int(parse(text, &log, &errors), 0, "good log: 0");
	is_str(errors.data, NULL, "good log: no errors");
	is_int(log.n, 3, "three rows (blank line skipped)");
	const struct jobcsv_row *r = log.rows;
	ok(r[0].start_ms == 1790812811505 && r[0].end_ms == 1790813128191, "row 1: ms times");
	is_int(r[0].end_ms - r[0].start_ms, 316686, "row 1: 316.686 s");
	ok(r[0].status == RUN_STATUS_OK && r[0].exit_code == 0, "row 1: ok, exit 0");
	is_str(r[0].label, "sdxl", "row 1: label");
	ok(isnan(r[0].energy_j) && isnan(r[0].temp_max_c), "absent figures are NAN");
	is_int(r[1].line, 4, "row 2 was on line 4");
	is_str(r[1].label, "default", "empty label: the default");
	is_int(r[1].exit_code, 3, "row 2: exit 3");
	is_int(r[1].end_ms - r[1].start_ms, 304959, "row 2: ISO ms kept");
	is_str(r[2].label, "rerank, large", "quoted label");
	ok(r[2].status == RUN_STATUS_TIMEOUT && r[2].exit_code == -1, "row 3: timeout, no code");
	jobcsv_finish(&log);
	buf_finish(&errors);
}

static void test_bad(void) {
	struct jobcsv log;
	struct buf errors;
	const char *text = "start,end,status,exit_code,energy_j\n"
			   "1790812811.505,1790813128.191,ok,0,2470.5\n" // 2 good
			   "1790812811.505,1790813128.191,crashed,1,\n"  // 3 status
			   "1790813128.191,1790812811.505,ok,0,\n"       // 4 end < start
			   "yesterday,1790813128.191,ok,0,\n"            // 5 start
			   "1790812811,1790813128,ok,3,\n"               // 6 ok with 3
			   "1790812811,1790813128,failed,300,\n"         // 7 code range
			   "1790812811,1790813128,failed,1,-5\n"         // 8 energy
			   "1790812,1790813,failed,1,\n"                 // 9 before 2000
			   "1790812811,1790813128,running,,\n"           // 10 running
			   "1790812811,1790813128,lost,,12.5\n";         // 11 good
	is_int(parse(text, &log, &errors), -EBADMSG, "bad rows: -EBADMSG");
	is_int(log.n, 2, "the two good rows are kept");
	is_int(log.n_bad, 8, "eight bad rows");
	is_near(log.rows[0].energy_j, 2470.5, 0, "energy_j read");
	is_int(log.rows[1].line, 11, "last good row on line 11");
	const char *want[] = {
		"jobs.csv:3: bad status 'crashed'",
		"jobs.csv:4: end '1790812811.505' is before start '1790813128.191'",
		"jobs.csv:5: bad start 'yesterday'",
		"jobs.csv:6: status 'ok' with exit_code 3",
		"jobs.csv:7: bad exit_code '300'",
		"jobs.csv:8: bad energy_j '-5'",
		"jobs.csv:9: start '1790812' is before 2000-01-01",
		"jobs.csv:10: bad status 'running'",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ok(errors.data && strstr(errors.data, want[i]), want[i]);
	}
	for (const char *l = errors.data; l && *l;) {
		size_t len = strcspn(l, "\n");
		printf("# %.*s\n", (int)len, l);
		l += len + (l[len] == '\n');
	}
	jobcsv_finish(&log);
	buf_finish(&errors);

	// A label's control characters are refused, and the message shows them escaped.
	is_int(parse("start,end,status,label\n1790812811,1790813128,ok,\"a\x1b]0;t\x07\nb\"\n",
		     &log, &errors),
	       -EBADMSG, "a label with ESC, BEL and LF: refused");
	is_str(errors.data,
	       "jobs.csv:2: bad label 'a\\x1b]0;t\\x07\\nb' (1 to 200 characters, no control "
	       "characters)\n",
	       "the refused label is quoted escaped: no raw control byte in the message");
	ok(jobcsv_label_valid("sdxl \xf0\x9f\x94\xa5") && !jobcsv_label_valid("") &&
		   !jobcsv_label_valid("a\x7f") && !jobcsv_label_valid("a\tb"),
	   "the label rule: UTF-8 yes, empty, DEL and TAB no");
	jobcsv_finish(&log);
	buf_finish(&errors);

	is_int(parse("start,end,label\n1,2,x\n", &log, &errors), -EINVAL, "no status: -EINVAL");
	ok(errors.data && strstr(errors.data, "jobs.csv:1: the header has no 'status' column"),
	   "missing column named");
	jobcsv_finish(&log);
	buf_finish(&errors);
	is_int(parse("start,end,status,START\n", &log, &errors), -EINVAL, "duplicate column");
	ok(errors.data && strstr(errors.data, "column 'start' appears twice"), "duplicate named");
	jobcsv_finish(&log);
	buf_finish(&errors);
	is_int(parse("", &log, &errors), -EINVAL, "empty file: -EINVAL");
	ok(errors.data && strstr(errors.data, "jobs.csv:1: empty file"), "empty file named");
	jobcsv_finish(&log);
	buf_finish(&errors);
	is_int(parse("start,end,status\n1790812811,1790813128,\"ok\n", &log, &errors), -EINVAL,
	       "unterminated quote: -EINVAL");
	ok(errors.data && strstr(errors.data, "jobs.csv:2: unterminated quoted field"),
	   "CSV error named by line");
	jobcsv_finish(&log);
	buf_finish(&errors);

	// Many bad rows: the first 20 are listed, the rest counted.
	struct buf many;
	buf_init(&many);
	buf_puts(&many, "start,end,status\n");
	for (int i = 0; i < 25; i++) {
		buf_puts(&many, "x,y,ok\n");
	}
	is_int(parse(many.data, &log, &errors), -EBADMSG, "25 bad rows");
	ok(errors.data && strstr(errors.data, "jobs.csv:21: bad start 'x'") &&
		   !strstr(errors.data, "jobs.csv:22:") &&
		   strstr(errors.data, "jobs.csv: 5 more bad rows not listed"),
	   "20 listed, 5 counted");
	jobcsv_finish(&log);
	buf_finish(&errors);
	buf_finish(&many);
}

/* The optional error column: empty = none, one line, at most JOBCSV_ERROR_MAX bytes. */
static void test_error_column(void) {
	struct jobcsv log;
	struct buf errors;
	struct buf text;
	buf_init(&text);
	buf_puts(&text, "start,end,status,error\n"
			"1790812811,1790813128,failed,\"Traceback:\n  File x\n\tOOM\"\n"
			"1790812812,1790813128,ok,\n"
			"1790812813,1790813128,failed,");
	// A long error of two-byte characters: cut at a character, never inside one.
	for (int i = 0; i < 400; i++) {
		buf_puts(&text, "\xc3\xa9");
	}
	buf_puts(&text, "\n1790812814,1790813128,failed,");
	for (int i = 0; i < 499; i++) {
		buf_putc(&text, 'x');
	}
	buf_puts(&text, "\x01\n"); // 499 bytes, then an escape that would not fit whole
	is_int(parse(text.data, &log, &errors), 0, "a log with an error column: 0");
	is_int(log.n, 4, "four rows");
	is_str(log.rows[0].error, "Traceback:\\n  File x\\n\\x09OOM",
	       "a multi-line error: one line, control characters escaped");
	is_str(log.rows[1].error, NULL, "an empty error is none");
	is_int(log.rows[2].error ? (long long)strlen(log.rows[2].error) : -1, 500,
	       "a long error: cut to 500 bytes");
	ok(log.rows[2].error && (unsigned char)log.rows[2].error[498] == 0xc3 &&
		   (unsigned char)log.rows[2].error[499] == 0xa9,
	   "at a character boundary");
	is_int(log.rows[3].error ? (long long)strlen(log.rows[3].error) : -1, 499,
	       "an escape that does not fit is left out whole");
	jobcsv_finish(&log);
	buf_finish(&errors);
	buf_finish(&text);
}

int main(void) {
	test_times();
	test_good();
	test_bad();
	test_error_column();
	return test_done();
}
