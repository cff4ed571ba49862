#!/usr/bin/env bash
# Every file of every test trace (each format; corpus traces too when
# ../shared is there) has the same size and bytes mounted with threads=1, 2
# and 7 (an odd count, more workers than cores), each mount sizing afresh
# (its own index directory); the saved indexes they leave are the same
# bytes, so checkpoints do not depend on the thread count; `tracefs cat`
# with TRACEFS_THREADS=1, 2, 7 prints the same /events (and XRay's
# events.yaml).  Generated XRay and sp-rtrace logs, big enough to be cut
# into segments, are compared too, and generated FXT traces whose threads
# take turns in runs, of one thread (its /events must be cut too), and of
# threads one after another (their events.jsonl jump over the others').  The common files (events.jsonl, export/chrome.json,
# export/trace.perfetto-trace) of the traces listed in cut_expected must
# really be sized in more than one segment (`sizing_segments` of
# .tracefs/stats, read around a stat of each in the first mount with
# workers: threads=2 by default), and the walk behind info.json joined
# from more than one (`event_walk_segments`).  Mount "7s" has a
# 4 MiB cache (1 MiB of text): its reads render again from the checkpoints, continuously
# across the segments' joins, so a segment that renders a record twice or
# misses one shows up there (as a wrong size or an I/O error).
# THREADS_IDENTITY_COUNTS picks the mounts (default "1 2 7 7s"; the first
# is the one the others are compared with; the first with more than one
# thread also checks the cuts).  The ThreadSanitizer run takes "2 7s": it
# looks for races, which need workers, and the other builds check identity
# with one thread.
set -u
source "$(dirname "$0")/lib.sh"
counts=(${THREADS_IDENTITY_COUNTS:-1 2 7 7s})
first=${counts[0]}
cutting=
for n in "${counts[@]}"; do [ "${n%s}" -gt 1 ] && { cutting=$n; break; }; done
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
    echo "$work/runs.fxt"
    echo "$work/one-thread.fxt"
    echo "$work/phases.fxt"
}

# Traces whose common files are cut (one per format at least; XRay's and
# rr's come from the corpus).
cut_expected=" glxgears-2s.trace generated.rtrace generated-names.rtrace runs.fxt one-thread.fxt phases.fxt medium-0 \
big-small.fdr-emu.xray memory-du-btall.rtrace "
declare -A cut_formats=()

# Segments the sizing of each common file took (the main view sized first,
# so that nothing else sizes meanwhile).
common_segments() {
    wait_for_sizing "$MNT" || { echo "sizing never ended"; return; }
    local f before after
    echo "/events(mount) - $(awk '$1 == "sizing_segments" { print $2 }' "$MNT/.tracefs/stats")"
    # info.json was read: the walk behind it is joined from segments too.
    echo "info.json(walk) $(awk '$1 == "event_walk_segments" { print $2 }' "$MNT/.tracefs/stats")"
    for f in events.jsonl export/chrome.json export/trace.perfetto-trace; do
        before=$(awk '$1 == "sizing_segments" { print $2 }' "$MNT/.tracefs/stats")
        stat -c %s "$MNT/$f" > /dev/null
        after=$(awk '$1 == "sizing_segments" { print $2 }' "$MNT/.tracefs/stats")
        echo "$f $((after - before))"
    done
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
python3 "$TRACEFS_SOURCE_ROOT/tests/fxt/make_runs.py" "$work/runs.fxt" || fail "generating an FXT trace"
python3 "$TRACEFS_SOURCE_ROOT/tests/fxt/make_runs.py" "$work/one-thread.fxt" 1 70000 ||
    fail "generating an FXT trace of one thread"
python3 "$TRACEFS_SOURCE_ROOT/tests/fxt/make_runs.py" "$work/phases.fxt" 6 48000 phases ||
    fail "generating an FXT trace of threads one after another"

count=0
while read -r trace; do
    name=$(basename "$trace")
    for n in "${counts[@]}"; do
        options="threads=${n%s},index_dir=$work/index-$n"
        [ "$n" = 7s ] && options="$options,cache_size=4M"
        mount_trace "$trace" -o "$options" || { fail "mount $trace threads=$n"; continue; }
        main=events
        format=$(jq -r .format "$MNT/info.json" 2>/dev/null)
        [ "$format" = xray ] && main=events.yaml
        [ "$n" = "$cutting" ] && common_segments > "$work/$name.segments"
        if [ "$n" = "$cutting" ] && [ "$name" = one-thread.fxt ]; then
            # Sized at the mount, before the common files: its segments are
            # all the sizing did before them.
            main_segments=$(head -n 1 "$work/$name.segments" | cut -d' ' -f3)
            check "$trace: /events sized in ${main_segments:-0} segment(s), expected several" \
                [ "${main_segments:-0}" -gt 1 ]
        fi
        python3 "$(dirname "$0")/tree_manifest.py" "$MNT" > "$work/$name.$n"
        fusermount3 -u "$MNT"
        # The daemon saves the index after the unmount: wait for it, so the
        # comparison below sees finished files (sanitizer builds are slow).
        for _ in $(seq 600); do pgrep -f -- "$MNT" >/dev/null || break; sleep 0.1; done
        out=$(XDG_CACHE_HOME=$work/cat-$n TRACEFS_THREADS=${n%s} "$TRACEFS" cat "$trace" $main 2>/dev/null | sha256sum)
        echo "$out" > "$work/$name.cat.$n"
    done
    [ -s "$work/$name.$first" ] || fail "$trace: no files listed"
    for n in "${counts[@]:1}"; do
        check "$trace: tree with threads=$n differs from threads=$first" \
            cmp -s "$work/$name.$first" "$work/$name.$n"
        check "$trace: tracefs cat events with threads=$n differs from threads=$first" \
            cmp -s "$work/$name.cat.$first" "$work/$name.cat.$n"
    done
    if [ -n "$cutting" ] && [[ "$cut_expected" == *" $name "* ]]; then
        while read -r file segments; do
            check "$trace: $file sized in $segments segment(s), expected several" [ "${segments:-0}" -gt 1 ]
        done < <(tail -n +2 "$work/$name.segments")
        cut_formats[$format]=1
    fi
    count=$((count + 1))
done < <(traces)
echo "common files cut into segments for: ${!cut_formats[*]}"
for format in apitrace fxt sp-rtrace; do
    [ -n "$cutting" ] && check "no $format trace had its common files cut" [ -n "${cut_formats[$format]:-}" ]
done
[ "$count" -gt 0 ] || { echo "no test traces: skipped"; exit 77; }
# Sizing the same files places the same checkpoints: the saved indexes match.
for n in "${counts[@]:1}"; do
    [ "$n" = "${n%s}" ] || continue   # the 4 MiB mount: its files are compared
    check "saved indexes with threads=$n differ from threads=$first" diff -rq "$work/index-$first" "$work/index-$n"
done
echo "$count traces compared"
finish
