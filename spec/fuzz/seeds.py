#!/usr/bin/env python3
"""seeds.py: (re)writes the seed-* files of spec/fuzz/corpus/<target>/ from
our own examples and specs: examples/*.yaml (whole and split per document),
spec/e2e/fixtures/*.yaml, and the inputs written in spec/core/*/test_*.c.

Only seed-* files are touched; crash-* regression inputs are kept as they are.
Run from anywhere: python3 spec/fuzz/seeds.py
"""
import hashlib
import json
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(ROOT, "spec", "fuzz", "corpus")
TARGETS = ["quantity", "doc", "pod", "node", "object", "selector", "config"]

# Macros the C specs splice into their inputs.
MACROS = {
    "API": b"apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
}

TOKEN = re.compile(
    rb'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[A-Za-z_][A-Za-z0-9_]*|\s+|.',
    re.S)


def c_unescape(lit):
    """The bytes of one C string literal (quotes included in lit)."""
    body, out, i = lit[1:-1], bytearray(), 0
    simple = {b"n": 10, b"t": 9, b"r": 13, b'"': 34, b"'": 39, b"\\": 92, b"a": 7, b"b": 8,
              b"f": 12, b"v": 11, b"?": 63}
    while i < len(body):
        c = body[i:i + 1]
        if c != b"\\":
            out += c
            i += 1
            continue
        e = body[i + 1:i + 2]
        if e in simple:
            out.append(simple[e])
            i += 2
        elif e == b"x":
            m = re.match(rb"[0-9a-fA-F]+", body[i + 2:])
            out.append(int(m.group(0), 16) & 0xFF)
            i += 2 + len(m.group(0))
        elif e.isdigit():
            m = re.match(rb"[0-7]{1,3}", body[i + 1:])
            out.append(int(m.group(0), 8) & 0xFF)
            i += 1 + len(m.group(0))
        else:
            out += e
            i += 2
    return bytes(out)


def literal_runs(path):
    """(function called just before, joined bytes) for every run of adjacent
    string literals (and MACROS) in a C file."""
    src = open(path, "rb").read()
    toks = [m.group(0) for m in TOKEN.finditer(src)]
    runs, cur, last_ident, call = [], None, None, None
    for t in toks:
        if t.isspace() or t.startswith(b"//") or t.startswith(b"/*"):
            continue
        is_str = t.startswith(b'"')
        is_macro = t.decode("latin-1") in MACROS
        if is_str or is_macro:
            piece = c_unescape(t) if is_str else MACROS[t.decode()]
            if cur is None:
                cur = [call, piece]
            else:
                cur[1] += piece
            continue
        if cur is not None:
            runs.append(tuple(cur))
            cur = None
        if re.match(rb"[A-Za-z_]", t):
            last_ident = t.decode()
        elif t == b"(":
            call = last_ident
        elif t == b",":
            call = None  # only first arguments count as "the argument of call"
    if cur is not None:
        runs.append(tuple(cur))
    return runs


def yaml_documents(text):
    """A YAML stream split at '---' lines (comments and directives kept)."""
    docs, cur = [], []
    for line in text.splitlines(keepends=True):
        if re.match(rb"---(\s|$)", line):
            docs.append(b"".join(cur))
            cur = [line[3:].lstrip(b" ")] if line[3:].strip() else []
        else:
            cur.append(line)
    docs.append(b"".join(cur))
    return [d for d in docs if d.strip(b" \n\t#")]


def kind_of(doc):
    m = re.search(rb"^kind:\s*(\S+)", doc, re.M)
    return m.group(1).decode() if m else None


def single_quoted_json(text):
    """The specs write JSON with single quotes; None when it is not JSON then."""
    try:
        s = text.replace(b"'", b'"').decode("utf-8")
        return s, json.loads(s)
    except (UnicodeDecodeError, ValueError):
        return None


def walk_selectors(j, out):
    """Every labelSelector / namespaceSelector / node selector term in a tree."""
    if isinstance(j, dict):
        for k, v in j.items():
            if k in ("labelSelector", "namespaceSelector", "preference", "selector") and isinstance(v, dict):
                out.append(v)
            if k == "nodeSelectorTerms" and isinstance(v, list):
                out.extend(t for t in v if isinstance(t, dict))
            walk_selectors(v, out)
    elif isinstance(j, list):
        for v in j:
            walk_selectors(v, out)


def quantities(j, out):
    if isinstance(j, dict):
        for k, v in j.items():
            if k in ("requests", "limits", "allocatable", "capacity", "overhead") and isinstance(v, dict):
                out.extend(str(x).encode() for x in v.values() if isinstance(x, (str, int, float)))
            quantities(v, out)
    elif isinstance(j, list):
        for v in j:
            quantities(v, out)


def main():
    seeds = {t: [] for t in TARGETS}

    def add(target, name, data):
        if data:
            seeds[target].append((name, data))

    spec = os.path.join(ROOT, "spec", "core")
    yaml_files = [os.path.join(ROOT, "examples", f) for f in sorted(os.listdir(os.path.join(ROOT, "examples")))
                  if f.endswith(".yaml")]
    fixtures = os.path.join(ROOT, "spec", "e2e", "fixtures")
    yaml_files += [os.path.join(fixtures, f) for f in sorted(os.listdir(fixtures)) if f.endswith(".yaml")]

    # YAML files: whole to doc; documents by kind.
    for path in yaml_files:
        base = os.path.splitext(os.path.basename(path))[0]
        text = open(path, "rb").read()
        add("doc", base, text)
        for i, d in enumerate(yaml_documents(text)):
            kind = kind_of(d)
            target = {"Pod": "pod", "Node": "node", "KubeSchedulerConfiguration": "config"}.get(kind, "object")
            add(target, "%s-%d" % (base, i), d)
            if target in ("pod", "node"):
                add("object", "%s-%d" % (base, i), d)
            for q in re.findall(rb"(?:cpu|memory|pods|nvidia.com/gpu|ephemeral-storage):\s*\"?([^\s,}\"]+)", d):
                add("quantity", base, q)

    # spec/core/model/test_doc.c: every input handed to the loader.
    for call, data in literal_runs(os.path.join(spec, "model", "test_doc.c")):
        if call in ("parse", "EXPECT_ERROR", "expect_error", "write_file") or b"\n" in data or data[:1] in b"{[":
            add("doc", "test_doc", data)

    # spec/core/model/test_objects.c: the objects it decodes.
    for call, data in literal_runs(os.path.join(spec, "model", "test_objects.c")):
        if call == "decode" or b"kind:" in data:
            add("object", "test_objects", data)

    # A few multi-object files for the store (updates, every known kind).
    add("object", "handmade", b"""kind: Namespace
metadata: {name: shop, labels: {team: a}}
---
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}}
---
kind: Service
metadata: {name: web, namespace: shop, labels: {v: "2"}}
spec: {selector: {app: web, tier: fe}}
---
kind: ReplicationController
metadata: {name: rc}
spec: {selector: {app: rc}}
---
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec: {selector: {matchLabels: {app: db}}}
---
kind: PodDisruptionBudget
metadata: {name: db, namespace: shop}
spec: {selector: {matchExpressions: [{key: app, operator: In, values: [db]}]}}
status: {disruptionsAllowed: 1, disruptedPods: {db-0: "2024-01-02T15:04:05Z"}}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: shop}
""")
    add("object", "handmade", b'{"apiVersion":"v1","kind":"List","items":[{"kind":"ReplicaSet","metadata":'
        b'{"name":"a","namespace":"x"}},{"kind":"ReplicaSet","metadata":{"name":"a","namespace":"y"}}]}')

    # spec/core/model/test_quantity.c: quantities and timestamps.
    for call, data in literal_runs(os.path.join(spec, "model", "test_quantity.c")):
        if call and (call.startswith("QTY_") or call.startswith("TIME_") or call == "ls_quantity_parse"):
            add("quantity", "test_quantity", data)

    # spec/core/model/test_decode.c and test_selector.c: JSON objects, pods and nodes.
    pod_markers = (b"containers", b"tolerations", b"affinity", b"Affinity", b"topologySpread", b"schedulingGates",
                   b"priority", b"overhead", b"nodeSelector", b"ownerReferences", b"phase")
    node_markers = (b"allocatable", b"capacity", b"taints", b"images", b"conditions", b"unschedulable")
    for src in ("test_decode.c", "test_selector.c"):
        stem = os.path.splitext(src)[0]
        for call, data in literal_runs(os.path.join(spec, "model", src)):
            parsed = single_quoted_json(data)
            if parsed is None and call in ("pod_spec", "POD_SPEC_ERROR", "spec_error"):
                parsed = single_quoted_json(b"{'metadata':{'name':'web-1'},'spec':{" + data + b"}}")
            if parsed is None:
                continue
            text, j = parsed
            raw = text.encode()
            if not isinstance(j, dict):
                continue
            sels = []
            walk_selectors(j, sels)
            for s in sels:
                add("selector", stem, json.dumps(s).encode())
            if any(k in j for k in ("matchLabels", "matchExpressions", "matchFields")):
                add("selector", stem, raw)
                continue
            is_pod = any(m in raw for m in pod_markers)
            is_node = any(m in raw for m in node_markers)
            if is_pod or not is_node:
                add("pod", stem, raw)
            if is_node or not is_pod:
                add("node", stem, raw)
            qs = []
            quantities(j, qs)
            for q in qs:
                add("quantity", stem, q)

    # spec/core/config/test_config.c: every config file it writes.
    for call, data in literal_runs(os.path.join(spec, "config", "test_config.c")):
        if b"KubeSchedulerConfiguration" in data or b"profiles" in data or b"plugins" in data:
            add("config", "test_config", data)

    # Pods and nodes are also documents; selectors from the YAML pods too.
    for target in ("pod", "node", "object", "config"):
        for name, data in seeds[target]:
            add("doc", name, data)
    for name, data in list(seeds["pod"]):
        if data[:1] != b"{":
            continue
        sels = []
        walk_selectors(json.loads(data), sels)
        for s in sels:
            add("selector", name, json.dumps(s).encode())

    for target in TARGETS:
        d = os.path.join(CORPUS, target)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            if f.startswith("seed-"):
                os.remove(os.path.join(d, f))
        seen = set()
        for name, data in seeds[target]:
            h = hashlib.sha1(data).hexdigest()
            if h in seen:
                continue
            seen.add(h)
            with open(os.path.join(d, "seed-%s-%s" % (name, h[:8])), "wb") as f:
                f.write(data)
        print("%-9s %4d seeds" % (target, len(seen)))


if __name__ == "__main__":
    sys.exit(main())
