#!/bin/bash
# Indexing a zstd container is linear in its frames (issue 27): a 20 MB
# stream in 16 KiB frames (the seekable layout newer apitrace writes, as
# make_seekable_zstd.py makes it) indexes within 4x of the same stream in
# 1 MiB frames, with its seek table and without it (then each frame is
# decoded to learn its size), and all three serve the same bytes.  Each
# time is the least CPU time of three fresh index passes (`tracefs cat
# info.json`); 0.1 s more is allowed for the process's start.
set -u
here="$TRACEFS_SOURCE_ROOT/tests/apitrace"
command -v zstd > /dev/null || { echo "no zstd: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

python3 "$here/make_blob_stream.py" "$work/stream.raw" 20000000
python3 "$here/make_seekable_zstd.py" "$work/stream.raw" "$work/16k.trace" 16384
python3 "$here/make_seekable_zstd.py" "$work/stream.raw" "$work/1m.trace" 1048576
# The same frames without the seek table (a skippable frame at the end).
python3 - "$work/16k.trace" "$work/16k-no-table.trace" << 'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
count = struct.unpack('<I', data[-9:-5])[0]
open(sys.argv[2], 'wb').write(data[:len(data) - (8 + count * 8 + 9)])
PY

# best_time TRACE: the least CPU time (user + system) of three index
# passes, in seconds: CPU time, unlike wall time, does not grow with the
# load other processes put on the machine.
best_time() {
    local best=999 t
    for _ in 1 2 3; do
        rm -rf "$work/cache"
        XDG_CACHE_HOME="$work/cache" python3 "$here/child_usage.py" "$TRACEFS" cat "$1" info.json \
            > /dev/null 2> "$work/usage" || fail "cat $1"
        t=$(tail -n 1 "$work/usage" | cut -d " " -f 2)
        [ "$(echo "$t < $best" | bc)" = 1 ] && best=$t
    done
    echo "$best"
}

t1m=$(best_time "$work/1m.trace")
echo "1 MiB frames: $t1m s CPU ($(stat -c %s "$work/1m.trace") bytes)"
for name in 16k 16k-no-table; do
    t=$(best_time "$work/$name.trace")
    echo "$name frames: $t s CPU ($(stat -c %s "$work/$name.trace") bytes)"
    [ "$(echo "$t <= 4 * $t1m + 0.1" | bc)" = 1 ] || fail "$name: $t s, over 4 x $t1m s"
    cmp -s <(XDG_CACHE_HOME="$work/cache" "$TRACEFS" cat "$work/$name.trace" .tracefs/streams/stream) "$work/stream.raw" ||
        fail "$name: stream differs from the raw stream"
    cmp -s <(XDG_CACHE_HOME="$work/cache" "$TRACEFS" cat "$work/$name.trace" events) \
        <(XDG_CACHE_HOME="$work/cache" "$TRACEFS" cat "$work/1m.trace" events) || fail "$name: events differ"
    XDG_CACHE_HOME="$work/cache" "$TRACEFS" cat "$work/$name.trace" errors | grep . && fail "$name: errors"
done
[ "$failures" -eq 0 ]
