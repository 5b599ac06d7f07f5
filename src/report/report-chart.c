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
#include "xalloc.h"

#define CHART_W      640
#define CHART_H      320
#define CHART_LEFT   52
#define CHART_RIGHT  16
#define CHART_TOP    16
#define CHART_BOTTOM 72

/* One line style per role (role.h): colour, width and dash, so each part reads apart. */
static const char *const role_stroke[ROLE_COUNT] = {
	[ROLE_NONE] = "stroke=\"#7f8c8d\" stroke-opacity=\"0.6\" stroke-width=\"1.2\" "
		      "stroke-dasharray=\"2 3\"",
	[ROLE_ZONE_BIG] = "stroke=\"#c0392b\" stroke-width=\"2.5\"",
	[ROLE_ZONE_LITTLE] = "stroke=\"#e67e22\" stroke-width=\"2\" stroke-dasharray=\"10 4\"",
	[ROLE_ZONE_CPU] = "stroke=\"#8e44ad\" stroke-width=\"2.5\"",
	[ROLE_ZONE_NPU] = "stroke=\"#1f5fa8\" stroke-width=\"2.5\" stroke-dasharray=\"7 4\"",
	[ROLE_ZONE_SOC] = "stroke=\"#2c3e50\" stroke-width=\"1.8\"",
	[ROLE_ZONE_GPU] = "stroke=\"#27ae60\" stroke-width=\"2\" stroke-dasharray=\"8 3 2 3\"",
	[ROLE_AMBIENT] = "stroke=\"#16a085\" stroke-width=\"1.5\" stroke-dasharray=\"1 3\"",
	[ROLE_CLUSTER_BIG] = "stroke=\"#c0392b\" stroke-width=\"2\"",
	[ROLE_CLUSTER_LITTLE] = "stroke=\"#e67e22\" stroke-width=\"2\"",
	[ROLE_CLUSTER_CPU] = "stroke=\"#8e44ad\" stroke-width=\"2\"",
	[ROLE_NPU] = "stroke=\"#1f5fa8\" stroke-width=\"2\"",
	[ROLE_GPU] = "stroke=\"#27ae60\" stroke-width=\"2\"",
	[ROLE_DMC] = "stroke=\"#7f8c8d\" stroke-width=\"2\"",
};

/* A board's two lines on one chart: the first solid in red, the other dashed in blue. */
static const char *const board_stroke[2] = {
	"stroke=\"#c0392b\" stroke-width=\"2.5\"",
	"stroke=\"#1f5fa8\" stroke-width=\"2.5\" stroke-dasharray=\"7 4\"",
};

/* An axis over [lo, hi]: widened to whole steps of 1, 2, 2.5 or 5 times a power of ten, about
 * @n of them, so its ticks read 30, 40, 50 (never 32.1, 42.6, 53.0). */
struct axis {
	double lo, hi, step;
	int places; // decimals the step needs
};

static struct axis axis_of(double lo, double hi, int n) {
	if (!(hi > lo)) {
		lo -= 0.5;
		hi += 0.5;
	}
	double raw = (hi - lo) / n, mag = pow(10, floor(log10(raw)));
	static const double steps[] = {1, 2, 2.5, 5, 10};
	double step = mag * 10;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (steps[i] * mag >= raw * (1 - 1e-9)) {
			step = steps[i] * mag;
			break;
		}
	}
	struct axis a = {floor(lo / step + 1e-9) * step, ceil(hi / step - 1e-9) * step, step, 0};
	int p = (int)-floor(log10(step) + 1e-9);
	p += fmod(step / pow(10, floor(log10(step) + 1e-9)), 1) != 0; // 2.5 needs one more
	a.places = p < 0 ? 0 : p;
	return a;
}

/* The y axis's unit, written along the axis (never over its top tick). */
static void y_unit(struct buf *s, const char *unit, double ph) {
	double mid = CHART_TOP + ph / 2;
	buf_printf(s,
		   "<text x=\"12\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 12 "
		   "%.1f)\">",
		   mid, mid);
	report_escape_xml(s, unit);
	buf_puts(s, "</text>\n");
}

/* The y axis's ticks and grid, and its unit written along the axis (never over a tick). */
static void y_axis(struct buf *s, const struct axis *y, double ph, double pw, const char *unit) {
	for (int k = 0; y->lo + k * y->step <= y->hi + y->step * 1e-6; k++) {
		double v = y->lo + k * y->step;
		double py = CHART_TOP + (y->hi - v) / (y->hi - y->lo) * ph;
		buf_printf(s,
			   "<path d=\"M%d %.1f H%.1f\" stroke=\"#dddddd\" stroke-width=\"1\"/>"
			   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n",
			   CHART_LEFT, py, CHART_LEFT + pw, CHART_LEFT - 6, py + 4, y->places, v);
	}
	y_unit(s, unit, ph);
}

/* The x axis in minutes from the peak: round ticks, the unit under them. */
static void x_axis(struct buf *s, const struct axis *x, double ph, double pw) {
	for (int k = 0; x->lo + k * x->step <= x->hi + x->step * 1e-6; k++) {
		double v = x->lo + k * x->step;
		double px = CHART_LEFT + (v - x->lo) / (x->hi - x->lo) * pw;
		buf_printf(s,
			   "<path d=\"M%.1f %d V%.1f\" stroke=\"#eeeeee\" stroke-width=\"1\"/>"
			   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.*f</text>\n",
			   px, CHART_TOP, CHART_TOP + ph, px, CHART_TOP + ph + 16, x->places,
			   v == 0 ? 0 : v);
	}
	buf_printf(s,
		   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">minutes from the "
		   "peak</text>\n",
		   CHART_LEFT + pw / 2, CHART_TOP + ph + 32);
}

/* The svg element, its title, a white background and the axes' lines. */
static void svg_begin(struct buf *s, const char *key, const char *what, double ph, double pw,
		      int height) {
	buf_printf(s,
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" role=\"img\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n<title>",
		   CHART_W, height);
	report_escape_xml(s, key);
	buf_printf(s, ": %s</title>\n", what);
	buf_printf(s, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
		   CHART_W, height);
	buf_printf(s,
		   "<path d=\"M%d %d V%.1f H%.1f\" fill=\"none\" stroke=\"#333333\" "
		   "stroke-width=\"1\"/>\n",
		   CHART_LEFT, CHART_TOP, CHART_TOP + ph, CHART_LEFT + pw);
}

/* Whether column @c of @pk is drawn: a temperature with a value in some row. */
static bool drawn(const struct query_peak *pk, size_t c) {
	if (pk->columns[c]->kind != CHANNEL_KIND_TEMPERATURE) {
		return false;
	}
	for (size_t r = 0; r < pk->n_rows; r++) {
		if (pk->have[r * pk->n_columns + c]) {
			return true;
		}
	}
	return false;
}

/* The range of @pk's drawn columns (all, or the peak's alone) into *lo, *hi. */
static void value_range(const struct query_peak *pk, bool all, double *lo, double *hi) {
	for (size_t c = 0; c < (all ? pk->n_columns : 1); c++) {
		const struct channel *ch = pk->columns[c];
		for (size_t r = 0; drawn(pk, c) && r < pk->n_rows; r++) {
			size_t i = r * pk->n_columns + c;
			if (pk->have[i]) {
				double v = stats_value(pk->cells[i], ch->resolution);
				*lo = v < *lo ? v : *lo;
				*hi = v > *hi ? v : *hi;
			}
		}
	}
}

/* A column of @pk as a polyline in @stroke, x in minutes from its peak. */
static void series(struct buf *s, const struct query_peak *pk, size_t c, const char *stroke,
		   const struct axis *x, const struct axis *y, double ph, double pw) {
	const struct channel *ch = pk->columns[c];
	buf_puts(s, "<polyline fill=\"none\" ");
	buf_puts(s, stroke);
	buf_puts(s, " points=\"");
	for (size_t r = 0, m = 0; r < pk->n_rows; r++) {
		size_t i = r * pk->n_columns + c;
		if (pk->have[i]) {
			double min = (double)(pk->row_ts[r] - pk->max_ts) / 60;
			double v = stats_value(pk->cells[i], ch->resolution);
			buf_printf(s, "%s%.1f,%.1f", m++ ? " " : "",
				   CHART_LEFT + (min - x->lo) / (x->hi - x->lo) * pw,
				   CHART_TOP + (y->hi - v) / (y->hi - y->lo) * ph);
		}
	}
	buf_puts(s, "\"><title>");
	report_escape_xml(s, ch->key);
	buf_puts(s, "</title></polyline>\n");
}

/* The minutes from the peak the rows of @pk span, widened into @lo, @hi. */
static void minutes_range(const struct query_peak *pk, double *lo, double *hi) {
	*lo = fmin(*lo, (double)(pk->row_ts[0] - pk->max_ts) / 60);
	*hi = fmax(*hi, (double)(pk->row_ts[pk->n_rows - 1] - pk->max_ts) / 60);
}

/* A legend line: the stroke's sample and its text, at row @k. */
static void legend(struct buf *s, double y0, size_t k, const char *stroke, const char *text) {
	double y = y0 + (double)k * 18;
	buf_printf(s, "<path d=\"M%d %.1f h28\" fill=\"none\" %s/><text x=\"%d\" y=\"%.1f\">",
		   CHART_LEFT, y, stroke, CHART_LEFT + 34, y + 4);
	report_escape_xml(s, text);
	buf_puts(s, "</text>\n");
}

#define CHART_AXIS_H 40 // the x axis's labels under the plot
#define LEGEND_ROW   18

char *report_chart_peak(const struct report_board *b) {
	const struct query_peak *pk = &b->peak;
	double lo = INFINITY, hi = -INFINITY, x0 = 0, x1 = 0;
	value_range(pk, true, &lo, &hi);
	minutes_range(pk, &x0, &x1);
	struct axis y = axis_of(lo, hi, 5), x = axis_of(x0, x1, 6);
	// The legend: a line per role drawn, naming its zones.
	bool used[ROLE_COUNT] = {false};
	for (size_t c = 0; c < pk->n_columns; c++) {
		if (drawn(pk, c)) {
			used[report_role(b, pk->columns[c]->key)] = true;
		}
	}
	size_t rows = 1;
	for (int r = 0; r < ROLE_COUNT; r++) {
		rows += used[r];
	}
	double pw = CHART_W - CHART_LEFT - CHART_RIGHT, ph = CHART_H - CHART_TOP - CHART_BOTTOM;
	int height = (int)(CHART_TOP + ph + CHART_AXIS_H + LEGEND_ROW * (double)rows + 8);
	struct buf s;
	buf_init(&s);
	svg_begin(&s, pk->channel->key, "the cycles around its maximum", ph, pw, height);
	y_axis(&s, &y, ph, pw, "°C");
	x_axis(&s, &x, ph, pw);
	// The parts without a role first, then the others over them, the peak's zone last.
	for (int pass = 0; pass < 3; pass++) {
		for (size_t c = 0; c < pk->n_columns; c++) {
			enum role r = report_role(b, pk->columns[c]->key);
			int want = c == 0 ? 2 : r == ROLE_NONE ? 0 : 1;
			if (drawn(pk, c) && want == pass) {
				series(&s, pk, c, role_stroke[r], &x, &y, ph, pw);
			}
		}
	}
	double mx = stats_value(pk->max_q, pk->channel->resolution);
	buf_printf(&s,
		   "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"none\" stroke=\"#000000\" "
		   "stroke-width=\"1.5\"/>\n",
		   CHART_LEFT + (0 - x.lo) / (x.hi - x.lo) * pw,
		   CHART_TOP + (y.hi - mx) / (y.hi - y.lo) * ph);
	double ly = CHART_TOP + ph + CHART_AXIS_H + 8;
	size_t k = 0;
	for (int r = 0; r < ROLE_COUNT; r++) {
		if (!used[r]) {
			continue;
		}
		struct buf names = {0};
		for (size_t c = 0; c < pk->n_columns; c++) {
			const char *key = pk->columns[c]->key;
			if (drawn(pk, c) && report_role(b, key) == (enum role)r) {
				const char *slash = strrchr(key, '/');
				buf_printf(&names, "%s%s", names.len ? ", " : "",
					   slash ? slash + 1 : key);
			}
		}
		char *text = xasprintf("%s: %s", r == ROLE_NONE ? "other" : role_text((enum role)r),
				       names.data);
		legend(&s, ly, k++, role_stroke[r], text);
		free(text);
		buf_finish(&names);
	}
	char at[TIMEFMT_ISO_LEN];
	timefmt_iso(pk->max_ts, at);
	buf_printf(&s, "<text x=\"%d\" y=\"%.1f\">○ maximum: ", CHART_LEFT,
		   ly + (double)k * LEGEND_ROW + 4);
	report_escape_xml(&s, pk->channel->key);
	buf_printf(&s, " %.2f °C at %s</text>\n</svg>\n", mx, at);
	return buf_steal(&s);
}

char *report_chart_peaks(const struct report *rep) {
	const struct query_peak *pk[2] = {&rep->boards[0].peak, &rep->boards[1].peak};
	double lo = INFINITY, hi = -INFINITY, x0 = 0, x1 = 0;
	for (size_t i = 0; i < 2; i++) {
		value_range(pk[i], false, &lo, &hi);
		minutes_range(pk[i], &x0, &x1);
	}
	struct axis y = axis_of(lo, hi, 5), x = axis_of(x0, x1, 6);
	double pw = CHART_W - CHART_LEFT - CHART_RIGHT, ph = CHART_H - CHART_TOP - CHART_BOTTOM;
	int height = (int)(CHART_TOP + ph + CHART_AXIS_H + LEGEND_ROW * 2 + 8);
	struct buf s;
	buf_init(&s);
	svg_begin(&s, pk[0]->channel->key, "both boards' peaks on one time axis", ph, pw, height);
	y_axis(&s, &y, ph, pw, "°C");
	x_axis(&s, &x, ph, pw);
	double ly = CHART_TOP + ph + CHART_AXIS_H + 8;
	for (size_t i = 0; i < 2; i++) {
		series(&s, pk[i], 0, board_stroke[i], &x, &y, ph, pw);
		double mx = stats_value(pk[i]->max_q, pk[i]->channel->resolution);
		char *text = xasprintf("%s: %s %s, peak %.2f °C", i ? "B" : "A",
				       rep->boards[i].name, pk[i]->channel->key, mx);
		legend(&s, ly, i, board_stroke[i], text);
		free(text);
	}
	buf_puts(&s, "</svg>\n");
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
	struct axis a = axis_of(0, max > 0 ? max : 1, 4);
	*places = a.places;
	return 4 * a.step;
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
	y_unit(&s, "hours", ph);
	buf_printf(&s,
		   "<text x=\"%d\" y=\"%.1f\">°C the model ages the part at, %g K bins</text>\n"
		   "</svg>\n",
		   CHART_LEFT, CHART_TOP + ph + 40, bin_k);
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
		"text-anchor=\"end\">%.16s UTC</text>\n"
		"<text x=\"%d\" y=\"%.1f\">consumed wear-out life in %%, observed (dashed: the sensor's uncertainty)</text>\n",
		CHART_LEFT, CHART_TOP + ph + 16, a, CHART_LEFT + pw, CHART_TOP + ph + 16, z,
		CHART_LEFT, CHART_TOP + ph + 40);
	y_unit(&s, "%", ph);
	buf_puts(&s, "</svg>\n");
	return buf_steal(&s);
}
