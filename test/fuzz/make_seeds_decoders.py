#!/usr/bin/env python3
"""Builds the committed seed corpus test/fuzz/corpus/decoders/ of the
decoder differential (fuzz_decoders.c; run by hand, the output is
committed). Byte 0 is the method index, byte 1 the direction (0 request,
1 response), the rest the message:

  - every seed of corpus/messages/ (requests filled by reflection, and
    those of the grpc-go captures and the recorded grpcio traffic), as a
    request;
  - one response per method filled by reflection, and an empty one;
  - a few hand-made encodings at the edges the wire allows (unknown
    fields, repeats, non-minimal varints, explicit defaults).

usage: make_seeds_decoders.py
"""
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_seeds  # noqa: E402

OUT = os.path.join(make_seeds.CORPUS, "decoders")


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    src = os.path.join(make_seeds.CORPUS, "messages")
    for name in sorted(os.listdir(src)):
        b = open(os.path.join(src, name), "rb").read()
        if b:
            write("req-" + name, b[:1] + b"\x00" + b[1:])
    with tempfile.TemporaryDirectory() as tmp:
        pb = make_seeds.gen_python(tmp)
        for idx, g, v, m in make_seeds.methods(pb):
            cls = getattr(pb(g, v), m.output_type.name)
            msg = cls()
            try:
                make_seeds.fill(msg)
            except Exception:  # a map with message values etc.: keep what was set
                pass
            body = msg.SerializeToString()
            base = f"resp-{idx:03d}-{g}-{v}-{m.name}"
            write(base, bytes([idx, 1]) + body)
            write(base + "-empty", bytes([idx, 1]))
            # an unknown field, every known field twice, and an explicit zero
            write(base + "-unknown", bytes([idx, 1]) + body + b"\xf8\x07\x01")
            write(base + "-twice", bytes([idx, 1]) + body + body)
            write(base + "-zero", bytes([idx, 1]) + b"\x08\x00" + body)
    print(f"{len(os.listdir(OUT))} seeds in {OUT}")


if __name__ == "__main__":
    main()
