#!/usr/bin/env python3
"""Writes every file of a trace's tree (via `tracefs ls/stat/cat`, no mount)
under DIR, symlinks as .link files: for comparing two openings of a trace.
Big directories: their first 25 entries (each run of tracefs costs a scan).
usage: dump_tree.py TRACEFS TRACE DIR"""
import os
import subprocess
import sys

tfs, trace, out = sys.argv[1:]


def run(*args):
    return subprocess.run([tfs, *args], capture_output=True, check=True).stdout


def walk(rel):
    """One `ls`, one `stat` and one `cat` per directory: the files' bytes
    are cut apart by the sizes stat gives."""
    names = run("ls", trace, *([rel] if rel else [])).decode().split("\n")[:25]
    paths = [rel + "/" + name if rel else name for name in names if name]
    paths = [p for p in paths if p != ".tracefs"]
    if not paths:
        return
    entries = [line.rsplit(" ", 3)[:3] for line in run("stat", trace, *paths).decode().splitlines()]
    files = [(p, int(size)) for p, kind, size in entries if kind == "file"]
    data = run("cat", trace, *(p for p, _ in files)) if files else b""
    at = 0
    for p, size in files:
        with open(os.path.join(out, p), "wb") as f:
            f.write(data[at:at + size])
        at += size
    if at != len(data):
        sys.exit(f"{rel or '/'}: cat gave {len(data)} bytes, stat sizes add up to {at}")
    for p, kind, _ in entries:
        dest = os.path.join(out, p)
        if kind == "directory":
            os.makedirs(dest, exist_ok=True)
            walk(p)
        elif kind != "file":
            with open(dest + ".link", "w") as f:
                f.write(kind)


os.makedirs(out, exist_ok=True)
walk("")
