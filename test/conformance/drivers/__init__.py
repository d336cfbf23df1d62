"""Driver-contract suite: the Windows node code of real CSI node plugins
(AWS EBS, Azure Disk, GCE PD, csi-driver-smb, NetApp Trident), modelled in
Python, replayed through python3-grpcio against the native build and the
storage simulator, or over the named pipes under Wine.

Each driver is a class whose stage/publish/stats/expand/unpublish/unstage
methods make the csi-proxy calls the driver's Go code makes, in its order,
with its paths (normalised or raw, `c:` or `C:` or no drive), on the v1 pipes
it dials, and applying the driver's own decisions to the answers: EBS's
error-text regex, the `VolumeIds[0]` indexing, the serial / Page83 / LUN
matching, the use of TotalBytes. A failure therefore reads like the
driver's: "EBS NodeStageVolume: Internal: ..." or "IndexError" (the Go
driver's panic). Sources: docs/reference/DRIVER-CONTRACTS.md §1 (EBS), §2
(csi-driver-smb), §3 (Azure Disk), §4 (GCE PD) and the sections after §10;
the fact numbers are those of §9, and FACTS (facts.py) maps each to the
tests that prove it (a meta-test checks that every fact 1-27 is named, and
that every test FACTS names exists).

Layout:
  harness.py      the servers (native, Wine), the callers, Wine's named
                  skips, the errors a driver sees and the Driver base class
  conftest.py     the fixtures: srv (one server for the package), call, gaps
  ebs.py, azuredisk.py, gce.py, smb.py, trident.py
                  one module per driver model
  facts.py        §9 fact -> the tests that prove it
  test_*.py       the tests: full lifecycles, single facts, SMB drivers

Kubelet's own steps (creating the staging directory, the pod directory)
are done on the host side, as kubelet does them without csi-proxy.

Two transports run the same models: natively, grpcio over the
Unix sockets of build/native/csi-proxy; with CSI_PROXY_WINE_PREFIX set
(test/wine/drivers.sh), csi-proxy-cli.exe under Wine over the named pipes
of csi-proxy-sim.exe (the Win32 file-system host and the storage
simulator) in that prefix, one `wine` process per call. Both answer
call(group, version, method, **fields) -> (response message or None,
grpc.StatusCode, details). What Wine cannot show is an explicit skip
naming the fact and the reason (harness.wine_cannot, harness.WineGaps).
"""
