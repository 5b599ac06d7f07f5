/*
 * Options whose whole meaning is their argument or their being given (--db FILE, --json), as a
 * list a program's option loop keeps them by instead of a case each: the CLI's commands and the
 * daemon read theirs with getopt_long() and keep these alike.
 */
#ifndef PLAINOPT_H
#define PLAINOPT_H

#include <stdbool.h>

/* An option whose whole meaning is its argument, kept in *@text, or its being given: *@flag. */
struct plain_option {
	int opt; // getopt_long's value; 0 ends a list
	const char **text;
	bool *flag;
};

/**
 * Keeps option @opt, given with argument @arg, in its entry of @list (NULL: an empty list):
 * *text = @arg, or *flag = true. False, nothing kept, when @opt has no entry.
 */
bool plain_option_keep(const struct plain_option *list, int opt, char *arg);

#endif
