/*
 * libFuzzer target for a campaign's suite file (campaign_suite_parse): any text either fails with
 * FILE:LINE:COL problems or gives a suite every step of which has a label and a command, whose
 * canonical JSON reads back as JSON, and which differs from nothing of itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "campaign-suite.h"
#include "jsonread.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct campaign_suite s;
	char *errors = NULL;
	bool good = campaign_suite_parse("fuzz.yaml", (const char *)data, size, &s, &errors);
	if (!good) {
		if (!errors || strncmp(errors, "fuzz.yaml:", 10) != 0) {
			abort();
		}
	} else {
		if (errors || !s.name || s.n_steps == 0) {
			abort();
		}
		for (size_t i = 0; i < s.n_steps; i++) {
			const struct campaign_step *st = &s.steps[i];
			if (!st->label || !st->command.argv || st->command.argc == 0 ||
			    st->command.argv[st->command.argc] || st->repetitions == 0) {
				abort();
			}
		}
		struct buf text = {0};
		struct json j;
		json_init(&j, &text, false);
		campaign_suite_json(&s, &j);
		struct jsonread_error e;
		struct jsonread_node *back = jsonread_parse(text.data, text.len, 1 << 24, &e);
		struct buf diff = {0};
		if (!back || campaign_suite_diff(&s, &s, &diff)) {
			abort();
		}
		jsonread_node_free(back);
		buf_finish(&diff);
		buf_finish(&text);
	}
	free(errors);
	campaign_suite_finish(&s);
	return 0;
}
