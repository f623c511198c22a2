/*
 * fuzz_config.c: KubeSchedulerConfiguration loading (core/src/config), then
 * multiPoint expansion against a fake plugin table, then ls_config_free, which
 * must be safe after any failure. A config that loads is also written back
 * (ls_config_format, YAML and JSON, as --write-config-to does), and what is
 * written must load again.
 *
 * ls_config_load only reads files, so the input goes into a memfd that is
 * rewritten for every run and read back through /proc/self/fd.
 */
#include "fuzz_common.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "luasched/config.h"

static int fd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_intern_prepare();
    fd = memfd_create("fuzz-config", 0);
    if (fd < 0) {
        perror("memfd_create");
        abort();
    }
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return 0;
}

#define P(ep) (1u << (ep))

/* The default plugins as upstream registers them, a few custom ones, and for
 * any other name a set of points read off its first letter, so that fuzzed
 * names reach every branch of the expansion; names starting with "X" do not
 * exist (the plugin loader's error). */
static bool fake_points(void *ud, const char *name, uint32_t *points, ls_error *err)
{
    (void)ud;
    static const struct {
        const char *name;
        uint32_t points;
    } known[] = {
        {"PrioritySort", P(LS_EP_QUEUE_SORT)},
        {"NodeUnschedulable", P(LS_EP_FILTER)},
        {"NodeName", P(LS_EP_FILTER)},
        {"TaintToleration", P(LS_EP_FILTER) | P(LS_EP_PRE_SCORE) | P(LS_EP_SCORE)},
        {"NodeResourcesFit", P(LS_EP_PRE_FILTER) | P(LS_EP_FILTER) | P(LS_EP_PRE_SCORE) | P(LS_EP_SCORE)},
        {"DefaultBinder", P(LS_EP_BIND)},
        {"NodeAffinity", P(LS_EP_PRE_FILTER) | P(LS_EP_FILTER) | P(LS_EP_PRE_SCORE) | P(LS_EP_SCORE)},
        {"Gang", P(LS_EP_PRE_ENQUEUE) | P(LS_EP_PERMIT) | P(LS_EP_RESERVE)},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(known[i].name, name) == 0) {
            *points = known[i].points;
            return true;
        }
    }
    if (name[0] == 'X')
        return ls_errorf(err, "plugin \"%s\" does not exist", name);
    *points = ((uint32_t)(unsigned char)name[0] * 2654435761u >> 7) & (P(LS_EP_COUNT) - 1);
    return true;
}

static void write_input(const uint8_t *data, size_t size)
{
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) {
        perror("memfd write");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_intern_prepare();
    write_input(data, size);
    ls_config cfg;
    ls_error err = {{0}};
    bool loaded = ls_config_load(&cfg, path, &err);
    if (loaded) {
        FUZZ_CHECK(cfg.n_profiles >= 1 && cfg.profiles, "a config without profiles");
        for (uint32_t i = 0; i < cfg.n_profiles; i++) {
            FUZZ_CHECK(cfg.profiles[i].scheduler_name != 0, "profile %u without a name", i);
            FUZZ_CHECK(cJSON_IsObject(cfg.profiles[i].plugin_args), "profile %u without plugin args", i);
        }
        memset(&err, 0, sizeof err);
        if (ls_config_expand(&cfg, fake_points, NULL, &err)) {
            for (uint32_t i = 0; i < cfg.n_profiles; i++) {
                FUZZ_CHECK(cfg.profiles[i].plugins[LS_EP_QUEUE_SORT].len == 1, "profile %u: queue sort", i);
                FUZZ_CHECK(cfg.profiles[i].plugins[LS_EP_BIND].len >= 1, "profile %u: bind", i);
            }
        } else {
            FUZZ_CHECK(err.msg[0] != '\0', "expansion failed without a message");
        }
    } else {
        FUZZ_CHECK(strncmp(err.msg, path, strlen(path)) == 0, "error without the file: \"%s\"", err.msg);
    }
    char *written[2] = {NULL, NULL};
    for (int json = 0; loaded && json < 2; json++) {
        memset(&err, 0, sizeof err);
        written[json] = ls_config_format(&cfg, json, &err);
        FUZZ_CHECK(written[json], "a loaded config cannot be written: %s", err.msg);
    }
    ls_config_free(&cfg);
    for (int json = 0; loaded && json < 2; json++) {
        write_input((const uint8_t *)written[json], strlen(written[json]));
        memset(&err, 0, sizeof err);
        bool again = ls_config_load(&cfg, path, &err);
        FUZZ_CHECK(again, "the config written as %s does not load: %s\n%s", json ? "JSON" : "YAML", err.msg,
                   written[json]);
        ls_config_free(&cfg);
        free(written[json]);
    }
    return 0;
}
