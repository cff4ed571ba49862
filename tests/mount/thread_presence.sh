#!/usr/bin/env bash
# A thread's events.jsonl jumps over the stretches of the trace (between
# the common files' cuts) known to hold none of its events: a made-up FXT
# trace whose six threads have events one after another, each in its own
# part.  Each mount reads every thread's file, last to first, and checks
# that every stretch is known (.tracefs/stats), that some were skipped,
# and that each file is exactly its thread's lines of events.jsonl, the
# same bytes in every mount:
#   1, 2     threads=1 and 2: the first thread file's sizing learns;
#   2s       threads=2 with a 4 MiB cache: reads render again from
#            checkpoints, across the jumps;
#   all      events.jsonl read first (it learns nothing, skips nothing);
#   walk     info.json read first: its walk of the events learns;
#   saved    the index saved by the mount before it (which learned while
#            sizing): known from the mount on, and the reads jump.
set -u
source "$(dirname "$0")/lib.sh"
need_fuse
work=$(mktemp -d /tmp/tracefs-presence-XXXXXX)
trap 'unmount_all; rm -rf "$work"' EXIT

python3 "$TRACEFS_SOURCE_ROOT/tests/fxt/make_runs.py" "$work/phases.fxt" 6 48000 phases ||
    { fail "generating an FXT trace"; finish; }

stats_line() { awk -v key="$1" '$1 == key' "$MNT/.tracefs/stats"; }
known_line() { stats_line thread_stretches_known | cut -d' ' -f2-; }

for mount in 1 2 2s all walk saved; do
    case $mount in
        1) options="threads=1,noindex" ;;
        2s) options="threads=2,noindex,cache_size=4M" ;;
        walk|all) options="threads=2,noindex" ;;
        2|saved) options="threads=2,index_dir=$work/index" ;;
    esac
    mount_trace "$work/phases.fxt" -o "$options" || { fail "mount $mount"; continue; }
    dirs=$(ls -r "$MNT/threads")
    check "$mount: expected 6 threads, got: $dirs" [ "$(echo "$dirs" | wc -w)" -eq 6 ]
    read -r known _ stretches < <(known_line)
    case $mount in
        saved) check "$mount: ${known:-0} stretches known of ${stretches:-0} at the mount" \
                   [ "${known:-0}" = "${stretches:-}" ] ;;
        *) check "$mount: stretches known at the mount: $(known_line)" [ "${known:-}" = 0 ] ;;
    esac
    [ "$mount" = all ] && cat "$MNT/events.jsonl" > "$work/all.$mount"
    if [ "$mount" = walk ]; then
        jq -e '.events > 0' "$MNT/info.json" > /dev/null || fail "$mount: info.json events"
        read -r known _ stretches < <(known_line)
        check "$mount: the walk learned ${known:-0} stretches of ${stretches:-0}" [ "${known:-0}" = "${stretches:-}" ]
    fi
    for dir in $dirs; do
        cat "$MNT/threads/$dir/events.jsonl" > "$work/$mount.$dir" || fail "$mount: cat threads/$dir"
    done
    read -r known _ stretches < <(known_line)
    read -r _ skipped < <(stats_line thread_stretches_skipped)
    echo "$mount: stretches known ${known:-?} of ${stretches:-?}, skipped ${skipped:-?}"
    check "$mount: only ${stretches:-0} stretches, expected more than 4" [ "${stretches:-0}" -gt 4 ]
    check "$mount: ${known:-0} stretches known of ${stretches:-0}" [ "${known:-0}" = "${stretches:-}" ]
    check "$mount: no stretch skipped" [ "${skipped:-0}" -gt 0 ]
    [ "$mount" = all ] || cat "$MNT/events.jsonl" > "$work/all.$mount"
    for dir in $dirs; do
        grep -F "\"pid\":100,\"tid\":$dir," "$work/all.$mount" > "$work/expected.$dir"
        check "$mount: threads/$dir/events.jsonl is not its lines of events.jsonl" \
            cmp -s "$work/expected.$dir" "$work/$mount.$dir"
        check "$mount: threads/$dir/events.jsonl is empty" [ -s "$work/$mount.$dir" ]
        check "$mount: threads/$dir/events.jsonl differs from threads=1" cmp -s "$work/1.$dir" "$work/$mount.$dir"
    done
    check "$mount: events.jsonl differs from threads=1" cmp -s "$work/all.1" "$work/all.$mount"
    unmount_and_wait "$MNT" || fail "$mount: the daemon did not exit"
done
finish
