#!/usr/bin/env python3
"""apitrace: calls/<n>.json flags and flag_names equal what `apitrace
pickle -s` gives every call (the flags apitrace's parser derives from the
function name, the fake detail, glGetError results, incomplete calls)."""
import glob
import json
import os
import subprocess
import sys

TRACEFS = os.environ['TRACEFS']
DATA = os.path.join(os.environ['TRACEFS_SOURCE_ROOT'], 'tests', 'data', 'apitrace')
bad = 0
for ref in sorted(glob.glob(os.path.join(DATA, 'ref', '*.pickle-s.jsonl'))):
    trace = os.path.join(DATA, os.path.basename(ref).replace('.pickle-s.jsonl', '.trace'))
    checked = 0
    for line in open(ref):
        call = json.loads(line)
        if 'no' not in call:
            continue
        out = subprocess.run([TRACEFS, 'cat', trace, f"calls/{call['no']}.json"], stdout=subprocess.PIPE, check=True)
        ours = json.loads(out.stdout)
        checked += 1
        if (ours['flags'], ours['flag_names'], ours['function']) != (call['flags'], call['flag_names'], call['name']):
            bad += 1
            print(f"FAIL: {trace} call {call['no']}: {ours['function']} {ours['flags']} {ours['flag_names']}, "
                  f"pickle: {call['name']} {call['flags']} {call['flag_names']}")
    print(f'{os.path.basename(trace)}: {checked} calls checked')
sys.exit(1 if bad else 0)
