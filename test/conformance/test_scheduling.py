"""Scheduling of calls on the worker pool, on the native
build with a slow storage simulator (latency_ms in the fixture):

- calls queued behind one disk's lock hold no worker: with 40 slow calls on
  one disk, PathExists on the filesystem pipe still answers at once;
- one group cannot take every worker: with slow calls on eight disks
  filling the disk group, PathExists still answers at once;
- a call whose deadline passed, or that the client cancelled, while it was
  queued answers DEADLINE_EXCEEDED / is dropped, and never runs: the disk
  it would have taken offline stays online."""
import os
import time

import grpc
import pytest

from conftest import KUBELET, STORAGE_FIXTURE, Server

OK = grpc.StatusCode.OK
STAGED_VOL = "\\\\?\\Volume{9a9a9a9a-0009-4000-8000-000000000001}\\"  # on disk 9
FAST_MS = 50  # what "at once" means natively


def slow_server(tmp_path, ms):
    p = tmp_path / "slow.yaml"
    with open(STORAGE_FIXTURE) as f:
        p.write_text(f"latency_ms: {ms}\n" + f.read())
    return Server(str(tmp_path / "srv"), fixture=str(p))


def stub(s, pb, group, method, channels={}):
    svc = {"filesystem": "Filesystem", "disk": "Disk", "volume": "Volume"}[group]
    mod = pb(group, "v1")
    m = mod.DESCRIPTOR.services_by_name[svc].methods_by_name[method]
    # by socket directory, not id(s): a later test's Server may reuse a freed
    # object's id and would get a channel to the previous server's sockets
    key = (s.sock, group)
    if key not in channels:
        channels[key] = s.channel(group, "v1")
    return (channels[key].unary_unary(
        f"/v1.{svc}/{method}",
        request_serializer=getattr(mod, m.input_type.name).SerializeToString,
        response_deserializer=getattr(mod, m.output_type.name).FromString),
        getattr(mod, m.input_type.name))


def stub3(s, pb):
    """FormatVolume of volume v1beta3."""
    mod = pb("volume", "v1beta3")
    ch = s.channel("volume", "v1beta3")
    return (ch.unary_unary("/v1beta3.Volume/FormatVolume",
                           request_serializer=mod.FormatVolumeRequest.SerializeToString,
                           response_deserializer=mod.FormatVolumeResponse.FromString),
            mod.FormatVolumeRequest)


def path_exists_ms(s, pb):
    """Wall time of one PathExists on the filesystem pipe, in ms."""
    call, req = stub(s, pb, "filesystem", "PathExists")
    t0 = time.monotonic()
    r = call(req(path=KUBELET), timeout=10)
    took = (time.monotonic() - t0) * 1000
    assert r.exists
    return took


def fast_while(s, pb, futures):
    """PathExists answers under FAST_MS every time while futures run (the
    caller connected the filesystem channel before it queued them)."""
    times = []
    for _ in range(5):
        times.append(path_exists_ms(s, pb))
        time.sleep(0.05)
    assert max(times) < FAST_MS, f"PathExists took {times} ms while slow calls were queued"
    assert not all(f.done() for f in futures), "the slow calls ended too soon to prove anything"


def test_calls_queued_on_one_disk_hold_no_worker(tmp_path, pb):
    s = slow_server(tmp_path, 100)
    try:
        path_exists_ms(s, pb)  # connected before the slow calls start
        # 40 different calls (identical ones in flight share one run:
        # test_inflight.py): mounts of one volume at 40 directories
        mnt, req = stub(s, pb, "volume", "MountVolume")
        dirs = [KUBELET + "\\plugins\\sched\\m%d" % i for i in range(40)]
        for d in dirs:
            os.makedirs(s.host(d))
        futures = [mnt.future(req(volume_id=STAGED_VOL, target_path=d), timeout=60) for d in dirs]
        time.sleep(0.3)  # all 40 arrived; one runs, 39 wait for disk 9
        fast_while(s, pb, futures)
        for f in futures:
            assert f.exception() is None, f.exception()
    finally:
        s.stop()
    assert s.proc.returncode == 0


def test_one_group_cannot_take_every_worker(tmp_path, pb):
    # 8 disks partitioned at once: 2 operations of 1 s each on 8 disks, far
    # more than the native build's 4 workers
    s = slow_server(tmp_path, 1000)
    try:
        path_exists_ms(s, pb)
        part, req = stub(s, pb, "disk", "PartitionDisk")
        futures = [part.future(req(disk_number=n), timeout=60) for n in range(1, 9)]
        time.sleep(0.3)
        fast_while(s, pb, futures)
        for f in futures:
            assert f.exception() is None, f.exception()
    finally:
        s.stop()
    assert s.proc.returncode == 0


def disk_online(s, pb, n):
    get, req = stub(s, pb, "disk", "GetDiskState")
    return get(req(disk_number=n), timeout=10).is_online


@pytest.mark.parametrize("how", ["deadline", "cancel"])
def test_call_given_up_while_queued_never_runs(tmp_path, pb, how):
    lat = 300
    s = slow_server(tmp_path, lat)
    try:
        assert disk_online(s, pb, 9)
        fmt, freq = stub(s, pb, "volume", "FormatVolume")
        # three different calls (identical ones in flight share one run:
        # test_inflight.py): a format, a flush, a format of another version
        flush, flreq = stub(s, pb, "volume", "WriteVolumeCache")
        fmt3, freq3 = stub3(s, pb)
        formats = [fmt.future(freq(volume_id=STAGED_VOL), timeout=60),
                   flush.future(flreq(volume_id=STAGED_VOL), timeout=60),
                   fmt3.future(freq3(volume_id=STAGED_VOL), timeout=60)]
        time.sleep(0.1)
        # queued behind ~900 ms of formats on disk 9
        setst, sreq = stub(s, pb, "disk", "SetDiskState")
        if how == "deadline":
            t0 = time.monotonic()
            with pytest.raises(grpc.RpcError) as e:
                setst(sreq(disk_number=9, is_online=False), timeout=0.3)
            assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED, e.value
            assert time.monotonic() - t0 < 0.3 + 0.2  # answered at its deadline, not later
        else:
            f = setst.future(sreq(disk_number=9, is_online=False), timeout=60)
            time.sleep(0.2)
            assert not f.done()
            assert f.cancel()  # RST_STREAM(CANCEL) while it waits for disk 9
        for f in formats:
            assert f.exception() is None, f.exception()
        time.sleep(2 * lat / 1000)  # room for a (wrong) late run of SetDiskState
        assert disk_online(s, pb, 9), "the call given up while queued ran anyway"
        # and disk 9 still serves: the lock was passed on
        assert fmt(freq(volume_id=STAGED_VOL), timeout=10) is not None
    finally:
        s.stop()
    assert s.proc.returncode == 0
