/*
 * output_file.c: the files a command writes (compare's report, a completed
 * configuration) are opened before its plugin code runs: the worker process
 * that runs plugins confines itself at that point and may no longer open a
 * file for writing (worker/confine.h). "-" is standard output.
 */
#include "cli/cli.h"

#include <errno.h>
#include <string.h>

FILE *ls_cli_output_open(const char *path, const char *mode, ls_error *err)
{
    if (strcmp(path, "-") == 0)
        return stdout;
    FILE *f = fopen(path, mode);
    if (!f)
        ls_errorf(err, "%s: cannot write file: %s", path, strerror(errno));
    return f;
}

bool ls_cli_output_finish(FILE *f, const char *path, const char *text, ls_error *err)
{
    bool ok = !text || fputs(text, f) >= 0;
    if (f == stdout)
        ok = fflush(stdout) == 0 && ok;
    else
        ok = fclose(f) == 0 && ok;
    if (!ok)
        ls_errorf(err, "%s: cannot write file: %s", path, strerror(errno));
    return ok;
}
