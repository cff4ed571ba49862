#!/usr/bin/env python3
"""Socket address ports of connect/accept frames: the text (frames/<n>)
prints sin_port as `rr dump` 5.6.0 does, the network-order field read as a
little-endian number (443 prints as 47873); the JSON (frames/<n>.json)
gives the real port.  Both are checked against the address bytes read from
the trace here, and the text against `rr dump --socket-addresses` when rr
is installed.  Usage: check_socket_port.py RR_BLOCKS"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys

from rr_frames import data_bytes, field, read_messages, root

TRACEFS = os.environ["TRACEFS"]
DATA = os.path.join(os.environ["TRACEFS_SOURCE_ROOT"], "tests/data/rr")
BLOCKS = sys.argv[1]
EV_SYSCALL, EXTRA_SOCKET_ADDRS = 11, 4
LINE = re.compile(rb"  Local socket address '[^\n]*\n")
failures = []


def tracefs(trace, path):
    return subprocess.run([TRACEFS, "cat", trace, path], check=True, stdout=subprocess.PIPE).stdout


def socket_frames(trace):
    """(frame number, local address bytes, remote address bytes)."""
    events = open(os.path.join(trace, "events"), "rb").read()
    raw = subprocess.run([BLOCKS, "unpack"], input=events, stdout=subprocess.PIPE, check=True).stdout
    for index, segments in enumerate(read_messages(raw)):
        seg, start, data, _ = root(segments)
        words = segments[seg]
        if field(words, start, 6, "<H") == EV_SYSCALL and field(words, start + 4, 2, "<H") == EXTRA_SOCKET_ADDRS:
            yield (index + 1, data_bytes(segments, seg, start + data + 3),  # Syscall.socketAddrs.localAddr
                   data_bytes(segments, seg, start + data + 4))             # .remoteAddr


def address(raw):
    """(text as rr dump prints it, the real port, family name) or None."""
    family = int.from_bytes(raw[:2], "little") if len(raw) >= 2 else 0
    if family == socket.AF_INET and len(raw) >= 8:
        host, name = socket.inet_ntop(socket.AF_INET, raw[4:8]), "inet"
    elif family == socket.AF_INET6 and len(raw) >= 24:
        host, name = socket.inet_ntop(socket.AF_INET6, raw[8:24]), "inet6"
    else:
        return "<Unknown socket family>", None, None
    # sin_port is in network order; rr 5.6.0 prints the field as a host int.
    return f"{host}:{int.from_bytes(raw[2:4], 'little')}", int.from_bytes(raw[2:4], "big"), name


def check_frame(name, trace, n, local, remote):
    (local_text, local_port, local_family), (remote_text, remote_port, remote_family) = address(local), address(remote)
    want = f"  Local socket address '{local_text}' Remote socket address '{remote_text}'\n".encode()
    got = LINE.findall(tracefs(trace, f"frames/{n}"))
    if got != [want]:
        failures.append(f"{name} frame {n}: text {got} (want {want})")
    syscall = json.loads(tracefs(trace, f"frames/{n}.json"))["syscall"]
    for key, port, family in (("local_address", local_port, local_family), ("remote_address", remote_port, remote_family)):
        if port is not None and (syscall[key].get("port"), syscall[key].get("family")) != (port, family):
            failures.append(f"{name} frame {n}: JSON {key} {syscall[key]} (want {family} port {port})")
    print(f"ok {name} frame {n}: text '{local_text}' / '{remote_text}', JSON ports {local_port} / {remote_port}")
    return [p for p in (local_port, remote_port) if p is not None and p != int.from_bytes(p.to_bytes(2, "big"), "little")]


def compare_with_rr(name, trace):
    rr = shutil.which("rr")
    if not rr:
        print("SKIP the rr dump comparison: rr is not installed (Debian package rr; scripts/install-deps)")
        return
    ref = subprocess.run([rr, "dump", "--socket-addresses", trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if ref.returncode != 0:
        print("SKIP the rr dump comparison: rr dump cannot run here:", ref.stderr.decode(errors="replace")[:200])
        return
    frames = json.loads(tracefs(trace, "info.json"))["rr"]["frames"]
    ours = [line for n, _, _ in socket_frames(trace) for line in LINE.findall(tracefs(trace, f"frames/{n}"))]
    if LINE.findall(ref.stdout) != ours:
        failures.append(f"{name}: socket lines differ from rr dump: {LINE.findall(ref.stdout)} vs {ours}")
    else:
        print(f"ok {name}: {len(ours)} socket address lines equal rr dump ({frames} frames)")


def main():
    swapped = []
    for name in ("edge-0", "mtdemo-0"):
        trace = os.path.join(DATA, name)
        for n, local, remote in socket_frames(trace):
            swapped += check_frame(name, trace, n, local, remote)
        compare_with_rr(name, trace)
    if not swapped:
        failures.append("no port whose two byte orders differ: the test would not tell them apart")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
