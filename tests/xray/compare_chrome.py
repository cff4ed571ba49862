#!/usr/bin/env python3
"""Compares tracefs's export/llvm-xray-trace_event.json with llvm-xray convert
--output-format=trace_event: the same events in the same order (name, ph,
tid, pid, ts, sf) and the same stack frames.  usage: compare_chrome.py OURS REF"""
import json
import sys

def load(path):
    with open(path, 'rb') as f:
        return json.loads(f.read().decode('utf-8', 'surrogateescape'))

ours, ref = load(sys.argv[1]), load(sys.argv[2])
a, b = ours['traceEvents'], ref['traceEvents']
if len(a) != len(b):
    sys.exit(f'{len(a)} events, reference has {len(b)}')
for i, (x, y) in enumerate(zip(a, b)):
    if x != y:
        sys.exit(f'event {i} differs:\n  ours {x}\n  ref  {y}')
if ours['stackFrames'] != ref['stackFrames']:
    sys.exit('stack frames differ')
print(f'{len(a)} events, {len(ref["stackFrames"])} stack frames equal')
