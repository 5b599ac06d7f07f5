/*
 * thermlog export, import and backup. Import reads its input twice (stdin is spooled to a
 * temporary file): the first pass validates every row and learns each channel's resolution
 * from the decimals it uses, the second inserts in short transactions with pauses between them,
 * so a daemon writing the same database waits milliseconds, not the whole import.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "channel.h"
#include "cli-options.h"
#include "cli-output.h"
#include "csv.h"
#include "export.h"
#include "log.h"
#include "stats.h"
#include "table.h"
#include "timefmt.h"
#include "xalloc.h"

#define IMPORT_BATCH    20000     // values per import transaction at most
#define IMPORT_BATCH_MS 100       // and milliseconds of work per transaction at most
#define IMPORT_PAUSE_MS 100       // between transactions: SQLite busy handlers poll this often
#define IMPORT_OLDEST   946684800 // 2000-01-01T00:00:00Z: nothing older is a thermlog stamp
/*
 * No tolerance for stamps after now: a running daemon stores only cycles later than every
 * stored one, so a row even a minute ahead would cost it every cycle until then.
 */
#define IMPORT_FUTURE_S   0
#define IMPORT_MAX_PLACES 9

/* ---- export ---- */

int cli_export(struct cli_context *ctx, int argc, char **argv) {
	static const struct option options[] = {
		CLI_OPTIONS_FROM_TO,
		CLI_OPTION_CHANNEL,
		CLI_OPTION_UNSYNCED,
		CLI_OPTION_FORMAT,
		CLI_OPTIONS_OUTPUT,
		CLI_OPTION_HELP,
		{0},
	};
	const char *usage =
		"usage: thermlog export [--from T] [--to T] [--channel KEY|GLOB]... "
		"[--format long|wide] [--include-unsynced] [-o FILE [--force]]\n"
		"-o FILE refuses an existing file unless --force, and the database and its "
		"-wal/-shm always.\n";
	struct cli_window w;
	cli_window_init(&w);
	enum export_format format = EXPORT_FORMAT_LONG;
	const char *output = NULL;
	bool force = false;
	int64_t now = (int64_t)time(NULL);
	int opt, rc = CLI_EXIT_USAGE;
	while ((opt = getopt_long(argc, argv, "ho:", options, NULL)) != -1) {
		if (opt == 'o') {
			output = optarg;
		} else if (opt == CLI_OPT_FORCE) {
			force = true;
		} else if (opt == CLI_OPT_FORMAT) {
			if (strcmp(optarg, "long") == 0) {
				format = EXPORT_FORMAT_LONG;
			} else if (strcmp(optarg, "wide") == 0) {
				format = EXPORT_FORMAT_WIDE;
			} else {
				fprintf(stderr,
					"thermlog export: unknown format '%s' (long or wide)\n",
					optarg);
				goto out;
			}
		} else if (opt == 'h' || opt == '?' ||
			   cli_window_option(&w, "export", opt, optarg, now) <= 0) {
			rc = cli_usage(opt, usage);
			goto out;
		}
	}
	if (!cli_no_operand("export", usage, argc, argv)) {
		goto out;
	}
	if (!cli_window_check(ctx, &w, "export", now)) {
		goto out;
	}
	if ((rc = cli_setup(ctx)) != CLI_EXIT_OK) {
		goto out;
	}
	char *err = NULL;
	struct export *e = export_create(ctx->store, &w.p, format, &err);
	if (!e) {
		rc = cli_query_failed("export", -errno, err);
		goto out;
	}
	struct cli_output out = {0};
	if (output && strcmp(output, "-") == 0) {
		output = NULL; // as usual, "-o -" is the standard output
	}
	bool opened =
		!output || cli_output_open(&out, "export", output, cli_store_path(ctx), force, 0);
	if (!opened) {
		rc = CLI_EXIT_FAILURE;
		goto destroy;
	}
	FILE *f = output ? out.f : stdout;
	static char chunk[64 * 1024];
	ssize_t n;
	rc = CLI_EXIT_OK;
	while ((n = export_read(e, chunk, sizeof(chunk))) > 0) {
		if (fwrite(chunk, 1, (size_t)n, f) != (size_t)n) {
			break;
		}
	}
	if (n < 0) {
		fprintf(stderr, "thermlog export: could not read the database\n");
		rc = CLI_EXIT_FAILURE;
	}
	if (output) {
		if (rc != CLI_EXIT_OK) {
			cli_output_abort(&out);
		} else if (!cli_output_commit(&out, "export")) {
			rc = CLI_EXIT_FAILURE;
		}
	} else if (ferror(f) || fflush(f) != 0) {
		fprintf(stderr, "thermlog export: could not write stdout: %s\n", strerror(errno));
		rc = CLI_EXIT_FAILURE;
	}
destroy:
	export_destroy(e);
out:
	cli_window_finish(&w);
	return rc;
}

/* ---- import ---- */

/* A decimal as read: value = mant / 10^places. */
struct decimal {
	int64_t mant;
	int places;
};

/* Parses "-12.345", "7", "1.5e3" exactly; false for anything else or beyond 18 digits. */
static bool parse_decimal(const char *s, struct decimal *d) {
	const char *p = s;
	bool neg = *p == '-';
	if (*p == '-' || *p == '+') {
		p++;
	}
	uint64_t m = 0;
	int digits = 0, places = 0;
	bool point = false, any = false;
	for (; *p; p++) {
		if (*p == '.' && !point) {
			point = true;
		} else if (*p >= '0' && *p <= '9') {
			any = true;
			if (m == 0 && *p == '0' && !point) {
				continue; // leading zeros carry nothing
			}
			if (++digits > 18) {
				return false;
			}
			m = m * 10 + (uint64_t)(*p - '0');
			places += point;
		} else {
			break;
		}
	}
	if (!any) {
		return false;
	}
	if (*p == 'e' || *p == 'E') {
		char *end;
		long e = strtol(p + 1, &end, 10);
		if (end == p + 1 || *end || e < -18 || e > 18) {
			return false;
		}
		places -= (int)e;
		p = end;
	}
	if (*p) {
		return false;
	}
	while (places < 0) {
		if (m > UINT64_MAX / 10 / 10) {
			return false;
		}
		m *= 10;
		places++;
	}
	if (m > (uint64_t)INT64_MAX) {
		return false;
	}
	d->mant = neg ? -(int64_t)m : (int64_t)m;
	d->places = places;
	return true;
}

static const int64_t pow10s[] = {1,
				 10,
				 100,
				 1000,
				 10000,
				 100000,
				 1000000,
				 10000000,
				 100000000,
				 1000000000,
				 10000000000,
				 100000000000,
				 1000000000000,
				 10000000000000,
				 100000000000000,
				 1000000000000000,
				 10000000000000000,
				 100000000000000000,
				 1000000000000000000};

/* The stored integer for @d at @resolution; false if the value is finer than the resolution. */
static bool quantize(const struct decimal *d, double resolution, int64_t *q) {
	int rd;
	int64_t step; // resolution = step / 10^rd
	if (!stats_resolution_step(resolution, &rd, &step)) {
		double v = (double)d->mant / pow(10, d->places);
		double x = v / resolution;
		if (!(fabs(x) < 9e18) || fabs(x - nearbyint(x)) > 1e-6 * fmax(1, fabs(x))) {
			return false;
		}
		*q = llround(x);
		return true;
	}
	int64_t num = d->mant;
	if (rd >= d->places) {
		if (__builtin_mul_overflow(num, pow10s[rd - d->places], &num)) {
			return false;
		}
	} else {
		int64_t div = pow10s[d->places - rd];
		if (num % div != 0) {
			return false;
		}
		num /= div;
	}
	if (num % step != 0) {
		return false;
	}
	*q = num / step;
	return true;
}

/* A channel met in the file. */
struct import_channel {
	char *key;
	char *label;      // the file's label for it, or NULL: a new channel's label
	const char *unit; // static
	int places;       // the most decimal places among its values
	bool known;       // already in the database
	int64_t id;
	double resolution; // known channels: what the import needs (finer than stored: refined)
	double stored_resolution;
	int64_t rows;
};

/* A channel column of a wide file: "KEY (UNIT)" or "LABEL [KEY] (UNIT)" (export --format wide). */
struct wide_column {
	int col;
	char *key, *unit, *label; // label NULL: none given
};

enum time_unit { TIME_UNIT_S = 1, TIME_UNIT_MS = 1000, TIME_UNIT_US = 1000000 };

struct importer {
	const char *name; // for messages
	bool skip_bad;
	bool quiet; // the second pass: rows were reported already
	int64_t now;
	int64_t raw_horizon; // raw values before it were pruned (retention.raw): none can be stored
	enum time_unit unit;
	struct import_channel *ch;
	size_t n_ch, cap_ch;
	size_t *index; // open-addressed hash of ch by key: slot -> index + 1
	size_t cap_index;
	struct store_channel *stored;
	size_t n_stored;
	int col_time, col_unix, col_channel, col_value, col_unit, col_label;
	struct wide_column *wide; // a wide file's channel columns, else NULL
	size_t n_wide;
	size_t n_fields; // the header's count: a wide row with another, a long one with more: bad
	/* The second pass's values of one cycle, stored together (store_insert_samples()). */
	struct store_import_value *pending;
	size_t n_pending, cap_pending;
	int64_t pending_ts;
	unsigned long pending_line; // the last row they came from
	int64_t bad, good;
	int64_t added, identical, conflicting; // second pass: what the store found
	int64_t in_batch;                      // values in the open transaction
	int64_t batch_start;                   // its start, CLOCK_MONOTONIC ms
};

static int64_t mono_ms(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static uint64_t hash_key(const char *s) {
	uint64_t h = UINT64_C(1469598103934665603); // FNV-1a
	for (; *s; s++) {
		h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
	}
	return h;
}

static int cmp_stored(const void *a, const void *b) {
	return strcmp(((const struct store_channel *)a)->ch.key,
		      ((const struct store_channel *)b)->ch.key);
}

/* The database's channel @key, or NULL: a binary search of im->stored, sorted by key. */
static const struct store_channel *stored_channel(const struct importer *im, const char *key) {
	struct store_channel probe = {.ch.key = (char *)key};
	return im->n_stored
		       ? bsearch(&probe, im->stored, im->n_stored, sizeof(*im->stored), cmp_stored)
		       : NULL;
}

static struct import_channel *find_channel(struct importer *im, const char *key, bool add) {
	if ((im->n_ch + 1) * 2 > im->cap_index) {
		size_t cap = im->cap_index ? im->cap_index * 2 : 64;
		size_t *index = xcalloc(cap, sizeof(*index));
		for (size_t i = 0; i < im->n_ch; i++) {
			size_t s = hash_key(im->ch[i].key) & (cap - 1);
			while (index[s]) {
				s = (s + 1) & (cap - 1);
			}
			index[s] = i + 1;
		}
		free(im->index);
		im->index = index;
		im->cap_index = cap;
	}
	size_t s = hash_key(key) & (im->cap_index - 1);
	while (im->index[s]) {
		struct import_channel *c = &im->ch[im->index[s] - 1];
		if (strcmp(c->key, key) == 0) {
			return c;
		}
		s = (s + 1) & (im->cap_index - 1);
	}
	if (!add) {
		return NULL;
	}
	im->ch = xgrow(im->ch, &im->cap_ch, im->n_ch + 1, sizeof(*im->ch));
	struct import_channel *c = &im->ch[im->n_ch];
	*c = (struct import_channel){.key = xstrdup(key)};
	const struct store_channel *stored = stored_channel(im, key);
	if (stored) {
		c->known = true;
		c->id = stored->id;
		c->resolution = stored->ch.resolution;
		c->stored_resolution = c->resolution;
		c->unit = stored->ch.unit;
	}
	im->index[s] = ++im->n_ch;
	return c;
}

static void report(struct importer *im, unsigned long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void report(struct importer *im, unsigned long line, const char *fmt, ...) {
	im->bad++;
	if (im->quiet) {
		return;
	}
	if (im->bad > 50) {
		if (im->bad == 51) {
			fprintf(stderr, "%s: more bad rows follow; only the first 50 are listed\n",
				im->name);
		}
		return;
	}
	// The file's bytes quoted in a message reach a terminal: control characters escaped.
	struct buf msg, shown;
	buf_init(&msg);
	buf_init(&shown);
	va_list ap;
	va_start(ap, fmt);
	buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s:%lu: %s\n", im->name, line, table_printable(&shown, msg.data));
	buf_finish(&msg);
	buf_finish(&shown);
}

static const char *field(const struct csv_reader *r, int col) {
	return col >= 0 && (size_t)col < r->n_fields ? r->fields[col] : "";
}

static void wide_columns_free(struct importer *im) {
	for (size_t i = 0; i < im->n_wide; i++) {
		free(im->wide[i].key);
		free(im->wide[i].unit);
		free(im->wide[i].label);
	}
	free(im->wide);
	im->wide = NULL;
	im->n_wide = 0;
}

/* A wide header cell: "KEY (UNIT)" or "LABEL [KEY] (UNIT)", as export_create() writes it. */
static bool parse_wide_column(const char *h, struct wide_column *out) {
	size_t n = strlen(h);
	const char *open = NULL;
	for (const char *p = h; (p = strstr(p, " (")) != NULL; p++) {
		open = p; // the last " (": a label may hold parentheses of its own
	}
	if (!open || h[n - 1] != ')') {
		return false;
	}
	char *name = xstrndup(h, (size_t)(open - h));
	char *unit = xstrndup(open + 2, (size_t)(h + n - 1 - (open + 2)));
	char *key = name, *label = NULL;
	size_t m = strlen(name);
	char *bracket = m > 0 && name[m - 1] == ']' ? strrchr(name, '[') : NULL;
	if (bracket && bracket > name + 1 && bracket[-1] == ' ') {
		name[m - 1] = '\0';
		bracket[-1] = '\0';
		key = bracket + 1;
		label = name;
	}
	bool good = channel_key_valid(key) && (!*unit || channel_unit_lookup(unit));
	if (good) {
		*out = (struct wide_column){
			.key = xstrdup(key), .unit = unit, .label = label ? xstrdup(label) : NULL};
	} else {
		free(unit);
	}
	free(name);
	return good;
}

/* Wide columns by key, then by column. */
static int cmp_wide_key(const void *a, const void *b) {
	const struct wide_column *x = *(const struct wide_column *const *)a;
	const struct wide_column *y = *(const struct wide_column *const *)b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->col > y->col) - (x->col < y->col);
}

static bool parse_header(struct importer *im, struct csv_reader *r) {
	im->col_time = im->col_unix = im->col_channel = im->col_value = im->col_unit = -1;
	im->col_label = -1;
	wide_columns_free(im);
	for (size_t i = 0; i < r->n_fields; i++) {
		const char *h = r->fields[i];
		int *slot = strcmp(h, "time") == 0      ? &im->col_time
			    : strcmp(h, "unix") == 0    ? &im->col_unix
			    : strcmp(h, "channel") == 0 ? &im->col_channel
			    : strcmp(h, "value") == 0   ? &im->col_value
			    : strcmp(h, "unit") == 0    ? &im->col_unit
			    : strcmp(h, "label") == 0   ? &im->col_label
							: NULL;
		if (slot && *slot >= 0) {
			struct buf shown;
			buf_init(&shown);
			fprintf(stderr, "%s:%lu: column '%s' appears twice\n", im->name, r->line,
				table_printable(&shown, h));
			buf_finish(&shown);
			return false;
		}
		if (slot) {
			*slot = (int)i;
		}
	}
	if (im->col_time < 0 && im->col_unix < 0) {
		fprintf(stderr,
			"%s:%lu: the header must name the columns time (or unix), channel and value "
			"(optional: unit, label), or time (or unix) and a column per channel, "
			"KEY (UNIT), as export --format wide writes them\n",
			im->name, r->line);
		return false;
	}
	if (im->col_channel >= 0 && im->col_value >= 0) {
		im->n_fields = r->n_fields;
		return true; // long
	}
	if (im->col_channel >= 0 || im->col_value >= 0 || im->col_unit >= 0 || im->col_label >= 0) {
		fprintf(stderr,
			"%s:%lu: the header names %s but not %s: a long-format file needs time (or "
			"unix), channel and value\n",
			im->name, r->line,
			im->col_channel >= 0 ? "channel" : "value, unit or label",
			im->col_channel >= 0 ? "value" : "channel");
		return false;
	}
	// Wide: every other column is a channel.
	im->wide = xcalloc(r->n_fields ? r->n_fields : 1, sizeof(*im->wide));
	for (size_t i = 0; i < r->n_fields; i++) {
		if ((int)i == im->col_time || (int)i == im->col_unix) {
			continue;
		}
		struct wide_column *w = &im->wide[im->n_wide];
		if (!parse_wide_column(csv_text_value(r->fields[i]), w)) {
			fprintf(stderr,
				"%s:%lu: column %zu '%s' is not a channel: a wide header names each "
				"as KEY (UNIT) or LABEL [KEY] (UNIT), with a known unit\n",
				im->name, r->line, i + 1, r->fields[i]);
			return false;
		}
		w->col = (int)i;
		im->n_wide++;
	}
	if (im->n_wide == 0) {
		fprintf(stderr, "%s:%lu: the header names no channel column\n", im->name, r->line);
		return false;
	}
	// A channel named twice, found sorted (20,000 columns: no pairwise comparison).
	const struct wide_column **sorted = xcalloc(im->n_wide, sizeof(*sorted));
	for (size_t i = 0; i < im->n_wide; i++) {
		sorted[i] = &im->wide[i];
	}
	qsort(sorted, im->n_wide, sizeof(*sorted), cmp_wide_key);
	bool good = true;
	for (size_t i = 1; good && i < im->n_wide; i++) {
		if (strcmp(sorted[i - 1]->key, sorted[i]->key) == 0) {
			fprintf(stderr, "%s:%lu: channel %s has two columns (%d and %d)\n",
				im->name, r->line, sorted[i]->key, sorted[i - 1]->col + 1,
				sorted[i]->col + 1);
			good = false;
		}
	}
	free(sorted);
	im->n_fields = r->n_fields;
	return good;
}

/* A data row's time, checked. */
static bool parse_time(struct importer *im, const struct csv_reader *r, int64_t *ts) {
	unsigned long line = r->line;
	const char *t = field(r, im->col_time);
	const char *u = *t ? t : field(r, im->col_unix);
	char *end;
	errno = 0;
	long long stamp = *u >= '0' && *u <= '9' ? strtoll(u, &end, 10) : -1;
	bool numeric = stamp >= 0 && !*end && errno == 0;
	if (numeric) {
		// A unix stamp in the unit given; whole seconds are stored (truncated).
		*ts = stamp / (long long)im->unit;
	} else if (*t) {
		// Stored history is absolute: relative forms ("-24h", "now") make no sense here.
		if (t[0] == '-' || strcmp(t, "now") == 0 || !timefmt_parse_time(t, im->now, ts)) {
			report(im, line, "bad time '%s' (ISO 8601 with a zone, or unix seconds)",
			       t);
			return false;
		}
	} else {
		report(im, line, "no time: the time and unix cells are empty or bad");
		return false;
	}
	if (numeric && im->unit == TIME_UNIT_S && *ts > im->now + IMPORT_FUTURE_S &&
	    stamp >= 100000000000LL) {
		bool ms = stamp < 100000000000000LL;
		report(im, line,
		       "time %s looks like %s since 1970, not seconds; to import such stamps add "
		       "--time-unit %s",
		       u, ms ? "milliseconds" : "microseconds", ms ? "ms" : "us");
		return false;
	}
	if (*ts > im->now + IMPORT_FUTURE_S) {
		char iso[TIMEFMT_ISO_LEN];
		timefmt_iso(*ts, iso);
		report(im, line,
		       "time %s (%s) is in the future: a running thermlogd could store no cycle "
		       "until then",
		       u, iso);
		return false;
	}
	if (*ts < IMPORT_OLDEST) {
		char iso[TIMEFMT_ISO_LEN];
		timefmt_iso(*ts, iso);
		report(im, line, "time %s (%s) is before 2000-01-01: not a plausible stamp", u,
		       iso);
		return false;
	}
	if (*ts < im->raw_horizon) {
		char iso[TIMEFMT_ISO_LEN], horizon[TIMEFMT_ISO_LEN];
		timefmt_iso(*ts, iso);
		timefmt_iso(im->raw_horizon, horizon);
		report(im, line,
		       "time %s (%s) is before %s, where this database's raw history starts (older "
		       "values were pruned by retention.raw)",
		       u, iso, horizon);
		return false;
	}
	return true;
}

/*
 * One value of channel @key on @line, checked; on success fills the channel and the exact
 * value. @label: the file's label for the channel, "" or NULL for none.
 */
static bool parse_value(struct importer *im, unsigned long line, const char *key, const char *v,
			const char *unit_text, const char *label, bool first_pass,
			struct import_channel **out_ch, struct decimal *value) {
	if (!channel_key_valid(key)) {
		report(im, line,
		       "channel name '%s' breaks the key rules (1 to %d printable ASCII "
		       "characters, no spaces)",
		       key, CHANNEL_KEY_MAX);
		return false;
	}
	if (!parse_decimal(v, value)) {
		report(im, line, "bad value '%s' (a decimal number)", v);
		return false;
	}
	const char *unit = *unit_text ? channel_unit_lookup(unit_text) : "1";
	if (!unit) {
		report(im, line, "unknown unit '%s'", unit_text);
		return false;
	}
	struct import_channel *c = find_channel(im, key, first_pass);
	if (!c) {
		return false; // skipped in the first pass
	}
	if (!c->unit) {
		c->unit = unit;
	} else if (strcmp(c->unit, unit) != 0 && *unit_text) {
		report(im, line, "unit '%s' differs from %s's unit '%s'", unit_text, key, c->unit);
		return false;
	}
	if (first_pass && label && *label && !c->label) {
		c->label = xstrdup(label);
	}
	if (first_pass) {
		if (value->places > IMPORT_MAX_PLACES) {
			report(im, line, "value %s has more than %d decimal places", v,
			       IMPORT_MAX_PLACES);
			return false;
		}
		if (c->known) {
			// A finer value refines the channel (stored integers are rescaled exactly).
			int64_t q, factor;
			double res = c->resolution;
			if (!quantize(value, res, &q) &&
			    (!channel_common_resolution(c->resolution,
							1.0 / (double)pow10s[value->places], &res,
							&factor) ||
			     !quantize(value, res, &q))) {
				report(im, line,
				       "value %s cannot be stored at %s's resolution %g or a finer "
				       "common one",
				       v, key, c->resolution);
				return false;
			}
			c->resolution = res;
		} else if (value->places > c->places) {
			c->places = value->places;
		}
	}
	*out_ch = c;
	return true;
}

/* Stores the values of one cycle gathered so far, in short transactions. 0, or -1 after saying
 * why. */
static int import_flush(struct importer *im, struct store *store) {
	if (im->n_pending == 0) {
		return 0;
	}
	size_t n = im->n_pending;
	im->n_pending = 0;
	if (store_insert_samples(store, im->pending_ts, im->pending, n) < 0) {
		fprintf(stderr, "%s:%lu: could not store the values\n", im->name, im->pending_line);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		enum store_import_result res = im->pending[i].result;
		im->added += res == STORE_IMPORT_NEW;
		im->identical += res == STORE_IMPORT_IDENTICAL;
		im->conflicting += res == STORE_IMPORT_CONFLICT;
	}
	// Short transactions with a pause between them: a daemon's cycle write waiting on
	// its busy handler gets in within one pause instead of waiting for the whole file.
	im->in_batch += (int64_t)n;
	if (im->in_batch >= IMPORT_BATCH || mono_ms() - im->batch_start >= IMPORT_BATCH_MS) {
		if (store_commit(store) < 0) {
			fprintf(stderr, "%s:%lu: could not commit\n", im->name, im->pending_line);
			return -1;
		}
		log_debug("import: committed %lld values", (long long)im->in_batch);
		im->in_batch = 0;
		nanosleep(&(struct timespec){0, IMPORT_PAUSE_MS * 1000000L}, NULL);
		if (store_begin(store) < 0) {
			fprintf(stderr, "%s:%lu: could not start a transaction\n", im->name,
				im->pending_line);
			return -1;
		}
		im->batch_start = mono_ms();
	}
	return 0;
}

/*
 * Gathers one checked value; the values of one cycle (a wide row, or long rows of one time in
 * a row) are stored together: a cycle's row is written once, not once a value.
 */
static int import_value(struct importer *im, struct store *store, struct import_channel *c,
			int64_t ts, const struct decimal *value, unsigned long line) {
	int64_t q;
	if (!quantize(value, c->resolution, &q)) {
		return 0; // reported by the first pass (--skip-bad)
	}
	if (im->n_pending > 0 && ts != im->pending_ts && import_flush(im, store) < 0) {
		return -1;
	}
	im->pending = xgrow(im->pending, &im->cap_pending, im->n_pending + 1, sizeof(*im->pending));
	im->pending[im->n_pending++] = (struct store_import_value){.channel_id = c->id, .q = q};
	im->pending_ts = ts;
	im->pending_line = line;
	return 0;
}

/* The values of a data row: one (long) or one per non-empty channel cell (wide). */
static int import_row(struct importer *im, const struct csv_reader *r, struct store *store,
		      bool first_pass) {
	// A wide row with a cell too many or too few has every value after it in another
	// channel's column; a long row may end before its optional unit and label.
	if (im->wide ? r->n_fields != im->n_fields : r->n_fields > im->n_fields) {
		report(im, r->line, "%zu fields where the header has %zu: a ragged row",
		       r->n_fields, im->n_fields);
		return 0;
	}
	int64_t ts;
	if (!parse_time(im, r, &ts)) {
		return 0;
	}
	size_t n = im->wide ? im->n_wide : 1;
	for (size_t i = 0; i < n; i++) {
		const struct wide_column *w = im->wide ? &im->wide[i] : NULL;
		const char *v = field(r, w ? w->col : im->col_value);
		if (w && !*v) {
			continue; // no value of this channel in this cycle
		}
		struct import_channel *c = NULL;
		struct decimal value;
		// A text field export neutralised against spreadsheet formulas reads as it was.
		if (!parse_value(im, r->line,
				 w ? w->key : csv_text_value(field(r, im->col_channel)), v,
				 w ? w->unit : field(r, im->col_unit),
				 w ? w->label : csv_text_value(field(r, im->col_label)), first_pass,
				 &c, &value)) {
			continue;
		}
		if (first_pass) {
			c->rows++;
			im->good++;
		} else if (import_value(im, store, c, ts, &value, r->line) < 0) {
			return -1;
		}
	}
	return 0;
}

static int import_pass(struct importer *im, FILE *in, struct store *store, bool first_pass) {
	struct csv_reader r;
	csv_reader_init(&r, in);
	int rc = csv_read(&r);
	if (rc <= 0) {
		fprintf(stderr, "%s: %s\n", im->name, rc < 0 ? r.error : "empty file: no header");
		csv_reader_finish(&r);
		return -1;
	}
	if (!parse_header(im, &r)) {
		csv_reader_finish(&r);
		return -1;
	}
	while ((rc = csv_read(&r)) == 1) {
		if (import_row(im, &r, store, first_pass) < 0) {
			rc = -1;
			break;
		}
	}
	if (rc == 0 && !first_pass && import_flush(im, store) < 0) {
		rc = -1;
	}
	if (rc < 0 && r.error[0]) {
		fprintf(stderr, "%s: %s\n", im->name, r.error);
	}
	csv_reader_finish(&r);
	return rc < 0 ? -1 : 0;
}

/* Copies @in to an anonymous temporary file so it can be read twice. */
static FILE *spool(FILE *in) {
	FILE *tmp = tmpfile();
	if (!tmp) {
		return NULL;
	}
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0) {
		if (fwrite(chunk, 1, n, tmp) != n) {
			fclose(tmp);
			return NULL;
		}
	}
	if (ferror(in) || fflush(tmp) != 0) {
		fclose(tmp);
		return NULL;
	}
	rewind(tmp);
	return tmp;
}

/*
 * In the import's transaction: registers the channels the file brings (at the resolution its
 * values show) and refines the stored ones it writes finer; -1 after the message.
 */
static int import_channels(struct importer *im, struct store *store, int64_t *new_channels) {
	struct channel *chs = xcalloc(im->n_ch ? im->n_ch : 1, sizeof(*chs));
	struct import_channel **of = xcalloc(im->n_ch ? im->n_ch : 1, sizeof(*of));
	int64_t *ids = xcalloc(im->n_ch ? im->n_ch : 1, sizeof(*ids));
	size_t n = 0;
	for (size_t i = 0; i < im->n_ch; i++) {
		struct import_channel *c = &im->ch[i];
		if (c->known || c->rows == 0) {
			continue;
		}
		c->resolution = 1.0 / (double)pow10s[c->places];
		of[n] = c;
		chs[n++] = (struct channel){.key = c->key,
					    .source = "import",
					    .label = c->label ? c->label : c->key,
					    .kind = channel_kind_of_unit(c->unit),
					    .unit = c->unit,
					    .resolution = c->resolution};
	}
	// one call for them all: thousands of columns register in O(n log n)
	int rc = n > 0 ? store_channels_ensure(store, chs, n, ids) : 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		of[i]->id = ids[i];
	}
	*new_channels += rc == 0 ? (int64_t)n : 0;
	free(chs);
	free(of);
	free(ids);
	if (rc < 0) {
		fprintf(stderr, "thermlog import: could not register the %zu new channels\n", n);
		return -1;
	}
	for (size_t i = 0; i < im->n_ch; i++) {
		struct import_channel *c = &im->ch[i];
		double applied;
		if (c->known && c->resolution < c->stored_resolution &&
		    store_channel_refine(store, c->id, c->resolution, &applied) < 0) {
			fprintf(stderr, "thermlog import: could not refine %s to resolution %g\n",
				c->key, c->resolution);
			return -1;
		}
	}
	return 0;
}

int cli_import(struct cli_context *ctx, int argc, char **argv) {
	static const struct option options[] = {
		CLI_OPTION_FORMAT, CLI_OPTION_SKIP_BAD, CLI_OPTION_TIME_UNIT, CLI_OPTION_HELP, {0},
	};
	const char *usage =
		"usage: thermlog import [--format long|wide] [--skip-bad] [--time-unit s|ms|us] "
		"FILE|-\n"
		"Columns by header name: time (ISO 8601 or unix seconds) or unix, channel, value; "
		"optional unit, label.\nOr wide, as export --format wide writes it: time or unix, "
		"then a column per channel,\nKEY (UNIT) or LABEL [KEY] (UNIT). Stamps must lie "
		"between 2000-01-01 and now;\n--time-unit ms|us reads unix stamps in milliseconds "
		"or microseconds.\n";
	struct importer im = {.now = (int64_t)time(NULL), .unit = TIME_UNIT_S};
	int opt;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		if (opt == CLI_OPT_FORMAT && strcmp(optarg, "long") != 0 &&
		    strcmp(optarg, "wide") != 0) {
			// Either is read by its header; the option only says what is expected.
			fprintf(stderr, "thermlog import: unknown format '%s' (long or wide)\n",
				optarg);
			return CLI_EXIT_USAGE;
		} else if (opt == CLI_OPT_SKIP_BAD) {
			im.skip_bad = true;
		} else if (opt == CLI_OPT_TIME_UNIT) {
			if (strcmp(optarg, "s") == 0) {
				im.unit = TIME_UNIT_S;
			} else if (strcmp(optarg, "ms") == 0) {
				im.unit = TIME_UNIT_MS;
			} else if (strcmp(optarg, "us") == 0) {
				im.unit = TIME_UNIT_US;
			} else {
				fprintf(stderr,
					"thermlog import: bad --time-unit '%s' (s, ms or us)\n",
					optarg);
				return CLI_EXIT_USAGE;
			}
		} else if (opt != CLI_OPT_FORMAT) { // --help, or an option getopt_long refused
			return cli_usage(opt, usage);
		}
	}
	if (optind + 1 != argc) {
		fputs(usage, stderr);
		return CLI_EXIT_USAGE;
	}
	const char *path = argv[optind];
	bool from_stdin = strcmp(path, "-") == 0;
	im.name = from_stdin ? "stdin" : path;
	FILE *in = from_stdin ? spool(stdin) : cli_input_open(path);
	if (!in) {
		fprintf(stderr, "thermlog import: could not read %s: %s\n", im.name,
			strerror(errno));
		return CLI_EXIT_FAILURE;
	}
	int rc = cli_setup(ctx);
	if (rc != CLI_EXIT_OK) {
		fclose(in);
		return rc;
	}
	struct store *store = ctx->store;
	rc = CLI_EXIT_FAILURE;
	if (store_channels(store, &im.stored, &im.n_stored) < 0 ||
	    store_raw_horizon(store, &im.raw_horizon) < 0) {
		fprintf(stderr, "thermlog import: could not read the database\n");
		goto out;
	}
	if (im.n_stored > 0) {
		qsort(im.stored, im.n_stored, sizeof(*im.stored), cmp_stored);
	}
	if (import_pass(&im, in, store, true) < 0) {
		goto out;
	}
	log_debug("import: %lld rows checked, %lld bad", (long long)im.good, (long long)im.bad);
	if (im.bad > 0 && !im.skip_bad) {
		fprintf(stderr,
			"thermlog import: %lld bad rows; nothing imported (--skip-bad imports "
			"the good ones)\n",
			(long long)im.bad);
		goto out;
	}
	int64_t skipped = im.bad, new_channels = 0;
	if (store_begin(store) < 0) {
		fprintf(stderr, "thermlog import: could not start a transaction\n");
		goto out;
	}
	if (import_channels(&im, store, &new_channels) < 0) {
		store_rollback(store);
		goto out;
	}
	rewind(in);
	im.bad = 0;
	im.quiet = true;
	im.batch_start = mono_ms();
	if (import_pass(&im, in, store, false) < 0 || store_commit(store) < 0) {
		store_rollback(store);
		if (im.added + im.identical + im.conflicting > im.in_batch) {
			fprintf(stderr,
				"thermlog import: stopped; the values before the failing batch are "
				"stored, and the same import run again completes it\n");
		} else {
			fprintf(stderr, "thermlog import: nothing imported\n");
		}
		goto out;
	}
	// Roll up the imported hours now, so the next query over them is served from rollups.
	if (store_maintain(store, im.now, 0) < 0) {
		fprintf(stderr, "thermlog import: imported, but the hourly rollups failed\n");
	}
	cli_keep_board(ctx, "import");
	printf("imported %lld values of %zu channels (%lld new channels) from %s: %lld new, %lld "
	       "identical, %lld conflicting (the stored value kept)",
	       (long long)im.added, im.n_ch, (long long)new_channels, im.name, (long long)im.added,
	       (long long)im.identical, (long long)im.conflicting);
	if (skipped) {
		printf("; %lld bad rows skipped", (long long)skipped);
	}
	printf("\n");
	rc = CLI_EXIT_OK;
out:
	for (size_t i = 0; i < im.n_ch; i++) {
		free(im.ch[i].key);
		free(im.ch[i].label);
	}
	free(im.ch);
	wide_columns_free(&im);
	free(im.index);
	free(im.pending);
	store_channels_free(im.stored, im.n_stored);
	fclose(in);
	return rc;
}

/* ---- backup ---- */

int cli_backup(struct cli_context *ctx, int argc, char **argv) {
	if (argc != 2 || argv[1][0] == '-') {
		bool help =
			argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0);
		fputs("usage: thermlog backup FILE\nA consistent copy of the database, taken while "
		      "the daemon keeps writing.\n",
		      help ? stdout : stderr);
		return help ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	}
	const char *path = argv[1];
	int rc = cli_setup(ctx);
	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	struct store *store = ctx->store;
	// The copy gets the database's mode: a 0640 database does not become world-readable.
	const char *db_path = cli_store_path(ctx);
	struct stat sb;
	mode_t mode = stat(db_path, &sb) == 0 ? (sb.st_mode & 07777) : 0600;
	struct cli_output out;
	rc = CLI_EXIT_FAILURE;
	// SQLite writes the copy by name: a pipe or a device (which would block) cannot take it.
	if (stat(path, &sb) == 0 && (S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode))) {
		fprintf(stderr, "thermlog backup: %s is not a regular file; name a new file\n",
			path);
		goto out;
	}
	if (!cli_output_open(&out, "backup", path, db_path, false, mode)) {
		goto out;
	}
	fclose(out.f); // SQLite writes the copy by name
	out.f = NULL;
	if (store_backup(store, out.tmp) < 0) { // logs why
		fprintf(stderr, "thermlog backup: could not write %s\n", path);
		cli_output_abort(&out);
		goto out;
	}
	if (!cli_output_commit(&out, "backup")) {
		goto out;
	}
	printf("wrote %s (%lld bytes, mode %04o), a copy of %s\n", path,
	       stat(path, &sb) == 0 ? (long long)sb.st_size : 0LL, (unsigned)mode, db_path);
	rc = CLI_EXIT_OK;
out:
	return rc;
}
