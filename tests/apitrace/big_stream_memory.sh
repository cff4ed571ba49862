#!/bin/bash
# A brotli container and a zstd container of a few KB whose one stream
# (one frame) decodes to 64 MiB are served in 1 MiB sub-chunks: `tracefs
# cat` and a mount stay within the memory rule (peak RSS <= cache_size +
# 2 % of the FILE size + 16 MiB) at cache_size=16M, and every view is the
# same bytes at 16M and 256M, from the index pass and from the saved index.
# Decoders are made with the largest window brotli allows (2^24).  A zstd
# frame asking for a larger window is refused with an /errors line; a cut
# brotli stream serves what it yields.  A brotli stream and a zstd frame
# of 96 MiB (past LIMIT_CHUNK_BYTES) are served whole.
set -u
source "$TRACEFS_SOURCE_ROOT/tests/mount/lib.sh"
data="$TRACEFS_SOURCE_ROOT/tests/data/apitrace"
peak="$TRACEFS_SOURCE_ROOT/tests/apitrace/child_usage.py"
make="$TRACEFS_SOURCE_ROOT/tests/apitrace/make_big_stream.py"
work=$(mktemp -d)
trap 'unmount_all; rm -rf "$work"' EXIT
size=$((64 << 20))

# limit_kib CACHE_MIB FILE: the memory rule in KiB.
limit_kib() { echo $(( (($1 + 16) << 20) / 1024 + $(stat -c %s "$2") / 50 / 1024 )); }
sum() { sha256sum | cut -d " " -f 1; }

# cat_views LABEL TRACE CACHE_MIB: sha256 of /events and the stream by `tracefs
# cat` into $work/LABEL.sums, checking each run's peak against the rule.
cat_views() {
    local label=$1 trace=$2 cache=$3 view rss limit
    limit=$(limit_kib "$cache" "$trace")
    : > "$work/$label.sums"
    for view in events .tracefs/streams/stream; do
        TRACEFS_CACHE_SIZE=${cache}M python3 "$peak" "$TRACEFS" cat "$trace" "$view" 2> "$work/cat.err" | sum \
            >> "$work/$label.sums"
        rss=$(tail -n 1 "$work/cat.err" | cut -d " " -f 1)
        echo "  $label: cat $view: peak $rss KiB (rule $limit KiB)"
        [ "$sanitized" = 1 ] || [ "$rss" -le "$limit" ] || fail "$label: cat $view peak $rss KiB over $limit KiB"
    done
}

# mount_views LABEL TRACE CACHE_MIB: the same through a mount, checking the
# daemon's VmHWM.
mount_views() {
    local label=$1 trace=$2 cache=$3 pid limit
    limit=$(limit_kib "$cache" "$trace")
    mount_trace "$trace" -o "cache_size=${cache}M" || { fail "$label: mount"; return; }
    pid=$(pgrep -n -f -- "$MNT") || pid=""
    { sum < "$MNT/events"; sum < "$MNT/.tracefs/streams/stream"; } > "$work/$label.sums"
    check_daemon_peak "$label" "$pid" "$limit" "mount, events, stream"
    fusermount3 -u "$MNT"
}

need_fuse
"$TRACEFS" cat "$data/glprog-small.trace" .tracefs/streams/stream > "$work/raw" || fail "raw stream"
expected=$({ cat "$work/raw"; head -c $((size - $(stat -c %s "$work/raw"))) /dev/zero; } | sum)

for kind in brotli zstd; do
    trace="$work/big.$kind"
    python3 "$make" "$kind" "$size" 24 "$trace" < "$work/raw" || { fail "$kind: make"; continue; }
    echo "$kind: $(stat -c %s "$trace") bytes decoding to $size"
    # 16M: cat indexes and saves; the mount loads the saved index.
    export XDG_CACHE_HOME="$work/cache-$kind-16"
    cat_views "$kind-cat-16M" "$trace" 16
    mount_views "$kind-mount-16M" "$trace" 16
    # 256M: the mount indexes; cat loads.
    export XDG_CACHE_HOME="$work/cache-$kind-256"
    mount_views "$kind-mount-256M" "$trace" 256
    cat_views "$kind-cat-256M" "$trace" 256
    for label in cat-16M mount-16M mount-256M; do
        cmp -s "$work/$kind-$label.sums" "$work/$kind-cat-256M.sums" || fail "$kind: $label views differ from cat-256M"
    done
    [ "$(sed -n 2p "$work/$kind-cat-16M.sums")" = "$expected" ] || fail "$kind: the stream is not the bytes compressed"
    [ "$(sed -n 1p "$work/$kind-cat-16M.sums")" = "$(TRACEFS_CACHE_SIZE=256M "$TRACEFS" cat "$work/raw" events | sum)" ] &&
        fail "$kind: events of the padded stream equal the raw stream's (the padding was not read)"
done

# Six readers of the zstd frame's stream at once, from six places, through
# a two-thread mount under 16M: the stream's decoders share a quarter of
# the cache or one window, where each reader made its own (48 MiB against
# the rule's 32), and each reader gets the stream's bytes.
trace="$work/big.zstd"
export XDG_CACHE_HOME="$work/cache-readers"
head -c "$size" < <(cat "$work/raw" /dev/zero) > "$work/padded"
if mount_trace "$trace" -o cache_size=16M,threads=2; then
    pid=$(pgrep -n -f -- "$MNT") || pid=""
    readers=()
    for k in 0 1 2 3 4 5; do
        dd if="$MNT/.tracefs/streams/stream" bs=1M skip=$((k * 10)) count=10 status=none |
            cmp -s - <(dd if="$work/padded" bs=1M skip=$((k * 10)) count=10 status=none) &
        readers+=($!)
    done
    for reader in "${readers[@]}"; do
        wait "$reader" || fail "readers: a reader's bytes differ from the stream's"
    done
    check_daemon_peak "readers" "$pid" "$(limit_kib 16 "$trace")" "six readers at once"
    fusermount3 -u "$MNT"
fi

# A zstd frame whose window is 2^26 bytes, after a real zstd trace: the
# real calls are served and the frame is refused with an /errors line,
# within the rule.
python3 "$make" zstd "$size" 26 "$work/wide.frame" < "$work/raw" || fail "wide: make"
cat "$data/glprog-small.zstd.trace" "$work/wide.frame" > "$work/wide.zstd"
export XDG_CACHE_HOME="$work/cache-wide"
TRACEFS_CACHE_SIZE=16M python3 "$peak" "$TRACEFS" cat "$work/wide.zstd" events > "$work/wide.events" 2> "$work/cat.err" ||
    fail "wide: cat events"
cmp -s "$work/wide.events" <("$TRACEFS" cat "$data/glprog-small.zstd.trace" events) || fail "wide: events differ"
"$TRACEFS" cat "$work/wide.zstd" errors | grep -q "needs a window" || fail "wide: no /errors line for the window"
rss=$(tail -n 1 "$work/cat.err" | cut -d " " -f 1)
[ "$sanitized" = 1 ] || [ "$rss" -le "$(limit_kib 16 "$work/wide.zstd")" ] || fail "wide: peak $rss KiB"
# Alone, it is no trace tracefs reads.
"$TRACEFS" cat "$work/wide.frame" info.json > /dev/null 2>&1 && fail "wide frame alone: served"

# A cut brotli stream (a prefix chunk): what it yields, a prefix of the
# whole.  The zero padding is the last few bytes of the stream.
head -c $(( $(stat -c %s "$work/big.brotli") - 3 )) "$work/big.brotli" > "$work/cut.brotli"
export XDG_CACHE_HOME="$work/cache-cut"
TRACEFS_CACHE_SIZE=16M "$TRACEFS" cat "$work/cut.brotli" .tracefs/streams/stream > "$work/cut.stream" ||
    fail "cut: cat stream"
cut_size=$(stat -c %s "$work/cut.stream")
echo "cut brotli: $cut_size bytes of stream"
[ "$cut_size" -gt $((2 << 20)) ] || fail "cut: only $cut_size bytes (expected sub-chunks)"
cmp -s "$work/cut.stream" <({ cat "$work/raw"; head -c $((size - $(stat -c %s "$work/raw"))) /dev/zero; } |
    head -c "$cut_size") || fail "cut: the stream is not a prefix of the whole"
"$TRACEFS" cat "$work/cut.brotli" errors | grep -q "brotli stream cut off" || fail "cut: no /errors line"

# Past 64 MiB (LIMIT_CHUNK_BYTES) one stream or frame is served whole: a
# brotli stream, and what the zstd tool writes from a pipe (one frame with
# no content size in its header, sized by decoding it).  The stream is the
# bytes compressed, the same from the saved index, within the rule.
long=$((96 << 20))
{ cat "$work/raw"; head -c $((long - $(stat -c %s "$work/raw"))) /dev/zero; } > "$work/long.plain"
expected_long=$(sum < "$work/long.plain")
python3 "$make" brotli "$long" 21 "$work/long.brotli" < "$work/raw" || fail "long brotli: make"
zstd -q -c < "$work/long.plain" > "$work/long.zstd" || fail "long zstd: make"
rm -f "$work/long.plain"
for kind in brotli zstd; do
    export XDG_CACHE_HOME="$work/cache-long-$kind"
    cat_views "long-$kind" "$work/long.$kind" 16
    [ "$(sed -n 2p "$work/long-$kind.sums")" = "$expected_long" ] || fail "long $kind: the stream is not the bytes compressed"
    mount_views "long-$kind-mount" "$work/long.$kind" 16
    cmp -s "$work/long-$kind.sums" "$work/long-$kind-mount.sums" || fail "long $kind: the saved index's views differ"
    "$TRACEFS" cat "$work/long.$kind" errors | grep -q "longer than\|larger than" && fail "long $kind: cut at a limit"
done
finish
