#!/usr/bin/env python3
"""Writes a hostile basic-mode XRay log: a real log's records followed by
COUNT forged ones (enter/exit pairs, TSCs after the real ones), each of a
new thread (`threads`), a new function id (`functions`), both, or one
thread whose TSC goes back at every pair (`runs`: a run each).  This is
what a misaligned basic log looks like to the decoder (the fuzzer's cut or
repeated stretches of the corpus's threads log gave a thread per record).
usage: make_hostile.py REAL.xray OUT.xray threads|functions|both|runs COUNT"""
import struct
import sys


def main():
    real, out, kind, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    data = open(real, 'rb').read()
    header, body = data[:32], data[32:]
    if struct.unpack_from('<H', header, 2)[0] != 0:
        sys.exit('not a basic-mode log')
    tscs = [struct.unpack_from('<Q', body, i + 8)[0] for i in range(0, len(body) - 31, 32)
            if struct.unpack_from('<H', body, i)[0] == 0]
    pid = struct.unpack_from('<I', body, 20)[0]
    tsc = max(tscs) + 1000
    with open(out, 'wb') as f:
        f.write(data)
        piece = bytearray()
        for n in range(count):
            tid = 100000 + n if kind in ('threads', 'both') else 100000
            func = 1000 + n if kind in ('functions', 'both') else 7
            for record_kind in (0, 1):   # function-enter, function-exit
                piece += struct.pack('<HBBiQII8x', 0, 0, record_kind, func, tsc, tid, pid)
                tsc += 10
            if kind == 'runs':
                tsc -= 15
            if len(piece) >= 1 << 16:
                f.write(piece)
                piece = bytearray()
        f.write(piece)


if __name__ == '__main__':
    main()
