/* The common files every format with an event iterator gets, built by the
 * engine from `format->events`: /events.jsonl, /threads/<dir>/events.jsonl,
 * /summary.csv, /export/chrome.json, /export/trace.perfetto-trace. */
#ifndef TRACEFS_EVENT_FILES_H
#define TRACEFS_EVENT_FILES_H

#include <glib.h>
#include <stdint.h>

struct trace;
struct event_files;

/* What one walk of the events found (summary.csv, info.json). */
struct event_totals {
    uint64_t events;
    uint64_t threads;          /* distinct (pid, tid), up to LIMIT_SUMMARY_THREADS */
    gboolean has_ts;           /* some event has a time */
    uint64_t first_ts, last_ts;
    uint64_t last_end;         /* the latest ts + dur (ts for events without dur) */
    gboolean failed;           /* the events ended on an error */
};

/* Adds the files when the trace's format has an iterator (the trace owns
 * what this allocates: event_files_free from trace_close). */
void event_files_add(struct trace *trace);
void event_files_free(struct event_files *files);
/* The walk's results for the saved index (a 0 alone when there is no
 * walk to save: not walked yet, under way, or one that added /errors
 * lines), then which threads the stretches between cuts hold, and taking
 * them back from one; FALSE when the bytes do not check. */
struct saved_writer;
void event_files_save_walk(struct event_files *files, struct saved_writer *out);
gboolean event_files_load_walk(struct event_files *files, const uint8_t *data, size_t size);
/* TRUE when a walk that could be saved is not in the saved index yet (a
 * save that came before it, or while it ran): worth a save at unmount. */
gboolean event_files_walk_unsaved(struct event_files *files);
/* For .tracefs/stats: "none" (not walked yet, or no common files),
 * "walking", "walked" (by this mount) or "loaded" (from the saved index). */
const char *event_files_walk_state(struct event_files *files);
/* For .tracefs/stats: how many segments this mount's walk joined (1: it
 * went in one pass; 0: no walk yet, or it came from the saved index). */
uint32_t event_files_walk_segments(struct event_files *files);
/* For .tracefs/stats: the stretches between cuts whose threads are known
 * (of all), and how many a thread's file jumped over (0 of 0: not cut). */
void event_files_presence_counts(const struct event_files *files, uint32_t *known, uint32_t *stretches,
                                 uint64_t *skipped);
/* /info.json of a trace with events, as a view: the keys every format has
 * (format, source, size, events, threads, first_ts, last_ts, duration,
 * clock, index_errors), then the format's own members (trace->info) under
 * one object named after the format.  Rendered once, after the walk. */
struct view;
void event_files_info_view(struct event_files *files, struct view *out);

#endif
