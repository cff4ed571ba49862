#!/bin/bash
# A zstd apitrace whose one function signature has 960 argument names of
# 64 KiB of NUL bytes (60 MiB of names in a few KB of file): what the index
# keeps of them is charged by the bytes read, not by strlen (0), so the
# signature passes the table budget, /errors says so, and `tracefs cat`
# stays within the memory rule at cache_size=16M.
set -u
source "$TRACEFS_SOURCE_ROOT/tests/mount/lib.sh"
peak="$TRACEFS_SOURCE_ROOT/tests/apitrace/child_usage.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

PYTHONPATH="$TRACEFS_SOURCE_ROOT/tests/apitrace" python3 - "$work/stream.raw" <<'PY' || fail "write the stream"
import sys
from apitrace_stream import string, uint
stream = b"\x06\x06" + string(b"process.name") + string(b"/bin/nul") + b"\x00"
stream += b"\x00" + uint(0) + uint(7) + string(b"glNul") + uint(960)
stream += string(bytes(64 << 10)) * 960
with open(sys.argv[1], "wb") as f:
    f.write(stream)
PY
size=$(stat -c %s "$work/stream.raw")
python3 "$TRACEFS_SOURCE_ROOT/tests/apitrace/make_big_stream.py" zstd "$size" 24 "$work/nul.trace" \
    < "$work/stream.raw" || fail "compress"
limit=$(( (32 << 20) / 1024 + $(stat -c %s "$work/nul.trace") / 50 / 1024 ))
export XDG_CACHE_HOME="$work/cache"
TRACEFS_CACHE_SIZE=16M python3 "$peak" "$TRACEFS" cat "$work/nul.trace" info.json > /dev/null 2> "$work/cat.err" ||
    fail "tracefs cat info.json"
rss=$(tail -n 1 "$work/cat.err" | cut -d " " -f 1)
echo "$(stat -c %s "$work/nul.trace") bytes holding 60 MiB of NUL names: peak $rss KiB (rule $limit KiB)"
[ "$sanitized" = 1 ] || [ "$rss" -le "$limit" ] || fail "peak $rss KiB over $limit KiB"
"$TRACEFS" cat "$work/nul.trace" errors | grep -q "budget" || fail "no /errors line for the budget"
finish
