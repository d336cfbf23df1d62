"""NVMe namespaces in ListDiskLocations, on the storage simulator.

Azure v6/v7 sizes present data disks as namespaces of one NVMe controller:
Windows gives every namespace the same SCSI address (azuredisk found
Win32_DiskDrive.SCSILogicalUnit 0 on all of them), so each would read
"Adapter A, Target 0, LUN 0", and a driver taking the first disk at its LUN
(azuredisk: the LUN is NSID - 1) would format another disk. The rule
(docs/reference/disk-locations.md): an NVMe disk whose namespace ID Windows
reports answers LUN = NSID - 1; two disks of one adapter that would still
answer the same (Adapter, Target, LUN) are left out of the map.
"""
import pytest

from conftest import Caller
from drivers.azuredisk import AzureDisk
from drivers.harness import DriverError, NativeServer


def name_string(nsid, serial):
    """NVME_SCSI_NAME_STRING (nvme.h): PCIVendorID[4], ModelNumber[40],
    NamespaceID[4], SerialNumber[20], ASCII."""
    s = "1414" + "MSFT NVMe Accelerator v1.0".ljust(40) + f"{nsid:04X}" + serial.ljust(20)
    assert len(s) == 68
    return s


def nvme_disk(number, nsid, port=9, serial="SN-AZ-V6-0001", name=True):
    p83 = f'[{{code_set: ascii, type: scsi_name_string, ascii: "{name_string(nsid, serial)}"}}]' \
        if name else '[{code_set: binary, type: eui64, hex: "00000000000000%02x"}]' % number
    return (f'  - {{number: {number}, size: 4GiB, vendor: "NVMe    ", product: "MSFT NVMe Accelera",'
            f' bus_type: 17, page83: {p83}, scsi: {{port: {port}, path: 0, target: 0, lun: 0}}}}\n')


# The boot disk has no SCSI address here, so that only data disks are in the
# map; one SCSI data disk on adapter 1.
BASE = """disks:
  - {number: 0, size: 128GiB, boot: true, system: true, style: gpt, vendor: "Msft    ",
     product: "Virtual Disk    ", serial: "OS0000"}
  - {number: 1, size: 10GiB, vendor: "Msft    ", product: "Virtual Disk    ", serial: "DATA0001",
     page83: [{code_set: binary, type: naa, hex: "60022480aa00000000000000000000f1"}],
     scsi: {port: 1, path: 0, target: 0, lun: 5}}
"""

# Namespaces 1 and 2 of one controller (adapter 9, LUNs 0 and 1 to Azure),
# namespace 3 of it as disk 32 listed before namespace 2's disk; two
# namespaces of another controller (adapter 10) whose IDs Windows does not
# give; a namespace alone on its controller (adapter 11, as EBS on Nitro).
EXTRA = (nvme_disk(30, 1) + nvme_disk(32, 3) + nvme_disk(31, 2)
         + nvme_disk(33, 1, port=10, name=False) + nvme_disk(34, 2, port=10, name=False)
         + nvme_disk(35, 1, port=11, serial="vol0123456789abcdef"))


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    base = tmp_path_factory.mktemp("nvme")
    fixture = base / "storage.yaml"
    fixture.write_text(BASE + EXTRA)
    s = NativeServer(str(base / "srv"), fixture=str(fixture))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def call(srv, pb):
    return Caller(srv, pb)


def locations(call, version):
    r, code, details = call("disk", version, "ListDiskLocations")
    assert r is not None, (code, details)
    return {int(k): v for k, v in r.disk_locations.items()}


@pytest.mark.parametrize("version", ["v1", "v1beta3", "v1beta2", "v1beta1", "v1alpha1"])
def test_namespaces_answer_nsid_minus_one(call, version):
    locs = locations(call, version)
    got = {n: (locs[n].Adapter, locs[n].Target, locs[n].LUNID) for n in (30, 31, 32) if n in locs}
    assert got == {30: ("9", "0", "0"), 31: ("9", "0", "1"), 32: ("9", "0", "2")}


def test_no_two_disks_of_one_adapter_answer_the_same_lun(call):
    locs = locations(call, "v1")
    seen = {}
    for n, loc in locs.items():
        key = (loc.Adapter, loc.Target, loc.LUNID)
        assert key not in seen, f"disks {seen.get(key)} and {n} both answer {key}"
        seen[key] = n
    # namespaces whose IDs Windows does not give cannot be told apart: left
    # out rather than both LUN 0
    assert 33 not in locs and 34 not in locs


def test_a_namespace_alone_on_its_controller_is_lun_zero(call):
    locs = locations(call, "v1")
    assert (locs[35].Adapter, locs[35].Target, locs[35].LUNID) == ("11", "0", "0")


def test_scsi_disks_keep_their_address(call):
    locs = locations(call, "v1")
    assert (locs[1].Adapter, locs[1].Target, locs[1].LUNID) == ("1", "0", "5")
    assert 0 not in locs


def test_azuredisk_picks_the_disk_at_its_lun(call, srv):
    """azuredisk's device_with_lun: the first disk whose LUNID equals the
    LUN (strings.EqualFold) is the one it stages and formats."""
    d = AzureDisk(call, srv)
    assert [d.device_with_lun(lun) for lun in (1, 2, 5)] == ["31", "32", "1"]
    # LUN 0: namespace 1 of the Azure controller, or the EBS-style disk of
    # this mixed fixture (a node has one or the other), never namespace 2 or 3
    assert d.device_with_lun(0) in ("30", "35")
    with pytest.raises(DriverError):
        d.device_with_lun(77)
