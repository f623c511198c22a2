/*
 * channel_cost.c: what one message across the supervisor/worker channel of
 * `luasched run` costs (docs/plugins/worker.md). Measures, over a socketpair
 * as run uses it:
 *  - a watch event: the supervisor prints the informer's object as JSON and
 *    sends it; the worker receives and parses it (decoding into the scheduler
 *    is not counted: run decoded every object before the worker existed too);
 *    many in flight, as a watch stream delivers them; and the JSON work
 *    alone, on one thread;
 *  - a binding's round trip: the worker sends a bind message and waits for
 *    the supervisor's answer (the HTTP request between is not counted).
 *
 * usage: luasched_channel_cost [MESSAGES]   (default 200000)
 */
#include "worker/channel.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* A pending pod as the served API returns it (managedFields dropped, as the informer does). */
static const char POD[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"pod-000123\",\"namespace\":\"default\","
    "\"uid\":\"7d3c1f0e-9a51-4c1e-8a4b-2f6a1b7c9d01\",\"resourceVersion\":\"123456\",\"creationTimestamp\":"
    "\"2026-11-29T05:00:00Z\",\"labels\":{\"app\":\"web\",\"tier\":\"frontend\"}},\"spec\":{\"containers\":[{\"name\":"
    "\"pause\",\"image\":\"registry.k8s.io/pause:3.10\",\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}],"
    "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"500Mi\"},\"limits\":{\"cpu\":\"100m\",\"memory\":"
    "\"500Mi\"}}}],\"schedulerName\":\"default-scheduler\",\"priority\":0,\"restartPolicy\":\"Always\","
    "\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\",\"tolerations\":[{\"key\":"
    "\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300}]},"
    "\"status\":{\"phase\":\"Pending\",\"qosClass\":\"Guaranteed\"}}";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct side {
    int fd;
    long n;
} side;

static void *receive_objects(void *arg)
{
    side *s = arg;
    for (long i = 0; i < s->n; i++) {
        ls_chan_msg m;
        if (ls_chan_recv(s->fd, &m, 1 << 30) <= 0)
            break;
        cJSON *json = cJSON_Parse(m.f[3]);
        cJSON_Delete(json);
        ls_chan_msg_free(&m);
    }
    return NULL;
}

static void *answer_binds(void *arg)
{
    side *s = arg;
    for (long i = 0; i < s->n; i++) {
        ls_chan_msg m;
        if (ls_chan_recv(s->fd, &m, 1 << 24) <= 0)
            break;
        const char *f[] = {m.f[2], "ok", ""};
        ls_chan_send(s->fd, NULL, LS_CH_BIND_RESULT, f, 3);
        ls_chan_msg_free(&m);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 1;
    cJSON *pod = cJSON_Parse(POD);
    side worker = {sv[1], n};
    pthread_t t;
    pthread_create(&t, NULL, receive_objects, &worker);
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        char *json = cJSON_PrintUnformatted(pod);
        const char *f[] = {"update", "pod", "Pod", json};
        ls_chan_send(sv[0], NULL, LS_CH_OBJECT, f, 4);
        free(json);
    }
    pthread_join(t, NULL);
    double events = now_s() - t0;
    pthread_create(&t, NULL, answer_binds, &(side){sv[0], n / 4});
    t0 = now_s();
    for (long i = 0; i < n / 4; i++) {
        const char *f[] = {"default", "pod-000123", "7d3c1f0e-9a51-4c1e-8a4b-2f6a1b7c9d01", "node-00042",
                           "default-scheduler"};
        ls_chan_send(sv[1], NULL, LS_CH_BIND, f, 5);
        ls_chan_msg m;
        if (ls_chan_recv(sv[1], &m, 1 << 24) <= 0)
            break;
        ls_chan_msg_free(&m);
    }
    pthread_join(t, NULL);
    double binds = now_s() - t0;
    t0 = now_s();
    for (long i = 0; i < n; i++) {
        char *json = cJSON_PrintUnformatted(pod);
        cJSON_Delete(cJSON_Parse(json));
        free(json);
    }
    double json_only = now_s() - t0;
    printf("watch event (%zu-byte pod): %.2f us each, pipelined (%ld messages)\n", strlen(POD), events * 1e6 / (double)n, n);
    printf("  of which printing and parsing the JSON: %.2f us (one thread, no channel)\n", json_only * 1e6 / (double)n);
    printf("binding round trip: %.2f us each (%ld round trips)\n", binds * 1e6 / (double)(n / 4), n / 4);
    cJSON_Delete(pod);
    close(sv[0]);
    close(sv[1]);
    return 0;
}
