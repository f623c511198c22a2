/*
 * flags.c: what a command says after getopt_long refused a flag: the
 * closest flag it has ("luasched simulate: did you mean --config?"), by the
 * rule of every misspelling message (base/suggest.c). Printed after the
 * command's usage, so it is the last line a newcomer sees.
 */
#include "cli/cli.h"

#include <getopt.h>
#include <string.h>

enum { MAX_FLAGS = 96 };

void ls_cli_suggest_flag(int argc, char **argv, const struct option *longopts)
{
    if (optind < 1 || optind > argc)
        return;
    const char *arg = argv[optind - 1];
    if (strncmp(arg, "--", 2) != 0 || !arg[2])
        return;
    char word[128];
    size_t len = strcspn(arg + 2, "=");
    if (len >= sizeof word)
        return;
    memcpy(word, arg + 2, len);
    word[len] = 0;
    const char *names[MAX_FLAGS];
    size_t n = 0;
    for (const struct option *o = longopts; o->name && n < MAX_FLAGS; o++) {
        if (strcmp(o->name, word) == 0)
            return;   /* a known flag (its argument was missing): getopt said so */
        names[n++] = o->name;
    }
    const char *near = ls_did_you_mean(word, names, n);
    if (near)
        fprintf(stderr, "luasched %s: unknown flag --%s; did you mean --%s?\n", argv[0], word, near);
}
