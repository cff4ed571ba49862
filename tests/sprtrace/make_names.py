#!/usr/bin/env python3
"""Writes an sp-rtrace log (protocol 2.0, x86_64, little endian) whose
resource types, contexts and attachment are named with NULs and a newline:
resources 1 "mem\\0a", 2 "mem\\0b", 4 "two\\nlines", 8 "mem" and 16 "mem\\0a"
again; contexts 1 "ctx\\0one" and 2 "ctx\\0two"; attachment "att\\0x".
Each resource gets one malloc in context 1.  A string's NUL padding (its
length word counts it) is not part of the name; a NUL before other bytes
is, and sp-rtrace-postproc prints the name up to it.
usage: make_names.py OUT"""
import struct
import sys

RESOURCES = [(1, b"mem\0a"), (2, b"mem\0b"), (4, b"two\nlines"), (8, b"mem"), (16, b"mem\0a")]
CONTEXTS = [(1, b"ctx\0one"), (2, b"ctx\0two")]


def string(data):
    pad = -(2 + len(data)) % 4
    return struct.pack("<H", len(data) + pad) + data + b"\0" * pad


def packet(kind, data):
    return kind + struct.pack("<I", len(data)) + data


def main():
    body = bytes([2, 0, 6]) + b"x86_64" + bytes([0, 8])
    body += b"\0" * (-(2 + len(body)) % 4)
    out = [bytes([0xF0, len(body)]) + body]
    out.append(packet(b"PINF", struct.pack("<IIII", 4242, 1700000000, 0, 10) + string(b"/bin/names")))
    for rid, name in RESOURCES:
        out.append(packet(b"RESR", struct.pack("<II", rid, 0) + string(name) + string(b"a resource")))
    for cid, name in CONTEXTS:
        out.append(packet(b"CTXR", struct.pack("<I", cid) + string(name)))
    out.append(packet(b"FILE", string(b"att\0x") + string(b"/tmp/att.txt")))
    for n, (rid, _) in enumerate(RESOURCES):
        name = string(b"malloc")
        out.append(b"CALL" + struct.pack("<IIIII", 16 + len(name) + 12, rid, 1, n, 2) + name +
                   struct.pack("<iQ", 16 * (n + 1), 0x1000 + 0x100 * n))
        out.append(packet(b"BTRC", struct.pack("<I", 0)))
    with open(sys.argv[1], "wb") as f:
        f.write(b"".join(out))


if __name__ == "__main__":
    main()
