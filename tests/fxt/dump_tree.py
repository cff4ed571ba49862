#!/usr/bin/env python3
"""Writes every file of a trace's tree (via `tracefs ls/stat/cat`, no mount)
under DIR, symlinks as .link files: for comparing two openings of a trace.
Big directories: their first 25 entries (each run of tracefs costs a scan).
usage: dump_tree.py TRACEFS TRACE DIR"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from offline_files import read_files  # noqa: E402

tfs, trace, out = sys.argv[1:]


def walk(rel):
    """One `ls`, then one `stat` and one `cat` per directory
    (offline_files.read_files)."""
    listing = subprocess.run([tfs, "ls", trace, *([rel] if rel else [])], capture_output=True, check=True)
    names = listing.stdout.decode().split("\n")[:25]
    paths = [rel + "/" + name if rel else name for name in names if name]
    paths = [p for p in paths if p != ".tracefs"]
    if not paths:
        return
    try:
        files, kinds, stat, cat = read_files(tfs, trace, paths)
    except ValueError as e:
        sys.exit(f"{rel or '/'}: {e}")
    if stat.returncode != 0 or (cat is not None and cat.returncode != 0):
        sys.exit(f"{rel or '/'}: tracefs stat/cat failed: {(cat or stat).stderr.decode(errors='replace')}")
    for p in paths:
        dest = os.path.join(out, p)
        if p in files:
            with open(dest, "wb") as f:
                f.write(files[p])
        elif kinds[p] == "directory":
            os.makedirs(dest, exist_ok=True)
            walk(p)
        else:
            with open(dest + ".link", "w") as f:
                f.write(kinds[p])


os.makedirs(out, exist_ok=True)
walk("")
