#!/usr/bin/env python3
"""Writes a gzip apitrace whose last deflate block decodes to MIB MiB:
the raw call stream read from stdin and zeros up to 2 MiB + 4 KiB (zlib's
blocks, then a full flush, where a seek point goes), then one
fixed-Huffman block of a literal "z" and matches of 258 bytes at
distance 1, as no zlib writes (zlib ends a block within 8.4 MiB of
output): a few hundred KB of file that a reader can only decode from the
block's start.  With --sha256, prints instead the sha256 of what the file
decodes to.
usage: make_long_block_gzip.py MIB OUT < raw-stream
       make_long_block_gzip.py MIB --sha256 < raw-stream"""
import hashlib
import struct
import sys
import zlib


def repeats(mib):
    return ((mib << 20) - 1) // 258


def long_block(count):
    """BFINAL=1, BTYPE=01, "z", count x (length 258, distance 1), end."""
    out, bits, nbits = bytearray(), 0, 0

    def put(value, length):   # least significant bit first
        nonlocal bits, nbits
        bits |= value << nbits
        nbits += length
        while nbits >= 8:
            out.append(bits & 0xFF)
            bits >>= 8
            nbits -= 8

    def code(value, length):  # Huffman codes: most significant bit first
        put(int(format(value, f"0{length}b")[::-1], 2), length)

    put(1, 1)
    put(1, 2)
    code(0x30 + ord("z"), 8)
    for _ in range(count):
        code(0xC0 + 5, 8)     # symbol 285: length 258
        code(0, 5)            # distance code 0: distance 1
    code(0, 7)                # symbol 256: end of block
    put(0, 7)
    return bytes(out)


def main():
    mib = int(sys.argv[1])
    raw = sys.stdin.buffer.read()
    raw += bytes(max(0, (2 << 20) + 4096 - len(raw)))
    tail = b"z" * (1 + 258 * repeats(mib))
    if sys.argv[2] == "--sha256":
        print(hashlib.sha256(raw + tail).hexdigest())
        return
    z = zlib.compressobj(6, zlib.DEFLATED, -15, 9)
    body = z.compress(raw) + z.flush(zlib.Z_FULL_FLUSH) + long_block(repeats(mib))
    crc = zlib.crc32(tail, zlib.crc32(raw))
    header = bytes([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF])
    with open(sys.argv[2], "wb") as out:
        out.write(header + body + struct.pack("<II", crc, (len(raw) + len(tail)) & 0xFFFFFFFF))


main()
