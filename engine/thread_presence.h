/* Which threads have events in which stretches of the common files: the
 * stretches are those between the iterator's cuts (at most
 * LIMIT_VIEW_SEGMENTS), and a stretch's row of bits, one per thread, is
 * learned while a file that reads every event of it is sized.  A thread's
 * events.jsonl then jumps from a stretch known to hold none of its events
 * to the next cut, so reading every thread's file costs about one pass
 * over the trace instead of one per thread.
 *
 * A stretch holds the events its iterator yields from cursors whose
 * word[0] lies between its first cut (or the iterator's begin) and the
 * next: the same records the sizing's segments split the view into
 * (view_ops.segments), so jumping to a cut renders the bytes iterating up
 * to it would. */
#ifndef TRACEFS_THREAD_PRESENCE_H
#define TRACEFS_THREAD_PRESENCE_H

#include <glib.h>
#include <stdint.h>
#include "tracefs_limits.h"
#include "view.h"

struct thread_presence;
struct presence_learner;

/* Over the stretches that begin at `begin` (the iterator's first cursor's
 * word[0]) and at each cut's word[0]; NULL unless they rise.  Keeps the
 * pointer to the cuts: their owner frees them after thread_presence_free. */
struct thread_presence *thread_presence_new(uint64_t begin, const struct view_cursor *cuts, uint32_t cut_count);
void thread_presence_free(struct thread_presence *presence);

/* Numbers a thread for the bits, in the order threads are added; a thread
 * past LIMIT_PRESENCE_THREADS gets none (UINT32_MAX) and is never skipped. */
uint32_t thread_presence_add_thread(struct thread_presence *presence, int64_t pid, int64_t tid);

/* Jumps a thread's cursor over the stretches known to hold none of its
 * events, from a cut to the next; FALSE when the view ends in one, else
 * *stretch_end is the word[0] where the cursor's stretch ends (UINT64_MAX:
 * the last), before which there is no need to ask again. */
gboolean thread_presence_skip(struct thread_presence *presence, uint32_t thread, struct view_cursor *cursor,
                              uint64_t *stretch_end);

/* Learning, on the thread that renders a sizing segment: begin before its
 * first record, event for every event the iterator yields (word0: the
 * cursor's before it), end after its last; `whole` when it rendered all
 * of it.  The stretches it saw from their start to their end are then
 * known.  learner is NULL when this thread does not learn for `presence`. */
void thread_presence_learn_begin(struct thread_presence *presence, uint64_t start, uint64_t stop);
struct presence_learner *thread_presence_learner(const struct thread_presence *presence);
void thread_presence_learn_event(struct presence_learner *learner, uint64_t word0, int64_t pid, int64_t tid);
void thread_presence_learn_end(struct thread_presence *presence, gboolean whole);

/* The saved index: the rows known, and taking them back (FALSE when the
 * bytes do not check, or are for other stretches or threads; nothing is
 * taken then). */
struct saved_writer;
struct saved_reader;
void thread_presence_save(struct thread_presence *presence, struct saved_writer *out);
/* The most bytes a save takes: stretches and threads, a flag per stretch,
 * a row per stretch. */
#define THREAD_PRESENCE_SAVED_MAX_BYTES (16u + LIMIT_VIEW_SEGMENTS * (8u + LIMIT_PRESENCE_THREADS / 8u))
gboolean thread_presence_load(struct thread_presence *presence, struct saved_reader *in);

/* For .tracefs/stats: stretches known, of all, and stretches skipped. */
void thread_presence_counts(const struct thread_presence *presence, uint32_t *known, uint32_t *stretches,
                            uint64_t *skipped);

#endif
