/* Options kept as given (plainopt.h). */
#include "plainopt.h"

#include <stddef.h>

bool plain_option_keep(const struct plain_option *list, int opt, char *arg) {
	for (; list && list->opt; list++) {
		if (list->opt != opt) {
			continue;
		}
		if (list->text) {
			*list->text = arg;
		} else {
			*list->flag = true;
		}
		return true;
	}
	return false;
}
