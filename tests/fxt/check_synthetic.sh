#!/usr/bin/env bash
# The FXT writer's traces (little- and big-endian) decode to the text the
# writer expects, file by file, and the two byte orders give the same tree.
set -u
: "${TRACEFS:?}" "${TRACEFS_SOURCE_ROOT:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$TRACEFS_SOURCE_ROOT/tests/fxt/fxt_writer.py" "$work" || exit 1
failed=0
fail() { echo "FAIL: $*"; failed=1; }

for order in le be; do
    trace=$work/synthetic-$order.fxt
    for expected in "$work"/synthetic.expected/*; do
        rel=$(basename "$expected" | tr '%' '/')
        "$TRACEFS" cat "$trace" "$rel" >"$work/got" || { fail "$order: cannot cat $rel"; continue; }
        cmp -s "$work/got" "$expected" || { fail "$order: $rel differs"; diff "$expected" "$work/got" | cut -c1-200 | head; }
    done
    [ -z "$("$TRACEFS" cat "$trace" errors)" ] || fail "$order: errors not empty"
    info=$("$TRACEFS" cat "$trace" info.json)
    python3 - "$order" "$info" <<'PY' || fail "$order: info.json"
import json, sys
order, common = sys.argv[1], json.loads(sys.argv[2])
info = common["fxt"]
assert common["events"] == 18 and common["format"] == "fxt", common
assert info["byte_order"] == ("big-endian" if order == "be" else "little-endian"), info["byte_order"]
assert info["unknown_records_skipped"] == 3, info["unknown_records_skipped"]
assert info["events"] == 18, info["events"]
PY
    "$TRACEFS" cat "$trace" kobjects/11.json | grep -q '"process":10' || fail "$order: kobjects/11.json"
    "$TRACEFS" cat "$trace" uobjects/0x1000.json | grep -q '"kind":"round"' || fail "$order: uobjects"
    "$TRACEFS" cat "$trace" processes/10/name | grep -qx proc-ten || fail "$order: processes/10/name"
    "$TRACEFS" cat "$trace" threads/11/info.json | grep -q '"name": "thread-eleven"' || fail "$order: thread name"
done

# Every file of the two trees is the same, apart from info.json.
python3 - "$TRACEFS" "$work/synthetic-le.fxt" "$work/synthetic-be.fxt" <<'PY' || fail "LE and BE trees differ"
import subprocess, sys
tfs, le, be = sys.argv[1:]
def walk(trace, path=""):
    out = subprocess.run([tfs, "ls", trace] + ([path] if path else []), capture_output=True, text=True).stdout.split()
    for name in out:
        p = path + "/" + name if path else name
        st = subprocess.run([tfs, "stat", trace, p], capture_output=True, text=True).stdout
        if "directory" in st:
            yield from walk(trace, p)
        else:
            yield p
bad = 0
for p in walk(le):
    if p in ("info.json", "README") or p.startswith(".tracefs"):
        continue
    a = subprocess.run([tfs, "cat", le, p], capture_output=True).stdout
    b = subprocess.run([tfs, "cat", be, p], capture_output=True).stdout
    if a != b:
        print("differs:", p); bad += 1
sys.exit(1 if bad else 0)
PY
exit $failed
