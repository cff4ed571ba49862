#!/bin/bash
# Memory bounded by the file's size (issue 27): basic-mode XRay logs that
# name a new thread or function id in every record, or send a thread's TSC
# back at every record (tests/xray/make_hostile.py, after a real log), and
# a real log repeated and cut 57 bytes off its record grid (what the
# whole-program fuzzer found: every misaligned record has a new thread),
# are served within the memory rule (peak RSS <= cache_size + 2 % of the
# file's size + 16 MiB) and 30 s, by `tracefs cat` and by a mount walked
# file by file, with the real records first and an /errors line where the
# index's tables reach their budget.  Under sanitizers (TRACEFS_SANITIZED,
# or an ASan/UBSan binary) the RSS bound is not checked.
set -u
source "$TRACEFS_SOURCE_ROOT/tests/mount/lib.sh"
data="$TRACEFS_SOURCE_ROOT/tests/data/xray"
peak="$TRACEFS_SOURCE_ROOT/tests/apitrace/child_usage.py"
make="$TRACEFS_SOURCE_ROOT/tests/xray/make_hostile.py"
work=$(mktemp -d)
trap 'unmount_all; rm -rf "$work"' EXIT
cache=$((16 << 20))
real="$data/fib.basic-emu.xray"
export XDG_CACHE_HOME="$work/cache"

# limit_kib FILE: the memory rule in KiB.
limit_kib() { echo $(( (cache + $(stat -c %s "$1") / 50 + (16 << 20)) / 1024 )); }

# check_log LABEL LOG REAL_FIRST: REAL_FIRST=1 when the log starts with
# $real's records and every forged one comes after them in time.
check_log() {
    local label=$1 log=$2 real_first=$3 limit start elapsed rss pid
    limit=$(limit_kib "$log")
    echo "$label: $(stat -c %s "$log") bytes, rule $limit KiB"
    start=$(date +%s.%N)
    TRACEFS_CACHE_SIZE=$cache python3 "$peak" "$TRACEFS" cat "$log" info.json events errors > "$work/out" \
        2> "$work/cat.err" || fail "$label: tracefs cat"
    elapsed=$(echo "$(date +%s.%N) - $start" | bc)
    rss=$(tail -n 1 "$work/cat.err" | cut -d " " -f 1)
    echo "  tracefs cat info.json events errors: ${elapsed} s, peak $rss KiB"
    [ "$(echo "$elapsed < 30" | bc)" = 1 ] || fail "$label: cat took $elapsed s"
    [ "$sanitized" = 1 ] || [ "$rss" -le "$limit" ] || fail "$label: cat peak $rss KiB over $limit KiB"
    "$TRACEFS" cat "$log" errors | grep -q "reach the index's budget" || fail "$label: no budget line in /errors"
    if [ "$real_first" = 1 ]; then
        local n
        n=$("$TRACEFS" cat "$real" events | wc -l)
        cmp -s <("$TRACEFS" cat "$real" events) <("$TRACEFS" cat "$log" events | head -n "$n") ||
            fail "$label: the real log's records differ"
    fi
    # Identity: the same bytes from the index pass at another cache size
    # and thread count, and from the saved index.
    local view
    for view in info.json errors events threads/100000/events functions/account.csv; do
        "$TRACEFS" cat "$log" "$view" > "$work/a" 2> /dev/null
        TRACEFS_CACHE_SIZE=1M TRACEFS_THREADS=1 XDG_CACHE_HOME="$work/cache-b" \
            "$TRACEFS" cat "$log" "$view" > "$work/b" 2> /dev/null
        TRACEFS_CACHE_SIZE=1M TRACEFS_THREADS=1 XDG_CACHE_HOME="$work/cache-b" \
            "$TRACEFS" cat "$log" "$view" > "$work/c" 2> /dev/null
        cmp -s "$work/a" "$work/b" && cmp -s "$work/a" "$work/c" || fail "$label: $view differs across runs"
    done
    # Mounted, the tree walked: the daemon's peak.
    rm -rf "$XDG_CACHE_HOME"
    start=$(date +%s.%N)
    mount_trace "$log" -o "cache_size=$cache" || { fail "$label: mount"; return; }
    pid=$(pgrep -n -f -- "$MNT") || pid=""
    (cd "$MNT" && find . -type f | head -n 20000 | xargs -d '\n' cat > /dev/null) || fail "$label: walk"
    elapsed=$(echo "$(date +%s.%N) - $start" | bc)
    if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
        rss=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
        echo "  mount and walk ($(find "$MNT" -type f | wc -l) files): ${elapsed} s, daemon peak $rss KiB"
        [ "$sanitized" = 1 ] || [ "$rss" -le "$limit" ] || fail "$label: daemon peak $rss KiB over $limit KiB"
    else
        fail "$label: daemon not found"
    fi
    [ "$(echo "$elapsed < 30" | bc)" = 1 ] || fail "$label: mount and walk took $elapsed s"
    unmount_and_wait "$MNT" || fail "$label: unmount"
}

need_fuse
for kind in threads functions runs; do
    python3 "$make" "$real" "$work/$kind.xray" "$kind" 20000 || fail "make_hostile.py $kind"
    check_log "$kind" "$work/$kind.xray" 1
done
# The real log as a longer run (70 times over, later TSCs each time) with
# 57 bytes cut out of it: each record after the cut reads its tid from TSC
# bytes, a new thread per record.
python3 - "$real" "$work/cut.xray" << 'PY' || fail "cut log"
import struct, sys
data = open(sys.argv[1], 'rb').read()
body = bytearray()
for rep in range(70):
    for i in range(32, len(data) - 31, 32):
        record = bytearray(data[i:i + 32])
        if struct.unpack_from('<H', record, 0)[0] == 0:
            struct.pack_into('<Q', record, 8, struct.unpack_from('<Q', record, 8)[0] + rep * 100003)
        body += record
log = data[:32] + body
cut = len(log) * 2 // 5
open(sys.argv[2], 'wb').write(log[:cut] + log[cut + 57:])
PY
check_log cut "$work/cut.xray" 0
finish
