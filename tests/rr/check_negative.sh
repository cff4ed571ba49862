#!/bin/bash
# The corpus's damaged traces: clear messages, a partial tree, no crash.
set -u
NEG="$TRACEFS_SOURCE_ROOT/tests/rr/neg"
fail=0
expect_fatal() {   # trace, message part
    out=$("$TRACEFS" ls "$NEG/$1" 2>&1); rc=$?
    if [ $rc -eq 0 ] || [ $rc -ge 128 ] || ! grep -q "$2" <<<"$out"; then echo "FAIL $1: rc=$rc $out"; fail=1; else echo "ok $1"; fi
}
expect_partial() { # trace, /errors part
    out=$("$TRACEFS" cat "$NEG/$1" errors 2>&1); rc=$?
    if [ $rc -ne 0 ] || ! grep -q "$2" <<<"$out"; then echo "FAIL $1: rc=$rc $out"; fail=1; return; fi
    for f in events stats header.json info.json; do
        "$TRACEFS" cat "$NEG/$1" $f >/dev/null 2>&1; rc=$?
        [ $rc -ge 128 ] && { echo "FAIL $1 $f crashed ($rc)"; fail=1; }
    done
    echo "ok $1"
}
expect_fatal neg-no-version "version' not found"
expect_fatal neg-version-84 "incompatible version 84"
expect_partial neg-incomplete "did not finish"
expect_partial neg-truncated-events "runs past the end"
expect_partial neg-bad-brotli "events"
expect_partial neg-bad-chunk-len "events"
# Real Header messages from a newer rr (public data, read from the corpus):
# accepted with four empty streams, their newer fields decoded.
REAL="${TRACEFS_CORPUS:-/nonexistent}/rr/real-headers"
for h in "$REAL"/*-version; do
    [ -f "$h" ] || continue
    dir=$(mktemp -d); cp "$h" "$dir/version"; : > "$dir/events"; : > "$dir/data"; : > "$dir/mmaps"; : > "$dir/tasks"
    json=$("$TRACEFS" cat "$dir" header.json 2>&1); events=$("$TRACEFS" cat "$dir" events 2>&1)
    errors=$("$TRACEFS" cat "$dir" errors 2>&1)
    if python3 -c 'import json,sys; h=json.loads(sys.argv[1]); assert h["syscallbuf_hdr_size"] == 32 and h["uname"]["sysname"] == "Linux"' "$json" \
        && [ -z "$events" ] && [ -z "$errors" ]; then echo "ok $(basename "$h")"; else echo "FAIL $(basename "$h"): $json $errors"; fail=1; fi
    rm -rf "$dir"
done
exit $fail
