/*
 * extension_points.h: the one table of the extension points and of the other
 * hooks a plugin defines. C reads it through LS_EP_* and ls_ext_point_info_of
 * (config keys, metrics labels, the dispatch functions it calls, the plugin
 * list each call runs); Lua reads the same rows at load through the FFI
 * (lua/luasched/points.lua). Adding an extension point is one row here (its
 * codes and chain flags drive dispatch.lua's one runner, which serves it under
 * the row's hook name) plus the call in the scheduling cycle.
 *
 * core/gen_cdefs.lua expands the function-like macros of the public headers in
 * the ffi blocks, so the enum below is the same text for C and for LuaJIT.
 */
#ifndef LUASCHED_EXTENSION_POINTS_H
#define LUASCHED_EXTENSION_POINTS_H

#include <stdint.h>

/*
 * The hooks a plugin defines, documented for plugin authors (core/gen_docs.lua
 * makes docs/plugins/api.md and the LuaLS annotations from these blocks, and
 * fails when a hook of the tables below has none). Every hook is a method
 * (`function P:filter(state, pod, node)`) except validate; any hook may raise:
 * the attempt then ends in an Error status naming the plugin, its file and line
 * ("running Filter plugin \"X\": x.lua:12: ..."), and the pod backs off.
 */

/* @hook pre_enqueue(pod) -> ls.Status?
 * @point PreEnqueue
 * Before a pod enters the active queue (on arrival and on every update of a
 * pending pod): a gate. Runs outside a scheduling cycle (no state, no snapshot).
 * @param pod ls.Pod the pending pod
 * @return nil or a Success status: the pod may be scheduled (the next plugin runs).
 * @return ls.unschedulable(...), ls.unresolvable(...), ls.pending(...): the pod is gated
 *   ("gated: <message>" in simulate) until an event this plugin registered in P.events
 *   (whose hint says Queue) moves it; nothing is written to the pod (upstream).
 * @return anything else: an Error ("pre_enqueue returned a string, expected a status or nil").
 */
/* @hook sort_key(pod) -> number
 * @point QueueSort
 * The queue's order (one QueueSort plugin per profile): a number, higher pops
 * first; ties go to the earlier creationTimestamp, then file order.
 * @param pod ls.Pod
 * @return a finite number: the pod's key.
 * @return anything else, or an error: 0.
 */
/* @hook less(a, b) -> boolean
 * @point QueueSort
 * The queue's order when the QueueSort plugin defines less and no sort_key
 * (upstream's Less): whether pod a pops before pod b.
 * @param a ls.Pod
 * @param b ls.Pod
 * @return true: a first.
 * @return anything else, or an error: b not after a (false).
 */
/* @hook pre_filter(state, pod) -> ls.Status?, string[]?
 * @point PreFilter
 * Once per scheduling cycle, before Filter: compute what filter reads and put
 * it in `state`, or restrict the nodes to look at.
 * @param state ls.CycleState this cycle's state (a fresh table)
 * @param pod ls.Pod the pod being scheduled
 * @return nil or Success: go on; with a list of node names (strings or ids) as the second value,
 *   only those nodes are filtered (lists of several plugins are intersected; an empty
 *   intersection: UnschedulableAndUnresolvable "node(s) didn't satisfy plugin(s) [A B] simultaneously").
 * @return ls.skip: this plugin's filter is not run for this pod.
 * @return ls.unresolvable(...): the attempt fails at once (no later PreFilter plugin runs); no preemption.
 * @return ls.unschedulable(...), ls.pending(...): the attempt fails after the remaining PreFilter plugins
 *   (the first rejection is kept); PostFilter (preemption) runs.
 * @return ls.error(msg), a raise, another status or value: Error "running PreFilter plugin "X": msg".
 */
/* @hook add_pod(state, pod, other, node)
 * @point PreFilter (extension)
 * PreFilterExtensions.AddPod: preemption's dry runs and nominated pods add
 * `other` to a copy of `node`; update what pre_filter put in `state` (a clone)
 * so filter sees it. Without the hook the state is used as is.
 * @param state ls.CycleState a clone of the cycle's state
 * @param pod ls.Pod the pod being scheduled
 * @param other ls.Pod the pod added
 * @param node ls.NodeInfo the node copy it is added to
 * @return ignored: an error fails the attempt as a PreFilter error.
 */
/* @hook remove_pod(state, pod, other, node)
 * @point PreFilter (extension)
 * PreFilterExtensions.RemovePod: as add_pod, for a pod removed (a preemption
 * victim) from a copy of `node`.
 * @param state ls.CycleState a clone of the cycle's state
 * @param pod ls.Pod the pod being scheduled
 * @param other ls.Pod the pod removed
 * @param node ls.NodeInfo the node copy
 * @return ignored: an error fails the attempt as a PreFilter error.
 */
/* @hook filter(state, pod, node) -> ls.Status?
 * @point Filter
 * Once per candidate node (every node, or a sample: percentageOfNodesToScore),
 * in the hot loop: allocate nothing here (return statuses built in init).
 * @param state ls.CycleState
 * @param pod ls.Pod
 * @param node ls.NodeInfo the node with the pods on it (node.node is the Node)
 * @return nil or Success: the node passes this plugin (the next plugin runs on it).
 * @return ls.unschedulable(...), ls.pending(...): the node is rejected; its reasons are counted in
 *   "0/N nodes are available: ..."; preemption may free it.
 * @return ls.unresolvable(...): the node is rejected and preemption will not try it.
 * @return another status (Error, Skip, Wait) or value, or a raise: the attempt ends in an Error
 *   ("running "X" filter plugin: ...").
 */
/* @hook post_filter(state, pod) -> ls.Status?, string?
 * @point PostFilter
 * When no node passed Filter (DefaultPreemption's point): try to make room.
 * self.handle gives the framework (preempt, nominated pods, state clones).
 * @param state ls.CycleState
 * @param pod ls.Pod
 * @return nil or Success, with a node name: the pod is nominated to that node
 *   (status.nominatedNodeName) and retried; later PostFilter plugins do not run.
 * @return ls.unresolvable(...): stop here, the pod stays unschedulable.
 * @return ls.unschedulable(...): this plugin could not help; the next one runs; the reasons of
 *   all are joined into the pod's message ("preemption: ...").
 * @return ls.error(msg), a raise, another status or value: Error "running PostFilter plugin "X": msg".
 */
/* @hook pre_score(state, pod, nodes, n) -> ls.Status?
 * @point PreScore
 * Once per cycle with the n feasible nodes, before Score. With a single
 * feasible node neither PreScore nor Score runs (upstream picks it at once).
 * @param state ls.CycleState
 * @param pod ls.Pod
 * @param nodes ls.NodeList the feasible nodes, 0-based
 * @param n integer how many
 * @return nil or Success: score.
 * @return ls.skip: this plugin's score (and normalize_score) is not run for this pod.
 * @return any other status, value or a raise: Error "running PreScore plugin "X": ...".
 */
/* @hook score(state, pod, node) -> integer
 * @point Score
 * Once per feasible node: how much this plugin likes the node. Raw scores may
 * use any range when normalize_score brings them to 0..100; the final score is
 * weighted by the plugin's weight in the profile and summed.
 * @param state ls.CycleState
 * @param pod ls.Pod
 * @param node ls.NodeInfo
 * @return an integer number (or an int64 cdata): the node's raw score.
 * @return anything else (a fraction, a string, nil, a status), or a raise: Error
 *   ("score returned nil (a nil), expected an integer within int64").
 */
/* @hook normalize_score(state, pod, scores, nodes, n) -> ls.Status?
 * @point Score (ScoreExtensions.NormalizeScore)
 * After every node's score, once: rewrite the score slots in place, usually
 * with ls.default_normalize_score(scores, n, ls.MAX_NODE_SCORE, reverse).
 * A slot is an int64: read tonumber(scores[i]), write scores[i] = v.
 * @param state ls.CycleState
 * @param pod ls.Pod
 * @param scores ls.ScoreList n int64 slots, 0-based, scores[i] is nodes[i]'s
 * @param nodes ls.NodeList
 * @param n integer
 * @return nil or Success: the slots are the final scores; each must be 0..100, else the attempt
 *   ends in an Error ("plugin "X" returns an invalid score 250, it should in the range of [0, 100]
 *   after normalizing").
 * @return any other status, value or a raise: Error.
 */
/* @hook reserve(state, pod, node_name) -> ls.Status?
 * @point Reserve
 * The node is chosen and the pod assumed on it: keep what you hand out
 * (devices, volumes) so the next pods do not take it.
 * @param state ls.CycleState
 * @param pod ls.Pod
 * @param node_name string the chosen node
 * @return nil or Success: go on to Permit.
 * @return ls.unschedulable(...), ls.unresolvable(...), ls.pending(...): the pod is unreserved
 *   (unreserve runs on every Reserve plugin) and retried.
 * @return ls.error(msg), a raise, another status or value: Error, unreserved, retried after backoff.
 */
/* @hook unreserve(state, pod, node_name)
 * @point Reserve
 * Undo reserve: runs on every Reserve plugin, in reverse order, when a later
 * step (Reserve, Permit, PreBind, Bind) failed or the pod was rejected while waiting.
 * @param state ls.CycleState
 * @param pod ls.Pod
 * @param node_name string
 * @return ignored: errors are ignored (it must not fail).
 */
/* @hook permit(state, pod, node_name) -> ls.Status?
 * @point Permit
 * The last word before the binding cycle: allow, reject or make the pod wait
 * (gangs, quotas).
 * @param state ls.CycleState
 * @param pod ls.Pod
 * @param node_name string
 * @return nil or Success: allowed.
 * @return ls.wait(seconds): the pod waits (status.nominatedNodeName set) until every waiting plugin
 *   calls ls.allow(pod, name) (then it binds) or one calls ls.reject, or the timeout (15 min at
 *   most) rejects it; other pods are scheduled meanwhile.
 * @return ls.unschedulable(...), ls.unresolvable(...), ls.pending(...): rejected, unreserved, retried.
 * @return any other status, value or a raise: Error.
 */
/* @hook pre_bind_pre_flight(state, pod, node_name) -> ls.Status?
 * @point PreBind (PreBindPreFlight)
 * Upstream's PreBindPreFlight (v1.35+), at the start of the binding cycle:
 * whether pre_bind has work for this pod. When some PreBind plugin has work
 * (or a Permit plugin made the pod wait), status.nominatedNodeName is set to
 * the node for the binding (NominatedNodeNameForExpectation).
 * @param state ls.CycleState
 * @param pod ls.Pod
 * @param node_name string
 * @return ls.skip: no PreBind work for this pod.
 * @return anything else, a raise, or no such hook on a PreBind plugin: the plugin counts as having
 *   work (the binding goes on either way).
 */
/* @hook pre_bind(state, pod, node_name) -> ls.Status?
 * @point PreBind
 * Before the binding: write what the pod needs (VolumeBinding's claim
 * bindings, DynamicResources' allocations) through ls.patch_object / ls.patch_status.
 * @param state ls.CycleState
 * @param pod ls.Pod
 * @param node_name string
 * @return nil or Success: go on to Bind.
 * @return ls.wait(seconds): the binding cycle is parked; pre_bind runs again on the next object change
 *   or second (other pods are scheduled meanwhile).
 * @return ls.unschedulable(...), ls.unresolvable(...), ls.pending(...): the binding fails, unreserved, retried.
 * @return ls.error(msg), a raise, another status or value: Error "running PreBind plugin "X": msg".
 */
/* @hook bind(state, pod, node_name) -> ls.Status?
 * @point Bind
 * Bind the pod: call ls.bind(node_name) (only a Bind hook may). The first
 * plugin that does not return ls.skip decides; DefaultBinder is the default.
 * @param state ls.CycleState
 * @param pod ls.Pod
 * @param node_name string
 * @return nil or Success after ls.bind: bound (later Bind plugins do not run).
 * @return ls.skip: not this plugin's pod: the next Bind plugin runs.
 * @return nil or Success without ls.bind, another status or value, or a raise: Error (a pod that
 *   ls.bind bound stays bound whatever the hook did next).
 */
/* @hook post_bind(state, pod, node_name)
 * @point PostBind
 * After a successful binding: informational (clean-up, counters).
 * @param state ls.CycleState
 * @param pod ls.Pod
 * @param node_name string
 * @return ignored: errors are ignored.
 */
/* @hook sign(pod) -> string|false|nil, string?
 * @point OpportunisticBatching (PreFilter, Filter, PreScore, Score plugins)
 * The plugin's part of the pod signature: two pods with the same signature are
 * filtered and scored alike, so the next one may reuse the last cycle's
 * ranking. A PreFilter, Filter, PreScore or Score plugin without sign turns
 * batching off for its profile. Shared fragments: require("luasched.signers").
 * @param pod ls.Pod
 * @return a string: this plugin's fragment of the signature.
 * @return nil: nothing to add.
 * @return false, why: the pod cannot be batched.
 */
/* @hook init(args)
 * @point load
 * Once per profile that enables the plugin, when the configuration is
 * loaded or reloaded: args are the pluginConfig args merged over
 * ls.plugin's defaults. Intern strings and build statuses here.
 * @param args table the merged args
 * @return ignored: a raise fails the load ("initializing plugin "X": ..."); a reload keeps the running set.
 */
/* @hook validate(args) -> true|string|nil
 * @point load
 * @static
 * A plain function (P.validate = function(args) ... end), run before init
 * on the merged args: check them.
 * @param args table
 * @return nil or true: valid.
 * @return a message (or a raise): the load fails with "FILE:LINE: FIELD: args of plugin "X" are not
 *   valid: message".
 */
/* @hook clone_state(entry) -> any
 * @point PostFilter (preemption's dry runs)
 * Upstream's StateData.Clone: preemption clones the cycle state once per
 * node; a plain table a plugin put in state is deep-copied unless the plugin
 * defines clone_state. Return the entry itself when nothing changes it after PreFilter.
 * @param entry any what this plugin put in state
 * @return the copy: what the clone holds.
 */
/* @hook P.events -> table[]
 * @point queueing hints
 * The cluster events that may make a pod this plugin rejected schedulable
 * (upstream's EventsToRegister): a list of { resource = "Node" | "Pod" | "AssignedPod" |
 * "UnscheduledPod" | "TargetPod" | a storage kind | "NodeMetrics" | "PodMetrics" | "*" |
 * "plural.version.group", action = "Add" | "Delete" | "Update" | "UpdateNodeLabel" | ... or a list,
 * hint = function(pod, old, new, self) }. A hint returns ls.QUEUE or ls.QUEUE_SKIP (old and new
 * are the event's objects, nil when absent; an error counts as Queue).
 * @return nil (no table): every event retries the pod.
 * @return {}: no event does (only the periodic flush retries the pod).
 * @return a list: only these; a bad entry fails the load with the entry named.
 */
/* @hook P.object_data -> string[]
 * @point load
 * Whole objects the plugin reads beyond the flat views: "Pod" and "Node"
 * (then ls.pod_data / ls.node_data give them), "NodeMetrics" and "PodMetrics"
 * (then luasched run polls metrics.k8s.io). Any other kind fails the load.
 * @return a list of kinds: the decoder keeps those objects' JSON.
 */

/* How the one plugin-chain runner (lua/luasched/dispatch.lua's run_chain)
 * runs a row: `allowed`, the status codes a plugin may return besides
 * Success and Error (bits LS_ALLOW_*; any other is an Error "returned <code>"),
 * and `chain`, flags (LS_CHAIN_*). A row whose plugins return a result
 * (LS_CHAIN_RESULT) is run by the same runner with its point's handler; the
 * per-node rows (Filter, Score) run in the loops loops.lua generates, and the
 * queue sort asks its one plugin. */
#define LS_REJECTIONS (LS_ALLOW_UNSCHEDULABLE | LS_ALLOW_UNRESOLVABLE | LS_ALLOW_PENDING)

/* The points a profile configures, in upstream's order (the run order):
 * X(ID, name as upstream's metrics and messages spell it, the plugin's Lua
 *   hook and dispatch.lua's function, the config key, 1 when the point's
 *   plugins can reject a pod so their cluster events matter, the codes its
 *   plugins may return, its chain flags). */
#define LS_EXTENSION_POINTS(X) \
    X(PRE_ENQUEUE, "PreEnqueue", "pre_enqueue", "preEnqueue", 1, LS_REJECTIONS, LS_CHAIN_STOPS | LS_CHAIN_QUEUE_SIDE) \
    X(QUEUE_SORT, "QueueSort", "sort_key", "queueSort", 0, 0, LS_CHAIN_RESULT | LS_CHAIN_QUEUE_SIDE) \
    X(PRE_FILTER, "PreFilter", "pre_filter", "preFilter", 1, LS_ALLOW_SKIP | LS_REJECTIONS, LS_CHAIN_STOPS | LS_CHAIN_RESULT | LS_CHAIN_ERROR_LOCATED) \
    X(FILTER, "Filter", "filter", "filter", 1, LS_REJECTIONS, LS_CHAIN_PER_NODE) \
    X(POST_FILTER, "PostFilter", "post_filter", "postFilter", 0, LS_ALLOW_UNSCHEDULABLE | LS_ALLOW_UNRESOLVABLE, LS_CHAIN_RESULT) \
    X(PRE_SCORE, "PreScore", "pre_score", "preScore", 0, LS_ALLOW_SKIP, LS_CHAIN_RESULT | LS_CHAIN_ERROR_LOCATED) \
    X(SCORE, "Score", "score", "score", 0, 0, LS_CHAIN_PER_NODE | LS_CHAIN_RESULT) \
    X(RESERVE, "Reserve", "reserve", "reserve", 1, LS_REJECTIONS, LS_CHAIN_STOPS) \
    X(PERMIT, "Permit", "permit", "permit", 1, LS_REJECTIONS | LS_ALLOW_WAIT, LS_CHAIN_STOPS) \
    X(PRE_BIND, "PreBind", "pre_bind", "preBind", 0, LS_REJECTIONS | LS_ALLOW_WAIT, LS_CHAIN_STOPS) \
    X(BIND, "Bind", "bind", "bind", 0, LS_ALLOW_SKIP, LS_CHAIN_STOPS | LS_CHAIN_FIRST_SUCCESS) \
    X(POST_BIND, "PostBind", "post_bind", "postBind", 0, 0, LS_CHAIN_LOGS_ERRORS)

/* The other hooks, each run over the plugin list of a point (a plugin of the
 * list without the hook is passed over):
 * X(ID, name (metrics label), the Lua hook, that point's ID, 1 when defining
 *   this hook alone puts a plugin at the point (multiPoint expansion), the
 *   codes its plugins may return, its chain flags).
 * NORMALIZE_SCORE comes first: LS_EP_NORMALIZE_SCORE == LS_EP_COUNT, the
 * index the sampled plugin durations have used for it. */
#define LS_EXTENSION_HOOKS(X) \
    X(NORMALIZE_SCORE, "ScoreExtensionNormalize", "normalize_score", SCORE, 0, 0, LS_CHAIN_RESULT | LS_CHAIN_ERROR_LOCATED) \
    X(UNRESERVE, "Unreserve", "unreserve", RESERVE, 0, 0, LS_CHAIN_REVERSE | LS_CHAIN_LOGS_ERRORS | LS_CHAIN_UNTIMED) \
    X(PRE_BIND_PRE_FLIGHT, "PreBindPreFlight", "pre_bind_pre_flight", PRE_BIND, 0, LS_ALLOW_SKIP, LS_CHAIN_RESULT | LS_CHAIN_UNTIMED) \
    X(LESS, "QueueSort", "less", QUEUE_SORT, 1, 0, LS_CHAIN_RESULT | LS_CHAIN_QUEUE_SIDE) \
    X(ADD_POD, "AddPod", "add_pod", PRE_FILTER, 0, 0, LS_CHAIN_RESULT) \
    X(REMOVE_POD, "RemovePod", "remove_pod", PRE_FILTER, 0, 0, LS_CHAIN_RESULT) \
    X(CLONE_STATE, "CloneState", "clone_state", PRE_FILTER, 0, 0, LS_CHAIN_RESULT)

/* ffi:begin */
#define LS_EP_ENUMERATOR(id, ...) LS_EP_##id,
#define LS_EP_PLUS_ONE(...) + 1
enum {
    LS_EXTENSION_POINTS(LS_EP_ENUMERATOR)
    LS_EXTENSION_HOOKS(LS_EP_ENUMERATOR)
    LS_EP_HOOK_COUNT
};
/* The configured points are LS_EP_* below LS_EP_COUNT (profile plugin lists). */
enum { LS_EP_COUNT = 0 LS_EXTENSION_POINTS(LS_EP_PLUS_ONE) };

/* A row's status codes besides Success and Error (bit 1 << LS_<code>). */
enum {
    LS_ALLOW_UNSCHEDULABLE = 1 << 2, LS_ALLOW_UNRESOLVABLE = 1 << 3, LS_ALLOW_WAIT = 1 << 4,
    LS_ALLOW_SKIP = 1 << 5, LS_ALLOW_PENDING = 1 << 6
};
/* A row's chain: how run_chain goes through the plugin list. */
enum {
    LS_CHAIN_STOPS = 1,            /* an allowed code other than Success ends the chain as the point's status */
    LS_CHAIN_FIRST_SUCCESS = 2,    /* the first Success ends it (Bind: one plugin binds; Skip passes on) */
    LS_CHAIN_REVERSE = 4,          /* the list runs from last to first (Unreserve) */
    LS_CHAIN_RESULT = 8,           /* a plugin returns a value beside or instead of a status: the point's
                                      handler in dispatch.lua takes it (run_chain's spec) */
    LS_CHAIN_PER_NODE = 16,        /* per node, in the generated loops (loops.lua) */
    LS_CHAIN_LOGS_ERRORS = 32,     /* a plugin's failure is logged with its file:line and the chain goes on
                                      (Unreserve; PostBind, informational: the pod stays bound) */
    LS_CHAIN_UNTIMED = 64,         /* no plugin durations are observed (Unreserve) */
    LS_CHAIN_QUEUE_SIDE = 128,     /* outside a cycle: no plugin durations; a cut-off is named by the note */
    LS_CHAIN_ERROR_LOCATED = 256   /* an Error status's message gets the hook's file:line too (PreFilter,
                                      PreScore, NormalizeScore); elsewhere it is the plugin's own */
};

typedef struct ls_ext_point_info {
    const char *name;         /* "PreFilter", "Unreserve", ... */
    const char *hook;         /* "pre_filter", "unreserve", ... */
    const char *config_key;   /* "preFilter"; NULL for a hook that is not a point */
    int32_t point;            /* LS_EP_* whose plugin list runs the hook (itself for a point) */
    uint8_t implements;       /* defining the hook alone puts a plugin at `point` */
    uint8_t rejects;          /* the point's plugins can reject a pod (their events matter) */
    uint8_t allowed;          /* LS_ALLOW_*: codes a plugin may return besides Success and Error */
    uint16_t chain;           /* LS_CHAIN_*: how the runner goes through the list */
} ls_ext_point_info;

/* Row `ep` of the table, 0 <= ep < LS_EP_HOOK_COUNT; NULL otherwise. */
const ls_ext_point_info *ls_ext_point_info_of(int ep);
/* ffi:end */

#endif
