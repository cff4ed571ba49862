#!/usr/bin/env python3
"""Every memory write's bytes (frames/<time>.mem/<addr>) against the corpus's
truth: size and sha256 of the hole-filled bytes; the data offsets and
stored sizes in frames/<time>.json; every frames/<n>.json of edge-0 is JSON.  edge-0 and mtdemo-0 in
full (truth copied to tests/rr/refs), medium-0 sampled from the corpus."""
import hashlib
import json
import os
import subprocess
import sys

TRACEFS = os.environ["TRACEFS"]
SOURCE = os.environ["TRACEFS_SOURCE_ROOT"]
CORPUS = os.path.join(os.environ.get("TRACEFS_CORPUS", "/nonexistent"), "rr")
failures = []


def names(writes):
    """frames/<time>.mem/ names: 0x<addr>, ~<index> for a repeated address."""
    seen = set()
    for w in writes:
        name = "0x%x" % w["addr"]
        yield (name + "~%d" % w["index"]) if name in seen else name, w
        seen.add(name)


def check(trace, truth, every=1):
    by_time = {}
    for w in truth["memwrites"]:
        by_time.setdefault(w["time"], []).append(w)
    checked = 0
    for n, (time, writes) in enumerate(sorted(by_time.items())):
        if n % every:
            continue
        writes.sort(key=lambda w: w["index"])
        frame = json.loads(subprocess.run([TRACEFS, "cat", trace, f"frames/{time}.json"],
                                          stdout=subprocess.PIPE).stdout)
        decoded = [(m["data_offset"], m["stored_bytes"], m["size"]) for m in frame["mem_writes"]]
        if decoded != [(w["data_offset"], w["stored_bytes"], w["size"]) for w in writes]:
            failures.append(f"{trace} frames/{time}.json: memory writes differ from the truth")
        for name, w in names(writes):
            data = subprocess.run([TRACEFS, "cat", trace, f"frames/{time}.mem/{name}"],
                                  stdout=subprocess.PIPE).stdout
            if len(data) != w["size"] or hashlib.sha256(data).hexdigest() != w["sha256"]:
                failures.append(f"{trace} frames/{time}.mem/{name}: {len(data)} bytes, hash differs")
            checked += 1
    print(f"{trace}: {checked} writes checked")


for name in ("edge-0", "mtdemo-0"):
    check(os.path.join(SOURCE, "tests/data/rr", name),
          json.load(open(os.path.join(SOURCE, "tests/rr/refs", name + ".json"))))
edge = os.path.join(SOURCE, "tests/data/rr/edge-0")
for n in range(1, json.loads(subprocess.run([TRACEFS, "cat", edge, "info.json"], stdout=subprocess.PIPE).stdout)["rr"]["frames"] + 1):
    try:
        json.loads(subprocess.run([TRACEFS, "cat", edge, f"frames/{n}.json"], stdout=subprocess.PIPE).stdout)
    except ValueError as error:
        failures.append(f"edge-0 frames/{n}.json: {error}")
medium = os.path.join(CORPUS, "traces/medium-0")
if os.path.isdir(medium):
    check(medium, json.load(open(os.path.join(CORPUS, "truth/medium-0.json"))), every=40)
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
