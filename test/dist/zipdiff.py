#!/usr/bin/python3
"""zipdiff.py A B: which entries of two zip archives differ (names, contents,
dates, permissions, compressed bytes), to explain a reproducibility failure."""
import sys
import zipfile

a, b = (zipfile.ZipFile(p) for p in sys.argv[1:3])
na, nb = a.namelist(), b.namelist()
if na != nb:
    print(f"entries differ:\n  {na}\n  {nb}")
for n in sorted(set(na) & set(nb)):
    ia, ib = a.getinfo(n), b.getinfo(n)
    for field in ("date_time", "external_attr", "create_system", "compress_type", "CRC", "compress_size"):
        if getattr(ia, field) != getattr(ib, field):
            print(f"{n}: {field} {getattr(ia, field)} != {getattr(ib, field)}")
