/*
 * framework.h: statuses, the per-pod cycle record shared with the Lua dispatch
 * loops, profiles and their extension points.
 *
 * C enters Lua once per extension point per pod; the loops over nodes run in
 * lua/luasched/dispatch.lua and write their results into the ls_cycle arrays.
 */
#ifndef LUASCHED_FRAMEWORK_H
#define LUASCHED_FRAMEWORK_H

#include "luasched/cache.h"
#include "luasched/extension_points.h"
#include "luasched/objects.h"

/* ffi:begin */
enum {
    LS_SUCCESS = 0, LS_ERROR = 1, LS_UNSCHEDULABLE = 2, LS_UNRESOLVABLE = 3,
    LS_WAIT = 4, LS_SKIP = 5, LS_PENDING = 6
};
enum { LS_MAX_NODE_SCORE = 100, LS_MIN_NODE_SCORE = 0, LS_MAX_WAITING_PLUGINS = 8 };

/* A status is registered once (code and reasons) and then passed by id, so the
 * hot loops move integers, never strings. Reasons are separated by '\n'. */
uint32_t ls_status_register(uint8_t code, const char *reasons, size_t len);
const char *ls_status_message(uint32_t id);   /* reasons joined with ", " */
typedef struct ls_status_info {
    uint8_t code;
    uint32_t n_reasons;
    const char **reasons;
    const char *message;      /* reasons joined with ", " */
} ls_status_info;
const ls_status_info *ls_status_get(uint32_t id);
/* How an Error status came about: the plugin frames of the traceback of the
 * error a plugin raised (innermost first, one "file:line: in function 'f'"
 * a line), set by the runtime; NULL when none was kept. */
void ls_status_set_detail(uint32_t id, const char *text);
const char *ls_status_detail(uint32_t id);

typedef struct ls_node_status {
    uint32_t status;        /* registered status id; 0 = Success */
    int16_t plugin;         /* index in the profile's filter list, -1 for none */
    uint8_t code;
} ls_node_status;

typedef struct ls_cycle {
    void *owner;                          /* the scheduler running the cycle (NULL in the test kit) */
    const ls_pod *pod;
    const ls_snapshot *snapshot;
    const ls_object_store *objects;       /* Namespaces, Services, PDBs, custom resources, ... */
    uint32_t profile;
    uint32_t num_all_nodes;
    const ls_node_info *const *all_nodes;

    /* Filter: examine candidates[(start + i) % num_candidates] until
     * num_to_find are feasible or all were examined. */
    uint32_t num_candidates;
    const ls_node_info *const *candidates;
    uint32_t start;
    uint32_t num_to_find;
    uint32_t num_processed;
    uint32_t num_feasible;
    const ls_node_info **feasible;
    ls_node_status *node_status;          /* indexed by ls_node_info.index */

    /* Explain: per node and filter plugin, status id + 1 (1 = passed, 0 = not run). */
    uint8_t trace;
    uint32_t num_filter_plugins;
    uint32_t *filter_trace;

    /* PreFilter result: a node-name restriction (intersection over plugins). */
    uint8_t prefilter_restricts;
    uint32_t num_prefilter_nodes;
    ls_str *prefilter_nodes;
    uint32_t prefilter_cap;
    uint32_t prefilter_absent_status;     /* status of nodes outside the restriction */
    uint32_t prefilter_restricting;       /* bit k: PreFilter plugin k gave node names (rejects a
                                           * pod no node fits, as upstream's unscheduledPlugins) */

    /* Score: scores[p * num_feasible + i]; raw_scores keeps pre-normalize values when tracing
     * or keep_raw_scores. */
    uint32_t num_score_plugins;
    int64_t *scores;
    int64_t *raw_scores;
    uint8_t *score_skipped;

    /* Results of single-status extension points. */
    uint32_t status;
    int16_t status_plugin;
    uint8_t status_code;
    ls_str nominated_node;                /* PostFilter result */
    ls_str selected_node;
    int64_t permit_timeout_ms;
    uint32_t num_waiting_plugins;         /* Permit plugins that returned Wait, with their timeouts */
    ls_str waiting_plugins[8];
    int64_t waiting_timeout_ms[8];
    int16_t running_plugin;               /* index in the running extension point's list, for error reports */
    uint8_t handle_ep;                    /* 1 + LS_EP_* of the plugins a handle runs inside this call (preemption's
                                           * dry runs: Filter, AddPod, RemovePod), whose list running_plugin then
                                           * indexes; 0 when none */
    uint8_t sample_plugins;               /* time every plugin call of this cycle (metrics; ~10% of cycles) */
    uint8_t keep_raw_scores;              /* raw_scores kept without tracing (OpportunisticBatching) */
    uint8_t writer_not_builtin;           /* set by ls.* around an API write: a plugin that is not built-in
                                           * writes, and its write is its pod's own news (own_writes.h) */
    uint8_t state_lost;                   /* a cut-off rebuilt the Lua state during this cycle: its CycleState is
                                           * gone, its later points are not run (set by the runtime's recovery,
                                           * cleared when dispatch.lua starts a cycle's state) */
} ls_cycle;

/* Sampled plugin durations (scheduler_plugin_execution_duration_seconds): the
 * calls of plugin `index` of extension point or hook `ep` (LS_EP_*, e.g.
 * LS_EP_NORMALIZE_SCORE) that returned `code`: how many, their total seconds, and
 * how many fell in each of LS_PLUGIN_DURATION_BUCKETS + 1 buckets
 * (upper bounds 1e-5 * 1.5^i, then +Inf; not cumulative). */
enum { LS_PLUGIN_DURATION_BUCKETS = 20 };
void ls_cycle_plugin_durations(const ls_cycle *cycle, int ep, uint32_t index, uint8_t code, uint64_t count,
                               double seconds, const uint64_t *buckets);

/* Called by DefaultBinder (and any bind plugin) through the FFI: hands the
 * binding to the cluster source (the embedded cluster or the API server). */
int ls_cycle_bind(const ls_cycle *cycle, ls_str node_name, char *errbuf, size_t errlen);
/* Called by a plugin's PreBind through the FFI: a JSON merge patch on the
 * status of `obj` (a ResourceClaim), through the cluster source. 0, or -1
 * with errbuf filled. */
int ls_cycle_patch_status(const ls_cycle *cycle, const ls_object *obj, const char *merge_patch, char *errbuf,
                          size_t errlen);
/* Waiting pods (Permit) of profile `profile` (its schedulerName): a plugin
 * of that profile allows or rejects a pod it told to wait; the pods of other
 * profiles are neither counted, listed, allowed nor rejected. */
uint32_t ls_cycle_num_waiting(const ls_cycle *cycle, ls_str profile);
const ls_pod *ls_cycle_waiting_pod(const ls_cycle *cycle, ls_str profile, uint32_t i);
bool ls_cycle_allow_waiting(const ls_cycle *cycle, ls_str profile, uint32_t pod_id, ls_str plugin);
bool ls_cycle_reject_waiting(const ls_cycle *cycle, ls_str profile, uint32_t pod_id, ls_str plugin,
                             const char *msg);
/* Nominated pods (upstream's PodNominator): pods nominated to a node count
 * in Filter as if they ran there (when their priority is not lower). */
uint32_t ls_cycle_nominated_total(const ls_cycle *cycle);
uint32_t ls_cycle_nominated_count(const ls_cycle *cycle, ls_str node);
/* The node of every nominated pod (a node once per pod nominated to it), into
 * out[0..cap); returns how many there are (ls_cycle_nominated_total). */
uint32_t ls_cycle_nominated_nodes(const ls_cycle *cycle, ls_str *out, uint32_t cap);
const ls_pod *ls_cycle_nominated_pod(const ls_cycle *cycle, ls_str node, uint32_t i);
ls_str ls_cycle_nomination_of(const ls_cycle *cycle, const ls_pod *pod);
void ls_cycle_clear_nomination(const ls_cycle *cycle, const ls_pod *pod);
/* Preemption: evicts a victim to make room on node for the cycle's pod (the
 * DisruptionTarget condition, then the delete), asynchronously: the deletion
 * is issued after the scheduling cycle (SchedulerAsyncPreemption). 0, or -1
 * with errbuf filled. */
int ls_cycle_preempt(const ls_cycle *cycle, const ls_pod *victim, ls_str node, char *errbuf, size_t errlen);
/* True while the pod's victims' deletions are being issued. */
bool ls_cycle_preempting(const ls_cycle *cycle, const ls_pod *pod);
/* Activate: moves a pending pod of the caller's profile (`profile`: its
 * schedulerName) straight to activeQ (upstream's pods-to-activate /
 * ForceActivate) once the running cycle's hook returned. False if it is not
 * waiting in a queue (unschedulable or backoff) or is another profile's. */
bool ls_cycle_activate(const ls_cycle *cycle, ls_str profile, const ls_pod *pod);
/* The pod of the caller's profile the scheduling queue holds under a pod id
 * (active, backoff, unschedulable, gated or in flight), or NULL: a plugin
 * that noted a pending pod's id at PreEnqueue checks it is still pending
 * (compare its name: ids are reused once a pod is gone). Another profile's
 * pending pods are not its to read. */
const ls_pod *ls_cycle_queued_pod(const ls_cycle *cycle, ls_str profile, uint32_t pod_id);
/* The scheduler's seeded random generator (preemption's candidate offset). */
uint64_t ls_cycle_random(const ls_cycle *cycle);
/* The scheduler's clock in milliseconds (virtual in a simulation). */
uint64_t ls_cycle_now_ms(const ls_cycle *cycle);
/* An API write of a PreBind plugin (VolumeBinding's claim and volume updates):
 * a JSON merge patch on one object; ns is 0 for cluster-scoped kinds. The
 * change comes back as the object's update event. 0, or -1 with errbuf filled. */
int ls_cycle_patch_object(const ls_cycle *cycle, ls_str kind, ls_str ns, ls_str name, const char *patch,
                          char *errbuf, size_t errlen);
/* An API create of a PreBind plugin (DynamicResources' claim for a pod's
 * extended resources): the object's JSON (metadata.generateName allowed); its
 * name in name_out. 0, or -1 with errbuf filled. */
int ls_cycle_create_object(const ls_cycle *cycle, const char *json, char *name_out, size_t name_cap, char *errbuf,
                           size_t errlen);
/* Makes room for n PreFilter node names in cycle->prefilter_nodes. */
void ls_cycle_prefilter_reserve(ls_cycle *cycle, uint32_t n);
/* Preemption's extender step (upstream's callExtenders): how many HTTP
 * extenders with a preemptVerb are interested in the cycle's pod (0: skip
 * the step); the candidates handed over (a node and its PDB violations, then
 * its victims); the call, which returns how many candidates are left or -1
 * with errbuf filled; and the candidates read back by index. */
uint32_t ls_cycle_preempt_extenders(const ls_cycle *cycle);
void ls_cycle_extender_candidates_reset(const ls_cycle *cycle);
void ls_cycle_extender_candidate_add(const ls_cycle *cycle, ls_str node, int64_t pdb_violations);
void ls_cycle_extender_victim_add(const ls_cycle *cycle, const ls_pod *victim);
int ls_cycle_extenders_process_preemption(const ls_cycle *cycle, char *errbuf, size_t errlen);
ls_str ls_cycle_extender_candidate(const ls_cycle *cycle, uint32_t i, int64_t *pdb_violations, uint32_t *n_victims);
const ls_pod *ls_cycle_extender_victim(const ls_cycle *cycle, uint32_t i, uint32_t k);

/* What the runtime is loading or running outside a cycle (a plugin's file,
 * init, events, hints), noted by Lua so that a call the watchdog cuts off can
 * still be attributed. */
void ls_lua_note(const char *what);
/* The loader names the plugin whose file (chunk name "@path") it loads; a
 * module by the plugin that requires it. A cut-off or a fault is counted
 * against the plugin whose file holds the innermost frame of plugin code,
 * named when that is not the plugin whose hook was called. */
void ls_lua_plugin_source(const char *source, const char *plugin);
/* A plugin that is not built-in ended its call with its state holding
 * `held` bytes, past its share of the state's memory limit (the last eighth
 * is kept for the built-in plugins: lua/luasched/profiles.lua checks): the
 * running call is cut off as one past the limit and the state rebuilt. */
void ls_lua_memory_share_exceeded(double held);
/* The generation of the plugin call running (framework/view_generation.c):
 * the views a call hands out carry it and are refused once it changed. */
const uint32_t *ls_view_generation(void);
/* What a status keeps of the text it is registered with (status.c). */
enum { LS_STATUS_MAX_REASONS = 64, LS_STATUS_MAX_TEXT = 8192 };
/* Whether the --feature-gates gate of this name is on (v1.37's defaults;
 * false for a name that is not a gate). luasched/feature_gates.h. */
bool ls_feature_enabled_name(const char *name);
/* The cycle's rules C applies between the points Lua runs (cycle_rules.c),
 * shared by the scheduler and the test kit (lua/luasched/testing.lua). */
typedef struct ls_plugin_ref {
    ls_str name;
    int32_t weight;       /* Score only; 0 in the config means 1 */
} ls_plugin_ref;
/* The next number of a splitmix64 sequence (the scheduler's seeded ties). */
uint64_t ls_random_next(uint64_t *state);
/* Filter's candidates: every node, or those PreFilter's node names keep, in
 * snapshot order (into buf, num_all_nodes long); sets candidates and
 * num_candidates and returns how many. */
uint32_t ls_cycle_select_candidates(ls_cycle *cycle, const ls_node_info **buf);
/* Before Filter: the candidates (above), how many feasible nodes to find
 * (percentageOfNodesToScore, upstream's numFeasibleNodesToFind), where the
 * round-robin starts, counts and the trace cleared. */
void ls_cycle_prepare_filter(ls_cycle *cycle, const ls_node_info **buf, int32_t percentage, bool scoring,
                             uint32_t next_start_index);
/* After Filter: the next cycle's start index (advanced by the nodes examined). */
uint32_t ls_cycle_advance_start(const ls_cycle *cycle, uint32_t next_start_index);
/* Whether PreScore and Score run: not when one node is feasible (upstream's
 * schedulePod takes it at once). */
bool ls_cycle_wants_scores(const ls_cycle *cycle);
/* The totals over the feasible nodes: each Score plugin's row (skipped ones
 * left out) times its weight; 1 per node when nothing scores. False, with an
 * Error status in the cycle, when a score is outside [0, 100]. */
bool ls_cycle_total_scores(ls_cycle *cycle, const ls_plugin_ref *refs, uint32_t num_plugins, bool has_extenders,
                           int64_t *totals);
/* The feasible node with the best total, ties broken at random (reservoir
 * sampling over `rng`). */
const ls_node_info *ls_cycle_select_host(const ls_cycle *cycle, const int64_t *totals, uint64_t *rng);
/* upstream's FitError messages (fit_error.c; free with ls_text_free): PreFilter
 * rejected the pod, "0/N nodes are available: <msg>."; no node passed Filter,
 * the reasons counted over the nodes, sorted as strings. */
char *ls_fit_error_prefilter(const ls_cycle *c, const char *prefilter_msg);
char *ls_fit_error_filter(const ls_cycle *c);
/* The plugin a misspelt name most likely meant, among the *.lua files of the
 * ':'-separated plugin directories (names made from the files' stems:
 * prefer_labeled.lua is PreferLabeled), into out; false when none is close
 * (ls_did_you_mean's rule). */
bool ls_plugin_name_suggestion(const char *name, const char *dirs, char *out, size_t cap);
/* A *.lua file of those directories, other than `want` (the file the loader
 * looks for), whose stem stands for plugin `name` in another spelling
 * (prefer-gold.lua, PreferGold.lua for PreferGold): "DIR/FILE" into out;
 * false when there is none. */
bool ls_plugin_file_misnamed(const char *name, const char *dirs, const char *want, char *out, size_t cap);
/* numFeasibleNodesToFind from upstream (schedule_one.go). */
uint32_t ls_num_feasible_nodes_to_find(int32_t percentage, uint32_t num_all_nodes, bool has_scoring);

/* ffi:end */

void ls_status_reset(void);    /* frees the registry: only at process exit / in tests */
const char *ls_code_name(uint8_t code);
/* ls_status_detail of the Error status with this message (an attempt's). */
const char *ls_status_error_detail(const char *message);
bool ls_code_is_rejected(uint8_t code);   /* Unschedulable, UnschedulableAndUnresolvable, Pending */

enum { LS_MAX_OVERRIDE_BUILTINS = 32 };

typedef struct ls_profile {
    ls_str scheduler_name;
    int32_t percentage_of_nodes_to_score;   /* -1 = unset, use the global value */
    ls_vec plugins[LS_EP_COUNT];            /* ls_plugin_ref, expanded, in run order */
    struct cJSON *plugin_args;              /* object: plugin name -> args (owned) */
    /* object: plugin name -> where its args are written (owned; NULL for the
     * built-in default): {source, line, path, lines: {"a.b": line}}, for the
     * args check's messages. */
    struct cJSON *plugin_args_at;
    /* The profile's own `luasched: {pluginTimeoutMilliseconds, instructionBudget,
     * memoryLimitBytes}` (0 / unset: the configuration's luasched section).
     * The memory limit is that of the profile's own Lua state (0: unlimited). */
    uint64_t plugin_timeout_ms, instruction_budget;
    uint64_t memory_limit_bytes;
    bool memory_limit_set;
    /* `luasched: {overrideBuiltins: [Name, ...]}`: the built-in plugins a file
     * on the plugin path may replace in this profile (any other file named as
     * a built-in is an error naming both files). */
    uint32_t n_override_builtins;
    ls_str override_builtins[LS_MAX_OVERRIDE_BUILTINS];
} ls_profile;

/* For a configured point (0 <= ep < LS_EP_COUNT), "?" otherwise; every row
 * of the table through ls_ext_point_info_of (extension_points.h). */
const char *ls_ext_point_name(int ep);        /* "PreFilter", "Filter", ... */
const char *ls_ext_point_hook(int ep);        /* "pre_filter", "filter", ... */
int ls_ext_point_from_config_key(const char *key);  /* "preFilter" -> LS_EP_PRE_FILTER, -1 */

#endif
