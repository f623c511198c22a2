/*
 * bench_boundary.c: `luasched bench boundary`: what one message across the
 * supervisor/worker channel of `luasched run` costs (docs/plugins/worker.md).
 * Measures, over a socketpair as run uses it:
 *  - a watch event: the supervisor encodes the informer's object in the
 *    channel's binary form (worker/jsonbin.h) and sends it; the worker reads
 *    it (through its read-ahead) and rebuilds the tree (decoding into the
 *    scheduler is not counted: run decoded every object before the worker
 *    existed too); many in flight, as a watch stream delivers them; the
 *    encoding alone, on one thread, and the JSON text the channel carried
 *    before (printed and parsed again), for comparison;
 *  - a binding's round trip: the worker sends a bind message and waits for
 *    the supervisor's answer (the HTTP request between is not counted).
 *
 * It reports the messages that crossed and the nanoseconds per message, of
 * the wall clock and of this process's CPU (both sides run here).
 */
#include "cli/cli.h"
#include "worker/channel.h"
#include "worker/jsonbin.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* This process's CPU seconds (user + system, every thread). */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

typedef struct side {
    int fd;
    long n;
} side;

static void *receive_objects(void *arg)
{
    side *s = arg;
    ls_chan_reader rd;
    ls_chan_reader_init(&rd, s->fd);
    for (long i = 0; i < s->n; i++) {
        ls_chan_msg m;
        if (ls_chan_read(&rd, &m, 1 << 30) <= 0)
            break;
        cJSON_Delete(ls_jsonbin_decode(m.blob, m.blob_len));
        ls_chan_msg_free(&m);
    }
    ls_chan_reader_free(&rd);
    return NULL;
}

static void *answer_binds(void *arg)
{
    side *s = arg;
    ls_chan_reader rd;
    ls_chan_reader_init(&rd, s->fd);
    for (long i = 0; i < s->n; i++) {
        ls_chan_msg m;
        if (ls_chan_read(&rd, &m, 1 << 24) <= 0)
            break;
        const char *f[] = {m.f[2], "ok", ""};
        ls_chan_send(s->fd, NULL, LS_CH_BIND_RESULT, f, 3);
        ls_chan_msg_free(&m);
    }
    ls_chan_reader_free(&rd);
    return NULL;
}

/* The tree's encoding and rebuilding alone, n times on this thread. */
static void binary_only(const cJSON *pod, long n)
{
    ls_buf b = {0};
    for (long i = 0; i < n; i++) {
        b.len = 0;
        ls_jsonbin_encode(pod, &b);
        cJSON_Delete(ls_jsonbin_decode(b.data, b.len));
    }
    ls_buf_free(&b);
}

/* The JSON text the channel carried before: printed, parsed again. */
static void json_only(const cJSON *pod, long n)
{
    for (long i = 0; i < n; i++) {
        char *json = cJSON_PrintUnformatted(pod);
        cJSON_Delete(cJSON_Parse(json));
        free(json);
    }
}

static void usage(FILE *out)
{
    fprintf(out, "usage: luasched bench boundary [MESSAGES]   (default 200000)\n"
                 "\n"
                 "What one message across run's supervisor/worker channel costs, over a socketpair as run uses it:\n"
                 "a watch event (the supervisor encodes a pod's tree in the channel's binary form and sends it, the\n"
                 "worker receives it and rebuilds the tree; pipelined, as a watch stream delivers them), the same\n"
                 "encoding alone on one thread, the JSON text it replaced (printed and parsed) alone, and a\n"
                 "binding's round trip (bind message and answer; MESSAGES / 4 of them). Each line gives the messages\n"
                 "that crossed and ns per message, of the wall clock and of this process's CPU. Run it on a quiet\n"
                 "machine: both sides share its cores.\n");
}

static void report(const char *what, long messages, double wall, double cpu)
{
    printf("%-34s %8ld messages  %8.0f ns/message wall  %8.0f ns/message cpu\n", what, messages,
           wall * 1e9 / (double)messages, cpu * 1e9 / (double)messages);
}

int ls_cli_bench_boundary(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage(stdout);
        return LS_EXIT_OK;
    }
    char *end = NULL;
    long n = argc > 1 ? strtol(argv[1], &end, 10) : 200000;
    if (argc > 2 || (argc > 1 && (*end || n < 4 || n > 100000000))) {
        fprintf(stderr, "luasched bench boundary: MESSAGES: expected a number from 4 to 100000000, got \"%s\"\n",
                argc > 1 ? argv[argc > 2 ? 2 : 1] : "");
        usage(stderr);
        return LS_EXIT_USAGE;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        perror("luasched bench boundary: socketpair");
        return LS_EXIT_FAILURE;
    }
    cJSON *pod = cJSON_Parse(POD);
    side worker = {sv[1], n};
    pthread_t t;
    pthread_create(&t, NULL, receive_objects, &worker);
    double t0 = now_s(), c0 = cpu_s();
    ls_buf tree = {0};
    for (long i = 0; i < n; i++) {
        tree.len = 0;
        ls_jsonbin_encode(pod, &tree);
        const char *f[] = {"update", "pod", "Pod"};
        ls_chan_send_blob(sv[0], NULL, LS_CH_OBJECT, f, 3, tree.data, tree.len);
    }
    pthread_join(t, NULL);
    double events = now_s() - t0, events_cpu = cpu_s() - c0;
    long rounds = n / 4;
    pthread_create(&t, NULL, answer_binds, &(side){sv[0], rounds});
    t0 = now_s(), c0 = cpu_s();
    ls_chan_reader rd;
    ls_chan_reader_init(&rd, sv[1]);
    for (long i = 0; i < rounds; i++) {
        const char *f[] = {"default", "pod-000123", "7d3c1f0e-9a51-4c1e-8a4b-2f6a1b7c9d01", "node-00042",
                           "default-scheduler"};
        ls_chan_send(sv[1], NULL, LS_CH_BIND, f, 5);
        ls_chan_msg m;
        if (ls_chan_read(&rd, &m, 1 << 24) <= 0)
            break;
        ls_chan_msg_free(&m);
    }
    ls_chan_reader_free(&rd);
    pthread_join(t, NULL);
    double binds = now_s() - t0, binds_cpu = cpu_s() - c0;
    t0 = now_s(), c0 = cpu_s();
    binary_only(pod, n);
    double bin_wall = now_s() - t0, bin_cpu = cpu_s() - c0;
    t0 = now_s(), c0 = cpu_s();
    json_only(pod, n);
    double json_wall = now_s() - t0, json_cpu = cpu_s() - c0;
    char what[64];
    snprintf(what, sizeof what, "watch event (%zu-byte pod)", strlen(POD));
    report(what, n, events, events_cpu);
    snprintf(what, sizeof what, "  its binary form alone (%zu B)", tree.len);
    report(what, n, bin_wall, bin_cpu);
    report("  as JSON text (print+parse)", n, json_wall, json_cpu);
    report("binding round trip (2 messages)", 2 * rounds, binds, binds_cpu);
    ls_buf_free(&tree);
    cJSON_Delete(pod);
    close(sv[0]);
    close(sv[1]);
    return LS_EXIT_OK;
}
