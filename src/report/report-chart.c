/*
 * The report's charts as SVG: scaled by their viewBox (no fixed size), text escaped, nothing
 * referenced outside the document, so the same text is a file of its own or inline HTML.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "report-internal.h"
#include "stats.h"
#include "timefmt.h"
#include "unit.h"

#define CHART_W      640
#define CHART_H      320
#define CHART_LEFT   52
#define CHART_RIGHT  16
#define CHART_TOP    16
#define CHART_BOTTOM 72

enum zone_style { ZONE_FAINT, ZONE_BIGCORE, ZONE_NPU };

static enum zone_style style_of(const struct channel *ch) {
	if (strstr(ch->key, "bigcore") || (ch->label && strstr(ch->label, "big"))) {
		return ZONE_BIGCORE;
	}
	if (strstr(ch->key, "npu") || (ch->label && strstr(ch->label, "NPU"))) {
		return ZONE_NPU;
	}
	return ZONE_FAINT;
}

static const char *const stroke[] = {
	[ZONE_FAINT] = "stroke=\"#7f8c8d\" stroke-opacity=\"0.45\" stroke-width=\"1\"",
	[ZONE_BIGCORE] = "stroke=\"#c0392b\" stroke-width=\"2.5\"",
	[ZONE_NPU] = "stroke=\"#1f5fa8\" stroke-width=\"2.5\" stroke-dasharray=\"7 4\"",
};

/* "HH:MM:SS" of @ts. */
static void clock_text(int64_t ts, char out[TIMEFMT_ISO_LEN]) {
	char iso[TIMEFMT_ISO_LEN];
	timefmt_iso(ts, iso);
	snprintf(out, TIMEFMT_ISO_LEN, "%.8s", iso + 11);
}

char *report_chart_peak(const struct report_board *b) {
	const struct query_peak *pk = &b->peak;
	double lo = INFINITY, hi = -INFINITY;
	for (size_t c = 0; c < pk->n_columns; c++) {
		const struct channel *ch = pk->columns[c];
		if (ch->kind != CHANNEL_KIND_TEMPERATURE) {
			continue;
		}
		for (size_t r = 0; r < pk->n_rows; r++) {
			size_t i = r * pk->n_columns + c;
			if (pk->have[i]) {
				double v = stats_value(pk->cells[i], ch->resolution);
				lo = v < lo ? v : lo;
				hi = v > hi ? v : hi;
			}
		}
	}
	if (!(hi > lo)) { // one value: a band of a degree around it
		lo -= 0.5;
		hi += 0.5;
	}
	double pad = (hi - lo) * 0.05;
	lo -= pad;
	hi += pad;
	int64_t t0 = pk->row_ts[0], t1 = pk->row_ts[pk->n_rows - 1];
	double pw = CHART_W - CHART_LEFT - CHART_RIGHT, ph = CHART_H - CHART_TOP - CHART_BOTTOM;
#define X(ts) (CHART_LEFT + (t1 > t0 ? (double)((ts)-t0) / (double)(t1 - t0) * pw : pw / 2))
#define Y(v)  (CHART_TOP + (hi - (v)) / (hi - lo) * ph)
	struct buf s;
	buf_init(&s);
	buf_printf(&s,
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" role=\"img\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n<title>",
		   CHART_W, CHART_H);
	report_escape_xml(&s, pk->channel->key);
	buf_puts(&s, ": the cycles around its maximum</title>\n");
	buf_printf(&s, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
		   CHART_W, CHART_H);
	// Axes and four temperature ticks.
	buf_printf(&s,
		   "<path d=\"M%d %d V%.1f H%.1f\" fill=\"none\" stroke=\"#333333\" "
		   "stroke-width=\"1\"/>\n",
		   CHART_LEFT, CHART_TOP, CHART_TOP + ph, CHART_LEFT + pw);
	for (int k = 0; k <= 4; k++) {
		double v = lo + (hi - lo) * k / 4.0, y = Y(v);
		buf_printf(&s,
			   "<path d=\"M%d %.1f H%.1f\" stroke=\"#dddddd\" stroke-width=\"1\"/>"
			   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.1f</text>\n",
			   CHART_LEFT, y, CHART_LEFT + pw, CHART_LEFT - 6, y + 4, v);
	}
	char a[TIMEFMT_ISO_LEN], z[TIMEFMT_ISO_LEN];
	clock_text(t0, a);
	clock_text(t1, z);
	buf_printf(&s,
		   "<text x=\"%d\" y=\"%.1f\">%s</text><text x=\"%.1f\" y=\"%.1f\" "
		   "text-anchor=\"end\">%s UTC</text>\n<text x=\"12\" y=\"%d\">°C</text>\n",
		   CHART_LEFT, CHART_TOP + ph + 16, a, CHART_LEFT + pw, CHART_TOP + ph + 16, z,
		   CHART_TOP + 4);
	// The faint zones first, then the big-core and NPU zones over them.
	for (int pass = 0; pass < 2; pass++) {
		for (size_t c = 0; c < pk->n_columns; c++) {
			const struct channel *ch = pk->columns[c];
			enum zone_style st = style_of(ch);
			if (ch->kind != CHANNEL_KIND_TEMPERATURE || (st != ZONE_FAINT) != pass) {
				continue;
			}
			buf_puts(&s, "<polyline fill=\"none\" ");
			buf_puts(&s, stroke[st]);
			buf_puts(&s, " points=\"");
			for (size_t r = 0; r < pk->n_rows; r++) {
				size_t i = r * pk->n_columns + c;
				if (pk->have[i]) {
					double v = stats_value(pk->cells[i], ch->resolution);
					buf_printf(&s, "%s%.1f,%.1f", r ? " " : "",
						   X(pk->row_ts[r]), Y(v));
				}
			}
			buf_puts(&s, "\"><title>");
			report_escape_xml(&s, ch->key);
			buf_puts(&s, "</title></polyline>\n");
		}
	}
	double mx = stats_value(pk->max_q, pk->channel->resolution);
	buf_printf(&s,
		   "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"none\" stroke=\"#000000\" "
		   "stroke-width=\"1.5\"/>\n",
		   X(pk->max_ts), Y(mx));
	// The legend: the styles, and the hottest zone by name.
	double ly = CHART_TOP + ph + 36;
	static const char *const names[] = {"big-core zone", "NPU zone", "other zones"};
	static const enum zone_style order[] = {ZONE_BIGCORE, ZONE_NPU, ZONE_FAINT};
	for (size_t k = 0; k < 3; k++) {
		double x = CHART_LEFT + (double)k * 180;
		buf_printf(&s,
			   "<path d=\"M%.1f %.1f h28\" %s/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			   x, ly, stroke[order[k]], x + 34, ly + 4, names[k]);
	}
	char at[TIMEFMT_ISO_LEN];
	clock_text(pk->max_ts, at);
	buf_printf(&s, "<text x=\"%d\" y=\"%.1f\">○ maximum: ", CHART_LEFT, ly + 24);
	report_escape_xml(&s, pk->channel->key);
	buf_printf(&s, " %.2f °C at %s</text>\n</svg>\n", mx, at);
#undef X
#undef Y
	return buf_steal(&s);
}

/* The frame shared by the design review's charts: title, background, axes. */
static void frame(struct buf *s, const char *title, const char *what, double ph, double pw) {
	buf_printf(s,
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" role=\"img\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n<title>",
		   CHART_W, CHART_H);
	report_escape_xml(s, title);
	buf_printf(s, ": %s</title>\n", what);
	buf_printf(s, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
		   CHART_W, CHART_H);
	buf_printf(s,
		   "<path d=\"M%d %d V%.1f H%.1f\" fill=\"none\" stroke=\"#333333\" "
		   "stroke-width=\"1\"/>\n",
		   CHART_LEFT, CHART_TOP, CHART_TOP + ph, CHART_LEFT + pw);
}

/*
 * The axis top for values up to @max: four ticks of a round step (1, 2, 2.5 or 5 times a power
 * of ten); *places gets the decimals the step needs.
 */
static double nice_top(double max, int *places) {
	double raw = max > 0 ? max / 4 : 0.25;
	double mag = pow(10, floor(log10(raw)));
	static const double steps[] = {1, 2, 2.5, 5, 10};
	double step = mag * 10;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (steps[i] * mag >= raw * (1 - 1e-9)) {
			step = steps[i] * mag;
			break;
		}
	}
	int p = (int)-floor(log10(step) + 1e-9);
	p += fmod(step / pow(10, floor(log10(step) + 1e-9)), 1) != 0; // 2.5 needs one more
	*places = p < 0 ? 0 : p;
	return 4 * step;
}

/* Four ticks of [0, hi] on the left axis, @places decimals. */
static void ticks(struct buf *s, double hi, double ph, double pw, int places) {
	for (int k = 0; k <= 4; k++) {
		double v = hi * k / 4.0, y = CHART_TOP + ph - v / hi * ph;
		buf_printf(s,
			   "<path d=\"M%d %.1f H%.1f\" stroke=\"#dddddd\" stroke-width=\"1\"/>"
			   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n",
			   CHART_LEFT, y, CHART_LEFT + pw, CHART_LEFT - 6, y + 4, places, v);
	}
}

char *report_chart_profile(const struct lifetime_profile_entry *pe, double bin_k) {
	double hi = 0;
	for (size_t k = 0; k < pe->n_bins; k++) {
		hi = pe->bins[k].hours > hi ? pe->bins[k].hours : hi;
	}
	int places;
	hi = nice_top(hi, &places);
	double pw = CHART_W - CHART_LEFT - CHART_RIGHT, ph = CHART_H - CHART_TOP - CHART_BOTTOM;
	struct buf s;
	buf_init(&s);
	frame(&s, pe->e->cc->name, "hours per temperature bin", ph, pw);
	ticks(&s, hi, ph, pw, places);
	double w = pw / (double)(pe->n_bins ? pe->n_bins : 1);
	size_t every = pe->n_bins > 16 ? (pe->n_bins + 15) / 16 : 1; // at most 16 edge labels
	for (size_t k = 0; k < pe->n_bins; k++) {
		const struct lifetime_profile_bin *b = &pe->bins[k];
		double x = CHART_LEFT + w * (double)k, h = b->hours / hi * ph;
		buf_printf(&s,
			   "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			   "fill=\"#c0392b\" fill-opacity=\"0.75\"><title>[%g,%g) °C: %.2f h"
			   "</title></rect>\n",
			   x + 1, CHART_TOP + ph - h, w > 3 ? w - 2 : w, h, b->from_c, b->to_c,
			   b->hours);
		if (k % every == 0) {
			buf_printf(&s,
				   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
				   x, CHART_TOP + ph + 16, b->from_c);
		}
	}
	if (pe->n_bins > 0) {
		buf_printf(&s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
			   CHART_LEFT + pw, CHART_TOP + ph + 16, pe->bins[pe->n_bins - 1].to_c);
	}
	buf_printf(&s,
		   "<text x=\"12\" y=\"%d\">h</text>\n<text x=\"%d\" y=\"%.1f\">°C the model ages "
		   "the part at, %g K bins</text>\n</svg>\n",
		   CHART_TOP + 4, CHART_LEFT, CHART_TOP + ph + 40, bin_k);
	return buf_steal(&s);
}

char *report_chart_consumed(const struct lifetime_series *ls, const struct capacitor_config *cc) {
	double hi = 0; // in % of the wear-out life
	for (size_t k = 0; k < ls->n; k++) {
		double pct = 100 * fmax(ls->consumed[k], ls->consumed_band[k][0]);
		hi = isfinite(pct) && pct > hi ? pct : hi;
	}
	int places;
	hi = nice_top(hi, &places);
	int64_t t0 = ls->to[0], t1 = ls->to[ls->n ? ls->n - 1 : 0];
	double pw = CHART_W - CHART_LEFT - CHART_RIGHT, ph = CHART_H - CHART_TOP - CHART_BOTTOM;
	struct buf s;
	buf_init(&s);
	frame(&s, cc->name, "consumed life over the window", ph, pw);
	ticks(&s, hi, ph, pw, places);
	// The band's ends dashed, the consumed life solid over them.
	static const char *const lines[] = {
		"<polyline fill=\"none\" stroke=\"#c0392b\" stroke-width=\"1\" "
		"stroke-dasharray=\"4 3\" points=\"",
		"<polyline fill=\"none\" stroke=\"#c0392b\" stroke-width=\"1\" "
		"stroke-dasharray=\"4 3\" points=\"",
		"<polyline fill=\"none\" stroke=\"#c0392b\" stroke-width=\"2.5\" points=\""};
	for (int line = 0; line < 3; line++) {
		buf_puts(&s, lines[line]);
		for (size_t k = 0, m = 0; k < ls->n; k++) {
			double v = line < 2 ? ls->consumed_band[k][line] : ls->consumed[k];
			if (!isfinite(v)) {
				continue;
			}
			double x = CHART_LEFT +
				   (t1 > t0 ? (double)(ls->to[k] - t0) / (double)(t1 - t0) * pw
					    : pw / 2);
			buf_printf(&s, "%s%.1f,%.1f", m++ ? " " : "", x,
				   CHART_TOP + ph - 100 * v / hi * ph);
		}
		buf_puts(&s, "\"/>\n");
	}
	char a[TIMEFMT_ISO_LEN], z[TIMEFMT_ISO_LEN];
	timefmt_iso(t0, a);
	timefmt_iso(t1, z);
	buf_printf(
		&s,
		"<text x=\"%d\" y=\"%.1f\">%.16s</text><text x=\"%.1f\" y=\"%.1f\" "
		"text-anchor=\"end\">%.16s UTC</text>\n<text x=\"12\" y=\"%d\">%%</text>\n"
		"<text x=\"%d\" y=\"%.1f\">consumed wear-out life in %%, observed (dashed: the sensor's uncertainty)</text>\n"
		"</svg>\n",
		CHART_LEFT, CHART_TOP + ph + 16, a, CHART_LEFT + pw, CHART_TOP + ph + 16, z,
		CHART_TOP + 4, CHART_LEFT, CHART_TOP + ph + 40);
	return buf_steal(&s);
}
