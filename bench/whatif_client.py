#!/usr/bin/env python3
"""The what-if bench's question client (bench/whatif.sh): one light process.

usage: whatif_client.py URL TOKEN PODS.jsonl QPS [CONNECTIONS]

Opens its connections, says "connected" on standard error, and starts
asking when it gets SIGUSR1 (the bench opens them before its measured
window: a TLS handshake is a cost of connecting, not of a question).

Sends single-pod questions ("explain": false, the pods of PODS.jsonl round
robin) to URL at QPS a second on a fixed schedule (question i is due at i/QPS
seconds after SIGUSR1), round robin over CONNECTIONS (default 64) keep-alive
HTTPS connections, pipelined: a question is sent when it is due, whether or
not the answers before it on its connection have come (HTTP/1.1 answers
come in order; the scheduler answers one question of a connection at a time,
so CONNECTIONS bounds the questions waiting at once). One thread, so the
client costs the machine little. Each answer is one line on standard output:
the status, the answer's "loopPauseMs" and its "elapsedMs" (the
evaluator's time for it), "-" for one it does not have. Runs until
SIGTERM.
"""
import json
import os
import re
import select
import signal
import socket
import ssl
import sys
import threading
import time

PAUSE = re.compile(rb'"loopPauseMs":([0-9.eE+-]+)')
ELAPSED = re.compile(rb'"elapsedMs":([0-9.eE+-]+)')


def answers(buf, out):
    """The whole answers at the start of buf written out; returns the rest."""
    while b"\r\n\r\n" in buf:
        head, rest = buf.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if len(rest) < length:
            break
        m = PAUSE.search(rest[:length])
        e = ELAPSED.search(rest[:length])
        out.write("%s %s %s\n" % (lines[0].split()[1].decode(), m.group(1).decode() if m else "-",
                                   e.group(1).decode() if e else "-"))
        buf = rest[length:]
    out.flush()
    return buf


def main():
    url, token, pods_path, qps = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    n_conns = int(sys.argv[5]) if len(sys.argv) > 5 else 64
    host, port = url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)
    requests = []
    with open(pods_path) as f:
        for line in f:
            if line.strip():
                body = json.dumps({"pod": json.loads(line), "explain": False}).encode()
                requests.append(b"POST /whatif HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"
                                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                                % (host_port_bytes(host, port), token.encode(), len(body), body))
    tls = ssl.create_default_context()
    tls.check_hostname = False
    tls.verify_mode = ssl.CERT_NONE
    conns = [tls.wrap_socket(socket.create_connection((host, int(port)))) for _ in range(n_conns)]
    pending = {c: b"" for c in conns}
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    go = threading.Event()
    signal.signal(signal.SIGUSR1, lambda *_: go.set())
    sys.stderr.write("connected\n")
    sys.stderr.flush()
    while not go.wait(0.05):
        pass
    start = time.monotonic()
    i = 0
    while True:   # one thread: send what is due, read what came
        wait = start + i / qps - time.monotonic()
        if wait <= 0:
            conns[i % n_conns].sendall(requests[i % len(requests)])
            i += 1
            continue
        readable, _, _ = select.select(conns, [], [], wait)
        for c in readable:
            data = c.recv(65536)
            while c.pending():
                data += c.recv(c.pending())
            if not data:
                os._exit(1)
            pending[c] = answers(pending[c] + data, sys.stdout)


def host_port_bytes(host, port):
    return ("%s:%s" % (host, port)).encode()


if __name__ == "__main__":
    main()
