"""Shared by the XRay tests: how a log maps to its binary and how reference
outputs are reduced to digests (so that tests/data keeps kilobytes, not the
megabytes of llvm-xray's outputs)."""
import hashlib
import json
import re

def binary_of(log_name):
    prog = log_name.split('.')[0]
    return 'big' if prog.startswith('big') else prog

def sha(data):
    return hashlib.sha256(data).hexdigest()

_FUNCTION = re.compile(rb"^(  - \{ type: \d+, func-id: (-?\d+), function: )(.*?)(, (?:args: \[[^\]]*\], )?cpu: )")

def unsymbolized_yaml(data):
    """llvm-xray convert without --symbolize prints the id as a quoted string."""
    out = []
    for line in data.split(b'\n'):
        m = _FUNCTION.match(line)
        if m:
            line = m.group(1) + b"'" + m.group(2) + b"'" + m.group(4) + line[m.end():]
        out.append(line)
    return b'\n'.join(out)

def chrome_digest(data):
    doc = json.loads(data.decode('utf-8', 'surrogateescape'))
    events = [[e['name'], e['ph'], e['tid'], e['pid'], e['ts'], e['sf']] for e in doc['traceEvents']]
    frames = sorted((k, v['name'], v.get('parent')) for k, v in doc['stackFrames'].items())
    return sha(json.dumps([events, frames]).encode())

def dump_records(text):
    return sum(1 for line in text.splitlines()
               if line.startswith(('<Function', '<Custom Event', '<Typed Event')))
