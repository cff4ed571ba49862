/* The common events as text: JSON lines (events.jsonl and each thread's)
 * and Chrome Trace Event JSON (export/chrome.json).  Each function appends
 * one event, so a view renders one event per record and the engine can
 * checkpoint between any two. */
#ifndef TRACEFS_EVENT_JSON_H
#define TRACEFS_EVENT_JSON_H

#include <glib.h>
#include "trace_event.h"

/* One line of events.jsonl, '\n' included.  Always the same keys, in this
 * order:
 *   {"seq":0,"ts":1000,"dur":null,"kind":"begin","pid":1,"tid":2,
 *    "cat":"gfx","name":"draw","id":null,"args":{"n":3}}
 * ts, dur and id are null when absent; an integer beyond 2^53 (which a
 * double cannot hold) is written as a string of its decimal digits. */
void event_json_line(const struct trace_event *event, GString *out);
/* The args object alone: {"key":value,...} in the event's order. Integers
 * as above, doubles as JSON numbers (null for NaN/inf), pointers as
 * "0x..." strings, strings always valid JSON (text_json_string). */
void event_json_args(const struct trace_event *event, GString *out);

/* One Chrome Trace Event object, with no separator: ph, ts (µs with three
 * decimals: exact ns), pid, tid, cat, name, args; dur for X, s:"t" for
 * instants, id for flows/async/counters with one, bp:"e" for a flow end.
 * ph: B E X i C s t f b n e. */
void event_chrome_object(const struct trace_event *event, GString *out);
#define EVENT_CHROME_HEADER "{\"traceEvents\":[\n"
#define EVENT_CHROME_TRAILER "\n],\"displayTimeUnit\":\"ns\"}\n"

/* Record-view drivers over a format's iterator.  The cursor's words
 * 0..TRACE_EVENT_CURSOR_WORDS-1 are the iterator's, the last the export's
 * own.  The caller owns `scratch` (one per rendering thread). */
void event_export_begin(struct trace *trace, const struct trace_event_iterator *events,
                        struct view_cursor *cursor);
/* export/chrome.json: the header, then one event per record, then the
 * trailer.  An iterator error closes the array there, so the file is valid
 * JSON; /errors says why it stops. */
enum view_step event_chrome_next(struct trace *trace, const struct trace_event_iterator *events,
                                 struct view_cursor *cursor, struct trace_event_scratch *scratch, GString *out);
/* Makes an iterator cut (trace_event_iterator.cuts) a cursor of
 * chrome.json: after an event, past the header. */
void event_chrome_cut(struct view_cursor *cursor);

#endif
