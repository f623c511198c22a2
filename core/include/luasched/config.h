/*
 * config.h: KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1):
 * parse, default, and expand each profile's plugins (multiPoint included)
 * into per-extension-point lists in run order.
 */
#ifndef LUASCHED_CONFIG_H
#define LUASCHED_CONFIG_H

#include "luasched/framework.h"

/* leaderElection (component-base LeaderElectionConfiguration, as kube-scheduler
 * defaults it). Durations are Go durations ("15s", "1m30s"), kept in ns. */
typedef struct ls_leader_election_config {
    bool leader_elect;                                        /* true */
    int64_t lease_duration_ns, renew_deadline_ns, retry_period_ns;   /* 15s, 10s, 2s */
    char *resource_lock;                                      /* "leases" */
    char *resource_name, *resource_namespace;                 /* "kube-scheduler", "kube-system" */
} ls_leader_election_config;

/* clientConnection (component-base ClientConnectionConfiguration). */
typedef struct ls_client_connection_config {
    char *kubeconfig;                  /* "" */
    char *accept_content_types;        /* "" */
    char *content_type;                /* "application/vnd.kubernetes.protobuf" */
    double qps;                        /* 50 (a float32 upstream; 0 means the default) */
    int32_t burst;                     /* 100 (0 means the default) */
} ls_client_connection_config;

/*
 * luasched's own settings live under one top-level key that upstream's strict
 * decoder would refuse, so an upstream file never has it and loads unchanged:
 *
 *   luasched:
 *     pluginPath: [plugins, /opt/luasched/plugins]
 *     pluginTimeoutMilliseconds: 10000
 *     instructionBudget: 200000000
 *     memoryLimitBytes: 0
 *
 * pluginPath: directories searched for plugins before the built-in ones, in
 *   order; relative entries are relative to the config file's directory. The
 *   --plugin-path flag, when given, replaces it.
 * pluginTimeoutMilliseconds (> 0): wall-clock limit of one extension point
 *   call for one pod; --plugin-timeout, when given, replaces it.
 * instructionBudget (> 0): interpreted Lua instructions per call.
 * memoryLimitBytes (>= 0): limit of each profile's Lua state (every profile
 *   has its own; a profile's `luasched: {memoryLimitBytes}` replaces this
 *   value for its state); 0 is unlimited.
 *   Default LS_DEFAULT_LUA_MEMORY_LIMIT, 1 GiB: about ten times what the
 *   bundled plugins hold on the largest bench workload (5000 nodes, their
 *   per-node caches included), and small enough that a plugin allocating
 *   without bound fails within seconds instead of exhausting the host.
 */
#define LS_DEFAULT_LUA_MEMORY_LIMIT 1073741824ull
typedef struct ls_luasched_config {
    bool present;                 /* the file has a luasched section (written back only then) */
    uint32_t n_plugin_path;
    char **plugin_path;           /* as written */
    char *plugin_dirs;            /* ':'-joined, relative entries resolved; NULL when none */
    uint64_t plugin_timeout_ms;   /* 10000 */
    uint64_t instruction_budget;  /* 200000000 */
    uint64_t memory_limit_bytes;  /* LS_DEFAULT_LUA_MEMORY_LIMIT; 0: unlimited */
} ls_luasched_config;

/* One entry of `extenders:` (upstream's Extender, kubescheduler.config.k8s.io/v1).
 * Verbs are NULL when not given (that verb is not supported). */
typedef struct ls_extender_managed_resource {
    char *name;
    bool ignored_by_scheduler;
} ls_extender_managed_resource;

typedef struct ls_extender_tls_config {
    bool insecure;
    char *server_name, *cert_file, *key_file, *ca_file;   /* NULL when not given */
    char *cert_data, *key_data, *ca_data;                 /* decoded bytes ([]byte, base64 in the file); NULL when not given */
    size_t cert_len, key_len, ca_len;
} ls_extender_tls_config;

typedef struct ls_extender_config {
    char *url_prefix;
    char *filter_verb, *preempt_verb, *prioritize_verb, *bind_verb;
    int64_t weight;
    bool enable_https;
    bool has_tls;                     /* tlsConfig was given */
    ls_extender_tls_config tls;
    int64_t http_timeout_ns;          /* 0 as written when absent; 5 s at run time (DefaultExtenderTimeout) */
    bool node_cache_capable;
    uint32_t n_managed;
    ls_extender_managed_resource *managed;
    bool ignorable;
} ls_extender_config;

typedef struct ls_config {
    char *source;                        /* the file, or "<defaults>" */
    int32_t parallelism;                 /* 16 */
    int32_t percentage_of_nodes_to_score;   /* 0: adaptive */
    int64_t pod_initial_backoff_seconds, pod_max_backoff_seconds;   /* 1, 10 */
    ls_leader_election_config leader_election;
    ls_client_connection_config client_connection;
    bool enable_profiling;               /* true */
    bool enable_contention_profiling;    /* the value of enableProfiling */
    bool delay_cache_until_active;       /* false */
    /* Deprecated (gone from v1's types), accepted and kept; NULL when absent. */
    char *healthz_bind_address, *metrics_bind_address;
    ls_luasched_config luasched;
    uint32_t n_profiles;                 /* 0 only when the file could not be read at all */
    ls_profile *profiles;
    /* Per profile, the plugin sets as written, before expansion. */
    struct raw_profile *raw_profiles;
    /* Every problem found by ls_config_load and ls_config_expand_all (char *,
     * each naming the file, and the line and field where there is one), in the
     * order found. */
    ls_vec problems;
    /* Set by the caller once the plugins are built: an array with, per
     * profile, an object plugin name -> args completed with the plugin's
     * declared defaults. NULL: ls_config_write writes the args as given. */
    struct cJSON *completed_args;
    /* extenders: in file order (the runtime puts ignorable ones last). */
    uint32_t n_extenders;
    ls_extender_config *extenders;
    /* Owns every string of the configuration (source, names, addresses,
     * paths, the extenders and their TLS data): freed with it. A caller that
     * sets one copies it in with ls_arena_strdup(&cfg->text, ...). */
    ls_arena text;
} ls_config;

/* Tells whether a plugin defines the hook of an extension point (the Lua
 * runtime answers); multiPoint expansion needs it. */
typedef bool (*ls_plugin_points_fn)(void *ud, const char *name, uint32_t *points, ls_error *err);

/* Loads a config file (NULL: the built-in default), applies upstream's
 * defaults and validation. Every problem goes to cfg->problems, in upstream's
 * wording where upstream has one ("Invalid value", "Required value",
 * "Duplicate value", "Unsupported value"), each as "file:line: field.path:
 * what"; *err gets the first. A file that cannot be read as one
 * KubeSchedulerConfiguration document at all (unreadable, bad YAML, wrong
 * apiVersion or kind) gives that one problem and n_profiles 0. Call
 * ls_config_free in every case. */
bool ls_config_load(ls_config *cfg, const char *path, ls_error *err);
/* Expands multiPoint into each extension point; fills cfg->profiles[i].plugins. */
bool ls_config_expand(ls_config *cfg, ls_plugin_points_fn points, void *ud, ls_error *err);
/* The same, but going on past problems (a plugin that cannot be loaded, one at
 * an extension point it does not implement, one registered twice, not exactly
 * one QueueSort, no Bind): each is appended to cfg->problems as "file: profile
 * NAME: what" and the entry at fault left out. False if there was any. */
bool ls_config_expand_all(ls_config *cfg, ls_plugin_points_fn points, void *ud);
/* Writes the completed configuration (--write-config-to) in upstream's shape:
 * apiVersion and kind, every top-level default filled in, each profile with
 * its multiPoint merged with the default plugins (mergePluginSet), the other
 * extension points as written, and a pluginConfig entry for every plugin of
 * the profile (cfg->completed_args when set). YAML, or JSON when the path ends
 * in ".json"; "-" is standard output (YAML). */
bool ls_config_write(const ls_config *cfg, const char *path, ls_error *err);
/* The text ls_config_write writes; the caller frees it. */
char *ls_config_format(const ls_config *cfg, bool json, ls_error *err);
void ls_config_free(ls_config *cfg);
/* The plugins with upstream's typed args (v1's <Name>Args kinds): their
 * pluginConfig entry is written completed whenever they are enabled at some
 * point, even where no extension point runs them. NULL-terminated. */
extern const char *const LS_CONFIG_TYPED_ARGS[];
/* Whether upstream's default plugin `name` is in the built-in default profile. */
bool ls_config_default_enabled(const char *name);
/* Plugins the API server cannot serve (config_available.c): expansion leaves
 * such a plugin out of the default multiPoint set, as upstream does with a
 * plugin whose feature gate is off, and a profile enabling it explicitly is a
 * problem naming the plugin and `api`, the group version it needs.
 * Process-wide, set before the configuration is expanded. */
void ls_config_set_unavailable(const char *plugin, const char *api);
void ls_config_clear_unavailable(void);
const char *ls_config_unavailable_api(ls_str plugin);   /* NULL: available */
int32_t ls_config_profile_index(const ls_config *cfg, ls_str scheduler_name);  /* -1 if none */

#endif
