"""Clients that stall their answers: each advertises a zero flow-control
window (SETTINGS_INITIAL_WINDOW_SIZE 0, no WINDOW_UPDATE) and sends many
calls, so every answer the server makes waits in its memory. Runs the plain
native server (as test_memory.py does, for a measurement ASan would swamp)
with its default limits and reads its peak resident size (VmHWM)."""
import os
import socket
import struct
import time

import grpc
import pytest

from h2raw import (ACK, DATA, END_HEADERS, END_STREAM, HEADERS, PREFACE, SETTINGS, frame,
                   grpc_message, hpack, pb_string, request_headers)
from test_memory import EXISTS, KUBELET, native, status_kb  # noqa: F401 (fixture)

CONNS = 500
CALLS = 1000
PEAK_LIMIT_KB = 64 * 1024
MAX_CONCURRENT_STREAMS = 3
INITIAL_WINDOW_SIZE = 4


def server_settings(s, timeout=10.0):
    """Reads the server's first frame (its SETTINGS) and returns them."""
    s.settimeout(timeout)
    buf = b""
    while len(buf) < 9 or len(buf) < 9 + int.from_bytes(buf[:3], "big"):
        d = s.recv(65536)
        assert d, "the server closed the connection before its SETTINGS"
        buf += d
    n = int.from_bytes(buf[:3], "big")
    assert buf[3] == SETTINGS and not buf[4] & ACK, buf[:9]
    pl = buf[9:9 + n]
    return dict(struct.unpack(">HI", pl[i:i + 6]) for i in range(0, len(pl), 6))


def calls(first_sid, n):
    req = pb_string(1, KUBELET + "\\pods")
    out = []
    for i in range(n):
        sid = first_sid + 2 * i
        out.append(frame(HEADERS, END_HEADERS, sid, hpack(request_headers(EXISTS))) +
                   frame(DATA, END_STREAM, sid, grpc_message(req)))
    return b"".join(out)


def stalled(path, obey):
    """A client with a zero window. obey: it acknowledges the server's
    SETTINGS and keeps to its concurrent-stream limit, as grpc-go does (the
    worst case a limit leaves); otherwise it sends CALLS calls at once and
    never acknowledges anything. Never reads after the SETTINGS."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(PREFACE + frame(SETTINGS, 0, 0, struct.pack(">HI", INITIAL_WINDOW_SIZE, 0)))
    limit = server_settings(s).get(MAX_CONCURRENT_STREAMS, 2**31)
    n = CALLS
    if obey:
        s.sendall(frame(SETTINGS, ACK, 0))
        n = min(CALLS, limit)
    s.settimeout(60)
    s.sendall(calls(1, n))
    return s, limit


def normal_call(path):
    ch = grpc.insecure_channel(f"unix:{path}")
    try:
        stub = ch.unary_unary(EXISTS, request_serializer=lambda b: b,
                              response_deserializer=lambda b: b)
        return stub(pb_string(1, KUBELET + "\\pods"), timeout=30)
    finally:
        ch.close()


def settle(pid, quiet=3.0, limit=180.0):
    """Waits until the server's resident size stops growing."""
    end = time.time() + limit
    last, since = status_kb(pid, "VmRSS"), time.time()
    while time.time() < end and time.time() - since < quiet:
        time.sleep(0.5)
        now = status_kb(pid, "VmRSS")
        if now > last:
            last, since = now, time.time()
    return last


def test_stalled_clients_are_bounded(native):
    base = status_kb(native.pid, "VmRSS")
    socks = []
    try:
        for i in range(CONNS):
            s, limit = stalled(native.sock, obey=i % 2 == 0)
            socks.append(s)
        rss = settle(native.pid)
        # A normal caller is still served, on a connection of its own.
        assert normal_call(native.sock) == b"\x08\x01"
        rss = settle(native.pid)
        hwm = status_kb(native.pid, "VmHWM")
        print(f"\n{CONNS} stalled connections x {CALLS} calls (server's stream limit {limit}): "
              f"VmRSS {base} -> {rss} kB, VmHWM {hwm} kB")
        assert native.poll() is None
        assert hwm < PEAK_LIMIT_KB, f"peak RSS {hwm} kB with {CONNS} stalled connections"
        assert limit <= 128, f"MAX_CONCURRENT_STREAMS {limit}: more than clients use"
    finally:
        for s in socks:
            s.close()
    # Once they are gone, their memory is given back to the calls of others.
    assert normal_call(native.sock) == b"\x08\x01"
