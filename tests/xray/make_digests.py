#!/usr/bin/env python3
"""Writes tests/data/xray/ref-digests.json from the corpus references
(llvm-xray-14 outputs).  usage: make_digests.py CORPUS/xray OUT.json"""
import json
import os
import subprocess
import sys
from xray_refs import chrome_digest, dump_records, sha, unsymbolized_yaml

corpus, out_path = sys.argv[1], sys.argv[2]
ref = os.path.join(corpus, 'ref')

def read_ref(name):
    path = os.path.join(ref, name)
    if os.path.exists(path):
        return open(path, 'rb').read()
    if os.path.exists(path + '.zst'):
        return subprocess.run(['zstd', '-qdc', path + '.zst'], check=True, capture_output=True).stdout
    return None

digests = {}
for log in sorted(os.listdir(os.path.join(corpus, 'traces'))):
    name = log[:-len('.xray')]
    entry = {}
    yaml = read_ref(name + '.yaml')
    if yaml is not None:
        entry['yaml'] = sha(yaml)
        entry['yaml_unsymbolized'] = sha(unsymbolized_yaml(yaml))
    chrome = read_ref(name + '.trace_event.json')
    if chrome is not None:
        entry['chrome'] = chrome_digest(chrome)
    account = read_ref(name + '.account.csv')
    if account is not None:
        entry['account'] = sha(account)
    dump = read_ref(name + '.fdr-dump.txt')
    if dump is not None:
        entry['dump_records'] = dump_records(dump.decode('utf-8', 'replace'))
    digests[name] = entry
with open(out_path, 'w') as f:
    json.dump(digests, f, indent=1, sort_keys=True)
    f.write('\n')
