/* The one walk of a trace's common events behind /summary.csv and the
 * totals of /info.json (event_files.c).
 *
 * On more than one thread the walk runs in segments between the
 * iterator's cuts, on the trace's workers, and joins them: per-name rows
 * add up in any order, and each thread's open begins are carried from a
 * segment to the next in order (an end that finds its segment's stack
 * empty closes a begin of a segment before).  The join gives the serial
 * walk's bytes exactly; where it could not (a stack as deep as
 * LIMIT_SUMMARY_DEPTH, more names or threads than the summary keeps, a
 * segment that failed, more held than the walk's budget) the walk is done
 * again in one pass. */
#ifndef TRACEFS_EVENT_WALK_H
#define TRACEFS_EVENT_WALK_H

#include <glib.h>
#include <stdint.h>
#include "event_files.h"
#include "view.h"

#define EVENT_SUMMARY_HEADER "name,count,total_dur_ns,max_dur_ns\n"

struct trace;
struct trace_event_iterator;
struct thread_presence;

/* Walks `events` of `trace`, cut at `cuts` (cut_count, word[0] rising;
 * none: one pass), telling `presence` (may be NULL) which threads each
 * stretch holds.  Fills *totals, *segments (how many segments were
 * joined; 1: one pass) and returns /summary.csv's text. */
GString *event_walk(struct trace *trace, const struct trace_event_iterator *events, const struct view_cursor *cuts,
                    uint32_t cut_count, struct thread_presence *presence, struct event_totals *totals,
                    uint32_t *segments);

#endif
