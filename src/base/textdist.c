/* Levenshtein distance over one row of TEXTDIST_MAX + 1 counts. */
#include "textdist.h"

#include <ctype.h>
#include <string.h>

size_t textdist(const char *a, const char *b, size_t limit) {
	size_t la = strlen(a), lb = strlen(b);
	if (la > TEXTDIST_MAX || lb > TEXTDIST_MAX || (la > lb ? la - lb : lb - la) >= limit) {
		return limit;
	}
	size_t row[TEXTDIST_MAX + 1];
	for (size_t j = 0; j <= lb; j++) {
		row[j] = j;
	}
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t sub = diag + (tolower((unsigned char)a[i - 1]) !=
					     tolower((unsigned char)b[j - 1]));
			size_t del = up + 1, ins = row[j - 1] + 1;
			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			diag = up;
		}
	}
	return row[lb] < limit ? row[lb] : limit;
}
