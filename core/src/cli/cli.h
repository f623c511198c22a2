/*
 * cli.h: subcommands of the luasched executable and their shared helpers.
 */
#ifndef LS_CLI_H
#define LS_CLI_H

#include "luasched/base.h"

#ifndef LS_VERSION
#define LS_VERSION "0.1.0"
#endif

enum { LS_EXIT_OK = 0, LS_EXIT_FAILURE = 1, LS_EXIT_USAGE = 2 };

int ls_cli_simulate(int argc, char **argv);

/* Peak resident set size of this process, in bytes. */
uint64_t ls_cli_peak_rss(void);
double ls_cli_now(void);

#endif
