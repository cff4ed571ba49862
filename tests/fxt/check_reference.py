#!/usr/bin/env python3
"""Compares what tracefs shows of an FXT trace with the reference decode of
the RichieSams/fxt Go reader (*.rsfxt-go.jsonl): every record of the
reference must appear, with the same values, in the tracefs tree.

usage: check_reference.py TRACEFS TRACE REFERENCE [--unknown N] [--ignore-arg NAME]

--ignore-arg: an argument whose value differs between two runs of the
writer (a stack address), for a trace checked against another run's decode.
"""
import base64
import json
import re
import subprocess
import sys

EVENT_TYPES = {
    "InstantEventRecord": "instant", "CounterEventRecord": "counter",
    "DurationBeginEventRecord": "dur_begin", "DurationEndEventRecord": "dur_end",
    "DurationCompleteEventRecord": "dur_complete", "AsyncBeginEventRecord": "async_begin",
    "AsyncInstantEventRecord": "async_instant", "AsyncEndEventRecord": "async_end",
    "FlowBeginEvent": "flow_begin", "FlowStepEvent": "flow_step", "FlowEndEvent": "flow_end",
}
STATES = ["new", "running", "suspended", "blocked", "dying", "dead"]

failures = []


def fail(msg):
    failures.append(msg)
    if len(failures) < 30:
        print("FAIL:", msg)


def tfs(args, binary=False):
    out = subprocess.run([TRACEFS] + args, check=True, stdout=subprocess.PIPE).stdout
    return out if binary else out.decode("utf-8", "surrogateescape")


def cat(path, binary=False):
    return tfs(["cat", TRACE, path], binary)


def ls(path):
    return tfs(["ls", TRACE, path]).split()


def expected_event(rec, kind):
    want = {"ts_ns": rec["TimestampNS"], "type": EVENT_TYPES[kind], "cat": rec["Category"],
            "name": rec["Name"], "pid": rec["Thread"]["ProcessID"], "tid": rec["Thread"]["ThreadID"],
            "args": rec["Args"]}
    if "CounterID" in rec:
        want["id"] = rec["CounterID"]
    if "CorrelationID" in rec:
        want["id"] = rec["CorrelationID"]
    if "DurationNS" in rec:          # really the end time (see fxt-notes.md)
        want["end_ns"] = rec["DurationNS"]
    return want


POINTER = re.compile(r"0x[0-9a-f]+")


def pointers_as_numbers(got, want):
    """tracefs writes pointer arguments as "0x..." strings (exact in every
    JSON reader); the Go reader writes them as numbers.  A "0x..." string
    where the reference has an integer is compared as that integer."""
    return {k: int(v, 16) if isinstance(v, str) and POINTER.fullmatch(v) and isinstance(want.get(k), int)
            and not isinstance(want.get(k), bool) else v for k, v in got.items()}


def got_event(ev):
    got = {k: ev[k] for k in ("ts_ns", "type", "cat", "name", "pid", "tid", "args")}
    for k in ("id", "end_ns"):
        if k in ev:
            got[k] = ev[k]
    return got


def parse_switch(line):
    fields = line.split()
    kv = dict(f.split("=", 1) for f in fields[2:] if "=" in f)
    return int(fields[0]), fields[1], kv


def main():
    global TRACEFS, TRACE
    TRACEFS, TRACE, reference = sys.argv[1:4]
    unknown, ignored = 0, set()
    rest = sys.argv[4:]
    while rest:
        if rest[0] == "--unknown":
            unknown = int(rest[1])
        elif rest[0] == "--ignore-arg":
            ignored.add(rest[1])
        rest = rest[2:]
    def drop(args):
        return {k: v for k, v in args.items() if k not in ignored}

    providers, events, kobjects, uobjects, blobs, switches = {}, {}, [], [], {}, []
    with open(reference) as f:
        for line in f:
            r = json.loads(line)
            if "provider_name" in r:
                providers[r["provider_id"]] = r
                continue
            kind, rec, pid = r["type"], r["record"], r["provider_id"]
            if kind in EVENT_TYPES:
                events.setdefault(pid, []).append(expected_event(rec, kind))
            elif kind == "KernelObjectRecord":
                kobjects.append((rec["ID"], rec["Type"], rec["Name"], rec["Args"]))
            elif kind == "UserspaceObjectRecord":
                uobjects.append((rec["Pointer"], rec["ProcessID"], rec["Name"], rec["Args"]))
            elif kind == "BlobRecord":
                blobs[rec["Name"]] = blobs.get(rec["Name"], b"") + base64.b64decode(rec["Payload"])
            elif kind in ("ContextSwitchRecord", "ThreadWakeupRecord"):
                switches.append((kind, rec))
            else:
                fail("reference record type %s not checked" % kind)

    # Providers and their events, in order.
    dirs = ls("providers")
    # Each provider's native events.jsonl (the root events.jsonl is the
    # common event model's, checked by tests/engine/check_format_events.py).
    got_by_provider = {}
    for name in dirs:
        for line in cat("providers/%s/events.jsonl" % name).splitlines():
            ev = json.loads(line)
            got_by_provider.setdefault(ev["provider"], []).append(got_event(ev))
    for pid, header in providers.items():
        name = "%d-%s" % (pid, header["provider_name"])
        if name not in dirs:
            fail("no providers/%s (have %s)" % (name, dirs))
        else:
            pinfo = json.loads(cat("providers/%s/info.json" % name))
            if pinfo["provider_events"] != header["provider_events"]:
                fail("provider %d events %s, reference %s" % (pid, pinfo["provider_events"],
                                                               header["provider_events"]))
        want, got = events.get(pid, []), got_by_provider.get(pid, [])
        if len(want) != len(got):
            fail("provider %d: %d events, reference %d" % (pid, len(got), len(want)))
        for i, (w, g) in enumerate(zip(want, got)):
            w["args"], g["args"] = drop(w["args"]), pointers_as_numbers(drop(g["args"]), w["args"])
            if w != g:
                fail("provider %d event %d:\n  got  %s\n  want %s" % (pid, i, g, w))
    total = sum(len(v) for v in events.values())
    lines = cat("events").count("\n")
    if lines != total:
        fail("events has %d lines, reference %d events" % (lines, total))

    # Kernel and userspace objects.
    got_k = []
    for name in ls("kobjects"):
        o = json.loads(cat("kobjects/" + name))
        got_k.append((o["koid"], o["type"], o["name"], o["args"]))
    want_args = {k[0]: k[3] for k in kobjects}
    got_k = [(k, t, n, pointers_as_numbers(a, want_args.get(k, {}))) for k, t, n, a in got_k]
    if sorted(map(repr, got_k)) != sorted(map(repr, kobjects)):
        fail("kobjects differ:\n  got  %s\n  want %s" % (got_k, kobjects))
    got_u = []
    for name in ls("uobjects"):
        o = json.loads(cat("uobjects/" + name))
        if not POINTER.fullmatch(o["pointer"]):
            fail("uobjects/%s: pointer %r is not a \"0x...\" string" % (name, o["pointer"]))
            continue
        got_u.append((int(o["pointer"], 16), o["pid"], o["name"], o["args"]))
    want_args = {u[0]: u[3] for u in uobjects}
    got_u = [(p, pid, n, pointers_as_numbers(a, want_args.get(p, {}))) for p, pid, n, a in got_u]
    if sorted(map(repr, got_u)) != sorted(map(repr, uobjects)):
        fail("uobjects differ:\n  got  %s\n  want %s" % (got_u, uobjects))

    # Blobs: records of one name concatenated.
    for name, payload in blobs.items():
        got = cat("blobs/" + name, binary=True)
        if got != payload:
            fail("blobs/%s: %r, reference %r" % (name, got, payload))

    # Scheduling records, per cpu in trace order.
    got_sw = {}
    for cpu in ls("cpus"):
        got_sw[int(cpu)] = [parse_switch(l) for l in cat("cpus/%s/switches" % cpu).splitlines()]
    seen = {}
    for kind, rec in switches:
        cpu = rec["CPUID"]
        i = seen.get(cpu, 0)
        seen[cpu] = i + 1
        if i >= len(got_sw.get(cpu, [])):
            fail("cpus/%d/switches lacks record %d" % (cpu, i))
            continue
        ts, what, kv = got_sw[cpu][i]
        args = {k: v for k, v in kv.items() if k not in ("cpu", "out", "out_state", "in", "tid")}
        want_args = {k: str(v) for k, v in rec["Args"].items()}
        if kind == "ContextSwitchRecord":
            ok = (what == "switch" and ts == rec["TimestampNS"] and kv["out"] == str(rec["OutgoingThreadID"])
                  and kv["out_state"] == STATES[rec["OutgoingThreadState"]]
                  and kv["in"] == str(rec["IncomingThreadID"]) and args == want_args)
        else:
            ok = (what == "wakeup" and ts == rec["TimestampNS"] and kv["tid"] == str(rec["WakingThreadID"])
                  and args == want_args)
        if not ok:
            fail("cpus/%d/switches line %d: %s, reference %s" % (cpu, i, got_sw[cpu][i], rec))

    info = json.loads(cat("info.json"))["fxt"]
    if info["unknown_records_skipped"] != unknown:
        fail("unknown_records_skipped %d, expected %d" % (info["unknown_records_skipped"], unknown))
    errors = cat("errors")
    if errors:
        fail("errors not empty: " + errors[:500])

    print("%s: %d events, %d kobjects, %d uobjects, %d blobs, %d scheduling records: %s"
          % (TRACE, total, len(kobjects), len(uobjects), len(blobs), len(switches),
             "%d FAILURES" % len(failures) if failures else "all match"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
