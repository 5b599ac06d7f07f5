/* thermlog sample: reads every channel once and prints a table or JSON; stores nothing. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "cli.h"
#include "json.h"
#include "sampler.h"
#include "table.h"
#include "xalloc.h"

static const char usage_text[] =
	"usage: thermlog sample [--sysfs-root DIR] [--procfs-root DIR] [-c FILE] [--json]\n"
	"\n"
	"Reads every channel once and prints it; nothing is stored. Channels that fail carry\n"
	"their error, and the exit status is still 0. The table shows each value rounded to its\n"
	"channel's resolution; --json gives the exact reading.\n"
	"\n"
	"  --sysfs-root DIR  read DIR instead of the configured sysfs_root (default /sys)\n"
	"  --procfs-root DIR read DIR instead of the configured procfs_root (default /proc)\n"
	"  --json            {\"ts\": ..., \"time\": ISO 8601, \"channels\": [{\"key\", \"label\",\n"
	"                    \"source\", \"kind\", \"unit\", \"value\", \"error\", \"path\"}, ...]}: the\n"
	"                    objects of GET /api/v1/latest, with the path read\n";

static void write_json(struct buf *out, int64_t now, const char *root, size_t n,
		       const struct channel *ch, const struct reading *rd) {
	size_t root_len = strlen(root);
	while (root_len > 0 && root[root_len - 1] == '/') {
		root_len--;
	}
	struct json j;
	json_init(&j, out, false);
	json_object_begin(&j);
	// The time as /api/v1/latest gives a cycle's: unix seconds and ISO 8601
	json_field_int(&j, "ts", now);
	json_field_time(&j, "time", now);
	json_key(&j, "channels");
	json_array_begin(&j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(&j);
		channel_json_reading(&j, &ch[i], &rd[i]); // the object of /api/v1/latest
		// /proc files (meminfo) carry their absolute path; sysfs ones are relative
		char *path = ch[i].path[0] == '/'
				     ? xstrdup(ch[i].path)
				     : xasprintf("%.*s/%s", (int)root_len, root, ch[i].path);
		json_field_string(&j, "path", path);
		free(path);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	buf_putc(out, '\n');
}

/* Terminal columns of UTF-8 text (every code point counts one). */
static int text_width(const char *s) {
	int w = 0;
	for (; *s; s++) {
		w += ((unsigned char)*s & 0xc0) != 0x80;
	}
	return w;
}

static void print_padded(const char *s, int width) {
	fputs(s, stdout);
	for (int i = text_width(s); i < width; i++) {
		putchar(' ');
	}
}

static void write_table(size_t n, const struct channel *ch, const struct reading *rd) {
	char **values = xcalloc(n + 1, sizeof(*values));
	// Keys and labels as a terminal may show them: a zone's type is the kernel's text, so a
	// control character in it (ESC, BEL) is written as its escape, never sent to the terminal.
	char **keys = xcalloc(n + 1, sizeof(*keys)), **labels = xcalloc(n + 1, sizeof(*labels));
	struct buf scratch;
	buf_init(&scratch);
	int wk = 3, wl = 5, wv = 5;
	for (size_t i = 0; i < n; i++) {
		values[i] = rd[i].err ? xstrdup("-") : table_value(&ch[i], rd[i].value);
		keys[i] = xstrdup(table_printable(&scratch, ch[i].key));
		labels[i] = xstrdup(table_printable(&scratch, ch[i].label));
		wk = text_width(keys[i]) > wk ? text_width(keys[i]) : wk;
		wl = text_width(labels[i]) > wl ? text_width(labels[i]) : wl;
		wv = text_width(values[i]) > wv ? text_width(values[i]) : wv;
	}
	buf_finish(&scratch);
	print_padded("KEY", wk + 2);
	print_padded("LABEL", wl + 2);
	print_padded("VALUE", wv + 2);
	puts("ERROR");
	for (size_t i = 0; i < n; i++) {
		print_padded(keys[i], wk + 2);
		print_padded(labels[i], wl + 2);
		// Right-align numbers so the decimal places line up better than ragged text would.
		for (int k = text_width(values[i]); k < wv; k++) {
			putchar(' ');
		}
		fputs(values[i], stdout);
		if (rd[i].err) {
			// A rate's first read has nothing to compare with yet (-EAGAIN).
			printf("  %s", rd[i].err == -EAGAIN ? "a rate: needs a second reading"
							    : strerror(-rd[i].err));
		}
		putchar('\n');
		free(values[i]);
		free(keys[i]);
		free(labels[i]);
	}
	free(values);
	free(keys);
	free(labels);
}

int cli_sample(struct cli_context *ctx, int argc, char **argv) {
	static const struct option options[] = {
		{"sysfs-root", required_argument, NULL, 'r'},
		{"procfs-root", required_argument, NULL, 'p'},
		CLI_OPTION_JSON,
		CLI_OPTION_HELP,
		{0},
	};
	const char *root = NULL, *proc = NULL;
	bool json = false;
	const struct plain_option plain[] = {
		{'r', &root, NULL},
		{'p', &proc, NULL},
		{CLI_OPT_JSON, NULL, &json},
		{0},
	};
	int rc;
	if (!cli_read_options("sample", usage_text, "h", options, plain, NULL, NULL, argc, argv,
			      &rc)) {
		return rc;
	}
	rc = cli_setup(ctx);
	if (rc != CLI_EXIT_OK) {
		return rc;
	}
	struct config *cfg = &ctx->cfg; // the command's own copy: the options override it
	if (root) {
		free(cfg->sysfs_root);
		cfg->sysfs_root = xstrdup(root);
	}
	if (proc) {
		free(cfg->procfs_root);
		cfg->procfs_root = xstrdup(proc);
	}
	struct sampler *sampler = sampler_create(cfg); // logs why it failed
	if (!sampler) {
		return CLI_EXIT_USAGE;
	}
	struct timespec mono, now;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &now);
	const struct channel *ch;
	const struct reading *rd;
	size_t n = sampler_read(sampler, mono.tv_sec, &ch, &rd);
	if (json) {
		struct buf out;
		buf_init(&out);
		write_json(&out, (int64_t)now.tv_sec, cfg->sysfs_root, n, ch, rd);
		fputs(out.data, stdout);
		buf_finish(&out);
	} else {
		write_table(n, ch, rd);
	}
	sampler_destroy(sampler);
	return CLI_EXIT_OK; // main.c checks the output
}
