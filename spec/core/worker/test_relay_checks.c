/*
 * test_relay_checks.c: the supervisor's checks of what a worker sends
 * (client/relay.c, docs/plugins/worker.md "What crosses the channel"). A
 * relay whose informers were never started (an empty store, a client to an
 * address nobody serves) is attached to one end of a socketpair; messages a
 * hostile worker could send are handed to ls_relay_handle: those a worker
 * may not send end it (false, with why), a binding of a pod the supervisor
 * does not know is answered as refused and never sent.
 */
#include "test.h"
#include "client/relay.h"
#include "worker/channel.h"

#include <sys/socket.h>
#include <unistd.h>

static ls_chan_msg msg(uint8_t type, const char **f, uint32_t n)
{
    ls_chan_msg m = {.type = type, .n = n};
    for (uint32_t i = 0; i < n; i++)
        m.f[i] = f[i];
    return m;
}

static bool handle(ls_relay *r, uint8_t type, const char **f, uint32_t n, char *why)
{
    ls_chan_msg m = msg(type, f, n);
    why[0] = 0;
    return ls_relay_handle(r, &m, why, 700);
}

int main(void)
{
    ls_error err;
    ls_kubeconfig cfg = {.server = "http://127.0.0.1:1"};
    ls_kclient_options co = {.max_attempts = 1};
    ls_kclient *client = ls_kclient_new(&cfg, &co, &err);
    ls_relay_options ro = {.client = client};
    ls_relay *r = ls_relay_new(&ro, &err);
    CHECK(r != NULL);
    int sv[2];
    CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ls_relay_attach(r, sv[0], true);
    ls_chan_msg got;
    CHECK_INT(ls_chan_recv(sv[1], &got, 1 << 20), 1);   /* the empty state, then synced */
    CHECK_INT(got.type, LS_CH_SYNCED);
    ls_chan_msg_free(&got);
    char why[700];

    /* a binding of a pod the supervisor does not know: refused, answered */
    const char *bind[] = {"default", "ghost", "uid-1", "node-1", "default-scheduler"};
    CHECK(handle(r, LS_CH_BIND, bind, 5, why));
    CHECK_INT(ls_chan_recv(sv[1], &got, 1 << 20), 1);
    CHECK_INT(got.type, LS_CH_BIND_RESULT);
    CHECK_STR(got.f[0], "uid-1");
    CHECK_STR(got.f[1], "failed");
    CHECK_STR(got.f[2], "binding refused by the supervisor: pod default/ghost of uid uid-1 is not known");
    ls_chan_msg_free(&got);

    /* what a worker may not send at all */
    CHECK(!handle(r, LS_CH_OBJECT, bind, 4, why));
    CHECK_STR(why, "a message of type 1 (object), which a worker does not send");
    CHECK(!handle(r, LS_CH_BIND, bind, 4, why));
    CHECK_STR(why, "a bind message of 4 fields (expected 5)");
    const char *no_uid[] = {"default", "p", "", "node-1", "default-scheduler"};
    CHECK(!handle(r, LS_CH_BIND, no_uid, 5, why));
    CHECK_STR(why, "a binding of default/p without a valid uid or scheduler name");
    const char *event[] = {"default", "p", "u", "Bogus", "Scheduled", "Binding", "", "", "", "", "", ""};
    CHECK(!handle(r, LS_CH_EVENT, event, 12, why));
    CHECK_STR(why, "an event of type \"Bogus\"");
    const char *event2[] = {"default", "p", "u", "Normal", "Sched uled", "Binding", "", "", "", "", "", ""};
    CHECK(!handle(r, LS_CH_EVENT, event2, 12, why));
    CHECK_STR(why, "an event with a bad reason, action or size (Sched uled)");
    const char *status[] = {"default", "p", "Unschedulable", "m", "sideways", ""};
    CHECK(!handle(r, LS_CH_POD_STATUS, status, 6, why));
    CHECK_STR(why, "a pod status with nomination \"sideways\"");
    const char *secret[] = {"Secret", "default", "token", "{}"};
    CHECK(!handle(r, LS_CH_OBJECT_PATCH, secret, 4, why));
    CHECK_STR(why, "a patch of Secret token: only PersistentVolumes and claims, by name, with a JSON object");
    const char *not_json[] = {"PersistentVolume", "", "pv-1", "[1]"};
    CHECK(!handle(r, LS_CH_OBJECT_PATCH, not_json, 4, why));
    const char *unwatched[] = {"1", "secrets.v1.core", "default", "token", "{}"};
    CHECK(!handle(r, LS_CH_STATUS_PATCH, unwatched, 5, why));
    CHECK_STR(why, "a status patch of secrets.v1.core token: not a watched custom resource, or not a JSON object");
    const char *preempt[] = {"default", "victim", "", "m", "uid-2"};
    CHECK(!handle(r, LS_CH_PREEMPT, preempt, 5, why));

    /* DynamicResources' special claim for a pod's extended resources: only that claim is created */
    const char *claim_ok = "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":"
        "{\"namespace\":\"default\",\"generateName\":\"p-extended-resources-\",\"annotations\":"
        "{\"resource.kubernetes.io/extended-resource-claim\":\"true\"},\"ownerReferences\":[{\"apiVersion\":\"v1\","
        "\"kind\":\"Pod\",\"name\":\"p\",\"uid\":\"uid-p\",\"controller\":true,\"blockOwnerDeletion\":true}]},"
        "\"spec\":{\"devices\":{\"requests\":[{\"name\":\"container-0-request-0\"}]}}}";
    const char *create_unknown[] = {"7", "default", claim_ok};
    CHECK(handle(r, LS_CH_CREATE_CLAIM, create_unknown, 3, why));   /* a pod the supervisor does not know */
    CHECK_INT(ls_chan_recv(sv[1], &got, 1 << 20), 1);
    CHECK_INT(got.type, LS_CH_REPLY);
    CHECK_STR(got.f[0], "7");
    CHECK_STR(got.f[1], "failed");
    CHECK_STR(got.f[2], "pod default/p (uid uid-p) is not known");
    ls_chan_msg_free(&got);
    const char *other_ns[] = {"8", "kube-system", claim_ok};
    CHECK(!handle(r, LS_CH_CREATE_CLAIM, other_ns, 3, why));
    CHECK_STR(why, "a claim to create that is not a pod's claim for extended resources: metadata.namespace: default, "
                   "expected the pod's, kube-system");
    const char *named[] = {"9", "default",
        "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"name\":\"gpu\"}}"};
    CHECK(!handle(r, LS_CH_CREATE_CLAIM, named, 3, why));
    CHECK_STR(why, "a claim to create that is not a pod's claim for extended resources: metadata.name: not set on "
                   "the special claim");
    const char *secret_obj[] = {"10", "default", "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{}}"};
    CHECK(!handle(r, LS_CH_CREATE_CLAIM, secret_obj, 3, why));
    CHECK_STR(why, "a claim to create that is not a pod's claim for extended resources: expected apiVersion "
                   "resource.k8s.io/v1, kind ResourceClaim");
    const char *create_short[] = {"11", "default"};
    CHECK(!handle(r, LS_CH_CREATE_CLAIM, create_short, 2, why));
    CHECK_STR(why, "a create claim message of 2 fields (expected 3)");
    /* a pod's status: only status.extendedResourceClaimStatus */
    const char *pod_nominated[] = {"12", "Pod", "default", "p", "{\"status\":{\"nominatedNodeName\":\"n\"}}"};
    CHECK(!handle(r, LS_CH_STATUS_PATCH, pod_nominated, 5, why));
    CHECK_STR(why, "a status patch of pod p: a pod's status patch: only status.extendedResourceClaimStatus "
                   "(requestMappings, resourceClaimName) is written");
    const char *pod_ext[] = {"13", "Pod", "default", "p",
        "{\"status\":{\"extendedResourceClaimStatus\":{\"resourceClaimName\":\"c\",\"requestMappings\":"
        "[{\"containerName\":\"main\",\"resourceName\":\"example.com/gpu\",\"requestName\":\"container-0-request-0\"}]}}}"};
    CHECK(handle(r, LS_CH_STATUS_PATCH, pod_ext, 5, why));   /* well formed, of a pod not known: answered */
    CHECK_INT(ls_chan_recv(sv[1], &got, 1 << 20), 1);
    CHECK_STR(got.f[1], "failed");
    CHECK_STR(got.f[2], "the pod is not known");
    ls_chan_msg_free(&got);

    ls_relay_free(r);
    ls_kclient_free(client);
    close(sv[0]);
    close(sv[1]);
    TEST_MAIN_END();
}
