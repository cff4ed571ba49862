/* export/trace.perfetto-trace: the common events as a Perfetto `Trace` of
 * `TracePacket`s carrying TrackEvents (perfetto_trace.proto; Perfetto's
 * guide to writing TrackEvent traces without its SDK), encoded by hand
 * (proto_wire.h).
 *
 * Tracks: one per process (ProcessDescriptor), one per thread
 * (ThreadDescriptor), one per async operation (pid, cat, id) and one per
 * counter series (pid, name, arg key: a CounterDescriptor track under its
 * process).  Their uuids are hashes of those keys, so any packet can be
 * written without knowing what came before.
 *
 *   begin / end          TYPE_SLICE_BEGIN / TYPE_SLICE_END on the thread
 *   complete             TYPE_SLICE_BEGIN at ts, TYPE_SLICE_END at ts + dur
 *                        (written one after the other: trace processor
 *                        sorts packets by time, so a slice nested in it,
 *                        written later, still lands inside)
 *   instant              TYPE_INSTANT on the thread
 *   counter              TYPE_COUNTER per numeric arg, on its series' track
 *   flow_begin/step/end  TYPE_INSTANT on the thread with flow_ids
 *                        (terminating_flow_ids for the end)
 *   async_*              SLICE_BEGIN / INSTANT / SLICE_END on the async track
 * Args become debug annotations (null args are left out); event names,
 * categories and annotation names are interned.
 *
 * Segments: the export is written in segments of at most
 * PERFETTO_SEGMENT_EVENTS events / about PERFETTO_SEGMENT_BYTES bytes,
 * and a segment also ends at each of the iterator's cuts (the points where
 * the sizing may cut the file, trace_event_iterator.cuts).  A
 * segment starts with empty incremental state: its first TrackEvent packet
 * says SEQ_INCREMENTAL_STATE_CLEARED, iids count again from 1, and each
 * track's descriptor is written again before its first packet in the
 * segment.  So a segment depends on nothing before it, and the export is a
 * record view whose record is one segment and whose cursor is the event
 * iterator's cursor at the segment's start: a read anywhere resumes at the
 * engine's checkpoint before it with exactly the state the first rendering
 * had there.  Inside a segment the packets are appended one event at a time
 * (perfetto_writer_event); the interning table is bounded
 * (PERFETTO_INTERN_SLOTS, PERFETTO_INTERN_BYTES): past it, strings are
 * written inline, which is still a valid trace. */
#ifndef TRACEFS_PERFETTO_WRITER_H
#define TRACEFS_PERFETTO_WRITER_H

#include <glib.h>
#include "trace_event.h"

/* trusted_packet_sequence_id of every packet: one writer, one sequence. */
#define PERFETTO_SEQUENCE_ID 1
#define PERFETTO_SEGMENT_EVENTS 1024
#define PERFETTO_SEGMENT_BYTES (48u << 10)
/* Interned strings and written descriptors per segment: a table of this
 * many slots, at most half used, and this many bytes of strings. */
#define PERFETTO_INTERN_SLOTS 2048
#define PERFETTO_INTERN_BYTES (64u << 10)

struct perfetto_writer;

struct perfetto_writer *perfetto_writer_new(void);
void perfetto_writer_free(struct perfetto_writer *writer);
/* Where thread and process names come from (the iterator's optional
 * hooks); without it descriptors carry ids only. */
void perfetto_writer_set_names(struct perfetto_writer *writer, struct trace *trace,
                               const struct trace_event_iterator *events);
/* Starts a segment: forgets interned strings and written descriptors. */
void perfetto_writer_reset(struct perfetto_writer *writer);
/* Appends the packets of one event, each a `Trace.packet` field (1): any
 * concatenation of them is a Trace. */
void perfetto_writer_event(struct perfetto_writer *writer, const struct trace_event *event, GString *out);
/* Events written since the last reset. */
uint32_t perfetto_writer_segment_events(const struct perfetto_writer *writer);

/* The export as a record view (begin with event_export_begin): one record
 * is one segment.  `writer` and `scratch` are the caller's, one per
 * rendering thread; their content does not carry from call to call. */
enum view_step perfetto_export_next(struct trace *trace, const struct trace_event_iterator *events,
                                    struct view_cursor *cursor, struct trace_event_scratch *scratch,
                                    struct perfetto_writer *writer, GString *out);
/* The same, and a segment also ends where the cursor's word[0] reaches
 * `stop` (the next cut of the sizing, trace_event_iterator.cuts), so that
 * no export segment spans a sizing segment's start: the bytes do not
 * depend on how the sizing ran. */
enum view_step perfetto_export_next_until(struct trace *trace, const struct trace_event_iterator *events,
                                          uint64_t stop, struct view_cursor *cursor,
                                          struct trace_event_scratch *scratch, struct perfetto_writer *writer,
                                          GString *out);

#endif
