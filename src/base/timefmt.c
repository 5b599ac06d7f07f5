/* Durations and UTC timestamps as users type them; pure functions, no libc time zone state. */
#include "timefmt.h"

#include <stdio.h>
#include <string.h>

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static bool is_leap(int64_t y) {
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned days_in_month(int64_t y, unsigned m) {
	static const unsigned days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/* Reads exactly @n decimal digits at *p; advances *p. */
static bool digits(const char **p, int n, unsigned *out) {
	unsigned v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9') {
			return false;
		}
		v = v * 10 + (unsigned)(c - '0');
	}
	*p += n;
	*out = v;
	return true;
}

static bool is_digit(char c) {
	return c >= '0' && c <= '9';
}

bool timefmt_parse_duration_ms(const char *s, int64_t *ms) {
	static const struct {
		const char *name;
		int64_t ms;
	} units[] = {
		{"ms", 1},      {"s", 1000},     {"m", 60000},
		{"h", 3600000}, {"d", 86400000}, {"w", 604800000},
	};
	if (!s || !*s) {
		return false;
	}
	int64_t total = 0;
	const char *p = s;
	while (*p) {
		if (!is_digit(*p)) {
			return false;
		}
		int64_t n = 0;
		while (is_digit(*p)) {
			int dig = *p - '0';
			if (n > (INT64_MAX - dig) / 10) {
				return false;
			}
			n = n * 10 + dig;
			p++;
		}
		size_t len = 0;
		while (p[len] >= 'a' && p[len] <= 'z') {
			len++;
		}
		int64_t unit = 0;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			if (strlen(units[i].name) == len && strncmp(p, units[i].name, len) == 0) {
				unit = units[i].ms;
			}
		}
		if (unit == 0 || n > (INT64_MAX - total) / unit) {
			return false; // no unit (a bare integer), an unknown one, or overflow
		}
		total += n * unit;
		p += len;
	}
	*ms = total;
	return true;
}

bool timefmt_parse_date(const char *s, int64_t *ts) {
	const char *p = s;
	unsigned y, m, d;
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &m) || *p++ != '-' ||
	    !digits(&p, 2, &d) || *p != '\0') {
		return false;
	}
	if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m)) {
		return false;
	}
	*ts = days_from_civil(y, m, d) * 86400;
	return true;
}

/* "YYYY-MM-DD[T ]HH:MM[:SS[.fff]](Z|+HH[:MM]|-HH[:MM])" */
static bool parse_iso(const char *s, int64_t *ts) {
	const char *p = s;
	unsigned y, mo, d, h, mi, sec = 0;
	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
	    !digits(&p, 2, &d)) {
		return false;
	}
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo)) {
		return false;
	}
	int64_t days = days_from_civil(y, mo, d);
	if (*p == '\0') {
		*ts = days * 86400;
		return true;
	}
	if (*p != 'T' && *p != 't' && *p != ' ') {
		return false;
	}
	p++;
	if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi)) {
		return false;
	}
	if (*p == ':') {
		p++;
		if (!digits(&p, 2, &sec)) {
			return false;
		}
		if (*p == '.' || *p == ',') {
			p++;
			if (!is_digit(*p)) {
				return false;
			}
			while (is_digit(*p)) {
				p++; // sub-second precision is below the store's resolution
			}
		}
	}
	if (h > 23 || mi > 59 || sec > 59) {
		return false;
	}
	int64_t offset_s = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1;
		unsigned oh, om = 0;
		if (!digits(&p, 2, &oh)) {
			return false;
		}
		if (*p == ':') {
			p++;
			if (!digits(&p, 2, &om)) {
				return false;
			}
		} else if (is_digit(*p) && !digits(&p, 2, &om)) {
			return false;
		}
		if (oh > 23 || om > 59) {
			return false;
		}
		offset_s = sign * (int64_t)(oh * 3600 + om * 60);
	} else {
		return false; // local time would depend on the machine's zone: require one
	}
	if (*p != '\0') {
		return false;
	}
	*ts = days * 86400 + h * 3600 + mi * 60 + sec - offset_s;
	return true;
}

bool timefmt_parse_time(const char *s, int64_t now, int64_t *ts) {
	if (!s || !*s) {
		return false;
	}
	if (strcmp(s, "now") == 0) {
		*ts = now;
		return true;
	}
	if (s[0] == '-') {
		int64_t ms;
		if (!timefmt_parse_duration_ms(s + 1, &ms)) {
			return false;
		}
		int64_t back =
			ms / 1000 + (ms % 1000 != 0); // a partial second reaches one further back
		if (now < INT64_MIN + back) {
			return false;
		}
		*ts = now - back;
		return true;
	}
	size_t n = strspn(s, "0123456789");
	if (s[n] == '\0') {
		int64_t v = 0;
		for (const char *p = s; *p; p++) {
			int dig = *p - '0';
			if (v > (INT64_MAX - dig) / 10) {
				return false;
			}
			v = v * 10 + dig;
		}
		*ts = v;
		return true;
	}
	return parse_iso(s, ts);
}

void timefmt_iso(int64_t ts, char out[TIMEFMT_ISO_LEN]) {
	int64_t days = ts / 86400, secs = ts % 86400;
	if (secs < 0) {
		secs += 86400;
		days--;
	}
	int64_t y;
	unsigned m, d;
	civil_from_days(days, &y, &m, &d);
	snprintf(out, TIMEFMT_ISO_LEN, "%04lld-%02u-%02uT%02u:%02u:%02uZ", (long long)y, m, d,
		 (unsigned)(secs / 3600), (unsigned)(secs / 60 % 60), (unsigned)(secs % 60));
}

void timefmt_iso_ms(int64_t ms, char out[TIMEFMT_ISO_LEN]) {
	int64_t s = timefmt_floor_div(ms, 1000);
	int64_t frac = ms % 1000; // not ms - s * 1000, which overflows near INT64_MIN
	frac += frac < 0 ? 1000 : 0;
	timefmt_iso(s, out);
	if (frac != 0) {
		size_t len = strlen(out) - 1; // the fraction goes before the Z
		snprintf(out + len, TIMEFMT_ISO_LEN - len, ".%03dZ", (int)frac);
	}
}

int64_t timefmt_floor_div(int64_t a, int64_t b) {
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t timefmt_floor(int64_t t, int64_t unit) {
	int64_t r = t % unit;
	r = r < 0 ? r + unit : r;
	// Before the first whole unit of the 64-bit range: held at its start (a crafted stamp).
	return t < INT64_MIN + r ? INT64_MIN : t - r;
}

int64_t timefmt_ceil(int64_t t, int64_t unit) {
	int64_t f = timefmt_floor(t, unit);
	return f == t ? t : f > INT64_MAX - unit ? INT64_MAX : f + unit;
}
