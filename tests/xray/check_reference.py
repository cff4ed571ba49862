#!/usr/bin/env python3
"""Decoder test: every XRay log against llvm-xray-14's outputs.
  events.yaml            == convert --output-format=yaml --symbolize (bytes)
  events.yaml, no binary == convert --output-format=yaml (bytes)
  functions/account.csv  == account --format=csv --sort=funcid (bytes)
  export/llvm-xray-trace_event.json == convert --output-format=trace_event (same events)
  events                 has as many records as fdr-dump shows
Logs: tests/data/xray/*.xray, plus $TRACEFS_CORPUS/xray/traces when present
(--corpus).  References: tests/data/xray/ref-digests.json."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xray_refs import binary_of, chrome_digest, sha  # noqa: E402

tracefs = os.environ['TRACEFS']
source = os.environ['TRACEFS_SOURCE_ROOT']
data = os.path.join(source, 'tests', 'data', 'xray')
corpus = os.path.join(os.environ.get('TRACEFS_CORPUS', '/nonexistent'), 'xray')
digests = json.load(open(os.path.join(data, 'ref-digests.json')))
failures = []
checked = 0

def cat(log, path, binary):
    env = dict(os.environ)
    env.pop('TRACEFS_XRAY_BINARY', None)
    if binary:
        env['TRACEFS_XRAY_BINARY'] = binary
    result = subprocess.run([tracefs, 'cat', log, path], env=env, capture_output=True)
    if result.returncode != 0:
        failures.append(f'{log} {path}: exit {result.returncode}: {result.stderr.decode(errors="replace")}')
        return None
    return result.stdout

def expect(log, what, got, want):
    global checked
    checked += 1
    if got != want:
        failures.append(f'{os.path.basename(log)}: {what} differs from llvm-xray-14')

def find_binary(prog):
    for d in (os.path.join(data, 'bin'), os.path.join(corpus, 'bin')):
        if os.path.isfile(os.path.join(d, prog)):
            return os.path.join(d, prog)
    return None

def check(log):
    name = os.path.basename(log)[:-len('.xray')]
    ref = digests.get(name, {})
    binary = find_binary(binary_of(name))
    if 'yaml_unsymbolized' in ref:
        out = cat(log, 'events.yaml', None)
        if out is not None:
            expect(log, 'events.yaml (no binary)', sha(out), ref['yaml_unsymbolized'])
    if binary is None:
        print(f'{name}: no binary, symbolized checks skipped')
    else:
        for key, path, digest in (('yaml', 'events.yaml', sha), ('account', 'functions/account.csv', sha),
                                  ('chrome', 'export/llvm-xray-trace_event.json', chrome_digest)):
            if key in ref:
                out = cat(log, path, binary)
                if out is not None:
                    expect(log, path, digest(out), ref[key])
    if 'dump_records' in ref:
        out = cat(log, 'events', None)
        if out is not None:
            expect(log, 'record count', out.count(b'\n'), ref['dump_records'])

logs = sorted(os.path.join(data, f) for f in os.listdir(data) if f.endswith('.xray'))
if '--corpus' in sys.argv:
    if not os.path.isdir(os.path.join(corpus, 'traces')):
        print('no corpus: skipped')
        sys.exit(77)
    logs = sorted(os.path.join(corpus, 'traces', f) for f in os.listdir(os.path.join(corpus, 'traces')))
with tempfile.TemporaryDirectory() as cache:
    os.environ['XDG_CACHE_HOME'] = cache
    for log in logs:
        check(log)
for failure in failures:
    print('FAIL', failure)
print(f'{checked} comparisons, {len(failures)} failures')
sys.exit(1 if failures else 0)
