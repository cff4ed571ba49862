#!/usr/bin/env python3
"""Prints "size sha256 path" for every file under a mounted tree (sorted),
skipping the live statistics in .tracefs/: what two mounts of one trace
must agree on byte for byte.  A directory of more than SAMPLE entries (a
family such as calls/<n>.json) contributes its first and last SAMPLE / 2
files, so that a walk stays short."""
import hashlib
import os
import sys

SAMPLE = 300
root = sys.argv[1]
for directory, dirs, files in os.walk(root):
    dirs[:] = sorted(d for d in dirs if not (directory == root and d == ".tracefs"))
    if len(dirs) > SAMPLE:
        dirs[:] = dirs[:SAMPLE // 2] + dirs[-SAMPLE // 2:]
    files = sorted(files)
    if len(files) > SAMPLE:
        files = files[:SAMPLE // 2] + files[-SAMPLE // 2:]
    for name in files:
        path = os.path.join(directory, name)
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            while True:
                block = f.read(1 << 20)
                if not block:
                    break
                digest.update(block)
        print(os.stat(path).st_size, digest.hexdigest(), os.path.relpath(path, root))
