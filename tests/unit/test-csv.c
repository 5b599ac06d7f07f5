/* CSV: RFC 4180 quoting, the streaming reader's records, errors with line numbers, round trips. */
#include <getopt.h>
#include <time.h>

#include "csv.h"
#include "test.h"

static int read_all(const char *text, char *out, size_t out_len, char *err, size_t err_len) {
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct csv_reader r;
	csv_reader_init(&r, f);
	int rc, records = 0;
	out[0] = '\0';
	while ((rc = csv_read(&r)) == 1) {
		records++;
		size_t len = strlen(out);
		snprintf(out + len, out_len - len, "%lu:", r.line);
		for (size_t i = 0; i < r.n_fields; i++) {
			len = strlen(out);
			snprintf(out + len, out_len - len, "[%s]", r.fields[i]);
		}
		len = strlen(out);
		snprintf(out + len, out_len - len, ";");
	}
	snprintf(err, err_len, "%s", rc < 0 ? r.error : "");
	csv_reader_finish(&r);
	fclose(f);
	return rc < 0 ? -1 : records;
}

static void test_reader(void) {
	char out[512], err[200];
	is_int(read_all("time,channel,value\r\n1,a,2\r\n", out, sizeof(out), err, sizeof(err)), 2,
	       "two CRLF records");
	is_str(out, "1:[time][channel][value];2:[1][a][2];", "fields and lines");
	read_all("a,\"b,c\",\"d \"\"q\"\"\"\n\n\"multi\nline\",x\ny", out, sizeof(out), err,
		 sizeof(err));
	is_str(out, "1:[a][b,c][d \"q\"];3:[multi\nline][x];5:[y];",
	       "quotes, blank line skipped, embedded newline, no final newline");
	read_all("\xEF\xBB\xBFh1,h2\n,\n\"\"\n", out, sizeof(out), err, sizeof(err));
	is_str(out, "1:[h1][h2];2:[][];3:[];", "BOM skipped, empty fields kept");
	is_int(read_all("a\n\"open\nstill", out, sizeof(out), err, sizeof(err)), -1,
	       "unterminated quote");
	is_str(err, "line 2: unterminated quoted field", "error names the record's line");
	read_all("a\nb\n\"x\"y\n", out, sizeof(out), err, sizeof(err));
	is_str(err, "line 3: text after a closing quote", "text after closing quote");
	read_all("a\nb\"c\n", out, sizeof(out), err, sizeof(err));
	is_str(err, "line 2: quote inside an unquoted field", "stray quote");
	const char nul[] = "a\nb\0c\n";
	FILE *f = fmemopen((void *)nul, sizeof(nul) - 1, "r");
	struct csv_reader r;
	csv_reader_init(&r, f);
	is_int(csv_read(&r), 1, "record before the NUL");
	is_int(csv_read(&r), -1, "NUL byte refused");
	is_str(r.error, "line 2: NUL byte in CSV", "NUL error");
	csv_reader_finish(&r);
	fclose(f);
	read_all("a\rb\n", out, sizeof(out), err, sizeof(err));
	is_str(err, "line 1: carriage return without line feed", "lone CR");
	// After a closing quote CR LF ends the record too; CR alone is the same error; inside
	// the quotes CR is text.
	read_all("\"a\"\r\n\"b\r\nc\"\r\n", out, sizeof(out), err, sizeof(err));
	is_str(out, "1:[a];2:[b\r\nc];", "CRLF after a closing quote");
	read_all("\"a\"\rb\n", out, sizeof(out), err, sizeof(err));
	is_str(err, "line 1: carriage return without line feed", "lone CR after a closing quote");

	// A record without line breaks stops at the limit instead of growing without bound.
	size_t big = CSV_RECORD_MAX + 10;
	char *text = malloc(big + 1);
	memset(text, 'x', big);
	text[big] = '\0';
	char *o = malloc(big + 100);
	is_int(read_all(text, o, 100, err, sizeof(err)), -1, "oversized record refused");
	is_str(err, "line 1: record too long", "size error");
	free(text);
	free(o);
}

static void test_writer(void) {
	struct buf b;
	buf_init(&b);
	csv_field(&b, "plain", 5, true);
	csv_field(&b, "a,b", 3, false);
	csv_field(&b, "say \"hi\"", 8, false);
	csv_field(&b, "two\nlines", 9, false);
	csv_field(&b, "", 0, false);
	csv_field(&b, "°C", strlen("°C"), false);
	csv_end_record(&b);
	is_str(b.data, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",,°C\r\n",
	       "RFC 4180 quoting");
	buf_finish(&b);
}

static void test_round_trip(int rounds) {
	const char alphabet[] = "ab,\"\r\n x\xC3\xA9";
	int bad = 0;
	for (int round = 0; round < rounds; round++) {
		size_t n_rec = 1 + rng() % 8;
		char fields[8][6][12];
		size_t n_fields = 1 + rng() % 6;
		struct buf b;
		buf_init(&b);
		for (size_t i = 0; i < n_rec; i++) {
			for (size_t k = 0; k < n_fields; k++) {
				size_t len = rng() % 11;
				for (size_t c = 0; c < len; c++) {
					fields[i][k][c] = alphabet[rng() % (sizeof(alphabet) - 1)];
				}
				fields[i][k][len] = '\0';
				// a record of one empty field would be a blank line: give it
				// content
				if (n_fields == 1 && len == 0) {
					strcpy(fields[i][k], "e");
				}
				csv_field(&b, fields[i][k], strlen(fields[i][k]), k == 0);
			}
			csv_end_record(&b);
		}
		FILE *f = fmemopen(b.data, b.len, "r");
		struct csv_reader r;
		csv_reader_init(&r, f);
		for (size_t i = 0; i < n_rec; i++) {
			if (csv_read(&r) != 1 || r.n_fields != n_fields) {
				bad++;
				break;
			}
			for (size_t k = 0; k < n_fields; k++) {
				bad += strcmp(r.fields[k], fields[i][k]) != 0;
			}
		}
		bad += csv_read(&r) != 0;
		csv_reader_finish(&r);
		fclose(f);
		buf_finish(&b);
	}
	is_int(bad, 0, "random fields survive write then read");
}

int main(int argc, char **argv) {
	test_seed(argc, argv);
	test_reader();
	test_writer();
	test_round_trip(500);
	return test_done();
}
