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
    for name in run("ls", trace, *([rel] if rel else [])).decode().split("\n")[:25]:
        if not name:
            continue
        p = rel + "/" + name if rel else name
        if p == ".tracefs":
            continue
        kind = run("stat", trace, p).decode().split()[1]
        dest = os.path.join(out, p)
        if kind == "directory":
            os.makedirs(dest, exist_ok=True)
            walk(p)
        elif kind == "file":
            with open(dest, "wb") as f:
                f.write(run("cat", trace, p))
        else:
            with open(dest + ".link", "w") as f:
                f.write(kind)


os.makedirs(out, exist_ok=True)
walk("")
