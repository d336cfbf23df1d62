"""A raw HTTP/2 client for fault tests: hand-built frames on a Unix socket,
HPACK literals without Huffman or indexing on the way out, and the server's
header blocks decoded with libnghttp2's HPACK inflater (through ctypes) on
the way in. Nothing here fixes up what a test sends: it writes exactly the
bytes it is given."""
import ctypes
import ctypes.util
import socket
import struct
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, \
    CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20

NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR, SETTINGS_TIMEOUT, STREAM_CLOSED, \
    FRAME_SIZE_ERROR, REFUSED_STREAM, CANCEL, COMPRESSION_ERROR, CONNECT_ERROR, \
    ENHANCE_YOUR_CALM = range(12)


# ---- HPACK out: literal header field without indexing, new name --------

def _hpack_int(value, prefix_bits, first=0):
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = [first | limit]
    value -= limit
    while value >= 128:
        out.append((value & 0x7f) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def hpack(headers):
    out = b""
    for name, value in headers:
        n = name.encode() if isinstance(name, str) else name
        v = value.encode() if isinstance(value, str) else value
        out += b"\x00" + _hpack_int(len(n), 7) + n + _hpack_int(len(v), 7) + v
    return out


def request_headers(path, extra=()):
    return [(":method", "POST"), (":scheme", "http"), (":path", path),
            (":authority", "localhost"), ("content-type", "application/grpc"),
            ("te", "trailers")] + list(extra)


def frame(ftype, flags, stream_id, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack(">I", stream_id & 0x7fffffff) + payload


def grpc_message(body, declared=None, flag=0):
    n = len(body) if declared is None else declared
    return bytes([flag]) + struct.pack(">I", n) + body


def pb_string(field, s):
    b = s.encode() if isinstance(s, str) else s
    return _varint(field << 3 | 2) + _varint(len(b)) + b


def _varint(v):
    out = b""
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


# ---- HPACK in: libnghttp2's inflater ---------------------------------------

class _NV(ctypes.Structure):
    _fields_ = [("name", ctypes.POINTER(ctypes.c_uint8)), ("value", ctypes.POINTER(ctypes.c_uint8)),
                ("namelen", ctypes.c_size_t), ("valuelen", ctypes.c_size_t),
                ("flags", ctypes.c_uint8)]


_lib = ctypes.CDLL(ctypes.util.find_library("nghttp2") or "libnghttp2.so.14")
_lib.nghttp2_hd_inflate_new.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
_lib.nghttp2_hd_inflate_hd2.argtypes = [ctypes.c_void_p, ctypes.POINTER(_NV),
                                        ctypes.POINTER(ctypes.c_int), ctypes.c_char_p,
                                        ctypes.c_size_t, ctypes.c_int]
_lib.nghttp2_hd_inflate_hd2.restype = ctypes.c_ssize_t
_lib.nghttp2_hd_inflate_end_headers.argtypes = [ctypes.c_void_p]
_lib.nghttp2_hd_inflate_del.argtypes = [ctypes.c_void_p]


class Inflater:
    def __init__(self):
        self.p = ctypes.c_void_p()
        assert _lib.nghttp2_hd_inflate_new(ctypes.byref(self.p)) == 0

    def decode(self, block):
        out = []
        buf = ctypes.create_string_buffer(bytes(block), len(block))
        off = 0
        while True:
            nv = _NV()
            fl = ctypes.c_int(0)
            n = _lib.nghttp2_hd_inflate_hd2(self.p, ctypes.byref(nv), ctypes.byref(fl),
                                            ctypes.cast(ctypes.byref(buf, off), ctypes.c_char_p),
                                            len(block) - off, 1)
            if n < 0:
                raise ValueError(f"HPACK error {n}")
            off += n
            if fl.value & 0x02:  # EMIT
                out.append((ctypes.string_at(nv.name, nv.namelen).decode("latin-1"),
                            ctypes.string_at(nv.value, nv.valuelen).decode("latin-1")))
            if fl.value & 0x01:  # FINAL
                _lib.nghttp2_hd_inflate_end_headers(self.p)
                return out
            if n == 0 and off >= len(block) and not fl.value & 0x02:
                return out

    def __del__(self):
        if self.p:
            _lib.nghttp2_hd_inflate_del(self.p)


def _pct_decode(s):
    out = bytearray()
    i = 0
    b = s.encode("latin-1")
    while i < len(b):
        if b[i] == 0x25 and i + 2 < len(b) + 0 and i + 2 <= len(b) - 1:
            try:
                out.append(int(b[i + 1:i + 3], 16))
                i += 3
                continue
            except ValueError:
                pass
        out.append(b[i])
        i += 1
    return out.decode("utf-8", "replace")


# ---- the connection ---------------------------------------------------------

class Stream:
    def __init__(self):
        self.headers = []   # every header field the server sent, in order
        self.data = b""
        self.ended = False  # END_STREAM seen
        self.rst = None     # RST_STREAM error code

    @property
    def grpc_status(self):
        for n, v in self.headers:
            if n == "grpc-status":
                return int(v)
        return None

    @property
    def grpc_message(self):
        for n, v in self.headers:
            if n == "grpc-message":
                return _pct_decode(v)
        return ""

    @property
    def http_status(self):
        for n, v in self.headers:
            if n == ":status":
                return v
        return None


class Conn:
    def __init__(self, path, timeout=10.0, rcvbuf=None):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if rcvbuf:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.s.settimeout(timeout)
        self.s.connect(path)
        self.inbuf = b""
        self.inflater = Inflater()
        self.streams = {}
        self.goaway = None      # (last_stream_id, error_code, debug)
        self.settings = []      # SETTINGS frames received (non-ACK)
        self.settings_acks = 0
        self.eof = False
        self._block = None      # (stream id, bytes) of a header block in progress
        # Answer SETTINGS, PING and DATA (ACK, WINDOW_UPDATE) as they come.
        # A test writing half frames turns this off: an answer written then
        # would land inside its half-written frame.
        self.auto = True

    # -- sending --
    def send(self, b):
        self.s.sendall(b)

    def start(self, settings=b""):
        """Client preface and our SETTINGS."""
        self.send(PREFACE + frame(SETTINGS, 0, 0, settings))

    def request(self, sid, path, body, end=True, extra=(), declared=None):
        """HEADERS then one DATA frame with a gRPC message (END_STREAM when end)."""
        b = frame(HEADERS, END_HEADERS, sid, hpack(request_headers(path, extra)))
        if body is not None:
            b += frame(DATA, END_STREAM if end else 0, sid, grpc_message(body, declared))
        self.send(b)

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass

    # -- receiving --
    def _read_some(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        self.s.settimeout(left)
        try:
            d = self.s.recv(65536)
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError):
            d = b""
        if not d:
            self.eof = True
            return False
        self.inbuf += d
        return True

    def _frames(self):
        while len(self.inbuf) >= 9:
            n = int.from_bytes(self.inbuf[:3], "big")
            if len(self.inbuf) < 9 + n:
                return
            typ, flags = self.inbuf[3], self.inbuf[4]
            sid = int.from_bytes(self.inbuf[5:9], "big") & 0x7fffffff
            pl = self.inbuf[9:9 + n]
            self.inbuf = self.inbuf[9 + n:]
            self._on_frame(typ, flags, sid, pl)

    def _on_frame(self, typ, flags, sid, pl):
        if typ == SETTINGS:
            if flags & ACK:
                self.settings_acks += 1
            else:
                self.settings.append(pl)
                if not self.auto:
                    return
                try:
                    self.send(frame(SETTINGS, ACK, 0))
                except OSError:
                    pass
        elif typ == PING and not flags & ACK and self.auto:
            try:
                self.send(frame(PING, ACK, 0, pl))
            except OSError:
                pass
        elif typ == GOAWAY:
            last, code = struct.unpack(">II", pl[:8])
            self.goaway = (last & 0x7fffffff, code, pl[8:])
        elif typ in (HEADERS, CONTINUATION):
            st = self.streams.setdefault(sid, Stream())
            if typ == HEADERS:
                off, pad = 0, 0
                if flags & PADDED:
                    pad = pl[0]
                    off = 1
                if flags & PRIORITY_FLAG:
                    off += 5
                self._block = (sid, pl[off:len(pl) - pad], flags & END_STREAM)
            else:
                s0, b0, es = self._block
                self._block = (s0, b0 + pl, es)
            if flags & END_HEADERS:
                s0, block, es = self._block
                st.headers += self.inflater.decode(block)
                if es:
                    st.ended = True
                self._block = None
        elif typ == DATA:
            st = self.streams.setdefault(sid, Stream())
            st.data += pl
            if flags & END_STREAM:
                st.ended = True
            if pl and self.auto:  # keep the windows open
                try:
                    self.send(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", len(pl))) +
                              frame(WINDOW_UPDATE, 0, sid, struct.pack(">I", len(pl))))
                except OSError:
                    pass
        elif typ == RST_STREAM:
            st = self.streams.setdefault(sid, Stream())
            st.rst = struct.unpack(">I", pl[:4])[0]

    def pump(self, until, timeout=10.0):
        """Reads frames until until(self) is true, EOF, or timeout; returns
        until(self)."""
        deadline = time.monotonic() + timeout
        while not until(self):
            self._frames()
            if until(self):
                break
            if self.eof or not self._read_some(deadline):
                self._frames()
                break
        return until(self)

    def response(self, sid, timeout=10.0):
        """Waits for stream sid to end (trailers or RST) and returns it."""
        self.pump(lambda c: sid in c.streams and (c.streams[sid].ended or
                                                  c.streams[sid].rst is not None), timeout)
        return self.streams.get(sid)

    def wait_closed(self, timeout=10.0):
        """True when the server closed the connection within timeout."""
        return self.pump(lambda c: c.eof, timeout)
