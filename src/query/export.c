/* The streaming CSV export: long or wide rows, exact at each channel's resolution. */
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "csv.h"
#include "stats.h"
#include "store.h"
#include "timefmt.h"
#include "xalloc.h"

#define EXPORT_SLICE_BYTES (64 * 1024)

/* What a long row of one channel needs, prepared once. */
struct export_column {
	char *prefix; // the key, CSV-quoted when needed, and a comma
	char *suffix; // a comma, the unit, a comma, the label (none if it is the key) and CRLF
	size_t prefix_len, suffix_len;
	double resolution;
	int digits; // resolution = step / 10^digits, or digits < 0: not a short decimal
	int64_t step;
};

struct export {
	struct store *store;
	enum export_format format;
	bool include_unsynced;
	struct query_selection sel;
	int64_t cursor, to; // the next slice starts at cursor
	bool done;
	struct buf out;
	size_t out_pos;
	struct export_column *col; // per slot
	// the current cycle (wide) and a cache of its time text
	int64_t row_ts;
	bool row_open;
	int64_t *row_q;
	bool *row_have;
	int64_t iso_ts;
	char iso[TIMEFMT_ISO_LEN + 24]; // "time,unix," prefix of the cached cycle
	size_t iso_len;
};

/* The channel's label for the CSV: "" when it has none of its own (the key). */
static const char *export_label(const struct channel *ch) {
	return ch->label && *ch->label && strcmp(ch->label, ch->key) != 0 ? ch->label : "";
}

/* @s as a CSV text field: quoted as needed, and kept from being read as a formula. */
static char *csv_text(const char *s) {
	struct buf b;
	buf_init(&b);
	csv_text_field(&b, s, true);
	return buf_steal(&b);
}

static void time_prefix(struct export *e, int64_t ts) {
	if (e->iso_len && e->iso_ts == ts) {
		return;
	}
	char iso[TIMEFMT_ISO_LEN];
	timefmt_iso(ts, iso);
	e->iso_len = (size_t)snprintf(e->iso, sizeof(e->iso), "%s,%lld,", iso, (long long)ts);
	e->iso_ts = ts;
}

static void flush_wide_row(struct export *e) {
	if (!e->row_open) {
		return;
	}
	time_prefix(e, e->row_ts);
	buf_append(&e->out, e->iso, e->iso_len - 1); // without the trailing comma
	for (size_t k = 0; k < e->sel.n; k++) {
		buf_putc(&e->out, ',');
		if (e->row_have[k]) {
			char v[STATS_VALUE_LEN];
			size_t len = stats_format_value(
				v, e->row_q[k], query_selection_channel(&e->sel, k)->resolution);
			buf_append(&e->out, v, len);
			e->row_have[k] = false;
		}
	}
	csv_end_record(&e->out);
	e->row_open = false;
}

static int export_sample(void *ctx, const struct store_sample *s) {
	struct export *e = ctx;
	int slot = query_selection_slot(&e->sel, s->channel_id);
	if (slot < 0 || (s->clock == CLOCK_STATE_UNSYNCED && !e->include_unsynced)) {
		return 0;
	}
	bool new_cycle = !e->row_open || s->ts != e->row_ts;
	if (new_cycle && e->out.len >= EXPORT_SLICE_BYTES) {
		// Stop at a cycle boundary so the next slice starts with a whole cycle.
		e->cursor = s->ts;
		return 1;
	}
	if (e->format == EXPORT_FORMAT_WIDE) {
		if (new_cycle) {
			flush_wide_row(e);
			e->row_open = true;
			e->row_ts = s->ts;
		}
		e->row_q[slot] = s->q;
		e->row_have[slot] = true;
		return 0;
	}
	e->row_open = true;
	e->row_ts = s->ts;
	time_prefix(e, s->ts);
	const struct export_column *c = &e->col[slot];
	char v[STATS_VALUE_LEN];
	int64_t m;
	size_t len = c->digits >= 0 && !__builtin_mul_overflow(s->q, c->step, &m)
			     ? stats_format_decimal(v, m, c->digits)
			     : stats_format_value(v, s->q, c->resolution);
	// One append per row: this loop runs for every exported value.
	char row[512];
	size_t total = e->iso_len + c->prefix_len + len + c->suffix_len;
	if (total > sizeof(row)) {
		buf_append(&e->out, e->iso, e->iso_len);
		buf_append(&e->out, c->prefix, c->prefix_len);
		buf_append(&e->out, v, len);
		buf_append(&e->out, c->suffix, c->suffix_len);
		return 0;
	}
	char *w = row;
	memcpy(w, e->iso, e->iso_len);
	w += e->iso_len;
	memcpy(w, c->prefix, c->prefix_len);
	w += c->prefix_len;
	memcpy(w, v, len);
	w += len;
	memcpy(w, c->suffix, c->suffix_len);
	buf_append(&e->out, row, total);
	return 0;
}

struct export *export_create(struct store *store, const struct query_params *p,
			     enum export_format format, char **err) {
	int64_t from, to;
	int rc = query_window(store, p, &from, &to, err);
	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	struct export *e = xcalloc(1, sizeof(*e));
	*e = (struct export){.store = store,
			     .format = format,
			     .include_unsynced = p->include_unsynced,
			     .cursor = from,
			     .to = to};
	buf_init(&e->out);
	if ((rc = query_select(store, p->channels, p->n_channels, &e->sel, err)) < 0) {
		free(e);
		errno = -rc;
		return NULL;
	}
	size_t n = e->sel.n ? e->sel.n : 1;
	e->col = xcalloc(n, sizeof(*e->col));
	e->row_q = xcalloc(n, sizeof(int64_t));
	e->row_have = xcalloc(n, sizeof(bool));
	for (size_t k = 0; k < e->sel.n; k++) {
		const struct channel *ch = query_selection_channel(&e->sel, k);
		struct export_column *c = &e->col[k];
		char *key = csv_text(ch->key), *unit = csv_text(ch->unit);
		char *label = csv_text(export_label(ch));
		c->prefix = xasprintf("%s,", key);
		c->suffix = xasprintf(",%s,%s\r\n", unit, label);
		free(label);
		c->prefix_len = strlen(c->prefix);
		c->suffix_len = strlen(c->suffix);
		c->resolution = ch->resolution;
		if (!stats_resolution_step(ch->resolution, &c->digits, &c->step)) {
			c->digits = -1;
		}
		free(key);
		free(unit);
	}
	if (format == EXPORT_FORMAT_LONG) {
		buf_puts(&e->out, "time,unix,channel,value,unit,label\r\n");
	} else {
		buf_puts(&e->out, "time,unix");
		for (size_t k = 0; k < e->sel.n; k++) {
			const struct channel *ch = query_selection_channel(&e->sel, k);
			// "KEY (UNIT)", or "LABEL [KEY] (UNIT)": thermlog import reads either back.
			const char *label = export_label(ch);
			char *name =
				*label ? xasprintf("%s [%s] (%s)", label, ch->key,
						   ch->unit ? ch->unit : "")
				       : xasprintf("%s (%s)", ch->key, ch->unit ? ch->unit : "");
			csv_text_field(&e->out, name, false);
			free(name);
		}
		csv_end_record(&e->out);
	}
	if (e->sel.n == 0) {
		e->done = true;
	}
	return e;
}

/* Reads the next slice of rows into e->out. */
static int export_fill(struct export *e) {
	int64_t start = e->cursor;
	int rc = store_scan_samples(e->store, start, e->to, e->sel.ids, e->sel.n, true,
				    export_sample, e);
	if (rc < 0) {
		return -EIO;
	}
	// A slice ends at a cycle boundary, so the open wide row is whole either way.
	if (e->format == EXPORT_FORMAT_WIDE) {
		flush_wide_row(e);
	}
	e->done = rc == 0; // the scan reached the end of the window
	return 0;
}

ssize_t export_read(struct export *e, char *buf, size_t max) {
	while (e->out_pos == e->out.len) {
		if (e->done) {
			return 0;
		}
		buf_clear(&e->out);
		e->out_pos = 0;
		if (export_fill(e) < 0) {
			return -EIO;
		}
	}
	size_t n = e->out.len - e->out_pos;
	if (n > max) {
		n = max;
	}
	memcpy(buf, e->out.data + e->out_pos, n);
	e->out_pos += n;
	return (ssize_t)n;
}

void export_destroy(struct export *e) {
	if (!e) {
		return;
	}
	for (size_t k = 0; k < e->sel.n; k++) {
		free(e->col[k].prefix);
		free(e->col[k].suffix);
	}
	free(e->col);
	free(e->row_q);
	free(e->row_have);
	buf_finish(&e->out);
	query_selection_finish(&e->sel);
	free(e);
}
