#!/usr/bin/env bash
# For every test trace of one format: mount it with the real binary and use
# the real tools on it.  usage: mount_format.sh FORMAT [DATA_DIR]
set -u
source "$(dirname "$0")/lib.sh"
need_fuse
format=$1
dir=${2:-$1}
data="$TRACEFS_SOURCE_ROOT/tests/data/$dir"
mapfile -t traces < <(find_traces "$format" "$data")
if [ "${#traces[@]}" -eq 0 ]; then
    echo "no $format traces in $data: skipped"
    exit 77
fi

# Files checked one by one per trace (families can hold a million entries).
MAX_FILES=${MAX_FILES:-400}
# Files compared with `tracefs cat` per call (every file is compared).
PARITY_BATCH=${PARITY_BATCH:-2000}

# Every file of the mount equals `tracefs cat` of it, in batches: cat of N
# mounted files against one tracefs cat of the same N paths.
check_parity() {
    local trace=$1 mnt=$2 rels=() rel
    while IFS= read -r rel; do
        rels+=("$rel")
        if [ ${#rels[@]} -ge "$PARITY_BATCH" ]; then
            compare_batch "$trace" "$mnt" "${rels[@]}"
            rels=()
        fi
    done < <(cd "$mnt" && find . -type f ! -path './.tracefs/*' ! -path './errors' | sed 's|^\./||' | sort)
    [ ${#rels[@]} -eq 0 ] || compare_batch "$trace" "$mnt" "${rels[@]}"
}

compare_batch() {
    local trace=$1 mnt=$2
    shift 2
    cmp -s <(cd "$mnt" && cat -- "$@") <("$TRACEFS" cat "$trace" "$@") && return
    local rel
    for rel in "$@"; do   # name the files that differ
        cmp -s "$mnt/$rel" <("$TRACEFS" cat "$trace" "$rel") || fail "$rel: mounted bytes differ from tracefs cat"
    done
}

check_trace() {
    local trace=$1 mnt files f rel size
    mount_trace "$trace" -o cache_size=4M || { fail "mount $trace"; return; }
    mnt=$MNT
    echo "== $trace on $mnt"
    check "ls shows info.json" test -f "$mnt/info.json"
    check "info.json is JSON" jq -e .format "$mnt/info.json" >/dev/null
    check "errors is a file" test -f "$mnt/errors"
    check "stats readable" grep -q cache_hits "$mnt/.tracefs/stats"
    # A scanning mount sizes /events and keeps its first blocks of text:
    # the first `cat` reads them from the text cache.
    if [ -f "$mnt/events" ] && [ "$(stat -c %s "$mnt/events")" -gt 65536 ] &&
        grep -qx 'index_source scanned' "$mnt/.tracefs/stats"; then
        cat "$mnt/events" >/dev/null
        check "cat of events read kept text" \
            awk '$1 == "text_cache_hits" { found = 1; exit !($2 > 0) } END { if (!found) exit 1 }' "$mnt/.tracefs/stats"
    fi
    # The decoder's streams, as it reads them: a plain file is itself, and
    # apitrace's decompressed stream is what raw/stream shows.
    if [ -f "$mnt/.tracefs/streams/file" ]; then
        check "streams/file is the trace" cmp -s "$mnt/.tracefs/streams/file" "$trace"
    fi
    if [ -f "$mnt/raw/stream" ]; then
        check "streams/stream is raw/stream" cmp -s "$mnt/.tracefs/streams/stream" "$mnt/raw/stream"
    fi
    [ -d "$mnt/.tracefs/streams" ] && [ -n "$(ls "$mnt/.tracefs/streams")" ] || fail "no .tracefs/streams"

    # The first MAX_FILES files: a whole read gives the size stat gives,
    # and the JSON files parse (jq over them all; one by one to name a bad one).
    # Not .tracefs/stats and errors: they are rendered anew at each stat and
    # read, and what the mount does in the background between the two
    # (sizing, read-ahead, evictions) changes them.
    mapfile -t files < <(find "$mnt" -type f ! -path "$mnt/.tracefs/stats" ! -path "$mnt/errors" | head -n "$MAX_FILES")
    python3 - "${files[@]}" <<'PY' || fail "a file's read size differs from its stat size"
import os, sys
bad = 0
for path in sys.argv[1:]:
    size = os.stat(path).st_size
    with open(path, "rb") as f:
        read = len(f.read())
    if read != size:
        print(f"{path}: read {read} bytes, stat says {size}")
        bad = 1
sys.exit(bad)
PY
    local json=() jsonl=()
    for f in "${files[@]}"; do
        case "$f" in
        *.json) json+=("$f") ;;
        *.jsonl) jsonl+=("$f") ;;
        esac
    done
    if [ ${#json[@]} -gt 0 ] && ! jq empty "${json[@]}" >/dev/null 2>&1; then
        for f in "${json[@]}"; do jq empty "$f" 2>/dev/null || fail "${f#"$mnt"/}: not valid JSON"; done
    fi
    if [ ${#jsonl[@]} -gt 0 ] && ! jq -c . "${jsonl[@]}" >/dev/null 2>&1; then
        for f in "${jsonl[@]}"; do jq -c . "$f" >/dev/null 2>&1 || fail "${f#"$mnt"/}: not valid JSON lines"; done
    fi

    check_parity "$trace" "$mnt"

    # tar sees every file with its whole content.
    local listed found
    listed=$(tar cf - -C "$mnt" . 2>/dev/null | tar tf - | grep -vc '/$')
    found=$(find "$mnt" ! -type d | wc -l)
    [ "$listed" = "$found" ] || fail "tar lists $listed files, find $found"

    # The largest file: tail, head -c, and random ranges against a full read.
    local largest
    largest=$(find "$mnt" -type f -printf '%s %p\n' | sort -n | tail -n 1 | cut -d' ' -f2-)
    if [ -n "$largest" ] && [ -s "$largest" ]; then
        [ "$(tail -n 1 "$largest")" = "$(cat "$largest" | tail -n 1)" ] || fail "tail -n 1 of $largest"
        [ "$(head -c 1000 "$largest" | md5sum)" = "$(cat "$largest" | head -c 1000 | md5sum)" ] ||
            fail "head -c of $largest"
        python3 "$TRACEFS_SOURCE_ROOT/tests/mount/random_ranges.py" "$largest" 200 || fail "random ranges of $largest"
    fi

    # grep and awk work on the main text view.
    if [ -f "$mnt/events" ]; then
        [ "$(grep -c '' "$mnt/events")" = "$(cat "$mnt/events" | wc -l)" ] || fail "grep -c on events"
        awk 'END { exit NR == 0 && length($0) > 0 }' "$mnt/events" || fail "awk on events"
    fi

    # cp -r copies what cat shows (small trees only).
    if [ "$(du -sb "$mnt" | cut -f1)" -lt 50000000 ] && [ "${#files[@]}" -lt "$MAX_FILES" ]; then
        local copy
        copy=$(mktemp -d)
        # .tracefs/stats counts the reads of cp and diff themselves.
        cp -r "$mnt/." "$copy/" && diff -r -x .tracefs "$mnt" "$copy" >/dev/null || fail "cp -r then diff -r"
        rm -rf "$copy"
    fi

    # Read-only: writes are refused, the trace is untouched.
    touch "$mnt/new-file" 2>/dev/null && fail "touch succeeded on a read-only mount"
    mkdir "$mnt/new-dir" 2>/dev/null && fail "mkdir succeeded"
    [ -f "$mnt/info.json" ] && { echo x >> "$mnt/info.json"; } 2>/dev/null && fail "append succeeded"
    rm "$mnt/info.json" 2>/dev/null && fail "rm succeeded"

    fusermount3 -u "$mnt" || fail "unmount $mnt"
}

for trace in "${traces[@]}"; do
    before=$(find "$trace" -type f -exec sha256sum {} + | sort | sha256sum)
    mtime=$(stat -c %Y "$trace")
    check_trace "$trace"
    [ "$before" = "$(find "$trace" -type f -exec sha256sum {} + | sort | sha256sum)" ] || fail "$trace was modified"
    [ "$mtime" = "$(stat -c %Y "$trace")" ] || fail "$trace mtime changed"
done
finish
