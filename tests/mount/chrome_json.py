"""Validates a Chrome Trace Event file (what Perfetto UI and chrome://tracing
open): the JSON array form or {"traceEvents": [...]}; every event has a
known phase, a name, numeric pid/tid and timestamps, durations >= 0,
B/E events balance per thread, and every async `e` ends an open `b` of
the same (pid, cat, id, name), the track Perfetto's JSON importer puts
it on.  usage: chrome_json.py FILE"""
import json
import sys

PHASES = set("BEXiIbneCMsftPOND(){}RrvVTSpFc")


def is_number(value):
    """A number, or a string holding one: llvm-xray writes "ts": "12.5" and
    Perfetto's and Chrome's importers coerce such strings."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    try:
        float(value)
        return isinstance(value, str)
    except (TypeError, ValueError):
        return False


def fail(message):
    print(f"{sys.argv[1]}: {message}", file=sys.stderr)
    sys.exit(1)


with open(sys.argv[1], "rb") as f:
    try:
        document = json.load(f)
    except ValueError as error:
        fail(f"not JSON: {error}")
events = document.get("traceEvents") if isinstance(document, dict) else document
if not isinstance(events, list):
    fail("neither an array nor an object with traceEvents")
open_spans = {}
open_async = {}
for n, event in enumerate(events):
    if not isinstance(event, dict):
        fail(f"event {n} is not an object")
    phase = event.get("ph")
    if not isinstance(phase, str) or phase not in PHASES:
        fail(f"event {n}: bad ph {phase!r}")
    if phase != "M" and not is_number(event.get("ts")):
        fail(f"event {n}: ts missing or not a number")
    if "name" not in event and phase not in ("E",):
        fail(f"event {n}: no name")
    for key in ("pid", "tid"):
        if key in event and not isinstance(event[key], (int, str)):
            fail(f"event {n}: {key} is {event[key]!r}")
    if phase == "X" and not (is_number(event.get("dur")) and float(event["dur"]) >= 0):
        fail(f"event {n}: complete event without a duration >= 0")
    if "args" in event and not isinstance(event["args"], dict):
        fail(f"event {n}: args is not an object")
    key = (event.get("pid"), event.get("tid"))
    if phase == "B":
        open_spans[key] = open_spans.get(key, 0) + 1
    elif phase == "E":
        open_spans[key] = open_spans.get(key, 0) - 1
        if open_spans[key] < 0:
            fail(f"event {n}: E without B on {key}")
    track = (event.get("pid"), event.get("cat"), event.get("id"), event.get("name"))
    if phase == "b":
        open_async[track] = open_async.get(track, 0) + 1
    elif phase == "e":
        if not open_async.get(track):
            fail(f"event {n}: async e without an open b on (pid, cat, id, name) {track}")
        open_async[track] -= 1
print(f"{sys.argv[1]}: {len(events)} events, valid")
