/*
 * config_fields.c: the parts of a KubeSchedulerConfiguration other than the
 * profiles: leaderElection and clientConnection (component-base's types, as
 * kube-scheduler defaults and validates them), luasched's own section, the
 * typed field readers every part uses, problems with file, line and field
 * path, and Go durations.
 */
#include "config/config_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- problems */

static void push_problem(ls_vec *problems, ls_error *err, const char *msg)
{
    if (err && (!problems || problems->len == 0))
        ls_errorf(err, "%s", msg);
    if (problems)
        *(char **)ls_vec_push(problems) = ls_xstrdup(msg);
}

bool ls_cfg_problem(const parse_ctx *pc, const cJSON *item, const char *path, const char *fmt, ...)
{
    char what[700], msg[1100];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int line = pc->doc && item ? ls_doc_line(pc->doc, item) : 0;
    if (line)
        snprintf(msg, sizeof msg, "%s:%d: %s: %s", pc->source, line, path, what);
    else
        snprintf(msg, sizeof msg, "%s: %s: %s", pc->source, path, what);
    push_problem(pc->problems, pc->err, msg);
    return false;
}

bool ls_cfg_problem_plain(ls_vec *problems, ls_error *err, const char *fmt, ...)
{
    char msg[1100];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    push_problem(problems, err, msg);
    return false;
}

void ls_cfg_problems_free(ls_vec *problems)
{
    for (uint32_t i = 0; i < problems->len; i++)
        free(LS_VEC_AT(problems, char *, i));
    ls_vec_free(problems);
}

/* ---- field readers */

void ls_cfg_path(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

const cJSON *ls_cfg_at(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return v ? v : obj;
}

bool ls_cfg_known_fields(const parse_ctx *pc, const cJSON *obj, const char *prefix, const char *const *known)
{
    bool ok = true;
    for (const cJSON *c = obj ? obj->child : NULL; c; c = c->next) {
        bool found = false;
        for (int i = 0; known[i] && !found; i++)
            found = strcmp(c->string, known[i]) == 0;
        if (!found) {
            char path[300];
            snprintf(path, sizeof path, "%s%s", prefix, c->string);
            size_t n = 0;
            while (known[n])
                n++;
            const char *near = ls_did_you_mean(c->string, known, n);
            if (near)
                ok = ls_cfg_problem(pc, c, path, "unknown field (did you mean \"%s\"?)", near);
            else
                ok = ls_cfg_problem(pc, c, path, "unknown field");
        }
    }
    return ok;
}

bool ls_cfg_object(const parse_ctx *pc, const cJSON *obj, const char *path, const char *not_object,
                   const char *const *known)
{
    if (!cJSON_IsObject(obj))
        return ls_cfg_problem(pc, obj, path, "%s", not_object);
    char p[300];
    ls_cfg_path(p, sizeof p, "%s.", path);
    ls_cfg_known_fields(pc, obj, p, known);
    return true;
}

void ls_cfg_each(const parse_ctx *pc, const cJSON *list, const char *path, const char *what, ls_cfg_item_fn item,
                 void *ctx)
{
    if (!list || cJSON_IsNull(list))
        return;
    if (!cJSON_IsArray(list)) {
        ls_cfg_problem(pc, list, path, "expected a list of %s", what);
        return;
    }
    int i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        char p[300];
        ls_cfg_path(p, sizeof p, "%s[%d]", path, i);
        item(pc, e, p, ctx);
    }
}

/* An integer, exactly: number nodes from the document loader carry their
 * source text, so values beyond 2^53 are not rounded through a double. */
static bool integer_of(const cJSON *v, int64_t *out)
{
    if (!cJSON_IsNumber(v))
        return false;
    const char *text = v->valuestring;
    if (text && *text && strspn(text + (*text == '-'), "0123456789") == strlen(text + (*text == '-'))) {
        char *end;
        errno = 0;
        long long n = strtoll(text, &end, 10);
        if (errno || *end)
            return false;
        *out = n;
        return true;
    }
    double d = v->valuedouble;
    if (d != floor(d) || d < -9.2e18 || d > 9.2e18)
        return false;
    *out = (int64_t)d;
    return true;
}

/* Reports a wrong-typed field at prefix + key. */
static bool field_problem(const parse_ctx *pc, const cJSON *v, const char *prefix, const char *key, const char *what)
{
    char path[300];
    snprintf(path, sizeof path, "%s%s", prefix, key);
    return ls_cfg_problem(pc, v, path, "%s", what);
}

bool ls_cfg_int64(const parse_ctx *pc, const cJSON *obj, const char *key, const char *prefix, int64_t *out)
{
    const cJSON *v = ls_json_member(obj, key);
    if (!v)
        return true;
    int64_t n;
    if (!integer_of(v, &n))
        return field_problem(pc, v, prefix, key, "expected an integer");
    *out = n;
    return true;
}

bool ls_cfg_int32(const parse_ctx *pc, const cJSON *obj, const char *key, const char *prefix, int32_t *out)
{
    const cJSON *v = ls_json_member(obj, key);
    if (!v)
        return true;
    int64_t n;
    if (!integer_of(v, &n) || n < INT32_MIN || n > INT32_MAX)
        return field_problem(pc, v, prefix, key, "expected an integer");
    *out = (int32_t)n;
    return true;
}

bool ls_cfg_bool(const parse_ctx *pc, const cJSON *obj, const char *key, const char *prefix, bool *out)
{
    const cJSON *v = ls_json_member(obj, key);
    if (!v)
        return true;
    if (!cJSON_IsBool(v))
        return field_problem(pc, v, prefix, key, "expected true or false");
    *out = cJSON_IsTrue(v);
    return true;
}

bool ls_cfg_string(const parse_ctx *pc, const cJSON *obj, const char *key, const char *prefix, char **out)
{
    const cJSON *v = ls_json_member(obj, key);
    if (!v)
        return true;
    if (!cJSON_IsString(v))
        return field_problem(pc, v, prefix, key, "expected a string");
    *out = ls_arena_strdup(pc->text, v->valuestring);
    return true;
}

static bool read_duration(const parse_ctx *pc, const cJSON *obj, const char *key, const char *prefix, int64_t *out)
{
    const cJSON *v = ls_json_member(obj, key);
    if (!v)
        return true;
    char path[300];
    snprintf(path, sizeof path, "%s%s", prefix, key);
    if (!cJSON_IsString(v))
        return ls_cfg_problem(pc, v, path, "expected a duration string such as \"15s\" or \"1m30s\"");
    if (!ls_go_duration_parse(v->valuestring, out))
        return ls_cfg_problem(pc, v, path, "invalid duration \"%s\": expected a duration such as \"15s\" or \"1m30s\"",
                              v->valuestring);
    return true;
}

static bool section(const parse_ctx *pc, const cJSON *root, const char *key, const cJSON **out)
{
    const cJSON *v = ls_json_member(root, key);
    *out = NULL;
    if (!v)
        return false;
    if (!cJSON_IsObject(v))
        return ls_cfg_problem(pc, v, key, "expected an object");
    *out = v;
    return true;
}

/* ---- defaults */

void ls_cfg_set_defaults(ls_config *cfg)
{
    cfg->parallelism = 16;
    cfg->percentage_of_nodes_to_score = 0;
    cfg->pod_initial_backoff_seconds = 1;
    cfg->pod_max_backoff_seconds = 10;
    cfg->enable_profiling = true;
    cfg->enable_contention_profiling = true;
    cfg->delay_cache_until_active = false;
    ls_leader_election_config *le = &cfg->leader_election;
    le->leader_elect = true;
    le->lease_duration_ns = 15000000000LL;
    le->renew_deadline_ns = 10000000000LL;
    le->retry_period_ns = 2000000000LL;
    le->resource_lock = ls_arena_strdup(&cfg->text, "leases");
    le->resource_name = ls_arena_strdup(&cfg->text, "kube-scheduler");
    le->resource_namespace = ls_arena_strdup(&cfg->text, "kube-system");
    ls_client_connection_config *cc = &cfg->client_connection;
    cc->kubeconfig = ls_arena_strdup(&cfg->text, "");
    cc->accept_content_types = ls_arena_strdup(&cfg->text, "");
    cc->content_type = ls_arena_strdup(&cfg->text, "application/vnd.kubernetes.protobuf");
    cc->qps = 50;
    cc->burst = 100;
    cfg->luasched.plugin_timeout_ms = 10000;
    cfg->luasched.instruction_budget = 200000000;
    cfg->luasched.memory_limit_bytes = LS_DEFAULT_LUA_MEMORY_LIMIT;
}

/* ---- leaderElection */

static void parse_leader_fields(ls_leader_election_config *le, const parse_ctx *pc, const cJSON *obj)
{
    static const char *const known[] = {"leaderElect", "leaseDuration", "renewDeadline", "retryPeriod",
                                        "resourceLock", "resourceName", "resourceNamespace", NULL};
    const char *p = "leaderElection.";
    ls_cfg_known_fields(pc, obj, p, known);
    ls_cfg_bool(pc, obj, "leaderElect", p, &le->leader_elect);
    read_duration(pc, obj, "leaseDuration", p, &le->lease_duration_ns);
    read_duration(pc, obj, "renewDeadline", p, &le->renew_deadline_ns);
    read_duration(pc, obj, "retryPeriod", p, &le->retry_period_ns);
    /* an empty string takes the default, as upstream's defaulting does */
    char *lock = NULL, *name = NULL, *ns = NULL;
    ls_cfg_string(pc, obj, "resourceLock", p, &lock);
    ls_cfg_string(pc, obj, "resourceName", p, &name);
    ls_cfg_string(pc, obj, "resourceNamespace", p, &ns);
    char **dst[] = {&le->resource_lock, &le->resource_name, &le->resource_namespace};
    char *src[] = {lock, name, ns};
    for (int i = 0; i < 3; i++)
        if (src[i] && *src[i])
            *dst[i] = src[i];
}

static void check_positive_duration(const parse_ctx *pc, const cJSON *obj, const char *key, int64_t ns)
{
    if (ns > 0)
        return;
    char path[64], text[64];
    snprintf(path, sizeof path, "leaderElection.%s", key);
    ls_go_duration_format(ns, text, sizeof text);
    ls_cfg_problem(pc, ls_cfg_at(obj, key), path, "Invalid value: %s: must be greater than zero", text);
}

/* component-base's ValidateLeaderElectionConfiguration, kube-scheduler's
 * resourceLock rule, and client-go's renewDeadline > retryPeriod x 1.2
 * (NewLeaderElector); all only when leaderElect. */
static void validate_leader_election(const ls_leader_election_config *le, const parse_ctx *pc, const cJSON *obj)
{
    if (!le->leader_elect)
        return;
    char a[64], b[64];
    check_positive_duration(pc, obj, "leaseDuration", le->lease_duration_ns);
    check_positive_duration(pc, obj, "renewDeadline", le->renew_deadline_ns);
    check_positive_duration(pc, obj, "retryPeriod", le->retry_period_ns);
    if (le->lease_duration_ns <= le->renew_deadline_ns) {
        ls_go_duration_format(le->lease_duration_ns, a, sizeof a);
        ls_cfg_problem(pc, ls_cfg_at(obj, "leaseDuration"), "leaderElection.leaseDuration",
                       "Invalid value: %s: must be greater than `RenewDeadline`", a);
    }
    int64_t jittered = (int64_t)(1.2 * (double)le->retry_period_ns);
    if (le->renew_deadline_ns <= jittered) {
        ls_go_duration_format(le->renew_deadline_ns, a, sizeof a);
        ls_go_duration_format(jittered, b, sizeof b);
        ls_cfg_problem(pc, ls_cfg_at(obj, "renewDeadline"), "leaderElection.renewDeadline",
                       "Invalid value: %s: must be greater than retryPeriod*JitterFactor (%s)", a, b);
    }
    if (strcmp(le->resource_lock, "leases") != 0)
        ls_cfg_problem(pc, ls_cfg_at(obj, "resourceLock"), "leaderElection.resourceLock",
                       "Invalid value: \"%s\": resourceLock value must be \"leases\"", le->resource_lock);
}

void ls_cfg_parse_leader_election(ls_config *cfg, const parse_ctx *pc, const cJSON *root)
{
    const cJSON *obj;
    section(pc, root, "leaderElection", &obj);
    if (obj)
        parse_leader_fields(&cfg->leader_election, pc, obj);
    validate_leader_election(&cfg->leader_election, pc, obj ? obj : ls_cfg_at(root, "leaderElection"));
}

/* ---- clientConnection */

void ls_cfg_parse_client_connection(ls_config *cfg, const parse_ctx *pc, const cJSON *root)
{
    static const char *const known[] = {"kubeconfig", "acceptContentTypes", "contentType", "qps", "burst", NULL};
    const char *p = "clientConnection.";
    const cJSON *obj;
    if (!section(pc, root, "clientConnection", &obj))
        return;
    ls_client_connection_config *cc = &cfg->client_connection;
    ls_cfg_known_fields(pc, obj, p, known);
    ls_cfg_string(pc, obj, "kubeconfig", p, &cc->kubeconfig);
    ls_cfg_string(pc, obj, "acceptContentTypes", p, &cc->accept_content_types);
    char *content_type = NULL;
    ls_cfg_string(pc, obj, "contentType", p, &content_type);
    if (content_type && *content_type)
        cc->content_type = content_type;
    const cJSON *qps = ls_json_member(obj, "qps");
    if (qps && !cJSON_IsNumber(qps))
        ls_cfg_problem(pc, qps, "clientConnection.qps", "expected a number");
    else if (qps && qps->valuedouble != 0)
        cc->qps = (double)(float)qps->valuedouble;
    int32_t burst = 0;
    ls_cfg_int32(pc, obj, "burst", p, &burst);
    if (burst < 0)
        ls_cfg_problem(pc, ls_cfg_at(obj, "burst"), "clientConnection.burst", "Invalid value: %d: must be non-negative",
                       burst);
    else if (burst > 0)
        cc->burst = burst;
}

/* ---- luasched */

/* "dir/of/the/config/" + entry, for a relative entry. */
static char *resolve_dir(const char *source, const char *entry)
{
    const char *slash = strrchr(source, '/');
    if (entry[0] == '/' || !slash)
        return ls_xstrdup(entry);
    size_t n = (size_t)(slash - source) + 1 + strlen(entry) + 1;
    char *out = ls_xmalloc(n);
    snprintf(out, n, "%.*s/%s", (int)(slash - source), source, entry);
    return out;
}

static void parse_plugin_path(ls_luasched_config *lc, const parse_ctx *pc, const cJSON *obj)
{
    const cJSON *list = ls_json_member(obj, "pluginPath");
    if (!list)
        return;
    if (!cJSON_IsArray(list)) {
        ls_cfg_problem(pc, list, "luasched.pluginPath", "expected a list of directories");
        return;
    }
    lc->plugin_path = ls_arena_alloc(pc->text, ((size_t)cJSON_GetArraySize(list) + 1) * sizeof *lc->plugin_path);
    int i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        char path[64];
        snprintf(path, sizeof path, "luasched.pluginPath[%d]", i);
        if (!cJSON_IsString(e))
            ls_cfg_problem(pc, e, path, "expected a directory name");
        else if (!e->valuestring[0])
            ls_cfg_problem(pc, e, path, "Invalid value: \"\": must not be empty");
        else
            lc->plugin_path[lc->n_plugin_path++] = ls_arena_strdup(pc->text, e->valuestring);
    }
    char *joined = NULL;
    for (uint32_t k = 0; k < lc->n_plugin_path; k++) {
        char *dir = resolve_dir(pc->source, lc->plugin_path[k]);
        size_t n = (joined ? strlen(joined) + 1 : 0) + strlen(dir) + 1;
        char *next = ls_xmalloc(n);
        snprintf(next, n, "%s%s%s", joined ? joined : "", joined ? ":" : "", dir);
        free(joined);
        free(dir);
        joined = next;
    }
    lc->plugin_dirs = ls_arena_strdup_opt(pc->text, joined);
    free(joined);
}

static void read_positive_at(const parse_ctx *pc, const cJSON *obj, const char *prefix, const char *key,
                             bool zero_ok, uint64_t *out)
{
    int64_t v = (int64_t)*out;
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!at || cJSON_IsNull(at) || !ls_cfg_int64(pc, obj, key, prefix, &v))
        return;
    char path[160];
    snprintf(path, sizeof path, "%s%s", prefix, key);
    if (v < 0 || (v == 0 && !zero_ok))
        ls_cfg_problem(pc, ls_cfg_at(obj, key), path, "Invalid value: %lld: must be %s", (long long)v,
                       zero_ok ? "non-negative" : "greater than zero");
    else
        *out = (uint64_t)v;
}

static void read_positive(const parse_ctx *pc, const cJSON *obj, const char *key, bool zero_ok, uint64_t *out)
{
    read_positive_at(pc, obj, "luasched.", key, zero_ok, out);
}

/* overrideBuiltins: the plugin names (strings) whose built-in a file on the
 * plugin path may replace in this profile. */
static void parse_override_builtins(const parse_ctx *pc, const cJSON *obj, const char *prefix, ls_profile *prof)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(obj, "overrideBuiltins");
    if (!list || cJSON_IsNull(list))
        return;
    char path[200];
    snprintf(path, sizeof path, "%soverrideBuiltins", prefix);
    if (!cJSON_IsArray(list)) {
        ls_cfg_problem(pc, list, path, "expected a list of plugin names, e.g. [NodeResourcesFit]");
        return;
    }
    int i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, list) {
        char at[220];
        snprintf(at, sizeof at, "%s[%d]", path, i++);
        if (!cJSON_IsString(item) || !item->valuestring[0]) {
            ls_cfg_problem(pc, item, at, "expected a plugin name (a string), e.g. NodeResourcesFit");
            continue;
        }
        if (prof->n_override_builtins == LS_MAX_OVERRIDE_BUILTINS) {
            ls_cfg_problem(pc, item, at, "at most %d plugins can be listed", LS_MAX_OVERRIDE_BUILTINS);
            return;
        }
        prof->override_builtins[prof->n_override_builtins++] = ls_intern_cstr(item->valuestring);
    }
}

void ls_cfg_parse_profile_luasched(const parse_ctx *pc, const cJSON *profile, const char *path, ls_profile *prof)
{
    static const char *const known[] = {"pluginTimeoutMilliseconds", "instructionBudget", "memoryLimitBytes",
                                        "overrideBuiltins", NULL};
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(profile, "luasched");
    if (!obj || cJSON_IsNull(obj))
        return;
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s.luasched.", path);
    if (!cJSON_IsObject(obj)) {
        prefix[strlen(prefix) - 1] = 0;
        ls_cfg_problem(pc, obj, prefix, "expected an object");
        return;
    }
    ls_cfg_known_fields(pc, obj, prefix, known);
    read_positive_at(pc, obj, prefix, "pluginTimeoutMilliseconds", false, &prof->plugin_timeout_ms);
    read_positive_at(pc, obj, prefix, "instructionBudget", false, &prof->instruction_budget);
    const cJSON *limit = cJSON_GetObjectItemCaseSensitive(obj, "memoryLimitBytes");
    if (limit && !cJSON_IsNull(limit)) {
        prof->memory_limit_set = true;
        read_positive_at(pc, obj, prefix, "memoryLimitBytes", true, &prof->memory_limit_bytes);
    }
    parse_override_builtins(pc, obj, prefix, prof);
}

void ls_cfg_parse_luasched(ls_config *cfg, const parse_ctx *pc, const cJSON *root)
{
    static const char *const known[] = {"pluginPath", "pluginTimeoutMilliseconds", "instructionBudget",
                                        "memoryLimitBytes", NULL};
    const cJSON *obj;
    if (!section(pc, root, "luasched", &obj))
        return;
    ls_luasched_config *lc = &cfg->luasched;
    lc->present = true;
    ls_cfg_known_fields(pc, obj, "luasched.", known);
    parse_plugin_path(lc, pc, obj);
    read_positive(pc, obj, "pluginTimeoutMilliseconds", false, &lc->plugin_timeout_ms);
    read_positive(pc, obj, "instructionBudget", false, &lc->instruction_budget);
    read_positive(pc, obj, "memoryLimitBytes", true, &lc->memory_limit_bytes);
}

/* ---- Go durations (time.ParseDuration, Duration.String) */

static int64_t unit_ns(const char *u, size_t n)
{
    static const struct {
        const char *name;
        int64_t ns;
    } units[] = {
        {"ns", 1}, {"us", 1000}, {"\xc2\xb5s", 1000}, {"\xce\xbcs", 1000}, {"ms", 1000000},
        {"s", 1000000000LL}, {"m", 60000000000LL}, {"h", 3600000000000LL},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strlen(units[i].name) == n && memcmp(units[i].name, u, n) == 0)
            return units[i].ns;
    return 0;
}

/* One "<number><unit>" term; advances *p. */
static bool duration_term(const char **p, uint64_t *ns)
{
    const char *s = *p;
    uint64_t whole = 0, frac = 0, scale = 1;
    bool digits = false;
    for (; isdigit((unsigned char)*s); s++, digits = true) {
        if (whole > (UINT64_C(1) << 63) / 10)
            return false;
        whole = whole * 10 + (uint64_t)(*s - '0');
    }
    if (*s == '.')
        for (s++; isdigit((unsigned char)*s); s++, digits = true)
            if (scale < UINT64_C(1000000000000000000)) {
                frac = frac * 10 + (uint64_t)(*s - '0');
                scale *= 10;
            }
    const char *u = s;
    while (*s && !isdigit((unsigned char)*s) && *s != '.')
        s++;
    int64_t unit = unit_ns(u, (size_t)(s - u));
    if (!digits || !unit || whole > (UINT64_C(1) << 63) / (uint64_t)unit)
        return false;
    *ns = whole * (uint64_t)unit + (uint64_t)((double)frac * ((double)unit / (double)scale));
    *p = s;
    return true;
}

bool ls_go_duration_parse(const char *s, int64_t *ns)
{
    bool neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (strcmp(s, "0") == 0) {
        *ns = 0;
        return true;
    }
    if (!*s)
        return false;
    uint64_t total = 0;
    while (*s) {
        uint64_t term;
        if (!duration_term(&s, &term) || term > (UINT64_C(1) << 63) - 1 - total)
            return false;
        total += term;
    }
    *ns = neg ? -(int64_t)total : (int64_t)total;
    return true;
}

/* Writes v / 10^prec's fraction (".123", trailing zeros dropped) in front of
 * buf[w]; returns the new start and v / 10^prec. */
static size_t fmt_frac(char *buf, size_t w, uint64_t *v, int prec)
{
    bool print = false;
    for (int i = 0; i < prec; i++) {
        int digit = (int)(*v % 10);
        print = print || digit != 0;
        if (print)
            buf[--w] = (char)('0' + digit);
        *v /= 10;
    }
    if (print)
        buf[--w] = '.';
    return w;
}

static size_t fmt_int(char *buf, size_t w, uint64_t v)
{
    if (v == 0) {
        buf[--w] = '0';
        return w;
    }
    for (; v > 0; v /= 10)
        buf[--w] = (char)('0' + v % 10);
    return w;
}

void ls_go_duration_format(int64_t ns, char *out, size_t len)
{
    char buf[40];
    size_t w = sizeof buf;
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    buf[--w] = '\0';
    buf[--w] = 's';
    if (u == 0) {
        snprintf(out, len, "0s");
        return;
    }
    if (u < 1000000000) {
        int prec = u < 1000 ? 0 : u < 1000000 ? 3 : 6;
        if (prec == 0)
            buf[--w] = 'n';
        else if (prec == 3) {
            buf[--w] = '\xb5';
            buf[--w] = '\xc2';
        } else {
            buf[--w] = 'm';
        }
        w = fmt_frac(buf, w, &u, prec);
        w = fmt_int(buf, w, u);
    } else {
        w = fmt_frac(buf, w, &u, 9);
        w = fmt_int(buf, w, u % 60);
        u /= 60;
        if (u > 0) {
            buf[--w] = 'm';
            w = fmt_int(buf, w, u % 60);
            u /= 60;
            if (u > 0) {
                buf[--w] = 'h';
                w = fmt_int(buf, w, u);
            }
        }
    }
    if (ns < 0)
        buf[--w] = '-';
    snprintf(out, len, "%s", buf + w);
}
