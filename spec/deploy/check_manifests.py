#!/usr/bin/env python3
"""Checks the rendered deploy/kustomize overlays (spec/deploy/manifests.sh).

  check_manifests.py structure SECOND.yaml REPLACE.yaml STATIC_POD.yaml
      every object well-formed for its kind; the Deployment, PDB, Service,
      ConfigMaps, RBAC and the static pod as deploy/ promises them.
  check_manifests.py rbac RENDERED.yaml UPSTREAM_ROLES.yaml AUDIT_LOG NS SA
      every request of the audit log (what luasched really called, recorded by
      the served API) is allowed by the rules bound to ServiceAccount NS/SA.

Prints "ok: ..." / "FAIL: ..." lines; exits 1 on any failure.
"""
import sys
import yaml

failures = 0


def check(name, cond, detail=""):
    global failures
    if cond:
        print("ok: " + name)
    else:
        failures += 1
        print("FAIL: " + name + (": " + detail if detail else ""))


def load(path):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    out = []
    for d in docs:
        out.extend(d["items"] if d.get("kind") == "List" else [d])
    return out


def dns_label(s):
    import re
    return bool(re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", s or "")) and len(s) <= 63


def dns_subdomain(s):
    import re
    return bool(re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", s or "")) and len(s) <= 253


# Kinds, their apiVersion, whether namespaced, and the fields each must have.
KINDS = {
    "Namespace": ("v1", False, []),
    "ServiceAccount": ("v1", True, []),
    "ConfigMap": ("v1", True, ["data"]),
    "Service": ("v1", True, ["spec.selector", "spec.ports"]),
    "Pod": ("v1", True, ["spec.containers"]),
    "Deployment": ("apps/v1", True, ["spec.selector.matchLabels", "spec.template.spec.containers"]),
    "PodDisruptionBudget": ("policy/v1", True, ["spec.selector"]),
    "ClusterRole": ("rbac.authorization.k8s.io/v1", False, ["rules"]),
    "Role": ("rbac.authorization.k8s.io/v1", True, ["rules"]),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io/v1", False, ["roleRef.kind", "roleRef.name", "subjects"]),
    "RoleBinding": ("rbac.authorization.k8s.io/v1", True, ["roleRef.kind", "roleRef.name", "subjects"]),
}

# Names RBAC objects may use (colons allowed, as upstream's path segment names).
def rbac_name(s):
    return bool(s) and "/" not in s and "%" not in s and s not in (".", "..")


def get(obj, path):
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def check_object(o, where):
    kind = o.get("kind")
    meta = o.get("metadata") or {}
    name = meta.get("name")
    tag = "%s: %s %s" % (where, kind, name)
    if kind not in KINDS:
        check(tag + ": a known kind", False, "unexpected kind")
        return
    api, namespaced, fields = KINDS[kind]
    check(tag + ": apiVersion " + api, o.get("apiVersion") == api, str(o.get("apiVersion")))
    valid = rbac_name(name) if kind.endswith("Role") or kind.endswith("Binding") else (
        dns_label(name) if kind in ("Namespace", "Service") else dns_subdomain(name))
    check(tag + ": a valid name", valid, repr(name))
    check(tag + ": namespaced as its kind is", bool(meta.get("namespace")) == namespaced,
          "namespace %r" % meta.get("namespace"))
    for f in fields:
        # A role may grant nothing yet (luasched:plugins until a plugin needs more).
        empty_ok = f == "rules"
        check(tag + ": has " + f, get(o, f) is not None if empty_ok else get(o, f) not in (None, [], {}))
    for k, v in (meta.get("labels") or {}).items():
        check(tag + ": label %s is a string" % k, isinstance(v, str))
    if kind in ("Deployment", "Pod"):
        spec = o["spec"]["template"]["spec"] if kind == "Deployment" else o["spec"]
        check_pod_spec(spec, tag, kind)
    if kind == "Deployment":
        sel = o["spec"]["selector"]["matchLabels"]
        labels = o["spec"]["template"]["metadata"].get("labels", {})
        check(tag + ": selector matches the template", all(labels.get(k) == v for k, v in sel.items()))


def restricted(sc_pod, c, tag):
    sc = c.get("securityContext") or {}
    check(tag + ": runs as non-root", sc.get("runAsNonRoot") or sc_pod.get("runAsNonRoot"))
    check(tag + ": no privilege escalation", sc.get("allowPrivilegeEscalation") is False)
    check(tag + ": read-only root filesystem", sc.get("readOnlyRootFilesystem") is True)
    check(tag + ": drops every capability", (sc.get("capabilities") or {}).get("drop") == ["ALL"])
    seccomp = (sc.get("seccompProfile") or sc_pod.get("seccompProfile") or {}).get("type")
    check(tag + ": RuntimeDefault seccomp", seccomp == "RuntimeDefault", str(seccomp))


def check_pod_spec(spec, tag, kind):
    c = spec["containers"][0]
    restricted(spec.get("securityContext") or {}, c, tag)
    for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
        hg = get(c, probe + ".httpGet") or {}
        check(tag + ": %s on %s over HTTPS" % (probe, path),
              hg.get("path") == path and hg.get("scheme") == "HTTPS" and hg.get("port") == 10259, str(hg))
    res = c.get("resources") or {}
    check(tag + ": resource requests and a memory limit",
          "cpu" in res.get("requests", {}) and "memory" in res.get("requests", {})
          and "memory" in res.get("limits", {}))
    check(tag + ": runs `luasched run --config`", c.get("args", [])[:1] == ["run"]
          and any(a.startswith("--config=") for a in c.get("args", [])))
    mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    for m in mounts:
        check(tag + ": mount %s has a volume" % m, m in vols)
    for m in mounts.values():
        check(tag + ": mount %s is not a subPath (ConfigMap updates reach it)" % m["name"], "subPath" not in m)


def by_kind(objs, kind):
    return [o for o in objs if o["kind"] == kind]


def structure(second, replace, static):
    for path, objs in ((second, load(second)), (replace, load(replace)), (static, load(static))):
        for o in objs:
            check_object(o, path.rsplit("/", 1)[-1])
    objs = load(second)
    dep = by_kind(objs, "Deployment")[0]
    check("Deployment: two replicas", dep["spec"]["replicas"] == 2)
    cms = {c["metadata"]["name"]: c for c in by_kind(objs, "ConfigMap")}
    cfg = yaml.safe_load(cms["luasched-config"]["data"]["config.yaml"])
    check("config: leader election on", cfg["leaderElection"]["leaderElect"] is True)
    check("config: second scheduler's name", cfg["profiles"][0]["schedulerName"] == "luasched")
    check("config: plugin path is the plugins ConfigMap's mount",
          cfg["luasched"]["pluginPath"] == ["/etc/luasched/plugins"]
          and any(m["mountPath"] == "/etc/luasched/plugins"
                  for m in dep["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]))
    pdb = by_kind(objs, "PodDisruptionBudget")[0]
    labels = dep["spec"]["template"]["metadata"]["labels"]
    check("PDB selects the scheduler's pods", all(labels.get(k) == v
          for k, v in pdb["spec"]["selector"]["matchLabels"].items()))
    check("PDB keeps one running", pdb["spec"].get("minAvailable") == 1)
    svc = by_kind(objs, "Service")[0]
    check("metrics Service selects the scheduler's pods",
          all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()))
    check("metrics Service on the secure port", svc["spec"]["ports"][0]["port"] == 10259)
    roles = {(b["roleRef"]["name"]) for b in by_kind(objs, "ClusterRoleBinding")}
    check("bound to system:kube-scheduler and system:volume-scheduler",
          {"system:kube-scheduler", "system:volume-scheduler"} <= roles, str(roles))
    pod = load(static)[0]
    check("static pod: kube-system", pod["metadata"]["namespace"] == "kube-system")
    check("static pod: host network", pod["spec"].get("hostNetwork") is True)
    check("static pod: system-node-critical", pod["spec"].get("priorityClassName") == "system-node-critical")
    subjects = [s for b in by_kind(load(replace), "ClusterRoleBinding") for s in b["subjects"]]
    check("replacing: binds kube-scheduler's user", {"kind": "User", "name": "system:kube-scheduler",
          "apiGroup": "rbac.authorization.k8s.io"} in subjects)


def rule_allows(rule, verb, group, resource, name):
    return (("*" in rule.get("verbs", []) or verb in rule.get("verbs", []))
            and ("*" in rule.get("apiGroups", []) or group in rule.get("apiGroups", []))
            and ("*" in rule.get("resources", []) or resource in rule.get("resources", []))
            and (not rule.get("resourceNames") or name in rule["resourceNames"]))


def rbac(rendered, upstream, audit, ns, sa):
    objs = load(rendered) + load(upstream)
    subject = {"kind": "ServiceAccount", "name": sa, "namespace": ns}
    cluster_roles = {o["metadata"]["name"]: o for o in objs if o["kind"] == "ClusterRole"}
    roles = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in objs if o["kind"] == "Role"}
    grants = []   # (namespace or None for cluster-wide, rules)
    for b in objs:
        if b["kind"] not in ("ClusterRoleBinding", "RoleBinding") or subject not in b.get("subjects", []):
            continue
        ref = b["roleRef"]
        bns = b["metadata"].get("namespace") if b["kind"] == "RoleBinding" else None
        role = cluster_roles.get(ref["name"]) if ref["kind"] == "ClusterRole" else roles.get((bns, ref["name"]))
        check("binding %s refers to a role there is" % b["metadata"]["name"], role is not None)
        if role:
            grants.append((bns, role.get("rules") or []))
    seen = set()
    with open(audit) as f:
        for line in f:
            verb, group, resource, sub, rns, name = [None if x == "-" else x for x in line.split()]
            key = (verb, group or "", resource + ("/" + sub if sub else ""), rns if resource == "leases" else None,
                   name if resource == "leases" else None)
            seen.add(key)
    check("the run made requests to check", len(seen) > 0)
    for verb, group, res, rns, name in sorted(seen, key=str):
        ok = any((gns is None or gns == rns) and any(rule_allows(r, verb, group, res, name) for r in rules)
                 for gns, rules in grants)
        what = "%s %s%s" % (verb, (group + "/") if group else "", res) + (" %s/%s" % (rns, name) if name else "")
        check("RBAC allows " + what, ok)


if __name__ == "__main__":
    if sys.argv[1] == "structure":
        structure(*sys.argv[2:5])
    elif sys.argv[1] == "rbac":
        rbac(*sys.argv[2:7])
    else:
        sys.exit("usage: check_manifests.py structure|rbac ...")
    sys.exit(1 if failures else 0)
