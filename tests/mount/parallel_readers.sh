#!/usr/bin/env bash
# Runs parallel_readers.py on the largest test trace (or $PARALLEL_TRACE).
set -u
source "$(dirname "$0")/lib.sh"
need_fuse
trace=${PARALLEL_TRACE:-}
# A large compressed trace makes chunks evict under the 2 MiB budget.
for candidate in "${TRACEFS_CORPUS:-/nonexistent}/apitrace/traces/glprog-big.trace" \
                 "${TRACEFS_CORPUS:-/nonexistent}/rr/traces/medium-0"; do
    [ -z "$trace" ] && [ -e "$candidate" ] && "$TRACEFS" stat "$candidate" >/dev/null 2>&1 && trace=$candidate
done
if [ -z "$trace" ]; then
    trace=$(for format in fxt sp-rtrace xray apitrace rr; do
        dir=$format; [ "$format" = sp-rtrace ] && dir=sprtrace
        find_traces "$format" "$TRACEFS_SOURCE_ROOT/tests/data/$dir"
    done | while read -r t; do echo "$(du -sb "$t" | cut -f1) $t"; done | sort -n | tail -n 1 | cut -d' ' -f2-)
fi
[ -n "$trace" ] || { echo "no test trace: skipped"; exit 77; }
exec python3 "$(dirname "$0")/parallel_readers.py" "$TRACEFS" "$trace" "${PARALLEL_SECONDS:-20}" 32 2M
