/*
 * resources.c: the registry that maps resource names to slots of ls_resources.
 *
 * Slots 0..3 are fixed (cpu, memory, ephemeral-storage, pods) so the hot paths
 * can use them as constants; every other name (extended resources, hugepages)
 * gets the next free slot the first time a pod or node mentions it. Slots are
 * never reused: resource vectors already decoded keep their meaning for the
 * life of the process. The registry is process-wide, like the intern table, and
 * touched only from decoding, which the callers serialise.
 */
#include "luasched/model.h"

#include <string.h>

/* Order follows LS_RES_CPU..LS_RES_PODS. Extended names are heap copies; the
 * table is static, so they stay reachable until exit (not leaks). */
static const char *names[LS_MAX_RESOURCES] = {
    [LS_RES_CPU] = "cpu",
    [LS_RES_MEMORY] = "memory",
    [LS_RES_EPHEMERAL] = "ephemeral-storage",
    [LS_RES_PODS] = "pods",
};
static uint32_t count = LS_RES_FIRST_SCALAR;

const char *ls_resource_name(uint32_t index)
{
    return index < count ? names[index] : NULL;
}

int32_t ls_resource_index(const char *name)
{
    if (!name)
        return -1;
    for (uint32_t i = 0; i < count; i++)
        if (strcmp(names[i], name) == 0)
            return (int32_t)i;
    return -1;
}

uint32_t ls_resource_count(void)
{
    return count;
}

int32_t ls_resource_intern(const char *name, ls_error *err)
{
    if (!name || !*name) {
        ls_errorf(err, "empty resource name");
        return -1;
    }
    int32_t i = ls_resource_index(name);
    if (i >= 0)
        return i;
    if (count == LS_MAX_RESOURCES) {
        ls_errorf(err, "too many distinct resource names (at most %d extended resources)",
                  LS_MAX_RESOURCES - LS_RES_FIRST_SCALAR);
        return -1;
    }
    names[count] = ls_xstrdup(name);
    return (int32_t)count++;
}

