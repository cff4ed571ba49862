#!/usr/bin/env bash
# The public corpus samples (kept out of the repository) against their
# reference decodes; skipped when the corpus is absent.
set -u
corpus=${TRACEFS_CORPUS:-}/fxt
[ -f "$corpus/magic-trace_jane-tracing.fxt" ] || { echo "no public FXT corpus: skipped"; exit 77; }
rc=0
for name in magic-trace_jane-tracing ftfrs-tracing_test; do
    python3 "$TRACEFS_SOURCE_ROOT/tests/fxt/check_reference.py" "$TRACEFS" "$corpus/$name.fxt" \
        "$corpus/$name.rsfxt-go.jsonl" || rc=1
done
# The check: one line per event in /events.
events=$(grep -c '"type":"Duration' "$corpus/magic-trace_jane-tracing.rsfxt-go.jsonl")
lines=$("$TRACEFS" cat "$corpus/magic-trace_jane-tracing.fxt" events | grep -c .)
[ "$events" = "$lines" ] || { echo "FAIL: events has $lines lines, reference $events events"; rc=1; }
exit $rc
