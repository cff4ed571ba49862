#!/usr/bin/env python3
"""Checks the common files rendered from the synthetic trace
(tests/engine/event_exports_sample.c) with real readers:

* events.jsonl: every line parses (Python's json, and jq when installed),
  every object has the same keys in the same order, seq counts 0..n-1, one
  line per event, integers beyond 2^53 are strings; threads/*.jsonl
  partition it.
* chrome.json: parses; every event has ph, ts, pid, tid; B/E balance per
  thread; every X has dur; one event per line of events.jsonl, same times.
* trace.perfetto-trace: decodes with
  `protoc --decode=perfetto.protos.Trace perfetto_trace.proto` (skipped when
  protoc or ../shared/specs/perfetto is missing); with the interning state
  replayed as trace processor keeps it (cleared by SEQ_INCREMENTAL_STATE_CLEARED),
  each thread track has the slices and instants of events.jsonl (names,
  times, begin/end balance), begin and instant times never go back on a
  track, counters have their values, flows and async operations are whole.

Usage: check_event_exports.py SAMPLE_BINARY
"""
import collections
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile

KEYS = ["seq", "ts", "dur", "kind", "pid", "tid", "cat", "name", "id", "args"]
EXACT = 1 << 53
SKIP = 77


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def as_int(value):
    """A JSON-lines integer: a number, or a string beyond 2^53."""
    if isinstance(value, str):
        number = int(value)
        if abs(number) <= EXACT:
            fail("integer %s within 2^53 written as a string" % value)
        return number
    if isinstance(value, int) and abs(value) > EXACT:
        fail("integer %d beyond 2^53 written as a number" % value)
    return value


def check_jsonl(directory, count):
    events = []
    with open(os.path.join(directory, "events.jsonl"), "rb") as f:
        for number, line in enumerate(f):
            event = json.loads(line)
            if list(event.keys()) != KEYS:
                fail("line %d has keys %s" % (number + 1, list(event.keys())))
            if as_int(event["seq"]) != number:
                fail("line %d has seq %s" % (number + 1, event["seq"]))
            for key in ("ts", "dur", "pid", "tid", "id"):
                if event[key] is not None:
                    event[key] = as_int(event[key])
            for value in event["args"].values():
                if isinstance(value, (int, str)) and not isinstance(value, bool):
                    if isinstance(value, int):
                        as_int(value)
            events.append(event)
    if len(events) != count:
        fail("events.jsonl has %d lines, the trace %d events" % (len(events), count))
    if shutil.which("jq"):
        out = subprocess.run(["jq", "-c", ".seq", os.path.join(directory, "events.jsonl")],
                             check=True, capture_output=True, text=True).stdout.split()
        if len(out) != count:
            fail("jq read %d objects" % len(out))
    # The threads' files partition it, each in seq order.
    parts = []
    for name in sorted(os.listdir(os.path.join(directory, "threads"))):
        pid, tid = name[:-len(".jsonl")].split("_")
        with open(os.path.join(directory, "threads", name), "rb") as f:
            mine = [json.loads(line) for line in f]
        for event in mine:
            if list(event.keys()) != KEYS or (as_int(event["pid"]), as_int(event["tid"])) != (int(pid), int(tid)):
                fail("threads/%s holds %s" % (name, event))
        seqs = [event["seq"] for event in mine]
        if seqs != sorted(seqs):
            fail("threads/%s out of order" % name)
        parts += seqs
    if sorted(parts) != list(range(count)):
        fail("threads/*.jsonl do not partition events.jsonl")
    print("events.jsonl: %d lines, same keys, threads partition it" % count)
    return events


def event_time(e):
    """Where the exports place an event: its ts, or its seq (as ns) when
    the format records no time for it."""
    return e["ts"] if e["ts"] is not None else e["seq"]


def check_chrome(directory, events):
    with open(os.path.join(directory, "chrome.json"), "rb") as f:
        chrome = json.load(f)["traceEvents"]
    if len(chrome) != len(events):
        fail("chrome.json has %d events, events.jsonl %d" % (len(chrome), len(events)))
    depth = collections.Counter()
    for c, e in zip(chrome, events):
        for key in ("ph", "ts", "pid", "tid"):
            if key not in c:
                fail("chrome event without %s: %s" % (key, c))
        if c["ph"] == "X" and "dur" not in c:
            fail("X without dur: %s" % c)
        if round(c["ts"] * 1000) != event_time(e) or c["name"] != e["name"]:
            fail("chrome event %s is not %s" % (c, e))
        thread = (c["pid"], c["tid"])
        if c["ph"] == "B":
            depth[thread] += 1
        elif c["ph"] == "E":
            depth[thread] -= 1
            if depth[thread] < 0:
                fail("E without B on %s" % (thread,))
    if any(depth.values()):
        fail("B/E unbalanced: %s" % dict(depth))
    print("chrome.json: %d events, ph/ts/pid/tid everywhere, B/E balanced" % len(chrome))


# ---- protobuf text format, as protoc --decode prints it ----

def unescape(text):
    """protoc's C escapes (\\n, \\", \\ooo octal for bytes) to bytes."""
    out = bytearray()
    i = 0
    simple = {"n": 10, "r": 13, "t": 9, '"': 34, "'": 39, "\\": 92}
    while i < len(text):
        c = text[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        nxt = text[i + 1]
        if nxt in simple:
            out.append(simple[nxt])
            i += 2
        elif nxt in "01234567":
            j = i + 1
            while j < len(text) and j < i + 4 and text[j] in "01234567":
                j += 1
            out.append(int(text[i + 1:j], 8))
            i = j
        elif nxt == "x":
            j = i + 2
            while j < len(text) and j < i + 4 and text[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(text[i + 2:j], 16))
            i = j
        else:
            fail("unknown escape in %r" % text)
    return bytes(out)


def parse_text(lines):
    """Nested dicts of lists: {field: [value or dict, ...]}."""
    root = {}
    stack = [root]
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
        elif line.endswith("{"):
            child = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(child)
            stack.append(child)
        else:
            key, value = line.split(":", 1)
            value = value.strip()
            if value.startswith('"'):
                value = unescape(value[1:-1]).decode("utf-8")
            stack[-1].setdefault(key, []).append(value)
    return root


def first(message, key, default=None):
    return message.get(key, [default])[0]


def annotation_value(a):
    for key, convert in (("int_value", int), ("uint_value", int), ("pointer_value", int),
                         ("double_value", float), ("string_value", str), ("bool_value", lambda v: v == "true")):
        if key in a:
            return convert(first(a, key))
    fail("annotation without a value: %s" % a)


def json_arg_value(value):
    """An events.jsonl arg as Perfetto holds it (None: not written)."""
    if isinstance(value, str) and value.startswith("0x"):
        return int(value, 16)
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value) and abs(int(value)) > EXACT:
        return int(value)   # a big integer; a shorter string of digits is a string
    return value


def check_perfetto(directory, events, proto, sample=True):
    """`sample`: the synthetic trace, whose names and segment count are known."""
    with open(os.path.join(directory, "trace.perfetto-trace"), "rb") as f:
        decoded = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "-I", os.path.dirname(proto), proto],
                                 stdin=f, check=True, capture_output=True, text=True)
    if decoded.stderr.strip():
        fail("protoc complained: " + decoded.stderr[:500])
    packets = parse_text(decoded.stdout.splitlines()).get("packet", [])

    # Replay the packets as trace processor would.
    tracks = {}                       # uuid -> ("thread", pid, tid) / ("counter", name) / ...
    interned = {}
    names = {}
    per_track = collections.defaultdict(list)    # uuid -> [(ts, type, name, packet index)]
    per_track_args = collections.defaultdict(list)   # uuid -> [{annotation: value}], as per_track
    counters = collections.defaultdict(list)
    flows = collections.Counter()
    terminating = collections.Counter()
    cleared = 0
    for index, packet in enumerate(packets):
        if first(packet, "trusted_packet_sequence_id") != "1":
            fail("packet %d without the sequence id" % index)
        flags = int(first(packet, "sequence_flags", "0"))
        if flags & 1:
            cleared += 1
            interned = {}
        for data in packet.get("interned_data", []):
            for field in ("event_names", "event_categories", "debug_annotation_names"):
                for entry in data.get(field, []):
                    interned[(field, first(entry, "iid"))] = first(entry, "name")
        for d in packet.get("track_descriptor", []):
            uuid = first(d, "uuid")
            if "thread" in d:
                t = d["thread"][0]
                kind = ("thread", int(first(t, "pid")), int(first(t, "tid")))
                names[kind] = first(t, "thread_name")
            elif "process" in d:
                kind = ("process", int(first(d["process"][0], "pid")))
                names[kind] = first(d["process"][0], "process_name")
            elif "counter" in d:
                kind = ("counter", first(d, "name"), first(d, "parent_uuid"))
            else:
                kind = ("named", first(d, "name"), first(d, "parent_uuid"))
            if tracks.setdefault(uuid, kind) != kind:
                fail("track %s described twice differently" % uuid)
        for e in packet.get("track_event", []):
            if not flags & 2:
                fail("a track event without SEQ_NEEDS_INCREMENTAL_STATE")
            uuid = first(e, "track_uuid")
            if uuid not in tracks:
                fail("packet %d uses track %s before its descriptor" % (index, uuid))
            name = first(e, "name")
            if "name_iid" in e:
                name = interned.get(("event_names", first(e, "name_iid")))
                if name is None:
                    fail("name iid %s not interned in packet %d" % (first(e, "name_iid"), index))
            for key in ("category_iids",):
                for iid in e.get(key, []):
                    if ("event_categories", iid) not in interned:
                        fail("category iid %s not interned" % iid)
            for a in e.get("debug_annotations", []):
                if "name_iid" in a and ("debug_annotation_names", first(a, "name_iid")) not in interned:
                    fail("annotation name iid not interned")
            ts = int(first(packet, "timestamp"))
            kind = first(e, "type")
            if kind == "TYPE_COUNTER":
                value = first(e, "counter_value")
                value = float(first(e, "double_counter_value")) if value is None else int(value)
                counters[uuid].append((ts, value))
                continue
            for f in e.get("flow_ids", []):
                flows[int(f)] += 1
            for f in e.get("terminating_flow_ids", []):
                terminating[int(f)] += 1
            annotations = {}
            for a in e.get("debug_annotations", []):
                key = first(a, "name")
                if "name_iid" in a:
                    key = interned[("debug_annotation_names", first(a, "name_iid"))]
                annotations[key] = annotation_value(a)
            per_track[uuid].append((ts, kind, name, index))
            per_track_args[uuid].append(annotations)
    # The sample's iterator names thread 101 "main", 202 "w\xe9rker" (not
    # UTF-8: the byte reads as U+00E9, as in JSON) and process 100 "app".
    expect_names = {("thread", 100, 101): "main", ("thread", 200, 202): "w\u00e9rker", ("process", 100): "app",
                    ("thread", 100, 102): None, ("process", 200): None}
    for key, name in expect_names.items() if sample else ():
        if names.get(key, "missing") != name:
            fail("%s is named %r, not %r" % (key, names.get(key, "missing"), name))
    segments = sum(1 for packet in packets if int(first(packet, "sequence_flags", "0")) & 1)
    if sample and cleared < 2:
        fail("expected several segments, saw %d" % cleared)

    # What events.jsonl says each thread track must hold.
    thread_uuid = {}
    for uuid, kind in tracks.items():
        if kind[0] == "thread":
            thread_uuid[kind[1:]] = uuid
        elif kind[0] == "named" and kind[1].startswith("tid "):
            parent = tracks.get(kind[2])
            if parent and parent[0] == "named" and parent[1].startswith("pid "):
                thread_uuid[(int(parent[1][4:]), int(kind[1][4:]))] = uuid
    expect_starts = collections.defaultdict(list)     # thread -> [(ts, type, name)]
    expect_slices = collections.defaultdict(list)     # thread -> [(start, end, name)]
    expect_counters = collections.defaultdict(list)   # (pid, series) -> [(ts, value)]
    expect_flows, expect_terminating = collections.Counter(), collections.Counter()
    open_slices = collections.defaultdict(list)
    expect_args = collections.defaultdict(list)       # thread -> [{key: value}], as expect_starts
    for e in events:
        thread = (e["pid"], e["tid"])
        kind, ts, name = e["kind"], event_time(e), e["name"]
        if kind in ("begin", "complete", "instant", "flow_begin", "flow_step", "flow_end"):
            expect_args[thread].append({k: json_arg_value(v) for k, v in e["args"].items() if v is not None})
        if kind == "begin":
            expect_starts[thread].append((ts, "TYPE_SLICE_BEGIN", name))
            open_slices[thread].append((ts, name))
        elif kind == "end":
            start, begun = open_slices[thread].pop()
            expect_slices[thread].append((start, ts, begun))
        elif kind == "complete":
            expect_starts[thread].append((ts, "TYPE_SLICE_BEGIN", name))
            expect_slices[thread].append((ts, ts + e["dur"], name))
        elif kind in ("instant", "flow_begin", "flow_step", "flow_end"):
            expect_starts[thread].append((ts, "TYPE_INSTANT", name))
            if kind == "flow_end":
                expect_terminating[e["id"]] += 1
            elif kind != "instant":
                expect_flows[e["id"]] += 1
        elif kind == "counter":
            for key, value in e["args"].items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    expect_counters[(e["pid"], name + " " + key)].append((ts, value))
    for thread, starts in expect_starts.items():
        uuid = thread_uuid.get(thread)
        if uuid is None:
            fail("no track for thread %s" % (thread,))
        got = per_track[uuid]
        got_starts = [(ts, kind, name) for ts, kind, name, _ in got if kind != "TYPE_SLICE_END"]
        if got_starts != starts:
            fail("thread %s: slices/instants differ from events.jsonl" % (thread,))
        got_args = [a for g, a in zip(got, per_track_args[uuid]) if g[1] != "TYPE_SLICE_END"]
        if got_args != expect_args[thread]:
            for g, x in zip(got_args, expect_args[thread]):
                if g != x:
                    fail("thread %s: annotations %s, events.jsonl args %s" % (thread, g, x))
            fail("thread %s: annotations differ from events.jsonl args" % (thread,))
        # Monotonic per track, unless the trace itself goes back on the
        # thread (magic-trace writes an inferred start at 0 last): then the
        # track keeps the trace's order, as compared above.
        times = [ts for ts, _, _ in got_starts]
        recorded = [ts for ts, _, _ in expect_starts[thread]]
        if times != sorted(times) and recorded == sorted(recorded):
            fail("thread %s: begin/instant times go back" % (thread,))
        # Trace processor sorts a track's events by time (stably): then
        # every end closes the latest open begin, and the slices are those
        # of events.jsonl.
        stack, slices = [], []
        for ts, kind, name, _ in sorted(got, key=lambda g: (g[0], g[3])):
            if kind == "TYPE_SLICE_BEGIN":
                stack.append((ts, name))
            elif kind == "TYPE_SLICE_END":
                if not stack:
                    fail("thread %s: an end with no open slice at %d" % (thread, ts))
                start, name = stack.pop()
                slices.append((start, ts, name))
        if stack:
            fail("thread %s: %d slices never end" % (thread, len(stack)))
        if sorted(slices) != sorted(expect_slices[thread]):
            fail("thread %s: slices differ from events.jsonl" % (thread,))
    got_counters = {}
    for uuid, values in counters.items():
        kind = tracks[uuid]
        pid = tracks[kind[2]][1] if tracks[kind[2]][0] == "process" else int(tracks[kind[2]][1][4:])
        got_counters[(pid, kind[1])] = values
    if got_counters != dict(expect_counters):
        fail("counters differ from events.jsonl")
    if flows != expect_flows or terminating != expect_terminating:
        fail("flows differ from events.jsonl")
    async_depth = collections.Counter()
    for uuid, got in per_track.items():
        if tracks[uuid][0] == "named" and not tracks[uuid][1].startswith("tid "):
            for _, kind, _, _ in got:
                async_depth[uuid] += {"TYPE_SLICE_BEGIN": 1, "TYPE_SLICE_END": -1}.get(kind, 0)
    if (sample and not async_depth) or any(async_depth.values()):
        fail("async tracks unbalanced or missing")
    print("trace.perfetto-trace: %d packets in %d segments, %d thread tracks, %d counter series, %d flows: "
          "as events.jsonl" % (len(packets), segments, len(expect_starts), len(got_counters), len(flows)))


def main():
    sample = sys.argv[1]
    root = os.environ.get("TRACEFS_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
    proto = os.path.join(root, "..", "shared", "specs", "perfetto", "perfetto_trace.proto")
    with tempfile.TemporaryDirectory() as directory:
        count = int(subprocess.run([sample, directory], check=True, capture_output=True, text=True).stdout)
        events = check_jsonl(directory, count)
        check_chrome(directory, events)
        if not shutil.which("protoc") or not os.path.exists(proto):
            print("SKIP: the Perfetto check needs protoc (protobuf-compiler) and " + proto)
            return SKIP
        check_perfetto(directory, events, proto)
    return 0


if __name__ == "__main__":
    sys.exit(main())
