#!/usr/bin/env python3
"""Compares tracefs's rr files with `rr dump` 5.6.0's output, byte for byte:
events = default, threads/<tid>/events = -t TID, frames/1..N + stats =
-b -m -p -e -s --socket-addresses, events + stats = -s, tasks/ps = rr ps.  The references
were made with each trace at /tmp/rrcorpus/<name> (-p prints absolute
paths), so each trace is copied there first.  medium-0 and big-0 come
from $TRACEFS_CORPUS when present."""
import hashlib
import json
import lzma
import os
import shutil
import subprocess
import sys

TRACEFS = os.environ["TRACEFS"]
SOURCE = os.environ["TRACEFS_SOURCE_ROOT"]
CORPUS = os.path.join(os.environ.get("TRACEFS_CORPUS", "/nonexistent"), "rr")
failures = []


def tracefs(trace, path):
    return subprocess.run([TRACEFS, "cat", trace, path], check=True, stdout=subprocess.PIPE).stdout


def place(src, name):
    dst = os.path.join("/tmp/rrcorpus", name)
    os.makedirs("/tmp/rrcorpus", exist_ok=True)
    if os.path.islink(dst) or os.path.isfile(dst):
        os.unlink(dst)
    elif os.path.isdir(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    return dst


def check(name, label, got, want):
    if got != want:
        failures.append(f"{name} {label}: {len(got)} bytes differ from the reference ({len(want)} bytes)")
    else:
        print(f"ok {name} {label} ({len(got)} bytes)")


def all_frames(trace):
    frames = json.loads(tracefs(trace, "info.json"))["rr"]["frames"]
    return b"".join(tracefs(trace, f"frames/{n}") for n in range(1, frames + 1))


def small(name, tid):
    trace = place(os.path.join(SOURCE, "tests/data/rr", name), name)
    refs = os.path.join(SOURCE, "tests/rr/refs", name)
    ref = lambda label: open(os.path.join(refs, label + ".txt"), "rb").read()
    events, stats = tracefs(trace, "events"), tracefs(trace, "stats")
    check(name, "default", events, ref("default"))
    check(name, "tid", tracefs(trace, f"threads/{tid}/events"), ref("tid"))
    check(name, "s", events + stats, ref("s"))
    check(name, "all", all_frames(trace) + stats, ref("all"))
    check(name, "ps", tracefs(trace, "tasks/ps"), ref("ps"))


def index_sha(name, label):
    with open(os.path.join(CORPUS, "dumps/INDEX.tsv")) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if cols[0] == name and cols[1] == label:
                return cols[4]
    return None


def corpus(name):
    src = os.path.join(CORPUS, "traces", name)
    if not os.path.isdir(src):
        print(f"skip {name}: no corpus")
        return
    trace = place(src, name)
    events, stats = tracefs(trace, "events"), tracefs(trace, "stats")
    check(name, "ps", tracefs(trace, "tasks/ps"), open(os.path.join(CORPUS, "dumps", name, "ps.txt"), "rb").read())
    xz = os.path.join(CORPUS, "dumps", name, "default.txt.xz")
    if os.path.exists(xz):
        check(name, "default", events, lzma.open(xz).read())
        check(name, "s", events + stats, lzma.open(os.path.join(CORPUS, "dumps", name, "s.txt.xz")).read())
    for label, data in (("default", events), ("s", events + stats)):
        want = index_sha(name, label)
        if want and hashlib.sha256(data).hexdigest() != want:
            failures.append(f"{name} {label}: sha256 differs from INDEX.tsv")
        elif want:
            print(f"ok {name} {label} sha256")


small("edge-0", 302)
small("mtdemo-0", 4101)
corpus("medium-0")
corpus("big-0")
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
