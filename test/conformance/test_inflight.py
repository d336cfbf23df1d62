"""One run for identical calls in flight, on the native build with the storage
simulator: a FormatVolume, PartitionDisk or MountVolume identical to one still
running (same method, same request) waits for it and answers its result
instead of queueing a second run; a different call on the same disk queues
behind the disk's lock as before.

The kubelet pattern: the first call's client gives up at its deadline while
the format runs, and the same call arrives again. The simulator logs each
format it runs ("storage simulator: formatting volume"), and format_ms makes
a format slow."""
import os
import threading
import time

import grpc

from conftest import KUBELET, STORAGE_FIXTURE, Server

OK = grpc.StatusCode.OK
DEADLINE = grpc.StatusCode.DEADLINE_EXCEEDED
STAGED = "\\\\?\\Volume{9a9a9a9a-0009-4000-8000-000000000001}\\"  # on disk 9
RAW_DISK = 12  # raw, 1 GiB
FORMAT_MS = 1500


def server(tmp_path, head):
    p = tmp_path / "slow.yaml"
    with open(STORAGE_FIXTURE) as f:
        p.write_text(head + f.read())
    return Server(str(tmp_path / "srv"), fixture=str(p))


def rpc(s, pb, group, method, version="v1"):
    svc = {"disk": "Disk", "volume": "Volume"}[group]
    mod = pb(group, version)
    m = mod.DESCRIPTOR.services_by_name[svc].methods_by_name[method]
    ch = s.channel(group, version)
    return (ch.unary_unary(f"/{version}.{svc}/{method}",
                           request_serializer=getattr(mod, m.input_type.name).SerializeToString,
                           response_deserializer=getattr(mod, m.output_type.name).FromString),
            getattr(mod, m.input_type.name))


def formats(s):
    s.log.flush()
    with open(os.path.join(os.path.dirname(s.sock), "server.log")) as f:
        return f.read().count("storage simulator: formatting volume")


def timed(call, req, timeout, out, key):
    t0 = time.monotonic()
    try:
        call(req, timeout=timeout)
        out[key] = (OK, time.monotonic() - t0, "")
    except grpc.RpcError as e:
        out[key] = (e.code(), time.monotonic() - t0, e.details())


def test_retried_format_runs_once(tmp_path, pb):
    """The first client gives up at its deadline; its identical retry answers
    when the first format ends, and exactly one format runs (before: the
    retry queued behind the first and formatted again, 2 formats)."""
    s = server(tmp_path, f"format_ms: {FORMAT_MS}\n")
    try:
        call, req = rpc(s, pb, "volume", "FormatVolume")
        t0 = time.monotonic()
        try:
            call(req(volume_id=STAGED), timeout=0.4)
            raise AssertionError("the slow format answered before its deadline")
        except grpc.RpcError as e:
            assert e.code() == DEADLINE, e
        call(req(volume_id=STAGED), timeout=10)  # kubelet's retry
        took = time.monotonic() - t0
        assert formats(s) == 1, f"{formats(s)} formats ran for one retried call"
        # the retry answered when the first format ended, not after a second
        assert took < (2 * FORMAT_MS - 300) / 1000, f"the retry took {took:.2f} s in all"
        # done: the same call again later runs anew
        call(req(volume_id=STAGED), timeout=10)
        assert formats(s) == 2
    finally:
        s.stop()
    assert s.proc.returncode == 0


def test_identical_calls_at_once_share_one_run(tmp_path, pb):
    """Four identical FormatVolume calls at once: one format, four OKs, all
    answered together."""
    s = server(tmp_path, f"format_ms: {FORMAT_MS}\n")
    try:
        call, req = rpc(s, pb, "volume", "FormatVolume")
        out = {}
        ts = [threading.Thread(target=timed, args=(call, req(volume_id=STAGED), 10, out, i))
              for i in range(4)]
        for t in ts:
            t.start()
            time.sleep(0.05)
        for t in ts:
            t.join()
        assert [out[i][0] for i in range(4)] == [OK] * 4, out
        assert formats(s) == 1
        assert max(out[i][1] for i in range(4)) < (2 * FORMAT_MS - 300) / 1000, out
    finally:
        s.stop()


def test_different_call_on_the_same_disk_still_queues(tmp_path, pb):
    """A MountVolume of the volume being formatted is a different call: it
    waits for the disk's lock and runs after the format, as before."""
    s = server(tmp_path, f"format_ms: {FORMAT_MS}\n")
    try:
        fmt, freq = rpc(s, pb, "volume", "FormatVolume")
        mnt, mreq = rpc(s, pb, "volume", "MountVolume")
        target = KUBELET + "\\plugins\\inflight\\staging"
        os.makedirs(s.host(target))
        out = {}
        a = threading.Thread(target=timed, args=(fmt, freq(volume_id=STAGED), 10, out, "f"))
        a.start()
        time.sleep(0.3)
        t0 = time.monotonic()
        mnt(mreq(volume_id=STAGED, target_path=target), timeout=10)
        mount_end = time.monotonic()
        a.join()
        assert out["f"][0] == OK, out
        assert formats(s) == 1
        # it waited for the format's end (about 1.2 s more), not joined it
        assert mount_end - t0 > (FORMAT_MS - 400) / 1000
        assert os.path.lexists(s.host(target))
    finally:
        s.stop()


def test_different_version_or_request_runs_its_own(tmp_path, pb):
    """Identical means the same method path and request: v1 and v1beta3
    FormatVolume of one volume are two runs, queued one after the other."""
    s = server(tmp_path, f"format_ms: {FORMAT_MS}\n")
    try:
        v1, r1 = rpc(s, pb, "volume", "FormatVolume", "v1")
        b3, rb3 = rpc(s, pb, "volume", "FormatVolume", "v1beta3")
        out = {}
        a = threading.Thread(target=timed, args=(v1, r1(volume_id=STAGED), 10, out, "v1"))
        a.start()
        time.sleep(0.2)
        timed(b3, rb3(volume_id=STAGED), 10, out, "b3")
        a.join()
        assert out["v1"][0] == OK and out["b3"][0] == OK, out
        assert formats(s) == 2
    finally:
        s.stop()


def test_retried_partition_and_mount_run_once(tmp_path, pb):
    """PartitionDisk and MountVolume retried while the first runs (every disk
    operation slow): the retry answers with the first, not a run later. (A
    second PartitionDisk would only read the disk and find the partition, so
    its part shows the answers, not the difference; MountVolume's does.)"""
    s = server(tmp_path, "latency_ms: 800\n")
    try:
        part, preq = rpc(s, pb, "disk", "PartitionDisk")
        out = {}
        a = threading.Thread(target=timed, args=(part, preq(disk_number=RAW_DISK), 0.3, out, "1"))
        a.start()
        time.sleep(0.35)
        timed(part, preq(disk_number=RAW_DISK), 10, out, "2")
        a.join()
        assert out["1"][0] == DEADLINE and out["2"][0] == OK, out
        first_run = out["2"][1] + 0.35
        # PartitionDisk of a raw disk is 3 slow steps (read, GPT, partition)
        assert first_run < 3 * 0.8 + 0.6, out

        mnt, mreq = rpc(s, pb, "volume", "MountVolume")
        target = KUBELET + "\\plugins\\inflight\\mount"
        os.makedirs(s.host(target))
        out = {}
        m = mreq(volume_id=STAGED, target_path=target)
        a = threading.Thread(target=timed, args=(mnt, m, 0.3, out, "1"))
        a.start()
        time.sleep(0.35)
        timed(mnt, m, 10, out, "2")
        a.join()
        assert out["1"][0] == DEADLINE and out["2"][0] == OK, out
        # one slow step; a second run would queue behind the first and add one
        assert out["2"][1] + 0.35 < 2 * 0.8, out
        assert os.path.lexists(s.host(target))
    finally:
        s.stop()
