/*
 * compare_jobs.c: `luasched compare --jobs N`: the runs (policy x seed) are
 * shared among N child processes (run k goes to child k mod N); each child
 * writes its runs to a temporary file in a flat binary form (the struct,
 * then its strings) and the parent reads them back into the report, so the
 * reports are the same as from one process. A child that fails makes the
 * command fail with its exit code.
 *
 * Beyond one machine: `--shard I/N -o FILE` runs the runs of index I (as
 * child I of N would) and writes them to FILE with a header naming the
 * policies and seeds; `--merge FILE...` reads every shard back into one
 * report (an Indexed Job's pods each write a shard: deploy/kustomize/
 * policy-lab-sweep).
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
            bool ok = put_run(out, &h, &r);
            cmp_free_run(&r);
            if (!ok) {
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

/* ---- shards */

#define SHARD_MAGIC "luasched-compare-shard-2\n"

int cmp_write_shard(FILE *out, uint32_t shard, uint32_t shards, cmp_report *rep, uint32_t seeds, cmp_run_fn run,
                    void *ud)
{
    bool ok = fputs(SHARD_MAGIC, out) >= 0 && fwrite(&rep->n_policies, sizeof rep->n_policies, 1, out) == 1 &&
              fwrite(&seeds, sizeof seeds, 1, out) == 1 && fwrite(&shards, sizeof shards, 1, out) == 1 &&
              fwrite(&rep->first_seed, sizeof rep->first_seed, 1, out) == 1 && put_str(out, rep->trace);
    for (uint32_t p = 0; ok && p < rep->n_policies; p++)
        ok = put_str(out, rep->policy[p].name) && put_str(out, rep->policy[p].config) &&
             fwrite(&rep->policy[p].named, sizeof rep->policy[p].named, 1, out) == 1;
    ok = ok && fwrite(&rep->n_metrics, sizeof rep->n_metrics, 1, out) == 1;
    for (uint32_t k = 0; ok && k < rep->n_metrics; k++)
        ok = put_str(out, rep->metric_name[k]) && put_str(out, rep->metric_file[k]);
    if (!ok) {
        fprintf(stderr, "luasched compare: --shard: writing the header: %s\n", strerror(errno));
        return LS_EXIT_FAILURE;
    }
    return child(shard, shards, rep, seeds, run, ud, out);
}

/* The header's metric names and files (the Lua metrics, compare_lua.c). */
static bool read_metric_names(FILE *f, const char *path, cmp_report *rep, bool first_file, char ***strs,
                              uint32_t *n_strs)
{
    uint32_t n;
    if (fread(&n, sizeof n, 1, f) != 1 || n > CMP_MAX_METRICS || (!first_file && n != rep->n_metrics)) {
        fprintf(stderr, "luasched compare: --merge: %s: a damaged header, or a shard of a sweep with other metrics\n",
                path);
        return false;
    }
    for (uint32_t k = 0; k < n; k++) {
        char *name = NULL, *file = NULL;
        if (!get_str(f, &name) || !get_str(f, &file) || !name || !file ||
            (!first_file && strcmp(name, rep->metric_name[k]) != 0)) {
            fprintf(stderr, "luasched compare: --merge: %s: a truncated header, or other metrics\n", path);
            free(name);
            free(file);
            return false;
        }
        if (!first_file) {
            free(name);
            free(file);
            continue;
        }
        rep->metric_name[k] = name;
        rep->metric_file[k] = file;
        *strs = ls_xrealloc(*strs, (*n_strs + 2) * sizeof **strs);
        (*strs)[(*n_strs)++] = name;
        (*strs)[(*n_strs)++] = file;
    }
    rep->n_metrics = n;
    return true;
}

/* The header of a shard file: the report's policies (names and configs owned
 * by the report's strings list) and seeds. */
static bool read_header(FILE *f, const char *path, cmp_report *rep, uint32_t *seeds, uint32_t *shards, char ***strs,
                        uint32_t *n_strs)
{
    char magic[sizeof SHARD_MAGIC];
    uint32_t np;
    uint64_t first;
    char *trace = NULL;
    if (fread(magic, 1, sizeof SHARD_MAGIC - 1, f) != sizeof SHARD_MAGIC - 1 ||
        memcmp(magic, SHARD_MAGIC, sizeof SHARD_MAGIC - 1) != 0) {
        fprintf(stderr, "luasched compare: --merge: %s is not a shard written by luasched compare --shard\n", path);
        return false;
    }
    if (fread(&np, sizeof np, 1, f) != 1 || fread(seeds, sizeof *seeds, 1, f) != 1 ||
        fread(shards, sizeof *shards, 1, f) != 1 || fread(&first, sizeof first, 1, f) != 1 || !get_str(f, &trace) ||
        np == 0 || np > CMP_MAX_POLICIES || *seeds == 0) {
        fprintf(stderr, "luasched compare: --merge: %s: a truncated or damaged header\n", path);
        free(trace);
        return false;
    }
    bool first_file = rep->n_policies == 0;
    if (first_file) {
        rep->n_policies = np;
        rep->policy = ls_xcalloc(np, sizeof *rep->policy);
        rep->first_seed = first;
        rep->trace = trace;
        *strs = ls_xrealloc(*strs, (*n_strs + 1) * sizeof **strs);
        (*strs)[(*n_strs)++] = trace;
    } else {
        free(trace);
        if (np != rep->n_policies || first != rep->first_seed || *seeds != rep->policy[0].n_runs) {
            fprintf(stderr, "luasched compare: --merge: %s is a shard of another sweep (policies, seeds)\n", path);
            return false;
        }
    }
    for (uint32_t p = 0; p < np; p++) {
        char *name = NULL, *config = NULL;
        bool named;
        if (!get_str(f, &name) || !get_str(f, &config) || fread(&named, sizeof named, 1, f) != 1) {
            fprintf(stderr, "luasched compare: --merge: %s: a truncated header\n", path);
            free(name);
            free(config);
            return false;
        }
        if (first_file) {
            rep->policy[p].name = name;
            rep->policy[p].config = config;
            rep->policy[p].named = named;
            rep->policy[p].n_runs = *seeds;
            rep->policy[p].runs = ls_xcalloc(*seeds, sizeof(cmp_run));
            *strs = ls_xrealloc(*strs, (*n_strs + 2) * sizeof **strs);
            (*strs)[(*n_strs)++] = name;
            (*strs)[(*n_strs)++] = config;
        } else {
            bool same = strcmp(name, rep->policy[p].name) == 0 && strcmp(config, rep->policy[p].config) == 0;
            free(name);
            free(config);
            if (!same) {
                fprintf(stderr, "luasched compare: --merge: %s: policy %u differs from the first shard's\n", path, p);
                return false;
            }
        }
    }
    return read_metric_names(f, path, rep, first_file, strs, n_strs);
}

int cmp_read_shards(char **paths, int n, cmp_report *rep, char ***strs, uint32_t *n_strs)
{
    uint32_t seeds = 0, shards = 0, expected = 0;
    for (int i = 0; i < n; i++) {
        FILE *f = fopen(paths[i], "rb");
        if (!f) {
            fprintf(stderr, "luasched compare: --merge: %s: %s\n", paths[i], strerror(errno));
            return LS_EXIT_USAGE;
        }
        bool ok = read_header(f, paths[i], rep, &seeds, &shards, strs, n_strs);
        if (ok && expected == 0)
            expected = shards;
        int rc = ok ? read_results(f, rep) : LS_EXIT_USAGE;
        fclose(f);
        if (rc)
            return rc;
    }
    if ((uint32_t)n != expected)
        fprintf(stderr, "luasched compare: --merge: warning: %d shard file%s of %u\n", n, n == 1 ? "" : "s", expected);
    for (uint32_t p = 0; p < rep->n_policies; p++)
        for (uint32_t s = 0; s < rep->policy[p].n_runs; s++)
            if (rep->policy[p].runs[s].keys == NULL) {
                fprintf(stderr, "luasched compare: --merge: policy %s, seed %llu: no shard holds its run\n",
                        rep->policy[p].name, (unsigned long long)(rep->first_seed + s));
                return LS_EXIT_USAGE;
            }
    return LS_EXIT_OK;
}
