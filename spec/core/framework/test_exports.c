/*
 * test_exports.c: the library's FFI surface. core/exports.txt lists every
 * function the Lua runtime reaches through the FFI (as Tarantool's
 * extra/exports does); the build derives the same list from the cdef blocks
 * of the public headers. The two must agree, every listed symbol must be
 * exported by libluasched, and the ABI version the library reports must be
 * the hash the build put in the generated cdefs.
 */
#include "luasched/base.h"
#include "test.h"

#include <dlfcn.h>
#include <stdlib.h>

#define MAX_NAMES 2048

typedef struct name_list {
    char *names[MAX_NAMES];
    int n;
} name_list;

static bool read_names(const char *path, name_list *out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return false;
    }
    char line[256];
    while (fgets(line, sizeof line, f) && out->n < MAX_NAMES) {
        line[strcspn(line, "\r\n")] = 0;
        if (line[0] && line[0] != '#')
            out->names[out->n++] = strdup(line);
    }
    fclose(f);
    return true;
}

static bool contains(const name_list *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->names[i], name) == 0)
            return true;
    return false;
}

static void free_names(name_list *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->names[i]);
}

static void check_lists_agree(const name_list *listed, const name_list *declared)
{
    for (int i = 0; i < declared->n; i++) {
        ls_test_checks++;
        if (!contains(listed, declared->names[i])) {
            ls_test_failures++;
            fprintf(stderr, "%s is declared for the FFI but missing from core/exports.txt\n", declared->names[i]);
        }
    }
    for (int i = 0; i < listed->n; i++) {
        ls_test_checks++;
        if (!contains(declared, listed->names[i])) {
            ls_test_failures++;
            fprintf(stderr, "%s is in core/exports.txt but no header's ffi block declares it\n", listed->names[i]);
        }
    }
}

static void check_exported(const name_list *listed)
{
    for (int i = 0; i < listed->n; i++) {
        ls_test_checks++;
        if (!dlsym(RTLD_DEFAULT, listed->names[i])) {
            ls_test_failures++;
            fprintf(stderr, "%s is not exported by libluasched\n", listed->names[i]);
        }
    }
}

static void check_abi_version(void)
{
    CHECK(ls_abi_version() == LS_ABI_VERSION);
    CHECK(LS_ABI_VERSION > 1);   /* a hash, no longer the hand-kept 1 */
    FILE *f = fopen(LS_GEN_DIR "/luasched/cdefs.lua", "r");
    CHECK(f != NULL);
    if (!f)
        return;
    char text[256] = {0};
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char want[64];
    snprintf(want, sizeof want, "return { abi = %d,", LS_ABI_VERSION);
    CHECK_CONTAINS(text, want);
}

int main(void)
{
    name_list listed = {0}, declared = {0};
    CHECK(read_names(LS_SPEC_DIR "/../core/exports.txt", &listed));
    CHECK(read_names(LS_GEN_DIR "/luasched/exports.txt", &declared));
    CHECK(declared.n > 50);
    check_lists_agree(&listed, &declared);
    check_exported(&listed);
    check_abi_version();
    free_names(&listed);
    free_names(&declared);
    TEST_MAIN_END();
}
