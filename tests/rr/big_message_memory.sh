#!/bin/bash
# A frame that declares a Cap'n Proto message of 4,000,000 words (31 MiB of
# packed zero words: 31 KB of stream, a few hundred bytes of brotli) after
# mtdemo-0's real frames: the message is refused (/errors says the message
# is larger than the limit), the real frames are served as before, and
# `tracefs cat` stays within the memory rule at cache_size=16M.
# usage: big_message_memory.sh RR_BLOCKS
set -u
source "$TRACEFS_SOURCE_ROOT/tests/mount/lib.sh"
blocks=$1
peak="$TRACEFS_SOURCE_ROOT/tests/apitrace/child_usage.py"
original="$TRACEFS_SOURCE_ROOT/tests/data/rr/mtdemo-0"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp -r "$original" "$work/trace"
"$blocks" unpack < "$original/events" > "$work/events.raw" || fail "unpack events"
python3 - "$work/events.raw" <<'PY' || fail "append the message"
import struct, sys
words = 4_000_000
# The segment table as one literal word (tag 0xff, 8 bytes, no more
# literal words), then runs of 256 zero words (tag 0x00, 255 more).
message = b"\xff" + struct.pack("<II", 0, words) + b"\x00" + b"\x00\xff" * (words // 256)
with open(sys.argv[1], "ab") as f:
    f.write(message)
PY
"$blocks" pack $((1 << 20)) < "$work/events.raw" > "$work/trace/events" || fail "pack events"
files=$(du -cb "$work/trace" | tail -n 1 | cut -f 1)
export XDG_CACHE_HOME="$work/cache"
TRACEFS_CACHE_SIZE=16M python3 "$peak" "$TRACEFS" cat "$work/trace" info.json > /dev/null 2> "$work/cat.err" ||
    fail "tracefs cat info.json"
rss=$(tail -n 1 "$work/cat.err" | cut -d " " -f 1)
limit=$(( (32 << 20) / 1024 + files / 50 / 1024 ))
echo "index pass with a 31 MiB message: peak $rss KiB (rule $limit KiB)"
[ "$sanitized" = 1 ] || [ "$rss" -le "$limit" ] || fail "peak $rss KiB over $limit KiB"
"$TRACEFS" cat "$work/trace" errors | grep -q "message larger than the limit" || fail "no /errors line for the message"
cmp -s <("$TRACEFS" cat "$work/trace" events) <("$TRACEFS" cat "$original" events) || fail "the real frames differ"
finish
