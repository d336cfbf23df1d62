"""The driver suite's harness: the fixture text, the native and Wine
servers and callers, the named skips for what Wine cannot show, the errors
a driver sees and the Driver base class the models derive from."""
import os
import re
import socket
import subprocess
import time

import grpc
import pytest
from google.protobuf import json_format

from conftest import STORAGE_FIXTURE, Server

WINE_PREFIX = os.environ.get("CSI_PROXY_WINE_PREFIX")

OK = grpc.StatusCode.OK
GIB = 1 << 30
MIB = 1 << 20

# The fixture: test/fixtures/storage.yaml plus two GCE disks and two ECS
# task disks, and volumes
# that arrive 300 ms after their disk comes online, as on Windows (the
# volume manager announces them asynchronously).
ARRIVAL_MS = 300
EXTRA_DISKS = """
  # GCE PD, legacy SCSI: Page83 is the T10 vendor ID "Google  <device-name>".
  - {number: 17, size: 10GiB, vendor: "Google  ", product: "PersistentDisk  ", serial: "gce-legacy-17",
     page83: [{code_set: ascii, type: vendor_id, ascii: "Google  pvc-gce-legacy"}],
     scsi: {port: 3, path: 0, target: 17, lun: 0}}
  # GCE PD, NVMe: no eui. Page83; the serial carries the EUI-64, whose
  # first 16 hex digits are the namespace id the metadata server reports.
  - {number: 18, size: 10GiB, vendor: "NVMe    ", product: "nvme_card-pd    ",
     serial: "0000_0000_0000_0012_0000_0000_0000_0001.",
     page83: [{code_set: binary, type: naa, hex: "5000c500aaaa0018"}],
     location: "PCI Slot 18 : Adapter 18 : Port 0 : Target 0 : LUN 0"}
  # EBS volumes attached to ECS tasks (the ECS agent's EBS daemon).
  - {number: 21, size: 10GiB, grow_to: 12GiB, vendor: "NVMe    ", product: "Amazon Elastic B",
     serial: "vol0ec5a1b2c3d4e50021_00000001."}
  - {number: 22, size: 10GiB, grow_to: 12GiB, vendor: "NVMe    ", product: "Amazon Elastic B",
     serial: "vol0ec5a1b2c3d4e50022_00000001."}
"""

# The ECS agent stages task volumes under its own directory, outside the
# kubelet root (DRIVER-CONTRACTS fact 38): the server has it as a working
# directory besides C:\csi-work.
ECS_ROOT = "C:\\ProgramData\\Amazon\\ECS\\ebs"
WORKING_DIRS = ("C:\\csi-work", ECS_ROOT)

EBS_REGEX = re.compile(r"(Get-Item -Path \S+).Target, output: , error: <nil>|because it does not exist")
VOLUME_ID = re.compile(r"^\\\\\?\\Volume\{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}\\$")


def fixture_text():
    with open(STORAGE_FIXTURE) as f:
        return f"volume_arrival_ms: {ARRIVAL_MS}\n" + f.read() + EXTRA_DISKS


class NativeServer(Server):
    """build/native/csi-proxy: Unix sockets, C:\\x at <root>/C/x."""
    wine = False

    def pipes(self):
        return {f[len("csi-proxy-"):-len(".sock")] for f in os.listdir(self.sock) if f.endswith(".sock")}

    def leak_connection(self, group, version):
        """An idle connection left open, as a Go client never closed."""
        leak = socket.socket(socket.AF_UNIX)
        leak.connect(f"{self.sock}/csi-proxy-{group}-{version}.sock")
        return leak


class WineServer:
    """csi-proxy-sim.exe under Wine in the prefix test/wine/drivers.sh
    prepared (C:\\csi holds the executables): named pipes, C:\\x at
    <prefix>/drive_c/x."""
    wine = True

    def __init__(self, prefix, fixture):
        self.prefix = prefix
        self.drive_c = os.path.join(prefix, "drive_c")
        os.makedirs(os.path.join(self.drive_c, "var", "lib", "kubelet"), exist_ok=True)
        for d in WORKING_DIRS:
            os.makedirs(self.host(d), exist_ok=True)
        with open(os.path.join(self.drive_c, "csi", "drivers.yaml"), "w") as f:
            f.write(fixture)
        self.log = open(os.path.join(prefix, "drivers-server.log"), "w")
        self.proc = subprocess.Popen(
            ["wine", "C:\\csi\\csi-proxy-sim.exe", "-working-dir", ",".join(WORKING_DIRS)],
            env=dict(os.environ, CSI_PROXY_SIM_FIXTURE="C:\\csi\\drivers.yaml"),
            stdout=self.log, stderr=subprocess.STDOUT)
        self.holders = []
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.pipecheck().returncode == 0:
                return
            assert self.proc.poll() is None, "csi-proxy-sim.exe exited at start"
            time.sleep(0.1)
        raise AssertionError("csi-proxy-sim.exe did not open its 23 pipes")

    @staticmethod
    def pipecheck(*args):
        return subprocess.run(["wine", "C:\\csi\\pipecheck.exe", *args],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def host(self, winpath):
        drive, rest = winpath.split(":", 1)
        assert drive.upper() == "C", winpath
        return os.path.join(self.drive_c, *[p for p in rest.split("\\") if p])

    def pipes(self):
        """The pipes a client can open (pipecheck.exe: WaitNamedPipeW,
        CreateFileW, as the Go clients dial)."""
        names = ["filesystem-v1", "disk-v1", "volume-v1", "smb-v1", "filesystem-v1beta1",
                 "disk-v1beta2", "volume-v1beta1", "volume-v1beta2"]
        return {n for n in names if self.pipecheck(f"csi-proxy-{n}").returncode == 0}

    def leak_connection(self, group, version):
        """An idle connection held open by a pipecheck.exe process."""
        p = subprocess.Popen(["wine", "C:\\csi\\pipecheck.exe", "-hold", "600000",
                              f"csi-proxy-{group}-{version}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.holders.append(p)
        return Held(p)

    def stop(self):
        for p in self.holders + [self.proc]:
            p.terminate()
        for p in self.holders + [self.proc]:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        self.log.close()


class Held:
    """A pipecheck.exe process holding a connection; close() ends it."""

    def __init__(self, proc):
        self.proc = proc

    def close(self):
        self.proc.terminate()
        self.proc.wait(10)


class WineCaller:
    """csi-proxy-cli.exe under Wine, one process per call: the request as
    JSON (json_format of the request message), the answer parsed back into
    the response message from the cli's JSON line and "status: ..." line;
    its exit code is the gRPC code."""

    STATUS = re.compile(r"^status: (?:OK|\S+ \((\d+)\)(?:: (.*))?)$")

    def __init__(self, srv, pb):
        self.srv, self.pb = srv, pb

    def __call__(self, group, version, method, timeout=10, **fields):
        mod = self.pb(group, version)
        service = mod.DESCRIPTOR.services_by_name[
            {"filesystem": "Filesystem", "disk": "Disk", "volume": "Volume", "smb": "Smb",
             "iscsi": "Iscsi", "system": "System"}[group]]
        m = service.methods_by_name[method]
        req = getattr(mod, m.input_type.name)(**fields)
        resp = getattr(mod, m.output_type.name)()
        args = ["wine", "C:\\csi\\csi-proxy-cli.exe"]
        if timeout:
            args += ["--timeout", f"{int(timeout * 1000)}ms"]
        args += [group, version, method,
                 json_format.MessageToJson(req, preserving_proto_field_name=True, indent=None)]
        for _ in range(2):
            p = subprocess.run(args, capture_output=True, text=True)
            # The wine launcher very rarely exits 1 silently on a loaded machine.
            if not (p.returncode == 1 and not p.stdout and not p.stderr):
                break
        out = p.stdout.replace("\r", "").splitlines()
        status = [self.STATUS.match(line) for line in out if line.startswith("status: ")]
        if not status or status[-1] is None:
            # no call made (cannot connect: 14; bad request: 3): the text is on stderr
            return None, grpc.StatusCode(_code(p.returncode)), p.stderr.strip()
        code, msg = status[-1].groups()
        if code is None:
            body = [line for line in out if line.startswith("{")]
            return json_format.Parse(body[0] if body else "{}", resp), grpc.StatusCode.OK, ""
        return None, _status_code(int(code)), msg or ""


def _status_code(n):
    for c in grpc.StatusCode:
        if c.value[0] == n:
            return c
    return grpc.StatusCode.UNKNOWN


def _code(rc):
    return _status_code(rc)


# What Wine cannot show, and why (the reasons the Wine run's skips name).
NO_SYMLINKS = ("Wine 8's CreateSymbolicLinkW is a stub (the server answers INTERNAL, nothing exists "
               "at the link path) and Wine shows no reparse attribute on Unix symlinks, so there is "
               "no pod symlink to publish, read or expand through")
UNIX_LINKS = ("Wine shows no reparse attribute on a Unix symlink made on the host: to the Win32 "
              "file-system host it is a plain directory (the run still checks that nothing "
              "behind it is lost)")
NO_MOUNT_FOLDERS = ("the Win32 file-system host cannot see the storage simulator's mount points, so "
                    "IsSymlink/Rmdir of a staging folder treat it as a plain directory")


def wine_cannot(srv, facts, reason):
    """An explicit, named skip of a whole test Wine cannot show."""
    if srv.wine:
        pytest.skip(f"fact {facts} not shown under Wine: {reason}")


class WineGaps:
    """Steps of a flow that Wine cannot show: gaps(facts, reason) is True
    under Wine (the caller leaves the step out and runs the rest of the
    flow); report() at the end of the test then skips it, naming each gap.
    Natively it is always False and report() does nothing."""

    def __init__(self, srv):
        self.srv, self.notes = srv, []

    def __call__(self, facts, reason):
        if not self.srv.wine:
            return False
        self.notes.append(f"fact {facts}: {reason}")
        return True

    def report(self):
        if self.notes:
            pytest.skip("not shown under Wine (the rest of this flow ran and passed): "
                        + "; ".join(self.notes))


class ProxyError(Exception):
    """A csi-proxy error as the Go client returns it: drivers see only
    err.Error(), "rpc error: code = <code> desc = <text>" (fact 3)."""

    def __init__(self, method, code, details):
        self.method, self.code, self.details = method, code, details
        name = "".join(w.capitalize() for w in code.name.split("_"))
        super().__init__(f"rpc error: code = {name} desc = {details}")


class DriverError(Exception):
    """What the driver returns to kubelet (a gRPC code and its message)."""

    def __init__(self, driver, rpc, code, msg):
        super().__init__(f"{driver} {rpc}: {code}: {msg}")
        self.code = code


class Driver:
    NAME = "driver"
    ROOT = "C:\\var\\lib\\kubelet"
    PLUGIN = "driver.csi.example.com"

    def __init__(self, call, srv):
        self.call, self.srv = call, srv

    def rpc(self, group, method, timeout=None, **fields):
        # No driver sets a deadline (fact 26): timeout=None.
        r, code, details = self.call(group, "v1", method, timeout=timeout, **fields)
        if code != OK:
            raise ProxyError(method, code, details)
        return r

    @staticmethod
    def normalize(p):
        """util.NormalizeWindowsPath / mount.NormalizeWindowsPath."""
        p = p.replace("/", "\\")
        return "c:" + p if p.startswith("\\") else p

    def staging(self, handle):
        return f"{self.ROOT}\\plugins\\kubernetes.io\\csi\\{self.PLUGIN}\\{handle}\\globalmount"

    def pod(self, uid, pv):
        return f"{self.ROOT}\\pods\\{uid}\\volumes\\kubernetes.io~csi\\{pv}\\mount"

    # kubelet's local steps (no csi-proxy)
    def host(self, p):
        p = self.normalize(p)
        return self.srv.host(p)

    def kubelet_mkdir(self, p):
        os.makedirs(self.host(p), exist_ok=True)


def staged_volume(d, stg):
    return d.rpc("volume", "GetVolumeIDFromTargetPath", target_path=d.normalize(stg)).volume_id
