/*
 * compare_jobs.c: `luasched compare --jobs N`: the runs (policy x seed) are
 * shared among N child processes (run k goes to child k mod N); each child
 * writes its runs to a temporary file in a flat binary form (the struct,
 * then its strings) and the parent reads them back into the report, so the
 * reports are the same as from one process. A child that fails makes the
 * command fail with its exit code.
 */
#include "cli/cli.h"
#include "cli/compare.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- flat form of a run */

static bool put_str(FILE *f, const char *s)
{
    int32_t len = s ? (int32_t)strlen(s) : -1;
    return fwrite(&len, sizeof len, 1, f) == 1 && (len <= 0 || fwrite(s, 1, (size_t)len, f) == (size_t)len);
}

static bool get_str(FILE *f, char **out)
{
    int32_t len;
    if (fread(&len, sizeof len, 1, f) != 1)
        return false;
    if (len < 0) {
        *out = NULL;
        return true;
    }
    *out = ls_xcalloc((size_t)len + 1, 1);
    return fread(*out, 1, (size_t)len, f) == (size_t)len;
}

typedef struct run_header {
    uint32_t policy, seed_index;
    uint32_t n_nodes;
    double span_s;
    bool has_reference;
} run_header;

static bool put_run(FILE *f, const run_header *h, const cmp_run *r)
{
    cmp_run flat = *r;
    flat.zones = NULL;
    flat.keys = flat.nodes = NULL;
    bool ok = fwrite(h, sizeof *h, 1, f) == 1 && fwrite(&flat, sizeof flat, 1, f) == 1;
    for (uint32_t z = 0; ok && z < r->n_zones; z++)
        ok = put_str(f, r->zones[z].name) && fwrite(&r->zones[z].pods, sizeof r->zones[z].pods, 1, f) == 1;
    for (uint32_t i = 0; ok && i < r->pods; i++)
        ok = put_str(f, r->keys[i]) && put_str(f, r->nodes[i]);
    return ok;
}

static bool get_run(FILE *f, run_header *h, cmp_run *r)
{
    if (fread(h, sizeof *h, 1, f) != 1 || fread(r, sizeof *r, 1, f) != 1)
        return false;
    r->zones = ls_xcalloc(r->n_zones + 1, sizeof *r->zones);
    bool ok = true;
    for (uint32_t z = 0; ok && z < r->n_zones; z++)
        ok = get_str(f, &r->zones[z].name) && fread(&r->zones[z].pods, sizeof r->zones[z].pods, 1, f) == 1;
    r->keys = ls_xcalloc(r->pods + 1, sizeof *r->keys);
    r->nodes = ls_xcalloc(r->pods + 1, sizeof *r->nodes);
    for (uint32_t i = 0; ok && i < r->pods; i++)
        ok = get_str(f, &r->keys[i]) && get_str(f, &r->nodes[i]);
    return ok;
}

/* ---- the children */

static int child(uint32_t job, uint32_t jobs, cmp_report *rep, uint32_t seeds, cmp_run_fn run, void *ud, FILE *out)
{
    uint32_t k = 0;
    for (uint32_t p = 0; p < rep->n_policies; p++)
        for (uint32_t s = 0; s < seeds; s++, k++) {
            if (k % jobs != job)
                continue;
            cmp_run r;
            memset(&r, 0, sizeof r);
            int rc = run(ud, p, s, &r, rep);
            if (rc)
                return rc;
            run_header h = {.policy = p, .seed_index = s, .n_nodes = rep->n_nodes, .span_s = rep->span_s,
                            .has_reference = rep->has_reference};
            if (!put_run(out, &h, &r)) {
                fprintf(stderr, "luasched compare: job %u: writing its runs: %s\n", job, strerror(errno));
                return LS_EXIT_FAILURE;
            }
        }
    return fflush(out) == 0 ? LS_EXIT_OK : LS_EXIT_FAILURE;
}

static int read_results(FILE *in, cmp_report *rep)
{
    run_header h;
    cmp_run r;
    while (get_run(in, &h, &r)) {
        if (h.policy >= rep->n_policies || h.seed_index >= rep->policy[h.policy].n_runs) {
            fprintf(stderr, "luasched compare: a job returned a run out of range\n");
            return LS_EXIT_FAILURE;
        }
        rep->policy[h.policy].runs[h.seed_index] = r;
        rep->n_nodes = h.n_nodes;
        rep->span_s = h.span_s;
        rep->has_reference = h.has_reference;
    }
    return LS_EXIT_OK;
}

int cmp_run_jobs(uint32_t jobs, cmp_report *rep, uint32_t seeds, cmp_run_fn run, void *ud)
{
    FILE **files = ls_xcalloc(jobs, sizeof *files);
    pid_t *pids = ls_xcalloc(jobs, sizeof *pids);
    int rc = LS_EXIT_OK;
    fflush(NULL);
    for (uint32_t j = 0; j < jobs && rc == 0; j++) {
        files[j] = tmpfile();
        if (!files[j]) {
            fprintf(stderr, "luasched compare: --jobs: a temporary file: %s\n", strerror(errno));
            rc = LS_EXIT_FAILURE;
            break;
        }
        pids[j] = fork();
        if (pids[j] < 0) {
            fprintf(stderr, "luasched compare: --jobs: fork: %s\n", strerror(errno));
            rc = LS_EXIT_FAILURE;
        } else if (pids[j] == 0) {
            _exit(child(j, jobs, rep, seeds, run, ud, files[j]));
        }
    }
    for (uint32_t j = 0; j < jobs; j++) {
        int status = 0;
        if (pids[j] > 0 && waitpid(pids[j], &status, 0) == pids[j] && rc == 0) {
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "luasched compare: job %u of %u failed (%s %d)\n", j, jobs,
                        WIFEXITED(status) ? "exit" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
                rc = WIFEXITED(status) ? WEXITSTATUS(status) : LS_EXIT_FAILURE;
            }
        }
    }
    for (uint32_t j = 0; j < jobs && rc == 0; j++) {
        rewind(files[j]);
        rc = read_results(files[j], rep);
    }
    for (uint32_t j = 0; j < jobs; j++)
        if (files[j])
            fclose(files[j]);
    free(files);
    free(pids);
    return rc;
}
