/*
 * channel.h: the messages between `luasched run`'s supervisor and its worker
 * (docs/plugins/worker.md). A message is a frame on a stream socket: a
 * 4-byte length (of what follows), a 1-byte type, then its fields, each a
 * NUL-terminated string (JSON text has no NUL, nor have Kubernetes names).
 * The receiver checks the length against its own limit before reading, and
 * the field count against what the type expects. An object message's last
 * field is not text but the object's tree in binary form (worker/jsonbin.h),
 * which runs to the end of its frame.
 *
 * Readers read through an ls_chan_reader: one read takes every frame waiting
 * on the socket, and the frames already read are taken without a system call.
 */
#ifndef LS_WORKER_CHANNEL_H
#define LS_WORKER_CHANNEL_H

#include "luasched/base.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ls_chan_type {
    /* supervisor -> worker */
    LS_CH_OBJECT = 1,        /* verb ("add" | "update" | "delete"), feed ("pod" | "node" | "object"), kind;
                                then the object (jsonbin.h) as the message's blob */
    LS_CH_BIND_RESULT,       /* pod uid, "ok" | "failed", message */
    LS_CH_PREEMPT_FAILED,    /* preemptor uid, message */
    LS_CH_REPLY,             /* request id, "ok" | "failed", message */
    LS_CH_METRICS_ASK,       /* request id */
    LS_CH_SYNCED,            /* the whole state has been sent: the worker may schedule */
    LS_CH_WHATIF_ASK,        /* request id, a what-if question (JSON): answered by LS_CH_WHATIF */
    /* worker -> supervisor */
    LS_CH_HELLO = 32,        /* completed configuration (JSON), metrics wanted ("", "nodes", "pods",
                                "nodes,pods"), then the custom resources (plural.version.group) */
    LS_CH_BIND,              /* namespace, name, uid, node, schedulerName */
    LS_CH_EVENT,             /* namespace, name, uid, type, reason, action, note, reportingController,
                                resourceVersion, related namespace, related name, related uid */
    LS_CH_POD_STATUS,        /* namespace, name, condition reason ("" none), message, nominate
                                ("keep" | "set" | "clear"), node */
    LS_CH_PREEMPT,           /* namespace, name, uid of the victim, message, preemptor uid */
    LS_CH_OBJECT_PATCH,      /* kind ("PersistentVolume" | "PersistentVolumeClaim"), namespace, name, merge patch */
    LS_CH_STATUS_PATCH,      /* request id, kind (plural.version.group), namespace, name, merge patch */
    LS_CH_METRICS,           /* request id, Prometheus text */
    LS_CH_EXTENDER,          /* request id, extender urlPrefix, verb, JSON body: answered by a reply whose
                                message is the extender's JSON answer, or the error */
    LS_CH_CONFIGZ,           /* the completed configuration (JSON) after a successful hot reload: /configz */
    LS_CH_WHATIF,            /* request id, HTTP status, the what-if answer (JSON) */
    LS_CH_CREATE_CLAIM,      /* request id, namespace, the special ResourceClaim of a pod (JSON,
                                client/claim_check.h): answered by a reply whose message is the
                                created claim (JSON), or the error */
} ls_chan_type;

enum { LS_CHAN_MAX_FIELDS = 16 };

typedef struct ls_chan_msg {
    uint8_t type;
    uint32_t n;                              /* fields */
    const char *f[LS_CHAN_MAX_FIELDS];       /* into buf */
    const char *blob;                        /* into buf: an object message's binary tail; else NULL */
    size_t blob_len;
    char *buf;
} ls_chan_msg;

/* Frames read ahead from one socket. */
typedef struct ls_chan_reader {
    int fd;
    char *buf;
    size_t cap, head, tail;                  /* unread bytes: buf[head..tail) */
} ls_chan_reader;

/* The whole of data written to fd, or the whole of n bytes read from it,
 * through interrupted calls; false on an error or the end of the file (*eof,
 * when given, tells the end before any byte from an error). */
bool ls_fd_write_all(int fd, const void *data, size_t n);
bool ls_fd_read_all(int fd, void *data, size_t n, bool *eof);

/* Sends one message; `mu` (may be NULL) serializes writers of the same
 * socket. False when the peer is gone. */
bool ls_chan_send(int fd, pthread_mutex_t *mu, uint8_t type, const char *const *fields, uint32_t n);
/* The same with a binary tail of blob_len bytes after the fields (an object
 * message: its three fields, then the tree). */
bool ls_chan_send_blob(int fd, pthread_mutex_t *mu, uint8_t type, const char *const *fields, uint32_t n,
                       const void *blob, size_t blob_len);
/* Appends one message's frame to out (the caller writes it, with others in
 * the same write); false when it is over the framing's 4 GiB. */
bool ls_chan_frame(ls_buf *out, uint8_t type, const char *const *fields, uint32_t n, const void *blob,
                   size_t blob_len);
/* Reads one message of at most max_len bytes. 1: read; 0: the peer closed;
 * -1: an error, or a frame over the limit or malformed (fields not
 * NUL-terminated, too many): the channel cannot be trusted any more. */
int ls_chan_recv(int fd, ls_chan_msg *m, size_t max_len);
/* A reader of fd (buffers nothing yet); _free releases its buffer, not fd. */
void ls_chan_reader_init(ls_chan_reader *rd, int fd);
void ls_chan_reader_free(ls_chan_reader *rd);
/* As ls_chan_recv, through rd: a frame already read is returned without a
 * system call, and one read takes as much as the socket holds. */
int ls_chan_read(ls_chan_reader *rd, ls_chan_msg *m, size_t max_len);
/* A whole frame is waiting in rd (a poll of its fd would not show it). */
bool ls_chan_reader_ready(const ls_chan_reader *rd);
void ls_chan_msg_free(ls_chan_msg *m);
/* The name of a type, for logs. */
const char *ls_chan_type_name(uint8_t type);

#endif
