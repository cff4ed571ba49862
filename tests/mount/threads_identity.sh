#!/usr/bin/env bash
# Every file of every test trace (each format; corpus traces too when
# ../shared is there) has the same size and bytes mounted with threads=1, 2
# and 7 (an odd count, more workers than cores), each mount sizing afresh
# (its own index directory); the saved indexes they leave are the same
# bytes, so checkpoints do not depend on the thread count; `tracefs cat`
# with TRACEFS_THREADS=1, 2, 7 prints the same /events (and XRay's
# events.yaml).  Generated XRay and sp-rtrace logs, big enough to be cut
# into segments, are compared too.  Mount "7s" has a
# 4 MiB cache (1 MiB of text): its reads render again from the checkpoints, continuously
# across the segments' joins, so a segment that renders a record twice or
# misses one shows up there (as a wrong size or an I/O error).
set -u
source "$(dirname "$0")/lib.sh"
need_fuse
work=$(mktemp -d /tmp/tracefs-threads-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT

traces() {
    for format in rr apitrace fxt xray sp-rtrace; do
        dir=$format; [ "$format" = sp-rtrace ] && dir=sprtrace
        find_traces "$format" "$TRACEFS_SOURCE_ROOT/tests/data/$dir"
    done
    # Bigger real traces cut into many segments (tree walks stay short).
    for t in "$TRACEFS_CORPUS/rr/traces/medium-0" "$TRACEFS_CORPUS/fxt/magic-trace_jane-tracing.fxt" \
             "$TRACEFS_CORPUS/xray/traces/big-small.fdr-emu.xray" "$TRACEFS_CORPUS/sp-rtrace/v1.4/memory-du-btall.rtrace"; do
        [ -e "$t" ] && echo "$t"
    done
    echo "$work/generated.xray"
    echo "$work/generated.rtrace"
    echo "$work/generated-names.rtrace"
}

# Generated logs whose views are cut at XRay's merge checkpoints (two
# threads, 48,000 records, calls open across intervals) and at sp-rtrace's
# call checkpoints (30,000 calls, leaks, contexts; the second with 1100
# allocation functions, whose pairs take escapes and resource-type names).
PYTHONPATH="$TRACEFS_SOURCE_ROOT/tests/xray" python3 -c \
    "import sys, tsc_order; tsc_order.make_log(sys.argv[1], 4, 2, 12, 4000, {5: ('cpu', 900_000)})" \
    "$work/generated.xray" || fail "generating an XRay log"
python3 "$TRACEFS_SOURCE_ROOT/scripts/make-sprtrace" "$work/generated.rtrace" --calls 30000 >/dev/null ||
    fail "generating an sp-rtrace log"
python3 "$TRACEFS_SOURCE_ROOT/scripts/make-sprtrace" "$work/generated-names.rtrace" --calls 30000 \
    --alloc-names 1100 >/dev/null || fail "generating an sp-rtrace log"

count=0
while read -r trace; do
    name=$(basename "$trace")
    for n in 1 2 7 7s; do
        options="threads=${n%s},index_dir=$work/index-$n"
        [ "$n" = 7s ] && options="$options,cache_size=4M"
        mount_trace "$trace" -o "$options" || { fail "mount $trace threads=$n"; continue; }
        main=events
        [ "$(jq -r .format "$MNT/info.json" 2>/dev/null)" = xray ] && main=events.yaml
        python3 "$(dirname "$0")/tree_manifest.py" "$MNT" > "$work/$name.$n"
        fusermount3 -u "$MNT"
        # The daemon saves the index after the unmount: wait for it, so the
        # comparison below sees finished files (sanitizer builds are slow).
        for _ in $(seq 600); do pgrep -f -- "$MNT" >/dev/null || break; sleep 0.1; done
        out=$(XDG_CACHE_HOME=$work/cat-$n TRACEFS_THREADS=${n%s} "$TRACEFS" cat "$trace" $main 2>/dev/null | sha256sum)
        echo "$out" > "$work/$name.cat.$n"
    done
    [ -s "$work/$name.1" ] || fail "$trace: no files listed"
    for n in 2 7 7s; do
        check "$trace: tree with threads=$n differs from threads=1" cmp -s "$work/$name.1" "$work/$name.$n"
        check "$trace: tracefs cat events with threads=$n differs" cmp -s "$work/$name.cat.1" "$work/$name.cat.$n"
    done
    count=$((count + 1))
done < <(traces)
[ "$count" -gt 0 ] || { echo "no test traces: skipped"; exit 77; }
# Sizing the same files places the same checkpoints: the saved indexes match.
for n in 2 7; do
    check "saved indexes with threads=$n differ from threads=1" diff -rq "$work/index-1" "$work/index-$n"
done
echo "$count traces compared"
finish
