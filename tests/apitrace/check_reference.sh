#!/bin/bash
# apitrace: every trace's events / events-verbose against `apitrace dump`
# and `apitrace dump -v --thread-ids=yes` (byte for byte), frames against
# `apitrace info`, frames/<n> against the same calls of events, blobs
# against `apitrace dump --blobs`, calls/<n>.json valid JSON.
# Test data in tests/data/apitrace; the whole corpus (with the 1 M-call
# trace) too when $TRACEFS_CORPUS/apitrace exists.
set -u
data="$TRACEFS_SOURCE_ROOT/tests/data/apitrace"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The reference for trace file $1 of kind $2 (dump, dump-v-tids, info.json) from ref dir $3.
reference() {
    local base name
    base=$(basename "$1"); name=${base%.trace}; name=${name%.raw}
    name=${name%.zlib}; name=${name%.brotli}; name=${name%.zstd}; name=${name%.zstd-seekable}
    if [ -f "$3/$name.$2" ]; then cat "$3/$name.$2"
    elif [ -f "$3/$name.$2.zst" ]; then zstd -q -dc "$3/$name.$2.zst"
    else return 1; fi
}

check_trace() {
    local trace=$1 refs=$2 t
    t=$(basename "$trace")
    for pair in "events dump.txt" "events-verbose dump-v-tids.txt"; do
        set -- $pair
        reference "$trace" "$2" "$refs" > "$work/ref" || { echo "$t: no $2 reference"; continue; }
        "$TRACEFS" cat "$trace" "$1" > "$work/out" || fail "$t: cat $1"
        cmp -s "$work/out" "$work/ref" || fail "$t: $1 differs from apitrace $2 ($(diff "$work/out" "$work/ref" | head -n 3))"
    done
    "$TRACEFS" cat "$trace" errors > "$work/errors"
    [ -s "$work/errors" ] && fail "$t: errors: $(head -n 2 "$work/errors")"
    if reference "$trace" info.json "$refs" > "$work/info" 2>/dev/null; then
        full="$refs/$(basename "${trace%.trace}").info.json"
        [ -f "$full" ] && cp "$full" "$work/info"
        "$TRACEFS" cat "$trace" info.json > "$work/ours"
        for pair in "ContainerVersion version" "API api"; do
            set -- $pair
            [ "$(jq -r ".$1" "$work/info")" = "$(jq -r ".apitrace.$2" "$work/ours")" ] || fail "$t: info.json $2 differs from apitrace info $1"
        done
        case "$t" in *.zstd*|*.raw) ;; *)
            [ "$(jq -r .ContainerType "$work/info")" = "$(jq -r .apitrace.container "$work/ours")" ] ||
                fail "$t: container $(jq -r .apitrace.container "$work/ours") but apitrace info says $(jq -r .ContainerType "$work/info")" ;;
        esac
        want=$(jq .FramesCount "$work/info")
        got=$("$TRACEFS" cat "$trace" info.json | jq .apitrace.frames)
        [ "$want" = "$got" ] || fail "$t: $got frames, apitrace info says $want"
        listed=$("$TRACEFS" ls "$trace" frames | grep -c -v json)
        [ "$listed" = "$want" ] || fail "$t: frames/ lists $listed frames, apitrace info says $want"
    fi
    # frames/<n> are consecutive slices of events (after the header lines).
    frames=$("$TRACEFS" cat "$trace" info.json | jq .apitrace.frames)
    if [ "$frames" -gt 0 ] && [ "$frames" -le 50 ]; then
        : > "$work/frames"
        for ((n = 0; n < frames; n++)); do "$TRACEFS" cat "$trace" "frames/$n" >> "$work/frames"; done
        "$TRACEFS" cat "$trace" events | grep -v '^// ' | head -c "$(stat -c %s "$work/frames")" > "$work/events"
        cmp -s "$work/frames" "$work/events" || fail "$t: frames/* are not the calls of events"
        "$TRACEFS" cat "$trace" frames/0.json | jq -e .call_numbers > /dev/null || fail "$t: frames/0.json"
    fi
    # frames/<n>.json against `apitrace info --dump-frames` (first, middle, last frame).
    if reference "$trace" info-frames.json "$refs" > "$work/frames.json" 2>/dev/null && [ "$frames" -gt 0 ]; then
        for n in 0 $((frames / 2)) $((frames - 1)); do
            want=$(jq -c ".Frames[$n] | [.FirstCallId, .LastCallId, .TotalCalls]" "$work/frames.json")
            got=$("$TRACEFS" cat "$trace" "frames/$n.json" | jq -c '[.first_call, .last_call, .calls]')
            [ "$want" = "$got" ] || fail "$t: frames/$n.json $got, apitrace info --dump-frames $want"
        done
    fi
    calls=$("$TRACEFS" cat "$trace" info.json | jq .apitrace.calls)
    for n in 0 1 $((calls / 2)) $((calls - 1)); do
        "$TRACEFS" cat "$trace" "calls/$n.json" | jq -e ".number == $n" > /dev/null || fail "$t: calls/$n.json"
    done
    "$TRACEFS" cat "$trace" properties.json | jq -e . > /dev/null || fail "$t: properties.json"
}

count=0
for trace in "$data"/*.trace; do
    check_trace "$trace" "$data/ref"
    count=$((count + 1))
done

# Blobs: the same bytes as `apitrace dump --blobs` wrote (its file names
# depend on how the threads interleaved, so compare contents).
trace="$data/glprog-small.trace"
(cd "$data/ref/glprog-small.blobs" && sha256sum -- * | cut -d' ' -f1 | sort) > "$work/want"
: > "$work/got"
for b in $("$TRACEFS" ls "$trace" blobs); do
    "$TRACEFS" cat "$trace" "blobs/$b" | sha256sum | cut -d' ' -f1 >> "$work/got"
done
sort -o "$work/got" "$work/got"
cmp -s "$work/got" "$work/want" || fail "blobs differ from apitrace dump --blobs"

# The installed apitrace, when there is one, on every trace it can read
# (apitrace 11.1 reads no zstd).
if command -v apitrace > /dev/null; then
    for trace in "$data"/*.trace; do
        case "$trace" in *zstd*) continue ;; esac
        apitrace dump --color=never "$trace" > "$work/live" 2>/dev/null
        "$TRACEFS" cat "$trace" events | cmp -s - "$work/live" || fail "$(basename "$trace"): events differs from the installed apitrace dump"
        apitrace dump --color=never -v --thread-ids=yes "$trace" > "$work/live" 2>/dev/null
        "$TRACEFS" cat "$trace" events-verbose | cmp -s - "$work/live" ||
            fail "$(basename "$trace"): events-verbose differs from the installed apitrace dump -v --thread-ids=yes"
    done
else
    echo "apitrace not installed: compared with the stored references only"
fi

corpus="${TRACEFS_CORPUS:-}/apitrace"
if [ -n "${TRACEFS_CORPUS:-}" ] && [ -d "$corpus/traces" ]; then
    for trace in "$corpus"/traces/*.trace "$corpus"/traces/*.raw; do
        check_trace "$trace" "$corpus/ref"
        count=$((count + 1))
    done
    # Containers apitrace 11.1 did not write for these traces, made here
    # from the 1 M-call trace's stream: gzip with many seek points, and
    # seekable zstd with 1 MiB frames.
    big="$corpus/traces/glprog-big.trace"
    if [ -f "$big" ] && command -v zstd > /dev/null; then
        "$TRACEFS" cat "$big" raw/stream > "$work/big.raw"
        gzip -1 -c "$work/big.raw" > "$work/big.zlib.trace"
        python3 "$(dirname "$0")/make_seekable_zstd.py" "$work/big.raw" "$work/big.zstd.trace" 1048576
        rm -f "$work/big.raw"
        zstd -q -dc "$corpus/ref/glprog-big.dump-v-tids.txt.zst" > "$work/ref"
        for t in big.zlib.trace big.zstd.trace; do
            "$TRACEFS" cat "$work/$t" events-verbose | cmp -s - "$work/ref" || fail "$t: events-verbose differs"
            count=$((count + 1))
        done
    fi
else
    echo "corpus not found: checked tests/data only"
fi
echo "$count traces checked, $failures failures"
[ "$failures" -eq 0 ]
