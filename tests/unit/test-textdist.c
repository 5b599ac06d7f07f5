/* The one edit distance: exact counts, case folding, the limit and long names. */
#include <stdint.h>
#include <string.h>

#include "buf.h"
#include "test.h"
#include "textdist.h"

int main(void) {
	is_int(textdist("intervall", "interval", SIZE_MAX), 1, "one deletion");
	is_int(textdist("kitten", "sitting", SIZE_MAX), 3, "kitten/sitting: 3");
	is_int(textdist("", "abc", SIZE_MAX), 3, "from empty: the length");
	is_int(textdist("abc", "", SIZE_MAX), 3, "to empty: the length");
	is_int(textdist("same", "same", SIZE_MAX), 0, "equal: 0");
	is_int(textdist("SDXL-npu", "sdxl-NPU", SIZE_MAX), 0, "ASCII case is folded");
	is_int(textdist("flaw", "lawn", SIZE_MAX), 2, "flaw/lawn: 2");
	is_int(textdist("kitten", "sitting", 3), 3, "at the limit: the limit");
	is_int(textdist("kitten", "sitting", 2), 2, "over the limit: the limit");
	is_int(textdist("a", "abcdef", 3), 3, "lengths 5 apart, limit 3: given up early");
	char longer[TEXTDIST_MAX + 2];
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	is_int(textdist(longer, "a", SIZE_MAX), SIZE_MAX,
	       "a name over 64 bytes is as far as it gets");
	longer[TEXTDIST_MAX] = '\0';
	is_int(textdist(longer, longer, SIZE_MAX), 0, "64 bytes still compare");

	// The one rule of "did you mean": a name containing the unknown one, else the fewest edits.
	struct textdist_near near;
	struct buf b;
	buf_init(&b);
	textdist_near_init(&near, "sdxl");
	textdist_near_offer(&near, "reranker", "reranker");
	textdist_near_offer(&near, "sdxl-image", "sdxl-image");
	ok(textdist_near_write(&near, true, &b), "a label containing the name is near");
	is_str(b.data, "; did you mean 'sdxl-image'?", "... and offered quoted");
	buf_clear(&b);
	textdist_near_init(&near, "policy4");
	const char *doms[] = {"cpufreq/policy0", "cpufreq/policy4", "devfreq/dmc"};
	for (size_t i = 0; i < 3; i++) {
		textdist_near_offer(&near, doms[i], doms[i]);
		textdist_near_offer(&near, doms[i], strchr(doms[i], '/') + 1);
	}
	textdist_near_write(&near, false, &b);
	is_str(b.data, "; did you mean cpufreq/policy4?", "the nearest alone, shown by its key");
	buf_clear(&b);
	textdist_near_init(&near, "sockt");
	const char *keys[] = {"socket", "socks", "sock", "sockets", "thermal/soc"};
	for (size_t i = 0; i < 5; i++) {
		textdist_near_offer(&near, keys[i], keys[i]);
	}
	textdist_near_write(&near, true, &b);
	is_str(b.data, "; did you mean 'socket', 'socks', 'sock'?",
	       "the first three of the best score, in the order offered");
	buf_clear(&b);
	textdist_near_init(&near, "thermal/nothing-like-it");
	textdist_near_offer(&near, "thermal/soc-thermal", "thermal/soc-thermal");
	ok(!textdist_near_write(&near, true, &b) && b.len == 0, "nothing near: nothing written");
	buf_finish(&b);
	return test_done();
}
