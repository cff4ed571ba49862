#!/usr/bin/env bash
# XRay tree: thread views agree with events.yaml, calls/stack/stats are
# consistent, event payloads are the logged bytes, the binary beside a log
# named xray-log.<binary>.<suffix> is found.
set -u
data="$TRACEFS_SOURCE_ROOT/tests/data/xray"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
unset TRACEFS_XRAY_BINARY
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
t() { "$TRACEFS" cat "$@"; }

log="$data/threads.fdr-tsc-buf1k.xray"
export TRACEFS_XRAY_BINARY="$data/bin/threads"
# Every record of events.yaml is in exactly one thread's events file.
total=$(t "$log" events.yaml | grep -c '^  - {')
sum=0
for tid in $("$TRACEFS" ls "$log" threads); do
    n=$(t "$log" "threads/$tid/events" | wc -l)
    y=$(t "$log" events.yaml | grep -c "thread: $tid,")
    [ "$n" = "$y" ] || fail "threads/$tid/events has $n lines, events.yaml $y"
    sum=$((sum + n))
    # tail answers with the last record of the thread
    last=$(t "$log" "threads/$tid/events" | tail -n 1 | cut -d" " -f5)
    ytsc=$(t "$log" events.yaml | grep "thread: $tid," | tail -n 1 | sed 's/.*tsc: \([0-9]*\).*/\1/')
    [ "$last" = "tsc=$ytsc" ] || fail "threads/$tid/events last tsc $last, yaml $ytsc"
    # stack lines = calls lines; depth 0 calls are not indented
    [ "$(t "$log" "threads/$tid/calls" | wc -l)" = "$(t "$log" "threads/$tid/stack" | wc -l)" ] ||
        fail "threads/$tid calls and stack differ in length"
    t "$log" "threads/$tid/info.json" | jq -e .tid > /dev/null || fail "threads/$tid/info.json"
done
[ "$sum" = "$total" ] || fail "thread events sum $sum != $total records"
[ "$(t "$log" events | wc -l)" = "$total" ] || fail "events line count"
# functions/<name>/stats counts add up to the calls
calls=$(for tid in $("$TRACEFS" ls "$log" threads); do t "$log" "threads/$tid/calls"; done | wc -l)
stats=$("$TRACEFS" ls "$log" functions | grep -v account.csv | while read -r f; do t "$log" "functions/$f/stats" | awk '$1=="count"{print $2}'; done | awk '{s+=$1} END{print s}')
[ "$calls" = "$stats" ] || fail "calls $calls != sum of function counts $stats"
t "$log" functions/worker/stats | grep -q '^count 4$' || fail "functions/worker/stats count"
t "$log" info.json | jq -e '.xray.cycle_frequency == 2000000000 and .xray.version == 5' > /dev/null || fail "info.json header fields"

# Custom event payloads: the 27-byte text events, byte for byte.
log="$data/events_custom.fdr-emu.xray"
export TRACEFS_XRAY_BINARY="$data/bin/events_custom"
n=$("$TRACEFS" ls "$log" customevents | wc -l)
[ "$n" = 8 ] || fail "customevents has $n entries, want 8"
[ "$(t "$log" customevents/0)" = "custom-event #0: hello xray" ] || fail "customevents/0 payload"
[ "$(t "$log" customevents/1 | wc -c)" = 17 ] || fail "customevents/1 size"
t "$log" customevents/8 > /dev/null 2>&1 && fail "customevents/8 exists"
t "$log" customevents/01 > /dev/null 2>&1 && fail "customevents/01 exists"

# Typed events: mounted past the runtime's cut, 4 payloads of 16 bytes.
log="$data/events_typed.fdr-emu.xray"
unset TRACEFS_XRAY_BINARY
[ "$("$TRACEFS" ls "$log" typedevents | wc -l)" = 4 ] || fail "typedevents count"
[ "$(t "$log" typedevents/3 | wc -c)" = 16 ] || fail "typedevents/3 size"
t "$log" events | grep -c 'typed-event - .* type=4[23] size=16' | grep -qx 4 || fail "typed events in events"

# The binary beside the log, under the runtime's log name.
mkdir "$work/beside"
cp "$data/bin/fib" "$work/beside/fib"
cp "$data/fib.fdr-emu.xray" "$work/beside/xray-log.fib.AbCdEf"
t "$work/beside/xray-log.fib.AbCdEf" events.yaml | grep -q "function: fib," || fail "binary beside the log not used"
t "$data/fib.fdr-emu.xray" events.yaml | grep -q "function: '1'," || fail "unsymbolized ids"

# A remount loads the saved side tables and shows the same bytes.
log="$data/threads.fdr-emu.xray"
export TRACEFS_XRAY_BINARY="$data/bin/threads"
first=$(t "$log" events.yaml | sha256sum)
[ "$(t "$log" .tracefs/stats | awk '$1=="index_source"{print $2}')" = loaded ] || fail "saved index not loaded"
[ "$(t "$log" events.yaml | sha256sum)" = "$first" ] || fail "events.yaml differs after a load"
[ "$(t "$log" threads/19247/calls | sha256sum)" = "$(XDG_CACHE_HOME="$work/other" t "$log" threads/19247/calls | sha256sum)" ] ||
    fail "calls differ after a load"

# ... but not when the binary changed: names and errors came from the old one.
TRACEFS_XRAY_BINARY="$data/bin/fib" t "$log" errors | grep -q "not in the binary" ||
    fail "saved index reused with another binary"

[ "$failures" = 0 ] || { echo "$failures failures"; exit 1; }
echo ok
