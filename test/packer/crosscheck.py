#!/usr/bin/env python3
"""The Packer scripts against the node scripts and the programs: do the names
and arguments scripts/packer/*.ps1 and the template use exist, and mean what
scripts/node/*.cmd and csi-proxy(-cli).exe make of them? Static, offline.

  crosscheck.py [ROOT]    ROOT: a tree with scripts/, service/, cli/, mk/
                          (default: this repository)

Prints "ok - ..." / "not ok - ..." lines; exit 1 when one is not ok.

Checked:
  * every .cmd and .exe a .ps1 or the template names is one the release
    archive holds (scripts/node/*.cmd, which mk/dist.mk packs, and the two
    exes);
  * per powershell provisioner: the CSI_PROXY_* variables the template
    passes are the ones its script reads, and the other way round; for the
    script that runs install.cmd, the variables install.cmd reads count as
    read, but CSI_PROXY_CONFIG and CSI_PROXY_DIR must not be passed (they
    would become the service's -config / install directory: the template
    only uploads the config to a directory deleted before the image is
    taken) and the script must remove them from its environment;
  * install.cmd documents exactly the CSI_PROXY_* variables it reads;
  * the service name the scripts use is the exe's (CP_SERVICE_NAME);
  * install.ps1 puts the config where the exe reads it by default
    (CP_CONFIG_DEFAULT_PATH), and the variable's description says so;
  * install.ps1 gives the config folder the protected DACL csi-proxy.exe
    install gives it (CP_CONFIG_DIR_SDDL), before the config is copied in;
  * `csi-proxy-cli.exe health` exists and every option the scripts give it
    is one it takes;
  * the node self-test: mk/dist.mk packs test/windows/selftest.ps1, and the
    template runs it (selftest-node.ps1, which runs the archive's
    selftest.ps1 and exits non-zero when it fails) in the provisioner right
    after the one that runs install.cmd.
"""
import glob
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
P = os.path.join(ROOT, "scripts", "packer")
N = os.path.join(ROOT, "scripts", "node")
failed = 0


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def check(name, cond, detail=""):
    global failed
    if cond:
        print(f"ok - {name}")
    else:
        failed += 1
        print(f"not ok - {name}")
        if detail:
            for line in str(detail).splitlines()[:20]:
                print(f"    {line}")


def env_read_ps1(text):
    return set(re.findall(r"\$env:(CSI_PROXY_\w+)", text))


def env_read_cmd(text):
    return set(re.findall(r"%(CSI_PROXY_\w+)%", text))


node_cmds = sorted(os.path.basename(f) for f in glob.glob(os.path.join(N, "*.cmd")))
ps1s = {os.path.basename(f): read("scripts", "packer", os.path.basename(f))
        for f in sorted(glob.glob(os.path.join(P, "*.ps1")))}
template = read("scripts", "packer", "csi-proxy-eks-windows.pkr.hcl")
variables = read("scripts", "packer", "variables.pkr.hcl")
dist_mk = read("mk", "dist.mk")

# --- what the archive holds ------------------------------------------------------------
check("mk/dist.mk packs scripts/node/*.cmd and both exes",
      "$(wildcard scripts/node/*.cmd)" in dist_mk and "$(WIN)/csi-proxy.exe" in dist_mk
      and "$(WIN)/csi-proxy-cli.exe" in dist_mk)
named_cmds = set()
named_exes = set()
for name, text in list(ps1s.items()) + [("the template", template)]:
    named_cmds |= set(re.findall(r"\b([\w-]+\.cmd)\b", text))
    named_exes |= set(re.findall(r"\b(csi-proxy[\w-]*\.exe)\b", text))
missing = sorted(named_cmds - set(node_cmds))
check(f"every .cmd the Packer scripts name is in scripts/node (so in the archive): {sorted(named_cmds)}",
      named_cmds and not missing, f"missing: {missing}")
bad_exes = sorted(named_exes - {"csi-proxy.exe", "csi-proxy-cli.exe"})
check(f"every exe the Packer scripts name is one of the archive's: {sorted(named_exes)}",
      not bad_exes, f"not in the archive: {bad_exes}")

# --- environment: template -> provisioner script -> install.cmd ---------------------------
install_cmd = read("scripts", "node", "install.cmd")
cmd_reads = env_read_cmd(install_cmd)
cmd_doc = set(re.findall(r"^rem\s+(CSI_PROXY_\w+)\s", install_cmd, re.M))
check(f"install.cmd documents exactly the variables it reads: {sorted(cmd_reads)}",
      cmd_doc == cmd_reads, f"documented {sorted(cmd_doc)}, read {sorted(cmd_reads)}")

provisioners = re.findall(r'provisioner "powershell" \{(.*?)\n  \}', template, re.S)
seen = 0
for body in provisioners:
    m = re.search(r'script\s*=\s*"\$\{path\.root\}/([\w.-]+\.ps1)"', body)
    if not m:
        continue
    seen += 1
    script = m.group(1)
    text = ps1s.get(script)
    if text is None:
        check(f"the template's script {script} exists", False)
        continue
    passed = set(re.findall(r'"(CSI_PROXY_\w+)=', body))
    reads = env_read_ps1(text)
    runs_install = "install.cmd" in text
    if runs_install:
        forbidden = passed & {"CSI_PROXY_CONFIG", "CSI_PROXY_DIR"}
        check(f"{script}: the template passes neither CSI_PROXY_CONFIG nor CSI_PROXY_DIR "
              "(install.cmd would make them the service's -config / install directory)",
              not forbidden, f"passed: {sorted(forbidden)}")
        removed = set(re.findall(r"Env:(CSI_PROXY_\w+)", " ".join(
            re.findall(r"^Remove-Item[^\n]*", text, re.M))))
        check(f"{script}: removes CSI_PROXY_CONFIG and CSI_PROXY_DIR from its environment "
              "before install.cmd", {"CSI_PROXY_CONFIG", "CSI_PROXY_DIR"} <= removed
              and text.find("Remove-Item -Path Env:") < text.find("install.cmd\""),
              f"removed: {sorted(removed)}")
        reads_all = reads | (cmd_reads - removed)
    else:
        reads_all = reads
    unused = sorted(passed - reads_all)
    unset = sorted(reads - passed)
    check(f"{script}: the template passes exactly what it reads ({len(passed)} variables)",
          not unused and not unset, f"passed, never read: {unused}\nread, never passed: {unset}")
check("the template runs the Packer scripts", seen >= 3, f"{seen} powershell scripts")
check("local_groups reaches install.cmd as CSI_PROXY_GROUPS",
      '"CSI_PROXY_GROUPS=${var.local_groups}"' in template and 'variable "local_groups"' in variables
      and "CSI_PROXY_GROUPS" in cmd_reads)

# --- the service name -----------------------------------------------------------------
m = re.search(r'#define CP_SERVICE_NAME L"([^"]+)"', read("service", "install_win.h"))
svc = m.group(1) if m else None
ps1_names = set()
for text in ps1s.values():
    ps1_names |= set(re.findall(r"Name='([\w-]+)'", text))
    ps1_names |= set(re.findall(r"Get-Service -Name ([\w-]+)", text))
cmd_names = set()
for c in node_cmds:
    cmd_names |= set(re.findall(r"sc\.exe (?:query|start) ([\w-]+)", read("scripts", "node", c)))
check(f"the service name: the exe's ({svc}) is the one the .ps1 ({sorted(ps1_names)}) and the "
      f".cmd ({sorted(cmd_names)}) use", svc and ps1_names == {svc} and cmd_names == {svc})

# --- where the config goes -------------------------------------------------------------
m = re.search(r'#define CP_CONFIG_DEFAULT_PATH "([^"]+)"', read("service", "config.h"))
default = m.group(1).replace("\\\\", "\\") if m else ""
inst = ps1s.get("install.ps1", "")
ok = (default.lower() == r"c:\programdata\csi-proxy\config.yaml"
      and re.search(r'Join-Path \$env:ProgramData "csi-proxy"', inst)
      and re.search(r'Join-Path \$dir "config.yaml"', inst)
      and r"C:\\ProgramData\\csi-proxy\\config.yaml" in variables)
check(f"install.ps1 puts the config where the exe reads it by default ({default}), as config_path "
      "says", bool(ok))

# --- the config folder's DACL ----------------------------------------------------------
m = re.search(r'#define CP_CONFIG_DIR_SDDL L"([^"]+)"', read("service", "cfgdir_win.h"))
want_sddl = m.group(1) if m else ""
got = re.findall(r'SetSecurityDescriptorSddlForm\("([^"]+)"\)', inst)
ok = bool(want_sddl) and got == [want_sddl] and re.search(r"Set-Acl -Path \$dir", inst) and (
    inst.find("Set-Acl -Path $dir") < inst.find("Copy-Item -Force -Path $env:CSI_PROXY_CONFIG_UPLOAD"))
check(f"install.ps1 protects the config folder as csi-proxy.exe install does ({want_sddl}) "
      f"before it copies the config in (got {got})", bool(ok))

# --- csi-proxy-cli.exe health and its options -------------------------------------------
main_c = read("cli", "main.c")
opts = set(re.findall(r'IS\("([\w-]+)"\)', read("cli", "health_cmd.c")))
check("csi-proxy-cli.exe has a health command", 'strcmp(argv[1], "health")' in main_c)
used = set()
for text in [read("scripts", "node", c) for c in node_cmds] + list(ps1s.values()):
    for line in re.findall(r"csi-proxy-cli\.exe[\"']?\s+health([^\n]*)|\"%CLI%\" health([^\n]*)|"
                           r"& \$cli health([^\n]*)", text):
        used |= set(re.findall(r"(?:^|\s)-{1,2}([\w-]+)", "".join(line)))
    for line in re.findall(r"csi-proxy-cli\.exe\" health([^\n]*)", text):
        used |= set(re.findall(r"(?:^|\s)-{1,2}([\w-]+)", line))
cfg = {"config"} if any("%CFGFLAG%" in read("scripts", "node", c) for c in node_cmds) else set()
bad = sorted((used | cfg) - opts)
check(f"every option the scripts give health is one it takes: {sorted(used | cfg)} of {sorted(opts)}",
      not bad, f"unknown to health: {bad}")

# --- the node self-test ------------------------------------------------------------------
check("mk/dist.mk packs the node self-test (test/windows/selftest.ps1 and its common.ps1)",
      "test/windows/selftest.ps1" in dist_mk and "test/windows/common.ps1" in dist_mk)
order = [re.search(r'script\s*=\s*"\$\{path\.root\}/([\w.-]+\.ps1)"', b) for b in
         re.findall(r'provisioner "[\w-]+" \{(.*?)\n  \}', template, re.S)]
order = [m.group(1) if m else None for m in order]
runners = [i for i, n in enumerate(order) if n and "install.cmd" in ps1s.get(n, "")]
st = ps1s.get("selftest-node.ps1", "")
check("the template runs the archive's selftest.ps1 right after the provisioner that runs install.cmd "
      f"(provisioners: {order})",
      len(runners) == 1 and runners[0] + 1 < len(order) and order[runners[0] + 1] == "selftest-node.ps1")
check("selftest-node.ps1 runs the release's selftest.ps1 and fails when it fails",
      re.search(r'Join-Path \$release "selftest\.ps1"', st) is not None
      and re.search(r"-File \$selftest\s*\n\$code = \$LASTEXITCODE", st) is not None
      and re.search(r"if \(\$code -ne 0\) \{[^\n]*; exit 1 \}", st) is not None,
      st)

sys.exit(1 if failed else 0)
