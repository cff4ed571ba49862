#!/usr/bin/env bash
# The persistent index: a second open uses it and serves the same bytes; a
# stale, foreign-version, truncated, corrupt or unreadable index is ignored
# and rebuilt, never trusted.
set -u
source "$(dirname "$0")/lib.sh"

trace=""
for format in fxt sp-rtrace xray apitrace rr; do
    dir=$format
    [ "$format" = sp-rtrace ] && dir=sprtrace
    trace=$(find_traces "$format" "$TRACEFS_SOURCE_ROOT/tests/data/$dir" | head -n 1)
    [ -n "$trace" ] && break
done
[ -n "$trace" ] || { echo "no test trace: skipped"; exit 77; }

work=$(mktemp -d /tmp/tracefs-index-XXXXXX)
trap 'rm -rf "$work"; unmount_all' EXIT
cp -r "$trace" "$work/trace"
trace="$work/trace"
export XDG_CACHE_HOME="$work/cache"

stat_line() { "$TRACEFS" cat "$trace" .tracefs/stats | awk -v k="$1" '$1 == k { print $2 }'; }
index_file() { find "$XDG_CACHE_HOME/tracefs" -name '*.index' | head -n 1; }
# Every file of the tree, with its bytes, as one checksum.
tree_sum() {
    "$TRACEFS" ls "$trace" | while read -r name; do
        [ "$name" = errors ] || [ "$name" = .tracefs ] && continue
        if "$TRACEFS" stat "$trace" "$name" | grep -q ' file '; then
            printf '%s ' "$name"; "$TRACEFS" cat "$trace" "$name" | md5sum
        fi
    done | md5sum
}

[ "$(stat_line saved_index)" = "no" ] || fail "first open should find no saved index"
first=$(tree_sum)
[ -n "$(index_file)" ] || fail "no index file saved under XDG_CACHE_HOME"
[ "$(stat_line saved_index)" = "used" ] || fail "second open did not use the saved index"
[ "$(tree_sum)" = "$first" ] || fail "bytes differ when served from the saved index"
# The walk of the events behind info.json and summary.csv is saved too.
[ "$(stat_line event_walk)" = "loaded" ] || fail "event_walk is '$(stat_line event_walk)', want 'loaded'"

# A forged walk (a summary without its header, under a valid checksum) is
# refused: the events are walked again and give the same bytes.
python3 - "$(index_file)" <<'PY' || fail "no saved walk to forge"
import struct, sys, zlib
path = sys.argv[1]
data = bytearray(open(path, "rb").read()[:-4])
at = data.find(b"name,count,total_dur_ns,max_dur_ns\n")
if at < 0:
    sys.exit(1)
data[at:at + 4] = b"nome"
data += struct.pack("<I", zlib.crc32(data) & 0xffffffff)
open(path, "wb").write(data)
PY
[ "$(stat_line saved_index)" = "used" ] || fail "forged walk: the rest of the index was not used"
[ "$(stat_line event_walk)" = "none" ] || fail "forged walk: event_walk is '$(stat_line event_walk)', want 'none'"
[ "$(tree_sum)" = "$first" ] || fail "forged walk: bytes differ"
# No view changed, but the new walk was saved in place of the refused one.
[ "$(stat_line event_walk)" = "loaded" ] || fail "forged walk: not replaced ($(stat_line event_walk))"

corrupt_and_check() {
    local what=$1 expect=$2
    [ "$(stat_line saved_index)" = "$expect" ] || fail "$what: saved_index is '$(stat_line saved_index)', want '$expect'"
    [ "$(tree_sum)" = "$first" ] || fail "$what: bytes differ after rebuilding"
    [ "$(stat_line saved_index)" = "used" ] || fail "$what: index not rebuilt"
}

python3 - "$(index_file)" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[len(data) // 2] ^= 0x40
open(path, "wb").write(data)
PY
corrupt_and_check "flipped byte" "damaged"

truncate -s 30 "$(index_file)"
corrupt_and_check "truncated" "damaged"

# A valid checksum over a foreign layout version: rejected on the version.
python3 - "$(index_file)" <<'PY'
import struct, sys, zlib
path = sys.argv[1]
data = bytearray(open(path, "rb").read()[:-4])
data[16:24] = struct.pack("<Q", 999)
data += struct.pack("<I", zlib.crc32(data) & 0xffffffff)
open(path, "wb").write(data)
PY
corrupt_and_check "foreign version" "foreign"

touch -d '2001-01-01' "$trace"
corrupt_and_check "trace modified (mtime)" "stale"

head -c 100 /dev/urandom > "$(index_file)"
corrupt_and_check "random bytes" "damaged"

# An unreadable index directory: tracefs still works, just saves nothing.
rm -rf "$XDG_CACHE_HOME"
mkdir -p "$XDG_CACHE_HOME"
touch "$XDG_CACHE_HOME/tracefs"       # a file where the directory should be
[ "$(tree_sum)" = "$first" ] || fail "bytes differ with an unusable index directory"

# Every format: a remount loads its side tables from the saved index (no
# scan) and serves the same bytes in every file of the tree.
tree_bytes() { (cd "$1" && find . -type f ! -path './.tracefs/*' -print0 | sort -z | xargs -0 md5sum); }
wait_for_index() {
    for _ in $(seq 100); do
        [ -n "$(find "$1" -name '*.index' 2>/dev/null)" ] && return 0
        sleep 0.1
    done
    return 1
}
if [ -e /dev/fuse ]; then
    for format in fxt sp-rtrace xray apitrace rr; do
        dir=$format
        [ "$format" = sp-rtrace ] && dir=sprtrace
        while read -r sample; do
            [ -n "$sample" ] || continue
            where="$work/remount-$format-$(basename "$sample")"
            mount_trace "$sample" -o index_dir="$where" || continue
            before=$(tree_bytes "$MNT")
            # A walk that added no /errors line is saved with the index.
            walk_saved=$([ -s "$MNT/errors" ] && echo no || echo yes)
            # The daemon saves the index again after the unmount: wait for
            # it to end, not only for a file (the sizing may have saved one).
            unmount_and_wait "$MNT" || fail "$format $sample: the daemon did not end"
            wait_for_index "$where" || { fail "$format $sample: no index saved"; continue; }
            mount_trace "$sample" -o index_dir="$where" || continue
            grep -qx 'index_source loaded' "$MNT/.tracefs/stats" ||
                fail "$format $sample: remount scanned instead of loading ($(grep index_source "$MNT/.tracefs/stats"))"
            [ "$walk_saved" = no ] || grep -qx 'event_walk loaded' "$MNT/.tracefs/stats" ||
                fail "$format $sample: the walk of the events was not loaded ($(grep event_walk "$MNT/.tracefs/stats"))"
            [ "$(tree_bytes "$MNT")" = "$before" ] || fail "$format $sample: bytes differ when loaded from the index"
            echo "remount $format $(basename "$sample"): $(echo "$before" | wc -l) files compared"
            fusermount3 -u "$MNT"
        done < <(find_traces "$format" "$TRACEFS_SOURCE_ROOT/tests/data/$dir" | head -n 3)
    done
fi

# -o noindex saves nothing.
rm -rf "$XDG_CACHE_HOME"
if [ -e /dev/fuse ]; then
    mount_trace "$trace" -o noindex && unmount_and_wait "$MNT"
    [ -z "$(find "$XDG_CACHE_HOME" -name '*.index' 2>/dev/null)" ] || fail "-o noindex saved an index"
    # -o index_dir= puts it where asked.
    mount_trace "$trace" -o index_dir="$work/elsewhere" && unmount_and_wait "$MNT"
    [ -n "$(find "$work/elsewhere" -name '*.index')" ] || fail "-o index_dir= not used"
fi
finish
