#!/usr/bin/env bash
# FXT pointers above 2^53 are "0x..." strings in every JSON file (jq 1.6
# and JavaScript hold numbers as doubles and would round them): an event's
# pointer argument in events.jsonl, the thread's events.jsonl and the Chrome
# export, and a userspace object's pointer.
set -u
source "$(dirname "$0")/lib.sh"
need_fuse
work=$(mktemp -d /tmp/tracefs-fxtptr-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT
PYTHONPATH=$TRACEFS_SOURCE_ROOT/tests/fxt python3 - "$work/ptr.fxt" <<'PY' || { echo "cannot write the trace"; exit 1; }
import sys
from fxt_writer import Writer
w = Writer(big_endian=False)
w.magic()
w.provider_info(1, "p")
w.init(1000000000)
w.thread(1, 10, 11)
w.event(0, 5, 1, "cat", "hit", [(7, "p", 0xffff800012345679), (4, "big", (1 << 60) + 1)])
w.uobject(0xffffa00000000001, 10, "obj", [(7, "q", 0xfffffffffffffff1)])
open(sys.argv[1], "wb").write(bytes(w.out))
PY
mount_trace "$work/ptr.fxt" || exit 1
m=$MNT
[ -z "$(cat "$m/errors")" ] || fail "errors: $(cat "$m/errors")"
[ "$(jq -r '.args.p | type' "$m/events.jsonl")" = string ] || fail "events.jsonl pointer is not a string"
[ "$(jq -r .args.p "$m/events.jsonl")" = 0xffff800012345679 ] || fail "events.jsonl: $(jq -c .args "$m/events.jsonl")"
[ "$(jq -r .args.p "$m/threads/11/events.jsonl")" = 0xffff800012345679 ] || fail "threads/11/events.jsonl"
# The common events.jsonl writes an integer beyond 2^53 as a string of its
# digits (docs/events.md); the provider's native events.jsonl as a number.
[ "$(jq -r .args.big "$m/events.jsonl")" = 1152921504606846977 ] || fail "a u64 argument beyond 2^53"
[ "$(jq -r '.args.big | type' "$m/providers/1-p/events.jsonl")" = number ] || fail "a u64 argument is not a number"
[ "$(jq -r '[.traceEvents[] | select(.name == "hit")][0].args.p' "$m/export/chrome.json")" = 0xffff800012345679 ] ||
    fail "chrome.json pointer"
obj=$m/uobjects/0xffffa00000000001.json
[ -f "$obj" ] || fail "no uobjects/0xffffa00000000001.json: $(ls "$m/uobjects")"
[ "$(jq -r .pointer "$obj")" = 0xffffa00000000001 ] || fail "uobject pointer: $(jq -c .pointer "$obj")"
[ "$(jq -r .args.q "$obj")" = 0xfffffffffffffff1 ] || fail "uobject pointer argument"
grep -q ' p=0xffff800012345679 ' "$m/events" || fail "events text: $(cat "$m/events")"
finish
