"""Driver-contract suite: the Windows node code of AWS EBS, Azure
Disk and GCE PD, modelled in Python, replayed through python3-grpcio against
the native build and the storage simulator.

Each driver is a class whose stage/publish/stats/expand/unpublish/unstage
methods make the csi-proxy calls the driver's Go code makes, in its order,
with its paths (normalised or raw, `c:` or `C:` or no drive), on the v1 pipes
it dials, and applying the driver's own decisions to the answers: EBS's
error-text regex, the `VolumeIds[0]` indexing, the serial / Page83 / LUN
matching, the use of TotalBytes. A failure therefore reads like the
driver's: "EBS NodeStageVolume: Internal: ..." or "IndexError" (the Go
driver's panic). Sources: docs/reference/DRIVER-CONTRACTS.md §1 (EBS), §3
(Azure Disk), §4 (GCE PD); the fact numbers are those of §9, and FACTS
below maps each to the tests that prove it (a meta-test checks that every
fact 1-27 is named, and that every test FACTS names exists). Fact 28 is
NetApp Trident's SMB unstage (the Trident model below).

Kubelet's own steps (creating the staging directory, the pod directory)
are done on the host side, as kubelet does them without csi-proxy.

Two transports run the same models: natively, grpcio over the
Unix sockets of build/native/csi-proxy; with CSI_PROXY_WINE_PREFIX set
(test/wine/drivers.sh), csi-proxy-cli.exe under Wine over the named pipes
of csi-proxy-sim.exe (the Win32 file-system host and the storage
simulator) in that prefix, one `wine` process per call. Both answer
call(group, version, method, **fields) -> (response message or None,
grpc.StatusCode, details). What Wine cannot show is an explicit skip
naming the fact and the reason (wine_cannot below).
"""
import concurrent.futures
import ntpath
import os
import re
import socket
import subprocess
import time

import grpc
import pytest
from google.protobuf import json_format

from conftest import STORAGE_FIXTURE, Caller, Server

WINE_PREFIX = os.environ.get("CSI_PROXY_WINE_PREFIX")

OK = grpc.StatusCode.OK
GIB = 1 << 30
MIB = 1 << 20

# The fixture: test/fixtures/storage.yaml plus two GCE disks, and volumes
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
"""

EBS_REGEX = re.compile(r"(Get-Item -Path \S+).Target, output: , error: <nil>|because it does not exist")
VOLUME_ID = re.compile(r"^\\\\\?\\Volume\{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}\\$")

# §9 fact -> the tests that prove it (checked by test_every_fact_is_named).
FACTS = {
    1: ["test_fact01_pipes_each_driver_dials"],
    2: ["test_fact02_27_ebs_leaked_connections_and_parallel_stages"],
    3: ["test_fact03_errors_carry_their_text"],
    4: ["test_ebs_lifecycle"],
    5: ["test_ebs_kubelet_retries"],
    6: ["test_ebs_lifecycle", "test_azuredisk_lifecycle", "test_gce_lifecycle"],
    7: ["test_azuredisk_lifecycle", "test_gce_lifecycle"],
    8: ["test_ebs_lifecycle"],
    9: ["test_ebs_lifecycle", "test_gce_lifecycle"],
    10: ["test_azuredisk_kubelet_retries", "test_gce_kubelet_retries"],
    11: ["test_fact11_rmdir_force", "test_azuredisk_lifecycle", "test_fact11c_rmdir_mount_folder"],
    12: ["test_ebs_restage_after_unstage", "test_fact12_14_16_offline_restage"],
    13: ["test_gce_lifecycle", "test_fact13_set_disk_state_same_state"],
    14: ["test_ebs_restage_after_unstage", "test_azuredisk_lifecycle",
         "test_fact12_14_16_offline_restage", "test_fact26_probes_during_a_long_stage"],
    15: ["test_ebs_lifecycle"],
    16: ["test_ebs_lifecycle", "test_gce_lifecycle", "test_fact12_14_16_offline_restage"],
    17: ["test_ebs_kubelet_retries"],
    18: ["test_fact18_disk_matching"],
    19: ["test_fact19_lunid_decimal"],
    20: ["test_fact20_mount_volume_idempotent"],
    21: ["test_ebs_lifecycle", "test_gce_lifecycle", "test_fact21_resize_zero_noop"],
    22: ["test_fact22_disk_stats_every_listed_disk"],
    23: ["test_ebs_lifecycle", "test_azuredisk_lifecycle"],
    24: ["test_fact24_smb_global_mapping"],
    25: ["test_fact25_azuredisk_resize_by_disk_number"],
    26: ["test_fact26_probes_during_a_long_stage"],
    27: ["test_fact02_27_ebs_leaked_connections_and_parallel_stages"],
    28: ["test_fact28_trident_filesystem_windows_go_62_unstage_one_backslash"],
}


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
        for d in ("var/lib/kubelet", "csi-work"):
            os.makedirs(os.path.join(self.drive_c, d), exist_ok=True)
        with open(os.path.join(self.drive_c, "csi", "drivers.yaml"), "w") as f:
            f.write(fixture)
        self.log = open(os.path.join(prefix, "drivers-server.log"), "w")
        self.proc = subprocess.Popen(
            ["wine", "C:\\csi\\csi-proxy-sim.exe", "-working-dir", "C:\\csi-work"],
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


@pytest.fixture
def gaps(srv):
    return WineGaps(srv)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    if WINE_PREFIX:
        s = WineServer(WINE_PREFIX, fixture_text())
    else:
        base = tmp_path_factory.mktemp("drivers")
        fixture = base / "storage.yaml"
        fixture.write_text(fixture_text())
        s = NativeServer(str(base / "srv"), fixture=str(fixture))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def call(srv, pb):
    return WineCaller(srv, pb) if srv.wine else Caller(srv, pb)


# --- what a driver sees ----------------------------------------------------------------


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


class EBS(Driver):
    """aws-ebs-csi-driver, csi-proxy v1 mode (DRIVER-CONTRACTS §1)."""
    NAME = "EBS"
    ROOT = "c:\\var\\lib\\kubelet"  # every EBS path is normalised: lower-case c: (fact 8)
    PLUGIN = "ebs.csi.aws.com"

    def find_device_path(self, volume_id):
        """A fresh disk client per call (fact 2: it leaks one idle
        connection each time), ListDiskIDs, serial contains the id without
        dashes (fact 18)."""
        self.leaked.append(self.srv.leak_connection("disk", "v1"))
        want = volume_id.replace("-", "")
        for n, ids in self.rpc("disk", "ListDiskIDs").diskIDs.items():
            if want in ids.serial_number:
                return str(n)
        raise DriverError(self.NAME, "FindDevicePath", "NotFound", f"no disk for {volume_id}")

    def __init__(self, call, srv):
        super().__init__(call, srv)
        self.leaked = []

    def get_device_name_from_mount(self, path, rpc):
        """(device, refcount); a regex match on the error means "not mounted"."""
        try:
            vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=path).volume_id
            n = self.rpc("volume", "GetDiskNumberFromVolumeID", volume_id=vol).disk_number
            return str(n), 1
        except ProxyError as e:
            if EBS_REGEX.search(str(e)):
                return "", 0
            raise DriverError(self.NAME, rpc, "Internal",
                              f"error getting device name from mount: {e}") from e

    def stage(self, volume_id, stg):
        stg = self.normalize(stg)
        n = self.find_device_path(volume_id)
        if not self.rpc("filesystem", "PathExists", path=stg).exists:
            self.rpc("filesystem", "Mkdir", path=stg)
        dev, _ = self.get_device_name_from_mount(stg, "NodeStageVolume")
        if dev == n:  # fact 17: the two numbers compared as decimal strings
            return "already staged"
        # FormatAndMount
        self.rpc("disk", "PartitionDisk", disk_number=int(n))
        self.rpc("disk", "SetDiskState", disk_number=int(n), is_online=True)
        vol = self.rpc("volume", "ListVolumesOnDisk", disk_number=int(n)).volume_ids[0]  # no length check
        if not self.rpc("volume", "IsVolumeFormatted", volume_id=vol).formatted:
            self.rpc("volume", "FormatVolume", volume_id=vol)
        self.rpc("volume", "MountVolume", volume_id=vol, target_path=stg)
        # NeedResize (inverted in the driver: true when the disk is not bigger)
        if self.need_resize(n, stg):
            self.resize(stg)
        return "staged"

    def need_resize(self, n, stg):
        try:
            self.rpc("disk", "Rescan")
        except ProxyError:
            pass  # only logged
        disk = self.rpc("disk", "GetDiskStats", disk_number=int(n)).total_bytes
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=stg).volume_id
        fs = self.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes
        return disk <= fs + 4096

    def resize(self, path):
        try:
            self.rpc("disk", "Rescan")
        except ProxyError:
            pass
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=path).volume_id
        self.rpc("volume", "ResizeVolume", volume_id=vol, size_bytes=0)

    def unstage(self, stg):
        stg = self.normalize(stg)
        _, refs = self.get_device_name_from_mount(stg, "NodeUnstageVolume")
        if refs == 0:
            return "not staged"
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=stg).volume_id
        self.rpc("volume", "UnmountVolume", volume_id=vol, target_path=stg)
        self.rpc("filesystem", "Rmdir", path=stg, force=True)
        n = self.rpc("volume", "GetDiskNumberFromVolumeID", volume_id=vol).disk_number
        self.rpc("disk", "SetDiskState", disk_number=n, is_online=False)
        return "unstaged"

    def publish(self, stg, pub):
        stg, pub = self.normalize(stg), self.normalize(pub)
        if self.rpc("filesystem", "PathExists", path=pub).exists:
            self.rpc("filesystem", "Rmdir", path=pub, force=True)
        if self.rpc("filesystem", "PathExists", path=pub).exists:
            if self.rpc("filesystem", "IsSymlink", path=pub).is_symlink:
                return "already published"
        self.rpc("filesystem", "CreateSymlink", source_path=stg, target_path=pub)
        return "published"

    def stats(self, pub):
        if not self.rpc("filesystem", "PathExists", path=self.normalize(pub)).exists:
            raise DriverError(self.NAME, "NodeGetVolumeStats", "NotFound", pub)
        return "local GetDiskFreeSpaceEx"  # no csi-proxy volume RPC

    def expand(self, volume_id, pub):
        pub = self.normalize(pub)
        self.get_device_name_from_mount(pub, "NodeExpandVolume")
        n = self.find_device_path(volume_id)
        self.resize(pub)
        return self.rpc("disk", "GetDiskStats", disk_number=int(n)).total_bytes

    def unpublish(self, pub):
        self.rpc("filesystem", "Rmdir", path=self.normalize(pub), force=True)


class AzureDisk(Driver):
    """azuredisk-csi-driver, csi-proxy v1 mode (DRIVER-CONTRACTS §3)."""
    NAME = "AzureDisk"
    ROOT = "C:\\var\\lib\\kubelet"
    PLUGIN = "disk.csi.azure.com"

    def device_with_lun(self, lun):
        try:
            self.rpc("disk", "Rescan")
        except ProxyError:
            pass
        for n, loc in self.rpc("disk", "ListDiskLocations").disk_locations.items():
            if loc.LUNID.lower() == str(lun).lower():  # strings.EqualFold (fact 19)
                return str(n)
        raise DriverError(self.NAME, "NodeStageVolume", "Internal", f"no disk at LUN {lun}")

    def stage(self, lun, stg):
        n = self.device_with_lun(lun)
        nstg = self.normalize(stg)
        if self.rpc("filesystem", "PathExists", path=nstg).exists:
            if self.rpc("filesystem", "IsSymlink", path=nstg).is_symlink:
                os.listdir(self.host(stg))  # the driver's local ReadDir
                return "already staged"
        # formatAndMount: no SetDiskState
        self.rpc("disk", "PartitionDisk", disk_number=int(n))
        vol = self.rpc("volume", "ListVolumesOnDisk", disk_number=int(n)).volume_ids[0]
        if not self.rpc("volume", "IsVolumeFormatted", volume_id=vol).formatted:
            self.rpc("volume", "FormatVolume", volume_id=vol)
        self.rpc("volume", "MountVolume", volume_id=vol, target_path=nstg)
        # needResizeVolume is always true on Windows: ResizeVolume(source = "<N>")
        try:
            self.rpc("volume", "ResizeVolume", volume_id=n, size_bytes=0)
        except ProxyError as e:
            raise DriverError(self.NAME, "NodeStageVolume", "Internal", str(e)) from e
        return "staged"

    def unstage(self, stg):
        try:  # raw path; errors only logged
            vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=stg).volume_id
            try:
                self.rpc("volume", "WriteVolumeCache", volume_id=vol)
            except ProxyError:
                pass
        except ProxyError:
            pass
        self.rpc("filesystem", "Rmdir", path=self.normalize(stg), force=True)
        return "unstaged"

    def publish(self, stg, pub):
        stg, pub = self.normalize(stg), self.normalize(pub)
        if self.rpc("filesystem", "PathExists", path=pub).exists:
            self.rpc("filesystem", "Rmdir", path=pub, force=True)
        if self.rpc("filesystem", "PathExists", path=pub).exists:
            return "already published"
        self.rpc("filesystem", "CreateSymlink", source_path=stg, target_path=pub)
        return "published"

    def stats(self, pub):
        """Raw pod symlink path (fact 6, 7); Available = Total - Used."""
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=pub).volume_id
        s = self.rpc("volume", "GetVolumeStats", volume_id=vol)
        return s.total_bytes, s.used_bytes, s.total_bytes - s.used_bytes

    def expand(self, pub, required_bytes):
        try:
            vol = self.rpc("volume", "GetVolumeIDFromTargetPath",
                           target_path=self.normalize(pub)).volume_id
        except ProxyError as e:
            raise DriverError(self.NAME, "NodeExpandVolume", "NotFound", str(e)) from e
        gib = lambda b: (b + GIB - 1) // GIB  # noqa: E731
        total = self.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes  # fact 23, Q3
        if gib(total) < gib(required_bytes):
            raise DriverError(self.NAME, "NodeExpandVolume", "Unavailable", "block size too small")
        self.rpc("volume", "ResizeVolume", volume_id=vol, size_bytes=0)
        return self.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes

    def unpublish(self, pub):
        self.rpc("filesystem", "Rmdir", path=self.normalize(pub), force=True)


class GCE(Driver):
    """gcp-compute-persistent-disk-csi-driver (DRIVER-CONTRACTS §4). Its
    manifest mounts the drive-less kubelet root; IsSymlink, MountVolume and
    the stats/resize GetVolumeIDFromTargetPath get raw paths."""
    NAME = "GCE"
    PLUGIN = "pd.csi.storage.gke.io"

    def __init__(self, call, srv, root):
        super().__init__(call, srv)
        self.ROOT = root

    def device_path(self, device_name, nvme_ns=None):
        if nvme_ns is not None:
            for n, ids in self.rpc("disk", "ListDiskIDs").diskIDs.items():
                if ids.page83.startswith("eui."):
                    eui = ids.page83
                else:
                    s = ids.serial_number
                    s = (s[:-1] if s.endswith(".") else s).replace("_", "")
                    if len(s) != 32 or re.fullmatch(r"[0-9a-fA-F]{32}", s) is None:
                        continue
                    eui = "eui." + s
                try:
                    if int(eui[4:20], 16) == nvme_ns:
                        return str(n)
                except ValueError:
                    continue
        for n, ids in self.rpc("disk", "ListDiskIDs").diskIDs.items():
            if ids.page83 and ids.page83.split()[-1] == device_name:
                return str(n)
        raise DriverError(self.NAME, "NodeStageVolume", "Internal", f"no disk for {device_name}")

    def stage(self, device_name, stg, nvme_ns=None):
        n = int(self.device_path(device_name, nvme_ns))
        try:  # raw path; an error means "not mounted"
            if self.rpc("filesystem", "IsSymlink", path=stg).is_symlink:
                return "already staged"
        except ProxyError:
            pass
        # GCE reads .TotalBytes before the error: an error is a nil dereference (fact 22).
        size = self.rpc("disk", "GetDiskStats", disk_number=n).total_bytes
        assert size > 0
        self.rpc("disk", "PartitionDisk", disk_number=n)
        self.rpc("disk", "SetDiskState", disk_number=n, is_online=True)
        vols = self.rpc("volume", "ListVolumesOnDisk", disk_number=n).volume_ids
        if not vols:
            raise DriverError(self.NAME, "NodeStageVolume", "Internal", f"no volume on disk {n}")
        vol = vols[0]
        if not self.rpc("volume", "IsVolumeFormatted", volume_id=vol).formatted:
            self.rpc("volume", "FormatVolume", volume_id=vol)
        self.rpc("volume", "MountVolume", volume_id=vol, target_path=stg)  # raw
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=stg).volume_id  # raw
        self.rpc("volume", "ResizeVolume", volume_id=vol, size_bytes=0)
        return "staged"

    def unstage(self, stg):
        stg = self.normalize(stg)
        if not self.rpc("filesystem", "PathExists", path=stg).exists:
            return "not staged"
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=stg).volume_id
        self.rpc("volume", "UnmountVolume", volume_id=vol, target_path=stg)
        self.rpc("filesystem", "Rmdir", path=stg, force=True)
        n = self.rpc("volume", "GetDiskNumberFromVolumeID", volume_id=vol).disk_number
        self.rpc("disk", "SetDiskState", disk_number=n, is_online=False)
        return "unstaged"

    def publish(self, stg, pub):
        npub = self.normalize(pub)
        if self.rpc("filesystem", "PathExists", path=npub).exists:
            self.rpc("filesystem", "Rmdir", path=npub, force=True)
        os.makedirs(os.path.dirname(self.host(pub)), exist_ok=True)  # local MkdirAll(parent)
        try:
            self.rpc("filesystem", "CreateSymlink", source_path=self.normalize(stg), target_path=npub)
        except ProxyError:
            if self.rpc("filesystem", "IsSymlink", path=pub).is_symlink:
                self.rpc("filesystem", "Rmdir", path=npub)
            raise
        return "published"

    def stats(self, pub):
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=pub).volume_id
        s = self.rpc("volume", "GetVolumeStats", volume_id=vol)
        return s.total_bytes, s.used_bytes

    def expand(self, device_name, pub, required_bytes, nvme_ns=None):
        n = int(self.device_path(device_name, nvme_ns))
        vol = self.rpc("volume", "GetVolumeIDFromTargetPath", target_path=pub).volume_id
        self.rpc("volume", "ResizeVolume", volume_id=vol, size_bytes=0)
        total = self.rpc("disk", "GetDiskStats", disk_number=n).total_bytes
        if total < required_bytes:
            raise DriverError(self.NAME, "NodeExpandVolume", "Internal", f"{total} < {required_bytes}")
        return total

    def unpublish(self, pub):
        self.rpc("filesystem", "Rmdir", path=self.normalize(pub), force=True)


def staged_volume(d, stg):
    return d.rpc("volume", "GetVolumeIDFromTargetPath", target_path=d.normalize(stg)).volume_id


# --- full lifecycles ------------------------------------------------------------------


def test_ebs_lifecycle(call, srv, gaps):
    """NodeStage (fresh directory probed: facts 4, 8), NodePublish (fact 9),
    stats, expand through the pod symlink (fact 6), unpublish, unstage
    (GetDiskNumberFromVolumeID after the mount point is gone: fact 16)."""
    d = EBS(call, srv)
    stg, pub = d.staging("vol5"), d.pod("pod-ebs-1", "pv-ebs-5")
    d.kubelet_mkdir(ntpath.dirname(pub))
    assert d.stage("vol-0a1b2c3d4e5f60005", stg) == "staged"
    vol = staged_volume(d, stg)
    assert VOLUME_ID.match(vol), vol  # fact 15
    assert vol == d.rpc("volume", "ListVolumesOnDisk", disk_number=5).volume_ids[0]
    # fact 23: GetVolumeStats.TotalBytes is the file-system size
    fs = d.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes
    assert 0 < fs <= d.rpc("disk", "GetDiskStats", disk_number=5).total_bytes
    if gaps("6, 9 (publish, stats and expand through the pod symlink)", NO_SYMLINKS):
        # What Wine does show: the stub's "success" is not passed on as one.
        _, code, details = call("filesystem", "v1", "CreateSymlink", source_path=stg, target_path=pub)
        assert code == grpc.StatusCode.INTERNAL and "nothing exists at the link path" in details, details
    else:
        assert d.publish(stg, pub) == "published"
        assert os.path.islink(d.host(pub))  # fact 9: the link is at TargetPath
        assert os.path.realpath(d.host(pub)) == os.path.realpath(d.host(stg))
        assert d.stats(pub) == "local GetDiskFreeSpaceEx"
        # expand after the cloud grew the disk: Rescan shows 12 GiB (fact 21, 6)
        assert d.expand("vol-0a1b2c3d4e5f60005", pub) == 12 * GIB
        assert d.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes > fs
    d.unpublish(pub)
    assert not os.path.lexists(d.host(pub))
    assert d.unstage(stg) == "unstaged"
    assert not d.rpc("disk", "GetDiskState", disk_number=5).is_online
    gaps.report()


def test_ebs_kubelet_retries(call, srv, gaps):
    """After a timeout kubelet repeats: stage twice (the second sees the
    same disk number: fact 17), publish twice, unpublish twice, unstage
    twice and after the directory is gone (fact 5)."""
    d = EBS(call, srv)
    stg, pub = d.staging("vol6"), d.pod("pod-ebs-2", "pv-ebs-6")
    d.kubelet_mkdir(ntpath.dirname(pub))
    assert d.stage("vol-0a1b2c3d4e5f60006", stg) == "staged"
    assert d.stage("vol-0a1b2c3d4e5f60006", stg) == "already staged"
    if not gaps("6, 9 (publish twice)", NO_SYMLINKS):
        assert d.publish(stg, pub) == "published"
        assert d.publish(stg, pub) == "published"  # the old link removed, made again
    d.unpublish(pub)
    d.unpublish(pub)  # Rmdir(force) of a missing path: success
    assert d.unstage(stg) == "unstaged"
    assert d.unstage(stg) == "not staged"  # the path is gone: "because it does not exist"
    gaps.report()


def test_ebs_unstage_after_partial_failure(call, srv):
    """Unstage retry after UnmountVolume succeeded but the rest failed: the
    staging directory is a plain directory (the "(Get-Item ...)" text)."""
    d = EBS(call, srv)
    stg = d.staging("vol7")
    assert d.stage("vol-0a1b2c3d4e5f60007", stg) == "staged"
    vol = staged_volume(d, stg)
    d.rpc("volume", "UnmountVolume", volume_id=vol, target_path=stg)
    assert d.unstage(stg) == "not staged"
    d.rpc("filesystem", "Rmdir", path=stg, force=True)


def test_ebs_restage_after_unstage(call, srv):
    """Unstage leaves the disk offline; the next stage calls PartitionDisk
    before SetDiskState(online) (fact 12), and ListVolumesOnDisk right after
    the disk comes online must already list the volume, which the simulator
    announces ARRIVAL_MS later (fact 14)."""
    d = EBS(call, srv)
    stg = d.staging("vol8")
    assert d.stage("vol-0a1b2c3d4e5f60008", stg) == "staged"
    assert d.unstage(stg) == "unstaged"
    assert not d.rpc("disk", "GetDiskState", disk_number=8).is_online
    assert d.stage("vol-0a1b2c3d4e5f60008", stg) == "staged"
    assert d.unstage(stg) == "unstaged"


def test_azuredisk_lifecycle(call, srv, gaps):
    """LUN match (fact 19), PartitionDisk then VolumeIds[0] (fact 14), the
    ResizeVolume by disk number (fact 25), stats and expand through the raw
    pod symlink path (facts 6, 7, 23), unstage by Rmdir(force) of the mount
    folder with no UnmountVolume (fact 11c)."""
    d = AzureDisk(call, srv)
    stg, pub = d.staging("lun1"), d.pod("pod-az-1", "pv-az-1")
    d.kubelet_mkdir(stg)  # the driver does not create it on Windows
    d.kubelet_mkdir(ntpath.dirname(pub))
    assert d.stage(1, stg) == "staged"
    if not gaps("6, 7, 9 (publish, stats and expand through the raw pod symlink path)", NO_SYMLINKS):
        assert d.publish(stg, pub) == "published"
        total, used, avail = d.stats(pub)
        assert total > 0 and 0 <= used <= total and avail == total - used
        assert d.expand(pub, total) >= total
    d.unpublish(pub)
    assert d.unstage(stg) == "unstaged"
    assert not os.path.lexists(d.host(stg))
    gaps.report()


def test_azuredisk_kubelet_retries(call, srv, gaps):
    """A re-stage sees IsSymlink true on the mounted staging folder (fact
    10) and stops there; unstage twice. (Under Wine IsSymlink says false
    and the re-stage repeats every step, which must succeed again.)"""
    d = AzureDisk(call, srv)
    stg = d.staging("lun2")
    d.kubelet_mkdir(stg)
    assert d.stage(2, stg) == "staged"
    if gaps("10 (IsSymlink true on a mounted staging folder)", NO_MOUNT_FOLDERS):
        assert d.stage(2, stg) == "staged"
    else:
        assert d.stage(2, stg) == "already staged"
    assert d.unstage(stg) == "unstaged"
    assert d.unstage(stg) == "unstaged"
    gaps.report()


@pytest.mark.parametrize("root", ["C:\\var\\lib\\kubelet", "\\var\\lib\\kubelet"],
                         ids=["C-root", "driveless-root"])
def test_gce_lifecycle(call, srv, root, gaps):
    """Legacy Page83 match, GetDiskStats before formatting (fact 22),
    SetDiskState(online) on an online disk (fact 13), MountVolume and
    ResizeVolume(0) on the raw staging path (facts 7, 21), stats and expand
    on the raw pod symlink (fact 6), unstage (fact 16)."""
    d = GCE(call, srv, root)
    tag = "c" if root.startswith("C") else "nodrive"
    stg, pub = d.staging(f"gce-{tag}"), d.pod(f"pod-gce-{tag}", "pv-gce")
    d.kubelet_mkdir(stg)
    assert d.stage("pvc-gce-legacy", stg) == "staged"
    if not gaps("6, 9 (publish, stats and expand through the raw pod symlink path)", NO_SYMLINKS):
        assert d.publish(stg, pub) == "published"
        assert os.path.islink(d.host(pub))
        total, used = d.stats(pub)
        assert total > 0 and used <= total
        assert d.expand("pvc-gce-legacy", pub, 10 * GIB) >= 10 * GIB
    d.unpublish(pub)
    assert d.unstage(stg) == "unstaged"
    gaps.report()


def test_gce_kubelet_retries(call, srv, gaps):
    """NVMe match by the serial's EUI-64; re-stage stops at IsSymlink true on
    the mount folder (fact 10); unstage twice (PathExists false: success)."""
    d = GCE(call, srv, "C:\\var\\lib\\kubelet")
    stg = d.staging("gce-nvme")
    d.kubelet_mkdir(stg)
    assert d.device_path("pvc-gce-nvme", nvme_ns=0x12) == "18"
    assert d.stage("pvc-gce-nvme", stg, nvme_ns=0x12) == "staged"
    if gaps("10 (IsSymlink true on a mounted staging folder)", NO_MOUNT_FOLDERS):
        assert d.stage("pvc-gce-nvme", stg, nvme_ns=0x12) == "staged"  # every step again
    else:
        assert d.stage("pvc-gce-nvme", stg, nvme_ns=0x12) == "already staged"
    assert d.unstage(stg) == "unstaged"
    assert d.unstage(stg) == "not staged"
    gaps.report()


# --- single facts ---------------------------------------------------------------------


def test_fact01_pipes_each_driver_dials(srv):
    pipes = srv.pipes()
    for pipe in ["filesystem-v1", "disk-v1", "volume-v1", "smb-v1",
                 "filesystem-v1beta1", "disk-v1beta2", "volume-v1beta1", "volume-v1beta2"]:
        assert pipe in pipes, pipe


def test_fact02_27_ebs_leaked_connections_and_parallel_stages(call, srv):
    """Every FindDevicePath leaks one idle disk-v1 connection (fact 2); two
    EBS stages on different disks at once (fact 27)."""
    d = EBS(call, srv)
    for _ in range(40):
        d.find_device_path("vol-0a1b2c3d4e5f60005")
    assert len(d.leaked) == 40
    jobs = [("vol-0a1b2c3d4e5f60006", d.staging("par6")), ("vol-0a1b2c3d4e5f60007", d.staging("par7"))]
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        done = list(ex.map(lambda j: EBS(call, srv).stage(*j), jobs))
    assert done == ["staged", "staged"]
    for _, stg in jobs:
        assert d.unstage(stg) == "unstaged"
    for s in d.leaked:
        s.close()


def test_fact03_errors_carry_their_text(call, srv):
    """Drivers see only "rpc error: code = ... desc = <text>": the text
    names the object and the cause."""
    d = EBS(call, srv)
    with pytest.raises(ProxyError) as ei:
        d.rpc("disk", "GetDiskStats", disk_number=4242)
    assert "4242" in str(ei.value) and "not found" in str(ei.value)
    assert str(ei.value).startswith("rpc error: code = NotFound desc = ")


def test_fact11_rmdir_force(call, srv, tmp_path, gaps):
    """(a) a missing path; (b) a link to a staged folder and a link whose
    target is outside the roots (natively what an SMB link's UNC target
    is): the link goes, the target and its files stay."""
    d = EBS(call, srv)
    d.rpc("filesystem", "Rmdir", path=d.pod("no-such-pod", "pv"), force=True)
    stg, pub = d.staging("rmdir11b"), d.pod("pod-11b", "pv")
    d.kubelet_mkdir(stg)
    d.kubelet_mkdir(ntpath.dirname(pub))
    with open(os.path.join(d.host(stg), "data"), "w") as f:
        f.write("keep")
    if not gaps("11b (Rmdir(force) of a pod symlink to a staged folder)", NO_SYMLINKS):
        d.rpc("filesystem", "CreateSymlink", source_path=stg, target_path=pub)
        d.rpc("filesystem", "Rmdir", path=pub, force=True)
        assert not os.path.lexists(d.host(pub))
        assert open(os.path.join(d.host(stg), "data")).read() == "keep"
    share = tmp_path / "share"
    share.mkdir()
    (share / "file").write_text("remote")
    unc = d.staging("smb-like")
    os.makedirs(os.path.dirname(d.host(unc)), exist_ok=True)
    os.symlink(str(share), d.host(unc))
    if gaps("11b (Rmdir(force) removes a link whose target is outside the roots)", UNIX_LINKS):
        call("filesystem", "v1", "Rmdir", path=unc, force=True)  # its answer is not the fact here
        os.unlink(d.host(unc))
    else:
        d.rpc("filesystem", "Rmdir", path=unc, force=True)
        assert not os.path.lexists(d.host(unc))
    assert (share / "file").read_text() == "remote"  # the target and its files stay
    d.rpc("filesystem", "Rmdir", path=stg, force=True)
    gaps.report()


def test_fact11c_rmdir_mount_folder(call, srv):
    """Rmdir(force) of a mount folder removes the mount point: a new folder
    at the same path is not the old volume's mount point any more."""
    wine_cannot(srv, "11c (Rmdir(force) of a mount folder removes the mount point)", NO_MOUNT_FOLDERS)
    d = AzureDisk(call, srv)
    stg = d.staging("lun3")
    d.kubelet_mkdir(stg)
    assert d.stage(3, stg) == "staged"
    vol = staged_volume(d, stg)
    d.rpc("filesystem", "Rmdir", path=d.normalize(stg), force=True)
    d.kubelet_mkdir(stg)
    r, code, _ = call("volume", "v1", "GetVolumeIDFromTargetPath", target_path=stg)
    assert code != OK, f"{stg} still resolves to {r.volume_id}"
    d.rpc("volume", "MountVolume", volume_id=vol, target_path=stg)  # can be mounted again
    d.rpc("filesystem", "Rmdir", path=d.normalize(stg), force=True)


def test_fact12_14_16_offline_restage(call, srv):
    """The restage sequence on a disk unstage left offline, without the
    path probes: PartitionDisk on the offline partitioned disk is a no-op
    (fact 12), ListVolumesOnDisk right after SetDiskState(online) lists the
    volume although the simulator announces it ARRIVAL_MS later (fact 14),
    GetDiskNumberFromVolumeID after the mount point is gone (fact 16)."""
    d = GCE(call, srv, "C:\\var\\lib\\kubelet")
    stg = d.staging("fact12")
    d.kubelet_mkdir(stg)
    d.rpc("disk", "PartitionDisk", disk_number=13)
    vol = d.rpc("volume", "ListVolumesOnDisk", disk_number=13).volume_ids[0]
    d.rpc("volume", "FormatVolume", volume_id=vol)
    d.rpc("volume", "MountVolume", volume_id=vol, target_path=stg)
    d.rpc("volume", "UnmountVolume", volume_id=vol, target_path=stg)
    d.rpc("filesystem", "Rmdir", path=stg, force=True)
    assert d.rpc("volume", "GetDiskNumberFromVolumeID", volume_id=vol).disk_number == 13
    d.rpc("disk", "SetDiskState", disk_number=13, is_online=False)
    for _ in range(2):
        d.rpc("disk", "PartitionDisk", disk_number=13)
        assert not d.rpc("disk", "GetDiskState", disk_number=13).is_online
        d.rpc("disk", "SetDiskState", disk_number=13, is_online=True)
        assert d.rpc("volume", "ListVolumesOnDisk", disk_number=13).volume_ids == [vol]
        assert d.rpc("volume", "IsVolumeFormatted", volume_id=vol).formatted
        d.rpc("disk", "SetDiskState", disk_number=13, is_online=False)


def test_fact13_set_disk_state_same_state(call, srv):
    d = GCE(call, srv, "C:\\var\\lib\\kubelet")
    d.rpc("disk", "SetDiskState", disk_number=4, is_online=True)
    d.rpc("disk", "SetDiskState", disk_number=4, is_online=True)
    d.rpc("disk", "SetDiskState", disk_number=10, is_online=False)  # offline already
    assert not d.rpc("disk", "GetDiskState", disk_number=10).is_online


def test_fact18_disk_matching(call, srv):
    assert EBS(call, srv).find_device_path("vol-0a1b2c3d4e5f60007") == "7"
    g = GCE(call, srv, "C:\\var\\lib\\kubelet")
    assert g.device_path("pvc-gce-legacy") == "17"
    assert g.device_path("pvc-gce-nvme", nvme_ns=0x12) == "18"
    assert g.device_path("pvc-staged") == "9"  # "Google  PersistentDisk  pvc-staged"


def test_fact19_lunid_decimal(call, srv):
    d = AzureDisk(call, srv)
    locs = d.rpc("disk", "ListDiskLocations").disk_locations
    assert locs[11].LUNID == "11" and locs[1].LUNID == "1"
    for loc in locs.values():
        assert re.fullmatch(r"0|[1-9][0-9]*", loc.LUNID), loc
    assert d.device_with_lun(4) == "4"


def test_fact20_mount_volume_idempotent(call, srv):
    """MountVolume on an existing empty directory, then again (same volume,
    already mounted): both succeed; another volume there is refused."""
    d = GCE(call, srv, "C:\\var\\lib\\kubelet")
    stg = d.staging("fact20")
    d.kubelet_mkdir(stg)
    vol = "\\\\?\\Volume{16161616-0016-4000-8000-000000000001}\\"  # disk 16, E:
    d.rpc("volume", "MountVolume", volume_id=vol, target_path=stg)
    d.rpc("volume", "MountVolume", volume_id=vol, target_path=stg)
    assert staged_volume(d, stg) == vol
    other = "\\\\?\\Volume{9a9a9a9a-0009-4000-8000-000000000001}\\"
    _, code, details = call("volume", "v1", "MountVolume", volume_id=other, target_path=stg)
    assert code == grpc.StatusCode.FAILED_PRECONDITION and vol in details, details
    d.rpc("volume", "UnmountVolume", volume_id=vol, target_path=stg)
    d.rpc("filesystem", "Rmdir", path=d.normalize(stg), force=True)


def test_fact21_resize_zero_noop(call, srv):
    """ResizeVolume(0) on a volume that fills its partition: success, no change."""
    d = EBS(call, srv)
    vol = "\\\\?\\Volume{11111111-0011-4000-8000-000000000001}\\"  # MBR11, 4000 MiB of 4 GiB
    before = d.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes
    d.rpc("volume", "ResizeVolume", volume_id=vol, size_bytes=0)
    d.rpc("volume", "ResizeVolume", volume_id=vol, size_bytes=0)
    assert d.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes == before


def test_fact22_disk_stats_every_listed_disk(call, srv):
    """GCE dereferences the answer before the error: every disk ListDiskIDs
    names (offline, identity-less, boot) must answer GetDiskStats."""
    d = GCE(call, srv, "C:\\var\\lib\\kubelet")
    numbers = list(d.rpc("disk", "ListDiskIDs").diskIDs.keys())
    assert {0, 10, 12, 17, 18} <= set(numbers)
    for n in numbers:
        assert d.rpc("disk", "GetDiskStats", disk_number=n).total_bytes > 0, n


class SMB(Driver):
    """csi-driver-smb, csi-proxy v1 mode (DRIVER-CONTRACTS §2, fact 24): the
    staging path is normalised and removed before the mapping; the remote
    path has no trailing backslash; the user is DOMAIN\\user; unstage reads
    the link back (os.Readlink) and unmaps what it names, sub-path and all."""
    NAME = "SMB"
    PLUGIN = "smb.csi.k8s.io"

    def stage(self, source, stg, user="AZURE\\account", password="smb-Pa55"):
        stg = self.normalize(stg)
        self.rpc("filesystem", "Rmdir", path=stg, force=True)  # LocalPath must not exist
        self.kubelet_mkdir(ntpath.dirname(stg))
        self.rpc("smb", "NewSmbGlobalMapping", remote_path=source.rstrip("\\"),
                 local_path=stg, username=user, password=password)
        return stg

    def unstage(self, stg):
        target = os.readlink(self.host(stg))  # what Go's os.Readlink gives the driver
        self.rpc("filesystem", "Rmdir", path=stg, force=True)
        self.rpc("smb", "RemoveSmbGlobalMapping", remote_path=target)
        return target


def test_fact24_smb_global_mapping(call, srv):
    """NewSmbGlobalMapping maps the root idempotently and makes a directory
    link at LocalPath that reads back as \\\\host\\share\\...; two volumes on one
    share; RemoveSmbGlobalMapping with the link's full text (a sub-path and a
    trailing backslash) reduces it to the root; an unstage retry succeeds."""
    wine_cannot(srv, 24, "NewSmbGlobalMapping makes a directory symlink at LocalPath, and " + NO_SYMLINKS)
    d = SMB(call, srv)
    s1 = d.stage("\\\\fs1.example.com\\share\\pvc-1", d.staging("smb-1"))
    s2 = d.stage("\\\\FS1.example.com\\share\\pvc-2", d.staging("smb-2"))
    assert os.readlink(d.host(s1)) == "\\\\fs1.example.com\\share\\pvc-1\\"
    assert os.readlink(d.host(s2)) == "\\\\FS1.example.com\\share\\pvc-2\\"
    assert d.unstage(s2).startswith("\\\\FS1.example.com\\share\\pvc-2")
    assert not os.path.lexists(d.host(s2))
    target = d.unstage(s1)
    # kubelet retries an unstage whose response it lost: the link is gone,
    # the mapping too, and both calls still succeed (Q5)
    d.rpc("filesystem", "Rmdir", path=s1, force=True)
    d.rpc("smb", "RemoveSmbGlobalMapping", remote_path=target)


class Trident(Driver):
    """NetApp Trident's Windows SMB node code (NetApp/trident 71dd716,
    DRIVER-CONTRACTS facts 28-30), csi-proxy v1 clients. Stage
    (utils/mount/mount_windows.go MountSMBPath): an existing staging path
    is removed (Rmdir, Force), the parent made, and the export
    "\\\\\\\\" + SMBServer + SMBPath (utils/mount/mount.go:143, '/' made '\\\\'
    at mount_windows.go:335) mapped with the staging path as LocalPath.
    Unstage (core/node/detach.go detachSMBVolume, mount_windows.go
    UmountSMBPath): Rmdir(Force) of the staging path, then
    RemoveSmbGlobalMapping of "\\\\" + SMBServer + SMBPath
    (utils/filesystem/filesystem_windows.go:62 GetUnmountPath): ONE leading
    backslash. ONTAP NAS volumes have SMBPath "/" + the internal name
    (storage_drivers/ontap/ontap_nas.go:1634)."""
    NAME = "Trident"
    PLUGIN = "csi.trident.netapp.io"

    def stage(self, server, smb_path, stg, link=True, user="CORP\\svc-trident", password="Tr1dent-Pa55"):
        export = f"\\\\{server}{smb_path}".replace("/", "\\")
        stg = self.normalize(stg)
        if self.rpc("filesystem", "PathExists", path=stg).exists:
            self.rpc("filesystem", "Rmdir", path=stg, force=True)
        parent = ntpath.dirname(stg)
        if not self.rpc("filesystem", "PathExists", path=parent).exists:
            self.rpc("filesystem", "Mkdir", path=parent)
        self.rpc("smb", "NewSmbGlobalMapping", remote_path=export, local_path=stg if link else "",
                 username=user, password=password)
        return export

    def unstage(self, server, smb_path, stg):
        mapping = ("\\" + server + smb_path).replace("/", "\\")
        self.rpc("filesystem", "Rmdir", path=self.normalize(stg), force=True)
        self.rpc("smb", "RemoveSmbGlobalMapping", remote_path=mapping)
        return mapping


def test_fact28_trident_filesystem_windows_go_62_unstage_one_backslash(call, srv, gaps):
    """Trident's NodeUnstage sends RemoveSmbGlobalMapping with one leading
    backslash (`\\svm1\\trident_pvc_1` on the wire; trident
    utils/filesystem/filesystem_windows.go:62). Upstream takes the first two
    non-empty components as the root and unmaps it, so every Trident SMB
    unstage depends on it: the call succeeds, the root mapping is gone (the
    share maps again under other credentials), a retry succeeds, and a
    qtree volume's deeper path and a snapshot path reduce to their root."""
    d = Trident(call, srv)
    no_link = gaps(24, "NewSmbGlobalMapping's LocalPath is a directory symlink, and " + NO_SYMLINKS)
    for server, smb_path in [("svm1.corp.example", "/trident_pvc_1"),
                             ("svm1.corp.example", "/share/trident_qtree_pool/pvc_2"),
                             ("anf1.corp.example", "/vol1/~snapshot/snap1")]:
        stg = d.staging(smb_path.rsplit("/", 1)[-1])
        export = d.stage(server, smb_path, stg, link=not no_link)
        if not no_link:
            assert os.readlink(d.host(stg)) == export + "\\"
        mapping = d.unstage(server, smb_path, stg)
        assert mapping.startswith("\\" + server + "\\") and not mapping.startswith("\\\\"), mapping
        assert not os.path.lexists(d.host(stg))
        root = "\\\\" + server + "\\" + smb_path.strip("/").split("/")[0]
        # unmapped: the simulated server takes one user name per server, as
        # Windows does, so another user maps the root only once it is gone
        d.rpc("smb", "NewSmbGlobalMapping", remote_path=root, username="CORP\\other", password="x")
        d.rpc("smb", "RemoveSmbGlobalMapping", remote_path=root)
        d.unstage(server, smb_path, stg)  # kubelet retries: still success
    gaps.report()


def test_fact25_azuredisk_resize_by_disk_number(call, srv):
    """Azure Disk's NodeStage sends ResizeVolume(VolumeId = "<disk number>"):
    the disk's single volume is grown (a no-op when at its maximum); a disk
    with no volume, several volumes, or the boot disk are refused with text
    naming the disk."""
    d = AzureDisk(call, srv)
    vol = "\\\\?\\Volume{9a9a9a9a-0009-4000-8000-000000000001}\\"  # disk 9: 2 of 8 GiB
    d.rpc("volume", "ResizeVolume", volume_id="9", size_bytes=0)
    assert d.rpc("volume", "GetVolumeStats", volume_id=vol).total_bytes > 7 * GIB
    d.rpc("volume", "ResizeVolume", volume_id="9", size_bytes=0)  # at its maximum: no-op
    _, code, details = call("volume", "v1", "ResizeVolume", volume_id="12", size_bytes=0)
    assert code == grpc.StatusCode.NOT_FOUND and "disk 12" in details, details
    _, code, details = call("volume", "v1", "ResizeVolume", volume_id="15", size_bytes=0)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "disk 15" in details, details
    _, code, details = call("volume", "v1", "ResizeVolume", volume_id="0", size_bytes=0)
    assert code == grpc.StatusCode.FAILED_PRECONDITION, details
    _, code, details = call("volume", "v1", "ResizeVolume", volume_id="4242", size_bytes=0)
    assert code == grpc.StatusCode.NOT_FOUND and "4242" in details, details


def test_fact26_probes_during_a_long_stage(call, srv):
    """No deadlines: a stage waiting for its volume to arrive (the disk just
    came online) finishes on its own while PathExists/IsSymlink probes of
    the same path are answered meanwhile."""
    d = GCE(call, srv, "C:\\var\\lib\\kubelet")
    stg = d.staging("fact26")
    d.kubelet_mkdir(stg)
    d.rpc("disk", "PartitionDisk", disk_number=4)
    d.rpc("disk", "SetDiskState", disk_number=4, is_online=False)
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        fut = ex.submit(_format_and_mount, call, srv, 4, stg)
        for _ in range(5):
            assert d.rpc("filesystem", "PathExists", path=d.normalize(stg)).exists
        assert fut.result(timeout=30) == "staged"
    assert d.unstage(stg) == "unstaged"


def _format_and_mount(call, srv, n, stg):
    """GCE's formatAndMount on disk n, an offline partitioned disk."""
    d = GCE(call, srv, "C:\\var\\lib\\kubelet")
    d.rpc("disk", "PartitionDisk", disk_number=n)
    d.rpc("disk", "SetDiskState", disk_number=n, is_online=True)
    vols = d.rpc("volume", "ListVolumesOnDisk", disk_number=n).volume_ids
    if not vols:
        raise DriverError("GCE", "NodeStageVolume", "Internal", f"no volume on disk {n}")
    if not d.rpc("volume", "IsVolumeFormatted", volume_id=vols[0]).formatted:
        d.rpc("volume", "FormatVolume", volume_id=vols[0])
    d.rpc("volume", "MountVolume", volume_id=vols[0], target_path=stg)
    return "staged"


def test_every_fact_is_named():
    names = {n for n, v in globals().items() if n.startswith("test_") and callable(v)}
    for fact in sorted(set(range(1, 28)) | set(FACTS)):
        assert FACTS.get(fact), f"fact {fact} has no test"
        for t in FACTS[fact]:
            assert t in names, f"fact {fact}: no test named {t}"
