/*
 * feature_gates.c: --feature-gates (see luasched/feature_gates.h). The
 * parsing and messages are component-base's featuregate Set and
 * unsafeSetFromMap; what luasched refuses is said per gate below.
 */
#include "luasched/feature_gates.h"

#include "luasched/framework.h"   /* ls_feature_enabled_name, for Lua */
#include "luasched/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Why luasched refuses a gate's non-default value; "" where it implements it
 * (the earlier behaviour, restored where the gate is read). */
static const char *refusal_of(ls_feature_gate g)
{
    switch (g) {
    case LS_FG_OpportunisticBatching:           /* batch.c: no hint, no batch state */
    case LS_FG_SchedulerPopFromBackoffQ:        /* scheduling_queue.c: Pop waits for backoff to end */
    case LS_FG_NominatedNodeNameForExpectation: /* cycle.c: no nominatedNodeName for the binding */
    case LS_FG_StorageCapacityScoring:          /* volume_binding.lua: no shape, no Score */
    case LS_FG_DRASchedulerFilterTimeout:       /* dynamic_resources.lua: no filterTimeout */
    case LS_FG_VolumeLimitScaling:              /* node_volume_limits.lua: no preventPodSchedulingIfMissing */
    case LS_FG_PodLevelResources:               /* decode_containers.c: pod-level resources not read */
    case LS_FG_DRAConsumableCapacity:           /* dynamic_resources_allocator.lua: no shared devices, */
    case LS_FG_DRAPartitionableDevices:         /*  no counter-consuming devices, no devices with */
    case LS_FG_DRADeviceBindingConditions:      /*  binding conditions, no PreBind wait */
    case LS_FG_MatchLabelKeysInPodTopologySpread: /* decode.c: a spread constraint's matchLabelKeys not read */
        return "";
    case LS_FG_AllAlpha:
        return "it would turn on every alpha gate, and luasched implements none of them";
    case LS_FG_AllBeta:
        return "it would turn on every beta gate, GenericWorkload and others luasched does not implement among them";
    case LS_FG_SchedulerAsyncPreemption:
        return "luasched has only asynchronous preemption (victims deleted after the cycle, the preemptor "
               "waiting), not the synchronous one";
    case LS_FG_SchedulerAsyncAPICalls:
        return "the API call dispatcher (merged calls) is not implemented; luasched's writer pool sends each call";
    case LS_FG_InPlacePodLevelResourcesVerticalScaling:
        return "luasched always accounts resized pod-level resources as v1.37 does";
    case LS_FG_DRADeviceTaints:
    case LS_FG_DRADeviceTaintRules:
        return "luasched's DynamicResources allocator has only the v1.37 behaviour";
    case LS_FG_GenericWorkload:
    case LS_FG_TopologyAwareWorkloadScheduling:
    case LS_FG_CompositePodGroup:
    case LS_FG_PodGroupPreemptionPolicy:
    case LS_FG_DRAWorkloadResourceClaims:
        return "workload scheduling (PodGroup cycles, placements, workload preemption) is not implemented; "
               "gangs are scheduled by the GangScheduling and Coscheduling policy plugins";
    default:
        return "luasched does not implement it";
    }
}

#define LS_FG_INFO(id, st, def, lock) {#id, LS_FG_STAGE_##st, def, lock},
static const ls_feature_gate_info gates[LS_FG_COUNT] = {LS_FEATURE_GATE_LIST(LS_FG_INFO)};
#undef LS_FG_INFO

/* The values in effect: written only while the command line is read (one
 * thread, before anything starts), read by every thread after. */
#define LS_FG_DEFAULT(id, st, def, lock) def,
static bool enabled[LS_FG_COUNT] = {LS_FEATURE_GATE_LIST(LS_FG_DEFAULT)};
#undef LS_FG_DEFAULT

void ls_feature_gates_reset(void)
{
    for (int g = 0; g < LS_FG_COUNT; g++)
        enabled[g] = gates[g].default_value;
}

const ls_feature_gate_info *ls_feature_gate_info_of(ls_feature_gate g)
{
    return g < LS_FG_COUNT ? &gates[g] : NULL;
}

const char *ls_feature_gate_refusal(ls_feature_gate g)
{
    return g < LS_FG_COUNT ? refusal_of(g) : "";
}

bool ls_feature_enabled(ls_feature_gate g)
{
    return g < LS_FG_COUNT && enabled[g];
}

bool ls_feature_enabled_name(const char *name)
{
    for (int g = 0; name && g < LS_FG_COUNT; g++)
        if (strcmp(gates[g].name, name) == 0)
            return enabled[g];
    return false;
}

static int find_gate(const char *name)
{
    for (int g = 0; g < LS_FG_COUNT; g++)
        if (strcmp(gates[g].name, name) == 0)
            return g;
    return -1;
}

/* The closest known name (case-insensitive edit distance), or NULL if none is close. */
static const char *closest(const char *name)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1, n = strlen(name);
    for (int g = 0; g < LS_FG_COUNT; g++) {
        if (strcasecmp(gates[g].name, name) == 0)
            return gates[g].name;
        const char *t = gates[g].name;
        size_t m = strlen(t);
        if (n > 64 || m > 64)
            continue;
        size_t row[65];
        for (size_t j = 0; j <= m; j++)
            row[j] = j;
        for (size_t i = 1; i <= n; i++) {
            size_t diag = row[0];
            row[0] = i;
            for (size_t j = 1; j <= m; j++) {
                size_t up = row[j];
                size_t cost = (name[i - 1] | 32) == (t[j - 1] | 32) ? 0 : 1;
                size_t v = diag + cost;
                if (row[j] + 1 < v)
                    v = row[j] + 1;
                if (row[j - 1] + 1 < v)
                    v = row[j - 1] + 1;
                row[j] = v;
                diag = up;
            }
        }
        if (row[m] < best_d) {
            best_d = row[m];
            best = t;
        }
    }
    return best && best_d <= (n / 3 > 2 ? n / 3 : 2) ? best : NULL;
}

/* Go's strconv.ParseBool. */
static bool parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True", NULL};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False", NULL};
    for (int i = 0; yes[i]; i++)
        if (strcmp(s, yes[i]) == 0)
            return *out = true, true;
    for (int i = 0; no[i]; i++)
        if (strcmp(s, no[i]) == 0)
            return *out = false, true;
    return false;
}

static char *trimmed(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* One "key=value" item: checked, then staged in next[]. */
static bool set_item(char *item, bool *next, ls_error *err)
{
    char *eq = strchr(item, '=');
    if (eq)
        *eq = '\0';
    char *key = trimmed(item);
    if (!eq)
        return ls_errorf(err, "missing bool value for %s", key), false;
    char *text = trimmed(eq + 1);
    bool v;
    if (!parse_bool(text, &v))
        return ls_errorf(err, "invalid value of %s=%s, err: strconv.ParseBool: parsing \"%s\": invalid syntax", key,
                         text, text),
               false;
    int g = find_gate(key);
    if (g < 0) {
        const char *near = closest(key);
        if (near)
            ls_errorf(err, "unrecognized feature gate: %s (did you mean %s?)", key, near);
        else
            ls_errorf(err, "unrecognized feature gate: %s", key);
        return false;
    }
    const ls_feature_gate_info *info = &gates[g];
    if (info->locked && v != info->default_value)
        return ls_errorf(err, "cannot set feature gate %s to %s, feature is locked to %s", key, v ? "true" : "false",
                         info->default_value ? "true" : "false"),
               false;
    const char *refusal = refusal_of((ls_feature_gate)g);
    if (v != info->default_value && refusal[0])
        return ls_errorf(err, "%s=%s is not supported by luasched: %s", key, v ? "true" : "false", refusal), false;
    next[g] = v;
    if (info->stage == LS_FG_STAGE_GA) {
        char msg[200];
        snprintf(msg, sizeof msg, "Setting GA feature gate %s=%s. It will be removed in a future release.", key,
                 v ? "true" : "false");
        ls_log_warning(msg);
    }
    return true;
}

bool ls_feature_gates_set(const char *value, ls_error *err)
{
    bool next[LS_FG_COUNT];
    memcpy(next, enabled, sizeof next);
    char *copy = ls_xstrdup(value ? value : "");
    bool ok = true;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); ok && item; item = strtok_r(NULL, ",", &save))
        if (*item)
            ok = set_item(item, next, err);
    free(copy);
    if (ok)
        memcpy(enabled, next, sizeof next);
    return ok;
}

void ls_feature_gates_format(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int g = 0; g < LS_FG_COUNT && used < len; g++) {
        if (enabled[g] == gates[g].default_value)
            continue;
        int n = snprintf(buf + used, len - used, "%s%s=%s", used ? "," : "", gates[g].name,
                         enabled[g] ? "true" : "false");
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

static bool apply_flag(const char *value, ls_error *err)
{
    ls_error inner = {{0}};
    if (ls_feature_gates_set(value, &inner))
        return true;
    ls_errorf(err, "invalid argument \"%s\" for \"--feature-gates\" flag: %s", value, inner.msg);
    return false;
}

bool ls_feature_gates_from_args(int *argc, char **argv, ls_error *err)
{
    static const char flag[] = "--feature-gates";
    int out = 0;
    for (int i = 0; i < *argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {   /* the rest is positional */
            while (i < *argc)
                argv[out++] = argv[i++];
            break;
        }
        if (strcmp(a, flag) == 0) {
            if (i + 1 >= *argc)
                return ls_errorf(err, "flag needs an argument: %s", flag), false;
            if (!apply_flag(argv[++i], err))
                return false;
            continue;
        }
        if (strncmp(a, flag, sizeof flag - 1) == 0 && a[sizeof flag - 1] == '=') {
            if (!apply_flag(a + sizeof flag, err))
                return false;
            continue;
        }
        argv[out++] = argv[i];
    }
    *argc = out;
    argv[out] = NULL;
    return true;
}
