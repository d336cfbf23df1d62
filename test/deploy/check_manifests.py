#!/usr/bin/python3
"""check_manifests.py - the Kubernetes manifests in deploy/.

Each deploy/*.yaml must parse (PyYAML, safe_load_all) and every workload in it
(DaemonSet, Deployment, Pod) must be a valid Windows HostProcess pod, as the API
server and kubelet require (Kubernetes' validation of windowsOptions.hostProcess):
  * hostNetwork: true;
  * every container (init and regular) effectively hostProcess: true (its own
    setting, else the pod's), none saying false while another says true;
  * every container effectively has a runAsUserName;
  * nodeSelector kubernetes.io/os: windows, and spec.os.name windows if set;
  * no Linux-only security settings (privileged, allowPrivilegeEscalation,
    capabilities, runAsUser, runAsGroup, seLinuxOptions, seccompProfile, ...),
    which the API server refuses for Windows pods;
  * apps/v1: spec.selector.matchLabels matches the template's labels.
Besides: csi-proxy-hostprocess.yaml runs csi-proxy.exe as NT AUTHORITY\\SYSTEM;
example-plugin-least-privilege.yaml runs as a group that
config/csi-proxy.least-privilege.example.yaml admits, and not as SYSTEM or an
administrator.

Then a self-test: each rule is broken in turn on a copy of the csi-proxy
manifest (or the plugin example) and the check must fail; a checker that
cannot fail proves nothing. Prints ok / not ok lines and "N passed, N failed".
"""
import copy
import glob
import os
import sys

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
LINUX_ONLY_CONTAINER = ["privileged", "allowPrivilegeEscalation", "capabilities", "procMount",
                        "readOnlyRootFilesystem", "runAsUser", "runAsGroup", "seLinuxOptions",
                        "seccompProfile", "appArmorProfile"]
LINUX_ONLY_POD = ["fsGroup", "fsGroupChangePolicy", "runAsUser", "runAsGroup", "seLinuxOptions",
                  "seccompProfile", "supplementalGroups", "sysctls", "appArmorProfile"]
SYSTEM = "NT AUTHORITY\\SYSTEM"

passed = 0
failed = 0


def result(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok - {name}")
    else:
        failed += 1
        print(f"not ok - {name}")
        if detail:
            print("    " + str(detail).replace("\n", "\n    "))


def pod_of(doc):
    """(pod spec, template labels) of a workload, or (None, None)."""
    kind = doc.get("kind")
    if kind == "Pod":
        return doc.get("spec") or {}, (doc.get("metadata") or {}).get("labels") or {}
    if kind in ("DaemonSet", "Deployment", "StatefulSet"):
        t = (doc.get("spec") or {}).get("template") or {}
        return t.get("spec") or {}, (t.get("metadata") or {}).get("labels") or {}
    return None, None


def hostprocess_errors(doc):
    """What makes doc not a valid Windows HostProcess workload ([] if nothing)."""
    errs = []
    kind = doc.get("kind")
    spec, labels = pod_of(doc)
    if spec is None:
        return [f"kind {kind!r} is not a workload"]
    if kind != "Pod":
        if doc.get("apiVersion") != "apps/v1":
            errs.append(f"apiVersion {doc.get('apiVersion')!r}, expected apps/v1")
        sel = ((doc.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        if not sel or any(labels.get(k) != v for k, v in sel.items()):
            errs.append(f"selector.matchLabels {sel} does not match the template's labels {labels}")
    psc = spec.get("securityContext") or {}
    pwo = psc.get("windowsOptions") or {}
    if spec.get("hostNetwork") is not True:
        errs.append("hostNetwork is not true (required for HostProcess pods)")
    if (spec.get("nodeSelector") or {}).get("kubernetes.io/os") != "windows":
        errs.append("nodeSelector kubernetes.io/os: windows is missing")
    if "os" in spec and (spec.get("os") or {}).get("name") != "windows":
        errs.append(f"spec.os.name is {(spec.get('os') or {}).get('name')!r}, not windows")
    for k in LINUX_ONLY_POD:
        if k in psc:
            errs.append(f"pod securityContext.{k} is Linux-only")
    containers = (spec.get("initContainers") or []) + (spec.get("containers") or [])
    if not spec.get("containers"):
        errs.append("no containers")
    for c in containers:
        name = c.get("name", "?")
        csc = c.get("securityContext") or {}
        cwo = csc.get("windowsOptions") or {}
        hp = cwo.get("hostProcess", pwo.get("hostProcess"))
        if hp is not True:
            errs.append(f"container {name}: hostProcess is not true (every container of a HostProcess pod must be)")
        if not cwo.get("runAsUserName", pwo.get("runAsUserName")):
            errs.append(f"container {name}: no runAsUserName")
        for k in LINUX_ONLY_CONTAINER:
            if k in csc:
                errs.append(f"container {name}: securityContext.{k} is Linux-only")
        if not c.get("image"):
            errs.append(f"container {name}: no image")
    return errs


def users_of(doc):
    spec, _ = pod_of(doc)
    pwo = (spec.get("securityContext") or {}).get("windowsOptions") or {}
    out = set()
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        cwo = (c.get("securityContext") or {}).get("windowsOptions") or {}
        out.add(cwo.get("runAsUserName", pwo.get("runAsUserName")))
    return out


def csi_proxy_errors(doc):
    errs = hostprocess_errors(doc)
    if users_of(doc) != {SYSTEM}:
        errs.append(f"runs as {users_of(doc)}, expected {SYSTEM}")
    spec, _ = pod_of(doc)
    cmd = [" ".join((c.get("command") or []) + (c.get("args") or [])) for c in spec.get("containers") or []]
    if not any("csi-proxy.exe" in x for x in cmd):
        errs.append(f"no container runs csi-proxy.exe: {cmd}")
    return errs


def lp_groups():
    with open(os.path.join(ROOT, "config", "csi-proxy.least-privilege.example.yaml")) as f:
        cfg = yaml.safe_load(f)
    names = set()
    for g in (cfg.get("groups") or {}).values():
        names.update((g or {}).get("allowedCallers") or [])
    return {n for n in names if n.upper() not in ("SYSTEM", "NT AUTHORITY\\SYSTEM")}


def plugin_errors(doc):
    errs = hostprocess_errors(doc)
    groups = lp_groups()
    for u in users_of(doc):
        if u not in groups:
            errs.append(f"runs as {u!r}, not one of the least-privilege config's groups {sorted(groups)}")
        if u and ("SYSTEM" in u.upper() or "ADMINISTRATOR" in u.upper()):
            errs.append(f"runs as {u!r}: not least privilege")
    return errs


CHECKS = {"csi-proxy-hostprocess.yaml": csi_proxy_errors,
          "example-plugin-least-privilege.yaml": plugin_errors}


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def main():
    files = sorted(glob.glob(os.path.join(ROOT, "deploy", "*.yaml")))
    names = {os.path.basename(p) for p in files}
    for want in CHECKS:
        result(want in names, f"deploy/{want} exists")
    docs = {}
    for path in files:
        name = os.path.basename(path)
        try:
            docs[name] = load(path)
        except yaml.YAMLError as e:
            result(False, f"deploy/{name} is valid YAML", e)
            continue
        result(bool(docs[name]), f"deploy/{name} is valid YAML ({len(docs[name])} document(s))")
        check = CHECKS.get(name, hostprocess_errors)
        for d in docs[name]:
            if pod_of(d)[0] is None:
                continue
            errs = check(d)
            result(not errs, f"deploy/{name}: {d.get('kind')} {d['metadata']['name']} is a valid HostProcess workload", "\n".join(errs))

    # --- self-test: every rule can fail ----------------------------------------
    def broken(name, what, mutate, check):
        if name not in docs:
            return
        d = copy.deepcopy(docs[name][0])
        try:
            mutate(d)
        except (KeyError, IndexError, TypeError) as e:
            result(False, f"self-test: {name} with {what}: could not be applied", f"missing {e}")
            return
        errs = check(d)
        result(bool(errs), f"self-test: {name} with {what} is refused", "the check passed it")

    def spec(d):
        return d["spec"]["template"]["spec"]

    def c0(d):
        return spec(d)["containers"][0]

    P = "csi-proxy-hostprocess.yaml"
    broken(P, "hostNetwork removed", lambda d: spec(d).pop("hostNetwork"), csi_proxy_errors)
    broken(P, "hostNetwork: false", lambda d: spec(d).update(hostNetwork=False), csi_proxy_errors)
    broken(P, "a container's hostProcess: false",
           lambda d: c0(d)["securityContext"]["windowsOptions"].update(hostProcess=False), csi_proxy_errors)
    broken(P, "hostProcess removed from pod and container",
           lambda d: (spec(d)["securityContext"]["windowsOptions"].pop("hostProcess"),
                      c0(d)["securityContext"]["windowsOptions"].pop("hostProcess")), csi_proxy_errors)
    broken(P, "a non-HostProcess init container",
           lambda d: (spec(d)["securityContext"]["windowsOptions"].pop("hostProcess"),
                      spec(d).update(initContainers=[{"name": "init", "image": "x"}])), csi_proxy_errors)
    broken(P, "runAsUserName removed from pod and container",
           lambda d: (spec(d)["securityContext"]["windowsOptions"].pop("runAsUserName"),
                      c0(d)["securityContext"]["windowsOptions"].pop("runAsUserName")), csi_proxy_errors)
    broken(P, "runAsUserName ContainerAdministrator",
           lambda d: c0(d)["securityContext"]["windowsOptions"].update(runAsUserName="ContainerAdministrator"),
           csi_proxy_errors)
    broken(P, "the os nodeSelector removed", lambda d: spec(d).pop("nodeSelector"), csi_proxy_errors)
    broken(P, "os.name linux", lambda d: spec(d).update(os={"name": "linux"}), csi_proxy_errors)
    broken(P, "privileged: true", lambda d: c0(d)["securityContext"].update(privileged=True), csi_proxy_errors)
    broken(P, "allowPrivilegeEscalation", lambda d: c0(d)["securityContext"].update(allowPrivilegeEscalation=False),
           csi_proxy_errors)
    broken(P, "pod runAsUser", lambda d: spec(d)["securityContext"].update(runAsUser=0), csi_proxy_errors)
    broken(P, "a selector that misses the labels",
           lambda d: d["spec"]["selector"]["matchLabels"].update(app="other"), csi_proxy_errors)
    broken(P, "no csi-proxy.exe", lambda d: (c0(d).pop("command"), c0(d).update(args=["-v", "4"])), csi_proxy_errors)
    L = "example-plugin-least-privilege.yaml"
    broken(L, "runAsUserName NT AUTHORITY\\SYSTEM",
           lambda d: [c["securityContext"]["windowsOptions"].update(runAsUserName=SYSTEM) for c in spec(d)["containers"]],
           plugin_errors)
    broken(L, "a group the config does not name",
           lambda d: [c["securityContext"]["windowsOptions"].update(runAsUserName="csi-proxy-other")
                      for c in spec(d)["containers"]], plugin_errors)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
