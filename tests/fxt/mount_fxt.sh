#!/usr/bin/env bash
# FXT on a real mount: the issue's "must show" commands on the public
# magic-trace sample (skipped without it) and the FXT tree's own files on
# the committed samples, with ls, grep, awk, tail, head -c, wc, stat, jq.
set -u
source "$TRACEFS_SOURCE_ROOT/tests/mount/lib.sh"
need_fuse
data=$TRACEFS_SOURCE_ROOT/tests/data/fxt
magic=${TRACEFS_CORPUS:-/nonexistent}/fxt/magic-trace_jane-tracing.fxt

if [ -f "$magic" ]; then
    mount_trace "$magic" || exit 1
    m=$MNT
    ls "$m" >/dev/null || fail "ls"
    [ "$(grep -c . "$m/events")" = 34592 ] || fail "grep -c . events: $(grep -c . "$m/events")"
    [ "$(jq -r .events "$m/info.json")" = 34592 ] || fail "info.json events"
    [ "$(tail -n 1 "$m/events")" = "329913 1/2 dur_end :_start -" ] || fail "tail -n 1 events: $(tail -n 1 "$m/events")"
    [ "$(cat "$m/events" | wc -c)" = "$(stat -c %s "$m/events")" ] || fail "events size"
    [ "$(awk '$3 == "dur_begin"' "$m/events" | wc -l)" = 17296 ] || fail "awk dur_begin count"
    [ "$(wc -l < "$m/threads/2/events")" = 34592 ] || fail "threads/2/events"
    [ "$(jq -r .name "$m/threads/2/info.json")" = main ] || fail "thread name"
    [ "$(cat "$m/processes/1/name")" = 2248878/2248878 ] || fail "process name"
    [ "$(readlink "$m/processes/1/threads/2")" = ../../../threads/2 ] || fail "process thread link"
    [ "$(ls "$m/providers")" = 0-jane_tracing ] || fail "providers: $(ls "$m/providers")"
    # The common export: one Chrome event per event (no "M" name events;
    # export/trace.perfetto-trace carries the names).
    jq -e '.traceEvents | length == 34592' "$m/export/chrome.json" >/dev/null || fail "chrome.json"
    [ "$(head -c 100 "$m/threads/2/spans" | md5sum)" = "$(cat "$m/threads/2/spans" | head -c 100 | md5sum)" ] ||
        fail "head -c spans"
    [ -z "$(cat "$m/errors")" ] || fail "errors not empty"
else
    echo "no public FXT corpus: magic-trace checks skipped"
fi

mount_trace "$data/fxt-cpp_all-records.fxt" || exit 1
m=$MNT
[ "$(cat "$m/blobs/blob-8")" = '8bytes!!' ] || fail "blobs/blob-8"
[ "$(stat -c %s "$m/blobs/blob-name")" = 29 ] || fail "blobs/blob-name size"
[ "$(jq -r .name "$m/kobjects/2001.json")" = main ] || fail "kobjects/2001.json"
[ "$(jq -r .args.kind "$m/uobjects/0xdeadbeef.json")" = widget ] || fail "uobjects"
[ "$(cat "$m/counters/counter.77.csv")" = $'ts_ns,value,other\n130,5,0.5' ] || fail "counters"
[ "$(wc -l < "$m/cpus/3/switches")" = 2 ] || fail "cpus/3/switches"
[ "$(head -n 1 "$m/threads/2001/spans")" = "100 200 0 cat:outer" ] || fail "spans"
[ "$(jq -c .provider_events "$m/providers/2-provider_two/info.json")" = "[0]" ] || fail "provider events"
[ "$(grep -c '^[0-9]* 1001/2002 ' "$m/events")" = "$(wc -l < "$m/threads/2002/events")" ] || fail "thread events"
ls "$m/strings" | head -n 3 >/dev/null || fail "ls strings"
[ "$(cat "$m/strings/$(grep -lx 'event-511' "$m"/strings/* | head -n 1 | xargs basename)")" = event-511 ] ||
    fail "strings"
finish
