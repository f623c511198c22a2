/*
 * feature_gates.h: kube-scheduler's --feature-gates, for the gates that
 * change scheduling, with upstream v1.37's stages, defaults and locks.
 *
 * The gates are process-wide, as upstream's DefaultFeatureGate: set once
 * from the command line before anything is built (every command that takes
 * a configuration accepts the flag; main.c reads it), read anywhere after.
 * A gate set to a value luasched does not implement (turning off what
 * luasched only has in its v1.37 form, turning on what it does not have) is
 * refused with a message saying so; the gates whose earlier behaviour it
 * implements are listed in docs/configuration/feature-gates.md.
 */
#ifndef LUASCHED_FEATURE_GATES_H
#define LUASCHED_FEATURE_GATES_H

#include "luasched/base.h"

/* X(id, stage, default, locked): upstream v1.37's kube_features.go. */
#define LS_FEATURE_GATE_LIST(X)                                      \
    X(AllAlpha, ALPHA, false, false)                                 \
    X(AllBeta, BETA, false, false)                                   \
    X(CompositePodGroup, ALPHA, false, false)                        \
    X(DRAAdminAccess, GA, true, true)                                \
    X(DRAConsumableCapacity, BETA, true, false)                      \
    X(DRADerivedAttributes, ALPHA, false, false)                     \
    X(DRADeviceBindingConditions, BETA, true, false)                 \
    X(DRADeviceCompatibilityGroups, ALPHA, false, false)             \
    X(DRADeviceTaintRules, GA, true, false)                          \
    X(DRADeviceTaints, GA, true, false)                              \
    X(DRAExtendedResource, GA, true, true)                           \
    X(DRAListTypeAttributes, ALPHA, false, false)                    \
    X(DRANodeAllocatableResources, ALPHA, false, false)              \
    X(DRAOptionalNodeOperations, ALPHA, false, false)                \
    X(DRAPartitionableDevices, BETA, true, false)                    \
    X(DRAPrioritizedList, GA, true, true)                            \
    X(DRAResourceClaimDeviceStatus, GA, true, true)                  \
    X(DRASchedulerFilterTimeout, BETA, true, false)                  \
    X(DRAWorkloadResourceClaims, BETA, false, false)                 \
    X(DynamicResourceAllocation, GA, true, true)                     \
    X(GenericWorkload, BETA, false, false)                           \
    X(InPlacePodLevelResourcesVerticalScaling, BETA, true, false)    \
    X(InPlacePodVerticalScaling, GA, true, true)                     \
    X(InPlacePodVerticalScalingSchedulerPreemption, ALPHA, false, false) \
    X(InterPodAffinityHostnameFastPath, ALPHA, false, false)         \
    X(MatchLabelKeysInPodTopologySpread, BETA, true, false)          \
    X(NodeDeclaredFeatures, GA, true, true)                          \
    X(NominatedNodeNameForExpectation, BETA, true, false)            \
    X(OpportunisticBatching, BETA, true, false)                      \
    X(PodGroupPreemptionPolicy, ALPHA, false, false)                 \
    X(PodLevelResources, BETA, true, false)                          \
    X(PodSchedulingReadiness, GA, true, true)                        \
    X(SchedulerAsyncAPICalls, BETA, false, false)                    \
    X(SchedulerAsyncPreemption, BETA, true, false)                   \
    X(SchedulerPopFromBackoffQ, BETA, true, false)                   \
    X(SchedulerPreQueueingHints, ALPHA, false, false)                \
    X(SchedulerQueueingHints, GA, true, true)                        \
    X(StorageCapacityScoring, BETA, true, false)                     \
    X(TaintTolerationComparisonOperators, ALPHA, false, false)       \
    X(TopologyAwareWorkloadScheduling, ALPHA, false, false)          \
    X(VolumeAttributesClass, GA, true, true)                         \
    X(VolumeLimitScaling, BETA, true, false)

#define LS_FG_ENUMERATOR(id, ...) LS_FG_##id,
typedef enum ls_feature_gate { LS_FEATURE_GATE_LIST(LS_FG_ENUMERATOR) LS_FG_COUNT } ls_feature_gate;
#undef LS_FG_ENUMERATOR

typedef enum ls_feature_stage { LS_FG_STAGE_ALPHA, LS_FG_STAGE_BETA, LS_FG_STAGE_GA } ls_feature_stage;

typedef struct ls_feature_gate_info {
    const char *name;
    ls_feature_stage stage;
    bool default_value, locked;
} ls_feature_gate_info;

const ls_feature_gate_info *ls_feature_gate_info_of(ls_feature_gate g);
/* "" when luasched implements the gate's non-default value; otherwise why it
 * refuses it. */
const char *ls_feature_gate_refusal(ls_feature_gate g);
bool ls_feature_enabled(ls_feature_gate g);

/* Applies a --feature-gates value ("A=true,B=false", as component-base's
 * Set) over the current values. On a problem nothing changes and *err has
 * upstream's message ("unrecognized feature gate: X", with a did-you-mean;
 * "cannot set feature gate X to false, feature is locked to true"; "invalid
 * value of X=y, err: ...", "missing bool value for X") or luasched's
 * refusal. Upstream's warnings for GA gates set explicitly are logged. */
bool ls_feature_gates_set(const char *value, ls_error *err);
/* Back to v1.37's defaults (tests). */
void ls_feature_gates_reset(void);
/* "A=true,B=false" of the gates set to a non-default value ("" if none). */
void ls_feature_gates_format(char *buf, size_t len);

/* main.c: takes every --feature-gates flag out of argv (both "--feature-gates
 * V" and "--feature-gates=V"), applying each; *argc is updated. False, with a
 * message "invalid argument ... for \"--feature-gates\" flag: ..." in *err,
 * on the first bad value. */
bool ls_feature_gates_from_args(int *argc, char **argv, ls_error *err);

#endif
