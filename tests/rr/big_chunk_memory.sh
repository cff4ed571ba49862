#!/bin/bash
# An rr member whose one brotli block decodes to 64 MiB (mtdemo-0's `data`
# padded with zeros: 21 KB of file) is served in 1 MiB sub-chunks: `tracefs
# cat` of its stream stays within the memory rule at cache_size=16M and
# gives the same bytes (the padded stream) at 16M and 256M; the events view
# is the original trace's.
# usage: big_chunk_memory.sh RR_BLOCKS
set -u
source "$TRACEFS_SOURCE_ROOT/tests/mount/lib.sh"
blocks=$1
peak="$TRACEFS_SOURCE_ROOT/tests/apitrace/child_usage.py"
original="$TRACEFS_SOURCE_ROOT/tests/data/rr/mtdemo-0"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
size=$((64 << 20))

cp -r "$original" "$work/trace"
"$blocks" unpack < "$original/data" > "$work/data.raw" || fail "unpack data"
{ cat "$work/data.raw"; head -c $((size - $(stat -c %s "$work/data.raw"))) /dev/zero; } > "$work/data.padded"
"$blocks" pack "$size" < "$work/data.padded" > "$work/trace/data" || fail "pack data"
files=$(du -cb "$work/trace" | tail -n 1 | cut -f 1)
expected=$(sha256sum < "$work/data.padded" | cut -d " " -f 1)
for cache in 16 256; do
    export XDG_CACHE_HOME="$work/cache-$cache"
    got=$(TRACEFS_CACHE_SIZE=${cache}M python3 "$peak" "$TRACEFS" cat "$work/trace" .tracefs/streams/data \
        2> "$work/cat.err" | sha256sum | cut -d " " -f 1)
    rss=$(tail -n 1 "$work/cat.err" | cut -d " " -f 1)
    limit=$(( ((cache + 16) << 20) / 1024 + files / 50 / 1024 ))
    echo "cache ${cache}M: data stream read with peak $rss KiB (rule $limit KiB)"
    [ "$got" = "$expected" ] || fail "cache ${cache}M: the data stream is not the padded bytes"
    [ "$sanitized" = 1 ] || [ "$rss" -le "$limit" ] || fail "cache ${cache}M: peak $rss KiB over $limit KiB"
done
cmp -s <("$TRACEFS" cat "$work/trace" events) <("$TRACEFS" cat "$original" events) || fail "events differ"
finish
