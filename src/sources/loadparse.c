/* The load source's texts, parsed (loadparse.h): /proc/stat, rknpu/load, rkrga/load, devfreq load.
 */
#include "loadparse.h"

#include <errno.h>
#include <string.h>

/* Figures of a percentage past this are not a percentage (the plausibility check says more). */
#define PERCENT_MAX 999999

static bool is_digit(char c) {
	return c >= '0' && c <= '9';
}

static const char *skip_blanks(const char *p) {
	while (*p == ' ' || *p == '\t') {
		p++;
	}
	return p;
}

/* Digits at *p into *v (advancing *p): 0, -EBADMSG (none) or -ERANGE (past @max). */
static int parse_uint(const char **p, int64_t max, int64_t *v) {
	const char *s = *p;
	if (!is_digit(*s)) {
		return -EBADMSG;
	}
	int64_t n = 0;
	for (; is_digit(*s); s++) {
		int d = *s - '0';
		if (n > (max - d) / 10) {
			return -ERANGE;
		}
		n = n * 10 + d;
	}
	*p = s;
	*v = n;
	return 0;
}

/* The end of the line @p is in: its '\n' or the text's end. */
static const char *line_end(const char *p) {
	const char *nl = strchr(p, '\n');
	return nl ? nl : p + strlen(p);
}

/* True when only blanks are left of the line at @p. */
static bool rest_blank(const char *p) {
	p = skip_blanks(p);
	return *p == '\0' || *p == '\n' || (*p == '\r' && (p[1] == '\0' || p[1] == '\n'));
}

/* --- /proc/stat --- */

/* The "cpu" or "cpuN" at the start of @line: 1 with *cpu (-1 = all), 0 when not a cpu line. */
static int cpu_line(const char *line, int *cpu, const char **after) {
	if (strncmp(line, "cpu", 3) != 0) {
		return 0;
	}
	const char *p = line + 3;
	if (*p == ' ' || *p == '\t') {
		*cpu = -1;
		*after = p;
		return 1;
	}
	int64_t n;
	if (parse_uint(&p, 1 << 20, &n) != 0 || (*p != ' ' && *p != '\t')) {
		return 0; // "cpufreq..." or so: not a cpu line
	}
	*cpu = (int)n;
	*after = p;
	return 1;
}

/* user nice system idle iowait irq softirq steal guest guest_nice (proc(5)) */
#define STAT_FIELDS 10
#define STAT_TOTAL  8 // guest and guest_nice are inside user and nice already

int loadparse_stat(const char *text, int cpu, struct loadparse_ticks *out, const char **why) {
	for (const char *line = text; *line;) {
		const char *end = line_end(line);
		int id;
		const char *p;
		if (cpu_line(line, &id, &p) == 1 && id == cpu) {
			int64_t f[STAT_FIELDS] = {0};
			size_t n = 0;
			for (;;) {
				p = skip_blanks(p);
				if (p >= end || *p == '\r') {
					break;
				}
				if (n == STAT_FIELDS) {
					break; // a later kernel's field: not part of the total
				}
				int rc = parse_uint(&p, INT64_MAX / STAT_FIELDS, &f[n]);
				if (rc == -ERANGE) {
					*why = "a tick count does not fit in 63 bits";
					return rc;
				}
				if (rc < 0 || (*p != ' ' && *p != '\t' && *p != '\n' &&
					       *p != '\r' && *p != '\0')) {
					*why = "a figure of the cpu line is not a whole number";
					return -EBADMSG;
				}
				n++;
			}
			if (n < 4) {
				*why = "the cpu line has fewer than 4 figures (user nice system idle)";
				return -EBADMSG;
			}
			int64_t total = 0;
			for (size_t i = 0; i < STAT_TOTAL; i++) {
				total += f[i]; // each below INT64_MAX / 10: no overflow
			}
			*out = (struct loadparse_ticks){.total = total,
							.busy = total - f[3] - f[4]};
			return 0;
		}
		line = *end ? end + 1 : end;
	}
	return -ENOENT;
}

size_t loadparse_stat_cpus(const char *text, int *ids, size_t cap) {
	size_t n = 0;
	for (const char *line = text; *line;) {
		const char *end = line_end(line);
		int id;
		const char *p;
		if (cpu_line(line, &id, &p) == 1 && id >= 0) {
			if (n < cap) {
				ids[n] = id;
			}
			n++;
		}
		line = *end ? end + 1 : end;
	}
	return n;
}

size_t loadparse_stat_index(const char *text, int *ids, size_t *at, size_t cap) {
	size_t n = 0;
	for (const char *line = text; *line;) {
		int id;
		const char *p;
		if (cpu_line(line, &id, &p) == 1) {
			if (n < cap) {
				ids[n] = id;
				at[n] = (size_t)(line - text);
			}
			n++;
		} else if (n > 0) {
			break; // past the cpu lines
		}
		const char *end = line_end(line);
		line = *end ? end + 1 : end;
	}
	return n;
}

int loadparse_busy(const struct loadparse_ticks *prev, const struct loadparse_ticks *now,
		   double *percent) {
	if (!prev) {
		return -EAGAIN;
	}
	int64_t dt = now->total - prev->total, db = now->busy - prev->busy;
	if (dt <= 0 || db < 0 || db > dt) {
		return -EAGAIN;
	}
	*percent = 100.0 * (double)db / (double)dt;
	return 0;
}

/* --- rknpu/load --- */

/* "NN%" at *p: 0, or -EBADMSG with *why. */
static int parse_percent(const char **p, bool sign_optional, int64_t *v, const char **why) {
	int rc = parse_uint(p, PERCENT_MAX, v);
	if (rc < 0) {
		*why = rc == -ERANGE ? "a load figure is too large for a percentage"
				     : "a load figure is not a whole number";
		return -EBADMSG;
	}
	if (**p == '%') {
		(*p)++;
	} else if (!sign_optional) {
		*why = "a load figure has no '%' after it";
		return -EBADMSG;
	}
	return 0;
}

int loadparse_rknpu(const char *text, struct loadparse_cores *out, const char **why) {
	*out = (struct loadparse_cores){0};
	const char *p = skip_blanks(text);
	if (strncmp(p, "NPU load:", 9) != 0) {
		*why = "the text does not start with 'NPU load:'";
		return -EBADMSG;
	}
	p = skip_blanks(p + 9);
	if (strncmp(p, "Core", 4) != 0) {
		if (parse_percent(&p, false, &out->percent[0], why) < 0) {
			return -EBADMSG;
		}
		if (!rest_blank(p)) {
			*why = "text follows the single load figure";
			return -EBADMSG;
		}
		out->n = 1;
		return 0;
	}
	out->cores = true;
	while (strncmp(p, "Core", 4) == 0) {
		p += 4;
		int64_t idx;
		if (parse_uint(&p, 1024, &idx) < 0 || *p != ':') {
			*why = "a 'Core' has no number and ':' after it";
			return -EBADMSG;
		}
		p = skip_blanks(p + 1);
		if (out->n == LOADPARSE_CORES_MAX) {
			*why = "more than 16 cores";
			return -EBADMSG;
		}
		for (size_t i = 0; i < out->n; i++) {
			if (out->index[i] == (int)idx) {
				*why = "a core is named twice";
				return -EBADMSG;
			}
		}
		if (parse_percent(&p, false, &out->percent[out->n], why) < 0) {
			return -EBADMSG;
		}
		out->index[out->n++] = (int)idx;
		if (*p == ',') {
			p++;
		}
		p = skip_blanks(p);
	}
	if (!rest_blank(p)) {
		*why = "text that is not 'CoreN: NN%' follows the cores";
		return -EBADMSG;
	}
	return 0;
}

/* --- rkrga/load --- */

int loadparse_rkrga(const char *text, struct loadparse_cores *out, const char **why) {
	*out = (struct loadparse_cores){0};
	out->cores = true;
	bool pending = false; // a scheduler line waits for its load line
	for (const char *line = text; *line;) {
		const char *end = line_end(line);
		const char *p = skip_blanks(line);
		if (strncmp(p, "scheduler[", 10) == 0) {
			if (pending) {
				*why = "a scheduler has no 'load =' line";
				return -EBADMSG;
			}
			p += 10;
			int64_t idx;
			if (parse_uint(&p, 1024, &idx) < 0 || strncmp(p, "]:", 2) != 0) {
				*why = "a 'scheduler[' has no number and ']:' after it";
				return -EBADMSG;
			}
			if (out->n == LOADPARSE_CORES_MAX) {
				*why = "more than 16 schedulers";
				return -EBADMSG;
			}
			p = skip_blanks(p + 2);
			size_t len = (size_t)(end - p);
			while (len > 0 &&
			       (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r')) {
				len--;
			}
			if (len == 0 || len >= LOADPARSE_NAME_MAX) {
				*why = len ? "a scheduler's name is longer than 31 bytes"
					   : "a scheduler has no name";
				return -EBADMSG;
			}
			memcpy(out->name[out->n], p, len);
			out->name[out->n][len] = '\0';
			out->index[out->n] = (int)idx;
			pending = true;
		} else if (strncmp(p, "load", 4) == 0 && *skip_blanks(p + 4) == '=') {
			if (!pending) {
				*why = "a 'load =' line follows no 'scheduler[N]: NAME' line";
				return -EBADMSG;
			}
			p = skip_blanks(skip_blanks(p + 4) + 1);
			if (parse_percent(&p, true, &out->percent[out->n], why) < 0) {
				return -EBADMSG;
			}
			if (!rest_blank(p)) {
				*why = "text follows a load figure";
				return -EBADMSG;
			}
			out->n++;
			pending = false;
		}
		line = *end ? end + 1 : end;
	}
	if (pending) {
		*why = "a scheduler has no 'load =' line";
		return -EBADMSG;
	}
	if (out->n == 0) {
		*why = "no 'scheduler[N]: NAME' line with a 'load =' line after it";
		return -EBADMSG;
	}
	return 0;
}

/* --- devfreq load --- */

int loadparse_devfreq(const char *text, int64_t *percent, int64_t *hz, const char **why) {
	const char *p = skip_blanks(text);
	int64_t pct, f;
	int rc = parse_uint(&p, PERCENT_MAX, &pct);
	if (rc < 0 || *p != '@') {
		*why = rc == -ERANGE ? "the busy figure is too large for a percentage"
				     : "the text is not '<busy %>@<Hz>Hz'";
		return -EBADMSG;
	}
	p++;
	if (parse_uint(&p, INT64_MAX, &f) < 0 || strncmp(p, "Hz", 2) != 0 || !rest_blank(p + 2)) {
		*why = "the text is not '<busy %>@<Hz>Hz'";
		return -EBADMSG;
	}
	*percent = pct;
	if (hz) {
		*hz = f;
	}
	return 0;
}
