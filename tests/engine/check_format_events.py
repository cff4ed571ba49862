#!/usr/bin/env python3
"""The common event files of real traces (every format), read from a real
mount of each trace:

* events.jsonl has one line per event of the format's main view, counted
  against the format's own reference decode (rr dump, the FXT Go reader's
  JSON, apitrace dump -v) where the trace has one, else against the
  native main view (itself byte-identical to the reference, tested apart):
    rr:       one per frame, except that an entering syscall frame whose
              thread's next frame (within 64 frames) is its exit makes one
              `complete` event with it;
    FXT:      one per event record (a begin that never ends, an end that
              closes nothing: instants);
    apitrace: one per call, verbose and incomplete ones included;
    XRay:     one per record of events.yaml (itself byte-identical to
              llvm-xray convert), enters and exits paired as llvm-xray
              account pairs them (begin/end), the rest instants; names
              symbolized when the binary is given (-o xray_binary), the
              function id otherwise;
    sp-rtrace: one per call of sp-rtrace-postproc's text; an allocation
              that a later free ends (postproc -l's pairing, replayed
              here from the text) is async_begin, that free async_end,
              id = the address, both named after the allocation's
              function (the free's own in args.function), everything
              else an instant; ts, size, address and frame count are
              those of the text, and the leaked allocations those of
              the `leaks` view; a log made by scripts/make-sprtrace is
              checked against its native `events` view;
  and the names, kinds and threads match that decode, event by event;
* it parses (json and jq), the same ten keys everywhere, and the files
  threads/<tid>/events.jsonl partition it;
* export/chrome.json: ph, ts, pid, tid everywhere, B/E balanced per thread,
  every X has dur (rr: some X, i.e. syscalls with durations; sp-rtrace:
  every async e closes an open b of its (pid, cat, id, name), as
  Perfetto's JSON importer keys them, none left open);
* export/trace.perfetto-trace decodes with protoc and, per thread track,
  its slices and instants are those of events.jsonl
  (tests/engine/check_event_exports.py's checks, reused);
* summary.csv counts every event under its name;
* reads at random offsets give the bytes of a sequential read.

Usage: check_format_events.py TRACEFS [FORMAT...].  Traces of ../shared/corpus are
checked when it exists.  Exit 77 (skip) without /dev/fuse.
"""
import collections
import csv
import io
import json
import lzma
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_event_exports as exports  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from mount_guard import guard, on_signals  # noqa: E402

SKIP = 77
PAIR_FRAMES = 64
ROOT = os.environ.get("TRACEFS_SOURCE_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")
CORPUS = os.path.join(ROOT, "..", "shared", "corpus")
PROTO = os.path.join(ROOT, "..", "shared", "specs", "perfetto", "perfetto_trace.proto")


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def read_text(path):
    if path.endswith(".xz"):
        with lzma.open(path, "rt", errors="replace") as f:
            return f.read()
    with open(path, errors="replace") as f:
        return f.read()


# ---- what each format's main view says the events are: [(name, kind, tid)] ----

FRAME = re.compile(r"global_time:(\d+), event:`([^']*)' (?:\(state:(\w+)\) )?tid:(-?\d+)")


def rr_expected(dump):
    frames = [(m.group(2), m.group(3), int(m.group(4))) for m in FRAME.finditer(dump)]
    paired_exit = set()
    out = []
    for i, (event, state, tid) in enumerate(frames):
        if i in paired_exit:
            continue
        syscall = event[len("SYSCALL: "):] if event.startswith("SYSCALL: ") else None
        if syscall is not None and state != "EXITING_SYSCALL":
            partner = None
            for j in range(i + 1, min(i + 1 + PAIR_FRAMES, len(frames))):
                if frames[j][2] == tid:
                    if frames[j][0] == event and frames[j][1] == "EXITING_SYSCALL":
                        partner = j
                    break
            if partner is not None:
                paired_exit.add(partner)
                out.append((syscall, "complete", tid))
            else:
                out.append((syscall + " (enter)", "instant", tid))
        elif syscall is not None:
            out.append((syscall + " (exit)", "instant", tid))
        else:
            out.append((event, "instant", tid))
    return out


FXT_KINDS = {"InstantEventRecord": "instant", "CounterEventRecord": "counter",
             "DurationBeginEventRecord": "begin", "DurationEndEventRecord": "end",
             "DurationCompleteEventRecord": "complete", "AsyncBeginEventRecord": "async_begin",
             "AsyncInstantEventRecord": "async_instant", "AsyncEndEventRecord": "async_end",
             "FlowBeginEvent": "flow_begin", "FlowStepEvent": "flow_step", "FlowEndEvent": "flow_end"}


def fxt_expected_reference(text):
    out = []
    for line in text.splitlines():
        record = json.loads(line)
        kind = FXT_KINDS.get(record.get("type"))
        if kind:
            r = record["record"]
            out.append((r.get("Name", ""), kind, r.get("Thread", {}).get("ThreadID")))
    return out


FXT_LINE = re.compile(r"^\d+ (\d+)/(\d+) (\w+) ")
FXT_NATIVE_KINDS = {"instant": "instant", "counter": "counter", "dur_begin": "begin", "dur_end": "end",
                    "dur_complete": "complete", "async_begin": "async_begin", "async_instant": "async_instant",
                    "async_end": "async_end", "flow_begin": "flow_begin", "flow_step": "flow_step",
                    "flow_end": "flow_end"}


def fxt_expected_native(text):
    """From the native `events` view: kinds and threads (names are escaped there)."""
    out = []
    for line in text.splitlines():
        m = FXT_LINE.match(line)
        if not m:
            fail("unexpected line in FXT events: %r" % line[:200])
        out.append((None, FXT_NATIVE_KINDS.get(m.group(3), m.group(3)), int(m.group(2))))
    return out


CALL = re.compile(r"^(\d+) @(\d+) (\w+)\(", re.M)


def apitrace_expected(text):
    calls = {}
    for m in CALL.finditer(text):
        calls.setdefault(int(m.group(1)), (m.group(3), "complete", int(m.group(2))))
    if sorted(calls) != list(range(len(calls))):
        fail("the reference's call numbers are not 0..n-1")
    return [calls[n] for n in range(len(calls))]


SPRT_CALL = re.compile(r"^(\d+)\. (?:@([0-9a-f]+) )?(?:\[(\d+):(\d\d):(\d\d)\.(\d{3})\] )?(.*)$")
SPRT_ALLOC = re.compile(r"\((-?\d+)\) = 0x([0-9a-f]+)$")
SPRT_FREE = re.compile(r"\(0x([0-9a-f]+)\)$")
SPRT_RESOURCE = re.compile(r"^<[0-9a-f]+> : (.*) \((.*)\)( \[refcount\])?$")


def sprtrace_calls(text):
    """sp-rtrace-postproc's calls: dicts of number, name, resource, alloc,
    size, address, ms (None without a timestamp), frames."""
    pid = int(re.search(r", pid=(\d+), ", text.split("\n", 1)[0]).group(1))
    resources = {}
    for line in text.splitlines():
        m = SPRT_RESOURCE.match(line)
        if m:
            resources[m.group(1)] = bool(m.group(3))
    single = next(iter(resources)) if len(resources) == 1 else None
    calls = []
    for line in text.splitlines():
        if line.startswith("\t"):
            if calls and not line.startswith("\t$"):
                calls[-1]["frames"] += 1
            continue
        m = SPRT_CALL.match(line)
        if not m:
            continue
        rest = m.group(7)
        alloc = SPRT_ALLOC.search(rest)
        free = None if alloc else SPRT_FREE.search(rest)
        if not alloc and not free:
            fail("unexpected call line %r" % line)
        head = rest[:(alloc or free).start()]
        resource = single
        named = re.match(r"^(.*)<([^<>]*)>$", head)
        if named and single is None:
            head, resource = named.group(1), named.group(2)
        ms = None
        if m.group(3) is not None:
            ms = ((int(m.group(3)) * 60 + int(m.group(4))) * 60 + int(m.group(5))) * 1000 + int(m.group(6))
        calls.append({"number": int(m.group(1)), "name": head, "resource": resource, "alloc": bool(alloc),
                      "size": int(alloc.group(1)) if alloc else 0,
                      "address": int((alloc or free).group(alloc and 2 or 1), 16), "ms": ms, "frames": 0,
                      "refcount": resources.get(resource, False)})
    if [c["number"] for c in calls] != list(range(1, len(calls) + 1)):
        fail("the reference's call numbers are not 1..n")
    return pid, calls


def c_constant(header, name):
    with open(os.path.join(ROOT, header)) as f:
        m = re.search(r"^#define %s +\(?(\d+)u(?: << (\d+)\))?" % name, f.read(), re.M)
    if not m:
        fail("no %s in %s" % (name, header))
    return int(m.group(1)) << int(m.group(2) or 0)


class SprtracePairNames:
    """The name a pair carries (decoders/sprtrace/sprtrace_leaks.c): its
    allocation's function while that is among the first
    LIMIT_SPRT_PAIR_NAMES functions of allocations that open a resource
    (at most LIMIT_SPRT_PAIR_NAME_BYTES long) and either among the first
    SPRT_PAIR_CODED_NAMES of them or in one of the pairs of the others
    the escapes keep (two calls each: LIMIT_SPRT_PAIR_ESCAPES_BASE and one
    per LIMIT_SPRT_PAIR_ESCAPE_SPACING bytes of log, at most
    LIMIT_SPRT_PAIR_ESCAPES); else its resource type ("allocation"
    without one)."""

    def __init__(self, log_size):
        limits = "cache/tracefs_limits.h"
        self.limit = c_constant(limits, "LIMIT_SPRT_PAIR_NAMES")
        self.max_bytes = c_constant(limits, "LIMIT_SPRT_PAIR_NAME_BYTES")
        self.escape_limit = min(c_constant(limits, "LIMIT_SPRT_PAIR_ESCAPES"),
                                c_constant(limits, "LIMIT_SPRT_PAIR_ESCAPES_BASE") +
                                log_size // c_constant(limits, "LIMIT_SPRT_PAIR_ESCAPE_SPACING"))
        self.coded = c_constant("decoders/sprtrace/sprtrace.h", "SPRT_PAIR_CODED_NAMES")
        self.index = {}
        self.escapes = 0

    def opened(self, name):
        """The table index of an allocation that opens a resource, or None."""
        if len(name.encode()) > self.max_bytes:
            return None
        if name not in self.index and len(self.index) < self.limit:
            self.index[name] = len(self.index)
        return self.index.get(name)

    def pair(self, call, index):
        if index is not None and index < self.coded:
            return call["name"]
        if index is not None and self.escapes + 2 <= self.escape_limit:
            self.escapes += 2
            return call["name"]
        return call["resource"] or "allocation"


def sprtrace_kinds(calls, undefined, log_size):
    """postproc -l's pairing (filter.c): an allocation opens (resource,
    address), a refcounted one again only counts up; a free closes it when
    the count falls to 0 (or at once when not refcounted).  The text
    cannot tell a free from a call of undefined type: `undefined` holds
    the numbers events.jsonl types so (the real logs have none).
    Returns the kinds, the leaks and, per call of a pair, the name both
    ends carry: the allocation's function."""
    kinds = ["instant"] * len(calls)
    names = [c["name"] for c in calls]
    leaked = [c["alloc"] for c in calls]
    pair_names = SprtracePairNames(log_size)
    live = {}
    for i, c in enumerate(calls):
        if c["number"] in undefined:
            continue
        key = (c["resource"], c["address"])
        if c["alloc"]:
            if key in live and c["refcount"]:
                live[key][1] += 1
                leaked[i] = False
            else:
                live[key] = [i, 1, pair_names.opened(c["name"])]
            continue
        if key in live:
            live[key][1] -= 1
            if live[key][1] == 0 or not c["refcount"]:
                begin, _, index = live.pop(key)
                kinds[begin], kinds[i] = "async_begin", "async_end"
                names[begin] = names[i] = pair_names.pair(calls[begin], index)
                leaked[begin] = False
    return kinds, leaked, names


def sprtrace_expected(text, mnt):
    with open(os.path.join(mnt, "events.jsonl")) as f:
        undefined = {json.loads(line)["args"]["call"] for line in f if '"type":"undefined"' in line}
    pid, calls = sprtrace_calls(text)
    with open(os.path.join(mnt, "info.json")) as f:
        log_size = json.load(f)["size"]
    kinds, leaked, names = sprtrace_kinds(calls, undefined, log_size)
    return [(name, kind, pid, c, lost) for c, kind, lost, name in zip(calls, kinds, leaked, names)]


def check_sprtrace(trace, mnt, events, expected, chrome):
    """The args and times of each call, the leaks, the async pairs."""
    for e, (_, kind, _, c, lost) in zip(events, expected):
        args = e["args"]
        want_ts = None if c["ms"] is None else c["ms"] * 1000000
        if e["ts"] != want_ts or e["pid"] != e["tid"] or args["call"] != c["number"] or \
                args["size"] != c["size"] or int(args["address"], 16) != c["address"] or \
                args["frames"] != c["frames"] or args["resource"] != (e["cat"] or None) or \
                args.get("leaked", False) != lost:
            fail("%s: event %s is not call %s" % (trace, e, c))
        if kind.startswith("async_") and (e["id"] != c["address"] or e["cat"] != c["resource"]):
            fail("%s: async event %s is not keyed by the resource and address" % (trace, e))
        if kind.startswith("async_") and args.get("function") != c["name"]:
            fail("%s: async event %s does not carry its call's function %r" % (trace, e, c["name"]))
        if not kind.startswith("async_") and "function" in args:
            fail("%s: %s carries args.function" % (trace, e))
    begun = {}
    for e in events:
        key = (e["cat"], e["id"])
        if e["kind"] == "async_begin":
            begun[key] = e["name"]
        elif e["kind"] == "async_end" and begun.pop(key, None) != e["name"]:
            fail("%s: async_end %s is not named as its async_begin" % (trace, e))
    leaks = {int(m.group(1)) for m in re.finditer(r"^(\d+)\. ", read_text(os.path.join(mnt, "leaks")), re.M)}
    if leaks != {e["args"]["call"] for e in events if e["args"].get("leaked") or e["args"]["type"] == "undefined"}:
        fail("%s: the leaked allocations of events.jsonl are not those of `leaks`" % trace)
    open_async = collections.Counter()
    for c in chrome:
        key = (c["pid"], c.get("cat"), c.get("id"), c["name"])
        if c["ph"] == "b":
            if open_async[key]:
                fail("%s: %s begins again before it ends" % (trace, key))
            open_async[key] += 1
        elif c["ph"] == "e":
            if not open_async[key]:
                fail("%s: async end %s with no begin" % (trace, c))
            open_async[key] -= 1
    if any(open_async.values()):
        fail("%s: async begins never end" % trace)
    if any(kind == "async_begin" for _, kind, _, _, _ in expected) and not any(c["ph"] == "e" for c in chrome):
        fail("%s: no allocation with its free in chrome.json" % trace)


# ---- the traces ----

def first_existing(*paths):
    for path in paths:
        if path and os.path.exists(path):
            return path
    return None


def traces():
    """(format, trace path, reference path or None)."""
    out = []
    for name in ("mtdemo-0", "edge-0"):
        out.append(("rr", os.path.join(DATA, "rr", name), os.path.join(ROOT, "tests", "rr", "refs", name, "default.txt")))
    for name in sorted(os.listdir(os.path.join(DATA, "fxt"))):
        if name.endswith(".fxt"):
            ref = os.path.join(DATA, "fxt", name[:-4] + ".rsfxt-go.jsonl")
            out.append(("fxt", os.path.join(DATA, "fxt", name), ref if os.path.exists(ref) else None))
    for name in sorted(os.listdir(os.path.join(DATA, "apitrace"))):
        if name.endswith(".trace"):
            base = name[:-len(".trace")].split(".")[0]
            ref = first_existing(os.path.join(DATA, "apitrace", "ref", base + ".dump-v-tids.txt"))
            out.append(("apitrace", os.path.join(DATA, "apitrace", name), ref))
    for name in sorted(os.listdir(os.path.join(DATA, "sprtrace"))):
        if name.endswith(".rtrace"):
            ref = os.path.join(DATA, "sprtrace", name[:-len(".rtrace")] + ".postproc.txt")
            out.append(("sp-rtrace", os.path.join(DATA, "sprtrace", name), ref if os.path.exists(ref) else None))
    if os.path.isdir(CORPUS):
        for version in ("v1.4", "v1.4-i386", "v2.0"):
            folder = os.path.join(CORPUS, "sp-rtrace", version)
            for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
                if name.endswith(".rtrace"):
                    out.append(("sp-rtrace", os.path.join(folder, name),
                                first_existing(os.path.join(folder, name[:-len(".rtrace")] + ".postproc.txt"))))
        out.append(("rr", os.path.join(CORPUS, "rr", "traces", "medium-0"),
                    first_existing(os.path.join(CORPUS, "rr", "dumps", "medium-0", "default.txt.xz"))))
        for name in ("ftfrs-tracing_test", "magic-trace_jane-tracing"):
            out.append(("fxt", os.path.join(CORPUS, "fxt", name + ".fxt"),
                        first_existing(os.path.join(CORPUS, "fxt", name + ".rsfxt-go.jsonl"))))
        for name in ("glxinfo", "glxgears-2s", "glxgears-2s.zlib"):
            base = name.split(".")[0]
            out.append(("apitrace", os.path.join(CORPUS, "apitrace", "traces", name + ".trace"),
                        first_existing(os.path.join(CORPUS, "apitrace", "ref", base + ".dump-v-tids.txt"))))
    # XRay: the reference is the binary (None: mounted without, names are ids).
    xray = os.path.join(DATA, "xray")
    for name in sorted(os.listdir(xray)):
        if name.endswith(".xray"):
            binary = os.path.join(xray, "bin", name.split(".")[0])
            out.append(("xray", os.path.join(xray, name), binary if os.path.exists(binary) else None))
    out.append(("xray", os.path.join(xray, "fib.fdr-emu.xray"), None))
    if os.path.isdir(CORPUS):
        for name in ("big-small.fdr-emu.xray", "threads.basic-emu.xray"):
            out.append(("xray", os.path.join(CORPUS, "xray", "traces", name), None))
    return [t for t in out if os.path.exists(t[1])]


def synthetic_sprtrace_logs(work):
    """Logs of scripts/make-sprtrace (checked against their native view):
    one as it makes them, one with 1100 allocation functions, more than
    the pair names and escapes keep, so that later pairs are named after
    their resource type."""
    out = []
    for name, extra in (("plain", []), ("many-functions", ["--alloc-names", "1100"])):
        log = os.path.join(work, name + ".rtrace")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make-sprtrace"), log, "--calls",
                        "100000" if extra else "30000"] + extra, check=True, stdout=subprocess.DEVNULL)
        out.append(("sp-rtrace", log, None))
    return out


def synthetic_xray_logs(work):
    """FDR logs made by tests/xray/tsc_order.py's generator: a main() never
    exited, exits that close a lower frame (the frames above are cut), tail
    exits, TSCs that go back, over many checkpoint intervals, so that the
    pairing is checked where it needs the checkpoints' open calls."""
    os.environ.setdefault("TRACEFS", TRACEFS)
    sys.path.insert(0, os.path.join(ROOT, "tests", "xray"))
    import tsc_order  # noqa: E402
    out = []
    for name, seed, threads, buffers, per_buffer, backs in (
            ("migration", 1, 3, 12, 3000, {6: ("cpu", 900_000), 10: ("wrap", 5)}),
            ("one-thread", 2, 1, 20, 4000, {})):
        log = os.path.join(work, name + ".xray")
        tsc_order.make_log(log, seed, threads, buffers, per_buffer, backs)
        out.append(("xray", log, None))
    return out


def unended_begins_as_instants(events):
    """A begin whose thread's nesting never returns to it, and an end with
    no open begin on its thread, are instants."""
    out = list(events)
    depth = collections.Counter()
    for i, (name, kind, tid) in enumerate(events):
        if kind == "begin":
            depth[tid] += 1
        elif kind == "end" and depth[tid] == 0:
            out[i] = (name, "instant", tid)
        elif kind == "end":
            depth[tid] -= 1
    for i, (name, kind, tid) in enumerate(events):
        if kind != "begin":
            continue
        nesting = 1
        for _, later, other in events[i + 1:]:
            if other == tid and later in ("begin", "end"):
                nesting += 1 if later == "begin" else -1
                if nesting == 0:
                    break
        if nesting:
            out[i] = (name, "instant", tid)
    return out


YAML_RECORD = re.compile(r"^  - \{ type: \d+, func-id: (-?\d+), function: (.*?), (?:args: \[[^\]]*\], )?"
                         r"cpu: \d+, thread: (\d+), (?:process: (\d+), )?kind: ([a-z-]+), tsc: \d+, data: .*\}$")


def xray_name(func_id, label, symbolized):
    """The name the tree shows: the symbol (events.yaml's label, unquoted),
    or the id where the binary has no symbol for it (or is not given)."""
    if not symbolized or label.startswith(("'@(", "'#", "@(", "#")):
        return func_id
    if label.startswith("'"):
        return label[1:-1].replace("''", "'")
    if label.startswith('"'):
        return None   # escaped: not compared
    return label


def xray_expected(yaml, symbolized):
    """One event per record; an exit closes the innermost open frame of its
    function on its thread (frames above it are cut): that enter is a
    begin, the exit its end; cut or never exited enters and exits that
    close nothing are instants."""
    out = []
    stacks = collections.defaultdict(list)
    for line in yaml.splitlines():
        if not line.startswith("  - {"):
            continue
        m = YAML_RECORD.match(line)
        if not m:
            fail("unexpected line in events.yaml: %r" % line[:200])
        func_id, label, tid, pid, kind = m.group(1), m.group(2), int(m.group(3)), m.group(4), m.group(5)
        if kind in ("custom-event", "typed-event"):
            out.append((kind, "instant", tid))
            continue
        out.append((xray_name(func_id, label, symbolized), "instant", tid))
        stack = stacks[(tid, pid)]
        if kind in ("function-enter", "function-enter-arg"):
            stack.append((func_id, len(out) - 1))
            continue
        depth = len(stack)
        while depth and stack[depth - 1][0] != func_id:
            depth -= 1
        if depth:
            enter = stack[depth - 1][1]
            out[enter] = (out[enter][0], "begin", tid)
            out[-1] = (out[-1][0], "end", tid)
            del stack[depth - 1:]
    return out


def expected_events(fmt, mnt, ref):
    if fmt == "xray":
        return xray_expected(read_text(os.path.join(mnt, "events.yaml")), ref is not None)
    if fmt == "rr":
        return rr_expected(read_text(ref) if ref else read_text(os.path.join(mnt, "events")))
    if fmt == "fxt":
        if ref:
            return unended_begins_as_instants(fxt_expected_reference(read_text(ref)))
        return unended_begins_as_instants(fxt_expected_native(read_text(os.path.join(mnt, "events"))))
    if fmt == "sp-rtrace":
        return sprtrace_expected(read_text(ref) if ref else read_text(os.path.join(mnt, "events")), mnt)
    return apitrace_expected(read_text(ref) if ref else read_text(os.path.join(mnt, "events-verbose")))


def copy_files(mnt, work):
    """The mount's common files in check_event_exports.py's layout."""
    shutil.copy(os.path.join(mnt, "events.jsonl"), os.path.join(work, "events.jsonl"))
    shutil.copy(os.path.join(mnt, "export", "chrome.json"), os.path.join(work, "chrome.json"))
    shutil.copy(os.path.join(mnt, "export", "trace.perfetto-trace"), os.path.join(work, "trace.perfetto-trace"))
    os.mkdir(os.path.join(work, "threads"))
    for entry in sorted(os.listdir(os.path.join(mnt, "threads"))):
        path = os.path.join(mnt, "threads", entry, "events.jsonl")
        if not os.path.exists(path):
            fail("threads/%s has no events.jsonl" % entry)
        with open(path, "rb") as f:
            data = f.read()
        if not data:
            continue
        first = json.loads(data.split(b"\n", 1)[0])
        target = os.path.join(work, "threads", "%s_%s.jsonl" % (first["pid"], first["tid"]))
        if os.path.exists(target):
            fail("two threads/ directories hold the events of %s/%s" % (first["pid"], first["tid"]))
        with open(target, "wb") as f:
            f.write(data)


def compare(fmt, trace, events, expected):
    if len(events) != len(expected):
        fail("%s: events.jsonl has %d lines, the main view %d events" % (trace, len(events), len(expected)))
    if fmt == "fxt" and expected and expected[0][0] is not None:
        # The Go reader groups records by provider: compare as multisets.
        got = collections.Counter((e["name"], e["kind"], e["tid"]) for e in events)
        if got != collections.Counter(expected):
            fail("%s: events.jsonl's (name, kind, tid) differ from the reference's" % trace)
        return
    for number, (event, (name, kind, tid, *_)) in enumerate(zip(events, expected)):
        if event["kind"] != kind or (name is not None and event["name"] != name) or \
                (tid is not None and event["tid"] != tid):
            fail("%s: event %d is %s, the main view says %s" % (trace, number, event, (name, kind, tid)))
        if fmt == "apitrace" and event["args"]["call"] != number:
            fail("%s: event %d is call %s" % (trace, number, event["args"]["call"]))


def check_summary(mnt, events):
    with open(os.path.join(mnt, "summary.csv"), newline="") as f:
        rows = list(csv.reader(f))
    if rows[0] != ["name", "count", "total_dur_ns", "max_dur_ns"]:
        fail("summary.csv header %s" % rows[0])
    got = {row[0]: int(row[1]) for row in rows[1:]}
    want = collections.Counter(e["name"] for e in events if e["kind"] != "end")
    if got != dict(want):
        fail("summary.csv counts differ from events.jsonl")
    for e in events:
        if e["kind"] == "complete":
            row = next(r for r in rows[1:] if r[0] == e["name"])
            if int(row[3]) < e["dur"]:
                fail("summary.csv max_dur of %s below %d" % (e["name"], e["dur"]))


def check_random_reads(mnt, work):
    """Reads at offsets out of order (each resumes at a checkpoint with the
    iterator's cursor: rr's map of paired exits, FXT's offset) give the
    bytes of the whole file."""
    rng = random.Random(24)
    for mounted, copy in (("events.jsonl", "events.jsonl"), ("export/chrome.json", "chrome.json"),
                          ("export/trace.perfetto-trace", "trace.perfetto-trace")):
        with open(os.path.join(work, copy), "rb") as f:
            whole = f.read()
        fd = os.open(os.path.join(mnt, mounted), os.O_RDONLY)
        try:
            for _ in range(40):
                offset = rng.randrange(max(len(whole), 1))
                length = rng.choice((1, 100, 4096, 70000))
                if os.pread(fd, length, offset) != whole[offset:offset + length]:
                    fail("%s: bytes at %d differ from a sequential read" % (mounted, offset))
        finally:
            os.close(fd)


def check_trace(fmt, trace, ref, proto):
    mnt = tempfile.mkdtemp(prefix="tracefs-mnt-")
    work = tempfile.mkdtemp(prefix="tracefs-events-")
    try:
        # A small cache: the random reads below render again from checkpoints.
        options = "auto_unmount,cache_size=2M"
        if fmt == "xray" and ref:
            options += ",xray_binary=" + ref
        subprocess.run([TRACEFS, "-o", options, trace, mnt], check=True)
        guard(mnt)
        copy_files(mnt, work)
        check_random_reads(mnt, work)
        expected = expected_events(fmt, mnt, ref)
        events = exports.check_jsonl(work, len(expected))
        compare(fmt, trace, events, expected)
        exports.check_chrome(work, events)
        with open(os.path.join(work, "chrome.json")) as f:
            chrome = json.load(f)["traceEvents"]
        if fmt == "rr" and not any(c["ph"] == "X" and c["dur"] > 0 for c in chrome):
            fail("%s: no syscall with a duration in chrome.json" % trace)
        if fmt == "sp-rtrace":
            check_sprtrace(trace, mnt, events, expected, chrome)
        check_summary(mnt, events)
        if proto:
            exports.check_perfetto(work, events, proto, sample=False)
        print("ok %s (%s, %d events, reference %s)" % (trace, fmt, len(events), ref or "the native view"))
    finally:
        subprocess.run(["fusermount3", "-u", mnt], stderr=subprocess.DEVNULL)
        os.rmdir(mnt)
        shutil.rmtree(work)


def main():
    global TRACEFS
    TRACEFS = sys.argv[1]
    # meson ends a test that runs past its timeout with SIGTERM: exit through
    # the finally blocks, so the mount is undone.
    on_signals()
    if not os.path.exists("/dev/fuse") or not shutil.which("fusermount3"):
        print("SKIP: no /dev/fuse or fusermount3")
        return SKIP
    proto = PROTO if shutil.which("protoc") and os.path.exists(PROTO) else None
    if not proto:
        print("the Perfetto checks need protoc and %s: skipped" % PROTO)
    os.environ.pop("TRACEFS_XRAY_BINARY", None)
    wanted = sys.argv[2:]
    generated = tempfile.mkdtemp(prefix="tracefs-xray-logs-")
    try:
        made = synthetic_xray_logs(generated) if not wanted or "xray" in wanted else []
        made += synthetic_sprtrace_logs(generated) if not wanted or "sp-rtrace" in wanted else []
        for fmt, trace, ref in traces() + made:
            if not wanted or fmt in wanted:
                check_trace(fmt, trace, ref, proto)
    finally:
        shutil.rmtree(generated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
