/* The one edit distance: exact counts, case folding, the limit and long names. */
#include <stdint.h>
#include <string.h>

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
	return test_done();
}
